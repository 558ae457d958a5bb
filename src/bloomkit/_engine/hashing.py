"""Canonical key encoding and the one seeded 64-bit hash used by every bloomkit structure.

Canonical encoding
------------------
A key is turned into a *type tag* and a *payload* of bytes:

=====  ========================================  =============================================
tag    key type                                  payload
=====  ========================================  =============================================
1      ``str``, ``numpy.str_``                   UTF-8 (lone surrogates pass through)
2      ``bytes``, ``bytearray``, ``memoryview``,  the bytes as they are
       ``numpy.bytes_``
3      ``bool``, ``numpy.bool_``                 one byte, 0 or 1
4      integers in [-2**63, 2**63)               8 bytes, little-endian two's complement
5      other integers                            minimal little-endian two's complement
6      ``float``, numpy floats                   IEEE-754 binary64, little-endian; -0.0 is
                                                 encoded as 0.0; NaN is refused
7      ``tuple`` of the above (nested allowed)   per element: tag (1 byte), payload length
                                                 (8 bytes LE), payload
=====  ========================================  =============================================

So ``1``, ``1.0``, ``"1"``, ``b"1"`` and ``True`` are five different keys (``1`` and
``numpy.int32(1)`` are the same key). Any other type raises InvalidParameterError.

Hash
----
``h1(key) = XXH64(payload, seed_t)`` with ``seed_t = (seed + tag * 0x9E3779B97F4A7C15) mod 2**64``:
the tag enters through the seed, so batch paths hash the raw buffers of numpy and pyarrow
arrays without copying. Probe positions are
``G_i mod m`` with ``G_i = splitmix64(h1 + (i + 1) * 0x9E3779B97F4A7C15)``, independent of
``m`` (see :mod:`bloomkit._engine.kernels` for why not double hashing). XXH64 is bit-exact with the reference
``xxhash`` package; nothing depends on ``PYTHONHASHSEED``, the process or the platform.

Batch inputs: Python lists (converted once to one buffer + offsets; lists of ``str`` go
through pyarrow), numpy arrays of ints, unsigned ints, floats, bools, fixed-width ``S`` and
``U``, 2-D ``uint8`` arrays (one bytes key per row, every byte significant), pyarrow (large)
string / binary arrays and chunked arrays. numpy ``S`` arrays cannot hold trailing NUL bytes
(numpy strips them), so neither can their keys: use a 2-D ``uint8`` array for fixed-width binary
keys such as packed integers.
"""

from __future__ import annotations

import math
import struct
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import KEY_TYPE_CHOICES, MAX_HASHES, safe_repr
from ..errors import InvalidParameterError
from .boundary import extension
from .columns import KeyBatch, as_keys
from .lazy import kernels as K

if TYPE_CHECKING:
    import pyarrow as pa


def _pa() -> Any:
    """pyarrow, imported on first use (keeps ``import bloomkit`` light)."""
    import pyarrow

    return pyarrow

__all__ = [
    "HASH_XXH64",
    "arrow_buffers",
    "TAG_BOOL",
    "TAG_BYTES",
    "TAG_FLOAT",
    "TAG_INT",
    "TAG_BIGINT",
    "TAG_STR",
    "TAG_TUPLE",
    "KEY_TYPE_CHOICES",
    "KEY_TYPES_UNKNOWN",
    "KeyTypesMixin",
    "MAX_HASHES",
    "check_hash_id",
    "check_seed",
    "encode_key",
    "hash64",
    "hash64_tag",
    "hash_bytes_many",
    "hash_keys",
    "hash_many",
    "key_tags",
    "key_type_mask",
    "key_type_names",
    "hash_name",
    "positions",
    "positions_one",
    "register_hash_id",
    "probe",
    "tag_seed",
]

HASH_XXH64 = 1
_HASH_NAMES: dict[int, str] = {HASH_XXH64: "xxh64-splitmix"}

TAG_STR, TAG_BYTES, TAG_BOOL, TAG_INT, TAG_BIGINT, TAG_FLOAT, TAG_TUPLE = 1, 2, 3, 4, 5, 6, 7

