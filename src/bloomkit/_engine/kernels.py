"""numba kernels shared by every structure: XXH64 over byte buffers, probe positions, bit updates
(the counter kernels are :mod:`bloomkit._engine.counters`).

All arithmetic is on ``np.uint64`` (mixing signed and unsigned integers would make numba fall
back to float64). Kernels are compiled lazily on first use and cached on disk
(``cache=True``), so the JIT cost is paid once per machine, never at import.

Probe positions are k independent 64-bit values derived from the key's hash h1 with the
SplitMix64 finalizer::

    G_i(x) = splitmix64(h1 + (i + 1) * 0x9E3779B97F4A7C15)      (mod 2**64, i = 0..k-1)
    position_i = G_i(x) mod m

``G_i`` does not depend on ``m``: for any divisor ``m'`` of ``m``,
``(G_i mod m) mod m' == G_i mod m'``, which is what folding (document 003, Eq. 3 and 6) needs.

Why not double hashing (``h1 + i*h2``)? With a composite ``m`` (and folding wants smooth,
highly composite sizes) the sequence ``h1 + i*h2 mod m`` lives on a sub-lattice whenever
``gcd(h2, m) > 1``: the k positions of a key are correlated modulo the small prime factors of
``m``. We measured it: at m = 50,000, k = 5, n = 5,000 the fill ratio was 0.382 instead of
0.393 and the false positive rate 0.0126 instead of the 0.0094 of Eq. (2), with either plain
or enhanced double hashing; independent probes match the model at every m.
"""

from __future__ import annotations

import sys
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from .jit import GOLDEN, U64, jit_inline, jit_mut, jit_read, mulhi64, prefetch, splitmix64

P1 = U64(11400714785074694791)
P2 = U64(14029467366897019727)
P3 = U64(1609587929392839161)
P4 = U64(9650029242287828579)
P5 = U64(2870177450012600261)



@jit_inline
def reducer(m: np.uint64) -> np.uint64:
    """Barrett constant M = floor((2**64 - 1) / m) for :func:`fastmod`."""
    return U64(0xFFFFFFFFFFFFFFFF) // m


@jit_inline
def fastmod(x: np.uint64, m: np.uint64, M: np.uint64) -> np.uint64:
    """x mod m exactly, by Barrett reduction (a multiply instead of a 64-bit division).

    q = mulhi(x, M) is floor(x/m) or one less, so one correction suffices.

    C twin: ``fastmod`` of ``_speedups.c`` (section "XXH64, SplitMix64, exact reduction"); kept
    equal by tests/test_hashing.py::test_fastmod_is_exact and
    tests/test_speedups.py::test_single_keys_set_the_bits_of_the_python_path.
    """
    r = x - mulhi64(x, M) * m  # type: ignore[call-arg]
    if r >= m:
        r -= m
    return r


@jit_read
def fastmod_many(x: np.ndarray, m: np.uint64) -> np.ndarray:
    """x mod m of a uint64 array with :func:`fastmod` (used by tests and modules)."""
    M = reducer(m)
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = fastmod(x[i], m, M)
    return out


@jit_inline
def _rotl(x: np.uint64, r: int) -> np.uint64:
    return (x << U64(r)) | (x >> U64(64 - r))


@jit_inline
def _round(acc: np.uint64, lane: np.uint64) -> np.uint64:
    acc = acc + lane * P2
    acc = _rotl(acc, 31)
    return acc * P1


@jit_inline
def _merge(acc: np.uint64, val: np.uint64) -> np.uint64:
    acc = acc ^ _round(U64(0), val)
    return acc * P1 + P4


def _load_intrinsic(bits: int):  # type: ignore[no-untyped-def]
    """An unaligned little-endian load of ``bits`` bits at ``buf[p]`` (arrays and bytes)."""

    @intrinsic
    def load(typingctx, buf, p):  # type: ignore[no-untyped-def]
        sig = types.uint64(buf, p)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
            v = builder.load(builder.bitcast(ptr, ir.IntType(bits).as_pointer()), align=1)
            return builder.zext(v, ir.IntType(64)) if bits < 64 else v

        return sig, codegen

    return load


if sys.byteorder == "little":
    _read64 = _load_intrinsic(64)
    _read32 = _load_intrinsic(32)
