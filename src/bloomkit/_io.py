"""Reading keys, values and records from files for the command line (text, CSV, TSV, Parquet;
gzip, bzip2 or xz; stdin), in bounded chunks, with typed keys and errors that name the file,
the line and the column.

Everything returned goes on through the data front door (:mod:`bloomkit._engine.columns`): columns are
read by name, rows by position; nothing is guessed silently:

* a table with several columns needs ``--column`` (the first column is never picked for you);
* a text file is UTF-8, one key per line (``\\n`` or ``\\r\\n``); a NUL byte or invalid UTF-8 is
  an error naming the line; empty lines are skipped and counted; a line longer than
  :data:`MAX_LINE_BYTES` is an error (an endless line must not fill the memory);
* ``--key-type`` parses text keys (``int``, ``float``, ``bytes`` = the UTF-8 of the line) and
  forces the type of a table column, a CSV / TSV file of one column included; by default text
  keys are ``str`` and table columns keep their own type (an int64 Parquet column holds int
  keys).

**Bounded memory.** :class:`KeyInput` reads its input a chunk at a time (:data:`CHUNK_BYTES`
of text or CSV, :data:`CHUNK_ROWS` rows of Parquet), so what a build holds besides its
structure does not grow with the input. A build that sizes itself from the data reads the
input twice (count, then insert): a regular file is simply opened again; standard input that
is not a regular file is copied to a temporary file while it is read the first time (in
``$TMPDIR``, removed at the end). Other non-regular files (FIFOs, devices such as /dev/zero,
sockets) are refused: give them as ``-`` (``bloomkit build - < /dev/fd/3``).

**Damaged input builds nothing.** A truncated or corrupted gzip / bzip2 / xz stream is an
:class:`InputError` naming the file, raised when the damage is reached, which is before any
output file is written (the first pass reads to the end before anything is built).
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from .errors import BloomkitError, InvalidParameterError

__all__ = [
    "CHUNK_BYTES",
    "CHUNK_ROWS",
    "KEY_TYPES",
    "MAX_LINE_BYTES",
    "Chunk",
    "DistinctCounter",
    "InputError",
    "KeyInput",
    "concat_batches",
    "parse_key",
]

KEY_TYPES = ("str", "bytes", "int", "float")
_TABLE_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}
_COMPRESSED = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}

CHUNK_BYTES = 2 << 20
"""Bytes of text or CSV read at a time (about 200,000 ten-byte keys)."""
CSV_BLOCK_BYTES = 1 << 20
"""Bytes of CSV / TSV parsed at a time (Arrow's parser holds about 25 times a block of short
rows while it works)."""
CHUNK_ROWS = 1 << 18
"""Rows of a Parquet file read at a time."""
MAX_LINE_BYTES = 16 << 20
"""The longest line (key) of a text file; a longer one is an error, not an allocation."""


class InputError(BloomkitError, ValueError):
    """An input file cannot be read as keys (format, encoding, column, type, damage)."""


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


# ---------------------------------------------------------------------------------------------
# byte streams: counting, teeing to a spool file, decompressing with errors that name the file


class _Counting(io.RawIOBase):
    """A raw reader over ``inner`` that counts the bytes read and, when ``spool`` is given,
    writes them there too (standard input read twice)."""

    def __init__(self, inner: IO[bytes], spool: IO[bytes] | None = None) -> None:
        self.inner, self.spool, self.count = inner, spool, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self.inner.read(len(b))
        n = len(data)
        b[:n] = data
        self.count += n
        if self.spool is not None and n:
            self.spool.write(data)
        return n


class _Guarded(io.RawIOBase):
    """A decompressing reader whose errors (truncated or damaged data) are one InputError
    naming the file."""

    def __init__(self, inner: Any, source: str, codec: str) -> None:
        self.inner, self.source, self.codec = inner, source, codec

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        try:
            return int(self.inner.readinto(b))
        except EOFError:
            raise InputError(f"{self.source}: the {self.codec} data is truncated (the file ends before its "
                             "end-of-stream marker); nothing was built") from None
        except (OSError, ValueError) as e:  # BadGzipFile, zlib.error, lzma.LZMAError, OSError (bz2)
            raise InputError(f"{self.source}: damaged {self.codec} data ({e}); nothing was built") from None


def _decompress(raw: io.BufferedReader, source: str) -> tuple[IO[bytes], str | None]:
    """(the decompressed stream, the codec name or None) of ``raw``, by its magic bytes."""
    head = raw.peek(6)[:6]
    inner: Any
    if head[:2] == b"\x1f\x8b":
        import gzip

        codec, inner = "gzip", gzip.GzipFile(fileobj=raw, mode="rb")
    elif head[:3] == b"BZh":
        import bz2

        codec, inner = "bzip2", bz2.BZ2File(raw)
    elif head == b"\xfd7zXZ\x00":
        import lzma

        codec, inner = "xz", lzma.LZMAFile(raw)
    else:
        return raw, None
    return io.BufferedReader(_Guarded(inner, source, codec), CHUNK_BYTES), codec


def _regular(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


# ---------------------------------------------------------------------------------------------
# chunks


@dataclass
class Chunk:
    """Rows ``first_row .. first_row + rows - 1`` of an input: the keys (a canonical batch) and
    the other columns asked for, by name."""

    keys: Any
    columns: dict[str, Any]
    rows: int
    first_row: int


class KeyInput:
    """One input of the CLI: a path (a regular file) or ``-`` (standard input), read a chunk at
    a time, as many times as ``passes`` says (see the module docstring).

    ``kind`` is the format (``fmt``, else the file name's suffix after a compression suffix;
    standard input: text), ``total`` the bytes (rows for Parquet) to read when known and
    :meth:`position` how far the current pass is, for progress bars.
    """

    def __init__(self, path: str, fmt: str | None = None, *, passes: int = 2) -> None:
        self.path = path
        self.source = "<stdin>" if path == "-" else path
        self.passes_left = passes
        self.total: int | None = None
        self.skipped_empty = 0
        self._spool: Any = None  # standard input copied here on the first pass
        self._spooled = False
        self._count: _Counting | None = None
        self._rows_done = 0
        self._tmp_copy: str | None = None  # standard input / decompressed CSV or Parquet, copied
        self._file: str | None = None  # the file pyarrow reads (a table: CSV, TSV, Parquet)
        self._native: Any = None  # the pyarrow file of the current CSV pass
        if path == "-":
            self._stdin_regular = _regular(sys.stdin.fileno()) if _has_fd(sys.stdin) else False
            if self._stdin_regular:
                self.total = os.fstat(sys.stdin.fileno()).st_size
            name = ""
        else:
            p = Path(path)
            try:
                st = os.stat(p)
            except FileNotFoundError:
                raise FileNotFoundError(2, "No such file or directory", path) from None
            if stat.S_ISDIR(st.st_mode):
                raise InputError(f"{path} is a directory, not a file of keys")
            if not stat.S_ISREG(st.st_mode):
                what = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else
                        "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                        "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
                why = (" bloomkit reads its input twice (to size the structure, then to fill it), and a FIFO "
                       "without a writer would wait forever;" if passes > 1 else "")
                raise InputError(f"{path} is {what}, not a regular file:{why} give it as standard input "
                                 f"instead: bloomkit ... - < {path}")
            self.total = st.st_size
            name = p.name
        suffix = Path(name).suffix.lower()
        if suffix in _COMPRESSED:
            suffix = Path(name[: -len(suffix)]).suffix.lower()
        self.kind = fmt or _TABLE_SUFFIXES.get(suffix, "text")
        if self.kind == "parquet":
            self.total = None  # rows, known once the footer is read

    # -- bytes ------------------------------------------------------------------------------
    def _open_raw(self, spool_stdin: bool = True) -> io.BufferedReader:
        """The raw bytes from the start (counting; standard input spooled on the first of
        several passes unless ``spool_stdin`` is False)."""
        if self.passes_left <= 0:
            raise AssertionError(f"{self.source} read more often than planned")
        self.passes_left -= 1
        inner: IO[bytes]
        spool = None
        if self.path != "-":
            inner = open(self.path, "rb", buffering=0)  # noqa: SIM115 - closed with the pass
        elif self._spooled:
            inner = open(self._spool.name, "rb")  # noqa: SIM115
        elif self._stdin_regular:
            os.lseek(sys.stdin.fileno(), 0, os.SEEK_SET)
            inner = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115
        else:
            inner = sys.stdin.buffer
            if self.passes_left > 0 and spool_stdin:  # read again later: keep a copy
                import tempfile

                self._spool = tempfile.NamedTemporaryFile(prefix="bloomkit-stdin-", delete=False)  # noqa: SIM115
                spool = self._spool
        self._count = _Counting(inner, spool)
        return io.BufferedReader(self._count, CHUNK_BYTES)

    def _end_pass(self) -> None:
        """After a pass: the spool (if any) complete, the file closed."""
        if self._count is not None and self._count.spool is not None:
            self._count.spool.flush()
            self._spooled = True
        if self._count is not None and self._count.inner is not sys.stdin.buffer:
            self._count.inner.close()

    def position(self) -> int:
        """Bytes (Parquet: rows) of the input read so far in this pass."""
        if self.kind == "parquet":
            return self._rows_done
        if self._native is not None:
            return int(self._native.tell()) if not self._native.closed else self.total or 0
        return self._count.count if self._count is not None else 0

    def close(self) -> None:
        """Remove the temporary copies (standard input, decompressed Parquet)."""
        for f in (self._spool.name if self._spool is not None else None, self._tmp_copy):
            if f is not None:
                try:
                    os.unlink(f)
                except OSError:
                    pass
        if self._spool is not None:
            self._spool.close()
        self._spool, self._tmp_copy = None, None

    def __enter__(self) -> KeyInput:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- chunks -----------------------------------------------------------------------------
    def chunks(self, column: str | None = None, extra: list[str] | None = None,
               key_type: str | None = None) -> Iterator[Chunk]:
        """The keys (column ``column`` of a table; the only column if ``column`` is None) and
        the ``extra`` columns, a chunk at a time, from the start of the input.

        Raises InputError naming the file, line or column for every problem (missing column,
        several columns without ``column``, nulls, binary text, damaged compressed data or
        Parquet, a value that is not of ``key_type``); an input without rows raises it at the
        end of the pass."""
        if key_type is not None and key_type not in KEY_TYPES:
            raise InvalidParameterError(f"--key-type must be one of {', '.join(KEY_TYPES)}; got {key_type!r}")
        extra = list(extra or [])
        rows = 0
        if self.kind == "text":
            if extra:
                raise InputError(f"{self.source}: a text file has one key per line and no named columns; "
                                 f"{', '.join(extra)} need a CSV or Parquet file")
            gen: Iterator[Chunk] = self._text_chunks(key_type or "str")
        else:
            gen = self._table_chunks(column, extra, key_type)
        for chunk in gen:
            rows += chunk.rows
            yield chunk
        if rows == 0:
            raise InputError(f"{self.source} holds no keys")

    def batches(self) -> Iterator[Any]:
        """Every column of a CSV / TSV / Parquet table, as pyarrow record batches (records for
        --kind range / profile-index). InputError for text input and damage; an input without
        rows raises it at the end of the pass."""
        if self.kind == "text":
            raise InputError(f"{self.source}: records come from a table (CSV, TSV or Parquet; say --format for "
                             "stdin) whose columns are the schema's attributes")
        rows = 0
        for batch in self._record_batches(None, None, None):
            rows += batch.num_rows
            yield batch
        if rows == 0:
            raise InputError(f"{self.source} holds no records")

    # text ----------------------------------------------------------------------------------
    def _text_chunks(self, key_type: str) -> Iterator[Chunk]:
        raw = self._open_raw()
        stream, _codec = _decompress(raw, self.source)
        self.skipped_empty = 0
        try:
            carry = b""
            line0 = 0  # lines before `data`
            row0 = 0
            first = True
            while True:
                block = stream.read(CHUNK_BYTES)
                eof = not block
                buf = carry + block if carry else block
                if first and buf:
                    if buf.startswith(b"\xef\xbb\xbf"):
                        buf = buf[3:]
                    first = False
                if eof:
                    data, carry = buf, b""
                else:
                    cut = buf.rfind(b"\n")
                    if cut < 0:
                        if b"\0" in block:  # binary input: say so now, not after 16 MiB
                            _parse_lines(buf, self.source, line0, key_type)
                        carry = buf
                        if len(carry) > MAX_LINE_BYTES:
                            raise InputError(f"{self.source}: line {line0 + 1} is longer than {MAX_LINE_BYTES >> 20} "
                                             "MiB: this is not a file of keys, one per line")
                        continue
                    data, carry = buf[: cut + 1], buf[cut + 1 :]
                if data:
                    keys, n, skipped, lines = _parse_lines(data, self.source, line0, key_type)
                    self.skipped_empty += skipped
                    line0 += lines
                    if n:
                        yield Chunk(keys, {}, n, row0)
                        row0 += n
                if eof:
                    break
        finally:
            self._end_pass()

    # tables --------------------------------------------------------------------------------
    def _table_chunks(self, column: str | None, extra: list[str], key_type: str | None) -> Iterator[Chunk]:
        from ._engine.columns import as_keys

        row0 = 0
        for batch in self._record_batches(column, extra, key_type):
            key = column if column is not None else batch.schema.names[0]  # the only column
            cols: dict[str, Any] = {}
            for c in [key, *extra]:
                arr = batch.column(batch.schema.get_field_index(c))
                if arr.null_count:
                    import pyarrow.compute as pc

                    at = int(pc.index(pc.is_null(arr), True).as_py())
                    raise InputError(f"{self.source}: column {c!r} has an empty (null) value at row {row0 + at + 1} "
                                     "(keys and values must not be null)")
                cols[c] = as_keys(arr, f"column {c!r} of {self.source}")
            keys = cols.pop(key)
            yield Chunk(keys, cols, batch.num_rows, row0)
            row0 += batch.num_rows

    def _record_batches(self, column: str | None, extra: list[str] | None, key_type: str | None) -> Iterator[Any]:
        """pyarrow record batches of the columns ``[column, *extra]`` (all when None; the
        only column when ``column`` is None but ``extra`` is a list), ``column`` read as
        ``key_type``."""
        if self.kind == "parquet":
            yield from self._parquet_batches(column, extra, key_type)
        else:
            yield from self._csv_batches(column, extra, key_type)

    def _wanted(self, names: list[str], column: str | None, extra: list[str] | None) -> tuple[str | None, list[str] | None]:
        """(the key column, the columns to read) of a table with columns ``names``: all of them
        when ``extra`` is None (records), else the key column (the only one when ``column`` is
        None) and the extras, each required to exist."""
        if extra is None:
            return column, None
        if column is None:
            if len(names) != 1:
                raise InputError(f"{self.source} has {len(names)} columns ({', '.join(names[:10])}): "
                                 "choose the keys with --column")
            column = names[0]
        wanted = [column, *extra]
        missing = [c for c in wanted if c not in names]
        if missing:
            raise InputError(f"{self.source} has no column {missing[0]!r} (columns: {', '.join(names[:20])})")
        return column, wanted

    def _as_file(self, magic: bytes | None = None, name: str = "") -> str:
        """The path of a regular, uncompressed file holding this input, for pyarrow to read
        natively: the file itself, or (standard input, compressed data) a temporary copy made
        on the first pass, then read as often as needed. ``magic``: the bytes it must start
        with (else InputError: not a ``name`` file)."""
        if self._file is None:
            raw = self._open_raw(spool_stdin=False)
            stream, codec = _decompress(raw, self.source)
            bad = f"{self.source}: not a {name} file (no {(magic or b'').decode()} magic)"
            try:
                if codec is None and self.path != "-":
                    if magic is not None and stream.read(len(magic)) != magic:
                        raise InputError(bad)
                    target = self.path
                else:
                    import shutil
                    import tempfile

                    with tempfile.NamedTemporaryFile(prefix=f"bloomkit-{self.kind}-", suffix=f".{self.kind}",
                                                     delete=False) as tmp:
                        self._tmp_copy = tmp.name
                        shutil.copyfileobj(stream, tmp, CHUNK_BYTES)
                    target = self._tmp_copy
                    with open(target, "rb") as fh:
                        if magic is not None and fh.read(len(magic)) != magic:
                            raise InputError(bad)
                    if self.kind != "parquet":
                        self.total = os.path.getsize(target)  # progress: bytes of the copy
            finally:
                self._end_pass()
            self._file = target
            self.passes_left = 1 << 30  # a file now: read it as often as needed
        return self._file

    def _csv_batches(self, column: str | None, extra: list[str] | None, key_type: str | None) -> Iterator[Any]:
        """Record batches of a CSV / TSV file, read by pyarrow from a native file, never from a
        Python file object: pyarrow reads ahead on its own I/O threads, and one of them calling
        back into Python while the interpreter exits aborts the process ("terminate called
        without an active exception": 2 of 30 runs of a build that failed early)."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        path = self._as_file()
        delim = "\t" if self.kind == "tsv" else ","
        import csv

        with open(path, "rb") as fh:
            head = fh.readline(MAX_LINE_BYTES)
        if not head.strip():
            return
        try:
            names = next(csv.reader([head.decode("utf-8-sig")], delimiter=delim))
        except (UnicodeDecodeError, csv.Error, StopIteration) as e:
            raise InputError(f"{self.source}: cannot read its first line as a {self.kind.upper()} header ({e})") from None
        column, wanted = self._wanted(names, column, extra)
        types = {column: _arrow_type(key_type)} if column is not None and key_type else {}
        self._native = native = pa.OSFile(path)
        try:
            reader = pacsv.open_csv(
                native,
                read_options=pacsv.ReadOptions(block_size=CSV_BLOCK_BYTES, use_threads=False),
                parse_options=pacsv.ParseOptions(delimiter=delim),
                convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                     include_columns=wanted),
            )
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    break
                yield batch
        except (pa.ArrowInvalid, pa.ArrowKeyError, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            what = f" (--key-type {key_type})" if key_type and "conversion" in first.lower() else ""
            raise InputError(f"{self.source}: cannot read it as {self.kind.upper()}{what}: {first}") from None
        finally:
            native.close()

    def _parquet_file(self) -> Any:
        """A pyarrow ParquetFile: the path itself, or a temporary copy of standard input /
        decompressed data (Parquet needs random access), made on the first pass."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        target = self._as_file(magic=b"PAR1", name="Parquet")
        try:
            pf = pq.ParquetFile(target)
        except (pa.ArrowInvalid, OSError) as e:
            raise InputError(f"{self.source}: cannot read it as PARQUET: {str(e).splitlines()[0]}") from None
        self.total = pf.metadata.num_rows
        return pf

    def _parquet_batches(self, column: str | None, extra: list[str] | None, key_type: str | None) -> Iterator[Any]:
        import pyarrow as pa

        self._rows_done = 0
        pf = self._parquet_file()
        column, wanted = self._wanted(list(pf.schema_arrow.names), column, extra)
        try:
            for batch in pf.iter_batches(batch_size=CHUNK_ROWS, columns=wanted):
                if key_type is not None and column is not None:
                    i = batch.schema.get_field_index(column)
                    arr = batch.column(i)
                    want = _arrow_type(key_type)
                    if arr.type != want:
                        try:
                            arr = arr.cast(want)
                        except (ValueError, TypeError, NotImplementedError, pa.ArrowInvalid) as e:
                            raise InputError(f"{self.source}: column {column!r} cannot be read as {key_type} keys: "
                                             f"{str(e).splitlines()[0]}") from None
                        batch = batch.set_column(i, column, arr)
                self._rows_done += batch.num_rows
                yield batch
        except (pa.ArrowInvalid, OSError) as e:
            raise InputError(f"{self.source}: cannot read it as PARQUET: {str(e).splitlines()[0]}") from None


def _has_fd(f: Any) -> bool:
    try:
        f.fileno()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False
    return True


def _arrow_type(key_type: str) -> Any:
    import pyarrow as pa

    return {"str": pa.string(), "bytes": pa.binary(), "int": pa.int64(), "float": pa.float64()}[key_type]


def _parse_lines(data: bytes, source: str, line0: int, key_type: str) -> tuple[Any, int, int, int]:
    """(keys, number of keys, empty lines skipped, lines) of whole lines of text ``data`` (the
    last may lack its newline), the first being line ``line0 + 1``. Keys: a pyarrow string /
    binary array, a numpy int64 / float64 array, or a list (ints beyond 64 bits)."""
    import pyarrow as pa

    nul = data.find(b"\0")
    if nul >= 0:
        line = line0 + data.count(b"\n", 0, nul) + 1
        raise InputError(f"{source}: line {line} holds a NUL byte: this looks like a binary file, not text "
                         "(give a .csv / .parquet file, or text with one key per line)")
    arr = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(arr == 10)
    ends = nl if data.endswith(b"\n") else np.append(nl, len(arr))
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    cr = (ends > starts) & (arr[np.maximum(ends - 1, 0)] == 13)  # "\r\n": the \r is not part of the key
    ends = ends - cr
    lengths = ends - starts
    keep = lengths > 0
    n = int(keep.sum())
    skipped = len(lengths) - n
    lines = len(nl)
    if n == 0:
        return None, 0, skipped, lines
    drop = np.zeros(len(arr), dtype=bool)
    drop[nl] = True
    drop[ends[cr]] = True
    packed = arr[~drop] if (nl.size or cr.any()) else arr
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths[keep], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(packed))]
    if key_type == "bytes":
        return pa.Array.from_buffers(pa.large_binary(), n, buffers), n, skipped, lines
    strings = pa.Array.from_buffers(pa.large_string(), n, buffers)
    try:
        strings.validate(full=True)
    except pa.ArrowInvalid:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = line0 + data.count(b"\n", 0, e.start) + 1
            raise InputError(f"{source}: line {line} is not valid UTF-8 (byte {e.start} of this chunk): {e.reason}") from None
        raise
    if key_type == "str":
        return strings, n, skipped, lines
    target = pa.int64() if key_type == "int" else pa.float64()
    try:
        out = strings.cast(target).to_numpy()
        if key_type == "float" and np.isnan(out).any():
            raise ValueError("NaN")
        return out, n, skipped, lines
    except (pa.ArrowInvalid, ValueError):  # Python's reading: spaces, big ints; or the line at fault
        numbers = np.flatnonzero(keep) + line0 + 1
        keys = [parse_key(t, key_type, f"{source}, line {int(ln)}: ")
                for t, ln in zip(strings.to_pylist(), numbers, strict=True)]
        return keys, n, skipped, lines


# ---------------------------------------------------------------------------------------------
# batches


def concat_batches(parts: list[Any]) -> Any:
    """One canonical batch of the canonical batches ``parts`` (chunks of one column)."""
    if len(parts) == 1:
        return parts[0]
    if all(isinstance(p, np.ndarray) for p in parts):
        return np.concatenate(parts)
    if all(type(p).__module__.startswith("pyarrow") for p in parts):
        import pyarrow as pa

        chunks = [c for p in parts for c in (p.chunks if isinstance(p, pa.ChunkedArray) else [p])]
        if len({c.type for c in chunks}) == 1:
            return pa.chunked_array(chunks)
    out: list[Any] = []
    for p in parts:
        out.extend(p if isinstance(p, list) else p.tolist() if isinstance(p, np.ndarray) else p.to_pylist())
    return out


# ---------------------------------------------------------------------------------------------
# distinct keys in bounded memory


@dataclass
class DistinctCounter:
    """The number of distinct 64-bit hashes added: exact (a sorted array) up to ``exact_limit``
    of them, then a HyperLogLog of 2^16 registers (Flajolet et al. 2007; relative standard
    error 1.04 / 2^8 = 0.41 %), so memory stays below about 3 * 8 * exact_limit bytes (24 MiB)
    whatever the input.

    >>> c = DistinctCounter(exact_limit=1000)
    >>> c.add(np.arange(500, dtype=np.uint64)); c.add(np.arange(250, 750, dtype=np.uint64)); c.count()
    (750, True)
    """

    exact_limit: int = 1 << 20
    _sorted: np.ndarray | None = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    _registers: np.ndarray | None = None

    P = 16
    """log2 of the number of HyperLogLog registers."""
    MARGIN = 1.0125
    """Capacity per estimated key beyond the exact limit: 3 standard errors of the estimate."""

    def add(self, hashes: np.ndarray) -> None:
        """Count the (uint64) hashes of a chunk. Complexity: O((n + distinct) log) while exact
        (a merge of sorted runs), O(n) after."""
        if self._registers is not None:
            self._hll_add(hashes)
            return
        assert self._sorted is not None
        merged = np.concatenate([self._sorted, np.sort(hashes)])
        merged.sort(kind="stable")  # two sorted runs: a merge (np.unique hashes, much slower here)
        if len(merged) > 1:
            keep = np.empty(len(merged), dtype=bool)
            keep[0] = True
            np.not_equal(merged[1:], merged[:-1], out=keep[1:])
            merged = merged[keep]
        if len(merged) > self.exact_limit:
            self._registers = np.zeros(1 << self.P, dtype=np.uint8)
            self._hll_add(merged)
            self._sorted = None
        else:
            self._sorted = merged

    def _hll_add(self, h: np.ndarray) -> None:
        assert self._registers is not None
        p = self.P
        idx = (h >> np.uint64(64 - p)).astype(np.intp)
        x = (h << np.uint64(p)) | np.uint64(1 << (p - 1))  # never zero: rank <= 64 - p + 1
        bits = np.zeros(len(h), dtype=np.uint8)  # the bit length of x
        for s in (32, 16, 8, 4, 2, 1):
            big = x >= np.uint64(1 << s)
            bits[big] += s
            x[big] >>= np.uint64(s)
        bits += x.astype(np.uint8)
        np.maximum.at(self._registers, idx, (65 - bits).astype(np.uint8))

    def count(self) -> tuple[int, bool]:
        """(distinct hashes, exact?): the estimate of the HyperLogLog beyond the exact limit
        (with the small-range correction of linear counting)."""
        if self._registers is None:
            assert self._sorted is not None
            return len(self._sorted), True
        m = float(len(self._registers))
        est = 0.7213 / (1 + 1.079 / m) * m * m / float(np.sum(np.ldexp(1.0, -self._registers.astype(np.int64))))
        zeros = int(np.count_nonzero(self._registers == 0))
        if est <= 2.5 * m and zeros:
            est = m * float(np.log(m / zeros))
        return int(round(est)), False

    def capacity(self) -> int:
        """Keys to size a structure for: the exact count, or the estimate plus 3 standard
        errors (:data:`MARGIN`), at least 1."""
        n, exact = self.count()
        return max(1, n if exact else int(np.ceil(n * self.MARGIN)))