# Key types: every structure records which kinds of keys it holds, as a bit mask (bit t for
# tag t; bit 0: "unknown", keys received without their types: a folding wire message, items
# added by position). The CLI parses query arguments by it.
_TYPE_NAMES = {TAG_STR: "str", TAG_BYTES: "bytes", TAG_BOOL: "bool", TAG_INT: "int", TAG_BIGINT: "int",
               TAG_FLOAT: "float", TAG_TUPLE: "tuple"}
KEY_TYPES_UNKNOWN = 1


def key_type_names(mask: int) -> list[str]:
    """Sorted names of the key types in a tag mask.

    >>> key_type_names((1 << TAG_STR) | (1 << TAG_INT) | (1 << TAG_BIGINT))
    ['int', 'str']
    """
    names = {_TYPE_NAMES[t] for t in _TYPE_NAMES if mask >> t & 1}
    if mask & KEY_TYPES_UNKNOWN:
        names.add("unknown")
    return sorted(names)


def key_type_mask(names: Iterable[str]) -> int:
    """Inverse of :func:`key_type_names` (``"int"`` sets the int64 tag).

    >>> key_type_names(key_type_mask(["str", "int"]))
    ['int', 'str']
    """
    by_name = {"str": TAG_STR, "bytes": TAG_BYTES, "bool": TAG_BOOL, "int": TAG_INT, "float": TAG_FLOAT,
               "tuple": TAG_TUPLE}
    mask = 0
    for n in names:
        mask |= KEY_TYPES_UNKNOWN if n == "unknown" else 1 << by_name[n]
    return mask


class KeyTypesMixin:
    """Records the kinds of keys a structure holds (``key_types``), saved with it.

    ``_note_keys(mask)`` ORs a tag mask in; masks only grow (until ``clear``), so a check
    without the lock followed by the locked update loses nothing.
    """

    _key_mask: int = 0

    def _note_keys(self, mask: int) -> None:
        if mask & (1 << TAG_BIGINT):  # one name, "int", for both integer encodings
            mask |= 1 << TAG_INT
        if mask & ~self._key_mask:
            with _KEY_LOCK:
                self._key_mask |= mask

    @property
    def key_types(self) -> tuple[str, ...]:
        """The kinds of keys added so far: names from "bool", "bytes", "float", "int", "str",
        "tuple" ("unknown" for keys received without their types: a folding wire message, items
        added by position)."""
        return tuple(key_type_names(self._key_mask))


_KEY_LOCK = threading.Lock()


def check_hash_id(hash_id: int, allowed: Iterable[int], owner: str) -> int:
    """``hash_id`` if ``owner`` implements it, else InvalidParameterError naming both."""
    ids = tuple(allowed)
    if hash_id not in ids:
        raise InvalidParameterError(
            f"{owner} implements hash id(s) {', '.join(map(str, ids))}. Got {hash_id} ({hash_name(hash_id)}) instead."
        )
    return hash_id

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def register_hash_id(hash_id: int, name: str) -> int:
    """Register a module's own hash (e.g. the paper-faithful SHA-512 of doc 000) by id."""
    if hash_id in _HASH_NAMES and _HASH_NAMES[hash_id] != name:
        raise ValueError(f"hash id {hash_id} already registered as {_HASH_NAMES[hash_id]!r}")
    _HASH_NAMES[hash_id] = name
    return hash_id


def hash_name(hash_id: int) -> str:
    """Human-readable name of a registered hash id."""
    return _HASH_NAMES.get(hash_id, f"unknown({hash_id})")


def check_seed(seed: Any, owner: str) -> int:
    """Validate a seed: an integer in [0, 2**64)."""
    from .._validation import check_int

    return check_int(seed, "seed", owner, lo=0, hi=_MASK)


def tag_seed(seed: int, tag: int) -> int:
    """The XXH64 seed for keys of type ``tag``: ``(seed + tag * golden) mod 2**64``."""
    return (seed + tag * _GOLDEN) & _MASK


MAX_KEY_DEPTH = 64
"""Deepest nesting of tuples in a key (the compiled boundary, ``_speedups.c``, has the same limit)."""


