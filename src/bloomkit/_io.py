"""Reading keys, values and records from files for the command line (text, gzip, stdin, CSV,
Parquet), with typed keys and errors that name the file, the line and the column.

Everything returned goes on through the data front door (:mod:`bloomkit._columns`): columns are
read by name, rows by position; nothing is guessed silently:

* a table with several columns needs ``--column`` (the first column is never picked for you);
* a text file is UTF-8, one key per line (``\\n`` or ``\\r\\n``); a NUL byte or invalid UTF-8 is
  an error naming the line; empty lines are skipped and counted;
* ``--key-type`` parses text keys (``int``, ``float``, ``bytes`` = the UTF-8 of the line) and
  forces the type of a table column; by default text keys are ``str`` and table columns keep
  their own type (an int64 Parquet column holds int keys).
"""

from __future__ import annotations

import gzip
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import BloomkitError, InvalidParameterError

__all__ = ["KEY_TYPES", "KeyFile", "open_bytes", "parse_key", "read_keys", "read_table", "read_text_keys"]

KEY_TYPES = ("str", "bytes", "int", "float")
_TABLE_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}


class InputError(BloomkitError, ValueError):
    """An input file cannot be read as keys (format, encoding, column, type)."""


@dataclass
class KeyFile:
    """What :func:`read_keys` found: the keys (a canonical batch), optional values / extra
    columns, and what was read."""

    keys: Any
    source: str
    rows: int
    columns: dict[str, Any] = field(default_factory=dict)
    skipped_empty: int = 0

    def distinct(self) -> int:
        """Number of distinct keys (what a filter's capacity has to hold)."""
        return count_distinct(self.keys)


def count_distinct(keys: Any) -> int:
    """Distinct keys of a canonical batch (numpy, pyarrow, list)."""
    if isinstance(keys, np.ndarray):
        if keys.ndim == 2:
            return len(np.unique(keys, axis=0))
        return len(np.unique(keys))
    if type(keys).__module__.startswith("pyarrow"):
        import pyarrow.compute as pc

        return int(pc.count_distinct(keys).as_py())
    try:
        return len(set(keys))
    except TypeError:  # unhashable items (lists): count their reprs
        return len({repr(k) for k in keys})


def open_bytes(path: str) -> tuple[bytes, str]:
    """The bytes of ``path`` ('-' = stdin), gunzipped if gzip; and the name without .gz."""
    if path == "-":
        raw = sys.stdin.buffer.read()
        name = "<stdin>"
    else:
        p = Path(path)
        if p.is_dir():
            raise InputError(f"{path} is a directory, not a file of keys")
        raw = p.read_bytes()
        name = p.name
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(f"{path}: damaged gzip data ({e})") from None
        if name.endswith(".gz"):
            name = name[:-3]
    return raw, name


def parse_key(text: str, key_type: str, where: str = "") -> Any:
    """A key of ``key_type`` from its text (the CLI's one parser, for files and query arguments)."""
    if key_type == "str":
        return text
    if key_type == "bytes":
        return text.encode("utf-8")
    try:
        if key_type == "int":
            if "_" in text:  # Python's int() reads "1_000"; a key file means the text itself
                raise ValueError(text)
            return int(text.strip(), 10)
        if key_type == "float":
            v = float(text)
            if v != v:
                raise ValueError("NaN is not a key")
            return v
    except ValueError:
        raise InvalidParameterError(f"{where}{text!r} is not a{'n' if key_type == 'int' else ''} {key_type} key") from None
    raise InvalidParameterError(f"unknown key type {key_type!r} (use one of {', '.join(KEY_TYPES)})")


