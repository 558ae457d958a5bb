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

from ..errors import FormatError, InvalidParameterError
from . import _kernels as MK

__all__ = ["VerificationTable"]

_MAX_LOAD = 0.7
_MIN_CAP = 16


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
    """

    __slots__ = ("_counts", "_empty", "_keys", "_used", "distinct", "key_bits", "total")

    def __init__(self, capacity: int = _MIN_CAP, key_bits: int = 64) -> None:
        if key_bits not in (32, 64):
            raise InvalidParameterError(f"The 'key_bits' parameter of VerificationTable must be 32 or 64. Got {key_bits!r} instead.")
        self.key_bits = key_bits
        self._empty = np.uint32(0xFFFFFFFF) if key_bits == 32 else np.int64(-1)
        cap = _capacity_for(int(capacity * 0.6))
        self._keys = np.full(cap, self._empty, dtype=self._empty.dtype)
        self._counts = np.zeros(cap, dtype=np.int32)
        self._used = 0  # slots holding a key (live or count 0)
        self.distinct = 0  # keys with count > 0
        self.total = 0

    # -- sizing --------------------------------------------------------------------------------
    def _rebuild(self, live_hint: int) -> None:
        cap = _capacity_for(live_hint)
        keys = np.full(cap, self._empty, dtype=self._empty.dtype)
        counts = np.zeros(cap, dtype=np.int32)
        moved = int(MK.table_rehash(self._keys, self._counts, keys, counts, self._empty))
        self._keys, self._counts = keys, counts
        self._used = moved
        self.distinct = moved

    def _reserve(self, extra: int) -> None:
        if self._used + extra > _MAX_LOAD * self._keys.shape[0]:
            self._rebuild(self.distinct + extra)

    @property
    def nbytes(self) -> int:
        """Bytes held by the table's arrays."""
        return int(self._keys.nbytes + self._counts.nbytes)

    def __len__(self) -> int:
        return self.total

    # -- operations ----------------------------------------------------------------------------
    def add_many(self, vals: Any, mult: Any = None) -> None:
        """Add every value (``mult`` copies each, default 1). Complexity: O(len(vals)) expected."""
        a = _as_values(vals, self.key_bits)
        if a.size == 0:
            return
        mu = np.ones(a.size, np.int64) if mult is None else np.ascontiguousarray(mult, dtype=np.int64)
        if mu.shape != a.shape or (mu.size and int(mu.min()) < 1):
            raise InvalidParameterError("The 'mult' parameter of VerificationTable must be positive counts.")
        if self.total + int(mu.sum()) >= 1 << 31:
            raise InvalidParameterError("VerificationTable holds fewer than 2**31 values (int32 counts).")
        self._reserve(a.size)
        packed = int(MK.table_add(self._keys, self._counts, a, mu, self._empty))
        self._used += packed >> 32
        self.distinct += packed & 0xFFFFFFFF
        self.total += int(mu.sum())

    def _add_trusted(self, vals: np.ndarray) -> None:
        """add_many for a contiguous int64 array already known to be in range (no checks)."""
        n = vals.shape[0]
        if self.total + n >= 1 << 31:
            raise InvalidParameterError("VerificationTable holds fewer than 2**31 values (int32 counts).")
        self._reserve(n)
        packed = int(MK.table_add(self._keys, self._counts, vals, np.ones(n, np.int64), self._empty))
        self._used += packed >> 32
        self.distinct += packed & 0xFFFFFFFF
        self.total += n

    def _contains_trusted(self, vals: np.ndarray, passed: np.ndarray) -> np.ndarray:
        """contains_many for contiguous int64 values already known to be in range."""
        return MK.table_contains_masked(self._keys, self._counts, vals, passed, self._empty)

    def count_many(self, vals: Any) -> np.ndarray:
        """Multiplicity of every value (int64, 0 if absent). Complexity: O(len(vals)) expected."""
        return MK.table_count(self._keys, self._counts, _as_values(vals), self._empty)

    def contains_many(self, vals: Any, passed: np.ndarray | None = None) -> np.ndarray:
        """Bool array: value present (and ``passed``, if given). Complexity: O(len(vals))."""
        a = _as_values(vals)
        p = np.ones(a.size, np.bool_) if passed is None else np.ascontiguousarray(passed, dtype=np.bool_)
        return MK.table_contains_masked(self._keys, self._counts, a, p, self._empty)

    def remove_many(self, vals: Any) -> None:
        """Remove one copy of every value, all or nothing.

        Raises InvalidParameterError (table unchanged) if a value is not present often enough.
        Complexity: O(len(vals)) expected.
        """
        a = _as_values(vals)
        if a.size == 0:
            return
        bad = int(MK.table_remove(self._keys, self._counts, a, self._empty))
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
        live = (self._keys != self._empty) & (self._counts > 0)
        k = self._keys[live].astype(np.int64)
        c = self._counts[live].astype(np.int64)
        order = np.argsort(k, kind="stable")
        return k[order], c[order]

    @classmethod
    def from_items(cls, values: np.ndarray, counts: np.ndarray, key_bits: int = 64) -> VerificationTable:
        """Table holding ``counts[t]`` copies of ``values[t]`` (values distinct)."""
        v = _as_values(values)
        c = np.ascontiguousarray(counts, dtype=np.int64).ravel()
        if c.shape != v.shape or (c.size and int(c.min()) < 1):
            raise InvalidParameterError("The 'counts' parameter of VerificationTable must be positive.")
        if v.size > 1 and not bool(np.all(np.diff(v) > 0)):
            raise InvalidParameterError("The 'values' parameter of VerificationTable must be strictly increasing.")
        t = cls(max(_MIN_CAP, 2 * v.size + 1), key_bits)
        t.add_many(v, c)
        return t

    def copy(self) -> VerificationTable:
        """An independent copy. Complexity: O(capacity)."""
        t = VerificationTable.__new__(VerificationTable)
        t._keys = self._keys.copy()
        t._counts = self._counts.copy()
        t.key_bits, t._empty = self.key_bits, self._empty
        t._used, t.distinct, t.total = self._used, self.distinct, self.total
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
        cap = self._keys.shape[0]
        assert cap & (cap - 1) == 0 and cap >= _MIN_CAP
        used = self._keys != self._empty
        assert int(used.sum()) == self._used
        assert self._used <= _MAX_LOAD * cap + 1
        assert bool(np.all(self._counts[~used] == 0))
        assert bool(np.all(self._counts >= 0))
        live = used & (self._counts > 0)
        assert int(live.sum()) == self.distinct
        assert int(self._counts.sum(dtype=np.int64)) == self.total
        assert self._keys.dtype == (np.uint32 if self.key_bits == 32 else np.int64)
        assert bool(np.all(self._keys[used].astype(np.int64) >= 0))
        assert int(MK.table_probe_ok(self._keys, self._empty)) == -1, "unreachable or duplicate key"

    @staticmethod
    def _validate_items(values: np.ndarray, counts: np.ndarray, vmax: int) -> None:
        """FormatError unless (values, counts) is a valid persisted table with values <= vmax."""
        if values.dtype != np.int64 or counts.dtype != np.int64 or values.ndim != 1 or counts.shape != values.shape:
            raise FormatError("verification table arrays have the wrong dtype or shape")
        if values.size:
            if int(values.min()) < 0 or int(values.max()) > vmax:
                raise FormatError("verification value out of range")
            if values.size > 1 and not bool(np.all(np.diff(values) > 0)):
                raise FormatError("verification values are not strictly increasing")
            if int(counts.min()) < 1:
                raise FormatError("verification counts must be positive")
