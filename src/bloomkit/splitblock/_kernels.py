"""numba kernels of :class:`bloomkit.SplitBlockBloomFilter`: insert, test and statistics of
split blocks, in bloomkit's native layout and in Parquet's.

Storage is always a uint64 array, 64-byte aligned (:func:`bloomkit._engine.storage.aligned_zeros`).

* **native**: a block is 512 bits (one cache line) = 8 lanes of 64 bits, one uint64 word per
  lane. A key with hash h goes to block ``h mod B`` (Barrett reduction, so a filter folded to
  a divisor of B is the filter built at that size) and sets, in lane i, bit
  ``(g >> 6 i) & 63`` of ``g = splitmix64(h + 0x9E3779B97F4A7C15)`` (the key's first probe
  value :func:`bloomkit._engine.kernels.probe`).
* **parquet**: a block is 256 bits = 8 lanes of 32 bits, two lanes per uint64 word (lane j is
  the low half of word j // 2 for even j, the high half for odd j: the little-endian bytes are
  Parquet's eight uint32 words). Block ``((h >> 32) * z) >> 32``, and in lane j bit
  ``((uint32(h) * SALT[j]) mod 2**32) >> 27`` (the Parquet format's BloomFilter.md).

Batch kernels prefetch the block of the key ``_RING`` positions ahead, so the cache misses of
independent keys overlap (:func:`bloomkit._engine.kernels.ring_drive`, staging the block). Batch kernels release the GIL: ``*_add`` write the filter's storage
from a thread that holds its lock (:func:`bloomkit._engine.parallel.batch_writer`) or a thread's
private array (merged afterwards with :func:`bloomkit._engine.kernels.or_into`); ``*_add_one`` keep it.
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import GOLDEN, U64, jit_inline, jit_mut, jit_read, prefetch, splitmix64
from .._engine.kernels import _NO_OUT, fastmod, popcount64, reducer, ring_drive

NATIVE_WORDS = 8  # uint64 words per native block (512 bits)
PARQUET_WORDS = 4  # uint64 words per Parquet block (256 bits)
SALT = np.array([0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D,
                 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31], dtype=np.uint64)
_LOW32 = U64(0xFFFFFFFF)


# ---------------------------------------------------------------------------------------------
# native layout: block h mod B, 8 lanes of 64 bits


@jit_inline
def _nat_base(h: np.uint64, B: np.uint64, M: np.uint64) -> np.uint64:
    return fastmod(h, B, M) << U64(3)


@jit_inline
def _nat_stage(ring: np.ndarray, slot: int, words: np.ndarray, h: np.uint64, width: int, ctx: tuple[np.uint64, np.uint64]) -> None:
    """Stage of :func:`bloomkit._engine.kernels.ring_drive`: the key's block (first word), prefetched."""
    ring[slot, 0] = _nat_base(h, ctx[0], ctx[1])
    prefetch(words, np.int64(ring[slot, 0]))  # type: ignore[call-arg]


@jit_inline
def _nat_or(ring: np.ndarray, slot: int, words: np.ndarray, h: np.uint64, width: int, out: np.ndarray, r: int) -> None:
    base = ring[slot, 0]
    g = splitmix64(h + GOLDEN)
    for i in range(NATIVE_WORDS):
        words[base + U64(i)] |= U64(1) << ((g >> U64(6 * i)) & U64(63))


@jit_inline
def _nat_and(ring: np.ndarray, slot: int, words: np.ndarray, h: np.uint64, width: int, out: np.ndarray, r: int) -> None:
    base = ring[slot, 0]
    g = splitmix64(h + GOLDEN)
    acc = U64(1)
    for i in range(NATIVE_WORDS):
        acc &= words[base + U64(i)] >> ((g >> U64(6 * i)) & U64(63))
    out[r] = acc != U64(0)


@jit_read
def native_add(words: np.ndarray, h: np.ndarray, B: np.uint64) -> None:
    """Insert every hash (releases the GIL: the filter's storage under its batch writer's lock,
    or a thread's private array)."""
    ring_drive(words, h, 1, _nat_stage, _nat_or, (B, reducer(B)), _NO_OUT)


