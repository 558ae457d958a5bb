"""How a :class:`~bloomkit.ranges.index.ProfileIndex` answers and prices a query: the compiled
form of a query's attribute set (one kernel call per query, :func:`compile_query`), the
interval index of the records (``_Intervals``), and the per-query model of the false candidates
(:func:`price_query`, :class:`FalseCandidates`). The index holds the state and validates the
arguments; this module computes from the arrays it is given.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from . import _index_kernels as IK
from . import model as M
from .layout import Layout
from .records import RecordBatch
from .schema import Numeric, Schema
from .store import RecordStore

__all__ = ["MODEL_MAX_BITS", "FalseCandidates", "compile_query", "price_query"]

MODEL_MAX_BITS = 1 << 16
"""Largest m for which :meth:`ProfileIndex.expected_false_candidates` prices a query (its tables
have m + 1 columns)."""
_RECOUNT = 16  # the row densities / the interval index are rebuilt once adds + removes reach 1/16 of the profiles
_MAX_COMPILED = 256  # compiled queries (attribute sets) an index keeps


class FalseCandidates(NamedTuple):
    """The model of one query against the stored profiles
    (:meth:`ProfileIndex.expected_false_candidates`)."""

    expected: float
    """Expected number of profiles that do not match the query but pass its filter test."""
    variance: float
    """Variance of that number: the sum of p (1 - p) over the profiles (as if independent),
    plus the sampling variance of the estimate when only a sample was priced."""
    nonmatching: int
    """Live profiles that do not match the query (exactly, from their records; estimated from
    the sample when one was priced)."""
    fpr: float
    """``expected / nonmatching`` (0 when no profile fails to match, with ``reason`` saying so)."""
    reason: str | None
    """Why the query is not priced (``fpr`` and ``expected`` are then 0), else None."""
    priced: int
    """The profiles priced (all live profiles unless ``max_profiles`` asked for a sample)."""


def compile_query(layout: Layout, records: RecordStore | None, cache: dict[tuple[str, ...], _Compiled],
                  query: Any) -> tuple[_Compiled, np.ndarray, np.ndarray] | None:
    """``(compiled attribute set, vals, qbytes)`` of a query of plain values (as
    :meth:`ProfileIndex.add` takes them: :meth:`Layout.plain_entries`) for the kernels of
    :mod:`._index_kernels` (see ``Q_KIND``): the spec of its attribute set is compiled once and
    kept in ``cache``; per query only its values and key bytes are filled in. None for anything
    else (the record path answers, or refuses with the record path's message: NaN, wrong types,
    values out of scope, sha512)."""
    entries = layout.plain_entries(query)
    if entries is None:
        return None
    names = tuple(query)
    cq = cache.get(names)
    if cq is None:
        cq = _Compiled(layout, records, names)
        if len(cache) >= _MAX_COMPILED:
            cache.clear()
        cache[names] = cq
    vals: list[int] = []
    if not cq.texts:
        for (_, _, e), at in zip(entries, cq.starts, strict=True):
            vals += (e[0], e[1], at)
        return cq, np.array(vals, dtype=np.int64), cq.blob
    parts: list[bytes] = []
    at = 0
    for (_, _, e), prefix in zip(entries, cq.prefixes, strict=True):
        parts.append(prefix)
        if type(e) is str:
            data = e.encode("utf-8")
            parts.append(data)
            vals += (0, len(data), at)
            at += len(prefix) + len(data)
        else:
            vals += (e[0], e[1], at)
            at += len(prefix)
    return cq, np.array(vals, dtype=np.int64), np.frombuffer(bytearray(b"".join(parts)), dtype=np.uint8)


def price_query(layout: Layout, records: RecordStore, active: np.ndarray, fills: np.ndarray, batch: RecordBatch,
                how: str, cap: int | None, m: int, live: int, next_id: int) -> FalseCandidates:
    """:meth:`ProfileIndex.expected_false_candidates` of a validated query ``batch`` (``how``:
    the mode; ``cap``: max_profiles) against the index's arrays: m bits, ``live`` profiles in
    slots below ``next_id``."""
    if m > MODEL_MAX_BITS:
        return FalseCandidates(0.0, 0.0, 0, 0.0, f"the per-query model prices filters of at most "
                                                 f"{MODEL_MAX_BITS} bits (m = {m})", 0)
    lay = layout
    spec = np.zeros((len(batch.columns), 20), dtype=np.int64)
    near = np.zeros(len(batch.columns))  # the share of the scope near the query: far-from attributes first
    qtext: list[bytes] = []
    tables: list[np.ndarray] = []
    at = 0
    for i, col in enumerate(batch.columns):
        plan = lay.plans[col.name]
        pcol, rcol = records.columns(col.name)
        row = spec[i]
        row[1], row[2], row[10] = pcol, rcol, plan.k
        if col.text is not None:
            t = col.text[0]
            data = (t.as_py() if hasattr(t, "as_py") else t).encode("utf-8")
            row[0], row[14], row[15] = 0, at, len(data)
            qtext.append(data)
            at += len(data)
            continue
        assert col.a is not None and col.b is not None
        qa, qb = int(col.a[0]), int(col.b[0])
        ga, gb = lay.groups(plan, qa, qb)
        row[3:10] = qa, qb, plan.base, plan.d, plan.s, plan.r, plan.last
        row[11] = M.query_words(ga, gb, plan.s, plan.r, plan.last)
        row[12] = ga * plan.s
        row[16:20] = ga, gb, plan.base + (ga - plan.r) * plan.d, plan.base + (gb + plan.r + 1) * plan.d
        assert isinstance(plan.attr, Numeric)
        near[i] = (row[19] - row[18]) / plan.attr.scope_size
        if how == "intersect" and qb > qa:
            row[0] = 2
            row[13] = sum(t.shape[0] for t in tables)
            tables.append(_pass_tables(gb - ga + 1, plan.s, plan.k, m))
        else:
            row[0] = 1
    tab = np.concatenate(tables) if tables else np.zeros((1, m + 1))
    step = 1 if cap is None or live <= cap else -(-live // cap)
    total, var, sq, nonmatch, visited = IK.false_candidates(
        active, next_id, fills, *records.view, spec[np.argsort(near, kind="stable")], np.frombuffer(b"".join(qtext) or b"\0", dtype=np.uint8),
        *_fill_powers(m), tab, step)
    if nonmatch == 0:
        reason = ("no profile is stored" if not live else "every profile stored matches the query" if step == 1
                  else "every profile of the sample matches the query")
        return FalseCandidates(0.0, 0.0, 0, 0.0, reason, int(visited))
    if visited >= live:
        return FalseCandidates(float(total), float(var), int(nonmatch), float(total) / nonmatch, None, int(visited))
    scale = live / visited  # a sample: scaled up; its variance as a simple random sample's
    s2 = max(sq - total * total / visited, 0.0) / max(visited - 1, 1)
    sampling = live * live * s2 / visited * (1.0 - visited / live)
    expected, nonmatching = scale * total, max(1, round(scale * nonmatch))
    return FalseCandidates(expected, scale * var + sampling, nonmatching, expected / nonmatching, None, int(visited))


class _Compiled:
    """The compiled form of a query's attribute set (:func:`compile_query`):
    the ``spec`` rows of :mod:`._kernels` (``Q_KIND`` ...), each attribute's key prefix
    ``"name:"`` and, for a query without texts, the key bytes (the prefixes) and where each
    starts (fixed). Read-only once built."""

    __slots__ = ("blob", "numeric", "pick", "prefixes", "spec", "starts", "texts")

    def __init__(self, layout: Layout, records: RecordStore | None, names: tuple[str, ...]) -> None:
        spec = np.zeros((len(names), IK.Q_FIELDS), dtype=np.int64)
        self.prefixes = [(n + ":").encode("utf-8") for n in names]
        for i, name in enumerate(names):
            plan = layout.plans[name]
            pcol, rcol = records.columns(name) if records is not None else (layout.schema.index(name), 0)
            spec[i] = (int(plan.attr.is_numeric), pcol, rcol, plan.k, plan.base, plan.d, plan.s, plan.r, plan.last,
                       len(self.prefixes[i]))
        self.spec = spec  # (writeable: numba takes read-only arrays more slowly)
        self.pick: tuple[int, int] | None = None  # (profiles added then, interval column): _interval_index
        self.texts = not all(layout.plans[n].attr.is_numeric for n in names)
        self.numeric = any(layout.plans[n].attr.is_numeric for n in names)
        self.starts = np.concatenate([[0], np.cumsum([len(p) for p in self.prefixes])]).astype(int).tolist()[:-1]
        self.blob = np.frombuffer(bytearray(b"".join(self.prefixes) or b"\0"), dtype=np.uint8)  # writeable


class _Intervals:
    """The interval index of a ProfileIndex's numeric records, built over slots ``0 .. built -
    1`` for some numeric record columns (``columns``; built lazily, see :meth:`current`): per
    column ``c`` and width class ``cl`` (ranges whose ``hi - lo`` has bit length ``cl``; points
    are class 0), the slots sorted by their lower ends (``entries``; the keys ``lo - base`` are
    read through the records' rows, which keep a removed profile's ends for this reason), each
    class's segment and widest range (``classes``: see :func:`._kernels._class_bounds`; its last
    column is 1 for the columns built) and every FENCE-th key (``fences``). A query range
    ``[a, b]`` has its candidates in one contiguous run per class: ``b - W <= lo <= a``
    (subset), ``a - W <= lo <= b`` (intersect); :func:`._kernels.interval_search`. Kept beside
    the bit slices (never saved; the bit slices stay the published form).

    Memory: 4 bytes per value of a column built (uint32 slots; 8 past 2**32 slots) + 1/64 of
    that in fences. Build: O(N log N) per column."""

    __slots__ = ("built", "changes", "classes", "columns", "count", "entries", "fences")

    def __init__(self, schema: Schema, records: RecordStore, built: int, changes: int, count: int,
                 columns: frozenset[int]) -> None:
        self.built, self.changes, self.count, self.columns = built, changes, count, columns
        numeric = [a for a in schema if isinstance(a, Numeric)]
        dt = np.uint32 if built < 1 << 32 else np.int64
        nc = IK.NCLASS
        self.classes = np.zeros((max(len(numeric), 1), 2 * nc + 2), dtype=np.int64)
        keys, perm = [], []
        at = 0
        for attr in numeric:
            j, c = records.columns(attr.name)
            if c not in columns:
                self.classes[c, : nc + 1] = at
                continue
            slots = np.flatnonzero(records.present(slice(0, built), j))
            lo, hi = records.bounds(slots, j)
            width = hi - lo
            cls = np.zeros(slots.size, dtype=np.int64)
            nz = width > 0
            cls[nz] = np.frexp(width[nz].astype(np.float64))[1]  # the bit length (a class off by one
            order = np.lexsort((lo, cls))  # near 2^53 only loosens its bound: W is the true widest)
            cls = cls[order]
            keys.append(lo[order] - attr.scaled_lo)
            perm.append(slots[order].astype(dt))
            self.classes[c, : nc + 1] = at + np.searchsorted(cls, np.arange(nc + 1), side="left")
            if slots.size:
                np.maximum.at(self.classes[c, nc + 1 : 2 * nc + 1], cls, width[order])
            self.classes[c, 2 * nc + 1] = 1
            at += slots.size
        self.entries = np.concatenate(perm or [np.zeros(0, dt)])
        self.fences = np.concatenate(keys or [np.zeros(0, np.int64)])[:: IK.FENCE].copy()

    @classmethod
    def current(cls, iv: _Intervals | None, schema: Schema, records: RecordStore, nslots: int, changes: int,
                count: int, column: int) -> _Intervals:
        """``iv`` while it is current and has ``column``, else one built over the ``nslots``
        slots so far with ``column`` added (rebuilt once the adds + removes since (``changes``)
        reach 1/16 of the profiles or the adds 1/64: until then the slots added since are
        checked one by one and removed ones are skipped by their active bit)."""
        if (iv is None or iv.built > nslots or abs(changes - iv.changes) * _RECOUNT > max(iv.count, 1024)
                or (nslots - iv.built) * 64 > max(iv.count, 1024) or column not in iv.columns):
            return cls(schema, records, nslots, changes, count,
                       frozenset([column]) | (iv.columns if iv is not None else frozenset()))
        return iv

    @property
    def nbytes(self) -> int:
        return int(self.entries.nbytes + self.fences.nbytes + self.classes.nbytes)


_NEGLIGIBLE = 1e-12  # a profile's chance of passing below which the model stops looking at it


@functools.lru_cache(maxsize=8)
def _fill_powers(m: int) -> tuple[np.ndarray, np.ndarray]:
    """``(c / m)^J`` for J = 0 .. 127 and c = 0 .. m, and per c the smallest J at which it is
    below 1e-12 (read-only; larger J are computed)."""
    q = np.arange(m + 1, dtype=np.float64) / m
    powers = q[None, :] ** np.arange(128, dtype=np.float64)[:, None]
    with np.errstate(divide="ignore"):
        stop = np.where(q < 1.0, np.ceil(np.log(_NEGLIGIBLE) / np.log(np.where(q < 1.0, q, 0.5))), 1 << 40)
    stop = np.maximum(stop, 1).astype(np.int64)
    powers.flags.writeable = stop.flags.writeable = False
    return powers, stop


@functools.lru_cache(maxsize=64)
def _pass_tables(groups: int, s: int, k: int, m: int) -> np.ndarray:
    """:func:`~bloomkit.ranges.model.intersect_pass_probability` for every fill c = 0 .. m
    (read-only; cached: a search of the same size and design reuses it)."""
    out: np.ndarray = M.intersect_pass_probability(groups, s, k, np.arange(m + 1) / m, np.arange(int(M.r(k, s)) + 1)[:, None])
    out.flags.writeable = False
    return out


def _unpack_ids(words: np.ndarray) -> np.ndarray:
    """Sorted positions of the set bits of uint64 words (only non-zero words are unpacked)."""
    nz = np.flatnonzero(words)
    if nz.size == 0:
        return np.zeros(0, dtype=np.int64)
    bits = np.unpackbits(words[nz].astype("<u8").view(np.uint8), bitorder="little").reshape(-1, 64)
    r, c = np.nonzero(bits)
    return (nz[r].astype(np.int64) << 6) + c.astype(np.int64)
