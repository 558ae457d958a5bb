"""The data front door of the lookup tables: (keys, values) pairs in, canonical batches out.

Keys enter through :func:`bloomkit._engine.columns.as_keys` and values through
:func:`bloomkit._engine.columns.as_values`, both *by position* (a pandas Series with any index, a
categorical, a nullable dtype, pyarrow, polars, lists, numpy); subsets are taken with
:func:`bloomkit._engine.columns.take`. Values are integers in [1, 2^V - 1] (V <= 64) or str labels,
numbered by a :class:`~bloomkit.lookup.codec.ValueCodec`. Repeated keys are combined by
``on_duplicate`` (:func:`combine_duplicates`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._engine.columns import as_keys, as_values, batch_len, take
from .._engine.hashing import hash_many
from .._validation import Options, param_error
from ..errors import InvalidParameterError
from .codec import ValueCodec
from .overflow import alt_seed

__all__ = ["ON_DUPLICATE", "combine_duplicates", "duplicate_error", "read_pairs", "read_values"]

ON_DUPLICATE = Options("error", "last", "sum", "max", "min")
"""What a build does with a key given twice: raise, keep the last value, or combine them."""

_NUMERIC = ("sum", "max", "min")


def _values_error(owner: str, value_bits: int, got: Any, index: int) -> InvalidParameterError:
    hi = (1 << value_bits) - 1
    return InvalidParameterError(
        f"The 'values' parameter of {owner} must hold integers in [1, {hi}] (V = {value_bits}) or str "
        f"labels. Got {got!r} at index {index} instead."
    )


def _check_list_items(items: list[Any], value_bits: int, owner: str) -> None:
    """A list of values is all str or all integers (no bools): the exact types, before numpy
    would coerce ``[True, 1]`` to ints or ``["x", 1]`` to str."""
    if not items:
        return
    labels = isinstance(items[0], str)
    for i, v in enumerate(items):
        ok = isinstance(v, str) if labels else (isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_))
        if not ok:
            raise _values_error(owner, value_bits, v, i)


def read_values(values: Any, value_bits: int, owner: str) -> tuple[np.ndarray, ValueCodec | None]:
    """(uint64 value ids in [1, 2^V - 1], codec) of a column of values, by position.

    Integer columns give their values (codec None); str columns are numbered by a new
    :class:`ValueCodec` in order of first appearance. The first bad value is named with its
    index.

    Complexity: O(n) for integers, O(n log n) for labels.
    """
    col = as_keys(values, "values", owner)
    dtype = None
    if isinstance(col, list):  # Python objects (a list, a pandas object column, ...)
        _check_list_items(col, value_bits, owner)
        if col and not isinstance(col[0], str):  # exact ints: numpy would mix int64 and uint64
            hi = (1 << value_bits) - 1           # into float64; checked here, then uint64
            bad = next((i for i, v in enumerate(col) if not 1 <= int(v) <= hi), None)
            if bad is not None:
                raise _values_error(owner, value_bits, col[bad], bad)
            dtype = np.uint64
    arr = as_values(col, "values", owner, dtype=dtype)
    kind = arr.dtype.kind
    if kind == "U" or (kind == "O" and len(arr) > 0 and all(isinstance(v, str) for v in arr.tolist())):
        codec = ValueCodec(value_bits=value_bits)  # str labels (arrow strings arrive as objects)
        try:
            return codec.encode_str_array(arr), codec
        except InvalidParameterError as e:
            raise InvalidParameterError(f"The 'values' parameter of {owner}: {e}") from None
    hi = (1 << value_bits) - 1
    if kind not in "iu":
        items = arr.tolist()
        bad = 0
        if kind == "f":
            bad = next((i for i, v in enumerate(items) if not float(v).is_integer()), 0)
        raise _values_error(owner, value_bits, items[bad] if items else arr.dtype, bad)
    if not len(arr):
        return np.zeros(0, np.uint64), None
    top = min(hi, int(np.iinfo(arr.dtype).max))
    bad_mask = arr < 1
    if top < int(np.iinfo(arr.dtype).max):
        bad_mask |= arr > top
    if bad_mask.any():
        i = int(np.flatnonzero(bad_mask)[0])
        raise _values_error(owner, value_bits, arr[i].item(), i)
    if arr.dtype.itemsize == 8:
        return np.ascontiguousarray(arr).view(np.uint64), None
    return arr.astype(np.uint64), None


def read_pairs(keys: Any, values: Any, owner: str) -> tuple[Any, Any, int]:
    """(canonical keys, raw values, n) of a build's input: a mapping, or two equal-length
    columns. Refuses empty input, a mapping with values, and values missing."""
    if values is None:
        if not isinstance(keys, Mapping):
            raise InvalidParameterError(
                f"The 'values' parameter of {owner} must be given unless 'keys' is a mapping. Got None instead."
            )
        values = list(keys.values())
        keys = list(keys.keys())
    elif isinstance(keys, Mapping):
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} must be None when 'keys' is a mapping. Got {type(values).__name__} instead."
        )
    if isinstance(values, str | bytes) or isinstance(values, Mapping):
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} must be a column of values (list, array, Series). "
            f"Got {type(values).__name__} instead."
        )
    keys = as_keys(keys, "keys", owner)
    n = batch_len(keys)
    assert n is not None  # as_keys gives lists, numpy or pyarrow batches
    if n == 0:
        raise InvalidParameterError(f"The 'keys' parameter of {owner} must not be empty. Got 0 keys instead.")
    return keys, values, n


def check_count(values: np.ndarray, n: int, owner: str) -> None:
    if len(values) != n:
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} must have as many entries as 'keys' ({n}). Got {len(values)} instead."
        )


def key_at(keys: Any, i: int) -> Any:
    """The key at position ``i`` of a canonical batch, as a Python object (for messages)."""
    key = take(keys, np.array([i]))[0]
    return key.as_py() if hasattr(key, "as_py") else key


def duplicate_error(keys: Any, owner: str, second: int) -> InvalidParameterError:
    return InvalidParameterError(
        f"The 'keys' parameter of {owner} must not repeat a key (pass on_duplicate='last', 'sum', "
        f"'max' or 'min' to combine the values). Got {key_at(keys, second)!r} twice (second time at "
        f"index {second}) instead."
    )


def combine_duplicates(
    keys: Any, h1: np.ndarray, values: np.ndarray, seed: int, value_bits: int, on_duplicate: str,
    owner: str, *, labels: bool = False, collisions: str = "distinct",
) -> tuple[Any, np.ndarray, np.ndarray, int]:
    """(keys, h1, values, number of duplicates) with every repeated key once.

    Keys are equal when their identities ``(h1, hb)`` are (:mod:`bloomkit.lookup.overflow`).
    A repeated key keeps its first position and gets: its last value (``"last"``), the sum, the
    maximum or the minimum of its values; ``"error"`` raises naming the key and the position of
    its second copy. A sum above 2^V - 1 raises (never a wrapped or clipped value). Label tables
    take ``"error"`` and ``"last"`` only. Two *different* keys with one h1 stay two keys
    (``collisions="distinct"``, the Geometric filter tells them apart), or raise
    (``collisions="error"``: the Bloomier filter cannot store them; choose another seed).

    Complexity: O(n log n) (a sort of h1); hashing again only the keys whose h1 repeats.
    """
    if labels and on_duplicate in _NUMERIC:
        raise param_error("on_duplicate", owner, "'error' or 'last' for str labels", on_duplicate)
    order = np.argsort(h1, kind="stable")
    sh = h1[order]
    rep = np.flatnonzero(sh[1:] == sh[:-1])
    if len(rep) == 0:
        return keys, h1, values, 0
    cand = np.zeros(len(h1), dtype=bool)
    cand[rep] = True
    cand[rep + 1] = True
    idx = order[cand]  # positions of the keys whose h1 repeats
    hb = hash_many(take(keys, idx), alt_seed(seed))
    grp = np.lexsort((idx, hb, h1[idx]))  # by identity, then position
    idx, hb = idx[grp], hb[grp]
    ch1 = h1[idx]
    same = (ch1[1:] == ch1[:-1]) & (hb[1:] == hb[:-1])
    if collisions == "error":
        clash = np.flatnonzero((ch1[1:] == ch1[:-1]) & (hb[1:] != hb[:-1]))
        if len(clash):
            a, b = sorted((int(idx[clash[0]]), int(idx[clash[0] + 1])))
            raise InvalidParameterError(
                f"The 'seed' parameter of {owner} gives two different keys the same 64-bit hash "
                f"(indices {a} and {b}); choose another seed. Got {seed} instead."
            )
    if not same.any():
        return keys, h1, values, 0
    if on_duplicate == "error":
        second = int(np.min(idx[1:][same]))
        raise duplicate_error(keys, owner, second)
    first = np.concatenate([[True], ~same])  # runs of one identity, each sorted by position
    run_starts = np.flatnonzero(first)
    lengths = np.diff(np.append(run_starts, len(idx)))
    in_multi = (lengths > 1)[np.cumsum(first) - 1]
    starts = run_starts[lengths > 1]
    ends = starts + lengths[lengths > 1]
    vals = values[idx]
    if on_duplicate == "last":
        combined = vals[ends - 1]
    elif on_duplicate == "max":
        combined = np.maximum.reduceat(vals, starts)
    elif on_duplicate == "min":
        combined = np.minimum.reduceat(vals, starts)
    else:
        combined = _sums(keys, idx, vals, starts, ends, value_bits, owner)
    keep = np.ones(len(h1), dtype=bool)
    keep[idx[in_multi & ~first]] = False  # the first copy (smallest position) of each key stays
    new_values = values.copy()
    new_values[idx[starts]] = combined
    kept = np.flatnonzero(keep)
    return take(keys, kept), h1[kept], new_values[kept], int(len(h1) - len(kept))


def _sums(keys: Any, idx: np.ndarray, vals: np.ndarray, starts: np.ndarray, ends: np.ndarray,
          value_bits: int, owner: str) -> np.ndarray:
    """Sum of each run ``vals[starts[j]:ends[j]]``, exact: uint64 sums, and Python ints for the
    runs whose float sum comes near 2^V (where uint64 could wrap). Above 2^V - 1: an error."""
    hi = (1 << value_bits) - 1
    sums = np.add.reduceat(vals, starts)
    near = np.flatnonzero(np.add.reduceat(vals.astype(np.float64), starts) > hi / 2)
    for j in near.tolist():
        exact = sum(vals[starts[j]:ends[j]].tolist())
        if exact > hi:
            raise InvalidParameterError(
                f"The 'values' parameter of {owner} sums to {exact} for the key "
                f"{key_at(keys, int(idx[starts[j]]))!r}, more than 2^V - 1 = {hi} (V = {value_bits}): "
                "use a larger value_bits."
            )
        sums[j] = exact
    return sums
