"""The exact side tables of the Geometric filter and the input helpers shared by the module.

The thesis keeps the overflow table as a sequential file of key-value pairs (Section 3.1,
Algorithm 4 "search overflow-table for x"). Here it is a hash map keyed by the key's 128-bit
identity ``(h1, hb)``: ``h1`` is the foundation's XXH64 of the key (the filter's own hash)
and ``hb`` an XXH64 of the same key under a second seed. Two different keys share an
identity with probability 2^-128 per pair; no key bytes are stored, so the table persists
as three arrays. A sorted copy of the ``h1`` column lets the numba query kernel reject
absent keys without leaving the kernel; only keys whose ``h1`` is present are confirmed
with ``hb`` in Python.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from .._hashing import hash64, hash_many
from .._validation import check_choice
from ..errors import FormatError, InvalidParameterError

__all__ = ["ExactTable", "alt_seed", "iter_chunks", "key_count", "normalize_input", "subset_keys"]

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

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, ident: tuple[int, int]) -> bool:
        return ident in self._d

    def get(self, ident: tuple[int, int], default: int = 0) -> int:
        return self._d.get(ident, default)

    def set(self, ident: tuple[int, int], value: int) -> None:
        self._d[ident] = int(value)
        self._h1 = None

    def pop(self, ident: tuple[int, int]) -> int | None:
        v = self._d.pop(ident, None)
        if v is not None:
            self._h1 = None
        return v

    def items(self) -> Iterator[tuple[tuple[int, int], int]]:
        return iter(self._d.items())

    def sorted_h1(self) -> np.ndarray:
        """The h1 column, sorted (cached until the next mutation)."""
        if self._h1 is None:
            self._h1 = np.sort(np.fromiter((k[0] for k in self._d), dtype=np.uint64, count=len(self._d)))
        return self._h1

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        n = len(self._d)
        h1 = np.fromiter((k[0] for k in self._d), dtype=np.uint64, count=n)
        hb = np.fromiter((k[1] for k in self._d), dtype=np.uint64, count=n)
        val = np.fromiter(self._d.values(), dtype=np.int64, count=n)
        order = np.lexsort((hb, h1))
        return {f"{prefix}_h1": h1[order], f"{prefix}_hb": hb[order], f"{prefix}_val": val[order]}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], prefix: str, max_value: int) -> ExactTable:
        try:
            h1 = arrays[f"{prefix}_h1"]
            hb = arrays[f"{prefix}_hb"]
            val = arrays[f"{prefix}_val"]
        except KeyError as e:
            raise FormatError(f"missing array {e}") from None
        if not (h1.dtype == np.uint64 and hb.dtype == np.uint64 and val.dtype == np.int64):
            raise FormatError(f"{prefix} arrays have the wrong dtypes")
        if not (h1.ndim == hb.ndim == val.ndim == 1 and len(h1) == len(hb) == len(val)):
            raise FormatError(f"{prefix} arrays have inconsistent shapes")
        if len(val) and (val.min() < 1 or val.max() > max_value):
            raise FormatError(f"{prefix} values outside [1, {max_value}]")
        t = cls()
        t._d = {(int(a), int(b)): int(v) for a, b, v in zip(h1.tolist(), hb.tolist(), val.tolist(), strict=True)}
        if len(t._d) != len(h1):
            raise FormatError(f"{prefix} table holds a key twice")
        return t


def key_count(keys: Any, owner: str) -> int:
    """len(keys), refusing single keys and unsized iterables."""
    if isinstance(keys, str | bytes):
        raise InvalidParameterError(
            f"The 'keys' parameter of {owner} must be a collection of keys, not a single "
            f"{type(keys).__name__}. Got {keys!r} instead."
        )
    try:
        return len(keys)
    except TypeError:
        raise InvalidParameterError(
            f"The 'keys' parameter of {owner} must be a sized collection (list, tuple, numpy or "
            f"pyarrow array, mapping). Got {type(keys).__name__} instead."
        ) from None


def subset_keys(keys: Any, idx: np.ndarray) -> Any:
    """keys[idx] for lists, tuples, numpy and pyarrow arrays."""
    if isinstance(keys, np.ndarray):
        return keys[idx]
    if isinstance(keys, pa.Array | pa.ChunkedArray):
        return keys.take(pa.array(idx, type=pa.int64()))
    return [keys[int(i)] for i in idx]


def slice_keys(keys: Any, start: int, stop: int) -> Any:
    if isinstance(keys, pa.Array | pa.ChunkedArray):
        return keys.slice(start, stop - start)
    return keys[start:stop]


def _values_error(owner: str, value_bits: int, got: Any, index: int) -> InvalidParameterError:
    hi = (1 << value_bits) - 1
    return InvalidParameterError(
        f"The 'values' parameter of {owner} must hold integers in [1, {hi}] (V = {value_bits}). "
        f"Got {got!r} at index {index} instead."
    )


def check_values(values: Any, value_bits: int, owner: str, offset: int = 0) -> np.ndarray:
    """Values as int64, each an integer in [1, 2^V - 1]; the first bad one is named."""
    if isinstance(values, pa.Array | pa.ChunkedArray):
        values = values.to_numpy(zero_copy_only=False)
    hi = (1 << value_bits) - 1
    if isinstance(values, np.ndarray):
        arr = values
        if arr.ndim != 1:
            raise InvalidParameterError(
                f"The 'values' parameter of {owner} must be one-dimensional. Got shape {arr.shape} instead."
            )
        if arr.dtype.kind not in "iuO":
            items = arr.tolist()
            bad = next((i for i, v in enumerate(items) if not float(v).is_integer()), 0) if arr.dtype.kind == "f" else 0
            raise _values_error(owner, value_bits, items[bad] if items else arr.dtype, offset + bad)
        if arr.dtype.kind == "O":
            values = arr.tolist()
    if not isinstance(values, np.ndarray):
        items = list(values)
        for i, v in enumerate(items):
            if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer):
                raise _values_error(owner, value_bits, v, offset + i)
            if not 1 <= int(v) <= hi:
                raise _values_error(owner, value_bits, v, offset + i)
        return np.asarray(items, dtype=np.int64) if items else np.zeros(0, np.int64)
    arr = values
    if len(arr) == 0:
        return np.zeros(0, np.int64)
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8:
        bad_mask = (arr < 1) | (arr > np.uint64(hi))
    else:
        bad_mask = (arr < 1) | (arr > hi)
    if bad_mask.any():
        i = int(np.flatnonzero(bad_mask)[0])
        raise _values_error(owner, value_bits, arr[i].item(), offset + i)
    return arr.astype(np.int64, copy=False)


def normalize_input(keys: Any, values: Any, owner: str, on_duplicate: str) -> tuple[Any, Any, int]:
    """(keys, values, n) after the checks every build shares: mapping or two equal-length
    collections, non-empty, a known on_duplicate policy."""
    check_choice(on_duplicate, "on_duplicate", owner, ("error", "last"))
    if values is None:
        if not isinstance(keys, Mapping):
            raise InvalidParameterError(
                f"The 'values' parameter of {owner} must be given unless 'keys' is a mapping. "
                f"Got None instead."
            )
        values = list(keys.values())
        keys = list(keys.keys())
    elif isinstance(keys, Mapping):
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} must be None when 'keys' is a mapping. Got {type(values).__name__} instead."
        )
    n = key_count(keys, owner)
    if isinstance(values, str | bytes) or not hasattr(values, "__len__"):
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} must be a sized collection of integers. Got {type(values).__name__} instead."
        )
    if len(values) != n:
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} must have as many entries as 'keys' ({n}). "
            f"Got {len(values)} instead."
        )
    if n == 0:
        raise InvalidParameterError(f"The 'keys' parameter of {owner} must not be empty. Got 0 keys instead.")
    return keys, values, n


def iter_chunks(keys: Any, values: Any, n: int, chunk: int) -> Iterator[tuple[int, Any, Any]]:
    """(start, keys[start:stop], values[start:stop]) for consecutive chunks."""
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        yield s, slice_keys(keys, s, e), slice_keys(values, s, e)


def hash_chunk(keys: Any, seed: int) -> np.ndarray:
    return hash_many(keys, seed)
