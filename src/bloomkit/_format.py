"""The one binary container format of every bloomkit structure (see docs/format.md).

Layout (all integers little-endian)::

    offset  size  field
    0       8     magic b"BLOOMKIT"
    8       2     format version (FORMAT_VERSION = 2; files of format 1, written before release
                  0.1.0, are refused)
    10      2     flags: 0 in a complete file; 1 = being built (``create``), 2 = opened for
                  writing in place (``bloomkit.open(path, "r+")``): both are refused by ``load``
    12      32    structure tag, ASCII, NUL-padded (e.g. "bloom.BloomFilter")
    44      2     hash algorithm id (1 = XXH64 + SplitMix64 probes)
    46      2     reserved (0)
    48      8     seed
    56      4     P = length of the parameter block
    60      8     D = length of the data block
    68      P     parameter block: UTF-8 JSON object, keys sorted; "__arrays__" lists
                  [name, dtype, shape] of every array in data-block order
    68+P    pad   zero bytes to the next multiple of 8
    ...     D     data block: each array's little-endian bytes, each padded to 8 bytes

A data block of at least :data:`PAGE_ALIGN_MIN` bytes (and every file ``create`` builds) starts
on a :data:`PAGE` boundary: the JSON of the parameter block is padded with spaces (still plain
JSON) to reach it, keeping at least :data:`PARAM_SLACK` spare bytes so that ``r+`` mappings
rewrite the parameters (key types, overflow) in place (docs/mapped.md).
    end-4   4     CRC-32 (zlib) of every byte before it

Loading is defensive: a file is untrusted input. Beyond the checksum, the loader refuses JSON
nested deeper than :data:`MAX_JSON_DEPTH`, numbers outside 64 bits, NaN / infinities, duplicate
keys or array names, array shapes that do not fit the data block, parameters and arrays the
structure does not declare (its ``_PARAMS`` / ``_ARRAYS`` specs, the same constraint objects its
constructor uses), and allocations beyond the *load budget*: while a file of N bytes is being
turned into an object, the storage layer allocates at most ``LOAD_EXPANSION * N + LOAD_SLACK``
bytes beyond the arrays of the file itself (and never more than :data:`MAX_LOAD_BYTES`). Every
refusal is a :class:`~bloomkit.errors.FormatError` naming the field; nothing is ever unpickled.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import operator
import os
import pickle
import stat
import struct
import threading
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, SupportsIndex

import numpy as np

from . import _registry
from ._engine.hashing import HASH_XXH64, hash_name
from ._engine.storage import (
    LOAD_EXPANSION,
    LOAD_SLACK,
    MAX_LOAD_BYTES,
    aligned_copy,
    aligned_empty_unbudgeted,
    load_budget,
    reserve,
)
from ._validation import Spec, check_params, check_path
from .errors import FormatError, InvalidParameterError

__all__ = [
    "FORMAT_VERSION",
    "LOAD_EXPANSION",
    "LOAD_SLACK",
    "MAGIC",
    "MAX_JSON_DEPTH",
    "MAX_LOAD_BYTES",
    "ArraySpec",
    "Container",
    "Persistable",
    "load",
    "load_budget",
    "loads",
    "pack",
    "reserve",
    "unpack",
    "write_atomic",
]

MAGIC = b"BLOOMKIT"
FORMAT_VERSION = 2
_HEADER = struct.Struct("<8sHH32sHHQIQ")
_ALLOWED_DTYPES = {
    "|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8",
}
MAX_PARAMS_BYTES = 1 << 26
"""Largest parameter block a file may have (64 MiB)."""
MAX_JSON_DEPTH = 32
"""Deepest nesting of lists / objects in a parameter block."""
MAX_ARRAY_DIMS = 4
MAX_ARRAYS = 64
FLAG_BUILDING = 1
"""Header flag: the file is being built by ``create`` (or its build was interrupted)."""
FLAG_MODIFIED = 2
"""Header flag: the file is mapped for writing (``open(path, "r+")``); its CRC is stale until
``close()`` seals it again."""
PAGE = 4096
"""Alignment of the data block of a mappable file."""
PAGE_ALIGN_MIN = 1 << 20
"""Data blocks of at least this many bytes start on a page boundary (smaller files keep the
compact layout: the golden files are unchanged)."""
PARAM_SLACK = 512
"""Spare bytes (spaces) a page-aligned parameter block keeps for in-place rewrites."""


@dataclass(frozen=True)
class Container:
    """A decoded container: what :func:`unpack` returns."""

    structure: str
    version: int
    hash_id: int
    seed: int
    params: dict[str, Any]
    arrays: dict[str, np.ndarray]
    nbytes: int = 0


@dataclass(frozen=True)
class ArraySpec:
    """What a structure accepts for one saved array: dtype (little-endian numpy string, e.g.
    ``"<u8"``), number of dimensions, whether it may be absent, and bounds its values must lie in
    (checked before the structure sees the array)."""

    dtype: str | None
    ndim: int = 1
    optional: bool = False
    lo: int | float | None = None
    hi: int | float | None = None


def _pad8(n: int) -> int:
    return (-n) % 8


# ---------------------------------------------------------------------------------------------
# writing


def _aligned_params(pjson: bytes) -> bytes:
    """``pjson`` padded with spaces so that the data block starts on a :data:`PAGE` boundary,
    with at least :data:`PARAM_SLACK` spare bytes."""
    n = _HEADER.size + len(pjson) + PARAM_SLACK
    return pjson + b" " * (n + (-n) % PAGE - _HEADER.size - len(pjson))


def _pack_parts(
    structure: str, params: dict[str, Any], arrays: dict[str, np.ndarray], hash_id: int, seed: int,
    *, flags: int = 0, mapped: bool = False,
) -> list[bytes | memoryview]:
    """The container as a list of byte chunks (without the trailing CRC): arrays are not copied
    into one buffer, so :meth:`Persistable.save` streams them to disk. The data block starts on
    a page boundary when it is large (:data:`PAGE_ALIGN_MIN`) or ``mapped`` is set."""
    tag = structure.encode("ascii")
    if not 0 < len(tag) <= 32:
        raise ValueError(f"structure tag must be 1..32 ASCII bytes: {structure!r}")
    if "__arrays__" in params:
        raise ValueError("'__arrays__' is a reserved parameter name")
    descr = []
    chunks: list[bytes | memoryview] = []
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        le = a.dtype.newbyteorder("<") if a.dtype.byteorder not in "|" else a.dtype
        a = a.astype(le, copy=False)
        if le.str not in _ALLOWED_DTYPES:
            raise ValueError(f"array {name!r} has unsupported dtype {a.dtype}")
        descr.append([name, le.str, list(a.shape)])
        chunks.append(memoryview(a.reshape(-1)).cast("B") if a.size else b"")  # type: ignore[arg-type]
        if _pad8(a.nbytes):
            chunks.append(b"\0" * _pad8(a.nbytes))
    meta = dict(params)
    meta["__arrays__"] = descr
    pjson = json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
    dlen = sum(len(c) for c in chunks)
    if mapped or dlen >= PAGE_ALIGN_MIN:
        pjson = _aligned_params(pjson)
    head = _HEADER.pack(MAGIC, FORMAT_VERSION, flags, tag, hash_id, 0, seed, len(pjson), dlen)
    return [head, pjson, b"\0" * _pad8(len(head) + len(pjson)), *chunks]


def pack(
    structure: str,
    params: dict[str, Any],
    arrays: dict[str, np.ndarray],
    *,
    hash_id: int = HASH_XXH64,
    seed: int = 0,
) -> bytes:
    """Serialize one structure into the container format."""
    body = b"".join(_pack_parts(structure, params, arrays, hash_id, seed))
    return body + struct.pack("<I", zlib.crc32(body))


_SAVE_CHUNK = 1 << 24


def _with_crc(parts: Iterable[bytes | memoryview]) -> Iterator[bytes]:
    """The parts in chunks of at most 16 MiB, each copied before its CRC is taken (a thread that
    adds to a filter while it is saved cannot make the bytes written differ from the bytes
    summed), then the CRC-32. Memory: one chunk, not a second copy of the filter."""
    crc = 0
    for p in parts:
        view = memoryview(p).cast("B")
        for lo in range(0, len(view), _SAVE_CHUNK):
            chunk = bytes(view[lo : lo + _SAVE_CHUNK])
            crc = zlib.crc32(chunk, crc)
            yield chunk
    yield struct.pack("<I", crc)


def write_atomic(path: str | os.PathLike[str], parts: Iterable[bytes | memoryview]) -> None:
    """Write ``parts`` to ``path`` durably and atomically.

    A unique temporary file in the target's directory receives the bytes, is flushed and
    ``fsync``-ed, takes the mode of the file it replaces (a new file gets ``0o666`` less the
    umask), and is renamed over the target; the directory is ``fsync``-ed after the rename. A
    symbolic link is followed: its target is replaced and the link stays. On any failure
    (including KeyboardInterrupt) the temporary file is removed and the target is untouched. A
    process killed with SIGKILL mid-write can leave a ``.<name>.<random>.tmp`` file behind; the
    target is still the old file or the new one, never a mix.

    Raises
    ------
    IsADirectoryError
        If ``path`` is a directory.
    InvalidParameterError
        If ``path`` is a device, a FIFO or a socket (renaming over it would replace the device
        node itself, e.g. /dev/null, for every program on the machine).
    OSError
        If the directory does not exist or is not writable, or the disk is full (the error's
        ``filename`` is ``path``, never the temporary file).
    """
    target = os.path.realpath(os.fspath(path))
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, "cannot save to a directory; give a file path", os.fspath(path))
    folder = os.path.dirname(target) or "."
    try:
        st = os.stat(target)
        mode: int | None = stat.S_IMODE(st.st_mode)
    except FileNotFoundError:
        mode = None
    else:  # the rename would replace a device (as root, /dev/null itself), a FIFO or a socket
        if not stat.S_ISREG(st.st_mode):
            raise InvalidParameterError(
                f"The 'path' parameter of save must name a regular file (or a new one). Got {os.fspath(path)!r} "
                "instead: a device, FIFO or socket, which saving would replace.")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = os.path.join(folder, f".{os.path.basename(target)}.{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)  # the umask applies, as for a file created anew
            break
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
        except OSError as e:  # name the user's path, not the hidden temporary file
            why = "its directory does not exist" if isinstance(e, FileNotFoundError) else e.strerror
            raise type(e)(e.errno, f"cannot save there: {why}", os.fspath(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            for p in parts:
                fh.write(p)
            fh.flush()
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename == tmp:  # disk full, ...: the user's path
            raise type(e)(e.errno, f"cannot save there: {e.strerror}", os.fspath(path)) from None
        raise
    fsync_dir(folder)


def fsync_dir(folder: str) -> None:
    """``fsync`` a directory after a rename into it (best effort: directories cannot be opened
    or synced everywhere)."""
    with contextlib.suppress(OSError):
        dfd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


# ---------------------------------------------------------------------------------------------
# reading


def _parse_params(raw: bytes) -> dict[str, Any]:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                raise FormatError(f"parameter block has the key {k!r} twice")
            out[k] = v
        return out

    def constant(name: str) -> Any:
        raise FormatError(f"parameter block holds {name}, which is not a number bloomkit writes")

    def integer(text: str) -> int:
        if len(text.lstrip("-")) > 20:
            raise FormatError(f"parameter block holds an integer of {len(text)} digits")
        v = int(text)
        if not -(1 << 63) <= v < (1 << 64):
            raise FormatError(f"parameter block holds the integer {v}, outside 64 bits")
        return v

    def real(text: str) -> float:
        v = float(text)
        if not math.isfinite(v):
            raise FormatError(f"parameter block holds {text}, which overflows a float")
        return v

    try:
        obj = json.loads(raw.decode("utf-8"), object_pairs_hook=pairs, parse_constant=constant,
                         parse_int=integer, parse_float=real)
    except RecursionError:
        raise FormatError("parameter block is nested too deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FormatError(f"invalid container parameter block: {e}") from None
    if not isinstance(obj, dict):
        raise FormatError("invalid container parameter block: not a JSON object")
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise FormatError(f"parameter block is nested deeper than {MAX_JSON_DEPTH} levels")
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return obj


@dataclass(frozen=True)
class Layout:
    """The validated header of a container (everything but the data): what :func:`unpack`
    and the mapped filters (:mod:`bloomkit._mapped`) read before touching the payload.
    ``arrays`` holds (name, dtype, shape, offset in the file) of each array; every array lies
    inside the data block, and the data block inside a file of exactly ``size`` bytes."""

    structure: str
    version: int
    flags: int
    hash_id: int
    seed: int
    params: dict[str, Any]
    arrays: list[tuple[str, np.dtype[Any], tuple[int, ...], int]]
    params_len: int
    data_offset: int
    size: int


def header_length(head: bytes | memoryview) -> int:
    """Bytes of header and parameter block a container starts with (from its first
    ``_HEADER.size`` bytes); FormatError when they are not a bloomkit header."""
    if len(head) < _HEADER.size:
        raise FormatError(f"data too short for a bloomkit container ({len(head)} bytes)")
    if bytes(head[:8]) != MAGIC:
        raise FormatError("not a bloomkit container (bad magic)")
    (plen,) = struct.unpack_from("<I", head, 56)
    if plen > MAX_PARAMS_BYTES:
        raise FormatError(f"parameter block of {plen} bytes is longer than {MAX_PARAMS_BYTES}")
    return int(_HEADER.size + plen)


def parse_layout(head: bytes | memoryview, size: int, *, allow_flags: int = 0) -> Layout:
    """Validate the header and parameter block ``head`` (at least :func:`header_length` bytes)
    of a container of ``size`` bytes, without its data and without the CRC: magic, version,
    flags (``allow_flags`` are returned, not refused; a file being built never is), lengths
    against ``size``, strict JSON, array descriptors inside the data block. FormatError on
    anything wrong."""
    if size < _HEADER.size + 4 or len(head) < _HEADER.size:
        raise FormatError(f"data too short for a bloomkit container ({size} bytes)")
    magic, version, flags, tag, hash_id, reserved, seed, plen, dlen = _HEADER.unpack_from(head)
    if magic != MAGIC:
        raise FormatError("not a bloomkit container (bad magic)")
    if version > FORMAT_VERSION:
        raise FormatError(
            f"container format version {version} is newer than this bloomkit supports ({FORMAT_VERSION})"
        )
    if version != FORMAT_VERSION:
        raise FormatError(f"container format version {version} is not read by this bloomkit (it reads format "
                          f"{FORMAT_VERSION}; format 1 predates release 0.1.0): rebuild the structure")
    start = _HEADER.size + plen
    total = start + _pad8(start) + dlen + 4
    if plen > MAX_PARAMS_BYTES or size != total:
        raise FormatError(f"container length {size} does not match its header ({total}): truncated or padded")
    if flags & FLAG_BUILDING:
        raise FormatError("the file is being built by create(), or its build was interrupted before close(): "
                          "it is incomplete (keys added to it may be missing); build it again")
    if flags & FLAG_MODIFIED & ~allow_flags:
        raise FormatError("the file was opened for writing in place (bloomkit.open(path, 'r+')) and not closed: "
                          "its checksum is stale and adds after its last flush() may be missing; "
                          "bloomkit.open(path, 'r+', recover=True) then close() checks it and seals it again")
    if flags & ~(FLAG_BUILDING | FLAG_MODIFIED) or reserved:
        raise FormatError("reserved header fields are not zero")
    if len(head) < start:
        raise FormatError(f"header needs {start} bytes, got {len(head)}")
    try:
        structure = tag.rstrip(b"\0").decode("ascii")
    except UnicodeDecodeError:
        raise FormatError("structure tag is not ASCII") from None
    if not structure or "\0" in structure:
        raise FormatError("invalid structure tag")
    params = _parse_params(bytes(head[_HEADER.size:start]))
    descr = params.pop("__arrays__", None)
    if not isinstance(descr, list) or len(descr) > MAX_ARRAYS:
        raise FormatError("invalid container parameter block: '__arrays__' is missing or malformed")
    arrays: list[tuple[str, np.dtype[Any], tuple[int, ...], int]] = []
    names: set[str] = set()
    pos = start + _pad8(start)
    data_offset = pos
    end = pos + dlen
    for item in descr:
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str)
                and isinstance(item[1], str) and isinstance(item[2], list)):
            raise FormatError(f"invalid array descriptor {str(item)[:80]}")
        name, dtype, shape = item
        if name in names:
            raise FormatError(f"array {name!r} appears twice")
        names.add(name)
        if dtype not in _ALLOWED_DTYPES:
            raise FormatError(f"array {name!r} has an unsupported dtype {dtype!r}")
        if len(shape) > MAX_ARRAY_DIMS or not all(type(s) is int and 0 <= s for s in shape):
            raise FormatError(f"array {name!r} has an invalid shape {shape}")
        dt = np.dtype(dtype)
        nbytes = dt.itemsize * math.prod(shape)  # Python ints: no overflow
        if nbytes > end - pos:
            raise FormatError(f"array {name!r} ({nbytes} bytes) runs past the data block")
        arrays.append((name, dt, tuple(shape), pos))
        pos += nbytes + _pad8(nbytes)
    if pos != end:
        raise FormatError("data block length does not match the array descriptors")
    return Layout(structure, version, flags, hash_id, seed, params, arrays, plen, data_offset, size)


def unpack(blob: bytes | bytearray | memoryview) -> Container:
    """Parse and verify a container; FormatError on anything wrong."""
    if not isinstance(blob, bytes | bytearray | memoryview):  # bytes(10**12) would allocate 1 TB
        raise FormatError(f"expected bytes, got {type(blob).__name__}")
    buf = bytes(blob)
    if len(buf) < _HEADER.size + 4:
        raise FormatError(f"data too short for a bloomkit container ({len(buf)} bytes)")
    (flags,) = struct.unpack_from("<H", buf, 10)
    if flags & (FLAG_BUILDING | FLAG_MODIFIED):  # their CRC is stale by design: say why first
        parse_layout(buf, len(buf))
    (crc,) = struct.unpack_from("<I", buf, len(buf) - 4)
    header_length(buf)
    (plen, dlen) = struct.unpack_from("<IQ", buf, 56)
    start = _HEADER.size + plen
    if len(buf) != start + _pad8(start) + dlen + 4:
        parse_layout(buf, len(buf))  # raises: the length does not match the header
    if zlib.crc32(memoryview(buf)[:-4]) != crc:
        raise FormatError("container checksum mismatch: the data are corrupted")
    lay = parse_layout(buf, len(buf))
    arrays: dict[str, np.ndarray] = {}
    for name, dt, shape, pos in lay.arrays:
        arr = np.frombuffer(buf, dtype=dt, count=math.prod(shape), offset=pos).reshape(shape)
        arrays[name] = aligned_copy(arr.astype(dt.newbyteorder("="), copy=False))
    return Container(lay.structure, lay.version, lay.hash_id, lay.seed, lay.params, arrays, len(buf))


# ---------------------------------------------------------------------------------------------
# the persistence mixin

_STRUCTURES: dict[str, type[Persistable]] = {}
_LOCK_GUARD = threading.Lock()

# what a load turns into FormatError: every way bad data can make parsing code fail
_PARSE_ERRORS = (KeyError, TypeError, ValueError, IndexError, OverflowError, RecursionError,
                 ZeroDivisionError, AssertionError, InvalidParameterError)


class Persistable:
    """Mixin: persistence through the container format, and the per-object lock.

    A subclass is registered in :mod:`bloomkit._registry` (which gives it ``_STRUCTURE``, its
    tag, when the class is created: a class with a tag must be registered) and sets

    * ``_PARAMS``: the spec of its saved parameters (:mod:`bloomkit._validation` constraints,
      the ones its ``__init__`` checks its arguments with);
    * ``_ARRAYS``: name -> :class:`ArraySpec` of its saved arrays;
    * ``_HASH_IDS``: the hash algorithm ids it implements;

    and implements ``_to_state() -> (params, arrays)`` and the classmethod
    ``_from_state(params, arrays, seed, hash_id)``, which receives parameters already checked
    against ``_PARAMS`` and arrays already checked against ``_ARRAYS`` and must check every
    relation between them (sizes against array shapes) *before* allocating. The loader runs ``_check()`` on
    the new object; an invariant that fails is a FormatError.
    """

    _STRUCTURE: ClassVar[str] = ""
    _PARAMS: ClassVar[Spec | None] = None
    _ARRAYS: ClassVar[dict[str, ArraySpec] | None] = None
    _HASH_IDS: ClassVar[tuple[int, ...]] = (HASH_XXH64,)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_STRUCTURE"):
            raise TypeError(f"{cls.__qualname__}: a structure's tag is declared in bloomkit._registry only")
        entry = _registry.entry_of_class(cls.__module__, cls.__qualname__)
        prev = None if entry is None else _STRUCTURES.get(entry.tag)
        if entry is not None and (prev is None or not issubclass(cls, prev)):  # a subclass of it (a mapped
            cls._STRUCTURE = entry.tag                                          # view) keeps its tag
            _STRUCTURES[entry.tag] = cls

    # -- the lock ------------------------------------------------------------------------------
    @property
    def _lock(self) -> threading.RLock:
        """This object's re-entrant lock (created on first use; never shared with copies)."""
        lock = self.__dict__.get("_bk_lock")
        if lock is None:
            with _LOCK_GUARD:
                lock = self.__dict__.setdefault("_bk_lock", threading.RLock())
        return lock  # type: ignore[no-any-return]

    # -- to implement -------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        raise NotImplementedError

    @classmethod
    def _from_state(
        cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int
    ) -> Persistable:
        raise NotImplementedError

    def _check(self) -> None:
        """Assert the invariants (tests call it after mutations; the loader after loading)."""

    def _header_seed(self) -> int:
        return int(getattr(self, "seed", 0))

    def _header_hash_id(self) -> int:
        return int(getattr(self, "_hash_id", HASH_XXH64))

    # -- provided -----------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Serialize to the bloomkit container format (docs/format.md). Complexity: O(size)."""
        with self._lock:
            params, arrays = self._to_state()
            return pack(self._STRUCTURE, params, arrays, hash_id=self._header_hash_id(), seed=self._header_seed())

    @classmethod
    def _from_container(cls, c: Container) -> Any:
        owner = cls.__name__
        if c.structure != cls._STRUCTURE:
            raise FormatError(f"container holds a {c.structure!r}, not a {cls._STRUCTURE!r}")
        if c.hash_id not in cls._HASH_IDS:
            raise FormatError(
                f"{owner} implements hash id(s) {', '.join(map(str, cls._HASH_IDS))}; the file says "
                f"{c.hash_id} ({hash_name(c.hash_id)})"
            )
        try:
            params = dict(c.params)
            if cls._PARAMS is not None:
                params = check_params(cls._PARAMS, params, owner)
        except FormatError:
            raise
        except _PARSE_ERRORS as e:
            raise FormatError(f"invalid {owner} parameters: {e}") from None
        arrays = dict(c.arrays)
        if cls._ARRAYS is not None:
            _check_arrays(cls._ARRAYS, arrays, owner)
        try:
            with load_budget(c.nbytes):
                obj = cls._from_state(params, arrays, c.seed, c.hash_id)
                obj._check()
        except FormatError:
            raise
        except _PARSE_ERRORS as e:
            what = "inconsistent contents" if isinstance(e, AssertionError) else str(e)
            raise FormatError(f"inconsistent {c.structure} container: {what}") from None
        return obj

    @classmethod
    def from_bytes(cls, data: bytes) -> Any:
        """Inverse of :meth:`to_bytes`; FormatError on damaged or foreign data."""
        return cls._from_container(unpack(data))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write to ``path`` durably and atomically (:func:`write_atomic`): a unique temporary
        file in the same directory, fsync, rename; the file's mode and symlinks are kept.

        Complexity: O(size)."""
        path = check_path(path, "path", f"{type(self).__name__}.save")
        with self._lock:  # writers that take the lock wait; lock-free bit setters only add bits
            params, arrays = self._to_state()
            parts = _pack_parts(self._STRUCTURE, params, arrays, self._header_hash_id(), self._header_seed())
            write_atomic(path, _with_crc(parts))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Any:
        """Read a file written by :meth:`save` (:func:`read_container`: each array read straight
        into its final, aligned memory; peak memory is the filter, not twice the file)."""
        return cls._from_container(read_container(path, f"{cls.__name__}.load"))

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        return (loads, (self.to_bytes(),))

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, tuple[Any, ...]]:
        """Pickle as the container bytes, never as the object graph. Protocols below 5: one
        bytes object (:meth:`to_bytes`). Protocol 5: the container in pieces, each array a
        :class:`pickle.PickleBuffer` (out of band when the pickler has a ``buffer_callback``,
        as dask / distributed do: the arrays are sent as frames, not copied into the pickle),
        the rest (header, parameters, CRC-32 of the whole) in band. The receiver joins the
        pieces and loads them like a file (:func:`loads`), so a damaged piece, or an array
        changed by another thread while its pickle was in flight, raises FormatError there."""
        if operator.index(protocol) < 5:
            return self.__reduce__()
        with self._lock:
            params, arrays = self._to_state()
            parts = _pack_parts(self._STRUCTURE, params, arrays, self._header_hash_id(), self._header_seed())
            crc = 0
            pieces: list[Any] = []
            for p in parts:
                crc = zlib.crc32(p, crc)
                pieces.append(pickle.PickleBuffer(p) if isinstance(p, memoryview) else p)
        return (_loads_parts, (*pieces, struct.pack("<I", crc)))


def _check_arrays(spec: dict[str, ArraySpec], arrays: dict[str, np.ndarray], owner: str) -> None:
    unknown = sorted(set(arrays) - set(spec))
    if unknown:
        raise FormatError(f"{owner} has no array {unknown[0]!r} (known: {', '.join(sorted(spec))})")
    for name, s in spec.items():
        a = arrays.get(name)
        if a is None:
            if not s.optional:
                raise FormatError(f"the {name!r} array of {owner} is missing")
            continue
        if (s.dtype is not None and a.dtype != np.dtype(s.dtype).newbyteorder("=")) or a.ndim != s.ndim:
            want = "" if s.dtype is None else f" {np.dtype(s.dtype)}"
            raise FormatError(f"the {name!r} array of {owner} must be {s.ndim}-D{want}; got {a.ndim}-D {a.dtype}")
        if a.size and (s.lo is not None or s.hi is not None):
            lo, hi = a.min(), a.max()
            if (s.lo is not None and lo < s.lo) or (s.hi is not None and hi > s.hi):
                raise FormatError(
                    f"the {name!r} array of {owner} holds values in [{lo}, {hi}], outside [{s.lo}, {s.hi}]"
                )
            if a.dtype.kind == "f" and not np.isfinite(a).all():
                raise FormatError(f"the {name!r} array of {owner} holds NaN or infinite values")


def registered_structures() -> dict[str, type[Persistable]]:
    """Every persistable structure class by its tag, in registry order (imports their modules)."""
    return {e.tag: _class_of(e.tag) for e in _registry.ENTRIES}


def _loads_parts(*parts: Any) -> Any:
    """:func:`loads` of the pieces of :meth:`Persistable.__reduce_ex__` (protocol 5)."""
    return loads(b"".join(parts))


def loads(data: bytes) -> Any:
    """Rebuild whatever structure ``data`` holds (the right class is chosen from its tag)."""
    c = unpack(data)
    return _class_of(c.structure)._from_container(c)


def _class_of(structure: str) -> type[Persistable]:
    """The registered class of a structure tag (importing its module); FormatError for an
    unknown one."""
    cls = _STRUCTURES.get(structure)
    if cls is None:
        entry = _registry.by_tag(structure)
        if entry is None:
            raise FormatError(f"unknown structure tag {structure!r}")
        loaded: type[Persistable] = _registry.load_class(entry)
        if _STRUCTURES.get(structure) is not loaded:
            raise TypeError(f"{entry.module}.{entry.name} is registered as {structure!r} but is not that structure")
        return loaded
    return cls


def read_file(path: str | os.PathLike[str], owner: str) -> bytes:
    """The bytes of the regular file ``path`` (what ``load`` reads): a path that is not a str /
    PathLike, a device, FIFO or socket (``/dev/zero`` would never end; a FIFO is opened without
    waiting for a writer) and a file larger than :data:`MAX_LOAD_BYTES` are refused with
    InvalidParameterError / FormatError; OSError (naming the file) when it cannot be opened."""
    p, fd = open_regular(path, owner)
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fd).st_size
        if size > MAX_LOAD_BYTES:
            raise FormatError(f"{p}: {size} bytes, more than a bloomkit file can hold ({MAX_LOAD_BYTES})")
        return fh.read()


def open_regular(path: Any, owner: str, *, write: bool = False) -> tuple[str, int]:
    """(path, file descriptor) of the regular file ``path``, opened for reading (or reading
    and writing) without blocking on a FIFO; InvalidParameterError for a path that is not a
    str / PathLike, a directory, a device, FIFO or socket (``/dev/zero`` would never end);
    OSError (naming the file) when it cannot be opened."""
    p = check_path(path, "path", owner, hint="use loads() for the contents of a file")
    mode = os.O_RDWR if write else os.O_RDONLY
    fd = os.open(p, mode | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "directory" if stat.S_ISDIR(st.st_mode) else "device, FIFO or socket"
        raise InvalidParameterError(
            f"The 'path' parameter of {owner} must name a regular file. Got {p!r} instead (a {kind})."
        )
    return p, fd


def read_container(path: str | os.PathLike[str], owner: str) -> Container:
    """:func:`unpack` of the file ``path`` without holding the file's bytes: the header is
    validated first (:func:`parse_layout`: every array inside a file of this length, so the
    allocations are bounded by the file's size), then each array is read straight into its
    aligned array while the CRC-32 is computed, 16 MiB at a time. Memory: the arrays, once.
    The refusals of :func:`read_file` (devices, FIFOs, directories, files above
    :data:`MAX_LOAD_BYTES`) and of :func:`unpack` apply."""
    p, fd = open_regular(path, owner)
    try:
        size = os.fstat(fd).st_size
        if size > MAX_LOAD_BYTES:
            raise FormatError(f"{p}: {size} bytes, more than a bloomkit file can hold ({MAX_LOAD_BYTES})")
        head = os.pread(fd, _HEADER.size, 0)
        lay = parse_layout(os.pread(fd, header_length(head), 0), size)
        arrays: dict[str, np.ndarray] = {}
        with os.fdopen(os.dup(fd), "rb", buffering=0) as fh:
            pos = lay.data_offset
            crc = zlib.crc32(os.pread(fd, pos, 0))
            for name, dt, shape, off in lay.arrays:
                if off != pos:  # pragma: no cover - parse_layout places arrays back to back
                    raise FormatError("data block layout is inconsistent")
                arr = aligned_empty_unbudgeted(shape, dt.newbyteorder("="))
                view = arr.reshape(-1).view(np.uint8).data if arr.size else memoryview(b"")
                fh.seek(pos)
                for lo in range(0, len(view), _SAVE_CHUNK):
                    part = view[lo : lo + _SAVE_CHUNK]
                    if fh.readinto(part) != len(part):
                        raise FormatError(f"{p}: the file shrank while it was read")
                    crc = zlib.crc32(part, crc)
                pad = os.pread(fd, _pad8(arr.nbytes), pos + arr.nbytes)
                crc = zlib.crc32(pad, crc)
                pos += arr.nbytes + len(pad)
                arrays[name] = arr
            (stored,) = struct.unpack("<I", os.pread(fd, 4, size - 4))
    finally:
        os.close(fd)
    if crc != stored:
        raise FormatError("container checksum mismatch: the data are corrupted")
    return Container(lay.structure, lay.version, lay.hash_id, lay.seed, lay.params, arrays, size)


def load(path: str | os.PathLike[str]) -> Any:
    """Read any bloomkit structure saved with ``save``: ``bloomkit.load(path)``, streaming
    (:func:`read_container`)."""
    c = read_container(path, "load")
    return _class_of(c.structure)._from_container(c)