@jit_read
def native_test(words: np.ndarray, h: np.ndarray, B: np.uint64) -> np.ndarray:
    """True where all 8 lane bits of a hash are set (no early exit: the block is one cache
    line, and a branch on each lane of a negative key mispredicts)."""
    out = np.empty(h.shape[0], dtype=np.bool_)
    ring_drive(words, h, 1, _nat_stage, _nat_and, (B, reducer(B)), out)
    return out


@jit_mut
def native_add_one(words: np.ndarray, h: np.uint64, B: np.uint64) -> None:
    """Insert one hash (keeps the GIL).

    C twin: ``core_insert`` of _speedups.c, section "FilterCore"."""
    base = fastmod(h, B, reducer(B)) << U64(3)
    g = splitmix64(h + GOLDEN)
    for i in range(NATIVE_WORDS):
        words[base + U64(i)] |= U64(1) << ((g >> U64(6 * i)) & U64(63))


@jit_mut
def native_test_one(words: np.ndarray, h: np.uint64, B: np.uint64) -> bool:
    """Membership of one hash.

    C twin: ``core_test`` of _speedups.c, section "FilterCore"."""
    base = fastmod(h, B, reducer(B)) << U64(3)
    g = splitmix64(h + GOLDEN)
    acc = U64(1)
    for i in range(NATIVE_WORDS):
        acc &= words[base + U64(i)] >> ((g >> U64(6 * i)) & U64(63))
    return acc != U64(0)


# ---------------------------------------------------------------------------------------------
# Parquet layout: block ((h >> 32) * z) >> 32, 8 lanes of 32 bits from the salts


@jit_inline
def _pq_base(h: np.uint64, z: np.uint64) -> np.uint64:
    return (((h >> U64(32)) * z) >> U64(32)) << U64(2)


@jit_inline
def _pq_bit(key: np.uint64, j: int) -> np.uint64:
    """The bit lane j sets, shifted to its half of the uint64 word."""
    return U64(1) << ((((key * SALT[j]) & _LOW32) >> U64(27)) + U64(32 * (j & 1)))


@jit_inline
def _pq_stage(ring: np.ndarray, slot: int, words: np.ndarray, h: np.uint64, width: int, ctx: tuple[np.uint64, np.uint64]) -> None:
    ring[slot, 0] = _pq_base(h, ctx[0])
    prefetch(words, np.int64(ring[slot, 0]))  # type: ignore[call-arg]


@jit_inline
def _pq_or(ring: np.ndarray, slot: int, words: np.ndarray, h: np.uint64, width: int, out: np.ndarray, r: int) -> None:
    base = ring[slot, 0]
    key = h & _LOW32
    for j in range(8):
        words[base + U64(j >> 1)] |= _pq_bit(key, j)


@jit_read
def parquet_add(words: np.ndarray, h: np.ndarray, z: np.uint64) -> None:
    """Parquet's ``filter_insert`` of every hash (releases the GIL, as :func:`native_add`)."""
    ring_drive(words, h, 1, _pq_stage, _pq_or, (z, U64(0)), _NO_OUT)


@jit_read
def parquet_test(words: np.ndarray, h: np.ndarray, z: np.uint64) -> np.ndarray:
    """Parquet's ``filter_check`` of every hash."""
    n = h.shape[0]
    out = np.empty(n, dtype=np.bool_)
    for r in range(n):
        base = _pq_base(h[r], z)
        key = h[r] & _LOW32
        hit = True
        for j in range(8):
            b = _pq_bit(key, j)
            hit &= (words[base + U64(j >> 1)] & b) == b
        out[r] = hit
    return out


# ---------------------------------------------------------------------------------------------
# statistics


@jit_read
def block_fpr_sum(words: np.ndarray, lanes_per_word: int) -> float:
    """Sum over blocks of the block's false positive rate given its bits: the product over its
    8 lanes of ``c / w`` (c set bits of w), as a fresh key tests one uniform bit per lane."""
    w = 64 // lanes_per_word
    per_block = 8 // lanes_per_word
    nblocks = words.shape[0] // per_block
    total = 0.0
    for b in range(nblocks):
        p = 1.0
        for t in range(per_block):
            v = words[b * per_block + t]
            if lanes_per_word == 2:
                p *= popcount64(v & _LOW32) / w
                p *= popcount64(v >> U64(32)) / w
            else:
                p *= popcount64(v) / w
        total += p
    return total
