"""Parquet's PLAIN encoding of column values and its hashes (XXH64, seed 0): what a Parquet
writer inserts into a split-block Bloom filter (parquet-format BloomFilter.md), and Arrow's
sizing of the bitset (:func:`optimal_num_bytes`). The split-block filter's Parquet mode
hashes through this module; :mod:`bloomkit.parquet` reads files with it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._engine.columns import KeyBatch, as_keys
from .._engine.hashing import TAG_BYTES, TAG_FLOAT, TAG_INT, TAG_STR, arrow_buffers
from .._engine.lazy import kernels as K
from .._validation import FPR, Int, Optional, Options, safe_repr
from ..errors import InvalidParameterError

__all__ = ["MAX_BLOOM_FILTER_BYTES", "PHYSICAL_TYPES", "optimal_num_bytes", "plain_hashes", "plain_source",
           "plain_values"]

PHYSICAL_TYPES = ("INT32", "INT64", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")
MAX_BLOOM_FILTER_BYTES = 128 * 1024 * 1024
"""Arrow's largest bitset (kMaximumBloomFilterBytes); this reader accepts up to 2**31 - 32."""
_MIN_BYTES = 32
_SEED0 = np.uint64(0)


def _pa() -> Any:
    import pyarrow

    return pyarrow


# ---------------------------------------------------------------------------------------------
# sizing (Arrow's BlockSplitBloomFilter::OptimalNumOfBytes)


def optimal_num_bytes(ndv: int, fpp: float) -> int:
    """The bitset size Arrow chooses for ``ndv`` distinct values at rate ``fpp``:
    ``m = -8 ndv / ln(1 - fpp^(1/8))`` bits (BloomFilter.md, "Sizing an SBBF"), truncated,
    at least 256, rounded up to a power of two, at most 2**30 bits (128 MiB).

    >>> optimal_num_bytes(10_000, 0.01), optimal_num_bytes(1_048_576, 0.05)
    (16384, 1048576)
    """
    n = Int(0, (1 << 32) - 1)(ndv, "ndv", "optimal_num_bytes")
    p = FPR(fpp, "fpp", "optimal_num_bytes")
    lane = -math.log1p(-(p ** (1.0 / 8)))  # ln(1 - fpp^(1/8)) without cancelling at tiny fpp
    top = MAX_BLOOM_FILTER_BYTES << 3
    m = 8.0 * n / lane if lane > 0 else float(top)
    bits = top if (m < 0 or m > top) else int(m)
    bits = max(bits, _MIN_BYTES << 3)
    if bits & (bits - 1):
        bits = 1 << bits.bit_length()
    return min(bits, top) >> 3


# ---------------------------------------------------------------------------------------------
# values -> PLAIN encoding -> hashes

_DEFAULT_TYPES: dict[str, Callable[[Any, int | None], Any]] = {
    "INT32": lambda pa, L: pa.int32(), "INT64": lambda pa, L: pa.int64(), "FLOAT": lambda pa, L: pa.float32(),
    "DOUBLE": lambda pa, L: pa.float64(), "BYTE_ARRAY": lambda pa, L: pa.binary(),
    "FIXED_LEN_BYTE_ARRAY": lambda pa, L: pa.binary(L),
}


def _kind(t: Any) -> str:
    """The kind of an arrow type: int, float, float16, bytes, fixed, decimal or other."""
    pa = _pa()
    if pa.types.is_integer(t) or pa.types.is_temporal(t):
        return "int"
    if pa.types.is_float16(t):
        return "float16"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_fixed_size_binary(t):
        return "fixed"
    if pa.types.is_decimal(t):
        return "decimal"
    if (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or getattr(pa.types, "is_string_view", lambda _t: False)(t)
            or getattr(pa.types, "is_binary_view", lambda _t: False)(t)):
        return "bytes"
    return "other"


_ACCEPTS = {"INT32": {"int"}, "INT64": {"int"}, "FLOAT": {"float", "int"}, "DOUBLE": {"float", "int"},
            "BYTE_ARRAY": {"bytes"}, "FIXED_LEN_BYTE_ARRAY": {"fixed", "bytes", "float16", "decimal"}}
def _py_kinds(target: Any) -> tuple[type, ...] | None:
    """The Python types a list may hold for a column of arrow type ``target`` (None: let
    pyarrow judge, e.g. dates, timestamps, decimals)."""
    pa = _pa()
    if pa.types.is_integer(target):
        return (int, np.integer)
    if pa.types.is_floating(target):
        return (int, float, np.integer, np.floating)
    if _kind(target) in ("bytes", "fixed"):
        return (str, bytes)
    return None


def _wrong(name: str, owner: str, ptype: str, target: Any, got: str) -> InvalidParameterError:
    return InvalidParameterError(
        f"The {name!r} parameter of {owner} must hold values of the column's type ({ptype}, arrow type "
        f"{target}). Got {got} instead."
    )


