"""numba kernels of the page-ordered batch adds of mapped filters (:mod:`bloomkit._mapped`).

A batch's probe positions are grouped by *region* of the file (``2**shift`` positions, a
fixed number of bytes: 1 MiB) with a counting sort (two passes over the hashes: count per
region, then scatter; no full sort, memory 4 bytes per probe plus 8 bytes per region), then
applied region after region, so each page of the file is written in one sweep and faults at
most once per batch instead of once per probe. The positions are the plain kernels' own
(:func:`bloomkit._engine.kernels.probe_row`, either probe scheme; the split-block base of
:mod:`bloomkit.splitblock._kernels`), and the order of writes does not change the result
(bits are OR-ed; saturating counter increments commute, and a counter saturates in one order
exactly when it does in every other), so the filter is bit for bit the plain path's.
"""

from __future__ import annotations

import numpy as np

from ._engine.counters import cinc
from ._engine.jit import U64, jit_mut, jit_read
from ._engine.kernels import probe_row, reducer
from .splitblock._kernels import _nat_base, _pq_base

__all__ = ["inc_ordered", "order_blocks", "order_probes", "set_ordered", "test_ordered"]


@jit_read
def order_probes(h1: np.ndarray, k: int, m: np.uint64, shift: int, nreg: int,
                 keyed: bool, dh: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, offsets, keys): the k probe positions of every key (the scheme ``dh`` selects:
    :func:`bloomkit._engine.kernels.probe_row`), counting-sorted by region ``position >> shift``;
    region g's positions are ``(g << shift) + offsets[starts[g]:starts[g + 1]]`` (offsets <
    2**32: ``shift`` <= 32); ``keyed``: ``keys`` holds the index in ``h1`` of each position's
    key (for queries), else it is empty."""
    M = reducer(m)
    n = h1.shape[0]
    pos = np.empty(k, dtype=np.uint64)
    starts = np.zeros(nreg + 1, dtype=np.int64)
    for r in range(n):
        probe_row(pos, h1[r], k, m, M, dh)
        for i in range(k):
            starts[np.int64(pos[i] >> U64(shift)) + 1] += 1
    for g in range(nreg):
        starts[g + 1] += starts[g]
    fill = starts[:-1].copy()
    low = (U64(1) << U64(shift)) - U64(1)
    offs = np.empty(n * k, dtype=np.uint32)
    keys = np.empty(n * k if keyed else 0, dtype=np.uint32)
    for r in range(n):
        probe_row(pos, h1[r], k, m, M, dh)
        for i in range(k):
            x = pos[i]
            grp = np.int64(x >> U64(shift))
            j = fill[grp]
            offs[j] = np.uint32(x & low)
            if keyed:
                keys[j] = np.uint32(r)
            fill[grp] = j + 1
    return starts, offs, keys


@jit_read
def test_ordered(words: np.ndarray, starts: np.ndarray, offs: np.ndarray, keys: np.ndarray, shift: int,
                 g0: int, g1: int, out: np.ndarray) -> None:
    """``out[key] = False`` for every probe of regions g0 .. g1-1 of a keyed
    :func:`order_probes` whose bit is clear (``out`` starts all True)."""
    for g in range(g0, g1):
        base = U64(g) << U64(shift)
        for j in range(starts[g], starts[g + 1]):
            x = base + U64(offs[j])
            if not (words[x >> U64(6)] >> (x & U64(63))) & U64(1):
                out[keys[j]] = False


@jit_mut
def set_ordered(words: np.ndarray, starts: np.ndarray, offs: np.ndarray, shift: int, g0: int, g1: int) -> None:
    """Set the bits of regions g0 .. g1-1 of :func:`order_probes` (keeps the GIL, as the
    plain path's shared insert: concurrent adds never lose a bit)."""
    for g in range(g0, g1):
        base = U64(g) << U64(shift)
        for j in range(starts[g], starts[g + 1]):
            x = base + U64(offs[j])
            words[x >> U64(6)] |= U64(1) << (x & U64(63))


@jit_mut
def inc_ordered(arr: np.ndarray, width: int, maxval: int, starts: np.ndarray, offs: np.ndarray, shift: int,
                g0: int, g1: int) -> bool:
    """Saturating increments of the counters of regions g0 .. g1-1 of :func:`order_probes`;
    True if any counter was already at ``maxval`` (as ``counters_inc_h1``)."""
    over = False
    for g in range(g0, g1):
        base = np.int64(g) << np.int64(shift)
        for j in range(starts[g], starts[g + 1]):
            over |= cinc(arr, width, maxval, base + np.int64(offs[j]))
    return over


@jit_read
def order_blocks(h: np.ndarray, B: np.uint64, native: bool, shift: int, nreg: int) -> tuple[np.ndarray, np.ndarray]:
    """(starts, hashes): the split-block hashes counting-sorted by the region of their block's
    first word (``base >> shift``); the plain insert kernels take each region's slice."""
    M = reducer(B)
    n = h.shape[0]
    g_of = np.empty(n, dtype=np.int64)
    starts = np.zeros(nreg + 1, dtype=np.int64)
    for r in range(n):
        base = _nat_base(h[r], B, M) if native else _pq_base(h[r], B)
        grp = np.int64(base >> U64(shift))
        g_of[r] = grp
        starts[grp + 1] += 1
    for g in range(nreg):
        starts[g + 1] += starts[g]
    fill = starts[:-1].copy()
    out = np.empty(n, dtype=np.uint64)
    for r in range(n):
        grp = g_of[r]
        out[fill[grp]] = h[r]
        fill[grp] += 1
    return starts, out
