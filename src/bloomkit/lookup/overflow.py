"""The exact side tables of the Geometric filter (its overflow table and its pinned keys).

The thesis keeps the overflow table as a sequential file of key-value pairs (Section 3.1,
Algorithm 4 "search overflow-table for x"). Here it is a hash map keyed by the key's 128-bit
identity ``(h1, hb)``: ``h1`` is the foundation's XXH64 of the key (the filter's own hash)
and ``hb`` an XXH64 of the same key under a second seed. Two different keys share an
identity with probability 2^-128 per pair; no key bytes are stored, so the table persists
as three arrays sorted by identity. A sorted copy of the ``h1`` column lets the numba query
kernel reject absent keys without leaving the kernel; only keys whose ``h1`` is present are
confirmed with ``hb`` in Python.

Thread safety: ``get`` / ``in`` / ``len`` read without a lock (single dict operations are
atomic); ``set`` / ``pop`` and the rebuild of the sorted h1 column take the table's lock, so a
reader never caches a column older than a write it could have missed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from .._engine.hashing import hash64
from ..errors import FormatError

__all__ = ["ExactTable", "alt_seed", "identity"]

_ALT = 0x6A09E667F3BCC908
_MASK = (1 << 64) - 1


def alt_seed(seed: int) -> int:
    """Seed of the second, independent key hash ``hb``."""
    return (seed ^ _ALT) & _MASK


def identity(key: Any, seed: int) -> tuple[int, int]:
    """(h1, hb) of one key."""
    return hash64(key, seed), hash64(key, alt_seed(seed))


class ExactTable:
    """Exact map from a key identity (h1, hb) to a value, with a sorted h1 column."""

    def __init__(self) -> None:
        self._d: dict[tuple[int, int], int] = {}
        self._h1: np.ndarray | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, ident: tuple[int, int]) -> bool:
        return ident in self._d

    def get(self, ident: tuple[int, int], default: int = 0) -> int:
        return self._d.get(ident, default)

    def set(self, ident: tuple[int, int], value: int) -> None:
        with self._lock:
            self._d[ident] = int(value)
            self._h1 = None

    def pop(self, ident: tuple[int, int]) -> int | None:
        with self._lock:
            v = self._d.pop(ident, None)
            if v is not None:
                self._h1 = None
        return v

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self._h1 = None

    def copy(self) -> ExactTable:
        out = ExactTable()
        with self._lock:
            out._d = dict(self._d)
        return out

    def items(self) -> Iterator[tuple[tuple[int, int], int]]:
        with self._lock:
            return iter(list(self._d.items()))

    def sorted_h1(self) -> np.ndarray:
        """The h1 column, sorted (cached until the next mutation)."""
        h = self._h1
        if h is None:
            with self._lock:
                if self._h1 is None:
                    keys = list(self._d)
                    self._h1 = np.sort(np.fromiter((k[0] for k in keys), dtype=np.uint64, count=len(keys)))
                h = self._h1
        return h

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        """``<prefix>_h1``, ``<prefix>_hb`` (uint64) and ``<prefix>_val`` (uint64), sorted by identity."""
        with self._lock:
            items = sorted(self._d.items())
        n = len(items)
        h1 = np.fromiter((k[0] for k, _v in items), dtype=np.uint64, count=n)
        hb = np.fromiter((k[1] for k, _v in items), dtype=np.uint64, count=n)
        val = np.fromiter((v for _k, v in items), dtype=np.uint64, count=n)
        return {f"{prefix}_h1": h1, f"{prefix}_hb": hb, f"{prefix}_val": val}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], prefix: str, max_value: int, owner: str) -> ExactTable:
        """Inverse of :meth:`to_arrays`; FormatError naming the array for unequal lengths,
        identities out of order or repeated, values outside [1, max_value] or of another dtype
        than uint64."""
        h1 = arrays[f"{prefix}_h1"]
        hb = arrays[f"{prefix}_hb"]
        val = arrays[f"{prefix}_val"]
        if not len(h1) == len(hb) == len(val):
            raise FormatError(
                f"the '{prefix}_*' arrays of {owner} have different lengths ({len(h1)}, {len(hb)}, {len(val)})"
            )
        if val.dtype != np.dtype(np.uint64):
            raise FormatError(f"the '{prefix}_val' array of {owner} must be uint64; got {val.dtype}")
        if len(val) and (int(val.min()) < 1 or int(val.max()) > max_value):
            raise FormatError(f"the '{prefix}_val' array of {owner} holds values outside [1, {max_value}]")
        if len(h1) > 1:
            a, b = h1[:-1], h1[1:]
            if not bool(((a < b) | ((a == b) & (hb[:-1] < hb[1:]))).all()):
                raise FormatError(f"the '{prefix}_h1' / '{prefix}_hb' arrays of {owner} are not strictly "
                                  "increasing (out of order, or a key twice)")
        t = cls()
        t._d = {(a, b): v for a, b, v in zip(h1.tolist(), hb.tolist(), val.tolist(), strict=True)}
        return t
