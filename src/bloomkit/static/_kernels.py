"""numba kernels of the binary fuse filter (Graf & Lemire 2022): peeling with per-cell counts and
the XOR of incident hashes, the reverse-order assignment of fingerprints, and the batch query.

A build attempt ``salt`` maps a key's h1 (bloomkit's 64-bit hash) to ``h = fmix64(h1 + (salt + 1)
* GOLDEN)``. Its ``arity`` cells are ``p_j = floor(h * L * S / 2^64) + j L``, XORed for j >= 1 with
the low bits ``(h >> ((arity - 1 - j) * step)) & (L - 1)`` (``step`` 18 for arity 3, 16 for arity
4), L the segment length (a power of two) and S the segment count: consecutive segments, as in
xor_singleheader's ``binary_fuse8_hash``. The fingerprint is the top ``r`` bits of
``h * FP_MUL`` (independent of the bits that choose the cells). Fingerprint arrays are uint8,
uint16 or uint32: numba compiles one version of the assignment and the query for each.

Memory of a build (n keys, M cells): the attempt's hashes sorted by segment (8n bytes), per cell a
uint8 count-and-index byte and a uint64 XOR of hashes (9M bytes), the peeling queue (4M) and the
peeled stack's free-cell indices (n; the hashes reuse the sorted array): about 9n + 13M bytes
beside the input's hashes.
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import GOLDEN, U64, jit_inline, jit_mut, jit_read, mulhi64
from ..lookup._kernels import fmix64

FP_MUL = U64(0xD6E8FEB86659FD93)


@jit_inline
def fuse_key(h1: np.uint64, salt: np.uint64) -> np.uint64:
    """The attempt's 64-bit hash of a key."""
    return fmix64(h1 + (salt + U64(1)) * GOLDEN)


@jit_inline
def fuse_fp(h: np.uint64, shift: np.uint64) -> np.uint64:
    """The fingerprint: the top ``64 - shift`` bits of ``h * FP_MUL``."""
    return (h * FP_MUL) >> shift


@jit_inline
def fuse_pos(h: np.uint64, j: np.int64, arity: np.int64, seg_len: np.uint64, span: np.uint64) -> np.int64:
    """Cell j of the key of hash h (``span`` = L * S)."""
    base = mulhi64(h, span) + U64(j) * seg_len  # type: ignore[call-arg]
    if j > 0:
        step = U64(18) if arity == 3 else U64(16)
        base ^= (h >> (U64(arity - 1 - j) * step)) & (seg_len - U64(1))
    return np.int64(base)


