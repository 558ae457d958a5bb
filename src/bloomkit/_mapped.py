"""Filters bigger than memory: a saved filter mapped from its file, and filters built into a file.

``bloomkit.open(path, mode)`` maps the payload of a saved :class:`~bloomkit.BloomFilter`,
:class:`~bloomkit.CountingBloomFilter` or :class:`~bloomkit.SplitBlockBloomFilter` (and their
subclasses) without reading it: the header and parameter block are read and validated as
``load`` validates them (every size against the file's length, so a forged header never maps
out of bounds), then the words are a numpy view of an ``mmap`` of the file. Opening costs
O(header); queries touch only the pages they probe, and the OS page cache holds them once for
every process that maps the file.

``mode="r"``: a private (copy-on-write) mapping of a file opened read-only; every method that
would change the filter raises :class:`~bloomkit.errors.UpdateNotSupportedError`, and nothing
can ever reach the file. ``mode="r+"``: a shared mapping; adds write the mapped pages,
``flush()`` makes them durable (the parameter block, key types and counter overflow, is
rewritten in place), ``close()`` flushes, recomputes the CRC-32 and seals the file. One
writer at a time (an exclusive ``flock``); readers may map a file while a writer has it.

:meth:`Mappable.create` builds a new filter straight into a preallocated file whose header says
"being built" until ``close()``: a build that crashes or runs out of disk leaves a file that
``open`` and ``load`` refuse (FormatError), never a partial filter.

The checksum policy (docs/mapped.md): ``load`` checks the CRC-32 of the whole file, as always;
``open`` does not (it would read the whole file) but refuses a file whose header says it is
being built, or was opened for writing and never closed; ``verify()`` / ``bloomkit.verify(path)``
/ ``bloomkit info --verify`` check the CRC on demand, streaming.

OS limit: a mapped file that another program truncates while it is mapped makes the pages past
the new end fault with SIGBUS, which kills the process (no library can turn that into an
exception). ``open`` checks the length when it maps the file; do not truncate mapped files.
"""

from __future__ import annotations

import contextlib
import errno
import inspect
import json
import math
import mmap
import os
import stat
import struct
import sys
import tempfile
import zlib
from collections.abc import Iterator
from typing import Any, Self

import numpy as np

from ._engine.storage import allocate_into
from ._format import (
    _HEADER,
    FLAG_BUILDING,
    FLAG_MODIFIED,
    FORMAT_VERSION,
    MAGIC,
    PAGE,
    PARAM_SLACK,
    Container,
    Layout,
    _class_of,
    _pack_parts,
    _with_crc,
    fsync_dir,
    header_length,
    open_regular,
    parse_layout,
    write_atomic,
)
from ._registry import with_capability
from ._validation import check_path
from .errors import FormatError, InvalidParameterError, UpdateNotSupportedError

try:  # pragma: no cover - not on Windows
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["MAPPABLE", "Mappable", "create_beside", "map_or_load", "open", "plain_type", "verify"]

_MODES = ("r", "r+")
_CRC_CHUNK = 1 << 24
_FLAGS = struct.Struct("<H")  # the flags field, at offset 10 of the header


def _crc_of(fd: int, end: int, flags_zero: bool, path: str) -> int:
    """CRC-32 of bytes ``[0, end)`` of the file ``fd`` (a file's bytes without its CRC), read
    16 MiB at a time with ``pread`` (through the page cache, never the mapping: a multi-GB
    file's pages do not become resident in the process), with the flags field taken as zero
    when ``flags_zero`` (the CRC a sealed file stores)."""
    head = bytearray(os.pread(fd, _HEADER.size, 0))
    if flags_zero:
        head[10:12] = b"\0\0"
    crc = zlib.crc32(head)
    pos = _HEADER.size
    while pos < end:
        chunk = os.pread(fd, min(_CRC_CHUNK, end - pos), pos)
        if not chunk:  # pragma: no cover - truncated while read
            raise FormatError(f"{path}: the file shrank while its checksum was computed")
        crc = zlib.crc32(chunk, crc)
        pos += len(chunk)
    return crc


def _lock(fd: int, path: str, exclusive: bool, wait: bool = False) -> bool:
    """Take a ``flock`` on ``fd``; False when another process holds a conflicting one."""
    if fcntl is None:  # pragma: no cover
        return True
    op = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB)
    try:
        fcntl.flock(fd, op)
    except BlockingIOError:
        return False
    return True


