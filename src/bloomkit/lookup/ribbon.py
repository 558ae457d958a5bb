"""Ribbon retrieval (Dillinger and Walzer 2021; Dillinger, Huebschle-Schneider, Sanders, Walzer,
"Fast Succinct Retrieval and Approximate Membership using Ribbon", SEA 2022): a static key ->
value table near the information bound, beside the Geometric filter of document 001.

Each key x gets a band of w = 64 slots starting at s(x) and a random 64-bit row c(x); the table
is the solution Z (m = (1 + eps) n slots of c = V + E bits) of the linear system over GF(2)
``XOR_{t: c_t(x) = 1} Z[s(x) + t] = v(x) XOR fp(x)`` for every key, found by banded Gaussian
elimination (kernels and layout: :mod:`bloomkit.lookup._ribbon_kernels`). A query XORs the
c-bit rows its coefficient selects and fp(x) back: the value of a stored key, a uniform c-bit
word for an absent one, which reads as a value (in [1, 2^V - 1]) with probability
(2^V - 1) / 2^c <= 2^-E: the same contract as :class:`BloomierFilter` (Eq. 2.1 of document 001
with the XOR of three cells replaced by the XOR of a band).

What this is and is not
-----------------------
* *Bumped* ribbon (BuRR), the default: layers of 0.95 slots per key; in each bucket of 64 start
  positions the keys of the lowest offsets that do not fit are bumped to the next layer (one
  threshold byte per bucket), the last layer (under 2,048 keys) is a standard ribbon. Measured:
  32.15 bits per key for V = 16 + E = 16 at 2 10^5 keys (1.0045x the bound). BuRR proper
  stores 1-2 bits of threshold per bucket; the byte here costs 0.125 bits per slot.
* *Standard* ribbon (``bumped=False``), w = 64: the slack eps it needs grows with log n
  (measured: about 0.09 at 10^5 keys, 0.11 at 10^6, 0.13-0.15 at 10^7;
  :func:`default_overhead`), so it is 1.1 - 1.15x the bound.
* Static: ``set`` / ``update`` / ``insert`` / ``remove`` raise UpdateNotSupportedError; freeze an
  updatable :class:`GeometricFilter` with :meth:`RibbonRetrieval.from_table`
  (``GeometricFilter.to_static(keys)``).
* c = V + E <= 64. When c is 8, 16, 32 or 64 the solution is stored by rows (slot i is the
  c-bit word i: a query reads 64 consecutive slots, 4 - 5 cache lines at c = 32), otherwise by
  interleaved columns (2 c words of 64 bits per query); the saved ``layout`` parameter says which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Self

import numpy as np

from .._engine.columns import as_keys
from .._engine.hashing import check_seed, hash_keys
from .._engine.parallel import get_num_threads, map_ranges, ranges, split
from .._engine.storage import aligned_copy, aligned_empty_unbudgeted, aligned_zeros
from .._format import ArraySpec
from .._validation import (
    FPR,
    KEY_TYPES,
    Int,
    InvariantError,
    ListOf,
    Optional,
    Options,
    Real,
    param_error,
)
from ..errors import BloomkitError, FormatError
from . import _ribbon_kernels as RK
from . import _ribbon_lowmem as LM
from ._input import ON_DUPLICATE, check_count, combine_duplicates, key_at, read_pairs, read_values
from ._mapping import LABEL_ARRAYS, LookupBase, StaticLookup
from ._ribbon_lowmem import KeySource
from .params import ERROR_BITS, MAX_ERROR_BITS, VALUE_BITS

__all__ = ["RibbonRetrieval", "default_overhead"]

_OWNER = "RibbonRetrieval"
MAX_ATTEMPTS = 1000
OVERHEAD = Real(0.0, 10.0)
"""eps = m / n - 1 asked of a build (tiny sets get at least one block of 64 slots)."""
ATTEMPTS = Int(1, MAX_ATTEMPTS)
BUMPED = Options(True, False)
LOW_MEMORY = Options(True, False)
MAX_CHECK_BITS = 64


def default_overhead(n: int) -> float:
    """eps for ``n`` keys at which a standard ribbon of width 64 is solved at the first attempt
    in most builds (measured here: failures at eps = 0.07 / 0.09 for 10^6 keys, 0.11 for 10^7):
    ``max(0.03, 0.0275 log10(n) - 0.0525)``.

    >>> round(default_overhead(10**6), 4), round(default_overhead(10**7), 4)
    (0.1125, 0.14)
    """
    return max(0.03, 0.0275 * math.log10(max(n, 1)) - 0.0525)


BUMP_MIN = 2048
"""A layer of fewer keys is a standard ribbon (the last layer)."""
BUMP_LOAD = 0.95
"""m / n of a bumped layer: about 5 % of its keys are bumped to the next layer, and its slots end
up about 99.97 % full (measured at 10^6 keys)."""
MAX_LAYERS = 64
LAYER_SLOTS = ListOf(Int(64, 1 << 50), 1, MAX_LAYERS)
LAYER_SALTS = ListOf(Int(0, 1 << 32), 1, MAX_LAYERS)
ROW_WIDTHS = (8, 16, 32, 64)
"""c of a solution stored by rows (one slot per c-bit word); other c are stored by columns."""
LAYOUT = Options("columns", "rows")
_ROW_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def row_width(c: int) -> int:
    """The ``width`` of the builds for a c-bit solution: c when it is stored by rows, else 0 (columns)."""
    return c if c in ROW_WIDTHS else 0


@dataclass
class Layers:
    """The solved system: layer l has ``slots[l]`` slots (a multiple of 64), ``salts[l]``, words
    ``Z[zoff[l]:zoff[l + 1]]`` and, for the first ``bumped`` layers, one threshold byte per
    bucket of 64 slots ``thr[toff[l]:toff[l + 1]]``. ``width`` 0: Z by columns, else by rows of
    ``width`` = c bits (:mod:`._ribbon_kernels`); both take sum(slots) c / 64 words."""

    slots: list[int]
    salts: list[int]
    bumped: int
    Z: np.ndarray
    thr: np.ndarray
    attempts: int = 0
    width: int = 0

    def offsets(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        zoff = np.concatenate([[0], np.cumsum([m // 64 * c for m in self.slots])]).astype(np.int64)
        tcnt = [m // 64 if i < self.bumped else 0 for i, m in enumerate(self.slots)]
        return zoff, np.concatenate([[0], np.cumsum(tcnt)]).astype(np.int64)

    def copy(self) -> Layers:
        """An independent copy (the solution aligned like the original)."""
        return Layers(list(self.slots), list(self.salts), self.bumped, aligned_copy(self.Z), self.thr.copy(),
                      self.attempts, self.width)

    def bits(self, c: int) -> int:
        """Bits of the solution and the thresholds."""
        return sum(self.slots) * c + 8 * len(self.thr)


def solve(h1: np.ndarray, vals: np.ndarray, c: int, overhead: float | None, attempts: int, owner: str,
          dedupe: Any, bumped: bool, width: int = 0) -> tuple[Layers, np.ndarray, np.ndarray]:
    """Band and solve: (layers, h1, vals) after ``dedupe``; ``vals`` may be empty (every value 0:
    a filter).

    Bumped (BuRR): while a layer has at least :data:`BUMP_MIN` keys it gets 0.95 slots per key
    and bumps what does not fit to the next layer (:func:`bumped_layer`); the rest is a
    standard ribbon (eps = ``overhead`` or :func:`default_overhead`), retried with new salts
    (``attempts`` in all) and finally BloomkitError naming the slack. ``dedupe(h1, vals) ->
    (h1, vals)`` is called when the first layer finds a repeated h1 (a key given twice): it
    removes repeated keys or raises by the caller's policy, and the build starts again. A row
    implied by the others (0 = 0) is solved as it is: no restart. ``width``: the layout of Z
    (0 columns, c rows)."""
    for _ in range(2):
        layers = _solve_once(h1, vals, c, overhead, attempts, owner, bumped, width)
        if layers is not None:
            return layers, h1, vals
        h1, vals = dedupe(h1, vals)
    raise BloomkitError(f"{owner}: keys still repeat after the repeats were removed")  # pragma: no cover


def _solve_once(h1: np.ndarray, vals: np.ndarray, c: int, overhead: float | None, attempts: int, owner: str,
                bumped: bool, width: int) -> Layers | None:
    """The layers of one build, or None when a key repeats."""
    return _more_layers([(h1, vals)], c, overhead, attempts, owner, bumped, width, [], [], [], [])


def _more_layers(box: list[tuple[np.ndarray, np.ndarray]], c: int, overhead: float | None, attempts: int, owner: str,
                 bumped: bool, width: int, slots: list[int], salts: list[int], Zs: list[np.ndarray],
                 thrs: list[np.ndarray], dest: np.ndarray | None = None) -> Layers | None:
    """The layers of the keys ``box.pop()`` = (h1, values) after the layers given (their slots,
    salts, solution pieces in order and thresholds): :func:`_solve_once`'s loop. The keys come
    in a box so that the caller keeps no reference to them (a layer's keys are freed when the
    next layer's are known). ``dest``: see :func:`_joined`."""
    h1, vals = box.pop()
    while bumped and len(h1) >= BUMP_MIN and len(slots) < MAX_LAYERS - 1:
        m = 64 * max(2, int(len(h1) * BUMP_LOAD) // 64)
        layer = bumped_layer(h1, vals, len(slots), m, c, width)
        if layer is None:
            return None
        Z, thr, h1, vals = layer
        slots.append(m)
        salts.append(len(salts))
        Zs.append(Z)
        thrs.append(thr)
    nb = tries = len(slots)
    if len(h1) or not slots:
        eps = default_overhead(len(h1)) if overhead is None else overhead
        m = _slots(len(h1), eps)
        for salt in range(nb, nb + attempts):
            Z, status = RK.rb_build(h1, vals, np.uint64(salt), m, c, width, RK.rhs(m, c))
            tries += 1
            if status == 2:
                return None
            if status == 0:
                slots.append(m)
                salts.append(salt)
                Zs.append(Z)
                break
        else:
            raise BloomkitError(
                f"{owner}: the ribbon system of {len(h1)} keys in {m} slots (eps = {eps:.3g}) "
                f"had no solution in {attempts} attempts; raise overhead (or max_attempts)")
    thr = np.concatenate(thrs) if thrs else np.zeros(0, np.uint8)
    return Layers(slots, salts, nb, _joined(Zs, dest), thr, tries, width)


def _joined(Zs: list[np.ndarray], dest: np.ndarray | None = None) -> np.ndarray:
    """The layers' solutions in one array starting on a cache line (the rows query prefetches
    the lines of a key's slots by their index); ``Zs`` is emptied. ``dest`` (the low-memory
    build): an aligned array whose start is ``Zs[0]`` (the first layer, solved in place) with
    room after it: the other layers are copied behind it and the result is a view of its
    start (no copy of the first layer); without room, a new array as usual."""
    total = sum(len(z) for z in Zs)
    if dest is not None and total <= len(dest) and Zs[0].ctypes.data == dest.ctypes.data:
        at = len(Zs.pop(0))
        for z in Zs:
            dest[at:at + len(z)] = z
            at += len(z)
        Zs.clear()
        return dest[:total]
    out = aligned_empty_unbudgeted((total,), np.uint64)
    at = 0
    while Zs:
        z = Zs.pop(0)
        out[at:at + len(z)] = z
        at += len(z)
        del z
    return out


def bumped_layer(h1: np.ndarray, vals: np.ndarray, salt: int, m: int, c: int,
                 width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """One layer of bumped ribbon in m slots: (Z, thresholds, h1 and values of the keys bumped to
    the next layer), or None when a key repeats. The keys are sorted by bucket
    (:func:`_by_block`), then the layer's parts (:func:`num_parts`, a function of m only) are
    banded and back-substituted (:func:`rb_solve_parts`: rows of one part at a time) on up to
    :func:`bloomkit.get_num_threads` threads, each thread a run of consecutive parts; the bumped
    keys are gathered in part order, so the result does not depend on the number of threads.
    Working memory beside the keys' hashes: their hashes and values sorted by block (16 bytes
    per key, 8 for a filter) and, per thread, the rows of one part (12 or 16 bytes per slot of
    a part of :data:`PART_BUCKETS` buckets)."""
    sd = np.uint64(salt)
    sh, sv, pos = _by_block(h1, vals, sd, m)
    parts = RK.num_parts(m)
    Z = np.zeros(m // 64 * c, dtype=np.uint64)
    thr = np.zeros(m // 64, dtype=np.uint8)
    groups = split(parts, min(get_num_threads(), parts))
    span = (m // 64 // parts + 1) * 64  # slots of the largest part
    solve_parts = partial(_solve_parts, sh, sv, pos, sd, m, c, width, Z, thr, parts, span)
    res = map_ranges(solve_parts, groups)
    del solve_parts, sh, sv, pos
    if any(r[2] for r in res):
        return None
    bh = np.concatenate([r[0] for r in res]) if len(res) > 1 else res[0][0].copy()
    bv = np.concatenate([r[1] for r in res]) if len(res) > 1 else res[0][1].copy()
    return Z, thr, bh, bv


def _solve_parts(sh: np.ndarray, sv: np.ndarray, pos: np.ndarray, sd: np.uint64, m: int, c: int,
                 width: int, Z: np.ndarray, thr: np.ndarray, parts: int, span: int, lo: int,
                 hi: int) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`rb_solve_parts` of parts [lo, hi), with right-hand sides for ``span`` slots of its own."""
    return RK.rb_solve_parts(sh, sv, pos, sd, m, c, width, Z, thr, parts, RK.rhs(span, c), lo, hi, 0)


def _by_block(h1: np.ndarray, vals: np.ndarray, sd: np.uint64, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The keys' hashes ``rb_hash(h1, salt)`` (and values) counting-sorted by the 64-slot block
    of their start, in input order inside a block, on several threads (:func:`rb_count` on
    slices of the keys, the write positions of each slice, :func:`rb_scatter`): (hashes,
    values, ends) with block b's keys at ``[ends[b - 1], ends[b])`` (ends[-1] = 0)."""
    n = len(h1)
    chunks = ranges(n)
    pos, at = RK.slice_offsets(np.stack(map_ranges(lambda lo, hi: RK.rb_count(h1, sd, m, lo, hi), chunks)))
    sh = np.empty(n, dtype=np.uint64)
    sv = np.empty(n if len(vals) else 0, dtype=np.uint64)
    first = {lo: t for t, (lo, _hi) in enumerate(chunks)}
    map_ranges(lambda lo, hi: RK.rb_scatter(h1, vals, sd, m, lo, hi, at[first[lo]], sh, sv), chunks)
    return sh, sv, pos


def solve_low_memory(src: LM.KeySource, vals: np.ndarray, c: int, overhead: float | None, attempts: int, owner: str,
                     dedupe: Any, bumped: bool, width: int = 0) -> tuple[Layers, int]:
    """:func:`solve` without the keys' hashes: (layers, number of keys), the same layers as
    ``solve(src.full(), vals, ...)``. A bumped first layer is solved by
    :func:`bloomkit.lookup._ribbon_lowmem.bumped_layer_passes`
    (:func:`~bloomkit.lookup._ribbon_lowmem.low_memory_passes`), the later layers (about 5 % of
    the keys) as usual. Not bumped, under :data:`BUMP_MIN` keys, or a key given twice (found in
    the first layer): the normal build of ``src.full()`` (which removes the repeats by
    ``dedupe`` or raises, as usual)."""
    n = src.n
    if bumped and n >= BUMP_MIN:
        m = 64 * max(2, int(n * BUMP_LOAD) // 64)
        words = m // 64 * c
        dest = aligned_empty_unbudgeted((words + (int(LM.LOW_MEMORY_RESERVE * n) + 4096) * c // 64,), np.uint64)
        passes = LM.low_memory_passes(n, m, c, len(vals) > 0, get_num_threads())
        got = LM.bumped_layer_passes(src, vals, 0, m, c, width, passes, dest[:words])
        if got is not None:
            thr = got[0]
            box = [(got[1], got[2])]
            del got
            layers = _more_layers(box, c, overhead, attempts, owner, bumped, width, [m], [0], [dest[:words]], [thr],
                                  dest)
            if layers is not None:  # pragma: no branch - later layers hold no repeat
                return layers, n
        del dest
    layers, h1, _vals = solve(src.full(), vals, c, overhead, attempts, owner, dedupe, bumped, width)
    return layers, len(h1)


KernelArgs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def kernel_args(layers: Layers, c: int) -> KernelArgs:
    """The arguments of :func:`rb_query` (columns) or :func:`rb_query_rows` (rows: Z viewed as
    c-bit slots, offsets in slots) before ``c``: solution, offsets, thresholds, slots, salts."""
    zoff, toff = layers.offsets(c)
    Z = layers.Z
    if layers.width:
        Z = Z.view(_ROW_DTYPES[layers.width])
        zoff = np.concatenate([[0], np.cumsum(layers.slots)]).astype(np.int64)
    return Z, zoff, layers.thr, toff, np.array(layers.slots, np.int64), np.array(layers.salts, np.uint64)


def _slots(n: int, eps: float) -> int:
    from ..static.model import ribbon_slots

    return ribbon_slots(n, eps)


class RibbonRetrieval(StaticLookup):
    """Static key -> value table: bumped ribbon retrieval (BuRR), or standard ribbon, w = 64.

    Build with :meth:`build` (or freeze a Geometric filter: :meth:`from_table`); values are
    integers in [1, 2^V - 1] or str labels; an absent key gets 0 / None (or ``default``) except
    with probability (2^V - 1) / 2^c <= 2^-E (:meth:`predicted_fpr`).

    Notes
    -----
    Thread safety: a built table is never written (updates raise), so any number of threads may
    query it at once; the query kernel releases the GIL.

    Examples
    --------
    >>> t = RibbonRetrieval.build(["x", "y", "z"], [5, 7, 9], value_bits=4, fpr=2**-10)
    >>> t.get("x"), t["z"], t.get_many(["y", "x"]).tolist()
    (5, 9, [7, 5])
    """

    _PARAMS: ClassVar[Any] = {
        "value_bits": VALUE_BITS, "error_bits": ERROR_BITS, "fpr": FPR, "layer_slots": LAYER_SLOTS,
        "layer_salts": LAYER_SALTS, "bumped_layers": Int(0, MAX_LAYERS), "count": Int(0), "key_types": KEY_TYPES,
        "layout": LAYOUT,
    }
    _ARRAYS: ClassVar[Any] = {"solution": ArraySpec("<u8"), "thresholds": ArraySpec("|u1", optional=True, hi=64),
                              **LABEL_ARRAYS}
    _PROBES_PER_KEY: ClassVar[int] = 2  # 64 slots per key (per layer asked): 2 blocks of c words, or 64 c-bit rows
    _FROZEN: ClassVar[str] = ("a ribbon table cannot be changed after it is solved (every slot is shared by the "
                              "keys' equations)")

    def __init__(self) -> None:  # use build(); this is the empty table of 64 slots
        self.seed = 0
        self.value_bits = 16
        self.error_bits = 16
        self.fpr = 2.0**-16
        self._count = 0
        self._dups = 0
        c = self.value_bits + self.error_bits
        self._set_layers(Layers([64], [0], 0, aligned_zeros(c, np.uint64, "the ribbon solution"),
                                np.zeros(0, np.uint8), 0, row_width(c)))

    def _set_layers(self, layers: Layers) -> None:
        self._c = self.value_bits + self.error_bits
        self._layers = layers
        self._kargs = kernel_args(layers, self._c)

    @classmethod
    def build(
        cls,
        keys: Any,
        values: Any = None,
        *,
        value_bits: int = 16,
        fpr: float = 2.0**-16,
        error_bits: int | None = None,
        bumped: bool = True,
        overhead: float | None = None,
        seed: int = 0,
        on_duplicate: str = "error",
        max_attempts: int = 16,
        low_memory: bool = False,
    ) -> Self:
        """Solve the ribbon system of ``keys -> values``.

        Parameters
        ----------
        keys : mapping, or a column: list, tuple, numpy, pyarrow, pandas, polars
            By position; a mapping gives the values too.
        values : column of int or str, optional
            Integers in [1, 2^V - 1], or str labels (numbered by a saved ValueCodec).
        value_bits : int
            V; V + E <= 64.
        fpr : float
            e; E = ceil(log2 1/e) unless ``error_bits`` is given.
        bumped : bool
            Bumped ribbon (BuRR: layers of 0.95 slots per key, a byte of threshold per 64 slots;
            about 1.005x the bound at 16 + 16 bits) or one standard ribbon (1.09-1.15x).
        overhead : float, optional
            eps = m / n - 1 of the standard ribbon (the last layer when bumped; default
            :func:`default_overhead`).
        seed : int
        on_duplicate : {"error", "last", "sum", "max", "min"}
            A key given twice raises (default), or its values are combined (labels: "error",
            "last"). Detected while solving: input without repeats is never sorted.
        max_attempts : int
            Salts the standard ribbon tries before giving up (BloomkitError naming the slack).
        low_memory : bool
            Build the bumped first layer in passes over the input
            (:func:`solve_low_memory`):
            the same table, byte for byte, without the keys' 64-bit hashes or a sorted copy of
            them all; the input is hashed again by each pass (numpy / pyarrow keys; a list is
            hashed once into 8 bytes per key). Slower (see docs/static.md, "Limits").

        Returns
        -------
        RibbonRetrieval

        Complexity: O(n) expected per layer (a row XORs O(w) = O(64) earlier rows at a bumped
        layer's load: about 25 at 0.95 slots per key, measured) plus the back-substitution
        (columns: c parities per slot; rows: one 64-slot vector XOR per slot), on several
        threads (a bumped layer's parts); working memory 16 bytes per key (the keys' hashes and
        values sorted by block) beside the keys' 64-bit hashes, and the rows of one part per
        thread (see docs/static.md, "Limits", for the measured peak).
        """
        owner = f"{_OWNER}.build"
        dup = ON_DUPLICATE(on_duplicate, "on_duplicate", owner)
        v = VALUE_BITS(value_bits, "value_bits", owner)
        e = FPR(fpr, "fpr", owner)
        eb = Optional(ERROR_BITS)(error_bits, "error_bits", owner)
        if eb is None:
            eb = max(1, math.ceil(math.log2(1.0 / e) - 1e-12))
            if eb > MAX_ERROR_BITS:
                raise param_error("fpr", owner, f"such that ceil(log2(1/fpr)) <= {MAX_ERROR_BITS}", fpr)
        if v + eb > MAX_CHECK_BITS:
            raise param_error("error_bits" if error_bits is not None else "fpr", owner,
                              f"such that value_bits + error_bits <= {MAX_CHECK_BITS} (V = {v})",
                              error_bits if error_bits is not None else fpr)
        bump = BUMPED(bumped, "bumped", owner)
        eps = Optional(OVERHEAD)(overhead, "overhead", owner)
        attempts = ATTEMPTS(max_attempts, "max_attempts", owner)
        low = LOW_MEMORY(low_memory, "low_memory", owner)
        sd = check_seed(seed, owner)
        keys, raw, n = read_pairs(keys, values, owner)
        vals, codec = read_values(raw, v, owner)
        check_count(vals, n, owner)
        if low:
            src = KeySource(keys, sd, owner)
            tags = src.tags
        else:
            h1, tags = hash_keys(keys, sd, owner=owner)
        box: dict[str, Any] = {"keys": keys, "dups": 0}

        def dedupe(h: np.ndarray, vs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            k2, h2, v2, d = combine_duplicates(box["keys"], h, vs, sd, v, dup, owner, labels=codec is not None,
                                               collisions="error")
            box["keys"], box["dups"] = k2, d
            return h2, v2

        if low:
            layers, count = solve_low_memory(src, vals, v + eb, eps, attempts, owner, dedupe, bump, row_width(v + eb))
        else:
            layers, h1, _vals = solve(h1, vals, v + eb, eps, attempts, owner, dedupe, bump, row_width(v + eb))
            count = len(h1)
        return cls._made(layers, count, v, eb, e, sd, codec, tags, box["dups"])

    @classmethod
    def _made(cls, layers: Layers, count: int, v: int, eb: int, e: float, sd: int, codec: Any, tags: int,
              dups: int) -> Self:
        t = cls.__new__(cls)
        t.seed, t.value_bits, t.error_bits, t.fpr = sd, v, eb, e
        t._count, t._dups = count, dups
        t._set_layers(layers)
        t._codec = codec
        t._key_mask = 0
        t._note_keys(tags)
        return t

    @classmethod
    def from_table(
        cls, table: LookupBase, keys: Any, *, fpr: float | None = None, error_bits: int | None = None,
        bumped: bool = True, overhead: float | None = None, max_attempts: int = 16,
    ) -> Self:
        """Freeze an updatable table (a :class:`GeometricFilter`) into ribbon retrieval: the
        values of ``keys`` as the table answers them, the table's V, labels (its ValueCodec)
        and seed; ``fpr`` defaults to the table's.

        A Geometric filter keeps fingerprints, not keys, so the keys it holds must be given; a
        key the table finds absent raises InvalidParameterError naming it.

        Complexity: one batch query of the table plus a build.
        """
        owner = f"{_OWNER}.from_table"
        if not isinstance(table, LookupBase):
            raise param_error("table", owner, "a bloomkit lookup table (GeometricFilter, ...)", table)
        batch = as_keys(keys, "keys", owner)
        ids, _probes = table._ids_of(batch)
        ids = np.asarray(ids, dtype=np.uint64)
        if len(ids) == 0:
            raise param_error("keys", owner, "not empty", "0 keys")
        if table.codec is not None:
            ids = np.where(ids > len(table.codec), 0, ids)
        missing = np.flatnonzero(ids == 0)
        if len(missing):
            raise param_error("keys", owner, "keys the table holds",
                              f"{key_at(batch, int(missing[0]))!r} (index {int(missing[0])}), which it finds absent")
        v = table.value_bits
        e = FPR(table.fpr if fpr is None else fpr, "fpr", owner)
        eb = Optional(ERROR_BITS)(error_bits, "error_bits", owner)
        if eb is None:
            eb = max(1, math.ceil(math.log2(1.0 / e) - 1e-12))
        if v + eb > MAX_CHECK_BITS:
            raise param_error("fpr", owner, f"such that value_bits + error_bits <= {MAX_CHECK_BITS} (V = {v})", e)
        bump = BUMPED(bumped, "bumped", owner)
        eps = Optional(OVERHEAD)(overhead, "overhead", owner)
        attempts = ATTEMPTS(max_attempts, "max_attempts", owner)
        h1, tags = hash_keys(batch, table.seed, owner=owner)
        box: dict[str, Any] = {"keys": batch, "dups": 0}

        def dedupe(h: np.ndarray, vs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            k2, h2, v2, d = combine_duplicates(box["keys"], h, vs, table.seed, v, "last", owner, collisions="error")
            box["keys"], box["dups"] = k2, d  # a key given twice has one value in the table
            return h2, v2

        codec = None if table.codec is None else table.codec.copy()
        layers, h1, _vals = solve(h1, ids, v + eb, eps, attempts, owner, dedupe, bump, row_width(v + eb))
        return cls._made(layers, len(h1), v, eb, e, table.seed, codec, tags, box["dups"])

    # ------------------------------------------------------------------ queries
    def _query(self, h1: np.ndarray) -> np.ndarray:
        out = np.empty(len(h1), dtype=np.uint64)
        (RK.rb_query_rows if self._layers.width else RK.rb_query)(h1, *self._kargs, self._c, self.value_bits, 0, out)
        return out

    def clear(self) -> None:
        """Remove every key (the solution zero; labels forgotten); the size stays. Complexity: O(m c / 64)."""
        with self._lock:
            self._layers.Z.fill(0)
            self._count = 0
            self._key_mask = 0
            if self._codec is not None:
                self._codec = type(self._codec)(value_bits=self.value_bits)

    def copy(self) -> Self:
        """An independent copy. Complexity: O(m c / 64)."""
        out = type(self).__new__(type(self))
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_bk_lock"})
        out._set_layers(self._layers.copy())
        out._codec = None if self._codec is None else self._codec.copy()
        return out

    # ------------------------------------------------------------------ space and model
    @property
    def num_slots(self) -> int:
        """m, over all layers."""
        return sum(self._layers.slots)

    @property
    def overhead(self) -> float:
        """Bits per key over c, minus 1 (slots of every layer and threshold bytes)."""
        return self._table_bits() / max(1, self._count) / self._c - 1.0

    def _table_bits(self) -> int:
        """m c plus 8 bits per bucket of a bumped layer."""
        return self._layers.bits(self._c)

    def predicted_fpr(self) -> float:
        """(2^V - 1) / 2^c: an absent key's answer is uniform on [0, 2^c) (a table of L str labels:
        L / 2^c). Complexity: O(1)."""
        from ..static.model import static_fpr

        if self._codec is not None:
            return len(self._codec) / float(1 << self._c)
        return static_fpr(self._c, self.value_bits)

    def build_stats(self) -> dict[str, Any]:
        """Layers, solve attempts (one per layer, plus the standard layer's retries), repeated keys combined."""
        lay = self._layers
        return {"attempts": lay.attempts, "layers": len(lay.slots), "bumped_layers": lay.bumped,
                "layer_slots": list(lay.slots), "duplicates": self._dups}

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, overhead over the bound V + log2(1/e), predicted rate. Complexity: O(1)."""
        bound = self.value_bits + math.log2(1.0 / self.fpr)
        return {**self._info_common(), "num_slots": self.num_slots, "layers": len(self._layers.slots),
                "bumped_layers": self._layers.bumped, "ribbon_width": 64,
                "layout": "rows" if self._layers.width else "columns", "bound_bits_per_key": bound,
                "bits_per_key_over_bound": self.bits_per_key() / bound, "predicted_fpr": self.predicted_fpr()}

    def __repr__(self) -> str:
        return (f"RibbonRetrieval(keys={self._count}, V={self.value_bits}, E={self.error_bits}, m={self.num_slots}, "
                f"layers={len(self._layers.slots)})")

    def _check(self) -> None:
        """Assert the structure's invariants."""
        _check_layers(self._layers, self._c)
        if not (self._c == self.value_bits + self.error_bits <= MAX_CHECK_BITS):
            raise InvariantError("self._c == self.value_bits + self.error_bits <= MAX_CHECK_BITS")
        if not (self._count >= 0):
            raise InvariantError("self._count >= 0")

    # ------------------------------------------------------------------ persistence
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        lay = self._layers
        params = {
            "value_bits": self.value_bits, "error_bits": self.error_bits, "fpr": self.fpr,
            "layer_slots": list(lay.slots), "layer_salts": list(lay.salts), "bumped_layers": lay.bumped,
            "count": self._count, "key_types": list(self.key_types), "layout": "rows" if lay.width else "columns",
        }
        arrays = {"solution": lay.Z, **self._label_arrays()}
        if len(lay.thr):
            arrays["thresholds"] = lay.thr
        return params, arrays

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Self:
        v, eb = params["value_bits"], params["error_bits"]
        if v + eb > MAX_CHECK_BITS:
            raise FormatError(f"{_OWNER}: value_bits + error_bits = {v + eb} exceeds {MAX_CHECK_BITS}")
        if params["layout"] == "rows" and v + eb not in ROW_WIDTHS:
            raise FormatError(f"{_OWNER}: a solution stored by rows needs value_bits + error_bits in {ROW_WIDTHS}; "
                              f"got {v + eb}")
        layers = read_layers(params, arrays, v + eb, _OWNER, v + eb if params["layout"] == "rows" else 0)
        t = cls.__new__(cls)
        t.seed, t.value_bits, t.error_bits, t.fpr = seed, v, eb, params["fpr"]
        t._count, t._dups = params["count"], 0
        t._set_layers(layers)
        t._codec = cls._read_labels(arrays, v, _OWNER)
        t._restore_keys(params)
        return t


def _check_layers(lay: Layers, c: int) -> None:
    if not (len(lay.slots) == len(lay.salts) >= 1 and 0 <= lay.bumped <= len(lay.slots)):
        raise InvariantError("len(lay.slots) == len(lay.salts) >= 1 and 0 <= lay.bumped <= len(lay.slots)")
    if not (all(m >= 64 and m % 64 == 0 for m in lay.slots)):
        raise InvariantError("all(m >= 64 and m % 64 == 0 for m in lay.slots)")
    if not (lay.Z.dtype == np.uint64 and len(lay.Z) == sum(m // 64 for m in lay.slots) * c):
        raise InvariantError("lay.Z.dtype == np.uint64 and len(lay.Z) == sum(m // 64 for m in lay.slots) * c")
    if not (lay.thr.dtype == np.uint8 and len(lay.thr) == sum(m // 64 for m in lay.slots[: lay.bumped])):
        raise InvariantError("lay.thr.dtype == np.uint8 and len(lay.thr) == sum(m // 64 for m in lay.slots[: lay.bumped])")
    if not (lay.width in (0, c) and (lay.width == 0 or c in ROW_WIDTHS)):
        raise InvariantError("lay.width in (0, c) and (lay.width == 0 or c in ROW_WIDTHS)")


def read_layers(params: dict[str, Any], arrays: dict[str, np.ndarray], c: int, owner: str, width: int = 0) -> Layers:
    """The layers of a saved ribbon (sizes checked against the arrays: FormatError); ``width``:
    the layout of its solution (0 columns, c rows)."""
    slots, salts, nb = params["layer_slots"], params["layer_salts"], params["bumped_layers"]
    if len(slots) != len(salts) or nb > len(slots) or any(m % 64 for m in slots):
        raise FormatError(f"{owner}: inconsistent layers (slots {slots}, salts {salts}, {nb} bumped)")
    Z = arrays["solution"]
    thr = arrays.get("thresholds")
    thr = np.zeros(0, np.uint8) if thr is None else thr
    want_z = sum(m // 64 for m in slots) * c
    want_t = sum(m // 64 for m in slots[:nb])
    if len(Z) != want_z or len(thr) != want_t:
        raise FormatError(f"{owner}: the 'solution' / 'thresholds' arrays must hold {want_z} words / {want_t} bytes; "
                          f"got {len(Z)} / {len(thr)}")
    return Layers(list(slots), list(salts), nb, Z, thr, 0, width)