@jit_read
def fuse_peel(
    h1s: np.ndarray, salt: np.uint64, arity: int, seg_len: np.uint64, span: np.uint64, cells: int, block_bits: int
) -> tuple[np.ndarray, np.ndarray, int, int, bool]:
    """One attempt: add every key to its cells, then peel cells holding one key.

    Returns (peeled hashes, the index j of each one's free cell, count peeled, duplicates skipped,
    overflow). Keys are added in the order of their first segment (a counting sort by the top
    ``block_bits`` bits of h) so that the cells touched move through memory. A key whose hash
    is already in one of its cells alone with it (the same key twice) is skipped and counted.
    ``overflow``: a cell got 64 keys (its 6-bit count wrapped); the attempt fails.
    """
    n = h1s.shape[0]
    nb = 1 << block_bits
    start = np.zeros(nb + 1, dtype=np.int64)
    shift = U64(64 - block_bits)
    for i in range(n):
        start[np.int64(fuse_key(h1s[i], salt) >> shift) + 1] += 1
    for b in range(nb):
        start[b + 1] += start[b]
    hs = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = fuse_key(h1s[i], salt)
        b = np.int64(h >> shift)
        hs[start[b]] = h
        start[b] += 1
    cnt = np.zeros(cells, dtype=np.uint8)  # (keys << 2) | XOR of the keys' j
    xh = np.zeros(cells, dtype=np.uint64)
    dups = 0
    overflow = False
    for i in range(n):
        h = hs[i]
        p0 = fuse_pos(h, 0, arity, seg_len, span)
        p1 = fuse_pos(h, 1, arity, seg_len, span)
        p2 = fuse_pos(h, 2, arity, seg_len, span)
        p3 = fuse_pos(h, 3, arity, seg_len, span) if arity == 4 else p2
        cnt[p0] = np.uint8(cnt[p0] + 4)
        cnt[p1] = np.uint8((cnt[p1] + 4) ^ 1)
        cnt[p2] = np.uint8((cnt[p2] + 4) ^ 2)
        xh[p0] ^= h
        xh[p1] ^= h
        xh[p2] ^= h
        if arity == 4:
            cnt[p3] = np.uint8((cnt[p3] + 4) ^ 3)
            xh[p3] ^= h
        if xh[p0] == U64(0) and cnt[p0] >> 2 == 2:  # h twice in a cell holding only it: a duplicate
            dups += 1
            cnt[p0] = np.uint8(cnt[p0] - 4)
            cnt[p1] = np.uint8((cnt[p1] - 4) ^ 1)
            cnt[p2] = np.uint8((cnt[p2] - 4) ^ 2)
            xh[p0] ^= h
            xh[p1] ^= h
            xh[p2] ^= h
            if arity == 4:
                cnt[p3] = np.uint8((cnt[p3] - 4) ^ 3)
                xh[p3] ^= h
        elif cnt[p0] < 4 or cnt[p1] < 4 or cnt[p2] < 4 or cnt[p3] < 4:
            overflow = True
    queue = np.empty(cells, dtype=np.int32)
    qn = 0
    for p in range(cells):
        if cnt[p] >> 2 == 1:
            queue[qn] = p
            qn += 1
    out_h = hs  # the sorted hashes are not needed any more: the peeled stack reuses them
    out_j = np.empty(n, dtype=np.uint8)
    top = 0
    while qn > 0:
        qn -= 1
        p = queue[qn]
        if cnt[p] >> 2 != 1:
            continue
        h = xh[p]
        found = np.int64(cnt[p] & 3)
        out_h[top] = h
        out_j[top] = found
        top += 1
        for j in range(arity):
            q = fuse_pos(h, j, arity, seg_len, span)
            cnt[q] = np.uint8((cnt[q] - 4) ^ j)
            xh[q] ^= h
            if j != found and cnt[q] >> 2 == 1:
                queue[qn] = q
                qn += 1
    return out_h, out_j, top, dups, overflow


@jit_mut
def fuse_assign(
    hs: np.ndarray, js: np.ndarray, count: int, fps: np.ndarray, arity: int, seg_len: np.uint64, span: np.uint64,
    fp_shift: np.uint64,
) -> None:
    """In reverse peeling order, each key's free cell gets its fingerprint XOR its other cells:
    afterwards the XOR of a stored key's cells is its fingerprint."""
    for t in range(count - 1, -1, -1):
        h = hs[t]
        found = np.int64(js[t])
        acc = fuse_fp(h, fp_shift)
        for j in range(arity):
            if j != found:
                acc ^= U64(fps[fuse_pos(h, j, arity, seg_len, span)])
        fps[fuse_pos(h, found, arity, seg_len, span)] = acc


@jit_read
def fuse_contains(
    h1s: np.ndarray, fps: np.ndarray, salt: np.uint64, arity: int, seg_len: np.uint64, span: np.uint64,
    fp_shift: np.uint64, out: np.ndarray,
) -> None:
    """out[i] = the XOR of key i's cells equals its fingerprint."""
    for i in range(h1s.shape[0]):
        h = fuse_key(h1s[i], salt)
        acc = fuse_fp(h, fp_shift)
        for j in range(arity):
            acc ^= U64(fps[fuse_pos(h, j, arity, seg_len, span)])
        out[i] = acc == U64(0)
