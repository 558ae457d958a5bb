"""The verification table of document 004 (Fig. 1, Section 3.2): an exact multiset of the
integer verification values V_a of the stored items.

The document stores V_a "in a hash table". Two clarifications (ERRATA.md, 004) are built in:
values are integers (the attenuated value sum_i sum_j H_ij / 2^j is kept as
sum_i sum_j H_ij * 2^(q-j), which has the same collisions and survives union, removal and
reload exactly), and duplicates are counted, so removing one of two items with the same V_a
leaves the other one in place.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.storage import aligned_empty, aligned_zeros
from .._validation import Int, InvariantError, Options
from ..errors import FormatError, InvalidParameterError
from . import _kernels as MK

__all__ = ["MAX_ITEMS", "VerificationTable"]

_MAX_LOAD = MK.TABLE_MAX_LOAD
_MIN_CAP = 16
MAX_ITEMS = MK.TABLE_MAX_ITEMS
"""Most values (items, counting multiplicity) a table holds: its counts are int32."""
_USED, _DISTINCT, _TOTAL = 0, 1, 2


def _capacity_for(live: int) -> int:
    need = max(_MIN_CAP, int(live / 0.6) + 1)
    return 1 << (need - 1).bit_length()


def _as_values(vals: Any, key_bits: int = 64) -> np.ndarray:
    a = np.ascontiguousarray(vals, dtype=np.int64).ravel()
    hi = (1 << 32) - 2 if key_bits == 32 else (1 << 63) - 2
    if a.size and (int(a.min()) < 0 or int(a.max()) > hi):
        bad = int(a.min()) if int(a.min()) < 0 else int(a.max())
        raise InvalidParameterError(
            f"The 'values' parameter of VerificationTable must be in [0, {hi}]. Got {bad} instead."
        )
    return a


class VerificationTable:
    """Multiset of non-negative int64 verification values with O(1) add / count / remove.

    Open addressing with linear probing (numba kernels); the load factor stays below 0.7.

    Attributes
    ----------
    total : int
        Number of stored values counting multiplicity (the number of items).

    Notes
    -----
    Thread safety: the slot arrays are one tuple, replaced whole when the table grows or
    shrinks, so a reader (``count_many``, ``contains_many``) always sees a matching pair of
    arrays. Mutations are several steps (reserve room, insert, update the counts): the table
    does not serialise them itself; :class:`ParallelBloomFilter` runs every mutation of its
    table under its lock.
    """

    __slots__ = ("_empty", "_slots", "_stats", "_vacant", "key_bits")

    def __init__(self, capacity: int = _MIN_CAP, key_bits: int = 64) -> None:
        key_bits = Options(32, 64)(key_bits, "key_bits", "VerificationTable")
        capacity = Int(0, MAX_ITEMS)(capacity, "capacity", "VerificationTable")
        self.key_bits = key_bits
        self._empty = np.uint32(0xFFFFFFFF) if key_bits == 32 else np.int64(-1)
        self._vacant = int(self._empty)  # the same as a Python int (a cheaper kernel argument)
        self._slots = self._new_slots(_capacity_for(int(capacity * 0.6)))
        # [slots holding a key (live or count 0), keys with count > 0, values with multiplicity]:
        # an array, so that a kernel inserting one value keeps them in step (MK.pbf_add_item)
        self._stats = np.zeros(3, dtype=np.int64)

    @property
    def _used(self) -> int:
        return int(self._stats[_USED])

    @_used.setter
    def _used(self, v: int) -> None:
        self._stats[_USED] = v

    @property
    def distinct(self) -> int:
        """Number of distinct values stored (count > 0)."""
        return int(self._stats[_DISTINCT])

    @distinct.setter
    def distinct(self, v: int) -> None:
        self._stats[_DISTINCT] = v

    @property
    def total(self) -> int:
        """Number of stored values counting multiplicity (the number of items)."""
        return int(self._stats[_TOTAL])

    @total.setter
    def total(self, v: int) -> None:
        self._stats[_TOTAL] = v

    def _new_slots(self, cap: int) -> tuple[np.ndarray, np.ndarray]:
        """Empty (keys, counts) arrays of ``cap`` slots (charged to the load budget)."""
        keys = aligned_empty(cap, self._empty.dtype, "a verification table")
        keys.fill(self._empty)
        return keys, aligned_zeros(cap, np.int32, "a verification table")

    # -- sizing --------------------------------------------------------------------------------
    def _rebuild(self, live_hint: int) -> None:
        keys, counts = self._slots
        new = self._new_slots(_capacity_for(live_hint))
        moved = int(MK.table_rehash(keys, counts, new[0], new[1], self._empty))
        self._slots = new
        self._used = moved
        self.distinct = moved

    def _reserve(self, extra: int) -> None:
        if self._used + extra > _MAX_LOAD * self._slots[0].shape[0]:
            self._rebuild(self.distinct + extra)

    @property
    def capacity(self) -> int:
        """Number of slots (a power of two)."""
        return int(self._slots[0].shape[0])

    @property
    def size_in_bits(self) -> int:
        """Bits held by the table's arrays: ``capacity * (key_bits + 32)``."""
        return self.capacity * (self.key_bits + 32)

    @property
    def nbytes(self) -> int:
        """Bytes held by the table's arrays."""
        return self.size_in_bits // 8

    def __len__(self) -> int:
        return self.total

    # -- operations ----------------------------------------------------------------------------
    def _check_room(self, n: int) -> None:
        if self.total + n > MAX_ITEMS:
            raise InvalidParameterError(
                f"A VerificationTable holds at most {MAX_ITEMS} values (int32 counts); it has "
                f"{self.total} and {n} more were given. Nothing was added.")

    def _insert(self, vals: np.ndarray, mult: np.ndarray, total: int) -> None:
        self._reserve(vals.shape[0])
        keys, counts = self._slots
        packed = int(MK.table_add(keys, counts, vals, mult, self._empty))
        self._used += packed >> 32
        self.distinct += packed & 0xFFFFFFFF
        self.total += total

    def add_many(self, vals: Any, mult: Any = None) -> None:
        """Add every value (``mult`` copies each, default 1). Complexity: O(len(vals)) expected."""
        a = _as_values(vals, self.key_bits)
        if a.size == 0:
            return
        mu = np.ones(a.size, np.int64) if mult is None else np.ascontiguousarray(mult, dtype=np.int64)
        if mu.shape != a.shape or (mu.size and int(mu.min()) < 1):
            raise InvalidParameterError("The 'mult' parameter of VerificationTable must be positive counts.")
        total = int(mu.sum())
        self._check_room(total)
        self._insert(a, mu, total)

    def _add_trusted(self, vals: np.ndarray) -> None:
        """add_many for a contiguous int64 array already known to be in range, after the
        caller's :meth:`_check_room` (no checks)."""
        n = vals.shape[0]
        self._insert(vals, np.ones(n, np.int64), n)

    def _contains_trusted(self, vals: np.ndarray, passed: np.ndarray) -> np.ndarray:
        """contains_many for contiguous int64 values already known to be in range."""
        keys, counts = self._slots
        return MK.table_contains_masked(keys, counts, vals, passed, self._empty)

    def count_many(self, vals: Any) -> np.ndarray:
        """Multiplicity of every value (int64, 0 if absent). Complexity: O(len(vals)) expected."""
        keys, counts = self._slots
        return MK.table_count(keys, counts, _as_values(vals), self._empty)

    def contains_many(self, vals: Any, passed: np.ndarray | None = None) -> np.ndarray:
        """Bool array: value present (and ``passed``, if given). Complexity: O(len(vals))."""
        a = _as_values(vals)
        p = np.ones(a.size, np.bool_) if passed is None else np.ascontiguousarray(passed, dtype=np.bool_)
        return self._contains_trusted(a, p)

    def remove_many(self, vals: Any) -> None:
        """Remove one copy of every value, all or nothing.

        Raises InvalidParameterError (table unchanged) if a value is not present often enough.
        Complexity: O(len(vals)) expected.
        """
        a = _as_values(vals)
        if a.size == 0:
            return
        keys, counts = self._slots
        bad = int(MK.table_remove(keys, counts, a, self._empty))
        if bad >= 0:
            raise InvalidParameterError(
                f"Verification value {int(a[bad])} is not stored (often enough) in the table; nothing was removed."
            )
        self.total -= int(a.size)
        # recount distinct for the values touched
        u = np.unique(a)
        self.distinct -= int(np.count_nonzero(self.count_many(u) == 0))
        if self.distinct < 0.25 * self._used and self._used > 4 * _MIN_CAP:
            self._rebuild(self.distinct)

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """(sorted distinct values, their counts), live entries only. Complexity: O(capacity log)."""
        keys, counts = self._slots
        live = (keys != self._empty) & (counts > 0)
        k = keys[live].astype(np.int64)
        c = counts[live].astype(np.int64)
        order = np.argsort(k, kind="stable")
        return k[order], c[order]

    @classmethod
    def from_items(cls, values: np.ndarray, counts: np.ndarray, key_bits: int = 64) -> VerificationTable:
        """Table holding ``counts[t]`` copies of ``values[t]`` (values distinct)."""
        v = _as_values(values, key_bits)
        c = np.ascontiguousarray(counts, dtype=np.int64).ravel()
        if c.shape != v.shape or (c.size and int(c.min()) < 1):
            raise InvalidParameterError("The 'counts' parameter of VerificationTable must be positive.")
        if v.size > 1 and not bool(np.all(np.diff(v) > 0)):
            raise InvalidParameterError("The 'values' parameter of VerificationTable must be strictly increasing.")
        t = cls(max(_MIN_CAP, 2 * v.size + 1), key_bits)
        t.add_many(v, c)
        return t

    @staticmethod
    def check_items(values: np.ndarray, counts: np.ndarray, vmax: int, num_items: int) -> None:
        """FormatError unless (values, counts) is a saved table: equal 1-D int64 shapes, values
        strictly increasing in [0, vmax], counts >= 1 summing to ``num_items``.

        Complexity: O(len(values))."""
        if values.dtype != np.int64 or counts.dtype != np.int64 or values.ndim != 1 or counts.shape != values.shape:
            raise FormatError("the 'values' and 'counts' arrays of a verification table must be int64 "
                              f"arrays of one shape; got {values.shape} and {counts.shape}")
        if values.size > MAX_ITEMS:
            raise FormatError(f"a verification table holds at most {MAX_ITEMS} values; the file has {values.size}")
        if not values.size:
            if num_items:
                raise FormatError(f"'num_items' is {num_items} but the verification table is empty")
            return
        if int(values.min()) < 0 or int(values.max()) > vmax:
            raise FormatError(f"the 'values' array holds a verification value outside [0, {vmax}]")
        if values.size > 1 and not bool(np.all(np.diff(values) > 0)):
            raise FormatError("the 'values' array is not strictly increasing")
        if int(counts.min()) < 1 or int(counts.max()) > MAX_ITEMS:
            raise FormatError(f"the 'counts' array must hold counts in [1, {MAX_ITEMS}]")
        total = int(counts.sum())  # < 2**31 values of < 2**31 each: no int64 overflow
        if total != num_items:
            raise FormatError(f"'num_items' is {num_items} but the verification table holds {total} values")

    def copy(self) -> VerificationTable:
        """An independent copy. Complexity: O(capacity)."""
        t = VerificationTable.__new__(VerificationTable)
        keys, counts = self._slots
        t._slots = (keys.copy(), counts.copy())
        t.key_bits, t._empty, t._vacant = self.key_bits, self._empty, self._vacant
        t._stats = self._stats.copy()
        return t

    def union(self, other: VerificationTable) -> VerificationTable:
        """Multiset union (max of the counts), Section 5.2. Complexity: O(n log n)."""
        ka, ca = self.items()
        kb, cb = other.items()
        keys = np.union1d(ka, kb)
        out = np.zeros(keys.size, np.int64)
        out[np.searchsorted(keys, ka)] = ca
        ib = np.searchsorted(keys, kb)
        out[ib] = np.maximum(out[ib], cb)
        return VerificationTable.from_items(keys, out, max(self.key_bits, other.key_bits))

    def intersection(self, other: VerificationTable) -> VerificationTable:
        """Multiset intersection (min of the counts), Section 5.2. Complexity: O(n log n)."""
        ka, ca = self.items()
        kb, cb = other.items()
        keys, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
        return VerificationTable.from_items(keys, np.minimum(ca[ia], cb[ib]), max(self.key_bits, other.key_bits))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VerificationTable):
            return NotImplemented
        ka, ca = self.items()
        kb, cb = other.items()
        return bool(np.array_equal(ka, kb) and np.array_equal(ca, cb))

    __hash__ = None  # type: ignore[assignment]

    def _check(self) -> None:
        """Assert the table's invariants (used by the tests after mutations)."""
        keys, counts = self._slots
        cap = keys.shape[0]
        if not (cap & (cap - 1) == 0 and cap >= _MIN_CAP and counts.shape == keys.shape):
            raise InvariantError("cap & (cap - 1) == 0 and cap >= _MIN_CAP and counts.shape == keys.shape")
        used = keys != self._empty
        if not (int(used.sum()) == self._used):
            raise InvariantError("int(used.sum()) == self._used")
        if not (self._used <= _MAX_LOAD * cap + 1):
            raise InvariantError("self._used <= _MAX_LOAD * cap + 1")
        if not (bool(np.all(counts[~used] == 0))):
            raise InvariantError("bool(np.all(counts[~used] == 0))")
        if not (bool(np.all(counts >= 0))):
            raise InvariantError("bool(np.all(counts >= 0))")
        live = used & (counts > 0)
        if not (int(live.sum()) == self.distinct):
            raise InvariantError("int(live.sum()) == self.distinct")
        if not (int(counts.sum(dtype=np.int64)) == self.total):
            raise InvariantError("int(counts.sum(dtype=np.int64)) == self.total")
        if not (keys.dtype == (np.uint32 if self.key_bits == 32 else np.int64)):
            raise InvariantError("keys.dtype == (np.uint32 if self.key_bits == 32 else np.int64)")
        if not (bool(np.all(keys[used].astype(np.int64) >= 0))):
            raise InvariantError("bool(np.all(keys[used].astype(np.int64) >= 0))")
        if not (int(MK.table_probe_ok(keys, self._empty)) == -1):
            raise InvariantError("unreachable or duplicate key")