else:  # pragma: no cover - big-endian hosts assemble the little-endian words byte by byte

    @jit_inline
    def _read64(buf: np.ndarray, p: int) -> np.uint64:
        v = U64(0)
        for j in range(8):
            v |= U64(buf[p + j]) << U64(8 * j)
        return v

    @jit_inline
    def _read32(buf: np.ndarray, p: int) -> np.uint64:
        v = U64(0)
        for j in range(4):
            v |= U64(buf[p + j]) << U64(8 * j)
        return v


@jit_inline
def _avalanche(h: np.uint64) -> np.uint64:
    h ^= h >> U64(33)
    h *= P2
    h ^= h >> U64(29)
    h *= P3
    h ^= h >> U64(32)
    return h


@jit_read
def xxh64(buf: np.ndarray, start: int, length: int, seed: np.uint64) -> np.uint64:
    """XXH64 of ``buf[start:start+length]`` (uint8 array) with ``seed`` (bit-exact with xxHash).

    C twin: ``xxh64`` of ``_speedups.c`` (section "XXH64, SplitMix64, exact reduction"); kept equal
    by tests/test_speedups.py::test_xxh64_matches_the_reference_package.
    """
    p = start
    end = start + length
    if length >= 32:
        v1 = seed + P1 + P2
        v2 = seed + P2
        v3 = seed
        v4 = seed - P1
        limit = end - 32
        while p <= limit:
            v1 = _round(v1, _read64(buf, p))
            v2 = _round(v2, _read64(buf, p + 8))
            v3 = _round(v3, _read64(buf, p + 16))
            v4 = _round(v4, _read64(buf, p + 24))
            p += 32
        h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
        h = _merge(h, v1)
        h = _merge(h, v2)
        h = _merge(h, v3)
        h = _merge(h, v4)
    else:
        h = seed + P5
    h += U64(length)
    while p + 8 <= end:
        h ^= _round(U64(0), _read64(buf, p))
        h = _rotl(h, 27) * P1 + P4
        p += 8
    if p + 4 <= end:
        h ^= _read32(buf, p) * P1
        h = _rotl(h, 23) * P2 + P3
        p += 4
    while p < end:
        h ^= U64(buf[p]) * P5
        h = _rotl(h, 11) * P1
        p += 1
    return _avalanche(h)


@jit_inline
def xxh64_u64(value: np.uint64, seed: np.uint64) -> np.uint64:
    """XXH64 of the 8 little-endian bytes of ``value`` (the fixed-width fast path).

    C twin: ``xxh64_u64`` of ``_speedups.c`` (section "XXH64, SplitMix64, exact reduction"); kept
    equal by tests/test_speedups.py::test_single_key_hash_and_encoding_match_python.
    """
    h = seed + P5 + U64(8)
    h ^= _round(U64(0), value)
    h = _rotl(h, 27) * P1 + P4
    return _avalanche(h)


@jit_inline
def second_hash(h1: np.uint64) -> np.uint64:
    """h1 rotated by 32 bits (a cheap second 64-bit value; not used for probe positions)."""
    return _rotl(h1, 32)


@jit_inline
def probe(h1: np.uint64, i: int) -> np.uint64:
    """G_i = splitmix64(h1 + (i + 1) * golden): the i-th probe value of a key, independent of m."""
    return splitmix64(h1 + U64(i + 1) * GOLDEN)


@jit_read
def splitmix64_many(x: np.ndarray, seed: np.uint64) -> np.ndarray:
    """splitmix64(x + seed * golden) of every element: a bijection of uint64 for each seed."""
    out = np.empty_like(x)
    step = seed * GOLDEN
    for i in range(x.shape[0]):
        out[i] = splitmix64(x[i] + step)
    return out


# ---------------------------------------------------------------------------------------------
# batch hashing


@jit_read
def hash_offsets(data: np.ndarray, offsets: np.ndarray, seed: np.uint64) -> np.ndarray:
    """h1 of every key ``data[offsets[i]:offsets[i+1]]`` with one seed."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        a = np.int64(offsets[i])
        out[i] = xxh64(data, a, np.int64(offsets[i + 1]) - a, seed)
    return out


@jit_read
def hash_nul_joined(buf: np.ndarray, n: int, seed: np.uint64) -> np.ndarray:
    """h1 of n keys stored NUL-separated in one buffer (the UTF-8 of ``"\\0".join(keys)``).

    The separators are found eight bytes at a time (a word has a zero byte iff
    ``(v - 0x01..01) & ~v & 0x80..80`` is non-zero). Returns an empty array when the buffer
    does not hold exactly n keys (a key contained NUL).
    """
    out = np.empty(n, dtype=np.uint64)
    total = buf.shape[0]
    ones = U64(0x0101010101010101)
    highs = U64(0x8080808080808080)
    start = 0
    i = 0
    while True:
        p = start
        while p + 8 <= total:
            v = _read64(buf, p)
            if (v - ones) & ~v & highs:
                break
            p += 8
        while p < total and buf[p] != 0:
            p += 1
        if i >= n:
            return np.empty(0, dtype=np.uint64)
        out[i] = xxh64(buf, start, p - start, seed)
        i += 1
        if p >= total:
            break
        start = p + 1
    if i != n:
        return np.empty(0, dtype=np.uint64)
    return out


@jit_read
def hash_offsets_seeds(data: np.ndarray, offsets: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """h1 of every key with its own (type-tag derived) seed."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        a = np.int64(offsets[i])
        out[i] = xxh64(data, a, np.int64(offsets[i + 1]) - a, seeds[i])
    return out


