"""A Bloom filter that grows: a geometric series of Bloom filters with tightening error.

After P. S. Almeida, C. Baquero, N. Preguica, D. Hutchison, "Scalable Bloom Filters",
Information Processing Letters 101(6):255-261, 2007 (SBF below). Notation of the paper: the
filter is a series of slices F_0, F_1, ...; slice i holds up to ``n_i = n_0 s^i`` keys (growth
factor s) at error ``P_i = P_0 r^i`` (tightening ratio r, 0 < r < 1). Choosing
``P_0 = P (1 - r)`` bounds the compound false positive rate by the requested P::

    1 - prod_i (1 - P_i)  <=  sum_i P_0 r^i  <  P_0 / (1 - r)  =  P

Each slice is a :class:`bloomkit.BloomFilter` sized for (n_i, P_i) by doc 000 Eqs. (1)-(2)
(:func:`slice_size`): the series is built on the library's filter, hashing and kernels. Every
slice uses the same seed, so a key is hashed once for all slices.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Self

import numpy as np

from . import theory
from ._engine.columns import KeyBatch
from ._engine.hashing import (
    HASH_XXH64,
    KeyTypesMixin,
    check_seed,
    hash64_tag,
    hash_keys,
    key_type_mask,
    key_type_names,
)
from ._engine.lazy import kernels as K
from ._engine.parallel import hash_batch, key_source, map_ranges, ranges
from ._format import ArraySpec, Persistable
from ._validation import (
    CAPACITY,
    FPR,
    KEY_TYPES,
    MAX_HASHES,
    Int,
    InvariantError,
    Real,
    param_error,
)
from ._watch import FilterWatch
from .bloom import BloomFilter
from .errors import FormatError, IncompatibleFiltersError, InvalidParameterError

__all__ = ["ScalableBloomFilter", "compound_fpr", "slice_capacity", "slice_error", "slice_size"]

GROWTH = Int(2, 1024)
"""s, the growth factor of slice capacities."""
TIGHTENING = Real(0, 1, lo_open=True, hi_open=True)
"""r, the tightening ratio of slice errors."""
MAX_SLICES = 48
"""Most slices a filter may have (n_0 = 1, s = 2: 2^48 - 1 keys)."""
MAX_SLICE_CAPACITY = 1 << 52
"""Largest capacity of one slice (its bits, at most 1477 per key, stay below 2^63)."""

MAX_COUNT = 1 << 57
"""Largest count of one slice (counts only exceed capacities after unions); the counts of all
slices sum to less than 2^63."""
_SLICE_WORDS = tuple(f"words_{i}" for i in range(MAX_SLICES))


def slice_capacity(initial_capacity: int, growth: int, i: int) -> int:
    """n_i = n_0 s^i, the number of keys slice i holds (SBF, Section 4).

    >>> [slice_capacity(1000, 2, i) for i in range(4)]
    [1000, 2000, 4000, 8000]
    """
    return int(initial_capacity * growth**i)


def slice_error(fpr: float, tightening: float, i: int) -> float:
    """P_i = P_0 r^i with P_0 = P (1 - r): the error of slice i, chosen so that the errors of
    all slices sum to less than ``fpr`` (SBF, Section 4).

    >>> round(slice_error(0.01, 0.5, 0), 6), round(slice_error(0.01, 0.5, 3), 6)
    (0.005, 0.000625)
    """
    return math.exp(_log_slice_error(fpr, tightening, i))


def _log_slice_error(fpr: float, tightening: float, i: int) -> float:
    return math.log(fpr) + math.log1p(-tightening) + i * math.log(tightening)


def compound_fpr(rates: Any) -> float:
    """False positive rate of a series of independent filters with rates P_i: a key is a
    false positive if any slice reports it, ``1 - prod(1 - P_i)`` (<= sum P_i).

    >>> round(compound_fpr([0.005, 0.0025]), 8)
    0.0074875
    """
    r = np.minimum(np.asarray(rates, dtype=float), 1.0)
    with np.errstate(divide="ignore"):  # a rate of 1 makes the product 0
        return float(-np.expm1(np.sum(np.log1p(-r))))


def slice_size(n: int, p: float) -> tuple[int, int]:
    """(m, k) of a Bloom filter holding n keys at a false positive rate of at most p.

    k = round(log2(1/p)), the optimal number of probes rounded, and m the fewest bits with
    ``(1 - (1 - 1/m)^(kn))^k <= p``: doc 000 Eqs. (1)-(2) solved for m,
    ``m = ceil(1 / (1 - (1 - p^(1/k))^(1/(kn))))``.
    (Sizing m for the real optimum and rounding k afterwards, as ``BloomFilter(capacity, fpr)``
    does, can land a little above p, e.g. 0.01003 for p = 0.01; the bound of the series needs
    every slice at or below its P_i.)

    >>> slice_size(1000, 0.01)
    (9594, 7)
    """
    log_p = math.log(p)
    k = max(1, round(-log_p / theory.LN2))
    return math.ceil(-1.0 / math.expm1(math.log1p(-math.exp(log_p / k)) / (k * n))), k


def _slice_shape(initial_capacity: int, fpr: float, growth: int, tightening: float, i: int) -> tuple[int, int]:
    """(m_i, k_i) of slice i: :func:`slice_size` of (n_i, P_i)."""
    return slice_size(slice_capacity(initial_capacity, growth, i), slice_error(fpr, tightening, i))


def _max_slices(initial_capacity: int, growth: int) -> int:
    """Slices a filter of these parameters may have: MAX_SLICES, or fewer where a slice's
    capacity would exceed MAX_SLICE_CAPACITY."""
    count = 0
    while count < MAX_SLICES and slice_capacity(initial_capacity, growth, count) <= MAX_SLICE_CAPACITY:
        count += 1
    return count


def _check_parameters(initial_capacity: int, fpr: float, growth: int, tightening: float, owner: str) -> None:
    """InvalidParameterError unless every slice the filter may open needs at most MAX_HASHES
    probes (a tiny fpr or tightening makes P_i underflow)."""
    last = _max_slices(initial_capacity, growth) - 1
    log_p = _log_slice_error(fpr, tightening, last)
    if -log_p / theory.LN2 > MAX_HASHES or _slice_shape(initial_capacity, fpr, growth, tightening, last)[1] > MAX_HASHES:
        raise param_error(
            "tightening", owner,
            f"large enough that slice {last}, of error fpr (1 - r) r^{last}, needs at most {MAX_HASHES} "
            f"probes (fpr={fpr!r})", tightening)


# the slices, the table the series kernels read them by (bloomkit._engine.kernels.series_test) and
# the words arrays the table points to: one tuple, replaced whole, so a reader never pairs one
# slice tuple with another's addresses, and a reader holding it keeps every address valid
_Series = tuple[tuple[BloomFilter, ...], np.ndarray, tuple[np.ndarray, ...]]


def _series(slices: tuple[BloomFilter, ...]) -> _Series:
    """The slices, their (words address, number of words, k, m) table and their words."""
    words = tuple(s.bits.words for s in slices)
    table = np.array([(w.ctypes.data, len(w), s.num_hashes, s.num_bits) for w, s in zip(words, slices, strict=True)],
                     dtype=np.int64).reshape(len(slices), 4)
    return slices, table, words


def _signed(h1: int) -> int:
    """The int64 with the bits of the uint64 ``h1`` (what :func:`bloomkit._engine.kernels.series_test_one` takes)."""
    return h1 - (1 << 64) if h1 >> 63 else h1


def _hits(table: np.ndarray, h: np.ndarray) -> np.ndarray:
    """True where a key of ``h`` is in one of the slices of ``table`` (several threads for
    large batches: the kernel only reads, without the GIL)."""
    if len(table) == 0:
        return np.zeros(len(h), dtype=np.bool_)
    parts = map_ranges(lambda lo, hi: K.series_test(table, h[lo:hi]), ranges(len(h)))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


@contextlib.contextmanager
def _locked(*objs: Persistable) -> Iterator[None]:
    """Hold the locks of several objects, always taken in one order (no deadlock when two
    threads merge a into b and b into a)."""
    with contextlib.ExitStack() as stack:
        for _, o in sorted({id(o): o for o in objs}.items()):
            stack.enter_context(o._lock)
        yield


class ScalableBloomFilter(KeyTypesMixin, FilterWatch, Persistable):
    """A Bloom filter that grows with its keys and keeps its false positive rate below ``fpr``.

    Parameters
    ----------
    initial_capacity : int
        n_0, the keys the first slice holds.
    fpr : float in (0, 1)
        P, the bound on the false positive rate, whatever the number of keys.
    seed : int in [0, 2**64)
        Hash seed (all slices share it); filters combine only with filters of the same seed.
    growth : int in [2, 1024]
        s, slice i holds ``n_0 s^i`` keys (pybloom-live offers 2 and 4).
    tightening : float in (0, 1)
        r, slice i has error ``P (1 - r) r^i``. The default 0.9 (as in pybloom-live) costs
        1.72 times the bits of a static filter sized for the final count at 1000x growth
        (n_0 = 1000, 10^6 keys, P = 0.01, s = 2); r = 0.5 costs 2.41 times (docs/scalable.md).

    Notes
    -----
    A key goes into the last slice only if the filter does not already report it (a duplicate,
    or a false positive): it is then already "in" the filter, and inserting it would spend
    capacity. When the last slice holds ``n_i`` keys, the next new key opens slice i + 1 of
    ``n_0 s^(i+1)`` keys and error ``P_0 r^(i+1)``. ``add_many`` gives exactly the filter that
    adding its keys one at a time gives (a batch that overflows a slice fills it to capacity
    and continues in new slices), whatever the batch boundaries.

    Deviations from the paper: slices are classic Bloom filters (one array, k_i =
    round(m_i / n_i ln 2) probes), not partitioned ones, and a slice is full when it has
    taken n_i new keys rather than when its fill ratio reaches 1/2 (the same point in
    expectation). ``predicted_fpr()`` is the compound rate of the slices' *current* fills,
    ``1 - prod(1 - (X_i / m_i)^k_i)`` (doc 000 Eq. 2 per slice, X_i bits set).

    ``len()`` counts the keys that were new when added: duplicates are not counted, and
    neither is a new key the filter already reported present (a false positive). It is
    therefore an estimate of the distinct keys added, low by at most about ``fpr`` of them
    (``exact_len`` is False). After ``union`` it is the sum of both counts. An empty batch
    changes nothing. A query of a key type the filter holds none of (``"1"`` asked of a filter
    of ``int`` keys) warns once per filter (:class:`bloomkit.BloomkitWarning`); the filter never
    warns about its size: it grows.

    Thread safety: any number of threads may add and query at once. Adds (single and batch)
    test, insert, count and grow under the filter's lock, so no key is lost and counts are
    exact; batches are hashed before the lock is taken. Queries take no lock: slices only
    gain bits, and growth replaces the tuple of slices in one step. ``clear`` and ``|=``
    hold the lock too.

    Examples
    --------
    >>> f = ScalableBloomFilter(100, 0.01)
    >>> f.add_many(range(1000)); 999 in f, f.num_slices
    (True, 4)
    >>> f.predicted_fpr() < 0.01
    True
    """

    _PARAMS: ClassVar[Any] = {
        "initial_capacity": CAPACITY, "fpr": FPR, "growth": GROWTH, "tightening": TIGHTENING,
        "key_types": KEY_TYPES,
    }
    # one entry per slice in num_bits / num_hashes / counts, and one words_<i> array per slice
    _ARRAYS: ClassVar[Any] = {
        "num_bits": ArraySpec("<i8", lo=1), "num_hashes": ArraySpec("<i8", lo=1, hi=MAX_HASHES),
        "counts": ArraySpec("<i8", lo=0, hi=MAX_COUNT),
        **{name: ArraySpec("<u8", optional=True) for name in _SLICE_WORDS},
    }
    exact_len: ClassVar[bool] = False

    def __init__(
        self,
        initial_capacity: int,
        fpr: float,
        *,
        seed: int = 0,
        growth: int = 2,
        tightening: float = 0.9,
    ) -> None:
        owner = type(self).__name__
        self.initial_capacity: int = Int(1, MAX_SLICE_CAPACITY)(initial_capacity, "initial_capacity", owner)
        self.fpr: float = FPR(fpr, "fpr", owner)
        self.growth: int = GROWTH(growth, "growth", owner)
        self.tightening: float = TIGHTENING(tightening, "tightening", owner)
        self.seed = check_seed(seed, owner)
        self._hash_id = HASH_XXH64
        _check_parameters(self.initial_capacity, self.fpr, self.growth, self.tightening, owner)
        self._set_slices((), [])
        self._grow()

    @classmethod
    def for_requirements(cls, capacity: int, fpr: float, *, seed: int = 0) -> Self:
        """A filter starting at ``capacity`` keys that keeps its false positive rate below
        ``fpr`` however many keys it takes (default growth and tightening).

        Complexity: O(m_0 / 64)."""
        return cls(capacity, fpr, seed=seed)

    # -- slices -------------------------------------------------------------------------------
    @property
    def _slices(self) -> tuple[BloomFilter, ...]:
        return self._series[0]

    def _set_slices(self, slices: tuple[BloomFilter, ...], counts: list[int]) -> None:
        """Install slices and their counts; every path that changes the slices ends here."""
        self._counts = counts
        self._series = _series(slices)

    def _shape(self, i: int) -> tuple[int, int]:
        return _slice_shape(self.initial_capacity, self.fpr, self.growth, self.tightening, i)

    def _grow(self) -> None:
        """Open the next slice (the caller holds the lock, or owns the object)."""
        i = len(self._slices)
        if i >= _max_slices(self.initial_capacity, self.growth):
            raise InvalidParameterError(
                f"ScalableBloomFilter cannot grow beyond {i} slices "
                f"({sum(self.slice_capacities())} keys): the next slice would exceed "
                f"{MAX_SLICES} slices or {MAX_SLICE_CAPACITY} keys. The keys added so far are kept."
            )
        m, k = self._shape(i)
        self._set_slices((*self._slices, BloomFilter(num_bits=m, num_hashes=k, seed=self.seed)), [*self._counts, 0])

    @property
    def num_slices(self) -> int:
        """Number of slices (filters) in the series."""
        return len(self._slices)

    def slice_capacities(self) -> list[int]:
        """n_i of every slice. Complexity: O(slices)."""
        return [slice_capacity(self.initial_capacity, self.growth, i) for i in range(len(self._slices))]

    @property
    def capacity(self) -> int:
        """Keys the current slices hold before the filter grows again: sum of n_i."""
        return sum(self.slice_capacities())

    @property
    def size_in_bits(self) -> int:
        """Bits of all slices: sum of m_i."""
        return sum(s.num_bits for s in self._slices)

    # -- single keys --------------------------------------------------------------------------
    def __contains__(self, key: Any) -> bool:
        """True if the key may be in the set (never False for an added key).

        Complexity: O(k) per slice; the newest (largest) slice is tested first."""
        series = self._series  # held while the kernel reads the words by address
        h1, tag = hash64_tag(key, self.seed)
        if self._key_mask and not self._key_mask >> tag & 1:
            self._foreign_key(key, tag, 2)
        return bool(K.series_test_one(series[1], _signed(h1)))

    def add(self, key: Any) -> None:
        """Insert one key (not inserted, nor counted, if the filter already reports it).

        Complexity: O(k) per slice; O(m_{i+1} / 64) when it opens a slice."""
        h1, tag = hash64_tag(key, self.seed)
        h = _signed(h1)
        with self._lock:
            series = self._series  # the lock holds it too: only this thread replaces it
            if self._counts[-1] >= slice_capacity(self.initial_capacity, self.growth, len(self._counts) - 1):
                if K.series_test_one(series[1], h):  # the last slice is full: grow only for a new key
                    self._note_keys(1 << tag)
                    return
                self._grow()
                series = self._series
            if K.series_add_one(series[1], h):
                self._counts[-1] += 1
            self._note_keys(1 << tag)

    # -- batches ------------------------------------------------------------------------------
    def _batch(self, keys: Any, what: str) -> tuple[KeyBatch, Callable[[KeyBatch], np.ndarray]]:
        """The front door of a batch method (:func:`bloomkit._engine.parallel.key_source`)."""
        owner = f"{type(self).__name__}.{what}"
        return key_source(keys, lambda ks: hash_keys(ks, self.seed, owner=owner), owner)

    def add_many(self, keys: Any) -> None:
        """Insert a batch (list, numpy, pyarrow, pandas or polars; by position), key by key in
        order: the result is that of :meth:`add` on each key. Large batches are hashed on
        several threads before the lock is taken. A bad key raises before any key is added.

        Complexity: O(n k) per slice."""
        batch, hash_chunk = self._batch(keys, "add_many")
        h = hash_batch(batch, hash_chunk)[0]
        with self._lock:
            self._insert(h)
            self._note_keys(batch.tags)

    def _insert(self, h: np.ndarray) -> None:
        """Insert hashed keys in order (the caller holds the lock). Only the last slice takes
        keys; the others are full, so a key they report is dropped up front. Then the last
        slice takes keys until it is full (:func:`bloomkit._engine.kernels.bits_add_new` skips those
        whose bits are all set, as :meth:`add` does), the keys left are tested against it, and
        the next slice opens."""
        series = self._series  # replaced only under the lock, which the caller holds
        if len(h) and len(self._counts) > 1:
            h = h[~_hits(series[1][:-1], h)]
        while len(h):
            i = len(self._counts) - 1
            room = slice_capacity(self.initial_capacity, self.growth, i) - self._counts[-1]
            if room <= 0:  # full: it joins the old slices
                h = h[~_hits(self._series[1][i:], h)]  # the current series: it holds the words
                if len(h):
                    self._grow()
                continue
            cur = self._slices[-1]
            consumed, added = K.bits_add_new(cur.bits.words, h, cur.num_hashes, np.uint64(cur.num_bits), room)
            self._counts[-1] += int(added)
            h = h[int(consumed):]

    def update(self, *others: Any) -> None:
        """Insert the keys of every argument (batches), or merge a filter of the same
        parameters (``|=``): ``set.update`` semantics. Complexity: O(n k) per slice."""
        for other in others:
            if isinstance(other, Persistable):  # a filter: merged, or IncompatibleFiltersError
                self._merge_in(other)
            else:
                self.add_many(other)

    def contains_many(self, keys: Any) -> np.ndarray:
        """Bool array: membership of every key of a batch. Complexity: O(n k) per slice.

        Large batches are hashed and tested on several threads (read-only)."""
        batch, hash_chunk = self._batch(keys, "contains_many")
        self._foreign_keys(batch.tags, 2)
        series = self._series  # held until the kernels return: the words stay alive
        table = series[1]
        _h, _parts, hits = hash_batch(batch, hash_chunk, lambda h, lo, hi: K.series_test(table, h[lo:hi]))
        return hits[0] if len(hits) == 1 else np.concatenate(hits)

    def clear(self) -> None:
        """Remove every key: one empty slice of ``initial_capacity`` keys, key types forgotten;
        the parameters stay. Complexity: O(m_0 / 64)."""
        with self._lock:
            self._set_slices((), [])
            self._grow()
            self._key_mask = 0

    # -- combining ----------------------------------------------------------------------------
    def _params_tuple(self) -> tuple[Any, ...]:
        return (self.initial_capacity, self.fpr, self.growth, self.tightening, self.seed, self._hash_id)

    def _compatible(self, other: Any, op: str) -> None:
        if type(other) is not type(self):
            raise IncompatibleFiltersError(f"cannot {op} a {type(self).__name__} with a {type(other).__name__}")
        mine, theirs = self._params_tuple(), other._params_tuple()
        if mine != theirs:
            raise IncompatibleFiltersError(
                f"cannot {op} scalable filters with different (initial_capacity, fpr, growth, "
                f"tightening, seed, hash): {mine} and {theirs}"
            )

    def _merged(self, other: ScalableBloomFilter) -> tuple[tuple[BloomFilter, ...], list[int]]:
        """Slices and counts of the union: slice i is the OR of both slices i (their
        (num_bits, num_hashes) must agree), counts are summed."""
        self._compatible(other, "union")
        a, b = self._slices, other._slices
        ca, cb = list(self._counts), list(other._counts)
        slices = []
        for i in range(max(len(a), len(b))):
            if i < len(a) and i < len(b):
                slices.append(a[i].union(b[i]))
            else:
                slices.append((a[i] if i < len(a) else b[i]).copy())
        counts = [min(MAX_COUNT, (ca[i] if i < len(ca) else 0) + (cb[i] if i < len(cb) else 0))
                  for i in range(len(slices))]
        return tuple(slices), counts

    def union(self, other: ScalableBloomFilter) -> Self:
        """A filter of both sets: slice by slice OR, counts summed (same initial_capacity,
        fpr, growth, tightening, seed; else IncompatibleFiltersError).

        Slice i of the union holds the keys of both slices i: when they are more than n_i,
        the slice is overfilled and the union's false positive rate exceeds ``fpr``, as for
        any Bloom filter past its capacity. ``predicted_fpr()`` is computed from the merged
        fills, so it says so, and ``info()["overfilled"]`` is True. Keys in both filters are
        counted twice. New keys go to new slices, which keep their error P_0 r^i.

        Complexity: O(sum m_i / 64)."""
        self._compatible(other, "union")
        with _locked(self, other):
            slices, counts = self._merged(other)
        out = self._empty_like()
        out._set_slices(slices, counts)
        out._key_mask = self._key_mask | other._key_mask
        return out

    def __or__(self, other: ScalableBloomFilter) -> Self:
        return self.union(other)

    def __ior__(self, other: ScalableBloomFilter) -> Self:
        self._merge_in(other)
        return self

    def _merge_in(self, other: Any) -> None:
        self._compatible(other, "union")
        with _locked(self, other):
            self._set_slices(*self._merged(other))
            self._note_keys(other._key_mask)

    def _empty_like(self) -> Self:
        """A filter with this one's parameters and no slices (filled in by the caller)."""
        out = self.__class__.__new__(self.__class__)
        out.initial_capacity, out.fpr, out.growth, out.tightening = (
            self.initial_capacity, self.fpr, self.growth, self.tightening)
        out.seed, out._hash_id = self.seed, self._hash_id
        out._key_mask = self._key_mask
        return out

    def copy(self) -> Self:
        """An independent copy. Complexity: O(sum m_i / 64)."""
        with self._lock:
            out = self._empty_like()
            out._set_slices(tuple(s.copy() for s in self._slices), list(self._counts))
        return out

    def __eq__(self, other: object) -> bool:
        """Same parameters, counts and bits (key types are not compared)."""
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, ScalableBloomFilter)
        return (self._params_tuple() == other._params_tuple() and self._counts == other._counts
                and len(self._slices) == len(other._slices)
                and all(a == b for a, b in zip(self._slices, other._slices, strict=True)))

    __hash__ = None  # type: ignore[assignment]

    # -- statistics ---------------------------------------------------------------------------
    def predicted_fpr(self) -> float:
        """Compound false positive rate at the slices' current fills:
        ``1 - prod(1 - (X_i / m_i)^k_i)`` (below ``fpr`` while every slice holds at most its
        n_i keys). Complexity: O(sum m_i / 64)."""
        return compound_fpr([s.fill_ratio() ** s.num_hashes for s in self._slices])

    def __len__(self) -> int:
        """Keys that were new when added (an estimate of the distinct keys: see Notes).

        Complexity: O(slices)."""
        return sum(self._counts)

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, fills and rates of the filter and of every slice (what ``bloomkit
        info`` prints); ``overfilled`` is True when a slice holds more keys than its capacity
        (after a union). Complexity: O(sum m_i / 64)."""
        caps = self.slice_capacities()
        slices = [
            {"capacity": caps[i], "fpr": slice_error(self.fpr, self.tightening, i), "num_bits": s.num_bits,
             "num_hashes": s.num_hashes, "count": self._counts[i], "fill_ratio": s.fill_ratio(),
             "predicted_fpr": s.fill_ratio() ** s.num_hashes}
            for i, s in enumerate(self._slices)
        ]
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "seed": self.seed,
            "initial_capacity": self.initial_capacity, "fpr": self.fpr, "growth": self.growth,
            "tightening": self.tightening, "num_slices": len(self._slices), "capacity": sum(caps),
            "count": len(self), "count_is_exact": False, "size_in_bits": self.size_in_bits,
            "overfilled": any(s["count"] > s["capacity"] for s in slices),
            "key_types": list(self.key_types),
            "predicted_fpr": compound_fpr([s["predicted_fpr"] for s in slices]), "slices": slices,
        }

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(initial_capacity={self.initial_capacity}, fpr={self.fpr}, "
            f"seed={self.seed}, growth={self.growth}, tightening={self.tightening}; "
            f"{len(self._slices)} slices, {len(self)} keys)"
        )

    def _check(self) -> None:
        """Assert the invariants: one count per slice, every slice but the last full, slice
        storage sound."""
        (slices, table, _words), counts = self._series, self._counts
        if not (1 <= len(slices) == len(counts) <= _max_slices(self.initial_capacity, self.growth)):
            raise InvariantError("1 <= len(slices) == len(counts) <= _max_slices(self.initial_capacity, self.growth)")
        if not (np.array_equal(table, _series(slices)[1])):
            raise InvariantError("the series table does not describe the slices")
        for i, (s, c) in enumerate(zip(slices, counts, strict=True)):
            if not (type(s) is BloomFilter and s.seed == self.seed):
                raise InvariantError("type(s) is BloomFilter and s.seed == self.seed")
            if not (0 <= c <= MAX_COUNT and (i == len(slices) - 1 or c >= slice_capacity(self.initial_capacity, self.growth, i))):
                raise InvariantError("0 <= c <= MAX_COUNT and (i == len(slices) - 1 or c >= slice_capacity(self.initial_capacity, self.growth, i))")
            words, m = s.bits.words, s.num_bits
            if not (words.dtype == np.uint64 and words.shape == ((m + 63) // 64,)):
                raise InvariantError("words.dtype == np.uint64 and words.shape == ((m + 63) // 64,)")
            if not (m & 63 == 0 or int(words[-1]) >> (m & 63) == 0):
                raise InvariantError("bits set beyond num_bits")
            if not (1 <= s.num_hashes <= MAX_HASHES):
                raise InvariantError("1 <= s.num_hashes <= MAX_HASHES")
        if not (key_type_mask(key_type_names(self._key_mask)) & ~self._key_mask == 0):
            raise InvariantError("key_type_mask(key_type_names(self._key_mask)) & ~self._key_mask == 0")

    # -- persistence --------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {"initial_capacity": self.initial_capacity, "fpr": self.fpr, "growth": self.growth,
                  "tightening": self.tightening, "key_types": list(self.key_types)}
        arrays: dict[str, np.ndarray] = {
            "num_bits": np.array([s.num_bits for s in self._slices], dtype=np.int64),
            "num_hashes": np.array([s.num_hashes for s in self._slices], dtype=np.int64),
            "counts": np.array(self._counts, dtype=np.int64),
        }
        for name, s in zip(_SLICE_WORDS, self._slices, strict=False):
            arrays[name] = s.bits.words
        return params, arrays

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Any:
        owner = cls.__name__
        n0, growth = params["initial_capacity"], params["growth"]
        if n0 > MAX_SLICE_CAPACITY:
            raise FormatError(f"{owner} initial_capacity {n0} exceeds {MAX_SLICE_CAPACITY}")
        try:
            _check_parameters(n0, params["fpr"], growth, params["tightening"], owner)
        except InvalidParameterError as e:
            raise FormatError(f"invalid {owner} parameters: {e}") from None
        bits, hashes, counts = arrays["num_bits"], arrays["num_hashes"], arrays["counts"]
        count = len(counts)
        if not 1 <= count <= _max_slices(n0, growth) or bits.shape != (count,) or hashes.shape != (count,):
            raise FormatError(
                f"{owner} needs 1 to {_max_slices(n0, growth)} slices with one num_bits, num_hashes and "
                f"count each; got {bits.shape[0]}, {hashes.shape[0]} and {count}"
            )
        for i in range(count):  # every check before the first allocation
            m, c = int(bits[i]), int(counts[i])
            if i < count - 1 and c < slice_capacity(n0, growth, i):
                raise FormatError(f"{owner} slice {i} holds {c} keys, below its capacity, but is not the last")
            words = arrays.get(_SLICE_WORDS[i])
            if words is None or words.shape != ((m + 63) // 64,):
                got = "no words" if words is None else f"{words.shape[0]} words"
                raise FormatError(f"{owner} slice {i} has {got}; num_bits = {m} needs {(m + 63) // 64}")
            if m & 63 and int(words[-1]) >> (m & 63):
                raise FormatError(f"{owner} slice {i} has bits set beyond num_bits")
        extra = [name for name in _SLICE_WORDS[count:] if name in arrays]
        if extra:
            raise FormatError(f"{owner} has {count} slices but an array {extra[0]!r}")
        out = cls.__new__(cls)
        out.initial_capacity, out.fpr, out.growth, out.tightening = n0, params["fpr"], growth, params["tightening"]
        out.seed, out._hash_id = check_seed(seed, owner), hash_id
        out._key_mask = key_type_mask(params["key_types"])
        slices = []
        for i in range(count):
            s = BloomFilter(num_bits=int(bits[i]), num_hashes=int(hashes[i]), seed=out.seed)
            s.bits.words[:] = arrays[_SLICE_WORDS[i]]
            slices.append(s)
        out._set_slices(tuple(slices), [int(c) for c in counts])
        return out