def _read_layout(fd: int, size: int, allow_flags: int) -> Layout:
    head = os.pread(fd, _HEADER.size, 0)
    n = header_length(head)
    return parse_layout(os.pread(fd, n, 0), size, allow_flags=allow_flags)


# ---------------------------------------------------------------------------------------------


class _Mapping:
    """The file behind a mapped filter."""

    __slots__ = ("fd", "layout", "mm", "mode", "path", "size")

    def __init__(self, path: str, fd: int, mm: mmap.mmap, mode: str, layout: Layout) -> None:
        self.path, self.fd, self.mm, self.mode, self.layout = path, fd, mm, mode, layout
        self.size = layout.size

    def write_params(self, obj: Any) -> None:
        """Rewrite the parameter block in place (key types, overflow change with adds)."""
        lay = self.layout
        params, _ = obj._to_state()
        descr = [[name, dt.str, list(shape)] for name, dt, shape, _ in lay.arrays]
        pjson = json.dumps({**params, "__arrays__": descr}, sort_keys=True, separators=(",", ":"),
                           allow_nan=False).encode("utf-8")
        if len(pjson) > lay.params_len:  # pragma: no cover - r+ files keep PARAM_SLACK spare bytes
            raise FormatError(f"{self.path}: the parameters no longer fit the parameter block")
        self.mm[_HEADER.size : _HEADER.size + lay.params_len] = pjson + b" " * (lay.params_len - len(pjson))

    def set_flags(self, flags: int) -> None:
        self.mm[10:12] = _FLAGS.pack(flags)
        self.mm.flush(0, PAGE)

    def seal(self, obj: Any) -> None:
        """Flush the payload and parameters, write the CRC-32 of the file as sealed, then clear
        the flags: a crash at any point leaves a file that is refused or complete."""
        self.write_params(obj)
        self.mm.flush()
        end = self.size - 4
        crc = _crc_of(self.fd, end, True, self.path)
        self.mm[end:] = struct.pack("<I", crc)
        self.mm.flush()
        self.set_flags(0)
        os.fsync(self.fd)

    def release(self) -> None:
        with contextlib.suppress(BufferError, ValueError):  # views still held elsewhere: the GC unmaps
            self.mm.close()
        with contextlib.suppress(OSError):
            os.close(self.fd)


MAPPABLE = tuple(e.tag for e in with_capability("mapped"))
"""The structure tags ``open`` maps and ``create`` builds (their subclasses, e.g. the foldable
filters, keep state outside the one word array: ``load`` reads them)."""

_MUTATORS = ("add", "add_many", "update", "remove", "remove_many", "clear", "fold", "__ior__", "__iand__",
             "intersection_update", "add_hashes", "shrink_to_fpp")
_RESIZERS = ("fold", "shrink_to_fpp")
_KEEP_STORAGE = ("__ior__", "__iand__")
_OPEN_NAMES = frozenset({"__class__", "__dict__", "_mapping", "close", "flush", "closed", "path",
                         "__repr__", "__exit__", "__enter__", "_bk_lock", "_lock", "verify", "_core_unbind",
                         "_unmap"})
_CLASSES: dict[tuple[type, str], type] = {}


def _refuse_write(name: str) -> Any:
    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise UpdateNotSupportedError(
            f"this {type(self).__name__} is mapped read-only from {self._mapping.path!r} (mode 'r'): "
            f"{name.strip('_')} would change it; bloomkit.open(path, 'r+') maps it for writing")
    refuse.__name__ = name
    return refuse


def _refuse_resize(name: str) -> Any:
    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise UpdateNotSupportedError(
            f"{name} changes the size of this {type(self).__name__}, which is mapped from {self._mapping.path!r}: "
            "a file keeps its size; use folded() for a smaller copy in memory")
    refuse.__name__ = name
    return refuse


def _keep_storage(base: type, name: str) -> Any:
    """``name`` of ``base``, with the result copied back into the mapped storage when the
    method replaced the storage object (the counting filter's ``|=`` builds new counters)."""
    method = getattr(base, name)

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        old: Any = getattr(self, "_store", None)
        out = method(self, *args, **kwargs)
        new: Any = getattr(self, "_store", None)
        if new is not old:
            np.copyto(old.data, new.data)
            old.overflowed = new.overflowed
            self._set_storage(old)
        return self if out is self else out
    run.__name__ = name
    return run