@jit_read
def hash_u64(values: np.ndarray, seed: np.uint64) -> np.ndarray:
    """h1 of every 8-byte little-endian key (int64 / float64 bit patterns as uint64)."""
    n = values.shape[0]
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        out[i] = xxh64_u64(values[i], seed)
    return out


@jit_read
def hash_u64_wide(values: np.ndarray, seed8: np.uint64, seed_big: np.uint64) -> np.ndarray:
    """h1 of uint64 integers: values < 2**63 as 8-byte int64, larger ones as 9-byte big ints."""
    n = values.shape[0]
    out = np.empty(n, dtype=np.uint64)
    buf = np.zeros(9, dtype=np.uint8)
    top = U64(1) << U64(63)
    for i in range(n):
        v = values[i]
        if v < top:
            out[i] = xxh64_u64(v, seed8)
        else:
            for j in range(8):
                buf[j] = np.uint8((v >> U64(8 * j)) & U64(0xFF))
            buf[8] = 0
            out[i] = xxh64(buf, 0, 9, seed_big)
    return out


@jit_read
def hash_u8(values: np.ndarray, seed: np.uint64) -> np.ndarray:
    """h1 of one-byte keys (booleans)."""
    n = values.shape[0]
    out = np.empty(n, dtype=np.uint64)
    buf = np.zeros(1, dtype=np.uint8)
    for i in range(n):
        buf[0] = values[i]
        out[i] = xxh64(buf, 0, 1, seed)
    return out


@jit_read
def hash_fixed_bytes(rows: np.ndarray, seed: np.uint64, strip_nuls: bool) -> np.ndarray:
    """h1 of fixed-width byte keys (2-D uint8, one row per key).

    ``strip_nuls``: trailing NULs are not part of a key (numpy 'S' semantics); otherwise every
    byte of a row is significant.
    """
    n, w = rows.shape
    out = np.empty(n, dtype=np.uint64)
    flat = rows.reshape(n * w)
    for i in range(n):
        ln = w
        if strip_nuls:
            while ln > 0 and rows[i, ln - 1] == 0:
                ln -= 1
        out[i] = xxh64(flat, i * w, ln, seed)
    return out


@jit_read
def hash_ucs4(rows: np.ndarray, seed: np.uint64) -> np.ndarray:
    """h1 of numpy 'U' keys (2-D uint32 code points), encoded as UTF-8 (surrogates pass through)."""
    n, w = rows.shape
    out = np.empty(n, dtype=np.uint64)
    buf = np.empty(4 * w + 1, dtype=np.uint8)
    for i in range(n):
        ln = w
        while ln > 0 and rows[i, ln - 1] == 0:
            ln -= 1
        b = 0
        for j in range(ln):
            c = np.uint32(rows[i, j])
            if c < 0x80:
                buf[b] = np.uint8(c)
                b += 1
            elif c < 0x800:
                buf[b] = np.uint8(0xC0 | (c >> 6))
                buf[b + 1] = np.uint8(0x80 | (c & 0x3F))
                b += 2
            elif c < 0x10000:
                buf[b] = np.uint8(0xE0 | (c >> 12))
                buf[b + 1] = np.uint8(0x80 | ((c >> 6) & 0x3F))
                buf[b + 2] = np.uint8(0x80 | (c & 0x3F))
                b += 3
            else:
                buf[b] = np.uint8(0xF0 | (c >> 18))
                buf[b + 1] = np.uint8(0x80 | ((c >> 12) & 0x3F))
                buf[b + 2] = np.uint8(0x80 | ((c >> 6) & 0x3F))
                buf[b + 3] = np.uint8(0x80 | (c & 0x3F))
                b += 4
        out[i] = xxh64(buf, 0, b, seed)
    return out


