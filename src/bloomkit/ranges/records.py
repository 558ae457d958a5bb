"""Records and tables as validated per-attribute columns: the ranges structures' front door.

Two inputs become one :class:`RecordBatch` (what :meth:`RangeBloomFilter.insert_many` and
:meth:`ProfileIndex.add_many` hash in one pass):

* **records**: an iterable of mappings ``{name: value}`` (a text, a number, a ``(lo, hi)``
  pair or a ``range``); a record may leave attributes out.
* **a table** (pandas / polars DataFrame, pyarrow Table / RecordBatch, a mapping of columns, a
  numpy structured array), read **by column name** through :func:`bloomkit._engine.columns.as_table`
  (never by position or pandas label: a reordered or re-indexed DataFrame gives the same
  answers). A text attribute is a column named after it. A numeric attribute is either one
  column named after it (points, or ``(lo, hi)`` pairs where the column holds Python objects)
  or **two columns** ``"<name>.lo"`` and ``"<name>.hi"`` holding the inclusive ends of each
  row's range (the form Arrow / Parquet tables use). By default every attribute of the schema
  must be present; ``attributes=[...]`` names the ones the table gives. A missing column, an
  extra column and a null are refused naming the column (and the row).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from .._engine.columns import as_table, batch_len, sized_items
from .._validation import param_error
from ..errors import InvalidParameterError
from .schema import Numeric, Schema, Text

__all__ = ["Column", "RecordBatch", "entry_values", "is_table", "one_record", "record_batch"]

_MISSING = object()
_ROW0 = np.zeros(1, dtype=np.int64)
_ROW0.flags.writeable = False


@dataclass(frozen=True)
class Column:
    """The validated values of one attribute in a batch.

    ``rows`` are the (sorted) positions of the records that give the attribute; numeric
    attributes have the scaled inclusive ends ``a``, ``b`` (int64), text attributes ``text``.
    """

    name: str
    rows: np.ndarray
    a: np.ndarray | None = None
    b: np.ndarray | None = None
    text: pa.Array | list[str] | None = None

    def values(self) -> int:
        """The number of values of all entries: sum of ``b - a + 1`` (numeric), one per text."""
        if self.a is None or self.b is None:
            return len(self.rows)
        return int((self.b - self.a).sum()) + len(self.rows)


    def part(self, lo: int, hi: int) -> Column:
        """The entries of records lo .. hi - 1 (rows stay positions in the whole batch)."""
        i, j = np.searchsorted(self.rows, [lo, hi])
        text = self.text if self.text is None else self.text[i:j]
        return Column(self.name, self.rows[i:j], None if self.a is None else self.a[i:j],
                      None if self.b is None else self.b[i:j], text)


@dataclass(frozen=True)
class RecordBatch:
    """``size`` records as columns (only the attributes some record gives)."""

    size: int
    columns: tuple[Column, ...]

    def chunks(self, size: int) -> list[RecordBatch]:
        """The batch in parts of at most ``size`` records (rows stay positions in the whole
        batch; each part's ``size`` is the whole batch's)."""
        if self.size <= size:
            return [self]
        return [RecordBatch(self.size, tuple(c.part(lo, lo + size) for c in self.columns))
                for lo in range(0, self.size, size)]


def is_table(data: Any) -> bool:
    """True for a DataFrame, an arrow Table / RecordBatch, a numpy structured array or a
    mapping (of columns), which are read by column name; False for an iterable of records."""
    mod = type(data).__module__.split(".", 1)[0]
    if mod in ("pandas", "polars") and hasattr(data, "columns"):
        return True
    if mod == "pyarrow" and hasattr(data, "column_names"):
        return True
    if isinstance(data, np.ndarray) and data.dtype.names:
        return True
    return isinstance(data, Mapping)


def _column_names(data: Any) -> list[str]:
    if hasattr(data, "column_names"):
        return [str(c) for c in data.column_names]
    if isinstance(data, np.ndarray):
        return [str(c) for c in data.dtype.names or ()]
    if isinstance(data, Mapping):
        return [str(c) for c in data]
    return [str(c) for c in data.columns]


def _num_rows(data: Any) -> int | None:
    if isinstance(data, Mapping):
        first: Any = next(iter(data.values()), None)
        return len(first) if hasattr(first, "__len__") else None
    return int(data.num_rows) if hasattr(data, "num_rows") else len(data)


def _where(owner: str, rows: np.ndarray | None = None) -> Callable[[int], str]:
    if rows is None:
        return lambda j: f"record {j} of {owner}"
    return lambda j: f"record {int(rows[j])} of {owner}"


def _column(schema: Schema, name: str, values: Any, rows: np.ndarray, owner: str) -> Column:
    attr = schema[name]
    where = _where(owner, rows)
    if isinstance(attr, Text):
        return Column(name, rows, text=attr.texts(values, where))
    assert isinstance(attr, Numeric)
    a, b = attr.intervals(values, where)
    return Column(name, rows, a, b)


def _from_records(schema: Schema, records: Any, owner: str) -> RecordBatch:
    if isinstance(records, str | bytes) or not isinstance(records, Iterable):
        raise param_error("records", owner, "an iterable of records (mappings) or a table", records)
    recs = records if isinstance(records, list) else sized_items(records, "records", owner, "records")
    allowed = set(schema.names)
    for i, r in enumerate(recs):
        if not isinstance(r, Mapping):
            raise param_error("records", owner, f"records that are mappings (record {i} is not)", r)
        if not r.keys() <= allowed:
            schema.check_record(r, f"record {i} of {owner}")  # raises naming the attribute
    n = len(recs)
    if n == 1:
        return _from_one(schema, recs[0], owner)
    cols = []
    for name in schema.names:
        vals = [r.get(name, _MISSING) for r in recs]
        if any(v is _MISSING for v in vals):
            keep = [i for i, v in enumerate(vals) if v is not _MISSING]
            if not keep:
                continue
            rows = np.array(keep, dtype=np.int64)
            vals = [vals[i] for i in keep]
        else:
            rows = np.arange(n, dtype=np.int64)
        if n:
            cols.append(_column(schema, name, vals, rows, owner))
    return RecordBatch(n, tuple(cols))


def _from_one(schema: Schema, rec: Mapping[str, Any], owner: str) -> RecordBatch:
    """One record (names already checked): the columns without the batch machinery."""
    where = f"record 0 of {owner}"
    entries: list[tuple[str, Any]] = []
    for name in rec:
        attr = schema[name]
        if isinstance(attr, Text):
            entries.append((name, attr.check_text(rec[name], where)))
        else:
            assert isinstance(attr, Numeric)
            entries.append((name, attr.to_interval(rec[name], where)))
    return one_record(schema, entries)


def entry_values(entry: Any) -> int:
    """The number of values of one entry (a text's str: 1, a scaled ``(a, b)``: b - a + 1), as
    :meth:`Column.values` counts them. Complexity: O(1)."""
    return 1 if isinstance(entry, str) else int(entry[1]) - int(entry[0]) + 1


def one_record(schema: Schema, entries: Sequence[tuple[str, Any]]) -> RecordBatch:
    """The batch of one record from its validated entries ``(name, text)`` / ``(name, (a, b))``
    (scaled ends), columns in schema order. Complexity: O(attributes)."""
    cols = []
    for name, entry in sorted(entries, key=lambda e: schema.index(e[0])):
        if isinstance(entry, str):
            cols.append(Column(name, _ROW0, text=[entry]))
        else:
            cols.append(Column(name, _ROW0, np.array([entry[0]], dtype=np.int64), np.array([entry[1]], dtype=np.int64)))
    return RecordBatch(1, tuple(cols))


def _from_table(schema: Schema, data: Any, owner: str, attributes: Sequence[str] | None) -> RecordBatch:
    if attributes is None:
        attrs = list(schema.names)
    else:
        if isinstance(attributes, str) or not isinstance(attributes, Sequence):
            raise param_error("attributes", owner, "a list of attribute names", attributes)
        attrs = [schema[a].name for a in attributes]
        if len(set(attrs)) != len(attrs):
            raise param_error("attributes", owner, "distinct attribute names", attributes)
    if isinstance(data, Mapping) and any(isinstance(v, str | bytes | numbers.Number | range) for v in data.values()):
        raise InvalidParameterError(
            f"The 'records' parameter of {owner} must be records (an iterable of mappings) or a table of "
            "columns. Got one record (a mapping of single values) instead: pass [record], or use the "
            "one-record method.")
    present = set(_column_names(data))
    names: list[str] = []
    ranged: set[str] = set()
    for a in attrs:
        if a not in present and schema[a].is_numeric and (f"{a}.lo" in present or f"{a}.hi" in present):
            names += [f"{a}.lo", f"{a}.hi"]
            ranged.add(a)
        else:
            names.append(a)
    if _num_rows(data) == 0:  # an empty table: check its column names only (empty columns have no type)
        data = {c: [] for c in _column_names(data)}
    table = as_table(data, names, "records", owner)  # by name; missing / extra columns refused
    n = (batch_len(next(iter(table.values()))) or 0) if table else 0
    rows = np.arange(n, dtype=np.int64)
    cols = []
    for a in attrs:
        if n == 0:
            break
        if a in ranged:
            attr = schema[a]
            assert isinstance(attr, Numeric)
            lo, hi = attr.bounds(table[f"{a}.lo"], table[f"{a}.hi"], _where(owner))
            cols.append(Column(a, rows, lo, hi))
        else:
            cols.append(_column(schema, a, table[a], rows, owner))
    return RecordBatch(n, tuple(cols))


def record_batch(schema: Schema, data: Any, owner: str, *, attributes: Sequence[str] | None = None) -> RecordBatch:
    """Validate ``data`` (records or a table, see the module docstring) into a batch.

    Raises InvalidParameterError naming the attribute or column and the record's position,
    before anything is inserted.

    Complexity: O(records x attributes), vectorised for table columns.
    """
    if is_table(data):
        return _from_table(schema, data, owner, attributes)
    if attributes is not None:
        raise InvalidParameterError(f"The 'attributes' parameter of {owner} applies to tables only; records name their own.")
    return _from_records(schema, data, owner)
