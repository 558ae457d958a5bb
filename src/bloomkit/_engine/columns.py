"""The data front door: every batch of keys, values or records enters bloomkit here.

Whatever a user passes (a list, a numpy array, a pyarrow array or table, a pandas Series /
Index / DataFrame with any index, a polars Series / DataFrame), it leaves as one of the
*canonical batches* the hashing kernels read without copying:

* a numpy array (int, uint, float, bool, ``S``, ``U``, or 2-D ``uint8`` rows),
* a pyarrow ``string`` / ``large_string`` / ``binary`` / ``large_binary`` array, or a chunked
  array of those,
* a Python list (mixed keys, tuples, big ints: the general path).

Rules (DESIGN convention 12):

* **Position, never label.** A pandas Series is read by position (``.to_numpy()`` / its
  arrow data); its index is ignored, so a shuffled or reversed index can never pair a key with
  the wrong value.
* **Nulls are refused by name**: ``The 'keys' parameter of GeometricFilter.build must not
  contain nulls. Got 3 null(s) (first at position 17) instead.`` (pandas NA / NaT / None,
  arrow nulls, None in a list).
* **Exact types.** A categorical is hashed as its values (not its codes), dictionary arrays are
  decoded, ``string_view`` is cast to ``string``; an object column of mixed Python values stays
  a list (never coerced: ``1`` and ``1.0`` are different keys).
* **Columns by name.** :func:`as_table` takes a DataFrame / table / mapping and returns the
  requested columns by *name*, refusing a missing or an extra column.

Nothing here imports pandas or polars: they are recognised by their module names.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Iterable, Mapping, Sequence, Sized
from typing import Any

import numpy as np

from .._validation import param_error, safe_repr
from ..errors import InvalidParameterError

__all__ = [
    "KeyBatch",
    "as_keys",
    "sized_items",
    "as_matrix",
    "as_table",
    "as_values",
    "batch_len",
    "is_canonical",
    "slice_keys",
    "take",
]


def _pa() -> Any:
    import pyarrow

    return pyarrow


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".", 1)[0]


def _where(owner: str | None) -> str:
    return f" of {owner}" if owner else ""


def _null_error(name: str, owner: str | None, count: int, first: int | None) -> InvalidParameterError:
    at = "" if first is None else f" (first at position {first})"
    return InvalidParameterError(
        f"The {name!r} parameter{_where(owner)} must not contain nulls. Got {count} null(s){at} instead."
    )


# ---------------------------------------------------------------------------------------------
# pyarrow


def _arrow_first_null(arr: Any) -> int | None:
    pa = _pa()
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], arr.type)
    idx = pc.index(pc.is_null(arr), True).as_py()
    return None if idx is None or idx < 0 else int(idx)


def _arrow_array(arr: Any, name: str, owner: str | None) -> Any:
    """A canonical pyarrow array / chunked array, or a numpy array for numeric types."""
    pa = _pa()
    if arr.null_count:
        raise _null_error(name, owner, arr.null_count, _arrow_first_null(arr))
    if isinstance(arr, pa.ChunkedArray):
        t = arr.type
        if _is_arrow_bytes(t):
            return arr
        if pa.types.is_dictionary(t) or _is_view(t):
            return pa.chunked_array([_arrow_array(c, name, owner) for c in arr.chunks], type=_decoded_type(t))
        return _arrow_array(arr.combine_chunks() if arr.num_chunks else pa.array([], type=t), name, owner)
    t = arr.type
    if pa.types.is_dictionary(t):
        return _arrow_array(arr.dictionary_decode(), name, owner)
    if _is_view(t):
        return arr.cast(pa.large_string() if pa.types.is_string_view(t) else pa.large_binary())
    if _is_arrow_bytes(t):
        return arr
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        return arr.to_numpy(zero_copy_only=False)
    if pa.types.is_fixed_size_binary(t):
        return arr.cast(pa.binary())
    raise InvalidParameterError(
        f"The {name!r} parameter{_where(owner)} must hold str, bytes, int, float or bool values. "
        f"Got a pyarrow array of type {t} instead."
    )


def _is_view(t: Any) -> bool:
    pa = _pa()
    return bool(getattr(pa.types, "is_string_view", lambda _t: False)(t)
                or getattr(pa.types, "is_binary_view", lambda _t: False)(t))


def _is_arrow_bytes(t: Any) -> bool:
    pa = _pa()
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
                or pa.types.is_large_binary(t))


def _decoded_type(t: Any) -> Any:
    pa = _pa()
    if pa.types.is_dictionary(t):
        return _decoded_type(t.value_type)
    if _is_view(t):
        return pa.large_string() if pa.types.is_string_view(t) else pa.large_binary()
    return t


# ---------------------------------------------------------------------------------------------
# pandas / polars


def _pandas_column(s: Any, name: str, owner: str | None) -> Any:
    """A pandas Series / Index / array as a canonical batch, by position."""
    pa = _pa()
    dtype = s.dtype
    kind = getattr(dtype, "kind", "O")
    na = s.isna()
    nnull = int(np.asarray(na).sum())
    if nnull:
        raise _null_error(name, owner, nnull, int(np.flatnonzero(np.asarray(na))[0]))
    if str(dtype) == "category":
        cats = _pandas_column(s.cat.categories if hasattr(s, "cat") else s.categories, name, owner)
        codes = np.asarray(s.cat.codes if hasattr(s, "cat") else s.codes)
        return take(cats, codes)
    if kind in "mM":
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} holds {dtype} values, which have no canonical key "
            "encoding. Convert them first, e.g. with .astype('int64') (nanoseconds) or .astype(str)."
        )
    if isinstance(dtype, np.dtype) and kind != "O":
        return np.asarray(s.to_numpy() if hasattr(s, "to_numpy") else s)
    if kind in "iufb":  # nullable extension dtypes without nulls
        return np.asarray(s.to_numpy(dtype=dtype.numpy_dtype) if hasattr(dtype, "numpy_dtype") else s.to_numpy())
    if kind == "O" and isinstance(dtype, np.dtype):  # mixed Python objects: the exact general path
        return (s.to_numpy() if hasattr(s, "to_numpy") else np.asarray(s)).tolist()
    # string / binary extension dtypes: their Arrow data through __arrow_array__ (zero-copy for
    # pyarrow storage), never a detour through a numpy array of Python objects
    try:
        return _arrow_array(pa.array(getattr(s, "array", s)), name, owner)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return list(s.to_numpy() if hasattr(s, "to_numpy") else np.asarray(s))


def _polars_column(s: Any, name: str, owner: str | None) -> Any:
    return _arrow_array(s.to_arrow(), name, owner)


# ---------------------------------------------------------------------------------------------
# the front door


def is_canonical(data: Any) -> bool:
    """True if ``data`` is already a batch the hashing kernels read directly."""
    if isinstance(data, np.ndarray):
        return data.dtype.kind != "O" and not isinstance(data, np.ma.MaskedArray)
    if isinstance(data, list):
        return True
    if _module(data) == "pyarrow":
        pa = _pa()
        return isinstance(data, pa.Array | pa.ChunkedArray) and _is_arrow_bytes(data.type) and not data.null_count
    return False


def as_keys(data: Any, name: str = "keys", owner: str | None = None) -> Any:
    """``data`` as a canonical batch of keys, by position (see the module docstring).

    Parameters
    ----------
    data : list, tuple, set, range or another sized collection, numpy array, pyarrow Array / ChunkedArray / one-column Table,
        pandas Series / Index / Categorical / one-column DataFrame, polars Series / one-column
        DataFrame
        The keys.
    name, owner : str
        The parameter and the method, for error messages.

    Returns
    -------
    numpy.ndarray, pyarrow.Array, pyarrow.ChunkedArray or list

    Raises
    ------
    InvalidParameterError
        For nulls (naming the position), a single str / bytes, a table of several columns,
        datetime values, masked arrays, a non-iterable, or an iterable without a length (a
        generator: it is never iterated, as an endless one would never return; pass a list).

    Complexity: O(1) for numpy / arrow string input, O(n) for conversions.

    >>> as_keys(("a", "b"))
    ['a', 'b']
    """
    if isinstance(data, np.ndarray):
        if isinstance(data, np.ma.MaskedArray):
            if np.ma.getmaskarray(data).any():
                bad = np.flatnonzero(np.ma.getmaskarray(data).ravel())
                raise _null_error(name, owner, int(bad.size), int(bad[0]))
            data = np.asarray(data.data)
        if data.dtype.kind == "O":
            return list(data.tolist())
        if data.dtype.kind in "mM":
            raise InvalidParameterError(
                f"The {name!r} parameter{_where(owner)} holds {data.dtype} values, which have no canonical "
                "key encoding. Convert them first, e.g. with .astype('int64')."
            )
        if data.ndim == 0:
            raise InvalidParameterError(
                f"The {name!r} parameter{_where(owner)} must be a collection of keys, not a single "
                f"{data.dtype} value. Got {safe_repr(data)} instead; use add() / in for one key."
            )
        return data
    if isinstance(data, list):
        return data
    mod = _module(data)
    if mod == "pyarrow":
        pa = _pa()
        if isinstance(data, pa.Array | pa.ChunkedArray):
            return _arrow_array(data, name, owner)
        if isinstance(data, pa.Table | pa.RecordBatch):
            return as_keys(_only_column(data, data.column_names, name, owner), name, owner)
    elif mod == "pandas":
        if hasattr(data, "columns"):  # DataFrame
            return as_keys(_only_column(data, list(data.columns), name, owner), name, owner)
        return _pandas_column(data, name, owner)
    elif mod == "polars":
        if hasattr(data, "columns"):
            return as_keys(_only_column(data, list(data.columns), name, owner), name, owner)
        return _polars_column(data, name, owner)
    if isinstance(data, str | bytes | bytearray):
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be a collection of keys, not a single "
            f"{type(data).__name__}. Got {data[:40]!r} instead; use add() / in for one key."
        )
    if isinstance(data, Mapping):
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be a collection of keys. Got a mapping "
            f"({type(data).__name__}) instead: pass its keys() or values() explicitly."
        )
    if isinstance(data, tuple):
        return list(data)
    if hasattr(data, "__array__") and not isinstance(data, Iterable):
        return as_keys(np.asarray(data), name, owner)
    return sized_items(data, name, owner, "keys")


def sized_items(data: Any, name: str, owner: str | None, what: str = "items") -> list[Any]:
    """The items of a sized collection, as a list. Only sized collections are iterated, and no
    further than their length: a generator, or an object whose ``__getitem__`` answers every
    index, would be read without end (InvalidParameterError naming the parameter).

    >>> sized_items(range(3), "keys", "f")
    [0, 1, 2]
    """
    if not isinstance(data, Iterable):
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be an iterable of {what}. Got {type(data).__name__} instead."
        )
    if not isinstance(data, Sized):
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be a collection of {what} with a length (a list, tuple, "
            f"set, range, numpy / pyarrow array, ...). Got {type(data).__name__} instead: pass list(...) of it."
        )
    try:
        n = len(data)
        items = list(itertools.islice(data, n + 1))
    except TypeError:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be an iterable of {what}. Got {type(data).__name__} instead."
        ) from None
    if len(items) != n:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must yield as many {what} as its len() says. Got a "
            f"{type(data).__name__} of len() {n} that yielded {'more' if len(items) > n else len(items)} instead."
        )
    return items


def _only_column(table: Any, columns: Sequence[Any], name: str, owner: str | None) -> Any:
    if len(columns) != 1:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be one column. Got a table of {len(columns)} "
            f"columns ({', '.join(map(str, list(columns)[:8]))}) instead: select the column of keys."
        )
    return table[columns[0]]


def as_values(
    data: Any, name: str = "values", owner: str | None = None, *, dtype: Any = None
) -> np.ndarray:
    """A 1-D numpy array of values by position (pandas index ignored, nulls refused by name).

    Lists, tuples, numpy, pyarrow, pandas and polars are accepted. ``dtype`` converts
    (``np.asarray(values, dtype)``); a value that does not fit raises InvalidParameterError.

    >>> as_values([3, 4]).tolist()
    [3, 4]
    """
    col = as_keys(data, name, owner)
    if isinstance(col, np.ndarray):
        arr = col
    elif isinstance(col, list):
        if any(v is None for v in col):
            first = next(i for i, v in enumerate(col) if v is None)
            raise _null_error(name, owner, sum(v is None for v in col), first)
        try:
            arr = np.asarray(col) if dtype is None else np.asarray(col, dtype=dtype)
        except (OverflowError, ValueError, TypeError) as e:
            raise param_error(name, owner or "bloomkit", f"an array of {np.dtype(dtype) if dtype else 'numbers'}",
                              f"values that do not convert ({e})") from None
    else:  # arrow strings
        arr = np.asarray(col.to_pylist(), dtype=object)
    if arr.ndim != 1:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be one-dimensional. Got shape {arr.shape} instead."
        )
    return arr


def as_table(
    data: Any, names: Sequence[str], name: str = "data", owner: str | None = None
) -> dict[str, Any]:
    """The columns ``names`` of a table, by name, each a canonical batch.

    ``data`` may be a pandas / polars DataFrame, a pyarrow Table / RecordBatch, a mapping of
    name -> column, or a numpy structured array. A missing column or a column not in ``names``
    raises InvalidParameterError naming it (a reordered DataFrame is read by name, so its order
    does not matter); columns of unequal length are refused.
    """
    mod = _module(data)
    cols: dict[str, Any]
    if mod == "pyarrow" and hasattr(data, "column_names"):
        cols = {str(c): data.column(c) for c in data.column_names}
    elif mod in ("pandas", "polars") and hasattr(data, "columns"):
        cols = {str(c): data[c] for c in data.columns}
        if len(cols) != len(list(data.columns)):
            raise InvalidParameterError(f"The {name!r} parameter{_where(owner)} has duplicate column names.")
    elif isinstance(data, np.ndarray) and data.dtype.names:
        cols = {str(c): data[c] for c in data.dtype.names}
    elif isinstance(data, Mapping):
        cols = {str(k): v for k, v in data.items()}
    else:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be a table with named columns (DataFrame, "
            f"pyarrow Table, mapping of columns). Got {type(data).__name__} instead."
        )
    want = list(names)
    missing = [c for c in want if c not in cols]
    if missing:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} has no column {missing[0]!r} "
            f"(columns: {', '.join(cols) or 'none'})."
        )
    extra = [c for c in cols if c not in want]
    if extra:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} has a column {extra[0]!r} that is not one of "
            f"{', '.join(want)}: select the columns to use."
        )
    out = {c: as_keys(cols[c], f"{name}[{c!r}]", owner) for c in want}
    lengths = {c: batch_len(v) for c, v in out.items()}
    if len(set(lengths.values())) > 1:
        raise InvalidParameterError(f"The columns of {name!r}{_where(owner)} have different lengths: {lengths}.")
    return out


# ---------------------------------------------------------------------------------------------
# numeric matrices: one row per item, one column per dimension


def as_matrix(
    data: Any, name: str = "points", owner: str | None = None, *, ncols: int | None = None, hint: str = ""
) -> np.ndarray:
    """``data`` as an (n, d) C-contiguous float64 array of finite numbers, by position: rows are
    items, columns are dimensions (a DataFrame's or table's columns in their order; any index is
    ignored).

    Parameters
    ----------
    data : 2-D numpy array (int, uint, float), list / tuple / iterable of equal-length numeric
        vectors, pandas DataFrame, pyarrow Table / RecordBatch, pyarrow FixedSizeListArray (or a
        chunked one), polars DataFrame / Array Series
        The rows.
    name, owner : str
        The parameter and the method, for error messages.
    ncols : int, optional
        The number of columns required.
    hint : str
        Appended to the error for 1-D input (e.g. the method that takes one item).

    Raises
    ------
    InvalidParameterError
        For 1-D input, another number of columns than ``ncols``, rows of unequal length (naming
        the row), bool or non-numeric values, nulls, NaN or infinities (naming the row and the
        column).

    Complexity: O(n d).

    >>> as_matrix([[1, 2], [3, 4]]).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    labels: list[Any] | None = None  # column names, for messages
    mod = _module(data)
    if mod == "polars":
        data, mod = data.to_arrow(), "pyarrow"
    if isinstance(data, np.ndarray) and data.dtype.kind != "O":
        arr = _numpy_matrix(data, name, owner, hint)
    elif mod == "pandas" and hasattr(data, "columns"):
        labels = list(data.columns)
        arr = _columns_matrix([data.iloc[:, i] for i in range(len(labels))], labels, len(data), name, owner)
    elif mod == "pyarrow" and hasattr(data, "column_names"):
        labels = list(data.column_names)
        arr = _columns_matrix([data.column(i) for i in range(len(labels))], labels, data.num_rows, name, owner)
    elif mod == "pyarrow" and _pa().types.is_fixed_size_list(getattr(data, "type", None)):
        arr = _arrow_list_matrix(data, name, owner)
    elif mod in ("pandas", "pyarrow") or isinstance(data, str | bytes | bytearray | Mapping):
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be a 2-D batch of rows (n, d): a 2-D array, "
            f"a list of vectors, a DataFrame or a table. Got {type(data).__name__} instead{hint}."
        )
    else:
        if not isinstance(data, Iterable | np.ndarray):
            raise InvalidParameterError(
                f"The {name!r} parameter{_where(owner)} must be a 2-D batch of rows (n, d). "
                f"Got {type(data).__name__} instead."
            )
        rows = data.tolist() if isinstance(data, np.ndarray) else sized_items(data, name, owner, "rows")
        arr = _list_matrix(rows, name, owner, hint)
    if ncols is not None and arr.shape == (0, 0):
        arr = arr.reshape(0, ncols)  # an empty list: no rows of any width
    if ncols is not None and arr.shape[1] != ncols:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must have {ncols} columns (one per dimension). "
            f"Got shape {arr.shape} instead."
        )
    if arr.size and not np.isfinite(arr).all():
        r, c = (int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        col = f"column {labels[c]!r} (position {c})" if labels is not None else f"column {c}"
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must contain only finite numbers. "
            f"Got {arr[r, c]} at row {r}, {col} instead."
        )
    return arr


