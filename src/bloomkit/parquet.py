"""Parquet's Bloom filters from Python: read them, query them, prune row groups and files.

Parquet writers (Arrow / pyarrow's ``bloom_filter_options``, parquet-mr, Spark, DuckDB,
Impala) store one split-block Bloom filter per column chunk: a Thrift compact-protocol
``BloomFilterHeader`` then the bitset, at ``bloom_filter_offset`` (``bloom_filter_length``
bytes) of the column chunk's metadata. This module reads them as
:class:`bloomkit.SplitBlockBloomFilter` objects in Parquet mode and answers "which row groups,
which files may hold these values?" without reading any data page.

::

    from bloomkit import parquet
    parquet.row_groups_may_contain("t.parquet", "user_id", [42, 7])   # bool (row groups x values)
    parquet.files_to_read("data/", "user_id", [42])                   # {file: [row groups]}

Values are hashed as Parquet hashes them: XXH64 (seed 0) of the PLAIN encoding of the column's
physical type (:func:`plain_values`): INT32 / INT64 little-endian two's complement (unsigned,
date, time and timestamp columns by their stored integers), FLOAT / DOUBLE IEEE little-endian,
BYTE_ARRAY the bytes (str as UTF-8), FIXED_LEN_BYTE_ARRAY the ``type_length`` bytes (decimals
big-endian, float16 little-endian). A value of the wrong kind for the column (a str for an int
column, a float for an int column, ...) raises InvalidParameterError; damaged or truncated
filter bytes raise FormatError; a row group without a filter "may contain" every value.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from ._engine.columns import sized_items
from ._validation import Int, check_bytes, check_path
from .errors import FormatError, InvalidParameterError
from .splitblock import SplitBlockBloomFilter
from .splitblock.plain import (
    MAX_BLOOM_FILTER_BYTES,
    PHYSICAL_TYPES,
    _pa,
    optimal_num_bytes,
    plain_hashes,
    plain_source,
    plain_values,
)

__all__ = [
    "MAX_BLOOM_FILTER_BYTES",
    "bloom_filter_header",
    "dataset_may_contain",
    "files_to_read",
    "optimal_num_bytes",
    "parse_bloom_filter",
    "plain_hashes",
    "plain_values",
    "read_bloom_filters",
    "row_groups_may_contain",
    "serialize_bloom_filter",
]

_HEADER_GUESS = 256  # bytes read for a header whose length the metadata does not give
_MAX_DEPTH = 16  # Thrift nesting this reader follows (a BloomFilterHeader needs 3)


# ---------------------------------------------------------------------------------------------
# Thrift compact protocol: exactly what a BloomFilterHeader needs, bounded


class _Compact:
    """A reader of Thrift's compact protocol over ``data`` that never reads past it, never
    nests deeper than ``_MAX_DEPTH`` and never allocates more elements than bytes remain."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.pos, self.what = data, 0, what

    def fail(self, why: str) -> FormatError:
        return FormatError(f"{self.what}: {why} (at byte {self.pos})")

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise self.fail("truncated")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        out = 0
        for shift in range(0, 70, 7):
            b = self.byte()
            out |= (b & 0x7F) << shift
            if b < 0x80:
                if out >> 64:
                    raise self.fail("varint beyond 64 bits")
                return out
        raise self.fail("varint longer than 10 bytes")

    def zigzag(self, bits: int) -> int:
        v = self.varint()
        v = (v >> 1) ^ -(v & 1)
        if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
            raise self.fail(f"integer {v} does not fit {bits} bits")
        return v

    def value(self, ftype: int, depth: int) -> Any:
        if ftype in (1, 2):  # booleans: in a struct the type is the value; in a list, one byte
            return ftype == 1
        if ftype == 3:
            b = self.byte()
            return b - 256 if b > 127 else b
        if ftype in (4, 5, 6):
            return self.zigzag({4: 16, 5: 32, 6: 64}[ftype])
        if ftype == 7:
            if self.pos + 8 > len(self.data):
                raise self.fail("truncated double")
            self.pos += 8
            return None
        if ftype == 8:
            n = self.varint()
            if n > len(self.data) - self.pos:
                raise self.fail(f"binary of {n} bytes runs past the end")
            self.pos += n
            return self.data[self.pos - n : self.pos]
        if ftype in (9, 10):
            head = self.byte()
            size, etype = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            if size > len(self.data) - self.pos:
                raise self.fail(f"list of {size} elements runs past the end")
            return [self.value(etype, depth + 1) if etype not in (1, 2) else self.byte() == 1
                    for _ in range(size)]
        if ftype == 11:
            size = self.varint()
            if size and 2 * size > len(self.data) - self.pos - 1:
                raise self.fail(f"map of {size} entries runs past the end")
            kv = self.byte() if size else 0
            return [(self.value(kv >> 4, depth + 1), self.value(kv & 0x0F, depth + 1)) for _ in range(size)]
        if ftype == 12:
            return self.struct(depth + 1)
        raise self.fail(f"unknown Thrift type {ftype}")

    def struct(self, depth: int = 0) -> dict[int, tuple[int, Any]]:
        """Field id -> (type, value) of one struct (unknown fields are kept, not interpreted)."""
        if depth > _MAX_DEPTH:
            raise self.fail(f"structs nested deeper than {_MAX_DEPTH}")
        out: dict[int, tuple[int, Any]] = {}
        last = 0
        while True:
            head = self.byte()
            if head == 0:
                return out
            ftype, delta = head & 0x0F, head >> 4
            fid = last + delta if delta else self.zigzag(16)
            if fid in out:
                raise self.fail(f"field {fid} appears twice")
            out[fid] = (ftype, self.value(ftype, depth))
            last = fid


