"""Probe schemes of :class:`bloomkit.BloomFilter` and their numba kernels: single keys (both
schemes) and batches of the double-hashing scheme (the independent scheme's batch kernels are
in :mod:`bloomkit._engine.kernels`).

A filter's scheme is fixed by the hash id of its container (``_hash_id``), so every saved file
keeps its positions:

* **independent** (hash id 1, ``"xxh64-splitmix"``, every filter saved before this module):
  ``G_i = splitmix64(h1 + (i + 1) * GOLDEN)``, k SplitMix64 finalizers per key.
* **double** (hash id 5, ``"xxh64-double-hashing"``, opt-in: ``BloomFilter(...,
  probes="double")``): enhanced double hashing (Dillinger & Manolios 2004; Kirsch &
  Mitzenmacher 2008), in 64-bit arithmetic::

      h2 = splitmix64(h1 + GOLDEN)                      (= G_0 of the independent scheme)
      G_i = h1 + i * h2 + (i**3 - i) / 6   (mod 2**64)   x_0 = h1, x_{i+1} = x_i + y_i,
                                                          y_0 = h2, y_{i+1} = y_i + i + 1

  one SplitMix64 per key instead of k.

Both take ``position_i = G_i mod m`` by the exact Barrett reduction (:func:`fastmod`), so
``G_i`` does not depend on m and folding stays exact for both: for a divisor m' of m,
``(G_i mod m) mod m' = G_i mod m'``. The sums run modulo 2**64, not modulo m: the lattice
effect of double hashing modulo a composite m (``h1 + i h2 mod m`` confined to a coset of
``gcd(h2, m)``; see :mod:`bloomkit._engine.kernels`) needs ``G_i`` to be taken mod m at every step;
here every step wraps at 2**64 instead, and the cubic term keeps the k positions of one key
apart even when ``h2`` shares factors with m. The false positive model of the scheme is
:func:`bloomkit.theory.double_hashing_fpr` (checked in tests/test_calibration.py).

Single-key kernels keep the GIL (no other thread can swap or free the words while they run);
:func:`dh_set` releases it (the filter's storage under its batch writer's lock, or a thread's
private array: :func:`bloomkit._engine.parallel.add_chunked`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic

from .jit import GOLDEN, U64, jit_inline, jit_mut, jit_read, splitmix64
from .kernels import (
    _NO_OUT,
    _as_u64_ptr,
    and_bits,
    fastmod,
    or_bits,
    probe,
    probe_positions,
    reducer,
    ring_drive,
    stage_scheme,
    xxh64,
    xxh64_u64,
)

__all__ = ["DH_SPECIAL_K", "Entries", "dh_positions", "dh_set", "dh_test"]

DH_SPECIAL_K = (7, 10)
"""k values with a batch kernel of their own (loops of a constant trip count, unrolled): the
optimal k of fpr 1 % and 0.1 %. Other k take the generic kernel (same positions)."""


# ---------------------------------------------------------------------------------------------
# double hashing, batches


@jit_inline
def stage_dh(ring: np.ndarray, slot: int, words: np.ndarray, h: np.uint64, k: int,
             ctx: tuple[np.uint64, np.uint64]) -> None:
    """Stage of :func:`bloomkit._engine.kernels.ring_drive` for double hashing."""
    stage_scheme(ring, slot, words, h, k, ctx[0], ctx[1], True)


@jit_read
def dh_set(words: np.ndarray, h1: np.ndarray, k: int, m: np.uint64) -> None:
    """Set the k double-hashing probe bits of every key, positions computed ``_RING`` keys
    ahead and their words prefetched (:func:`bloomkit._engine.kernels.ring_drive`). Releases the GIL
    (see the module docstring). k in :data:`DH_SPECIAL_K` runs a loop of constant length."""
    ctx = (m, reducer(m))
    if k == 7:
        ring_drive(words, h1, 7, stage_dh, or_bits, ctx, _NO_OUT)
    elif k == 10:
        ring_drive(words, h1, 10, stage_dh, or_bits, ctx, _NO_OUT)
    else:
        ring_drive(words, h1, k, stage_dh, or_bits, ctx, _NO_OUT)


@jit_read
def dh_test(words: np.ndarray, h1: np.ndarray, k: int, m: np.uint64) -> np.ndarray:
    """True where all k double-hashing probe bits of a key are set (no early exit, as
    :func:`bloomkit._engine.kernels.bits_test`)."""
    out = np.empty(h1.shape[0], dtype=np.bool_)
    ctx = (m, reducer(m))
    if k == 7:
        ring_drive(words, h1, 7, stage_dh, and_bits, ctx, out)
    elif k == 10:
        ring_drive(words, h1, 10, stage_dh, and_bits, ctx, out)
    else:
        ring_drive(words, h1, k, stage_dh, and_bits, ctx, out)
    return out


@jit_read
def dh_positions(h1: np.ndarray, k: int, m: np.uint64) -> np.ndarray:
    """(n, k) int64 array of the double-hashing positions G_i(x) mod m."""
    return probe_positions(h1, k, m, True)


# ---------------------------------------------------------------------------------------------
# single-key paths (both schemes; ``dh`` selects): one compiled call per key. numba's wrapper
# unboxes a numpy array in about as much time as the whole key takes otherwise, so the fast
# paths get the filter's words as an address (the caller keeps the array alive and checks it is
# still the filter's) and the key as a str or an int. They keep the GIL.


@intrinsic
def _as_u8_ptr(typingctx, ptr):  # type: ignore[no-untyped-def]
    """A ``void*`` (a str's character data) as a ``uint8*``."""
    sig = types.CPointer(types.uint8)(ptr)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], context.get_value_type(types.CPointer(types.uint8)))

    return sig, codegen


