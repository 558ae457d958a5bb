"""What both foldable filters share: ``m_1``, the retained ``B_1``, the size history and the
item count, on top of the plain filters' :meth:`~bloomkit.BloomFilter.fold`.

Doc 003, Section III. A filter is created at its planned maximal size ``m_1`` (Eq. 2). A fold
by a factor ``p`` that divides the current size ``m_t`` gives ``m_{t+1} = m_t / p`` and (Eq. 3)

    b_{t+1}(i) = (+)_{l=0}^{p-1} b_t(i + l m_{t+1})

with (+) = OR for bits and = sum (saturating) for counters. Because every probe position is
``G_i(x) mod m`` with ``G_i`` independent of ``m`` (:mod:`bloomkit._engine.hashing`), the folded
filter equals the filter built directly at ``m_{t+1}``, membership on it is
``G_i(q) mod m_t`` (Eq. 6 as corrected in ERRATA.md), and any order or grouping of the folds
gives the same result (Lemma, Eq. 5, and the Theorem of Section III).

Unfolding cannot be computed from the folded filter; the filter retains ``B_1`` and
regenerates ``B_t = phi_{m_1 / m_t}(B_1)`` (Section III, "Unfold"). A filter received over the
wire (:func:`~bloomkit.folding.from_wire`) carries no ``B_1`` and can only be folded further.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any, ClassVar, Self

import numpy as np

from .. import theory
from .._engine.hashing import hash64_tag
from .._validation import (
    CAPACITY,
    FPR,
    INT64_MAX,
    Bool,
    InvariantError,
    ListOf,
    check_float,
    check_int,
    param_error,
)
from ..bloom import NUM_BITS, BloomFilter
from ..errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from .numbers import divisors
from .planner import ITEMS, bits_for_capacity, exact_fpr, next_size, validate_band
from .wire import COUNT, SET_VERSION, WireMessage, encode

__all__ = ["HISTORY", "MAX_HISTORY", "RETAIN_ORIGINAL", "FoldableBase", "check_fold_factor"]

MAX_HISTORY = 1 << 16
"""Sizes kept in ``size_history``: beyond it the oldest entries after ``m_1`` are dropped."""
HISTORY = ListOf(NUM_BITS, 1, MAX_HISTORY)
RETAIN_ORIGINAL = Bool()


def check_fold_factor(factor: Any, size: int, owner: str) -> int:
    """``factor`` if it is an integer ``>= 2`` dividing ``size``, else InvalidParameterError."""
    f = check_int(factor, "factor", owner, lo=2)
    if size % f:
        raise param_error("factor", owner, f"a divisor (>= 2) of the current size {size}", factor)
    return f


def _foldable_sizes(owner: str, capacity: Any, fpr: Any, num_bits: Any) -> tuple[Any, Any, float | None]:
    """``(num_bits, fpr)`` to hand to ``BloomFilter.__init__``, and the ``fpr`` to record.

    Given ``capacity`` and ``fpr`` without ``num_bits``, ``m_1`` is
    :func:`~bloomkit.folding.planner.foldable_size` of the size of doc 000 Eqs. 1-2 (at most
    1/64 more, many divisors) and the plain filter gets ``num_bits = m_1`` with ``capacity``
    (so ``k = round(m_1 / n ln 2)``); otherwise the arguments pass unchanged (the plain
    filter validates them and names what is missing)."""
    if num_bits is None and capacity is not None and fpr is not None:
        rate = FPR(fpr, "fpr", owner)
        return bits_for_capacity(CAPACITY(capacity, "capacity", owner), rate, owner), None, rate
    return num_bits, fpr, None


class FoldableBase(BloomFilter):
    """Bookkeeping and planning common to both foldable filters (see their docstrings).

    Subclasses provide the storage-specific pieces: ``_insert(h1)`` (add hashes to ``B_t``
    and ``B_1``), ``_merge(a, b, op)`` (union / intersection of two stores),
    ``_origin_problem()`` (how ``B_t`` differs from the fold of ``B_1``, or None),
    ``_wire_kind()``, ``_store_from(array, size, params, name)`` and ``_wire_store(msg)``.
    """

    _m1: int
    _origin: Any  # BitArray or CounterArray, None when B_1 is not retained
    _history: list[int]
    _count: int
    set_version: int
    _STORE_ARRAY: ClassVar[str]
    _PARAMS: ClassVar[Any] = {
        **BloomFilter._PARAMS, "m1": NUM_BITS, "history": HISTORY, "count": COUNT,
        "retain_original": RETAIN_ORIGINAL, "set_version": SET_VERSION,
    }

    # -- construction -------------------------------------------------------------------------
    def _init_foldable(self, num_bits: Any, num_hashes: Any, seed: Any, capacity: Any, fpr: Any,
                       retain_original: Any, **extra: Any) -> None:
        """The constructors of both filters: the plain filter's ``__init__`` (the next class in
        the MRO: ``BloomFilter`` or ``CountingBloomFilter``, with ``extra``) sizes ``B_t``; then
        ``m_1`` is its size and ``B_1`` an empty copy."""
        owner = type(self).__name__
        keep = RETAIN_ORIGINAL(retain_original, "retain_original", owner)
        m, rate_arg, rate = _foldable_sizes(owner, capacity, fpr, num_bits)
        super().__init__(capacity, rate_arg, num_bits=m, num_hashes=num_hashes, seed=seed, **extra)
        if rate is not None:
            self.fpr = rate
        m1 = self.num_bits
        self._set_foldable(m1, self._new_storage(m1) if keep else None, [m1], 0, 0)

    def _set_foldable(self, m1: int, origin: Any, history: Sequence[int], count: int, set_version: int) -> None:
        self._m1, self._origin, self._history = m1, origin, list(history)
        self._count, self.set_version = count, set_version

    def _like(self, store: Any, key_mask: int | None = None) -> Self:
        """An independent filter over ``store`` with a copy of ``B_1`` and of the history."""
        return self._derive(store, None if self._origin is None else self._origin.copy(), key_mask)

    def _derive(self, store: Any, origin: Any, key_mask: int | None = None) -> Self:
        """A filter with this one's parameters over ``store`` and ``origin`` (not copied)."""
        out = super()._like(store, key_mask)
        out._origin = origin
        out._history = list(self._history)
        return out

    def copy(self) -> Self:
        """An independent copy (``B_1`` and history included).

        Complexity: O(m_1 / 64) for bits, O(m_1) for counters.
        """
        with self._lock:
            return super().copy()

    # -- read-only views ------------------------------------------------------------------------
    @property
    def m1(self) -> int:
        """``m_1``: the initial (maximal) size the filter was created with."""
        return self._m1

    @property
    def retains_original(self) -> bool:
        """True if ``B_1`` is kept, so the filter can be unfolded."""
        return self._origin is not None

    @property
    def size_history(self) -> list[int]:
        """Sizes the filter went through, starting with ``m_1`` (a copy; at most
        :data:`MAX_HISTORY` entries, the oldest after ``m_1`` dropped first)."""
        return list(self._history)

    @property
    def count(self) -> int:
        """Items added minus items removed (duplicates count every time): Eq. 4's ``n``."""
        return self._count

    @property
    def fold_factor(self) -> int:
        """``m_1 / m_t``: the product of the fold factors applied so far."""
        return self._m1 // self.num_bits

    def _record(self, size: int) -> None:
        h = self._history
        h.append(size)
        if len(h) > MAX_HISTORY:
            del h[1]

    # -- updates --------------------------------------------------------------------------------
    def _insert(self, h1: np.ndarray) -> None:
        raise NotImplementedError

    def _add_hashes(self, h1: np.ndarray, tags: int) -> None:
        with self._lock:  # B_t and B_1 change together; a fold or a save sees both or neither
            self._insert(h1)
            self._count += int(h1.shape[0])
        self._note_keys(tags)

    def add(self, key: Any) -> None:
        """Insert one key into ``B_t`` (at ``G_i mod m_t``) and ``B_1``. Complexity: O(k)."""
        h1, tag = hash64_tag(key, self.seed)
        self._add_hashes(np.array([h1], dtype=np.uint64), 1 << tag)

    def add_many(self, keys: Any) -> None:
        """Insert a batch (list, numpy, pyarrow, pandas or polars, by position) into ``B_t``
        and ``B_1``. Complexity: O(n k)."""
        self._add_hashes(*self._hash(keys))

    def clear(self) -> None:
        """Remove every key from ``B_t`` and ``B_1`` (count 0, key types forgotten); the size,
        ``m_1`` and the history stay. Complexity: O(m_1 / 64) bits, O(m_1) counters."""
        with self._lock:
            super().clear()
            if self._origin is not None:
                self._origin.clear()
            self._count = 0

    # -- folding --------------------------------------------------------------------------------
    def fold(self, factor: int) -> None:
        """Fold in place by ``factor`` (elementary if prime, composite otherwise; Eq. 3).

        Parameters
        ----------
        factor : int
            A divisor ``>= 2`` of the current size ``m_t``.

        Raises
        ------
        InvalidParameterError
            If ``factor`` is not an integer ``>= 2`` dividing ``m_t``.

        Notes
        -----
        Complexity: O(m_t / 64) word operations for bits, O(m_t) for counters (Table II).
        """
        with self._lock:
            f = check_fold_factor(factor, self.num_bits, f"{type(self).__name__}.fold")
            super().fold(f)
            self._record(self.num_bits)

    def folded(self, factor: int) -> Self:
        """A folded copy (``phi_factor(B_t)``, with a copy of ``B_1``); this filter is unchanged.

        Notes
        -----
        Complexity: O(m_t) for the fold plus O(m_1) for the copy of ``B_1``.
        """
        with self._lock:
            f = check_fold_factor(factor, self.num_bits, f"{type(self).__name__}.folded")
            out = super().folded(f)
        out._record(out.num_bits)
        return out

    def _regenerate(self, size: int) -> None:
        f = self._m1 // size
        self._set_storage(self._origin.copy() if f == 1 else self._origin.fold(f))

    def unfold(self, to_size: int | None = None) -> None:
        """Grow back to ``to_size`` by regenerating ``phi_{m_1/to_size}(B_1)`` (Section III).

        Parameters
        ----------
        to_size : int, optional
            A multiple of the current size that divides ``m_1`` (default ``m_1``).

        Raises
        ------
        InvalidParameterError
            If ``B_1`` was not retained, if ``to_size`` exceeds ``m_1``, is not a multiple of
            the current size, or does not divide ``m_1``.

        Notes
        -----
        Complexity: O(m_1 / 64) (bits) or O(m_1) (counters): one composite fold of ``B_1``.
        """
        owner = f"{type(self).__name__}.unfold"
        with self._lock:
            cur = self.num_bits
            size = self._m1 if to_size is None else check_int(to_size, "to_size", owner, lo=1)
            if self._origin is None:
                raise InvalidParameterError(
                    f"{owner} needs the original filter B_1, which this filter does not retain "
                    "(created with retain_original=False or received over the wire)."
                )
            if size > self._m1:
                raise param_error("to_size", owner, f"<= m_1 = {self._m1}", to_size)
            if size % cur or self._m1 % size:
                raise param_error(
                    "to_size", owner, f"a multiple of the current size {cur} that divides m_1 = {self._m1}", to_size
                )
            if size != cur:
                self._regenerate(size)
                self._record(size)

    def resize(self, size: int) -> None:
        """Fold or unfold to ``size``, a divisor of ``m_1`` (unfolds go through ``B_1``).

        Notes
        -----
        Complexity: O(m_t) for a fold of the current filter, O(m_1) otherwise.
        """
        owner = f"{type(self).__name__}.resize"
        with self._lock:
            size = check_int(size, "size", owner, lo=1, hi=self._m1)
            cur = self.num_bits
            if size == cur:
                return
            if cur % size == 0:
                self.fold(cur // size)
                return
            if self._m1 % size:
                raise param_error("size", owner, f"a divisor of m_1 = {self._m1}", size)
            if self._origin is None:
                raise InvalidParameterError(
                    f"{owner} to {size} is not a fold of the current size {cur} and B_1 is not retained."
                )
            self._regenerate(size)
            self._record(size)

    def _candidates(self) -> np.ndarray:
        return divisors(self._m1 if self._origin is not None else self.num_bits)

    def fold_to_band(
        self,
        rho: float,
        eps: float,
        *,
        n: int | None = None,
        policy: str = "independent",
        sent: Sequence[int] = (),
    ) -> int:
        """Fold / unfold so the predicted rate of Eq. 4 lies in ``[rho - eps, rho + eps]``.

        The next size is chosen by :func:`bloomkit.folding.planner.next_size` among the
        divisors of ``m_1`` (of the current size if ``B_1`` is not retained).

        Parameters
        ----------
        rho, eps : float
            The band (``rho - eps > 0``, ``rho + eps < 1``).
        n : int, optional
            Number of items; default :attr:`count`.
        policy : {"independent", "greedy", "min_cost", "entropy"}
            Planner policy.
        sent : sequence of int
            Sizes already sent for this set (``"entropy"`` policy).

        Returns
        -------
        int
            The new size ``m_t``.

        Raises
        ------
        InvalidParameterError
            On a bad band, policy or ``n``, including an ``n`` no filter of ``2**63 - 1``
            bits keeps in the band.

        Notes
        -----
        Complexity: O(m_1^(1/4) + d(m_1)) to plan (the divisors of ``m_1``, each tested
        once), plus the fold or unfold.
        """
        owner = f"{type(self).__name__}.fold_to_band"
        rho, eps = validate_band(rho, eps, owner)
        items = None if n is None else ITEMS(n, "n", owner)
        prev = [check_int(s, "sent", owner, lo=1) for s in sent]
        with self._lock:
            base = self._m1 if self._origin is not None else self.num_bits
            target = next_size(
                base, self._count if items is None else items, self._num_hashes, rho, eps, policy=policy,
                current=self.num_bits, sent=[s for s in prev if base % s == 0],
            )
            self.resize(target)
            return self.num_bits

    def fold_to_fpr(self, target: float, tolerance: float = 0.0) -> int:
        """Fold / unfold to the smallest size whose estimated rate is ``<= target + tolerance``.

        The rate of a candidate size ``D`` is estimated from the filter itself (fill ratio of
        the fold to ``D``, raised to ``k``), so it needs no item count. Candidates are
        screened with the Swamidass-Baldi count estimate and Eq. 4, then verified by folding.
        If no candidate qualifies the filter goes to its largest reachable size.

        Parameters
        ----------
        target : float
            Target false positive rate in (0, 1).
        tolerance : float
            Allowed excess, ``>= 0``.

        Returns
        -------
        int
            The new size ``m_t``.

        Notes
        -----
        Complexity: O(d(m_1) + m_1 / 64) typically (one verifying fold per screened
        candidate).
        """
        owner = f"{type(self).__name__}.fold_to_fpr"
        target = check_float(target, "target", owner, 0, 1, lo_open=True, hi_open=True)
        tolerance = check_float(tolerance, "tolerance", owner, 0, 1)
        limit = target + tolerance
        with self._lock:
            cands = all_cands = self._candidates()
            n_est = self.estimated_count()
            if math.isfinite(n_est):
                # Eq. 4 with the estimated count orders the search; verification is by folding
                with np.errstate(divide="ignore", invalid="ignore"):
                    model = np.asarray(theory.false_positive_rate(n_est, cands, self._num_hashes), dtype=float)
                model = np.nan_to_num(model, nan=0.0 if n_est == 0 else 1.0)  # m = 1 gives 0 * inf
                near = np.flatnonzero(model <= 2.0 * limit)
                cands = cands[near[0]:] if near.size else cands[-1:]
            for d in cands.tolist():
                if self._fold_rate(int(d)) <= limit:
                    self.resize(int(d))
                    return self.num_bits
            self.resize(int(all_cands[-1]))
            return self.num_bits

    def _fold_rate(self, size: int) -> float:
        src = self._origin if self._origin is not None else self._store
        f = len(src) // size
        folded = src if f == 1 else src.fold(f)
        return float((folded.nonzero_count() / size) ** self._num_hashes)

    # -- statistics -----------------------------------------------------------------------------
    def estimated_count(self) -> float:
        """Swamidass-Baldi estimate of the distinct keys inserted, from ``B_1`` when retained
        (``m_1`` cells: the least saturated), else from ``B_t``. Complexity: O(m_1)."""
        src = self._origin if self._origin is not None else self._store
        return float(theory.estimate_count(src.nonzero_count(), len(src), self._num_hashes))

    def predicted_fpr(self, num_keys: float | None = None) -> float:
        """Eq. 4 (corrected, exact) at the current size ``m_t`` for ``num_keys`` items
        (default :attr:`count`, the ``n`` of :meth:`fold_to_band`); with ``probes="double"``
        :func:`bloomkit.theory.double_hashing_fpr` at ``m_t`` (Eq. 4 plus about ``n / m_t^2``).
        Complexity: O(1)."""
        n = self._count if num_keys is None else check_float(
            num_keys, "num_keys", f"{type(self).__name__}.predicted_fpr", lo=0)
        return self._rate(n, self.num_bits)

    def _rate(self, n: float, size: int) -> float:
        """The false positive rate of ``n`` items at ``size`` bits in this filter's probe scheme."""
        if self._dh and size > 1 and n > 0:
            return float(theory.double_hashing_fpr(n, size, self._num_hashes))
        return exact_fpr(n, size, self._num_hashes)

    def predicted_fpr_at(self, size: int, n: int | None = None) -> float:
        """Eq. 4 (corrected): rate of ``n`` items (default :attr:`count`) at ``size`` bits (the
        scheme's model, as :meth:`predicted_fpr`).

        Notes
        -----
        Complexity: O(1).
        """
        owner = f"{type(self).__name__}.predicted_fpr_at"
        size = check_int(size, "size", owner, lo=1)
        n = self._count if n is None else ITEMS(n, "n", owner)
        return self._rate(n, size)

    def info(self) -> dict[str, Any]:
        """The plain filter's :meth:`~bloomkit.BloomFilter.info` (``num_bits`` and
        ``size_in_bits`` are those of ``B_t``; ``predicted_fpr`` is Eq. 4 at ``m_t`` for
        ``count`` items) plus ``m1``, ``fold_factor``, ``size_history``, ``retains_original``,
        ``count`` and ``set_version``. Complexity: O(m_1)."""
        with self._lock:
            out = super().info()
            out.update(m1=self._m1, fold_factor=self.fold_factor, size_history=list(self._history),
                       retains_original=self._origin is not None, count=self._count, set_version=self.set_version)
            return out

    # -- set algebra ----------------------------------------------------------------------------
    def _merge(self, a: Any, b: Any, op: str) -> Any:
        raise NotImplementedError

    def _compatible(self, other: Any, op: str) -> None:
        super()._compatible(other, op)
        if other._m1 != self._m1:
            raise IncompatibleFiltersError(f"cannot {op} foldable filters with m_1 = {self._m1} and {other._m1}")

    def _both_locked(self, other: FoldableBase) -> ExitStack:
        """Both filters' locks, taken in a fixed (id) order so that ``a | b`` and ``b | a`` in
        two threads cannot deadlock."""
        stack = ExitStack()
        for f in sorted({id(self): self, id(other): other}.values(), key=id):
            stack.enter_context(f._lock)
        return stack

    def _set_op(self, other: BloomFilter, op: str) -> Self:
        self._compatible(other, op)
        assert isinstance(other, FoldableBase)
        with self._both_locked(other):
            both = self._origin is not None and other._origin is not None
            origin = self._merge(self._origin, other._origin, op) if both else None
            if op == "intersect" and origin is not None:
                f = self.fold_factor
                store = origin.copy() if f == 1 else origin.fold(f)
            else:
                store = self._merge(self._store, other._store, op)
            mask = self._key_mask | other._key_mask if op == "union" else self._key_mask & other._key_mask
            out = self._derive(store, origin, mask)
            out._count = self._count + other._count if op == "union" else min(self._count, other._count)
            return out

    def union(self, other: BloomFilter) -> Self:
        """Filter of the union: ``B_t`` merged (OR of bits, saturating sum of counters) and,
        when both retain it, ``B_1`` merged too (else the result cannot unfold).

        Notes
        -----
        Complexity: O(m_1 / 64) bits, O(m_1) counters.
        """
        return self._set_op(other, "union")

    def intersection(self, other: BloomFilter) -> Self:
        """Superset filter of the intersection (AND of bits, minimum of counters).

        With ``B_1`` on both sides the result is ``phi(B_1 & B'_1)``, which is at most (and
        usually fewer bits than) ``B_t & B'_t``; otherwise the AND of the current filters.

        Notes
        -----
        Complexity: O(m_1 / 64) bits, O(m_1) counters.
        """
        return self._set_op(other, "intersect")

    def _in_place(self, other: BloomFilter, op: str) -> Self:
        """``self |= other`` / ``self &= other``: the result replaces this filter's storage
        with both locks held throughout, so an add between the two steps cannot be lost."""
        self._compatible(other, op)
        assert isinstance(other, FoldableBase)
        with self._both_locked(other):
            res = self._set_op(other, op)
            self._set_storage(res._store)
            self._origin, self._count, self._key_mask = res._origin, res._count, res._key_mask
        return self

    def __ior__(self, other: BloomFilter) -> Self:
        return self._in_place(other, "union")

    def __iand__(self, other: BloomFilter) -> Self:
        return self._in_place(other, "intersect")

    def __eq__(self, other: object) -> bool:
        """Equal parameters, equal current storage and the same ``m_1``."""
        same = super().__eq__(other)
        if same is NotImplemented or not same:
            return same
        assert isinstance(other, FoldableBase)
        return self._m1 == other._m1

    # -- invariants and persistence -------------------------------------------------------------
    def _origin_problem(self) -> str | None:
        raise NotImplementedError

    def _check(self) -> None:
        """Assert the invariants: the plain filter's, sizes and history dividing ``m_1``, and
        ``B_t`` equal to the fold of ``B_1`` (counters: or saturated)."""
        super()._check()
        cur = self.num_bits
        if not (self._m1 % cur == 0):
            raise InvariantError("current size does not divide m_1")
        h = self._history
        if not (1 <= len(h) <= MAX_HISTORY and h[0] == self._m1 and h[-1] == cur):
            raise InvariantError("size history")
        if not (all(self._m1 % s == 0 for s in h)):
            raise InvariantError("a size in the history does not divide m_1")
        if not (0 <= self._count <= INT64_MAX and 0 <= self.set_version <= INT64_MAX):
            raise InvariantError("0 <= self._count <= INT64_MAX and 0 <= self.set_version <= INT64_MAX")
        if self._origin is not None:
            problem = self._origin_problem()
            if problem is not None:
                raise InvariantError(problem)

    def _foldable_params(self) -> dict[str, Any]:
        return {**self._params(), "m1": self._m1, "history": list(self._history), "count": self._count,
                "retain_original": self._origin is not None, "set_version": self.set_version}

    @classmethod
    def _store_from(cls, array: np.ndarray, size: int, params: dict[str, Any], name: str) -> Any:
        raise NotImplementedError

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Any:
        owner = cls.__name__
        m1, m, hist = params["m1"], params["num_bits"], params["history"]
        if m > m1 or m1 % m:
            raise FormatError(f"{owner}: num_bits = {m} does not divide m1 = {m1}")
        if hist[0] != m1 or hist[-1] != m or any(m1 % s for s in hist):
            raise FormatError(f"{owner}: the size history must start at m1 = {m1}, end at num_bits = {m} "
                              f"and hold divisors of m1; got {str(hist)[:200]}")
        keep = params["retain_original"]
        if keep != ("origin" in arrays):
            raise FormatError(f"{owner}: retain_original is {keep} but the 'origin' array is "
                              f"{'present' if 'origin' in arrays else 'missing'}")
        # every array against its declared size before anything is allocated from a size
        store = cls._store_from(arrays[cls._STORE_ARRAY], m, params, cls._STORE_ARRAY)
        origin = cls._store_from(arrays["origin"], m1, params, "origin") if keep else None
        out = cls._restore_common(params, seed, hash_id)
        out._restore_extra(params)
        out._set_storage(store)
        out._set_foldable(m1, origin, hist, params["count"], params["set_version"])
        if origin is not None:
            problem = out._origin_problem()
            if problem is not None:
                raise FormatError(f"{owner}: the '{cls._STORE_ARRAY}' array is not the fold of 'origin': {problem}")
        return out

    def _restore_extra(self, params: dict[str, Any]) -> None:
        """Set what the subclass keeps beyond the plain filter's parameters (counter width)."""

    # -- wire -----------------------------------------------------------------------------------
    def _wire_kind(self) -> tuple[int, int]:
        raise NotImplementedError

    @classmethod
    def _wire_store(cls, msg: WireMessage) -> Any:
        raise NotImplementedError

    @classmethod
    def _from_wire(cls, msg: WireMessage) -> Self:
        """The filter a validated message describes: no ``B_1``, key types "unknown" (the
        wire does not carry them), history ``[m_1, m_t]``."""
        params = {"capacity": None, "fpr": None, "num_hashes": msg.num_hashes, "key_types": ["unknown"],
                  "counter_bits": msg.counter_bits}
        out = cls._restore_common(params, msg.seed, msg.hash_id)
        out._restore_extra(params)
        out._set_storage(cls._wire_store(msg))
        hist = [msg.m1] if msg.factor == 1 else [msg.m1, msg.num_bits]
        out._set_foldable(msg.m1, None, hist, msg.count, msg.set_version)
        return out

    def to_wire(self, set_version: int = 0) -> bytes:
        """Compact encoding of the current (folded) filter for transmission
        (:mod:`bloomkit.folding.wire`: 19 fixed bytes, four varints, the payload of ``B_t``
        and a CRC-32, typically 26-30 bytes besides the payload; ``B_1`` is not sent).

        Parameters
        ----------
        set_version : int
            Identifier of the set the filter describes, in ``[0, 2**63 - 1]``; a receiver
            intersects only copies with the same version (``MultiTransmissionReceiver``).

        Notes
        -----
        Complexity: O(m_t).
        """
        version = SET_VERSION(set_version, "set_version", f"{type(self).__name__}.to_wire")
        kind, cbits = self._wire_kind()
        with self._lock:
            msg = WireMessage(kind, cbits, self._num_hashes, self._hash_id, self.seed, self._m1,
                              self.fold_factor, self._count, version, self._store.to_bytes())
        return encode(msg)

    @property
    def wire_size(self) -> int:
        """Bytes :meth:`to_wire` produces now. Complexity: O(m_t)."""
        return len(self.to_wire())
