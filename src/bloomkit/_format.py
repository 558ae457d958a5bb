"""The one binary container format of every bloomkit structure (see docs/format.md).

Layout (all integers little-endian)::

    offset  size  field
    0       8     magic b"BLOOMKIT"
    8       2     format version (FORMAT_VERSION)
    10      2     flags (0; reserved)
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
    end-4   4     CRC-32 (zlib) of every byte before it

A file whose length, magic, version, tag, JSON, array descriptors or checksum do not agree
raises :class:`~bloomkit.errors.FormatError`; nothing is ever unpickled. Any single flipped
byte is caught by the CRC-32 (or by the magic/length checks before it).
"""

from __future__ import annotations

import importlib
import json
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ._hashing import HASH_XXH64
from .errors import FormatError, InvalidParameterError

__all__ = ["FORMAT_VERSION", "MAGIC", "Container", "Persistable", "load", "loads", "pack", "unpack"]

MAGIC = b"BLOOMKIT"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sHH32sHHQIQ")
_ALLOWED_DTYPES = {
    "|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8",
}
_MAX_JSON = 1 << 26


@dataclass(frozen=True)
class Container:
    """A decoded container: what :func:`unpack` returns."""

    structure: str
    version: int
    hash_id: int
    seed: int
    params: dict[str, Any]
    arrays: dict[str, np.ndarray]


def _pad8(n: int) -> int:
    return (-n) % 8


def pack(
    structure: str,
    params: dict[str, Any],
    arrays: dict[str, np.ndarray],
    *,
    hash_id: int = HASH_XXH64,
    seed: int = 0,
) -> bytes:
    """Serialize one structure into the container format."""
    tag = structure.encode("ascii")
    if not 0 < len(tag) <= 32:
        raise ValueError(f"structure tag must be 1..32 ASCII bytes: {structure!r}")
    if "__arrays__" in params:
        raise ValueError("'__arrays__' is a reserved parameter name")
    descr = []
    chunks = []
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        le = a.dtype.newbyteorder("<") if a.dtype.byteorder not in "|" else a.dtype
        a = a.astype(le, copy=False)
        if le.str not in _ALLOWED_DTYPES:
            raise ValueError(f"array {name!r} has unsupported dtype {a.dtype}")
        descr.append([name, le.str, list(a.shape)])
        raw = a.tobytes()
        chunks.append(raw + b"\0" * _pad8(len(raw)))
    meta = dict(params)
    meta["__arrays__"] = descr
    pjson = json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
    data = b"".join(chunks)
    head = _HEADER.pack(MAGIC, FORMAT_VERSION, 0, tag, hash_id, 0, seed, len(pjson), len(data))
    body = head + pjson + b"\0" * _pad8(len(head) + len(pjson)) + data
    return body + struct.pack("<I", zlib.crc32(body))