def _as_arrow(values: Any, ptype: str, target: Any, explicit: bool, name: str, owner: str) -> Any:
    """``values`` as one pyarrow array of a kind ``ptype`` stores, cast to ``target`` when the
    kinds agree; InvalidParameterError for another kind or nulls."""
    pa = _pa()
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    if isinstance(values, pa.Array):
        arr = values.dictionary_decode() if pa.types.is_dictionary(values.type) else values
    elif isinstance(values, np.ndarray) and values.ndim == 2 and values.dtype == np.uint8:
        rows = np.ascontiguousarray(values)
        arr = pa.FixedSizeBinaryArray.from_buffers(pa.binary(rows.shape[1]), len(rows),
                                                   [None, pa.py_buffer(rows.tobytes())])
    elif isinstance(values, np.ndarray) and values.ndim != 1:
        raise _wrong(name, owner, ptype, target, f"a numpy array of shape {values.shape} (one value per row: "
                                                 "1-D, or 2-D uint8 rows of FIXED_LEN_BYTE_ARRAY bytes)")
    elif isinstance(values, np.ndarray) and values.dtype.kind in "iufSUmM":
        arr = pa.array(values, from_pandas=values.dtype.kind in "mM")  # NaT is a null
    elif type(values).__module__.split(".")[0] == "pandas" and getattr(values, "dtype", None) is not None \
            and getattr(values.dtype, "kind", "") in "mM":  # timestamps / durations, by position
        return _as_arrow(np.asarray(values.to_numpy()), ptype, target, explicit, name, owner)
    else:
        col = as_keys(values, name, owner)  # pandas / polars / iterables, by position
        if isinstance(col, np.ndarray) and col.dtype.kind not in "iufSUmM" and not (
                col.ndim == 2 and col.dtype == np.uint8):
            raise _wrong(name, owner, ptype, target, f"a numpy array of dtype {col.dtype}")
        if not isinstance(col, list):
            return _as_arrow(col, ptype, target, explicit, name, owner)
        allowed = _py_kinds(target)
        bad = {t for t in set(map(type, col)) if t is type(None) or (allowed is not None and (
            issubclass(t, bool | np.bool_) or not issubclass(t, allowed)))}
        if bad:  # the first offending value, for the message
            i, v = next((i, v) for i, v in enumerate(col) if type(v) in bad)
            if v is None:
                raise InvalidParameterError(
                    f"The {name!r} parameter of {owner} must not contain nulls (Parquet never stores "
                    f"them in a Bloom filter). Got None at position {i} instead.")
            raise _wrong(name, owner, ptype, target, f"{safe_repr(v)} of type {type(v).__name__} at position {i}")
        try:
            arr = pa.array(col, type=target)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as e:
            raise _wrong(name, owner, ptype, target, f"values that do not convert ({e})") from None
    if arr.null_count:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must not contain nulls (Parquet never stores them in a "
            f"Bloom filter). Got {arr.null_count} null(s) instead.")
    if pa.types.is_date64(arr.type) and ptype == "INT32":  # pyarrow writes date64 as DATE (days)
        arr = arr.cast(pa.date32())
    kind = _kind(arr.type)
    if kind not in _ACCEPTS[ptype]:
        raise _wrong(name, owner, ptype, target, f"an array of type {arr.type}")
    # numbers are cast to the column's type (by value, overflow and truncation refused) unless
    # no column type is known and they already have the physical type's width
    if kind in ("int", "float") and arr.type != target and (explicit or not _fits(arr.type, ptype)):
        try:
            arr = arr.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise _wrong(name, owner, ptype, target, f"values that do not convert ({e})") from None
    return arr


def _fits(t: Any, ptype: str) -> bool:
    """True if arrow type ``t`` is stored as ``ptype`` as it is (uint32 / date32 as INT32, ...)."""
    pa = _pa()
    if ptype in ("INT32", "INT64"):
        return bool(t.bit_width <= (32 if ptype == "INT32" else 64))
    return bool(t == (pa.float32() if ptype == "FLOAT" else pa.float64()))


