"""Bloom and counting Bloom filters that shrink by folding and grow back by unfolding (doc 003,
Section III; the shared bookkeeping is :class:`~bloomkit.folding.base.FoldableBase`)."""

from __future__ import annotations

from typing import Any, ClassVar, Self

import numpy as np

from .._engine.lazy import counters as KC
from .._engine.lazy import kernels as K
from .._engine.lazy import probes as P
from .._engine.parallel import hash_batch, key_source
from .._engine.storage import BitArray, CounterArray
from .._format import ArraySpec
from .._validation import Bool
from ..bloom import CountingBloomFilter
from ..errors import FormatError, InvalidParameterError
from .base import FoldableBase
from .wire import KIND_BITS, KIND_COUNTERS, WireMessage

__all__ = ["FoldableBloomFilter", "FoldableCountingBloomFilter"]


class FoldableBloomFilter(FoldableBase):
    """A Bloom filter created at ``m_1`` bits that folds to any divisor and unfolds back.

    Parameters
    ----------
    num_bits : int, optional
        ``m_1``, the planned maximal size (choose it with
        :func:`bloomkit.folding.choose_initial_size`: it should have many divisors).
    num_hashes : int, optional
        ``k`` (rounded; derived from ``capacity`` when omitted).
    seed : int in [0, 2**64), keyword-only
        Hash seed (passing it by position still works, with a DeprecationWarning).
    capacity : int, optional
        ``n`` the filter is planned for. With ``fpr`` and no ``num_bits``: ``m_1`` is the size
        of doc 000 Eqs. 1-2 rounded up by :func:`~bloomkit.folding.planner.foldable_size` (at
        most 1/64 more, divisible by ``2 .. j``) and ``k = round(m_1 / n ln 2)``.
    fpr : float in (0, 1), optional
        Target false positive rate at ``capacity`` keys (unfolded).
    retain_original : bool
        Keep ``B_1`` (``m_1`` more bits) so that :meth:`unfold` works.
    probes : {"independent", "double"}
        The probe scheme, as for :class:`~bloomkit.BloomFilter` (saved and sent as the hash id;
        both give ``G_i`` independent of the size, so folding equals a rebuild in either).

    Notes
    -----
    Everything of :class:`~bloomkit.BloomFilter` (``add``, ``add_many``, ``in``,
    ``contains_many``, ``|``, ``&``, ``clear``, ``copy``, ``info``, ``save``,
    ``bloomkit.load``, pickle) on the current filter ``B_t``, plus :meth:`unfold`,
    :meth:`resize`, :meth:`fold_to_band`, :meth:`fold_to_fpr`, :meth:`to_wire`. ``len()`` is the
    Swamidass-Baldi *estimate* of the distinct keys, from ``B_1`` when retained
    (``exact_len`` is False); :attr:`count` is the exact number of adds (duplicates
    included). ``predicted_fpr()`` is Eq. 4 at ``m_t`` for :attr:`count` items;
    ``size_in_bits`` is ``m_t`` (what is sent; ``B_1`` stays with the sender).

    Thread safety: any number of threads may add, query, fold, unfold and save at once. An add
    (single key or batch) hashes without the lock, then updates ``B_t`` and ``B_1`` and the
    count holding ``self._lock``; ``fold``, ``folded``, ``unfold``, ``resize``,
    ``fold_to_band``, ``fold_to_fpr``, ``clear``, ``copy``, ``|``, ``&``, ``|=``, ``&=``, ``to_wire`` and
    ``save`` hold it too, so no add is lost and ``B_t`` is always the fold of ``B_1``. Queries
    take no lock: they read one storage object (bits or counters with its own size), and see
    the filter before or after a concurrent fold.

    Examples
    --------
    >>> f = FoldableBloomFilter(5040, 3, seed=1)
    >>> f.add_many(["a", "b", "c"])
    >>> f.fold(7); f.fold(2); f.num_bits
    360
    >>> f.contains_many(["a", "b", "c"]).tolist()
    [True, True, True]
    >>> f.unfold(2520); f.size_history
    [5040, 720, 360, 2520]
    >>> FoldableBloomFilter(capacity=1000, fpr=0.01).num_bits  # 9586 bits rounded up to 160 * 60
    9600
    """

    _STORE_ARRAY = "words"
    _PARAMS: ClassVar[Any] = FoldableBase._PARAMS
    _ARRAYS: ClassVar[Any] = {"words": ArraySpec("<u8"), "origin": ArraySpec("<u8", optional=True)}

    def __init__(
        self,
        num_bits: int | None = None,
        num_hashes: int | None = None,
        *,
        seed: int = 0,
        capacity: int | None = None,
        fpr: float | None = None,
        retain_original: bool = True,
        probes: str = "independent",
    ) -> None:
        self._init_foldable(num_bits, num_hashes, seed, capacity, fpr, retain_original, probes=probes)

    @classmethod
    def for_requirements(cls, capacity: int, fpr: float, *, seed: int = 0, retain_original: bool = True,
                         probes: str = "independent") -> Self:
        """A filter holding ``capacity`` keys at rate ``fpr`` unfolded (``m_1`` as for
        ``FoldableBloomFilter(capacity=, fpr=)``). Complexity: O(m_1 / 64)."""
        return cls(capacity=capacity, fpr=fpr, seed=seed, retain_original=retain_original, probes=probes)

    def _insert(self, h1: np.ndarray) -> None:
        # under self._lock (every writer of B_t and B_1 holds it), so dh_set may drop the GIL
        insert = P.dh_set if self._dh else K.bits_set
        bits = self._bits
        insert(bits.words, h1, self._num_hashes, bits.m64)
        if self._origin is not None:
            insert(self._origin.words, h1, self._num_hashes, np.uint64(self._m1))

    def contains_many(self, keys: Any) -> np.ndarray:
        """Bool array: membership of every key at ``G_i mod m_t`` (Eq. 6). Complexity: O(n k).

        Large batches are hashed and tested on several threads (read-only)."""
        batch, hash_chunk = key_source(keys, self._hash, f"{type(self).__name__}.contains_many")
        bits = self._bits  # one storage object: its words and size belong together (unfold grows it)
        words, k, m = bits.words, self._num_hashes, np.uint64(bits.num_bits)
        test = P.dh_test if self._dh else K.bits_test
        _h, _parts, hits = hash_batch(batch, hash_chunk, lambda h, lo, hi: test(words, h[lo:hi], k, m))
        return hits[0] if len(hits) == 1 else np.concatenate(hits)

    def _merge(self, a: BitArray, b: BitArray, op: str) -> BitArray:
        return a | b if op == "union" else a & b

    def _origin_problem(self) -> str | None:
        o = self._origin
        if o.num_bits != self._m1:
            return f"B_1 has {o.num_bits} bits, m_1 = {self._m1}"
        f = self.fold_factor
        return None if (o if f == 1 else o.fold(f)) == self._bits else "B_t differs from the fold of B_1"

    def _wire_kind(self) -> tuple[int, int]:
        return KIND_BITS, 0

    @classmethod
    def _wire_store(cls, msg: WireMessage) -> BitArray:
        return BitArray.from_bytes(msg.payload, msg.num_bits)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(m1={self._m1}, num_bits={self.num_bits}, "
            f"num_hashes={self._num_hashes}, seed={self.seed}, fold_factor={self.fold_factor})"
        )

    # -- persistence ----------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        arrays = {"words": self._bits.words}
        if self._origin is not None:
            arrays["origin"] = self._origin.words
        return self._foldable_params(), arrays

    @classmethod
    def _store_from(cls, array: np.ndarray, size: int, params: dict[str, Any], name: str) -> BitArray:
        if array.shape != ((size + 63) // 64,):
            raise FormatError(f"{cls.__name__}: the {name!r} array has {array.shape[0]} words; "
                              f"{size} bits need {(size + 63) // 64}")
        rem = size & 63
        if rem and int(array[-1]) >> rem:
            raise FormatError(f"{cls.__name__}: bits set beyond {size} bits in the {name!r} array")
        return BitArray(size, array)


def _absent_key_error(owner: str, bad: int) -> InvalidParameterError:
    return InvalidParameterError(
        f"The 'keys' parameter of {owner}.remove_many must hold present keys only. "
        f"Got an absent key at index {bad} instead; nothing was removed."
    )


class FoldableCountingBloomFilter(FoldableBase, CountingBloomFilter):
    """A counting Bloom filter created at ``m_1`` counters that folds (sums) and unfolds.

    Folding adds the counters of the folded parts (Eq. 3 with (+) = sum), saturating at
    ``2**counter_bits - 1``; keys can be removed from the folded filter (and from ``B_1``).
    A saturated counter stays saturated (never a false negative).

    Parameters
    ----------
    num_bits, num_hashes, seed, capacity, fpr, retain_original, probes
        As for :class:`FoldableBloomFilter` (``num_bits`` is ``m_1``, the number of counters).
    counter_bits : {4, 8, 16, 32}
        Counter width (default 8: folds add counters, so 4 bits saturate quickly).

    Notes
    -----
    ``size_in_bits`` is ``m_t * counter_bits``; ``len()``, :attr:`count` and
    ``predicted_fpr()`` as for :class:`FoldableBloomFilter` (the count drops on removals).

    Thread safety: any number of threads may add, query, fold, unfold and save at once. An add
    (single key or batch) hashes without the lock, then updates ``B_t`` and ``B_1`` and the
    count holding ``self._lock``; ``fold``, ``folded``, ``unfold``, ``resize``,
    ``fold_to_band``, ``fold_to_fpr``, ``clear``, ``copy``, ``|``, ``&``, ``|=``, ``&=``, ``to_wire`` and
    ``save`` hold it too, so no add is lost and ``B_t`` is always the fold of ``B_1``. Queries
    take no lock: they read one storage object (bits or counters with its own size), and see
    the filter before or after a concurrent fold. Removals hold the
    lock too (``B_1`` first, then ``B_t``, all or nothing).

    Examples
    --------
    >>> f = FoldableCountingBloomFilter(360, 3, seed=2)
    >>> f.add_many(["a", "b"]); f.fold(6); f.remove("a")
    >>> f.contains_many(["b"]).tolist(), f.num_bits
    ([True], 60)
    """

    _STORE_ARRAY = "counters"
    _PARAMS: ClassVar[Any] = {**FoldableBase._PARAMS, **CountingBloomFilter._PARAMS, "origin_overflowed": Bool()}
    _ARRAYS: ClassVar[Any] = {"counters": ArraySpec(None), "origin": ArraySpec(None, optional=True)}

    def __init__(
        self,
        num_bits: int | None = None,
        num_hashes: int | None = None,
        *,
        seed: int = 0,
        capacity: int | None = None,
        fpr: float | None = None,
        counter_bits: int = 8,
        retain_original: bool = True,
        probes: str = "independent",
    ) -> None:
        self._init_foldable(num_bits, num_hashes, seed, capacity, fpr, retain_original, counter_bits=counter_bits,
                            probes=probes)

    @classmethod
    def for_requirements(
        cls, capacity: int, fpr: float, *, seed: int = 0, counter_bits: int = 8, retain_original: bool = True,
        probes: str = "independent",
    ) -> Self:
        """As :meth:`FoldableBloomFilter.for_requirements`, with ``counter_bits``-bit counters."""
        return cls(capacity=capacity, fpr=fpr, seed=seed, counter_bits=counter_bits, retain_original=retain_original,
                   probes=probes)

    def _restore_extra(self, params: dict[str, Any]) -> None:
        self._width = params["counter_bits"]

    def _insert(self, h1: np.ndarray) -> None:
        c, k, dh = self._counters, self._num_hashes, self._dh
        c.overflowed |= bool(KC.counters_inc_h1(c.data, c.width, c.max_value, h1, k, c.m64, dh))
        if self._origin is not None:
            o = self._origin
            o.overflowed |= bool(KC.counters_inc_h1(o.data, o.width, o.max_value, h1, k, np.uint64(self._m1), dh))

    def __contains__(self, key: Any) -> bool:
        """True if the key may be in the set. Complexity: O(k)."""
        c = self._counters  # one storage object: its data and size belong together
        return bool(KC.counters_test_h1(c.data, c.width, self._h1_one(key), self._num_hashes, np.uint64(c.size),
                                       self._dh)[0])

    def contains_many(self, keys: Any) -> np.ndarray:
        """Bool array: membership of every key. Complexity: O(n k)."""
        h1 = self._hash(keys)[0]
        c = self._counters
        return KC.counters_test_h1(c.data, c.width, h1, self._num_hashes, np.uint64(c.size), self._dh)

    def remove(self, key: Any) -> None:
        """Remove one key; InvalidParameterError (nothing changed) if it is certainly absent.

        Complexity: O(k).
        """
        self.remove_many([key])

    def remove_many(self, keys: Any) -> None:
        """Remove a batch, all or nothing, from ``B_1`` (if kept) and the folded ``B_t``.

        Raises
        ------
        InvalidParameterError
            If some key is certainly absent (a zero counter, repeats in the batch counted);
            nothing is removed then.

        Notes
        -----
        Complexity: O(n k).
        """
        h1 = self._hash(keys)[0]
        k, dh, owner = self._num_hashes, self._dh, type(self).__name__
        with self._lock:
            o = self._origin
            if o is not None:
                bad = int(KC.counters_dec_h1(o.data, o.width, o.max_value, h1, k, np.uint64(self._m1), dh))
                if bad >= 0:
                    raise _absent_key_error(owner, bad)
            c = self._counters
            bad = int(KC.counters_dec_h1(c.data, c.width, c.max_value, h1, k, c.m64, dh))
            if bad >= 0:
                if o is not None:  # pragma: no cover - B_t >= fold(B_1) makes this impossible
                    KC.counters_inc_h1(o.data, o.width, o.max_value, h1, k, np.uint64(self._m1), dh)
                raise _absent_key_error(owner, bad)
            self._count = max(0, self._count - int(h1.shape[0]))

    def to_bloom(self) -> FoldableBloomFilter:
        """The foldable bit filter of the same keys (bit set where the counter is non-zero).

        The support of a sum-fold is the OR-fold of the support, so the result is the bit
        filter a sender transmits while it keeps the counting filter for removals.

        Notes
        -----
        Complexity: O(m_1).
        """

        def support(c: CounterArray) -> BitArray:
            return BitArray.from_bytes(np.packbits(c.values() > 0, bitorder="little").tobytes(), c.size)

        with self._lock:
            out = FoldableBloomFilter._restore_common(self._params(), self.seed, self._hash_id)
            out._set_storage(support(self._counters))
            origin = None if self._origin is None else support(self._origin)
            out._set_foldable(self._m1, origin, self._history, self._count, self.set_version)
            return out

    def _merge(self, a: CounterArray, b: CounterArray, op: str) -> CounterArray:
        out = CounterArray.from_values((np.add if op == "union" else np.minimum)(a.values(), b.values()), self._width)
        out.overflowed |= a.overflowed or b.overflowed
        return out

    def _origin_problem(self) -> str | None:
        """``B_t[j] = min(sum-fold(B_1)[j], max)``, or ``B_t[j]`` saturated (removals leave
        saturated counters alone), for every counter ``j``."""
        o = self._origin
        if o.size != self._m1 or o.width != self._width:
            return f"B_1 has {o.size} {o.width}-bit counters, m_1 = {self._m1} of {self._width} bits"
        f = self.fold_factor
        ref = (o if f == 1 else o.fold(f)).values()
        cur = self._counters.values()
        ok = (cur == ref) | (cur == self._counters.max_value)
        return None if bool(ok.all()) else "B_t differs from the sum-fold of B_1"

    def _wire_kind(self) -> tuple[int, int]:
        return KIND_COUNTERS, self._width

    @classmethod
    def _wire_store(cls, msg: WireMessage) -> CounterArray:
        c = CounterArray.from_bytes(msg.payload, msg.num_bits, msg.counter_bits)
        d = c.data  # the wire has no overflow flag: a saturated counter is taken as one
        c.overflowed = bool(((d & 15) == 15).any() or (d >> 4 == 15).any()) if c.width == 4 else bool((d == c.max_value).any())
        return c

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(m1={self._m1}, num_bits={self.num_bits}, num_hashes={self._num_hashes}, "
            f"seed={self.seed}, counter_bits={self._width}, fold_factor={self.fold_factor})"
        )

    # -- persistence ----------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = self._foldable_params() | {
            "counter_bits": self._width, "overflowed": self._counters.overflowed,
            "origin_overflowed": bool(self._origin is not None and self._origin.overflowed),
        }
        arrays = {"counters": self._counters.data}
        if self._origin is not None:
            arrays["origin"] = self._origin.data
        return params, arrays

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Any:
        if params["origin_overflowed"] and not params["retain_original"]:
            raise FormatError(f"{cls.__name__}: origin_overflowed is true but no origin is retained")
        return super()._from_state(params, arrays, seed, hash_id)

    @classmethod
    def _store_from(cls, array: np.ndarray, size: int, params: dict[str, Any], name: str) -> CounterArray:
        c = CounterArray.from_saved(array, size, params["counter_bits"], f"{cls.__name__}: the {name!r} array")
        c.overflowed = params["origin_overflowed" if name == "origin" else "overflowed"]
        return c