# ---------------------------------------------------------------------------------------------
# probe positions and bit / counter updates


@jit_inline
def probe_row(pos: np.ndarray, h: np.uint64, k: int, m: np.uint64, M: np.uint64, dh: bool) -> None:
    """The k probe positions ``G_i mod m`` of one key into ``pos[:k]``, in either scheme of
    :mod:`bloomkit._engine.probes`: ``dh`` False, the independent ``G_i = probe(h, i)``; True,
    enhanced double hashing ``G_0 = h``, ``G_{i+1} = G_i + y_i``, ``y_0 = splitmix64(h +
    GOLDEN)``, ``y_{i+1} = y_i + i + 1`` (mod 2**64). A literal ``dh`` folds the other branch away."""
    x = h
    y = splitmix64(h + GOLDEN)
    for i in range(k):
        pos[i] = fastmod(x if dh else probe(h, i), m, M)
        x += y
        y += U64(i + 1)


@jit_inline
def probe_positions(h1: np.ndarray, k: int, m: np.uint64, dh: bool) -> np.ndarray:
    """(n, k) int64 array of the probe positions G_i(x) mod m of either scheme (:func:`probe_row`)."""
    M = reducer(m)
    out = np.empty((h1.shape[0], k), dtype=np.int64)
    for r in range(h1.shape[0]):
        probe_row(out[r], h1[r], k, m, M, dh)
    return out


@jit_read
def positions(h1: np.ndarray, k: int, m: np.uint64) -> np.ndarray:
    """(n, k) int64 array of probe positions G_i(x) mod m (independent probes)."""
    return probe_positions(h1, k, m, False)


_RING = 16  # keys in flight: their probe words are prefetched this many keys ahead
_NO_OUT = np.empty(0, dtype=np.bool_)  # the ``out`` of drivers whose action writes no result


@jit_inline
def ring_drive(words: np.ndarray, h: np.ndarray, width: int, stage: Any, act: Any, ctx: tuple[np.uint64, np.uint64],
               out: np.ndarray) -> None:
    """The batch loop of every probing kernel: the ``width`` probe values of key r + ``_RING``
    are staged (computed into a ring slot, their words prefetched) while key r is acted on, so
    the cache misses of ``_RING`` independent keys overlap (a filter larger than the caches is
    latency-bound otherwise).

    ``stage(ring, slot, words, h, width, ctx)`` fills ``ring[slot]`` (``width`` uint64) for a
    key hash ``h`` and prefetches; ``act(ring, slot, words, h, width, out, r)`` applies it to key r (OR
    its bits in, or AND them into ``out[r]``). Both are numba functions passed as values: the
    driver is compiled once per (stage, act) pair and LLVM inlines them (a literal ``width``
    unrolls their loops). ``ctx`` holds the kernel's constants (m and its Barrett constant, or
    the block count)."""
    n = h.shape[0]
    ring = np.empty((_RING, width), dtype=np.uint64)
    for r in range(min(n, _RING)):
        stage(ring, r, words, h[r], width, ctx)
    for r in range(n):
        slot = r & (_RING - 1)
        act(ring, slot, words, h[r], width, out, r)
        if r + _RING < n:
            stage(ring, slot, words, h[r + _RING], width, ctx)


@jit_inline
def stage_scheme(ring: np.ndarray, slot: int, words: np.ndarray, h: np.uint64, k: int, m: np.uint64, M: np.uint64,
                 dh: bool) -> None:
    """The k positions of one key (:func:`probe_row`'s, scheme ``dh``) into ``ring[slot]``, their
    words prefetched (written in place, not through a view of the row: 5-15 % faster)."""
    x = h
    y = splitmix64(h + GOLDEN)
    for i in range(k):
        p = fastmod(x if dh else probe(h, i), m, M)
        ring[slot, i] = p
        prefetch(words, np.int64(p >> U64(6)))  # type: ignore[call-arg]
        x += y
        y += U64(i + 1)


@jit_inline
def stage_probes(ring: np.ndarray, slot: int, words: np.ndarray, h: np.uint64, k: int,
                 ctx: tuple[np.uint64, np.uint64]) -> None:
    """Stage of the independent scheme (:func:`ring_drive`)."""
    stage_scheme(ring, slot, words, h, k, ctx[0], ctx[1], False)


