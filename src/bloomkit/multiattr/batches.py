"""What a batch of multi-attribute items may be, and how it becomes p attribute columns.

Single items, attribute indices and position arrays are read here too (:func:`as_item`,
:func:`attribute_index`, :func:`as_positions`).

One rule for every batch method of :class:`~bloomkit.multiattr.ParallelBloomFilter`
(``add_many``, ``contains_many``, ``remove_many``, ``pbf_stage_many``, ``positions``) and for
:func:`~bloomkit.multiattr.concat_keys`. A batch is exactly one of:

1. **A named table**: a pandas or polars DataFrame, a pyarrow Table or RecordBatch, a numpy
   structured array, or a mapping ``{name: column}``. Its columns are read **by name**
   (:func:`bloomkit._engine.columns.as_table`): the filter must have attribute names
   (``attributes=[...]``), reordered columns give the same answers, and a missing or an extra
   column is refused naming it. A named table given to a filter without names is refused:
   it is never read by position.
2. **Rows**: a list, tuple or other iterable of items, each a *tuple* of p values (what
   ``add`` takes), or a 2-D numpy array of shape (n, p). Value i of a row is attribute i.
3. **Columns**: a list or tuple of exactly p one-dimensional columns, at least one of them an
   array (numpy, pyarrow, pandas or polars Series; the others may be lists). Column i is
   attribute i, read by position (a pandas index is ignored).

Anything else is refused with InvalidParameterError; in particular a sequence of lists only,
which could be rows or columns (write rows as tuples, or make a column an array). Every column
then goes through the data front door (:func:`bloomkit._engine.columns.as_keys`: by position, nulls
refused naming the column and position).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .._engine.columns import as_keys, as_table, sized_items
from .._validation import Int, ListOf, Str, check_reals, param_error, safe_repr
from ..errors import InvalidParameterError

__all__ = ["as_columns", "as_item", "as_positions", "attribute_index", "is_named_table"]


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".", 1)[0]


def is_named_table(data: Any) -> bool:
    """True for the inputs read by column name (rule 1 of the module docstring)."""
    mod = _module(data)
    if mod in ("pandas", "polars"):
        return hasattr(data, "columns")
    if mod == "pyarrow":
        return hasattr(data, "column_names")
    if isinstance(data, np.ndarray):
        return data.dtype.names is not None
    return isinstance(data, Mapping)


def _is_column(obj: Any) -> bool:
    """A one-dimensional array: numpy, pyarrow, pandas / polars Series (rule 3)."""
    if isinstance(obj, np.ndarray):
        return obj.ndim == 1 and obj.dtype.names is None
    mod = _module(obj)
    if mod == "pyarrow":
        return not hasattr(obj, "column_names") and hasattr(obj, "type")
    if mod in ("pandas", "polars"):
        return not hasattr(obj, "columns")
    return False


def _describe(obj: Any) -> str:
    name = type(obj).__name__
    if isinstance(obj, np.ndarray):
        return f"a {obj.ndim}-D numpy array of shape {obj.shape}"
    return f"a {name}"


def as_columns(
    data: Any,
    num_attributes: int,
    attributes: Sequence[str] | None = None,
    *,
    name: str = "data",
    owner: str = "ParallelBloomFilter",
) -> list[Any]:
    """The p attribute columns of a batch (see the module docstring for the one rule), each a
    canonical batch of :func:`bloomkit._engine.columns.as_keys`, all of one length.

    Parameters
    ----------
    data : named table, rows or columns
        The batch.
    num_attributes : int
        p.
    attributes : sequence of str, optional
        The attribute names, in attribute order; required for a named table.
    name, owner : str
        The parameter and the method, for error messages.

    Raises
    ------
    InvalidParameterError
        A named table without attribute names, a missing or extra column, a row of the wrong
        length or type, the wrong number of columns, columns of unequal length, a list of
        lists, nulls.

    Complexity: O(1) per numpy / arrow column, O(n p) for rows.

    >>> as_columns([("a", 1), ("b", 2)], 2)
    [['a', 'b'], [1, 2]]
    >>> as_columns({"port": [80], "ip": ["x"]}, 2, ["ip", "port"])
    [['x'], [80]]
    """
    if not isinstance(name, str) or not isinstance(owner, str):
        raise InvalidParameterError("The 'name' and 'owner' parameters of as_columns must be str (for messages). "
                                    f"Got {type(name).__name__} and {type(owner).__name__} instead.")
    p = Int(1, 64)(num_attributes, "num_attributes", owner)
    if attributes is not None:
        attributes = ListOf(Str(1), p, p, unique=True)(attributes, "attributes", owner)
    where = f"The {name!r} parameter of {owner}"
    if is_named_table(data):
        cols_of = _table_columns(data)
        if attributes is None:
            raise InvalidParameterError(
                f"{where} is a table with named columns ({', '.join(cols_of[:8])}), but this filter has "
                "no attribute names, so the columns cannot be matched to attributes (reading them by "
                "position could pair a value with the wrong attribute). Create the filter with "
                "attributes=[...] to read tables by name, or pass rows (tuples) or a list of p column "
                "arrays in attribute order."
            )
        table = as_table(data, list(attributes), name, owner)
        return [table[a] for a in attributes]
    if isinstance(data, np.ndarray):
        if data.ndim != 2 or data.shape[1] != p:
            raise InvalidParameterError(
                f"{where} must be a 2-D array of shape (n, {p}) (one row per item). Got "
                f"{_describe(data)} instead.")
        return [as_keys(np.ascontiguousarray(data[:, i]), f"{name}[:, {i}]", owner) for i in range(p)]
    if isinstance(data, str | bytes | bytearray) or not isinstance(data, Iterable):
        raise InvalidParameterError(
            f"{where} must be a named table, rows (tuples of {p} values) or a list of {p} column "
            f"arrays. Got {_describe(data)} instead.")
    seq = data if isinstance(data, list | tuple) else sized_items(data, name, owner, "rows or columns")
    if not seq:
        return [[] for _ in range(p)]
    if isinstance(seq[0], tuple):
        return _rows(seq, p, where, name, owner)
    if any(_is_column(c) for c in seq[:p + 1]):
        return _columns(seq, p, where, name, owner)
    if all(isinstance(c, list) for c in seq[:p + 1]):
        raise InvalidParameterError(
            f"{where} is a sequence of lists, which could be rows or columns. Give rows as tuples "
            f"of {p} values, or columns with at least one array (numpy, pyarrow, pandas), or a named table.")
    raise InvalidParameterError(
        f"{where} must be a named table, rows (tuples of {p} values) or a list of {p} columns. "
        f"Got a sequence whose first element is {_describe(seq[0])} instead.")


def _table_columns(data: Any) -> list[str]:
    if isinstance(data, np.ndarray):
        return [str(c) for c in data.dtype.names or ()]
    if isinstance(data, Mapping):
        return [str(c) for c in data]
    cols = data.column_names if hasattr(data, "column_names") else data.columns
    return [str(c) for c in cols]


def _rows(seq: Sequence[Any], p: int, where: str, name: str, owner: str) -> list[Any]:
    for r, row in enumerate(seq):
        if not isinstance(row, tuple) or len(row) != p:
            got = f"{len(row)} values" if isinstance(row, tuple) else _describe(row)
            raise InvalidParameterError(
                f"{where} holds rows: each must be a tuple of {p} attribute values. Got {got} at "
                f"row {r} instead.")
    return [as_keys(list(col), f"{name}[:, {i}]", owner) for i, col in enumerate(zip(*seq, strict=True))]


def _columns(seq: Sequence[Any], p: int, where: str, name: str, owner: str) -> list[Any]:
    if len(seq) != p:
        raise InvalidParameterError(f"{where} holds columns: it must be made of {p} attribute columns. "
                                    f"Got {len(seq)} columns instead.")
    for i, c in enumerate(seq):
        if not (_is_column(c) or isinstance(c, list)):
            raise InvalidParameterError(
                f"{where} holds columns: each must be a one-dimensional array (numpy, pyarrow, pandas, "
                f"polars) or a list. Got {_describe(c)} as column {i} instead.")
    cols = [as_keys(c, f"{name}[{i}]", owner) for i, c in enumerate(seq)]
    lengths = [len(c) for c in cols]
    if len(set(lengths)) > 1:
        raise InvalidParameterError(f"{where} must be made of columns of equal length. Got lengths {lengths} instead.")
    return cols


def as_item(item: Any, num_attributes: int, attributes: Sequence[str] | None, owner: str) -> Sequence[Any]:
    """One item as its p values in attribute order: a tuple or list (by position), a 1-D numpy
    array, or a mapping ``{name: value}`` read by attribute name (filters with names only).

    >>> as_item({"b": 2, "a": 1}, 2, ["a", "b"], "f")
    (1, 2)
    """
    p = num_attributes
    if type(item) is tuple and len(item) == p:  # the common case first
        return item
    if isinstance(item, Mapping):
        if attributes is None:
            raise param_error("item", owner, f"a tuple of {p} attribute values (a mapping needs "
                              "attribute names: create the filter with attributes=[...])", item)
        missing = [a for a in attributes if a not in item]
        extra = [k for k in item if k not in attributes]
        if missing or extra:
            raise param_error("item", owner, f"a mapping of the attributes {list(attributes)}",
                              f"{safe_repr(item)} (missing {missing}, unknown {extra})")
        return tuple(item[a] for a in attributes)
    if isinstance(item, np.ndarray) and item.ndim == 1:
        item = item.tolist()
    if not isinstance(item, tuple | list) or len(item) != p:
        got = f"{len(item)} values {safe_repr(tuple(item))}" if isinstance(item, tuple | list) else item
        raise param_error("item", owner, f"a tuple of {p} attribute values", got)
    return item


def attribute_index(i: Any, num_attributes: int, attributes: Sequence[str] | None, owner: str) -> int:
    """The index of attribute ``i``, given by index or (filters with names) by name."""
    if isinstance(i, str):
        if attributes is None or i not in attributes:
            known = "this filter has no attribute names" if attributes is None else \
                f"one of {', '.join(map(repr, attributes))}"
            raise param_error("i", owner, f"an attribute index or name ({known})", i)
        return list(attributes).index(i)
    return Int(0, num_attributes - 1)(i, "i", owner)


def as_positions(pos: Any, p: int, q: int, m: int, owner: str) -> np.ndarray:
    """A C-contiguous int64 array of positions H_ij of shape (n, p, q), values in [0, m)."""
    if isinstance(pos, np.ndarray):
        a = pos
    else:  # nested lists of ints (checked as numbers: never an arbitrary iterable)
        a = check_reals(pos, "positions", owner, lo=0)
        if a.size and (a == np.floor(a)).all() and a.max() < 2**53:
            a = a.astype(np.int64)
    if a.dtype.kind not in "iu" or a.ndim != 3 or a.shape[1:] != (p, q):
        raise param_error("positions", owner, f"an integer array of shape (n, {p}, {q})",
                          f"{a.dtype} array of shape {a.shape}")
    if a.size and (int(a.min()) < 0 or int(a.max()) >= m):
        raise param_error("positions", owner, f"in [0, {m})", f"values in [{int(a.min())}, {int(a.max())}]")
    return np.ascontiguousarray(a, dtype=np.int64)
