"""The low-memory build of bumped ribbon (issue 23, item 4; ``low_memory=True`` of
:meth:`bloomkit.lookup.RibbonRetrieval.build` and :meth:`bloomkit.static.RibbonFilter.build`):
the same layers as :func:`bloomkit.lookup.ribbon.solve`, byte for byte, without the keys'
64-bit hashes or a sorted copy of them all. A bumped layer's parts are independent systems
(:data:`bloomkit.lookup._ribbon_kernels.PART_BUCKETS`), so the first layer is solved in passes
over the input, each keeping only the keys of a run of parts; the later layers (about 5 % of
the keys) are built as usual (:func:`bloomkit.lookup.ribbon.solve_low_memory`). Measured
memory and time: docs/static.md, "Limits".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.columns import KeyBatch
from .._engine.hashing import hash_keys
from .._engine.parallel import (
    chunk_bounds,
    get_num_threads,
    hashes_of,
    key_source,
    map_ranges,
    ranges,
    split,
)
from . import _ribbon_kernels as RK

__all__ = ["KeySource", "bumped_layer_passes", "low_memory_passes"]

LOW_MEMORY_RESERVE = 0.056
"""Slots per key of a low-memory build reserved behind the first layer for the later ones
(measured: 5.1 % of the keys are bumped at 10^5 - 10^6 keys, the later layers take about 0.051
slots per key), plus 4,096: the first layer is solved in place in one array with that room
after it, so the layers are never copied into a new array (that copy would hold two whole
solutions). Later layers larger than that: the usual copy."""
PASS_CHUNK = 1 << 14
"""Keys hashed at a time by a low-memory build's passes (per thread)."""


class KeySource:
    """The keys of a low-memory build (:func:`solve_low_memory`), hashed again by every pass:
    h1 of keys [lo, hi) by :meth:`h1`, all of them by :meth:`full`. The keys come through the
    engine's front door once (:func:`bloomkit._engine.parallel.key_source`: a list is hashed whole
    there); a 1-D numpy array of ints, bools, bytes or str, or a pyarrow array, stays as it is and
    is hashed slice by slice (no 8-byte-per-key copy); other batches (floats: a NaN's error names
    its index in the whole batch) are hashed once here, and their 8-byte-per-key hashes are then
    the input the passes read, as a list's are."""

    def __init__(self, keys: Any, seed: int, owner: str) -> None:
        batch, hash_chunk = key_source(keys, lambda part: hash_keys(part, seed), owner)
        data = batch.data
        if not batch.hashed and isinstance(data, np.ndarray) and data.dtype.kind not in "iubSU":
            batch, hash_chunk = KeyBatch(hash_chunk(batch), batch.tags, hashed=True), hashes_of
        self._batch, self._hash_chunk = batch, hash_chunk
        self.tags, self.n = batch.tags, len(batch)

    def h1(self, lo: int, hi: int) -> np.ndarray:
        return self._hash_chunk(self._batch.slice(lo, hi))

    def full(self) -> np.ndarray:
        return self._hash_chunk(self._batch)


def _value_dtype(c: int, with_values: bool) -> Any:
    """The dtype of a low-memory pass's sorted values: uint32 when they fit (c <= 32: values
    are below 2^V <= 2^c), else uint64."""
    return np.uint32 if with_values and c <= 32 else np.uint64


MAX_PASSES = 32
"""At most this many passes (plus the counting pass) over the input in a low-memory build."""