def _unsupported(key: Any) -> InvalidParameterError:
    return InvalidParameterError(
        "The 'key' parameter must be a str, bytes, bool, int, float (not NaN), numpy scalar, "
        f"or a tuple of these. Got {safe_repr(key)} of type {type(key).__name__} instead."
    )


def encode_key(key: Any, _depth: int = 0) -> tuple[int, bytes]:
    """Canonical ``(tag, payload)`` of a key (see the module docstring).

    >>> encode_key("ab")
    (1, b'ab')
    >>> encode_key(1)
    (4, b'\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00')

    C twin: ``encode`` of _speedups.c, section "canonical encoding".
    """
    if isinstance(key, str):
        try:
            return TAG_STR, key.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates pass through
            return TAG_STR, key.encode("utf-8", "surrogatepass")
    if isinstance(key, bytes):
        return TAG_BYTES, key
    if isinstance(key, bool | np.bool_):
        return TAG_BOOL, b"\x01" if key else b"\x00"
    if isinstance(key, int | np.integer):
        v = int(key)
        if _INT64_MIN <= v <= _INT64_MAX:
            return TAG_INT, v.to_bytes(8, "little", signed=True)
        nbytes = (v.bit_length() + 8) // 8
        return TAG_BIGINT, v.to_bytes(nbytes, "little", signed=True)
    if isinstance(key, float | np.floating):
        f = float(key)
        if math.isnan(f):
            raise InvalidParameterError("The 'key' parameter must not be NaN. Got nan instead.")
        if f == 0.0:
            f = 0.0
        return TAG_FLOAT, struct.pack("<d", f)
    if isinstance(key, bytearray | memoryview):
        return TAG_BYTES, bytes(key)
    if isinstance(key, tuple):
        if _depth >= MAX_KEY_DEPTH:
            raise InvalidParameterError(
                f"The 'key' parameter must not nest tuples more than {MAX_KEY_DEPTH} levels deep. Got a deeper tuple instead."
            )
        parts = []
        for item in key:
            t, p = encode_key(item, _depth + 1)
            parts.append(bytes((t,)) + len(p).to_bytes(8, "little") + p)
        return TAG_TUPLE, b"".join(parts)
    raise _unsupported(key)


_C = extension()
"""The compiled boundary (:mod:`bloomkit._engine.boundary`), or None: single keys and lists of keys are
hashed there when it is active, with the Python :func:`encode_key` for the key types it does
not encode itself (so both paths share one definition of those)."""
if _C is not None:
    _C.configure(encode_key)


def _xxh64_bytes(payload: bytes, seed: int) -> int:
    buf = np.frombuffer(payload, dtype=np.uint8) if payload else np.zeros(0, np.uint8)
    return int(K.xxh64(buf, 0, len(payload), np.uint64(seed)))


try:  # the C implementation is faster for single keys; the kernel is the same algorithm
    import xxhash as _xxhash

    def _h1(payload: bytes, seed: int) -> int:
        return _xxhash.xxh64_intdigest(payload, seed)

except ImportError:  # pragma: no cover - exercised when xxhash is not installed
    _h1 = _xxh64_bytes


def hash64(key: Any, seed: int = 0) -> int:
    """h1 of one key: XXH64 of its canonical payload with the tag-derived seed.

    Complexity: O(len(payload)).
    """
    if _C is not None:
        h: int = _C.hash64(key, seed)
        return h
    tag, payload = encode_key(key)
    return _h1(payload, tag_seed(seed, tag))


def hash64_tag(key: Any, seed: int = 0) -> tuple[int, int]:
    """(h1, tag) of one key: :func:`hash64` and the key's type tag.

    C twin: ``key_hash`` of _speedups.c, section "canonical encoding"."""
    if _C is not None:
        out: tuple[int, int] = _C.hash64_tag(key, seed)
        return out
    tag, payload = encode_key(key)
    return _h1(payload, tag_seed(seed, tag)), tag


def probe(h1: int, i: int) -> int:
    """G_i = splitmix64(h1 + (i + 1) * 0x9E3779B97F4A7C15): pure-Python reference of the kernel.

    >>> probe(0, 0) == 0xE220A8397B1DCDAF
    True
    """
    z = (h1 + (i + 1) * _GOLDEN) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def positions_one(h1: int, k: int, m: int) -> list[int]:
    """The k probe positions ``G_i mod m`` of one key (the same as :func:`positions`).

    >>> positions_one(10, 3, 7) == [probe(10, i) % 7 for i in range(3)]
    True
    """
    return [probe(h1, i) % m for i in range(k)]