def plain_values(
    values: Any,
    physical_type: str,
    type_length: int | None = None,
    arrow_type: Any = None,
    *,
    name: str = "values",
    owner: str = "plain_values",
) -> Any:
    """``values`` in the PLAIN encoding of ``physical_type``: an int32 / int64 / float32 /
    float64 numpy array, (n, type_length) uint8 rows, or a pyarrow large_binary array.

    ``arrow_type`` is the column's arrow type (what pyarrow wrote: uint32 and date32 columns
    are INT32, timestamps INT64 in their unit, decimals FIXED_LEN_BYTE_ARRAY big-endian);
    without it, the physical type's own (int32, int64, float32, float64, binary,
    fixed_size_binary). Lists, numpy, pyarrow, pandas and polars are accepted, by position.

    Complexity: O(n).
    """
    pa = _pa()
    if not isinstance(name, str) or not isinstance(owner, str):
        raise InvalidParameterError("The 'name' and 'owner' parameters of plain_values must be str (for messages). "
                                    f"Got {type(name).__name__} and {type(owner).__name__} instead.")
    ptype = Options(*PHYSICAL_TYPES)(physical_type, "physical_type", owner)
    type_length = Optional(Int(1, 1 << 31))(type_length, "type_length", owner)
    if arrow_type is not None and not isinstance(arrow_type, pa.DataType):
        raise InvalidParameterError(f"The 'arrow_type' parameter of {owner} must be None or a pyarrow DataType. "
                                    f"Got {type(arrow_type).__name__} instead.")
    target = arrow_type if arrow_type is not None else _DEFAULT_TYPES[ptype](pa, type_length)
    arr = _as_arrow(values, ptype, target, arrow_type is not None, name, owner)
    t = arr.type
    if ptype in ("INT32", "INT64"):
        width = 32 if ptype == "INT32" else 64
        itype = pa.int32() if width == 32 else pa.int64()
        if t.bit_width == width:
            arr = arr.view(itype)
        else:
            try:  # narrower types widen by value (Parquet stores uint8 200 as INT32 200)
                arr = arr.cast(itype)
            except pa.ArrowInvalid as e:
                raise _wrong(name, owner, ptype, target, f"values out of its range ({e})") from None
        return arr.to_numpy()
    if ptype in ("FLOAT", "DOUBLE"):
        return arr.cast(pa.float32() if ptype == "FLOAT" else pa.float64()).to_numpy()
    if ptype == "BYTE_ARRAY":
        return arr.cast(pa.large_binary())
    L = type_length if type_length is not None else getattr(t, "byte_width", None)
    if L is None:
        raise InvalidParameterError(f"{owner} needs the type_length of a FIXED_LEN_BYTE_ARRAY column.")
    n = len(arr)
    if pa.types.is_decimal(t):  # PLAIN: the unscaled value, big-endian two's complement, L bytes
        width = t.byte_width
        raw = np.frombuffer(arr.buffers()[1], np.uint8, count=n * width, offset=arr.offset * width)
        return np.ascontiguousarray(raw.reshape(n, width)[:, ::-1][:, width - L:])
    if _kind(t) == "bytes":
        try:
            arr = arr.cast(pa.binary(L))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise _wrong(name, owner, ptype, target, f"values that are not {L} bytes long ({e})") from None
    width = (t.bit_width // 8) if pa.types.is_float16(t) else arr.type.byte_width
    if width != L:
        raise _wrong(name, owner, ptype, target, f"values of {width} bytes")
    raw = np.frombuffer(arr.buffers()[1], np.uint8, count=n * L, offset=arr.offset * L)
    return raw.reshape(n, L)


def _hash_plain(phys: Any, ptype: str) -> np.ndarray:
    """XXH64 (seed 0) of every PLAIN-encoded value (a slice of :func:`plain_values`)."""
    if ptype in ("INT64", "DOUBLE"):
        return K.hash_u64(np.ascontiguousarray(phys).view(np.uint64), _SEED0)
    if ptype in ("INT32", "FLOAT"):
        le = np.ascontiguousarray(phys, dtype=phys.dtype.newbyteorder("<"))
        return K.hash_fixed_bytes(le.view(np.uint8).reshape(len(le), 4), _SEED0, False)
    if ptype == "FIXED_LEN_BYTE_ARRAY":
        return K.hash_fixed_bytes(np.ascontiguousarray(phys), _SEED0, False)
    data, offsets = arrow_buffers(phys)
    return K.hash_offsets(data, offsets, _SEED0)


def _tags(values: Any, ptype: str) -> int:
    if ptype in ("INT32", "INT64"):
        return 1 << TAG_INT
    if ptype in ("FLOAT", "DOUBLE"):
        return 1 << TAG_FLOAT
    if isinstance(values, list | tuple):
        kinds = {type(v) for v in values}
        return (1 << TAG_STR if str in kinds else 0) | (1 << TAG_BYTES if kinds - {str} else 0)
    pa = _pa()
    t = getattr(values, "type", getattr(values, "dtype", None))
    is_str = t is not None and (t == np.dtype(object) or getattr(t, "kind", "") == "U" or (
        isinstance(t, pa.DataType) and _kind(t) == "bytes" and "string" in str(t)))
    return 1 << (TAG_STR if is_str else TAG_BYTES)


def plain_source(
    values: Any, physical_type: Any, type_length: int | None = None, arrow_type: Any = None, *,
    name: str = "values", owner: str = "plain_values",
) -> tuple[KeyBatch, Callable[[KeyBatch], np.ndarray]]:
    """(the PLAIN values as a batch with their key tag mask, slice -> hashes): the chunked
    source of a Parquet-mode batch (the Parquet twin of :func:`bloomkit._engine.parallel.key_source`)."""
    phys = plain_values(values, physical_type, type_length, arrow_type, name=name, owner=owner)
    return KeyBatch(phys, _tags(values, physical_type)), lambda part: _hash_plain(part.data, physical_type)


def plain_hashes(
    values: Any, physical_type: Any, type_length: int | None = None, arrow_type: Any = None
) -> tuple[np.ndarray, int]:
    """(XXH64 seed 0 of the PLAIN encoding of every value, key tag mask): the hashes a
    Parquet writer inserts. Complexity: O(total bytes)."""
    batch, hash_fn = plain_source(values, physical_type, type_length, arrow_type)
    return hash_fn(batch), batch.tags