@jit_inline
def _set_probes(words: np.ndarray, h1: np.uint64, k: int, m: np.uint64, dh: bool) -> None:
    M = reducer(m)
    x = h1
    y = splitmix64(h1 + GOLDEN)
    for i in range(k):
        p = fastmod(x if dh else probe(h1, i), m, M)
        words[p >> U64(6)] |= U64(1) << (p & U64(63))
        x += y
        y += U64(i + 1)


@jit_inline
def _test_probes(words: np.ndarray, h1: np.uint64, k: int, m: np.uint64, dh: bool) -> bool:
    M = reducer(m)
    x = h1
    y = splitmix64(h1 + GOLDEN)
    for i in range(k):
        p = fastmod(x if dh else probe(h1, i), m, M)
        if (words[p >> U64(6)] >> (p & U64(63))) & U64(1) == U64(0):
            return False
        x += y
        y += U64(i + 1)
    return True


@jit_inline
def _ascii_hash(key: str, seed: np.uint64) -> np.uint64:
    """XXH64 of an ASCII str's characters, which are its UTF-8 (the caller checks isascii())."""
    n = key._length  # type: ignore[attr-defined]
    return xxh64(numba.carray(_as_u8_ptr(key._data), n), 0, n, seed)  # type: ignore[attr-defined, call-arg]


@jit_mut
def bits_add_one(payload: bytes, seed: np.uint64, words: np.ndarray, k: int, m: np.uint64, dh: bool) -> None:
    """Set the k probe bits of one key given its canonical payload and tag seed.

    C twin: ``core_insert`` of _speedups.c, section "FilterCore"."""
    _set_probes(words, xxh64(payload, 0, len(payload), seed), k, m, dh)


@jit_mut
def bits_test_one(payload: bytes, seed: np.uint64, words: np.ndarray, k: int, m: np.uint64, dh: bool) -> bool:
    """True if all k probe bits of one key are set.

    C twin: ``core_test`` of _speedups.c, section "FilterCore"."""
    return _test_probes(words, xxh64(payload, 0, len(payload), seed), k, m, dh)


@jit_mut
def bits_add_ascii(key: str, seed: np.uint64, addr: int, nwords: int, k: int, m: np.uint64, dh: bool) -> None:
    """:func:`bits_add_one` of an ASCII str key, the words given by address."""
    _set_probes(numba.carray(_as_u64_ptr(addr), nwords), _ascii_hash(key, seed), k, m, dh)  # type: ignore[attr-defined, call-arg]


@jit_mut
def bits_test_ascii(key: str, seed: np.uint64, addr: int, nwords: int, k: int, m: np.uint64, dh: bool) -> bool:
    """:func:`bits_test_one` of an ASCII str key, the words given by address."""
    return _test_probes(numba.carray(_as_u64_ptr(addr), nwords), _ascii_hash(key, seed), k, m, dh)  # type: ignore[attr-defined, call-arg]


@jit_mut
def bits_add_int(key: int, seed: np.uint64, addr: int, nwords: int, k: int, m: np.uint64, dh: bool) -> None:
    """:func:`bits_add_one` of an int64 key (payload: its 8 little-endian bytes)."""
    _set_probes(numba.carray(_as_u64_ptr(addr), nwords), xxh64_u64(U64(key), seed), k, m, dh)  # type: ignore[attr-defined, call-arg]


@jit_mut
def bits_test_int(key: int, seed: np.uint64, addr: int, nwords: int, k: int, m: np.uint64, dh: bool) -> bool:
    """:func:`bits_test_one` of an int64 key (payload: its 8 little-endian bytes)."""
    return _test_probes(numba.carray(_as_u64_ptr(addr), nwords), xxh64_u64(U64(key), seed), k, m, dh)  # type: ignore[attr-defined, call-arg]


class Entries:
    """The compiled entry points of the single-key kernels, one signature each, resolved on
    first use and then plain attributes (``ENTRY.bits_add_ascii``).

    ``bits_*_one`` take (bytes payload, uint64 seed, uint64 words, int k, uint64 m, bool dh);
    ``bits_*_ascii`` and ``bits_*_int`` take (str or int64 key, uint64 seed, int address of
    the words, int number of words, int k, uint64 m, bool dh). Calling the entry point skips
    the dispatcher's type resolution (0.43 -> 0.24 us per call); passing the words by address
    skips unboxing the array. Only :mod:`bloomkit.bloom` calls them, with exactly these types.
    """

    # the entry points, as type checkers see them (__getattr__ creates them on first use)
    bits_add_one: Callable[[bytes, np.uint64, np.ndarray, int, np.uint64, bool], None]
    bits_test_one: Callable[[bytes, np.uint64, np.ndarray, int, np.uint64, bool], bool]
    bits_add_ascii: Callable[[str, int, int, int, int, int, bool], None]
    bits_test_ascii: Callable[[str, int, int, int, int, int, bool], bool]
    bits_add_int: Callable[[int, int, int, int, int, int, bool], None]
    bits_test_int: Callable[[int, int, int, int, int, int, bool], bool]

    def __getattr__(self, name: str) -> Any:
        sig: tuple[types.Type, ...]
        if name.endswith("_one"):
            sig = (types.Bytes(types.uint8, 1, "C", readonly=True), types.uint64,
                   types.Array(types.uint64, 1, "C"), types.int64, types.uint64, types.boolean)
        elif name.endswith(("_ascii", "_int")):
            key = types.unicode_type if name.endswith("_ascii") else types.int64
            sig = (key, types.uint64, types.int64, types.int64, types.int64, types.uint64, types.boolean)
        else:
            raise AttributeError(name)
        fn = globals()[name].compile(sig)
        setattr(self, name, fn)
        return fn
