"""The document's SBF baseline (Section 6): a standard Bloom filter over the concatenated
attributes of an item.

"In order to make the multi-attribute operations feasible in the SBF, we can concatenate
multiple attributes into one parameter as the input to [the] hash functions." The concatenation
here is the canonical tuple encoding of :func:`bloomkit._engine.hashing.encode_key` (per attribute:
tag byte, 8-byte length, payload), used as a ``bytes`` key of :class:`bloomkit.BloomFilter`
(or :class:`bloomkit.CountingBloomFilter`), so it is unambiguous (("ab", "c") and ("a", "bc")
differ) and the batch path (vectorized for numeric columns) equals the single-item path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from .._engine.hashing import TAG_BOOL, TAG_FLOAT, TAG_INT, encode_key
from .._validation import Bool, check_int, param_error
from ..bloom import BloomFilter, CountingBloomFilter
from ..errors import InvalidParameterError
from .batches import as_columns

__all__ = ["ConcatenatedBloomFilter", "concat_key", "concat_keys"]

_OWNER = "ConcatenatedBloomFilter"


def concat_key(item: Sequence[Any]) -> bytes:
    """The concatenated key of one item: the payload of its canonical tuple encoding.

    >>> len(concat_key((1, 2.0)))
    34
    """
    return encode_key(tuple(item))[1]


def _fixed_part(col: np.ndarray) -> np.ndarray | None:
    """(n, w) uint8 encoding of a numeric column, or None if it needs the general path."""
    kind = col.dtype.kind
    n = col.shape[0]
    if kind == "b":
        tag, payload = TAG_BOOL, col.astype(np.uint8).reshape(n, 1)
    elif kind in "iu":
        if kind == "u" and n and int(col.max()) >= 1 << 63:
            return None
        payload = np.ascontiguousarray(col, dtype="<i8").view(np.uint8).reshape(n, 8)
        tag = TAG_INT
    elif kind == "f":
        f = np.ascontiguousarray(col, dtype="<f8")
        if np.isnan(f).any():
            raise InvalidParameterError("The 'data' parameter must not contain NaN attribute values.")
        payload = (f + 0.0).view(np.uint8).reshape(n, 8)
        tag = TAG_FLOAT
    else:
        return None
    w = payload.shape[1]
    head = np.zeros((n, 9), dtype=np.uint8)
    head[:, 0] = tag
    head[:, 1] = w
    return np.hstack([head, payload])


def concat_keys(data: Any, num_attributes: int) -> pa.Array:
    """Concatenated keys of a batch of items: rows or p columns (:mod:`bloomkit.multiattr.batches`;
    a named table is refused: the concatenation has no attribute names to read it by).

    Returns a pyarrow binary array whose i-th element is ``concat_key(item_i)``; numeric numpy
    columns are encoded without a Python loop. Complexity: O(n p).
    """
    cols = as_columns(data, num_attributes, owner=_OWNER)
    parts = [_fixed_part(c) if isinstance(c, np.ndarray) else None for c in cols]
    if all(p is not None for p in parts):
        rows = np.ascontiguousarray(np.hstack(parts))  # type: ignore[arg-type]
        n, w = rows.shape
        offsets = np.arange(n + 1, dtype=np.int64) * w
        typ = pa.large_binary() if n * w >= 1 << 31 else pa.binary()
        off = offsets if typ == pa.large_binary() else offsets.astype(np.int32)
        return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(off), pa.py_buffer(rows)])
    lists = [c.to_pylist() if isinstance(c, pa.Array | pa.ChunkedArray)
             else (c.tolist() if isinstance(c, np.ndarray) else list(c)) for c in cols]
    return pa.array([concat_key(row) for row in zip(*lists, strict=True)], type=pa.binary())


class ConcatenatedBloomFilter:
    """Standard Bloom filter over concatenated attributes (the SBF of Section 6).

    Parameters
    ----------
    num_attributes : int
        p, attributes per item.
    capacity, fpr, num_bits, num_hashes, seed
        As for :class:`bloomkit.BloomFilter`.
    counting : bool
        Use a :class:`bloomkit.CountingBloomFilter` (supports :meth:`remove`).
    counter_bits : int
        Counter width of the counting variant.

    Examples
    --------
    >>> s = ConcatenatedBloomFilter(2, num_bits=1024, num_hashes=4)
    >>> s.add(("a", 1)); ("a", 1) in s
    True
    """

    def __init__(
        self,
        num_attributes: int,
        capacity: int | None = None,
        fpr: float | None = None,
        *,
        num_bits: int | None = None,
        num_hashes: int | None = None,
        seed: int = 0,
        counting: bool = False,
        counter_bits: int = 4,
    ) -> None:
        self.num_attributes = check_int(num_attributes, "num_attributes", _OWNER, lo=1, hi=64)
        counting = Bool()(counting, "counting", _OWNER)
        if counting:
            self.filter: BloomFilter = CountingBloomFilter(
                capacity, fpr, num_bits=num_bits, num_hashes=num_hashes, seed=seed,
                counter_bits=counter_bits)
        else:
            self.filter = BloomFilter(capacity, fpr, num_bits=num_bits, num_hashes=num_hashes, seed=seed)
        self.counting = bool(counting)

    def _key(self, item: Any) -> bytes:
        if not isinstance(item, tuple | list) or len(item) != self.num_attributes:
            raise param_error("item", _OWNER, f"a tuple of {self.num_attributes} attribute values", item)
        return concat_key(item)

    @property
    def size_in_bits(self) -> int:
        """Bits of the filter's payload (m bits, or m counters of ``counter_bits``)."""
        return self.filter.size_in_bits

    def add(self, item: Sequence[Any]) -> None:
        """Insert one item. Complexity: O(k + p)."""
        self.filter.add(self._key(item))

    def __contains__(self, item: Any) -> bool:
        """Membership of one item. Complexity: O(k + p)."""
        return self._key(item) in self.filter

    def remove(self, item: Sequence[Any]) -> None:
        """Remove one item (counting variant only). Complexity: O(k + p)."""
        if not isinstance(self.filter, CountingBloomFilter):
            raise InvalidParameterError("Only a counting ConcatenatedBloomFilter supports remove().")
        self.filter.remove(self._key(item))

    def add_many(self, data: Any) -> None:
        """Insert a batch of items (rows or p columns, :func:`concat_keys`). Complexity: O(n (k + p))."""
        self.filter.add_many(concat_keys(data, self.num_attributes))

    def contains_many(self, data: Any) -> np.ndarray:
        """Bool array: membership of every item of a batch. Complexity: O(n (k + p))."""
        return self.filter.contains_many(concat_keys(data, self.num_attributes))

    def predicted_fpr(self, num_items: float | None = None) -> float:
        """Eq. (2) of the classic filter for ``num_items`` (default: the estimated count)."""
        return self.filter.predicted_fpr(num_items)