def plain_type(obj: Any) -> Any:
    """The class of ``obj``, or of the filter it maps (the set operations compare these)."""
    t = type(obj)
    return t.__dict__.get("_plain_type", t)


def _closed_getattribute(self: Any, name: str) -> Any:
    if name in _OPEN_NAMES:
        return object.__getattribute__(self, name)
    raise ValueError(f"this mapped filter is closed ({object.__getattribute__(self, '_mapping').path!r}): "
                     "bloomkit.open(path) maps it again")


def _mapped_class(base: type, kind: str) -> type:
    """The class of a mapped filter of class ``base``: ``kind`` "r" (mutators refused),
    "r+" (resizing refused, storage kept), "r+ordered" (the same, with the page-ordered
    ``add_many`` of large files) or "closed" (everything refused)."""
    key = (base, kind)
    cls = _CLASSES.get(key)
    if cls is not None:
        return cls
    ns: dict[str, Any] = {"_plain_type": base, "__module__": base.__module__, "__qualname__": base.__qualname__}
    if kind.endswith("ordered") and base.__dict__.get("_STRUCTURE") == "bloom.BloomFilter":
        ns["contains_many"] = _contains_ordered  # (not the counting filter: its own counters)
    if kind in ("r", "rordered"):
        ns.update({n: _refuse_write(n) for n in _MUTATORS if hasattr(base, n)})
    elif kind in ("r+", "r+ordered"):
        ns.update({n: _refuse_resize(n) for n in _RESIZERS if hasattr(base, n)})
        ns.update({n: _keep_storage(base, n) for n in _KEEP_STORAGE if hasattr(base, n)})
        if kind == "r+ordered":
            ns["add_many"] = _add_ordered
            ns["_set_count"] = _set_count_windowed
    else:
        ns["__getattribute__"] = _closed_getattribute
        ns["__repr__"] = lambda self: f"<closed mapped {base.__name__} of {self._mapping.path!r}>"
    cls = type(base.__name__, (base,), ns)
    _CLASSES[key] = cls
    return cls


# ---------------------------------------------------------------------------------------------
# page-ordered batch adds


ORDERED_MIN_BYTES = 1 << 28
"""Mapped files at least this large (256 MiB) take the page-ordered batches; smaller ones the
plain path (measured, docs/mapped.md: a 64 MiB file's pages stayed resident and the plain path
took half the CPU; from 256 MiB on they did not and the ordered path took half the plain one's)."""
ORDERED_POSITIONS = 1 << 28
"""Probe positions ordered at a time by ``add_many`` (4 bytes each: at most 1 GiB, and at most one
per 16 bytes of the file); ``contains_many`` orders half as many (8 bytes each: position and key)."""
_REGION_LOG2 = 20  # the counting sort's bucket: 1 MiB of the file
_WINDOW_LOG2 = 26  # released from the page tables after each 64 MiB written


def _kind(mode: str, size: int) -> str:
    """The mapped class of a file of ``size`` bytes mapped in ``mode``: ``mode + "ordered"``
    (page-ordered batches) from ``ORDERED_MIN_BYTES`` on."""
    return mode + "ordered" if size >= ORDERED_MIN_BYTES else mode


def _release(m: _Mapping, arr: np.ndarray, lo: int, hi: int) -> None:
    """Drop bytes ``[lo, hi)`` of ``arr`` (a view of ``m``'s mapping, page-aligned in the file)
    from this process's page tables: ``madvise(MADV_DONTNEED)`` on a shared file mapping
    unmaps the pages; their data, dirty or not, stay in the page cache (written back by the
    kernel, or by ``flush`` / ``close``), so the next access faults them back in unchanged
    (tests/test_mapped.py checks it through ``close``'s CRC and ``load``)."""
    start = m.layout.arrays[0][3] + lo
    end = min(start + hi - lo, m.size)
    pad = start % PAGE
    m.mm.madvise(mmap.MADV_DONTNEED, start - pad, end - start + pad)


def _sweep(m: _Mapping, arr: np.ndarray, starts: np.ndarray) -> Iterator[tuple[int, int]]:
    """The (g0, g1) region ranges holding positions, a window (64 MiB) at a time, each window
    released from the page tables once the caller has written it: the process's resident file
    pages stay O(window) whatever the file's size."""
    nreg = len(starts) - 1
    per = 1 << (_WINDOW_LOG2 - _REGION_LOG2)
    for g0 in range(0, nreg, per):
        g1 = min(nreg, g0 + per)
        if starts[g1] != starts[g0]:
            yield g0, g1
            _release(m, arr, g0 << _REGION_LOG2, g1 << _REGION_LOG2)