def _one_d_error(name: str, owner: str | None, shape: tuple[int, ...], hint: str) -> InvalidParameterError:
    return InvalidParameterError(
        f"The {name!r} parameter{_where(owner)} must be a 2-D batch of rows (n, d). Got a 1-D input of "
        f"shape {shape} instead: one row is reshape(1, -1){hint}."
    )


def _null_cell(name: str, owner: str | None, count: int, cell: list[int]) -> InvalidParameterError:
    at = f"row {cell[0]}" + (f", column {cell[1]}" if len(cell) > 1 else "")
    return InvalidParameterError(
        f"The {name!r} parameter{_where(owner)} must not contain nulls. Got {count} null(s) (first at {at}) instead."
    )


def _non_numeric(name: str, owner: str | None, what: str) -> InvalidParameterError:
    return InvalidParameterError(
        f"The {name!r} parameter{_where(owner)} must hold int or float numbers. Got {what} instead."
    )


def _numpy_matrix(data: np.ndarray, name: str, owner: str | None, hint: str) -> np.ndarray:
    if isinstance(data, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(data)
        if mask.any():
            raise _null_cell(name, owner, int(mask.sum()), np.argwhere(mask)[0].tolist())
        data = np.asarray(data.data)
    if data.dtype.kind not in "iuf":
        raise _non_numeric(name, owner, f"an array of dtype {data.dtype}")
    if data.ndim == 1:
        raise _one_d_error(name, owner, data.shape, hint)
    if data.ndim != 2:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be a 2-D batch of rows (n, d). Got shape {data.shape} instead."
        )
    return np.ascontiguousarray(data, dtype=np.float64)


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_)