@jit_inline
def or_bits(ring: np.ndarray, slot: int, words: np.ndarray, h: np.uint64, k: int, out: np.ndarray, r: int) -> None:
    """Action: set the k staged bits."""
    for i in range(k):
        x = ring[slot, i]
        words[x >> U64(6)] |= U64(1) << (x & U64(63))


@jit_inline
def and_bits(ring: np.ndarray, slot: int, words: np.ndarray, h: np.uint64, k: int, out: np.ndarray, r: int) -> None:
    """Action: ``out[r]`` = all k staged bits set. The k bits are ANDed without an early exit: the
    positions are computed and their words prefetched anyway, and the exit at the first zero bit
    (a random probe of a negative key) was a mispredicted branch: 1M-key negatives 24.1 -> 16.0
    ns/key without it."""
    acc = U64(1)
    for i in range(k):
        x = ring[slot, i]
        acc &= words[x >> U64(6)] >> (x & U64(63))
    out[r] = acc != U64(0)


@jit_mut
def bits_set(words: np.ndarray, h1: np.ndarray, k: int, m: np.uint64) -> None:
    """Set the k probe bits of every key (little-endian bit order within uint64 words); the
    positions staged ``_RING`` keys ahead (:func:`ring_drive`)."""
    ring_drive(words, h1, k, stage_probes, or_bits, (m, reducer(m)), _NO_OUT)


@jit_read
def bits_set_nogil(words: np.ndarray, h1: np.ndarray, k: int, m: np.uint64) -> None:
    """:func:`bits_set` without the GIL: into the filter's words from the thread that holds the
    filter's lock (:func:`bloomkit._engine.parallel.batch_writer`), or into a thread's private word
    array (merged afterwards with :func:`or_into`)."""
    ring_drive(words, h1, k, stage_probes, or_bits, (m, reducer(m)), _NO_OUT)


@jit_mut
def or_into(dst: np.ndarray, src: np.ndarray) -> None:
    """dst |= src, word by word (keeps the GIL: concurrent adds never lose a bit)."""
    for i in range(dst.shape[0]):
        dst[i] |= src[i]


@jit_read
def bits_test(words: np.ndarray, h1: np.ndarray, k: int, m: np.uint64) -> np.ndarray:
    """True where all k probe bits of a key are set (staged like :func:`bits_set`; no early
    exit: :func:`and_bits`)."""
    out = np.empty(h1.shape[0], dtype=np.bool_)
    ring_drive(words, h1, k, stage_probes, and_bits, (m, reducer(m)), out)
    return out


@jit_inline
def popcount64(w: np.uint64) -> np.int64:
    """Number of set bits of one uint64 (SWAR; LLVM turns it into ``popcnt``)."""
    v = w - ((w >> U64(1)) & U64(0x5555555555555555))
    v = (v & U64(0x3333333333333333)) + ((v >> U64(2)) & U64(0x3333333333333333))
    v = (v + (v >> U64(4))) & U64(0x0F0F0F0F0F0F0F0F)
    return np.int64((v * U64(0x0101010101010101)) >> U64(56))
@jit_mut
def bits_add_new(words: np.ndarray, h1: np.ndarray, k: int, m: np.uint64, room: int) -> tuple[int, int]:
    """Insert keys in order, each only if one of its k probe bits is still zero (a key whose
    bits are all set already, by itself or by the keys before it, is a duplicate or a false
    positive and is not counted), until ``room`` keys have been inserted.

    Returns (keys consumed, keys inserted): the first ``consumed`` keys of ``h1`` were
    processed and ``inserted`` of them set new bits; ``consumed < len(h1)`` only when
    ``inserted == room``. The result for a batch equals that of its keys one at a time (the
    growing filter relies on it). Prefetched like :func:`bits_set`.
    """
    ctx = (m, reducer(m))
    n = h1.shape[0]
    ring = np.empty((_RING, k), dtype=np.uint64)  # ring_drive's ring; its own loop (stops at ``room``)
    for r in range(min(n, _RING)):
        stage_probes(ring, r, words, h1[r], k, ctx)
    added = 0
    for r in range(n):
        if added >= room:
            return r, added
        slot = r & (_RING - 1)
        acc = U64(1)
        for i in range(k):
            x = ring[slot, i]
            acc &= words[x >> U64(6)] >> (x & U64(63))
        if acc == U64(0):
            for i in range(k):
                x = ring[slot, i]
                words[x >> U64(6)] |= U64(1) << (x & U64(63))
            added += 1
        if r + _RING < n:
            stage_probes(ring, slot, words, h1[r + _RING], k, ctx)
    return n, added