def _set_count_windowed(self: Any) -> int:
    """``_set_count`` (set bits, non-zero counters) of a large file mapped for writing, a
    window at a time, each window released from the page tables once counted: the overfill
    check of the first ``add_many`` (and ``len``, ``info``) read the whole file without making
    it resident in the process (numpy's ``bitwise_count`` would also allocate a byte per word).
    Complexity: O(size)."""
    from ._engine.storage import popcount_words

    m: _Mapping = self._mapping
    c = getattr(self, "_counters", None)
    if c is None:
        arr = self._bits.words if hasattr(self, "_bits") else self._words
        count: Any = popcount_words
    elif c.width == 4:  # two per byte; the padding nibble of an odd size is zero
        arr, count = c.data, lambda d: np.count_nonzero(d & np.uint8(0x0F)) + np.count_nonzero(d >> np.uint8(4))
    else:
        arr, count = c.data[: c.size], np.count_nonzero
    step = (1 << _WINDOW_LOG2) // arr.itemsize
    total = 0
    for lo in range(0, len(arr), step):
        total += int(count(arr[lo : lo + step]))
        _release(m, arr, lo * arr.itemsize, (lo + step) * arr.itemsize)
    return total


def _add_ordered(self: Any, keys: Any) -> None:
    """``add_many`` with the batch's positions applied in file order (:mod:`bloomkit._mapped_kernels`):
    each page of the file takes at most one fault per chunk of ``ORDERED_POSITIONS`` probes
    instead of one per probe, and is released from the page tables once written (RSS stays
    bounded on a filter larger than memory). Bit for bit the plain path's result; a bad key
    raises before anything is set, as there."""
    from . import _mapped_kernels as MK
    from ._engine.columns import KeyBatch
    from ._engine.parallel import _refuse_nan, batch_writer, hashes_of, key_source

    m: _Mapping = self._mapping
    c: Any = None
    if hasattr(self, "_counters"):  # CountingBloomFilter: a list or array hashed whole first (as today)
        c = self._counters
        h_all, tags = self._hash(keys)
        batch = KeyBatch(h_all, tags, hashed=True)
        hash_chunk: Any = hashes_of
        k, arr, unit, mod = self._num_hashes, c.data, c.width, c.m64
    elif hasattr(self, "_bits"):  # BloomFilter
        batch, hash_chunk = key_source(keys, self._hash, f"{type(self).__name__}.add_many")
        _refuse_nan(batch, hash_chunk)
        k, arr, unit, mod = self._num_hashes, self._bits.words, 1, self._bits.m64
    else:  # SplitBlockBloomFilter: one block of one region per key
        batch, hash_chunk = self._batch(keys, "add_many")
        if self.mode == "native":
            _refuse_nan(batch, hash_chunk)
        insert = self._kernels()[0]
        k, arr, unit, mod = 1, self._words, 64, self._B64
    n = len(batch)
    shift = _REGION_LOG2 + 3 - (unit.bit_length() - 1)  # positions per region: 1 MiB of storage
    nreg = -(-arr.nbytes >> _REGION_LOG2)
    chunks = -(-n * k // max(1 << 16, min(ORDERED_POSITIONS, m.size // 16)))
    over = False
    with batch_writer(self):  # the split-block insert releases the GIL: single-key adds wait
        for j in range(chunks):
            h = hash_chunk(batch.slice(n * j // chunks, n * (j + 1) // chunks))
            if unit == 64:
                starts, hs = MK.order_blocks(h, mod, self.mode == "native", shift, nreg)
                for g0, g1 in _sweep(m, arr, starts):
                    insert(arr, hs[starts[g0] : starts[g1]])
                continue
            starts, offs, _ = MK.order_probes(h, k, mod, shift, nreg, False, self._dh)
            del h
            for g0, g1 in _sweep(m, arr, starts):
                if c is None:
                    MK.set_ordered(arr, starts, offs, shift, g0, g1)
                elif MK.inc_ordered(arr, c.width, c.max_value, starts, offs, shift, g0, g1):
                    over = True
    if over:
        c.overflowed = True
    self._note_keys(batch.tags)
    self._count_adds(n, 2)


def _contains_ordered(self: Any, keys: Any) -> np.ndarray:
    """``contains_many`` of a large mapped BloomFilter: the batch's probes ordered by region of
    the file (keyed by key), tested in file order, each window released from the page tables
    once read, so a query of a filter larger than memory reads each page at most once per
    chunk and leaves no resident pages behind. The same answers as the plain path."""
    from . import _mapped_kernels as MK
    from ._engine.parallel import key_source

    m: _Mapping = self._mapping
    batch, hash_chunk = key_source(keys, self._hash, f"{type(self).__name__}.contains_many")
    self._foreign_keys(batch.tags, 2)
    k, words, mod = self._num_hashes, self._bits.words, self._bits.m64
    shift, nreg = _REGION_LOG2 + 3, -(-words.nbytes >> _REGION_LOG2)
    n = len(batch)
    out = np.ones(n, dtype=np.bool_)
    chunks = -(-n * k // max(1 << 16, min(ORDERED_POSITIONS // 2, m.size // 32)))
    for j in range(chunks):
        a, b = n * j // chunks, n * (j + 1) // chunks
        try:
            h = hash_chunk(batch.slice(a, b))
        except InvalidParameterError:
            hash_chunk(batch)  # the error with its position in the whole batch
            raise
        starts, offs, idx = MK.order_probes(h, k, mod, shift, nreg, True, self._dh)
        del h
        part = out[a:b]
        for g0, g1 in _sweep(m, words, starts):
            MK.test_ordered(words, starts, offs, idx, shift, g0, g1, part)
    return out


class Mappable:
    """Mixin of the word-backed filters that map from files: ``create``, ``close``, ``flush``,
    ``verify``, the context manager. In-memory filters have them too (``close`` / ``flush`` do
    nothing, ``verify`` checks the invariants)."""

    _mapping: _Mapping

    # -- building into a file ---------------------------------------------------------------
    @classmethod
    def create(cls, path: str | os.PathLike[str], *args: Any, overwrite: bool = False, preallocate: bool = True,
               **kwargs: Any) -> Self:
        """A new, empty filter built straight into the file ``path`` and mapped for writing.

        ``args`` / ``kwargs`` are the constructor's (``capacity=``, ``fpr=``, ``seed=``, ...).
        The file gets its final size at once (``preallocate``: ``posix_fallocate``, so a full
        disk is an OSError now, never SIGBUS later; ``preallocate=False``: a sparse file, which
        can fault with SIGBUS if the disk fills while pages are written). Its header says
        "being built" until :meth:`close`, so a build that crashes leaves a file that ``open``
        and ``load`` refuse with FormatError. The storage is the file's pages: memory is what the
        OS keeps resident, not the filter's size. ``overwrite=False`` refuses an existing file.

        Complexity: O(1) (the file's blocks are reserved, not written); ``close()`` reads the
        payload once to compute its CRC-32.
        """
        owner = f"{cls.__name__}.create"
        if getattr(cls, "_STRUCTURE", None) not in MAPPABLE:
            raise InvalidParameterError(f"{owner}: only {', '.join(t.partition('.')[2] for t in MAPPABLE)} are built into files")
        p = check_path(path, "path", owner)
        try:  # the constructor's arguments, checked before any file exists
            inspect.signature(cls).bind(*args, **kwargs)
        except TypeError as e:
            raise InvalidParameterError(
                f"The arguments after 'path' of {owner} must be {cls.__name__}'s. Got {len(args)} positional and "
                f"{sorted(kwargs)} instead ({e}).") from None
        if os.path.lexists(p):
            st = os.stat(p)
            if not stat.S_ISREG(st.st_mode):
                raise InvalidParameterError(
                    f"The 'path' parameter of {owner} must name a regular file (or a new one). Got {p!r} instead.")
            if not overwrite:
                raise FileExistsError(errno.EEXIST, "file exists (overwrite=True replaces it)", p)
            os.unlink(p)  # a process still mapping the old file keeps its inode (never a truncated mapping)
        fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        made: dict[str, Any] = {}

        def make(dims: tuple[int, ...], dt: np.dtype[Any]) -> np.ndarray:
            nbytes = math.prod(dims) * dt.itemsize
            size = PAGE + nbytes + (-nbytes) % 8 + 4
            os.pwrite(fd, MAGIC + struct.pack("<HH", FORMAT_VERSION, FLAG_BUILDING), 0)
            # sparse first, mapped, then the blocks reserved: a size the address space cannot
            # map fails before any disk space is taken
            os.ftruncate(fd, size)
            mm = mmap.mmap(fd, size, access=mmap.ACCESS_WRITE)
            made.update(mm=mm, size=size, nbytes=nbytes)
            if preallocate and hasattr(os, "posix_fallocate"):
                try:
                    os.posix_fallocate(fd, 0, size)
                except OSError as e:
                    raise type(e)(e.errno, f"cannot build a filter of {size} bytes there: {e.strerror}", p) from None
            return np.frombuffer(mm, dtype=dt, count=math.prod(dims), offset=PAGE).reshape(dims)

        try:
            _lock(fd, p, exclusive=True)
            with allocate_into(make) as cell:
                obj = cls(*args, **kwargs)
            if not cell or "mm" not in made:  # pragma: no cover - every Mappable allocates one array
                raise RuntimeError(f"{cls.__name__} did not allocate its storage through aligned_zeros")
            params, arrays = obj._to_state()  # type: ignore[attr-defined]
            parts = _pack_parts(obj._STRUCTURE, params, arrays, obj._header_hash_id(),  # type: ignore[attr-defined]
                                obj._header_seed(), flags=FLAG_BUILDING, mapped=True)  # type: ignore[attr-defined]
            head = bytearray(b"".join(bytes(x) for x in parts[:3]))
            del parts, arrays
            if len(head) != PAGE:  # pragma: no cover - one array, a short parameter block
                raise RuntimeError(f"{cls.__name__}: header of {len(head)} bytes does not fit one page")
            mm = made["mm"]
            mm[:PAGE] = bytes(head)
            mm.flush(0, PAGE)
            layout = parse_layout(bytes(head[:10]) + b"\0\0" + bytes(head[12:]), made["size"])
        except BaseException:
            if "mm" in made:
                with contextlib.suppress(BufferError):
                    made["mm"].close()
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(p)
            raise
        obj._mapping = _Mapping(p, fd, mm, "r+", layout)
        obj.__class__ = _mapped_class(cls._plain(), _kind("r+", made["size"]))
        return obj

    @classmethod
    def _plain(cls) -> type:
        return cls.__dict__.get("_plain_type", cls)  # type: ignore[no-any-return]

    # -- the mapped file ----------------------------------------------------------------------
    @property
    def path(self) -> str | None:
        """The file this filter is mapped from (None in memory)."""
        m = self.__dict__.get("_mapping")
        return None if m is None else m.path

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called on a mapped filter."""
        return type(self).__dict__.get("__getattribute__") is _closed_getattribute

    def flush(self) -> None:
        """Make the adds so far durable (``msync`` of the mapped pages and the parameter block);
        the file stays open for writing (its CRC is written by :meth:`close`). Nothing to do in
        memory or in mode ``"r"``. Complexity: O(dirty pages)."""
        m = self.__dict__.get("_mapping")
        if m is None or m.mode != "r+" or self.closed:
            return
        with self._lock:  # type: ignore[attr-defined]
            m.write_params(self)
            m.mm.flush()

    def close(self) -> None:
        """Unmap the file. In ``"r+"``: flush, write the CRC-32 of the payload and mark the file
        complete (a created file stops being "being built"). Later use of the filter raises
        ValueError; closing twice does nothing. In memory: nothing to do.

        Complexity: O(size) in ``"r+"`` (one pass to compute the CRC), O(1) in ``"r"``."""
        self._unmap(seal=True)

    def _unmap(self, seal: bool) -> None:
        """Close the mapping; ``seal``: in ``"r+"``, flush and seal the file first (else the
        file is left as it is: a build abandoned by :func:`create_beside`, about to be removed)."""
        m = self.__dict__.get("_mapping")
        if m is None or self.closed:
            return
        with self._lock:  # type: ignore[attr-defined]
            if seal and m.mode == "r+":
                m.seal(self)
            if hasattr(self, "_core_unbind"):
                self._core_unbind()
            for name in ("_wref",):
                self.__dict__.pop(name, None)
            self.__class__ = _mapped_class(type(self)._plain_type, "closed")  # type: ignore[attr-defined]
            self.__dict__ = {"_mapping": m, "_bk_lock": self.__dict__.get("_bk_lock")}
            m.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def verify(self) -> None:
        """Check this filter: its invariants and, when it is mapped read-only, the CRC-32 of
        its whole file (FormatError on a mismatch: the file was damaged after it was written).
        A filter mapped ``"r+"`` has no current checksum until :meth:`close`: close it, then
        :func:`bloomkit.verify` the file. Complexity: O(size)."""
        m = self.__dict__.get("_mapping")
        if m is not None and m.mode == "r+":
            raise InvalidParameterError(
                f"verify() needs a filter mapped read-only; {m.path!r} is open for writing, its checksum is "
                "written by close(): close it, then bloomkit.verify(path)")
        if m is not None:
            _check_crc(m.fd, m.size, m.path)
        try:
            self._check()  # type: ignore[attr-defined]
        except AssertionError:
            raise FormatError(f"inconsistent {type(self).__name__}: its invariants do not hold") from None


def _check_crc(fd: int, size: int, path: str) -> int:
    """The CRC-32 a file stores; FormatError unless it is the CRC of the rest of the file."""
    end = size - 4
    (stored,) = struct.unpack("<I", os.pread(fd, 4, end))
    if _crc_of(fd, end, False, path) != stored:
        raise FormatError(f"{path}: container checksum mismatch: the data are corrupted")
    return int(stored)


# ---------------------------------------------------------------------------------------------


def open(path: str | os.PathLike[str], mode: str = "r", *, recover: bool = False) -> Any:  # noqa: A001
    """Map the filter saved in ``path`` without reading its payload: ``bloomkit.open(path)``.

    Parameters
    ----------
    path : str or PathLike
        A file written by ``save`` or ``create`` holding a BloomFilter, CountingBloomFilter or
        SplitBlockBloomFilter (or a subclass).
    mode : {"r", "r+"}
        ``"r"``: queries only (changes raise UpdateNotSupportedError); any number of processes
        share the pages. ``"r+"``: adds go to the file's pages; ``flush()`` makes them durable,
        ``close()`` seals the file (CRC-32). One ``"r+"`` mapping of a file at a time.
    recover : bool
        Open a file whose header says it was opened for writing and never closed (a writer
        crashed): its adds after the last ``flush()`` may be missing. In ``"r+"``, ``close()``
        seals it again. A file still being built (``create`` not closed) is always refused.

    Returns the filter, of its saved class, with ``close()`` / ``flush()`` / ``with``.

    Raises
    ------
    FormatError
        A damaged, truncated, foreign or incomplete file (being built, or not closed by a
        writer); the header is validated as ``load`` validates it (the CRC is not: ``verify()``).
    InvalidParameterError
        A bad mode, a path that is not a regular file, or a structure that does not map
        (``bloomkit.load`` reads those).
    BlockingIOError
        ``"r+"`` while another process has the file open for writing.

    Complexity: O(1) in the filter's size (a header read and an ``mmap``).
    """
    if not isinstance(mode, str) or mode not in _MODES:
        raise InvalidParameterError(f"The 'mode' parameter of bloomkit.open must be 'r' or 'r+'. Got {mode!r} instead.")
    write = mode == "r+"
    p, fd = open_regular(path, "bloomkit.open", write=write)
    try:
        if write and not _lock(fd, p, exclusive=True):
            raise BlockingIOError(errno.EWOULDBLOCK, "open for writing by another process (one 'r+' at a time)", p)
        size = os.fstat(fd).st_size
        lay = _read_layout(fd, size, FLAG_MODIFIED)
        if lay.flags & FLAG_MODIFIED and not recover and (write or _lock(fd, p, exclusive=False)):
            parse_layout(os.pread(fd, header_length(os.pread(fd, _HEADER.size, 0)), 0), size)  # raises, saying why
        cls: Any = _class_of(lay.structure)
        if lay.structure not in MAPPABLE:
            raise InvalidParameterError(
                f"{p!r} holds a {lay.structure!r}, which bloomkit.open does not map ("
                f"{', '.join(t.partition('.')[2] for t in MAPPABLE)} files map): read it with bloomkit.load")
        if sys.byteorder != "little":  # pragma: no cover - the file's words are little-endian
            raise InvalidParameterError("bloomkit.open maps files on little-endian machines only: use bloomkit.load")
        if write and (lay.data_offset % PAGE
                      or lay.params_len - _params_used(fd, lay) < PARAM_SLACK // 2):
            os.close(fd)
            fd = -1
            _rewrite_mappable(p, recover)
            return open(p, mode, recover=recover)
        mm = mmap.mmap(fd, size, access=mmap.ACCESS_WRITE if write else mmap.ACCESS_COPY)
        arrays = {name: np.frombuffer(mm, dtype=dt.newbyteorder("="), count=math.prod(shape), offset=off).reshape(shape)
                  for name, dt, shape, off in lay.arrays}
        try:
            obj = cls._from_container(Container(lay.structure, lay.version, lay.hash_id, lay.seed, lay.params, arrays, size))
        except BaseException:
            del arrays
            with contextlib.suppress(BufferError):
                mm.close()
            raise
        mapping = _Mapping(p, fd, mm, mode, lay)
        if write:
            mapping.set_flags(FLAG_MODIFIED)
        obj._mapping = mapping
        obj.__class__ = _mapped_class(cls._plain(), _kind(mode, size))
        return obj
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise


def _params_used(fd: int, lay: Layout) -> int:
    raw = os.pread(fd, lay.params_len, _HEADER.size)
    return len(raw.rstrip(b" "))


def _rewrite_mappable(path: str, recover: bool) -> None:
    """Rewrite a file in the mappable layout (page-aligned payload, spare parameter bytes,
    the current format version), streaming from a read-only mapping: files written by older
    bloomkit versions or small compact files, before their first ``"r+"`` mapping."""
    with open(path, "r", recover=recover) as old:
        params, arrays = old._to_state()
        parts = _pack_parts(old._STRUCTURE, params, arrays, old._header_hash_id(), old._header_seed(), mapped=True)
        write_atomic(path, _with_crc(parts))
        del arrays, parts


@contextlib.contextmanager
def create_beside(cls: Any, output: str | os.PathLike[str], *args: Any, **kwargs: Any) -> Iterator[Any]:
    """Build a ``cls`` filter straight into a file that becomes ``output`` only once complete.

    ``with create_beside(BloomFilter, "big.bkf", capacity, fpr) as f: f.add_many(...)``: the
    filter is :meth:`Mappable.create`-d (with ``*args`` / ``**kwargs``) in a temporary file in
    ``output``'s directory and yielded; when the block ends normally it is sealed
    (:meth:`~Mappable.close`: CRC-32, fsync), renamed onto ``output`` (atomically, replacing a
    file there) and the directory is fsync-ed, as ``save`` does. When the block raises, the
    mapping is dropped without sealing and the temporary file removed: ``output`` is untouched
    and no partial file is left (a SIGKILL can leave a ``.bloomkit-build-*.partial`` file, which
    ``open`` / ``load`` refuse: its header says "being built")."""
    target = os.path.realpath(os.fspath(output))
    folder = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(prefix=".bloomkit-build-", suffix=".partial", dir=folder)
    os.close(fd)
    f: Any = None
    try:
        f = cls.create(tmp, *args, overwrite=True, **kwargs)
        yield f
        f.close()
        os.replace(tmp, target)
    except BaseException:
        if f is not None:
            with contextlib.suppress(Exception):
                f._unmap(seal=False)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(folder)


def map_or_load(path: str | os.PathLike[str]) -> Any:
    """The structure saved in ``path``: mapped read-only (:func:`open`: O(1), the payload is
    not read) when it is one that maps, else loaded (:func:`bloomkit.load`). What ``bloomkit
    query`` answers from, so a query of a file larger than memory never reads all of it."""
    p, fd = open_regular(path, "bloomkit query")
    try:
        head = os.pread(fd, _HEADER.size + 32, 0)
    finally:
        os.close(fd)
    tag = head[12:44].rstrip(b"\0").decode("ascii", "replace") if head[:8] == MAGIC else ""
    if tag in MAPPABLE:
        return open(p)
    from ._format import load

    return load(p)


def verify(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Check a saved file completely without loading it: header, the CRC-32 of every byte
    (streamed, 16 MiB at a time), and (for the mappable filters) the invariants of the filter
    mapped read-only. Returns ``{"path", "bytes", "structure", "crc32"}``; FormatError on any
    damage, an unfinished build, or a file left open for writing. Complexity: O(size)."""
    p, fd = open_regular(path, "bloomkit.verify")
    try:
        size = os.fstat(fd).st_size
        lay = _read_layout(fd, size, 0)
        stored = _check_crc(fd, size, p)
    finally:
        os.close(fd)
    if lay.structure in MAPPABLE:
        with open(p) as obj:
            try:
                obj._check()
            except AssertionError:
                raise FormatError(f"{p}: inconsistent {lay.structure}: its invariants do not hold") from None
    return {"path": p, "bytes": size, "structure": lay.structure, "crc32": f"{stored:08x}"}