def positions(h1: np.ndarray, k: int, m: int) -> np.ndarray:
    """(n, k) int64 probe positions of an array of h1 values."""
    return K.positions(np.ascontiguousarray(h1, dtype=np.uint64), int(k), np.uint64(m))


def hash_bytes_many(data: np.ndarray, offsets: np.ndarray, seed: int, tag: int = TAG_BYTES) -> np.ndarray:
    """h1 of keys stored as one uint8 buffer + (n+1) offsets, all of type ``tag``."""
    return K.hash_offsets(
        np.ascontiguousarray(data, dtype=np.uint8),
        np.ascontiguousarray(offsets, dtype=np.int64),
        np.uint64(tag_seed(seed, tag)),
    )


def arrow_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(data uint8, offsets int32 or int64 as stored) of a pyarrow string/binary array, slices
    honoured. The offsets are not widened: the kernels read either width, and a widened copy
    cost about 1 ns per key."""
    pa = _pa()
    if arr.null_count:
        raise InvalidParameterError(
            f"The 'keys' parameter must not contain nulls. Got {arr.null_count} null(s) instead."
        )
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    bufs = arr.buffers()
    off_dtype = np.int64 if large else np.int32
    offsets = np.frombuffer(bufs[1], dtype=off_dtype, count=len(arr) + 1, offset=arr.offset * np.dtype(off_dtype).itemsize)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return data, offsets


def _hash_arrow(arr: pa.Array | pa.ChunkedArray, seed: int) -> np.ndarray:
    pa = _pa()
    if isinstance(arr, pa.ChunkedArray):
        parts = [_hash_arrow(c, seed) for c in arr.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, np.uint64)
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        tag = TAG_STR
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        tag = TAG_BYTES
    elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        if arr.null_count:
            raise InvalidParameterError(
                f"The 'keys' parameter must not contain nulls. Got {arr.null_count} null(s) instead."
            )
        return _hash_numpy(arr.to_numpy(zero_copy_only=False), seed)
    else:
        raise InvalidParameterError(
            "The 'keys' parameter must be a pyarrow string, binary, integer, float or boolean "
            f"array. Got type {t} instead."
        )
    data, offsets = arrow_buffers(arr)
    return K.hash_offsets(data, offsets, np.uint64(tag_seed(seed, tag)))


def _hash_numpy(arr: np.ndarray, seed: int) -> np.ndarray:
    if arr.ndim == 2 and arr.dtype == np.uint8:  # one bytes key per row, every byte significant
        return K.hash_fixed_bytes(np.ascontiguousarray(arr), np.uint64(tag_seed(seed, TAG_BYTES)), False)
    if arr.ndim != 1:
        raise InvalidParameterError(
            f"The 'keys' parameter must be a one-dimensional array. Got shape {arr.shape} instead."
        )
    kind = arr.dtype.kind
    if kind == "b":
        return K.hash_u8(np.ascontiguousarray(arr, dtype=np.uint8), np.uint64(tag_seed(seed, TAG_BOOL)))
    if kind == "i":
        v = np.ascontiguousarray(arr, dtype="<i8").view(np.uint64)
        return K.hash_u64(v, np.uint64(tag_seed(seed, TAG_INT)))
    if kind == "u":
        v = np.ascontiguousarray(arr, dtype="<u8")
        return K.hash_u64_wide(v, np.uint64(tag_seed(seed, TAG_INT)), np.uint64(tag_seed(seed, TAG_BIGINT)))
    if kind == "f":
        f = np.ascontiguousarray(arr, dtype="<f8")
        if np.isnan(f).any():
            bad = int(np.flatnonzero(np.isnan(f))[0])
            raise InvalidParameterError(
                f"The 'keys' parameter must not contain NaN. Got nan at index {bad} instead."
            )
        f = f + 0.0  # -0.0 -> 0.0 (a copy, so the caller's array is untouched)
        return K.hash_u64(f.view(np.uint64), np.uint64(tag_seed(seed, TAG_FLOAT)))
    if kind == "S":
        w = arr.dtype.itemsize
        rows: np.ndarray = np.ascontiguousarray(arr).view(np.uint8).reshape(len(arr), w)
        return K.hash_fixed_bytes(rows, np.uint64(tag_seed(seed, TAG_BYTES)), True)
    if kind == "U":
        w = arr.dtype.itemsize // 4
        rows = np.ascontiguousarray(arr, dtype=f"<U{max(w, 1)}").view(np.uint32).reshape(len(arr), max(w, 1))
        return K.hash_ucs4(rows, np.uint64(tag_seed(seed, TAG_STR)))
    if kind == "O":
        return _hash_list(arr.tolist(), seed)[0]
    raise InvalidParameterError(
        "The 'keys' parameter must be an array of ints, floats, bools, bytes ('S') or str ('U'). "
        f"Got dtype {arr.dtype} instead."
    )


STR_CHUNK = 8192  # keys per joined buffer of a list of str


def _hash_str_list(keys: Sequence[Any], seed: int) -> np.ndarray | None:
    """h1 of a list of str, STR_CHUNK keys at a time: each chunk is ``"\0".join``-ed (which
    checks that every key is a str) and its UTF-8 hashed in one pass. None when some key is not
    a str, or holds a NUL and a lone surrogate at once (the general path takes those).

    Chunks keep the joined text and its UTF-8 small and reused: one joined buffer of 10^6
    keys is fresh memory every call, and its page faults cost more than the hashing (1M keys
    of 23 characters: 69.6 -> 49.2 ns/key for a whole ``add_many``)."""
    n = len(keys)
    out = np.empty(n, dtype=np.uint64)
    tseed = np.uint64(tag_seed(seed, TAG_STR))
    for lo in range(0, n, STR_CHUNK):
        chunk = keys[lo : lo + STR_CHUNK]
        try:
            text = "\0".join(chunk)
        except TypeError:
            return None
        try:
            joined = text.encode("utf-8")  # ASCII is a memcpy
        except UnicodeEncodeError:
            joined = text.encode("utf-8", "surrogatepass")
        buf = np.frombuffer(joined, dtype=np.uint8) if joined else np.zeros(0, np.uint8)
        h = K.hash_nul_joined(buf, len(chunk), tseed)
        if len(h) != len(chunk):  # some key holds a NUL: pyarrow builds offsets + data
            pa = _pa()
            try:
                h = _hash_arrow(pa.array(chunk, type=pa.string()), seed)
            except (pa.ArrowInvalid, UnicodeEncodeError):
                return None
        out[lo : lo + len(chunk)] = h
    return out


def _hash_list(keys: Sequence[Any], seed: int) -> tuple[np.ndarray, int]:
    """h1 of a list of keys and the mask of their tags.

    C twin: ``hash_into`` of _speedups.c, section "module functions"."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, np.uint64), 0
    if _C is not None:  # the compiled boundary: every key read in place, no join
        out = np.empty(n, dtype=np.uint64)
        try:
            mask: int = _C.hash_into(keys, seed, out)
        except Exception:  # the Python path below raises its own error (message, position) identically
            pass
        else:
            return out, mask
    first = type(keys[0])
    if first is str:
        h = _hash_str_list(keys, seed)
        if h is not None:
            return h, 1 << TAG_STR
    elif first is bytes:
        try:  # bytes.join checks the types (bytes-like keys are bytes keys)
            data = b"".join(keys)
        except TypeError:
            data = None
        if data is not None:
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, keys), dtype=np.int64, count=n), out=offsets[1:])
            if offsets[-1] == len(data):  # memoryviews of non-byte items would differ
                buf = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(0, np.uint8)
                return K.hash_offsets(buf, offsets, np.uint64(tag_seed(seed, TAG_BYTES))), 1 << TAG_BYTES
    elif first is int:
        try:
            arr = np.fromiter(keys, dtype=np.int64, count=n)
        except (TypeError, ValueError, OverflowError):
            arr = None
        # np.fromiter accepts bools and floats with integral values: only use it for pure ints
        if arr is not None and all(type(k) is int for k in keys):
            return _hash_numpy(arr, seed), 1 << TAG_INT
    elif first is float:
        if all(type(k) is float for k in keys):
            return _hash_numpy(np.fromiter(keys, dtype=np.float64, count=n), seed), 1 << TAG_FLOAT
    # general path: canonical encoding of every key, one buffer + offsets + per-key seeds
    seeds = np.empty(n, dtype=np.uint64)
    lengths = np.empty(n + 1, dtype=np.int64)
    lengths[0] = 0
    payloads = []
    tag_seeds = {t: tag_seed(seed, t) for t in range(1, 8)}
    mask = 0
    for i, key in enumerate(keys):
        try:
            t, p = encode_key(key)
        except InvalidParameterError as e:
            raise InvalidParameterError(f"{e} (key at position {i} of the batch)") from None
        mask |= 1 << t
        seeds[i] = tag_seeds[t]
        lengths[i + 1] = len(p)
        payloads.append(p)
    offsets = np.cumsum(lengths)
    joined = np.frombuffer(b"".join(payloads), dtype=np.uint8) if offsets[-1] else np.zeros(1, np.uint8)
    return K.hash_offsets_seeds(joined, offsets, seeds), mask