def unpack(blob: bytes | bytearray | memoryview) -> Container:
    """Parse and verify a container; FormatError on anything wrong."""
    try:
        buf = bytes(blob)
    except TypeError:
        raise FormatError(f"expected bytes, got {type(blob).__name__}") from None
    if len(buf) < _HEADER.size + 4:
        raise FormatError(f"data too short for a bloomkit container ({len(buf)} bytes)")
    magic, version, flags, tag, hash_id, reserved, seed, plen, dlen = _HEADER.unpack_from(buf)
    if magic != MAGIC:
        raise FormatError("not a bloomkit container (bad magic)")
    if version > FORMAT_VERSION:
        raise FormatError(
            f"container format version {version} is newer than this bloomkit supports ({FORMAT_VERSION})"
        )
    if version < 1:
        raise FormatError(f"invalid container format version {version}")
    start = _HEADER.size + plen
    total = start + _pad8(start) + dlen + 4
    if plen > _MAX_JSON or len(buf) != total:
        raise FormatError(f"container length {len(buf)} does not match its header ({total}): truncated or padded")
    (crc,) = struct.unpack_from("<I", buf, len(buf) - 4)
    if zlib.crc32(memoryview(buf)[:-4]) != crc:
        raise FormatError("container checksum mismatch: the data are corrupted")
    if flags or reserved:
        raise FormatError("reserved header fields are not zero")
    try:
        structure = tag.rstrip(b"\0").decode("ascii")
        params = json.loads(buf[_HEADER.size:start].decode("utf-8"))
        descr = params.pop("__arrays__")
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, AttributeError, TypeError) as e:
        raise FormatError(f"invalid container header: {e}") from None
    if not isinstance(params, dict) or not isinstance(descr, list):
        raise FormatError("invalid container parameter block")
    arrays: dict[str, np.ndarray] = {}
    pos = start + _pad8(start)
    end = pos + dlen
    try:
        for name, dtype, shape in descr:
            if dtype not in _ALLOWED_DTYPES or not all(isinstance(s, int) and s >= 0 for s in shape):
                raise FormatError(f"invalid array descriptor for {name!r}")
            dt = np.dtype(dtype)
            nbytes = dt.itemsize * int(np.prod(shape, dtype=np.int64))
            if pos + nbytes > end:
                raise FormatError(f"array {name!r} runs past the data block")
            arr = np.frombuffer(buf, dtype=dt, count=nbytes // dt.itemsize, offset=pos).reshape(shape)
            arrays[str(name)] = arr.astype(dt.newbyteorder("="), copy=True)
            pos += nbytes + _pad8(nbytes)
    except (ValueError, TypeError) as e:
        if isinstance(e, FormatError):
            raise
        raise FormatError(f"invalid array descriptors: {e}") from None
    if pos != end:
        raise FormatError("data block length does not match the array descriptors")
    return Container(structure, version, hash_id, seed, params, arrays)


_STRUCTURES: dict[str, type[Persistable]] = {}


class Persistable:
    """Mixin: persistence through the container format.

    A subclass sets ``_STRUCTURE`` (a unique ASCII tag) and implements ``_to_state()`` and
    ``_from_state()``; it gets ``to_bytes``/``from_bytes``/``save``/``load`` and pickling
    through the format (``__reduce__``).
    """

    _STRUCTURE: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tag = cls.__dict__.get("_STRUCTURE")
        if tag:
            prev = _STRUCTURES.get(tag)
            if prev is not None and prev.__qualname__ != cls.__qualname__:
                raise ValueError(f"structure tag {tag!r} used by {prev.__qualname__} and {cls.__qualname__}")
            _STRUCTURES[tag] = cls

    # -- to implement -------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        raise NotImplementedError

    @classmethod
    def _from_state(
        cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int
    ) -> Persistable:
        raise NotImplementedError

    def _header_seed(self) -> int:
        return int(getattr(self, "seed", 0))

    def _header_hash_id(self) -> int:
        return int(getattr(self, "_hash_id", HASH_XXH64))

    # -- provided -----------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """Serialize to the bloomkit container format (docs/format.md)."""
        params, arrays = self._to_state()
        return pack(self._STRUCTURE, params, arrays, hash_id=self._header_hash_id(), seed=self._header_seed())

    @classmethod
    def _from_container(cls, c: Container) -> Any:
        if c.structure != cls._STRUCTURE:
            raise FormatError(f"container holds a {c.structure!r}, not a {cls._STRUCTURE!r}")
        try:
            return cls._from_state(c.params, c.arrays, c.seed, c.hash_id)
        except FormatError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, InvalidParameterError) as e:
            raise FormatError(f"inconsistent {c.structure} container: {e}") from None

    @classmethod
    def from_bytes(cls, data: bytes) -> Any:
        """Inverse of :meth:`to_bytes`; FormatError on damaged or foreign data."""
        return cls._from_container(unpack(data))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write to ``path`` (atomically: a temporary file then a rename)."""
        p = Path(path)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_bytes(self.to_bytes())
        os.replace(tmp, p)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Any:
        """Read a file written by :meth:`save`."""
        return cls.from_bytes(Path(path).read_bytes())

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        return (loads, (self.to_bytes(),))


_SUBPACKAGES = ("bloom", "ranges", "lookup", "similarity", "folding", "multiattr")


def _import_all() -> None:
    for name in _SUBPACKAGES:
        try:
            importlib.import_module(f"bloomkit.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"bloomkit.{name}":
                raise


def loads(data: bytes) -> Any:
    """Rebuild whatever structure ``data`` holds (the right class is chosen from its tag)."""
    c = unpack(data)
    cls = _STRUCTURES.get(c.structure)
    if cls is None:
        _import_all()
        cls = _STRUCTURES.get(c.structure)
    if cls is None:
        raise FormatError(f"unknown structure tag {c.structure!r}")
    return cls._from_container(c)


def load(path: str | os.PathLike[str]) -> Any:
    """Read any bloomkit structure saved with ``save``: ``bloomkit.load(path)``."""
    return loads(Path(path).read_bytes())