# a series of bit arrays (the slices of bloomkit.scalable.ScalableBloomFilter), described by an
# int64 table with one row (words address, number of words, k, m) per array; the caller keeps
# the arrays alive while a kernel runs. A key is tested against the last (newest, largest) array
# first; each array's test stops at its first zero bit and the key at its first hit, so a
# negative key costs about two probes per array instead of k.


@jit_inline
def _series_reducers(table: np.ndarray) -> np.ndarray:
    out = np.empty(table.shape[0], dtype=np.uint64)
    for j in range(table.shape[0]):
        out[j] = reducer(U64(table[j, 3]))
    return out


@jit_inline
def _series_has(table: np.ndarray, Ms: np.ndarray, h: np.uint64) -> bool:
    for j in range(table.shape[0] - 1, -1, -1):
        words = numba.carray(_as_u64_ptr(table[j, 0]), table[j, 1])  # type: ignore[attr-defined, call-arg]
        k, m = table[j, 2], U64(table[j, 3])
        i = 0
        while i < k:
            x = fastmod(probe(h, i), m, Ms[j])
            if (words[x >> U64(6)] >> (x & U64(63))) & U64(1) == U64(0):
                break
            i += 1
        if i == k:
            return True
    return False


@jit_read
def series_test(table: np.ndarray, h1: np.ndarray) -> np.ndarray:
    """True where all k_j probe bits of a key are set in one array j of the series."""
    Ms = _series_reducers(table)
    out = np.empty(h1.shape[0], dtype=np.bool_)
    for r in range(h1.shape[0]):
        out[r] = _series_has(table, Ms, h1[r])
    return out


@jit_mut
def series_test_one(table: np.ndarray, h: int) -> bool:
    """:func:`series_test` of one key, its h1 given as the int64 of the same bits (a Python
    int converts to int64 for free; to np.uint64 it costs more than the test). Keeps the GIL
    like the other single-key paths."""
    return _series_has(table, _series_reducers(table), U64(h))


@jit_mut
def series_add_one(table: np.ndarray, h: int) -> bool:
    """Set the probe bits of one key (h1 as in :func:`series_test_one`) in the last array of
    the series, unless one of the arrays already has all of them; True if the key was new."""
    Ms = _series_reducers(table)
    hu = U64(h)
    if _series_has(table, Ms, hu):
        return False
    j = table.shape[0] - 1
    words = numba.carray(_as_u64_ptr(table[j, 0]), table[j, 1])  # type: ignore[attr-defined, call-arg]
    m = U64(table[j, 3])
    for i in range(table[j, 2]):
        x = fastmod(probe(hu, i), m, Ms[j])
        words[x >> U64(6)] |= U64(1) << (x & U64(63))
    return True


@jit_read
def popcount_words(words: np.ndarray) -> int:
    """Number of set bits in a uint64 array."""
    total = 0
    for w in words:
        total += popcount64(w)
    return total


@jit_read
def fold_bits(words: np.ndarray, num_bits: int, factor: int) -> np.ndarray:
    """OR-fold: bit j of the result is the OR of bits j + t*(num_bits/factor), t < factor.

    Works word-wise with shifts, so any divisor (not only multiples of 64) runs at
    memory-bandwidth speed.
    """
    new_bits = num_bits // factor
    nw = (new_bits + 63) // 64
    out = np.zeros(nw, dtype=np.uint64)
    if new_bits & 63 == 0:  # whole words: a plain OR-reduction of factor segments
        for t in range(factor):
            base = t * nw
            for j in range(nw):
                out[j] |= words[base + j]
        return out
    total_words = words.shape[0]
    for t in range(factor):
        base = t * new_bits
        wsrc = base >> 6
        sh = base & 63
        for j in range(nw):
            lo = words[wsrc + j]
            v = lo >> U64(sh)
            if sh != 0 and wsrc + j + 1 < total_words:
                v |= words[wsrc + j + 1] << U64(64 - sh)
            out[j] |= v
    rem = new_bits & 63
    if rem != 0:
        out[nw - 1] &= (U64(1) << U64(rem)) - U64(1)
    return out


@intrinsic
def _as_u64_ptr(typingctx, addr):  # type: ignore[no-untyped-def]
    """An integer address as a ``uint64*`` (for ``numba.carray``)."""
    sig = types.CPointer(types.uint64)(addr)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.uint64)))

    return sig, codegen


# single-key kernels: bloomkit._engine.probes (both probe schemes)