def _list_matrix(rows: list[Any], name: str, owner: str | None, hint: str) -> np.ndarray:
    if not rows:
        return np.empty((0, 0), dtype=np.float64)
    width = None
    for r, row in enumerate(rows):
        if isinstance(row, str | bytes) or not hasattr(row, "__len__"):
            if r == 0:
                raise _one_d_error(name, owner, (len(rows),), hint)
            raise InvalidParameterError(
                f"The {name!r} parameter{_where(owner)} must be a batch of vectors. Got {safe_repr(row)} at row {r} instead."
            )
        if not isinstance(row, list | tuple | np.ndarray):  # a row of the user's own type: read to its len()
            row = rows[r] = sized_items(row, f"{name}[{r}]", owner, "values")
        if width is None:
            width = len(row)
        elif len(row) != width:
            raise InvalidParameterError(
                f"The {name!r} parameter{_where(owner)} must have rows of equal length. Got {len(row)} "
                f"values at row {r}, {width} at row 0 instead."
            )
        if not isinstance(row, np.ndarray):  # cells are numbers: numpy would read any other iterable to its end
            for c, v in enumerate(row):
                if not isinstance(v, numbers.Number):
                    raise _non_numeric(name, owner, f"{safe_repr(v)} at row {r}, column {c}")
    try:
        arr = np.asarray(rows)
    except (TypeError, ValueError):
        arr = np.asarray(rows, dtype=object)
    if arr.ndim != 2:
        raise InvalidParameterError(
            f"The {name!r} parameter{_where(owner)} must be a 2-D batch of rows (n, d). Got shape {arr.shape} instead."
        )
    if arr.dtype.kind not in "iuf":
        for r, row in enumerate(rows):  # the user's values, not numpy's conversion of them
            for c, v in enumerate(row):
                if not _is_number(v):
                    raise _non_numeric(name, owner, f"{safe_repr(v)} at row {r}, column {c}")
        arr = arr.astype(np.float64)
    return np.ascontiguousarray(arr, dtype=np.float64)