_UNIONS = ((2, "algorithm", "BLOCK"), (3, "hash", "XXHASH"), (4, "compression", "UNCOMPRESSED"))


def _parse_header(data: bytes, what: str) -> tuple[int, int]:
    """(numBytes, header length) of a BloomFilterHeader at the start of ``data``."""
    r = _Compact(data, what)
    fields = r.struct()
    ftype, nb = fields.get(1, (None, None))
    if ftype != 5 or not isinstance(nb, int) or nb <= 0:
        raise FormatError(f"{what}: BloomFilterHeader.numBytes is missing or not a positive i32 ({nb!r})")
    for fid, field, member in _UNIONS:
        ftype, v = fields.get(fid, (None, None))
        if ftype != 12 or v != {1: (12, {})}:
            raise FormatError(f"{what}: unsupported or missing BloomFilterHeader.{field} (only {member} is "
                              f"defined by the format): {v!r}")
    if nb % 32:
        raise FormatError(f"{what}: numBytes = {nb} is not a whole number of 32-byte blocks")
    return nb, r.pos


def _varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def bloom_filter_header(num_bytes: int) -> bytes:
    """The Thrift compact-protocol BloomFilterHeader of a ``num_bytes`` bitset (BLOCK, XXHASH,
    UNCOMPRESSED), byte for byte what Arrow writes.

    >>> bloom_filter_header(32).hex()
    '15401c1c00001c1c00001c1c000000'
    """
    nb = Int(1, (1 << 31) - 1)(num_bytes, "num_bytes", "bloom_filter_header")
    return b"\x15" + _varint(nb << 1) + b"\x1c\x1c\x00\x00" * 3 + b"\x00"


def serialize_bloom_filter(f: SplitBlockBloomFilter) -> bytes:
    """Header + bitset of a Parquet-mode filter, as stored at ``bloom_filter_offset``."""
    if not isinstance(f, SplitBlockBloomFilter):
        raise InvalidParameterError("The 'f' parameter of serialize_bloom_filter must be a Parquet-mode "
                                    f"SplitBlockBloomFilter. Got {type(f).__name__} instead.")
    bitset = f.to_parquet_bitset()
    return bloom_filter_header(len(bitset)) + bitset