def key_tags(keys: Any) -> int | None:
    """The tag mask of a typed canonical batch (numpy array, pyarrow string / binary array),
    read from its type without touching the keys; None for lists (their hashing finds it)."""
    if isinstance(keys, np.ndarray):
        if keys.ndim == 2 and keys.dtype == np.uint8:
            return 1 << TAG_BYTES
        kind = keys.dtype.kind
        tag = {"b": TAG_BOOL, "i": TAG_INT, "u": TAG_INT, "f": TAG_FLOAT, "S": TAG_BYTES, "U": TAG_STR}.get(kind)
        if tag is None:
            return None
        if kind == "u" and keys.dtype.itemsize == 8 and keys.size and int(keys.max()) >> 63:
            return (1 << TAG_INT) | (1 << TAG_BIGINT) if int(keys.min()) >> 63 == 0 else 1 << TAG_BIGINT
        return 1 << tag if keys.size else 0
    if type(keys).__module__.startswith("pyarrow"):
        pa = _pa()
        t = keys.type
        if len(keys) == 0:
            return 0
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return 1 << TAG_STR
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            return 1 << TAG_BYTES
    return None


def hash_keys(keys: Any, seed: int = 0, *, name: str = "keys", owner: str | None = None) -> tuple[np.ndarray, int]:
    """h1 of every key of a batch and the mask of their key types (see :func:`key_type_names`).

    The batch goes through the data front door first (:func:`bloomkit._engine.columns.as_keys`:
    pandas / polars / arrow tables by position, nulls refused naming ``name`` and ``owner``),
    unless it is a :class:`~bloomkit._engine.columns.KeyBatch`, which has been through it.

    Complexity: O(total payload bytes).
    """
    if isinstance(keys, KeyBatch):  # from the front door: no second look at the keys
        if keys.hashed:
            return keys.data, keys.tags
        data = keys.data
        if isinstance(data, list):
            return _hash_list(data, seed)
        return (_hash_numpy(data, seed) if isinstance(data, np.ndarray) else _hash_arrow(data, seed)), keys.tags
    keys = as_keys(keys, name, owner)
    if isinstance(keys, list):
        return _hash_list(keys, seed)
    tags = key_tags(keys)
    if isinstance(keys, np.ndarray):
        h = _hash_numpy(keys, seed)
    else:
        h = _hash_arrow(keys, seed)
    return h, (tags or 0)


def hash_many(keys: Any, seed: int = 0) -> np.ndarray:
    """h1 of every key of a batch; identical to :func:`hash64` key by key.

    Parameters
    ----------
    keys : list, tuple, numpy array, pyarrow Array / ChunkedArray, pandas / polars Series, or
        any iterable
        The keys (through :func:`bloomkit._engine.columns.as_keys`: by position, never by label).
    seed : int
        The structure's seed.

    Returns
    -------
    numpy.ndarray of uint64

    Complexity: O(total payload bytes).
    """
    return hash_keys(keys, seed)[0]