def low_memory_passes(n: int, m: int, c: int, with_values: bool, threads: int = 1) -> int:
    """Passes of a low-memory build's first layer (``threads``: :func:`get_num_threads`). A pass
    takes the same number of whole parts (:func:`RK.num_parts`; the last pass fewer): the
    most whose estimated peak stays within 0.9 x 2 x the table (the issue's target, with a
    margin), at least ceil(parts / :data:`MAX_PASSES`). The estimate (bytes): the first layer's
    solution and the room behind it, one pass's keys sorted by block (8 bytes per key and 4 or
    8 for its value, :func:`_value_dtype`, plus 5 %), the bumped keys (5.2 % of the keys, 8 or
    16 bytes each), a block's position per thread slice and two more arrays of them, and per
    thread solving (at most one per part of the pass) the rows of one part (8 + 4 or 8 bytes per
    slot) and two chunks of hashes. The choice changes the time and memory, never the table.

    ``m``: the first layer's slots.

    >>> low_memory_passes(10**6, 950016, 32, True, 2), low_memory_passes(10**7, 9500032, 32, True, 2)
    (14, 8)
    """
    nb = m // 64
    parts = RK.num_parts(m)
    vb = np.dtype(_value_dtype(c, True)).itemsize if with_values else 0
    table = m * c / 8 + nb + 0.051 * n * c / 8
    fixed = (m * c / 8 + (LOW_MEMORY_RESERVE * n + 4096) * c / 8 + 0.052 * n * (16 if with_values else 8)
             + 8 * nb * (threads + 2))
    span = (nb // parts + 1) * 64
    per = parts
    lo = -(-parts // MAX_PASSES)
    while per > lo:
        solving = min(threads, per)
        est = (fixed + 1.05 * per / parts * n * (8 + vb) + solving * (span * (12 if c <= 32 else 16)
                                                               + 2 * 8 * PASS_CHUNK))
        if est <= 0.9 * 2 * table:
            break
        per -= 1
    return -(-parts // per)


def bumped_layer_passes(src: KeySource, vals: np.ndarray, salt: int, m: int, c: int, width: int, passes: int,
                        out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`bumped_layer` of all the keys of ``src`` in ``passes`` passes over the input, the
    same bytes: one pass counts the keys of each block (per thread slice of the input, as
    :func:`_by_block`), then each pass hashes the input again and sorts by block only the keys
    of 1/``passes`` of the layer's parts (:func:`RK.rb_scatter_blocks`, input order inside a
    block), solves those parts into their words of ``out`` (the layer's m c / 64 words; need not
    be zero) and keeps their bumped keys. Returns (thresholds, h1 and values of the bumped keys)
    or None when a key repeats. Working memory beside the solution: one pass's keys sorted
    (16 / ``passes`` bytes per key of the layer), the bumped keys so far, a block's start
    position per thread slice (8 bytes per 64 slots each) and, per thread, the rows of one
    part."""
    sd = np.uint64(salt)
    nb = m // 64
    chunks = ranges(src.n)

    def count(lo: int, hi: int) -> np.ndarray:
        cnt = np.zeros(nb, dtype=np.int64)
        for a, b in chunk_bounds(lo, hi, PASS_CHUNK):
            RK.rb_count_into(src.h1(a, b), sd, m, cnt)
        return cnt

    ends, at = RK.slice_offsets(np.stack(map_ranges(count, chunks)))
    first = {lo: t for t, (lo, _hi) in enumerate(chunks)}
    parts = RK.num_parts(m)
    span = (nb // parts + 1) * 64
    thr = np.zeros(nb, dtype=np.uint8)
    bhs: list[np.ndarray] = []
    bvs: list[np.ndarray] = []
    per = -(-parts // passes)
    for j in range(passes):
        p_lo, p_hi = min(parts, j * per), min(parts, (j + 1) * per)
        if p_lo == p_hi:
            break
        b_lo, b_hi = p_lo * nb // parts, p_hi * nb // parts
        base = int(ends[b_lo - 1]) if b_lo else 0
        k = int(ends[b_hi - 1]) - base
        sh = np.empty(k, dtype=np.uint64)
        sv = np.empty(k if len(vals) else 0, dtype=_value_dtype(c, len(vals) > 0))

        def scatter(lo: int, hi: int, b_lo: int = b_lo, b_hi: int = b_hi, base: int = base,
                    sh: np.ndarray = sh, sv: np.ndarray = sv) -> None:
            row = at[first[lo], b_lo:b_hi] - base
            for a, b in chunk_bounds(lo, hi, PASS_CHUNK):
                RK.rb_scatter_blocks(src.h1(a, b), vals[a:b], sd, m, b_lo, b_hi, row, sh, sv)

        map_ranges(scatter, chunks)
        pos = ends - base  # pos[b_lo - 1] = 0
        Z = out[b_lo * c:b_hi * c]
        Z.fill(0)
        groups = [(p_lo + a, p_lo + b) for a, b in split(p_hi - p_lo, min(get_num_threads(), p_hi - p_lo))]

        def solve_parts(lo: int, hi: int, sh: np.ndarray = sh, sv: np.ndarray = sv, pos: np.ndarray = pos,
                        Z: np.ndarray = Z, b_lo: int = b_lo) -> tuple[np.ndarray, np.ndarray, int]:
            return RK.rb_solve_parts(sh, sv, pos, sd, m, c, width, Z, thr, parts, RK.rhs(span, c), lo, hi, b_lo)

        res = map_ranges(solve_parts, groups)
        del sh, sv, pos, scatter, solve_parts
        if any(r[2] for r in res):
            return None
        for r in res:  # copies: the kernel's buffers are larger than what they hold
            bhs.append(r[0].copy())
            bvs.append(r[1].copy())
        del res, Z
    bh = np.concatenate(bhs)
    del bhs
    bv = np.concatenate(bvs)
    return thr, bh, bv