def parse_bloom_filter(
    data: bytes | bytearray | memoryview, *, physical_type: str, type_length: int | None = None,
    what: str = "Parquet bloom filter",
) -> SplitBlockBloomFilter:
    """The filter stored in ``data`` (a BloomFilterHeader followed by exactly numBytes of
    bitset). FormatError on damaged, truncated, padded or unsupported data.

    Complexity: O(len(data)).
    """
    raw = check_bytes(data, "data", "parse_bloom_filter")
    if not isinstance(what, str):
        raise InvalidParameterError(f"The 'what' parameter of parse_bloom_filter must be a str (a label for messages). "
                                    f"Got {type(what).__name__} instead.")
    nb, hl = _parse_header(raw, what)
    if len(raw) != hl + nb:
        raise FormatError(f"{what}: header says {nb} bytes of bitset, {len(raw) - hl} follow")
    return SplitBlockBloomFilter.from_parquet_bitset(raw[hl:], physical_type=physical_type, type_length=type_length)


# ---------------------------------------------------------------------------------------------
# files


@dataclass
class _Column:
    """One column of one file: where to read and how to hash values for it."""

    name: str
    metadata: Any
    index: int
    physical_type: str
    type_length: int | None
    arrow_type: Any


def _open(source: Any) -> tuple[Any, Any]:
    """(pyarrow ParquetFile, binary file object) of a path or a seekable binary file."""
    import pyarrow.parquet as pq

    pa = _pa()
    if isinstance(source, str | os.PathLike):
        fh: IO[bytes] = open(check_path(source, "source", "bloomkit.parquet"), "rb")
    elif all(callable(getattr(source, a, None)) for a in ("read", "seek", "tell")):
        fh = source
    else:
        raise InvalidParameterError(
            "The 'source' parameter of bloomkit.parquet must be a path or a seekable binary file object. "
            f"Got {type(source).__name__} instead."
        )
    try:
        return pq.ParquetFile(fh), fh
    except (pa.ArrowInvalid, pa.ArrowException, OSError, ValueError) as e:
        if fh is not source:
            fh.close()
        raise FormatError(f"{source}: not a readable Parquet file ({e})") from None