def read_text_keys(raw: bytes, source: str, key_type: str = "str") -> KeyFile:
    """Keys of a UTF-8 text, one per line."""
    nul = raw.find(b"\0")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise InputError(f"{source}: line {line} holds a NUL byte: this looks like a binary file, not text "
                         "(give a .csv / .parquet file, or text with one key per line)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise InputError(f"{source}: line {line} is not valid UTF-8 (byte {e.start}): {e.reason}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    keys: list[Any] = []
    skipped = 0
    for i, raw_line in enumerate(lines):
        entry = raw_line[:-1] if raw_line.endswith("\r") else raw_line
        if not entry:
            skipped += 1
            continue
        keys.append(entry if key_type == "str" else parse_key(entry, key_type, f"{source}, line {i + 1}: "))
    return KeyFile(keys, source, len(keys), skipped_empty=skipped)


def _arrow_type(key_type: str) -> Any:
    import pyarrow as pa

    return {"str": pa.string(), "bytes": pa.binary(), "int": pa.int64(), "float": pa.float64()}[key_type]


def _read_table(raw: bytes, fmt: str, source: str, wanted: list[str] | None, key_column: str | None,
                key_type: str | None) -> Any:
    import pyarrow as pa

    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return pq.read_table(pa.BufferReader(raw), columns=wanted)
        import pyarrow.csv as pacsv

        types = {key_column: _arrow_type(key_type)} if key_column and key_type else {}
        return pacsv.read_csv(
            pa.BufferReader(raw),
            parse_options=pacsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ","),
            convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                 include_columns=wanted),
        )
    except (pa.ArrowInvalid, pa.ArrowKeyError, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{source}: cannot read it as {fmt.upper()}: {first}") from None


def read_keys(
    path: str,
    *,
    column: str | None = None,
    extra: list[str] | None = None,
    key_type: str | None = None,
    fmt: str | None = None,
) -> KeyFile:
    """Keys (and ``extra`` named columns) of a text / CSV / TSV / Parquet file, gzip or not;
    ``path`` '-' reads standard input (text unless ``fmt`` says otherwise).

    Raises InputError naming the file, line or column for every problem (missing column, several
    columns without ``column``, nulls, binary text, damaged gzip or Parquet, empty input)."""
    if key_type is not None and key_type not in KEY_TYPES:
        raise InvalidParameterError(f"--key-type must be one of {', '.join(KEY_TYPES)}; got {key_type!r}")
    raw, name = open_bytes(path)
    source = "<stdin>" if path == "-" else path
    kind = fmt or _TABLE_SUFFIXES.get(Path(name).suffix.lower(), "text")
    if kind == "text":
        if extra:
            raise InputError(f"{source}: a text file has one key per line and no named columns; "
                             f"{', '.join(extra)} need a CSV or Parquet file")
        kf = read_text_keys(raw, source, key_type or "str")
    else:
        if raw[:4] != b"PAR1" and kind == "parquet":
            raise InputError(f"{source}: not a Parquet file (no PAR1 magic)")
        wanted = None if column is None else [column, *(extra or [])]
        if column is None:  # learn the column names first
            table = _read_table(raw, kind, source, None, None, None)
            names = table.column_names
            if len(names) != 1:
                raise InputError(f"{source} has {len(names)} columns ({', '.join(names[:10])}): "
                                 "choose the keys with --column")
            column = names[0]
            if extra:
                raise InputError(f"{source} has no columns {', '.join(extra)}")
        else:
            header = _read_table(raw, kind, source, None, None, None) if kind != "parquet" else None
            names = header.column_names if header is not None else _parquet_names(raw, source)
            missing = [c for c in [column, *(extra or [])] if c not in names]
            if missing:
                raise InputError(f"{source} has no column {missing[0]!r} (columns: {', '.join(names[:20])})")
            table = _read_table(raw, kind, source, wanted, column, key_type)
        if table.num_rows == 0:
            raise InputError(f"{source} holds no keys")
        from ._columns import as_keys

        cols: dict[str, Any] = {}
        for c in [column, *(extra or [])]:
            arr = table.column(c)
            if key_type is not None and c == column and kind == "parquet" and arr.type != _arrow_type(key_type):
                try:
                    arr = arr.cast(_arrow_type(key_type))
                except (ValueError, TypeError, NotImplementedError) as e:
                    raise InputError(f"{source}: column {c!r} cannot be read as {key_type} keys: {e}") from None
            cols[c] = as_keys(arr, f"column {c!r} of {source}")
        keys = cols.pop(column)
        kf = KeyFile(keys, source, table.num_rows, cols)
    if kf.rows == 0:
        raise InputError(f"{source} holds no keys")
    return kf


def read_table(path: str, fmt: str | None = None) -> tuple[Any, str]:
    """(pyarrow Table of every column, source name) of a CSV / TSV / Parquet file, gzip or not
    (``-``: stdin, ``fmt`` required). InputError for text input, damage and empty tables."""
    raw, name = open_bytes(path)
    source = "<stdin>" if path == "-" else path
    kind = fmt or _TABLE_SUFFIXES.get(Path(name).suffix.lower(), "text")
    if kind == "text":
        raise InputError(f"{source}: records come from a table (CSV, TSV or Parquet; say --format for stdin) "
                         "whose columns are the schema's attributes")
    if raw[:4] != b"PAR1" and kind == "parquet":
        raise InputError(f"{source}: not a Parquet file (no PAR1 magic)")
    table = _read_table(raw, kind, source, None, None, None)
    if table.num_rows == 0:
        raise InputError(f"{source} holds no records")
    return table, source


def _parquet_names(raw: bytes, source: str) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return list(pq.ParquetFile(pa.BufferReader(raw)).schema_arrow.names)
    except (pa.ArrowInvalid, OSError) as e:
        raise InputError(f"{source}: cannot read it as PARQUET: {str(e).splitlines()[0]}") from None