def _columns_matrix(cols: list[Any], labels: list[Any], n: int, name: str, owner: str | None) -> np.ndarray:
    """The columns of a DataFrame / table, by position, as one float64 matrix."""
    out = np.empty((n, len(cols)), dtype=np.float64)
    for c, (col, label) in enumerate(zip(cols, labels, strict=True)):
        where = f"{name}[{label!r}]"
        v = as_keys(col, where, owner)  # by position; nulls refused naming the row
        if isinstance(v, np.ndarray) and v.dtype.kind in "iuf":
            out[:, c] = v
            continue
        values = v if isinstance(v, list) else v.tolist() if isinstance(v, np.ndarray) else v.to_pylist()
        bad = next((r for r, x in enumerate(values) if not _is_number(x)), None)
        if bad is None:
            out[:, c] = np.asarray(values, dtype=np.float64)
            continue
        raise _non_numeric(name, owner, f"{values[bad]!r} at row {bad}, column {label!r} (position {c})")
    return out


def _arrow_list_matrix(data: Any, name: str, owner: str | None) -> np.ndarray:
    """A pyarrow fixed-size list array (one list per row) as a matrix."""
    pa = _pa()
    arr = data.combine_chunks() if isinstance(data, pa.ChunkedArray) else data
    if arr.null_count:
        raise _null_error(name, owner, arr.null_count, _arrow_first_null(arr))
    size = arr.type.list_size
    flat = arr.flatten()
    if flat.null_count:
        first = _arrow_first_null(flat) or 0
        raise _null_cell(name, owner, flat.null_count, [first // size, first % size])
    values = as_keys(flat, name, owner)
    if not (isinstance(values, np.ndarray) and values.dtype.kind in "iuf"):
        raise _non_numeric(name, owner, f"lists of {arr.type.value_type}")
    return np.ascontiguousarray(values, dtype=np.float64).reshape(len(arr), size)


# ---------------------------------------------------------------------------------------------
# positional access to canonical batches


def batch_len(keys: Any) -> int | None:
    """Number of keys of a batch that can be sliced without copying (numpy array, pyarrow
    array, list, tuple), else None (iterators, single keys)."""
    if isinstance(keys, np.ndarray):
        return len(keys) if keys.ndim >= 1 else None
    if isinstance(keys, list | tuple) or _module(keys) == "pyarrow":
        try:
            return len(keys)
        except TypeError:
            return None
    return None


def slice_keys(keys: Any, lo: int, hi: int) -> Any:
    """``keys[lo:hi]`` of a batch :func:`batch_len` accepts (pyarrow slices are zero-copy)."""
    if _module(keys) == "pyarrow":
        return keys.slice(lo, hi - lo)
    return keys[lo:hi]


class KeyBatch:
    """A canonical batch of keys on its way down the engine: made once at the front door
    (:func:`bloomkit._engine.parallel.key_source`), then only sliced, so no layer below asks
    again what the keys are, how many, or how to cut them.

    ``data`` is what :func:`as_keys` returns (a numpy / pyarrow batch, or a list), or the
    uint64 hashes of a list (``hashed``: the door hashes a list whole, so a bad key raises
    before anything changes, and passes its hashes down); ``tags`` the mask of its key types (read from the type once, or found
    while hashing the list); ``len()`` its number of keys; :meth:`slice` a zero-copy slice
    that keeps ``tags`` and ``hashed``; :attr:`nbytes` the bytes ``data`` occupies.

    >>> b = KeyBatch(np.arange(10), 16)
    >>> part = b.slice(2, 5)
    >>> len(part), part.data.tolist(), part.tags, part.hashed
    (3, [2, 3, 4], 16, False)
    """

    __slots__ = ("data", "tags", "hashed")

    def __init__(self, data: Any, tags: int = 0, hashed: bool = False) -> None:
        self.data, self.tags, self.hashed = data, tags, hashed

    def __len__(self) -> int:
        return len(self.data)

    def slice(self, lo: int, hi: int) -> KeyBatch:
        """Keys ``lo:hi`` (numpy views and pyarrow slices: no copy). Complexity: O(1)."""
        return KeyBatch(slice_keys(self.data, lo, hi), self.tags, self.hashed)

    @property
    def nbytes(self) -> int:
        """Bytes of ``data`` (a list's hashes: 8 per key)."""
        return int(getattr(self.data, "nbytes", 0))

    def __repr__(self) -> str:
        return f"KeyBatch({len(self)} {'hashes' if self.hashed else type(self.data).__name__}, tags={self.tags:#x})"


def take(keys: Any, idx: Any) -> Any:
    """The keys at positions ``idx`` (an integer array), by position, of a canonical batch.

    >>> take(["a", "b", "c"], np.array([2, 0]))
    ['c', 'a']
    """
    ix = np.asarray(idx, dtype=np.int64)
    if isinstance(keys, np.ndarray):
        return keys[ix]
    if _module(keys) == "pyarrow":
        pa = _pa()
        return keys.take(pa.array(ix))
    seq: Sequence[Any] = keys
    return [seq[i] for i in ix.tolist()]
