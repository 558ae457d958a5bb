"""numba kernels of counter arrays (counting Bloom filters, the PBF verification table's
counters, folding of counters): width 4 is packed two per byte (low nibble = even index);
8 / 16 / 32 use uint8 / uint16 / uint32. Saturating: a counter at its maximum stays there.

C twins: ``core_insert`` / ``core_test`` of _speedups.c (section "FilterCore", kinds
KIND_COUNTERS / KIND_COUNTERS_DH); tests/test_speedups.py::test_counters_saturate_alike keeps
them equal."""

from __future__ import annotations

import numpy as np

from .jit import jit_inline, jit_mut, jit_read
from .kernels import probe_positions, probe_row, reducer


@jit_inline
def cget(arr: np.ndarray, width: int, i: np.int64) -> np.int64:
    if width == 4:
        b = np.int64(arr[i >> 1])
        return (b >> (4 * (i & 1))) & 0xF
    return np.int64(arr[i])


@jit_inline
def cset(arr: np.ndarray, width: int, i: np.int64, v: np.int64) -> None:
    if width == 4:
        j = i >> 1
        sh = 4 * (i & 1)
        b = np.int64(arr[j])
        arr[j] = (b & ~(0xF << sh)) | ((v & 0xF) << sh)
    else:
        arr[i] = v


@jit_read
def counters_unpack(arr: np.ndarray, width: int, size: int) -> np.ndarray:
    """All counter values as int64."""
    out = np.empty(size, dtype=np.int64)
    for i in range(size):
        out[i] = cget(arr, width, i)
    return out


@jit_mut
def counters_pack(values: np.ndarray, arr: np.ndarray, width: int) -> None:
    """Store int64 ``values`` (already within range) into ``arr``."""
    for i in range(values.shape[0]):
        cset(arr, width, i, values[i])


@jit_inline
def cinc(arr: np.ndarray, width: int, maxval: int, i: np.int64) -> bool:
    """Saturating increment of counter ``i``; True if it was already at ``maxval`` (it stays)."""
    v = cget(arr, width, i)
    if v >= maxval:
        return True
    cset(arr, width, i, v + 1)
    return False


@jit_mut
def counters_inc_idx(arr: np.ndarray, width: int, maxval: int, idx: np.ndarray) -> bool:
    """Saturating increment of the counters at ``idx``; True if any counter saturated."""
    over = False
    for t in range(idx.shape[0]):
        over |= cinc(arr, width, maxval, np.int64(idx[t]))
    return over


@jit_mut
def counters_dec_idx(arr: np.ndarray, width: int, maxval: int, idx: np.ndarray) -> np.int64:
    """Decrement the counters at ``idx`` (saturated counters stay saturated).

    All or nothing: if a counter would go below zero, every decrement already made is undone
    and the offending position in ``idx`` is returned; -1 on success.
    """
    for t in range(idx.shape[0]):
        i = np.int64(idx[t])
        v = cget(arr, width, i)
        if v == 0:
            for u in range(t):
                cinc(arr, width, maxval, np.int64(idx[u]))
            return t
        if v < maxval:
            cset(arr, width, i, v - 1)
    return -1


@jit_mut
def counters_inc_h1(arr: np.ndarray, width: int, maxval: int, h1: np.ndarray, k: int, m: np.uint64,
                    dh: bool) -> bool:
    """Counting Bloom filter insert of every key, probes of the scheme ``dh`` selects
    (:func:`probe_row`); True if any counter saturated.

    C twin: ``core_insert`` of _speedups.c, section "FilterCore"."""
    M = reducer(m)
    pos = np.empty(k, dtype=np.uint64)
    over = False
    for r in range(h1.shape[0]):
        probe_row(pos, h1[r], k, m, M, dh)
        for i in range(k):
            over |= cinc(arr, width, maxval, np.int64(pos[i]))
    return over


@jit_read
def counters_test_h1(arr: np.ndarray, width: int, h1: np.ndarray, k: int, m: np.uint64, dh: bool) -> np.ndarray:
    """True where all k counters of a key are non-zero (probes as :func:`counters_inc_h1`).

    C twin: ``core_test`` of _speedups.c, section "FilterCore"."""
    M = reducer(m)
    n = h1.shape[0]
    out = np.empty(n, dtype=np.bool_)
    pos = np.empty(k, dtype=np.uint64)
    for r in range(n):
        probe_row(pos, h1[r], k, m, M, dh)
        hit = True
        for i in range(k):
            if cget(arr, width, np.int64(pos[i])) == 0:
                hit = False
                break
        out[r] = hit
    return out


@jit_mut
def counters_dec_h1(arr: np.ndarray, width: int, maxval: int, h1: np.ndarray, k: int, m: np.uint64,
                    dh: bool) -> np.int64:
    """Counting Bloom filter removal of every key (probes as :func:`counters_inc_h1`), all or
    nothing.

    Returns -1 on success, or the index of the first key with a zero counter (every decrement
    of the batch is then undone).
    """
    pos = probe_positions(h1, k, m, dh)
    flat = pos.reshape(pos.shape[0] * k)
    bad = counters_dec_idx(arr, width, maxval, flat)
    if bad < 0:
        return -1
    return bad // k


@jit_read
def counters_fold(arr: np.ndarray, width: int, maxval: int, size: int, factor: int, out: np.ndarray) -> bool:
    """Saturating sum-fold of counters into ``out`` (packed like ``arr``):
    c'_j = min(maxval, sum_t c_{j + t*size/factor}) (doc 003, Eq. 3). True if a sum saturated.

    Works in the counters' own storage, with no temporary of the folded size.
    """
    new = size // factor
    over = False
    for j in range(new):
        v = np.int64(0)
        for t in range(factor):
            v += cget(arr, width, t * new + j)
        if v > maxval:
            v = maxval
            over = True
        cset(out, width, j, v)
    return over