def _column(pf: Any, column: Any, source: Any, owner: str) -> _Column:
    pa = _pa()
    md = pf.metadata
    paths = [md.schema.column(i).path for i in range(md.num_columns)]
    if not isinstance(column, str) or column not in paths:
        raise InvalidParameterError(
            f"The 'column' parameter of {owner} must name a column of {source}. Got {column!r} instead "
            f"(columns: {', '.join(paths)})."
        )
    i = paths.index(column)
    desc = md.schema.column(i)
    ptype = desc.physical_type
    if ptype not in PHYSICAL_TYPES:
        raise InvalidParameterError(f"{owner}: column {column!r} of {source} is {ptype}; Parquet writes Bloom "
                                    f"filters for {', '.join(PHYSICAL_TYPES)} columns only.")
    tlen = int(desc.length) if ptype == "FIXED_LEN_BYTE_ARRAY" else None
    arrow_type = None
    names = pf.schema_arrow.names
    if "." not in column or column in names:
        t = pf.schema_arrow.field(column).type
        if pa.types.is_dictionary(t):
            t = t.value_type
        if pa.types.is_timestamp(t):  # the unit stored, which coerce_timestamps may have changed
            unit = json.loads(desc.logical_type.to_json()).get("timeUnit", "")
            t = pa.timestamp({"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}.get(unit, t.unit), t.tz)
        arrow_type = t
    return _Column(column, md, i, ptype, tlen, arrow_type)


def _read_exact(fh: IO[bytes], offset: int, n: int, what: str) -> bytes:
    fh.seek(offset)
    data = fh.read(n)
    if len(data) != n:
        raise FormatError(f"{what}: file ends after {len(data)} of {n} bytes")
    return data


class _FilterReader:
    """The Bloom filters of one open file, each read and parsed once: row groups (or columns)
    whose metadata point at the same bytes share one filter object, and the filters of a file
    must not overlap (each is its own region of the file), so what is read is bounded by the
    file's size whatever the metadata claims (128 row groups pointing at one 8 MiB filter read
    8 MiB, not 1 GiB). Overlapping regions raise FormatError."""

    def __init__(self, fh: IO[bytes], size: int) -> None:
        self.fh, self.size = fh, size
        self.cache: dict[tuple[Any, ...], SplitBlockBloomFilter] = {}
        self.spans: list[tuple[int, int]] = []  # (start, end) of every filter read, sorted

    def _claim(self, start: int, end: int, what: str) -> None:
        """Record the region [start, end) of a filter; FormatError if it overlaps another."""
        import bisect

        i = bisect.bisect_left(self.spans, (start, end))
        if i < len(self.spans) and self.spans[i] == (start, end):
            return
        for j in (i - 1, i):
            if 0 <= j < len(self.spans) and self.spans[j][0] < end and start < self.spans[j][1]:
                a, b = self.spans[j]
                raise FormatError(f"{what}: bytes {start}..{end} overlap another Bloom filter's bytes {a}..{b} "
                                  "(a damaged or hostile footer)")
        self.spans.insert(i, (start, end))

    def read(self, col: _Column, rg: int) -> SplitBlockBloomFilter | None:
        cc = col.metadata.row_group(rg).column(col.index)
        off, length = cc.bloom_filter_offset, cc.bloom_filter_length
        what = f"bloom filter of column {col.name!r}, row group {rg}"
        if off is None:
            return None
        key = (off, length, col.physical_type, col.type_length)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        size, fh = self.size, self.fh
        if not 0 <= off < size:
            raise FormatError(f"{what}: offset {off} is outside the file ({size} bytes)")
        if length is not None:
            if not 0 < length <= size - off:
                raise FormatError(f"{what}: length {length} at offset {off} runs past the file ({size} bytes)")
            self._claim(off, off + length, what)
            f = parse_bloom_filter(_read_exact(fh, off, length, what), physical_type=col.physical_type,
                                   type_length=col.type_length, what=what)
        else:
            head = _read_exact(fh, off, min(_HEADER_GUESS, size - off), what)
            nb, hl = _parse_header(head, what)
            if nb > size - off - hl:
                raise FormatError(f"{what}: a bitset of {nb} bytes runs past the file")
            self._claim(off, off + hl + nb, what)
            bitset = _read_exact(fh, off + hl, nb, what)
            f = SplitBlockBloomFilter.from_parquet_bitset(bitset, physical_type=col.physical_type,
                                                          type_length=col.type_length)
        self.cache[key] = f
        return f


def _size(fh: IO[bytes]) -> int:
    pos = fh.tell()
    fh.seek(0, io.SEEK_END)
    size = fh.tell()
    fh.seek(pos)
    return size


def _filters(source: Any, column: str, owner: str) -> tuple[_Column, list[SplitBlockBloomFilter | None]]:
    pf, fh = _open(source)
    try:
        col = _column(pf, column, source, owner)
        reader = _FilterReader(fh, _size(fh))
        return col, [reader.read(col, rg) for rg in range(col.metadata.num_row_groups)]
    finally:
        if fh is not source:
            fh.close()


def read_bloom_filters(source: str | os.PathLike[str] | IO[bytes], column: str) -> list[SplitBlockBloomFilter | None]:
    """The Bloom filter of ``column`` in every row group of a Parquet file (None where a row
    group has none), as Parquet-mode :class:`~bloomkit.SplitBlockBloomFilter` objects.

    Parameters
    ----------
    source : path or seekable binary file
    column : str
        The column's path (``"a.b"`` for a nested field).

    Only the footer and the filters are read (``bloom_filter_offset`` / ``bloom_filter_length``
    of each column chunk), never a data page; row groups whose metadata point at the same
    filter share one object (read once), and filters whose bytes overlap are refused, so at
    most the file's size is read. FormatError for a damaged file or filter.
    Complexity: O(footer + filter bytes).
    """
    return _filters(source, column, "read_bloom_filters")[1]


def _probe(col: _Column, filters: list[SplitBlockBloomFilter | None], values: Any, cache: dict[Any, Any],
           owner: str) -> np.ndarray:
    key = (col.physical_type, col.type_length, str(col.arrow_type))
    if key not in cache:
        batch, hash_fn = plain_source(values, col.physical_type, col.type_length, col.arrow_type,
                                      name="values", owner=owner)
        cache[key] = hash_fn(batch)
    h = cache[key]
    out = np.ones((len(filters), len(h)), dtype=bool)
    done: dict[int, np.ndarray] = {}  # a filter shared by row groups is asked once
    for i, f in enumerate(filters):
        if f is not None:
            if id(f) not in done:
                done[id(f)] = f.contains_hashes(h)
            out[i] = done[id(f)]
    return out


def row_groups_may_contain(source: str | os.PathLike[str] | IO[bytes], column: str, values: Any) -> np.ndarray:
    """Bool array (row groups x values): False where the row group's Bloom filter proves the
    value absent, True where it may be present (or the row group has no filter).

    Values are converted to the column's type as pyarrow wrote it and hashed once
    (:func:`plain_values`); a value of another kind raises InvalidParameterError.
    Complexity: O(footer + filter bytes + row groups x values).
    """
    col, filters = _filters(source, column, "row_groups_may_contain")
    return _probe(col, filters, values, {}, "row_groups_may_contain")


def _files(source: Any) -> list[str]:
    if hasattr(source, "files") and not isinstance(source, str | os.PathLike):  # a pyarrow dataset
        return sorted(str(f) for f in source.files)
    if isinstance(source, str | os.PathLike):
        p = Path(source)
        if p.is_dir():
            return sorted(str(f) for f in p.rglob("*") if f.is_file() and f.suffix in (".parquet", ".parq")
                          and not f.name.startswith((".", "_")))
        return [str(p)]
    if isinstance(source, Iterable) and not isinstance(source, bytes | np.ndarray):
        return [check_path(f, "source", "bloomkit.parquet") for f in sized_items(source, "source", "bloomkit.parquet",
                                                                                  "files")]
    raise InvalidParameterError(
        f"The 'source' parameter must be a file, a directory, a list of files or a pyarrow dataset. "
        f"Got {type(source).__name__} instead.")


def dataset_may_contain(source: Any, column: str, values: Any) -> dict[str, np.ndarray]:
    """:func:`row_groups_may_contain` of every Parquet file of ``source`` (a directory, searched
    recursively for ``*.parquet``; a list of files; a ``pyarrow.dataset`` Dataset), by path.
    Values are converted and hashed once per column type. Complexity: O(footers + filters)."""
    cache: dict[Any, Any] = {}
    out = {}
    for path in _files(source):
        col, filters = _filters(path, column, "dataset_may_contain")
        out[path] = _probe(col, filters, values, cache, "dataset_may_contain")
    return out


def files_to_read(source: Any, column: str, values: Any) -> dict[str, list[int]]:
    """The files and row groups that may hold any of ``values`` (the others are proven not to
    by their Bloom filters): ``{path: [row group, ...]}``, files with none left out."""
    out = {}
    for path, hits in dataset_may_contain(source, column, values).items():
        rgs = np.flatnonzero(hits.any(axis=1)).tolist() if hits.size else []
        if rgs:
            out[path] = rgs
    return out


def _filter_report(source: Any, owner: str) -> dict[str, Any]:
    """Every column chunk's Bloom filter of one file (bytes, fill, estimated distinct values,
    predicted rate, rows), as the JSON of ``bloomkit parquet info``; a column without any
    filter is left out."""
    pf, fh = _open(source)
    try:
        md = pf.metadata
        reader = _FilterReader(fh, _size(fh))
        report: dict[str, Any] = {"file": str(source), "row_groups": md.num_row_groups, "columns": {}}
        for i in range(md.num_columns):
            name = md.schema.column(i).path
            if md.schema.column(i).physical_type not in PHYSICAL_TYPES:
                continue
            col = _column(pf, name, source, owner)
            rows = []
            for rg in range(md.num_row_groups):
                f = reader.read(col, rg)
                rows.append(None if f is None else {
                    "row_group": rg, "num_bytes": f.size_in_bits // 8, "fill_ratio": round(f.fill_ratio(), 6),
                    "estimated_ndv": f.estimated_count(), "predicted_fpr": f.predicted_fpr(),
                    "rows": md.row_group(rg).num_rows})
            if any(r is not None for r in rows):
                report["columns"][name] = {"physical_type": col.physical_type, "filters": rows}
    finally:
        if fh is not source:
            fh.close()
    return report
