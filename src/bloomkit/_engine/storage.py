"""Bit and counter storage over numpy words.

:class:`BitArray` stores ``num_bits`` bits in ``ceil(num_bits / 64)`` uint64 words, bit ``i``
at word ``i // 64``, bit ``i % 64`` (least significant first). Serialized as the
little-endian bytes of the words truncated to ``ceil(num_bits / 8)`` bytes, which is also bit
``i`` at byte ``i // 8``, bit ``i % 8``.

:class:`CounterArray` stores counters of 4 (two per byte), 8, 16 or 32 bits. Increments
saturate at ``2**width - 1`` and set :attr:`CounterArray.overflowed`; a saturated counter
stays saturated (its true value is unknown, so decrements leave it alone: a key whose counter
saturated can never produce a false negative, at the cost of never being fully removed).
Decrementing a zero counter raises InvalidParameterError and leaves the array unchanged.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Iterator
from types import NotImplementedType
from typing import Any

import numpy as np

from .._validation import check_choice, check_int
from ..errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from .lazy import counters as KC
from .lazy import kernels as K

__all__ = [
    "ALIGNMENT",
    "LOAD_EXPANSION",
    "LOAD_SLACK",
    "MAX_LOAD_BYTES",
    "BitArray",
    "CounterArray",
    "aligned_copy",
    "aligned_empty",
    "aligned_zeros",
    "allocate_into",
    "load_budget",
    "popcount_words",
    "reserve",
]


def popcount_words(words: np.ndarray) -> int:
    """Set bits of a uint64 array: numpy's ``bitwise_count`` (numpy >= 2), so counting never
    starts numba (a filter's first ``add`` counts its bits: the overfill check), else the numba
    kernel. Complexity: O(len(words))."""
    if _BITWISE_COUNT is not None:
        return int(_BITWISE_COUNT(words).sum(dtype=np.int64))
    return int(K.popcount_words(words))


_BITWISE_COUNT = getattr(np, "bitwise_count", None)

# ---------------------------------------------------------------------------------------------
# allocation: aligned, and bounded while a file is being loaded

ALIGNMENT = 64
"""Storage arrays start on a cache-line boundary (numpy alone gives 16 bytes: a 64-byte block
of a blocked filter would straddle two lines)."""

LOAD_EXPANSION = 8
"""While a file of N bytes is loaded, storage may allocate LOAD_EXPANSION * N ..."""
LOAD_SLACK = 1 << 20
"""... plus LOAD_SLACK bytes (small files, fixed-size scratch) ..."""
MAX_LOAD_BYTES = 1 << 36
"""... and never more than MAX_LOAD_BYTES (64 GiB) in all."""

_BUDGET: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("bloomkit_load_budget", default=None)


@contextlib.contextmanager
def load_budget(source_bytes: int) -> Iterator[None]:
    """While active (the loader of :mod:`bloomkit._format` and folding's wire decoder set it),
    :func:`reserve` lets storage allocate at most
    ``min(LOAD_EXPANSION * source_bytes + LOAD_SLACK, MAX_LOAD_BYTES)`` bytes in all. A load
    nested in another (a container that holds containers) spends its parent's budget: it gets
    at most what the parent has left, and what it allocates is charged to the parent too."""
    parent = _BUDGET.get()
    limit = min(LOAD_EXPANSION * int(source_bytes) + LOAD_SLACK, MAX_LOAD_BYTES)
    if parent is not None:
        limit = min(limit, parent[0])
    cell = [limit, int(source_bytes)]
    token = _BUDGET.set(cell)
    try:
        yield
    finally:
        _BUDGET.reset(token)
        if parent is not None:
            parent[0] -= limit - cell[0]


def reserve(nbytes: int, what: str) -> None:
    """Account for an allocation of ``nbytes`` made while loading; FormatError (before anything
    is allocated) when the declared sizes of a file would take more than its load budget.
    Outside a load this does nothing."""
    budget = _BUDGET.get()
    if budget is None:
        return
    if nbytes > budget[0]:
        raise FormatError(
            f"{what} would allocate {nbytes} bytes, more than a file of {budget[1]} bytes may make "
            f"bloomkit allocate (at most {LOAD_EXPANSION} x its size + {LOAD_SLACK} bytes): the "
            "declared sizes do not match the data"
        )
    budget[0] -= nbytes


def aligned_empty(shape: int | tuple[int, ...], dtype: Any, what: str = "an array") -> np.ndarray:
    """An uninitialised C-contiguous array starting on an :data:`ALIGNMENT`-byte boundary,
    charged to the load budget. Complexity: O(1) (the pages are touched when written)."""
    dt = np.dtype(dtype)
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    n = 1
    for d in dims:
        n *= int(d)
    nbytes = n * dt.itemsize
    reserve(nbytes, what)
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    off = (-raw.ctypes.data) % ALIGNMENT
    out: np.ndarray = raw[off : off + nbytes].view(dt).reshape(dims)
    return out


_ALLOCATOR: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("bloomkit_allocator", default=None)


@contextlib.contextmanager
def allocate_into(make: Any) -> Iterator[list[Any]]:
    """While active, the next :func:`aligned_zeros` call (a filter's storage, allocated by its
    constructor) returns ``make(shape, dtype)``, zeroed memory the caller provides (a mapped file:
    ``create`` of :mod:`bloomkit._mapped`) instead of allocating; later calls allocate as usual.
    The yielded list holds what ``make`` returned (empty if it was never called)."""
    cell: list[Any] = [make]
    token = _ALLOCATOR.set(cell)
    try:
        yield cell
    finally:
        _ALLOCATOR.reset(token)


def aligned_zeros(shape: int | tuple[int, ...], dtype: Any, what: str = "an array") -> np.ndarray:
    """:func:`aligned_empty`, zero-filled. Complexity: O(size)."""
    cell = _ALLOCATOR.get()
    if cell is not None and callable(cell[0]):
        make = cell.pop()
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        arr: np.ndarray = make(dims, np.dtype(dtype))
        cell.append(arr)
        return arr
    out = aligned_empty(shape, dtype, what)
    out.fill(0)
    return out


def aligned_empty_unbudgeted(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialised aligned array for data that exist (an array of a file being read: its
    size is bounded by the file's), not charged to the load budget."""
    dt = np.dtype(dtype)
    nbytes = dt.itemsize
    for d in shape:
        nbytes *= int(d)
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    off = (-raw.ctypes.data) % ALIGNMENT
    out: np.ndarray = raw[off : off + nbytes].view(dt).reshape(shape)
    return out


def aligned_copy(a: np.ndarray) -> np.ndarray:
    """A C-contiguous aligned copy of ``a`` (not charged: it copies data that exist)."""
    out = aligned_empty_unbudgeted(a.shape, a.dtype)
    np.copyto(out, a)
    return out


def _as_index(idx: Any, size: int, owner: str) -> np.ndarray:
    a = np.asarray(idx)
    if a.dtype.kind not in "iu":
        raise InvalidParameterError(
            f"The 'index' parameter of {owner} must be an integer array. Got dtype {a.dtype} instead."
        )
    a = np.ascontiguousarray(a.ravel(), dtype=np.int64)
    if a.size and (a.min() < 0 or a.max() >= size):
        bad = a[(a < 0) | (a >= size)][0]
        raise InvalidParameterError(
            f"The 'index' parameter of {owner} must be in [0, {size}). Got {int(bad)} instead."
        )
    return a


def _check_divisor(factor: Any, size: int, owner: str) -> int:
    f = check_int(factor, "factor", owner, lo=2)
    if size % f:
        raise InvalidParameterError(
            f"The 'factor' parameter of {owner}.fold must divide the size {size}. Got {f} instead."
        )
    return f


class BitArray:
    """A fixed-size array of bits over uint64 words.

    Parameters
    ----------
    num_bits : int
        Number of bits m (>= 1). Memory is ``ceil(m / 64)`` words exactly.
    """

    __slots__ = ("m64", "num_bits", "words")

    def __init__(self, num_bits: int, words: np.ndarray | None = None) -> None:
        self.num_bits = check_int(num_bits, "num_bits", "BitArray", lo=1)
        self.m64 = np.uint64(self.num_bits)  # m as the kernels take it, fixed with the words
        nw = (self.num_bits + 63) // 64
        self.words = aligned_zeros(nw, np.uint64, f"a BitArray of {self.num_bits} bits") if words is None else words

    def __setattr__(self, name: str, value: Any) -> None:
        """``words`` (the ``ceil(m / 64)`` uint64 words) is checked when assigned: dtype, shape
        and layout (the kernels index it by m: a smaller array would be written out of bounds).
        Reads stay plain slot reads."""
        if name == "words":
            nw = (self.num_bits + 63) // 64
            if not (isinstance(value, np.ndarray) and value.dtype == np.uint64 and value.shape == (nw,)
                    and value.flags.c_contiguous):
                raise InvalidParameterError(
                    f"The 'words' parameter of BitArray must be a C-contiguous uint64 array of shape ({nw},). "
                    f"Got {getattr(value, 'dtype', type(value).__name__)} {getattr(value, 'shape', '')} instead."
                )
        object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return self.num_bits

    def set(self, i: int) -> None:
        """Set bit i. Complexity: O(1)."""
        i = check_int(i, "index", "BitArray", 0, self.num_bits - 1)
        self.words[i >> 6] |= np.uint64(1 << (i & 63))

    def test(self, i: int) -> bool:
        """Value of bit i. Complexity: O(1)."""
        i = check_int(i, "index", "BitArray", 0, self.num_bits - 1)
        return bool((int(self.words[i >> 6]) >> (i & 63)) & 1)

    def set_many(self, idx: Any) -> None:
        """Set every bit of an index array. Complexity: O(len(idx))."""
        a = _as_index(idx, self.num_bits, "BitArray")
        np.bitwise_or.at(self.words, a >> 6, np.left_shift(np.uint64(1), (a & 63).astype(np.uint64)))

    def test_many(self, idx: Any) -> np.ndarray:
        """Bool array: value of each indexed bit. Complexity: O(len(idx))."""
        a = _as_index(idx, self.num_bits, "BitArray")
        out: np.ndarray = ((self.words[a >> 6] >> (a & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)
        return out

    def popcount(self) -> int:
        """Number of set bits. Complexity: O(m / 64)."""
        return popcount_words(self.words)

    nonzero_count = popcount  # the name CounterArray uses: code can count either store

    def clear(self) -> None:
        """All bits zero, in place. Complexity: O(m / 64)."""
        self.words.fill(0)
    def _same_size(self, other: object) -> BitArray | NotImplementedType:
        if not isinstance(other, BitArray):
            return NotImplemented  # type: ignore[no-any-return]  # typeshed: NotImplementedType(Any)
        if other.num_bits != self.num_bits:
            raise IncompatibleFiltersError(
                f"BitArrays of different sizes cannot be combined: {self.num_bits} and {other.num_bits} bits."
            )
        return other

    def __or__(self, other: BitArray) -> BitArray:
        o = self._same_size(other)
        if o is NotImplemented:
            return NotImplemented
        return BitArray(self.num_bits, self.words | o.words)

    def __and__(self, other: BitArray) -> BitArray:
        o = self._same_size(other)
        if o is NotImplemented:
            return NotImplemented
        return BitArray(self.num_bits, self.words & o.words)

    def __ior__(self, other: BitArray) -> BitArray:
        o = self._same_size(other)
        if o is NotImplemented:
            return NotImplemented
        self.words |= o.words
        return self

    def __iand__(self, other: BitArray) -> BitArray:
        o = self._same_size(other)
        if o is NotImplemented:
            return NotImplemented
        self.words &= o.words
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BitArray):
            return NotImplemented
        return self.num_bits == other.num_bits and bool(np.array_equal(self.words, other.words))

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> BitArray:
        """An independent copy. Complexity: O(m / 64)."""
        return BitArray(self.num_bits, aligned_copy(self.words))

    def fold(self, factor: int) -> BitArray:
        """OR-fold by a divisor of the size: bit j of the result is OR_t bit (j + t*m/factor).

        Complexity: O(m / 64) word operations, for any divisor.
        """
        f = _check_divisor(factor, self.num_bits, "BitArray")
        return BitArray(self.num_bits // f, K.fold_bits(self.words, self.num_bits, f))

    def to_bytes(self) -> bytes:
        """Little-endian bytes, ``ceil(m / 8)`` of them."""
        return self.words.astype("<u8", copy=False).tobytes()[: (self.num_bits + 7) // 8]

    @classmethod
    def from_bytes(cls, data: bytes, num_bits: int) -> BitArray:
        """Inverse of :meth:`to_bytes`; FormatError on a wrong length or stray high bits."""
        num_bits = check_int(num_bits, "num_bits", "BitArray", lo=1)
        need = (num_bits + 7) // 8
        if len(data) != need:
            raise FormatError(f"BitArray of {num_bits} bits needs {need} bytes, got {len(data)}")
        nw = (num_bits + 63) // 64
        words = aligned_zeros(nw, np.uint64)
        words.view(np.uint8)[:need] = np.frombuffer(data, dtype=np.uint8)
        if sys.byteorder != "little":  # pragma: no cover - the bytes are little-endian words
            words.byteswap(inplace=True)
        out = cls(num_bits, words)
        rem = num_bits & 63
        if rem and int(words[-1]) >> rem:
            raise FormatError("BitArray payload has bits set beyond num_bits")
        return out


_DTYPES = {4: np.uint8, 8: np.uint8, 16: np.uint16, 32: np.uint32}


class CounterArray:
    """An array of saturating counters of 4 (packed), 8, 16 or 32 bits.

    Parameters
    ----------
    size : int
        Number of counters.
    width : {4, 8, 16, 32}
        Bits per counter; the maximum value is ``2**width - 1``.
    """

    __slots__ = ("data", "m64", "overflowed", "size", "width")

    def __init__(self, size: int, width: int = 4, data: np.ndarray | None = None) -> None:
        self.size = check_int(size, "size", "CounterArray", lo=1)
        self.m64 = np.uint64(self.size)  # m as the kernels take it, fixed with the counters
        self.width = check_choice(width, "width", "CounterArray", (4, 8, 16, 32))
        if data is None:
            n, dtype = self.storage_shape(self.size, self.width)
            data = aligned_zeros(n, dtype, f"a CounterArray of {self.size} counters")
        self.data = data
        self.overflowed = False

    def __setattr__(self, name: str, value: Any) -> None:
        """``data`` (the counters' storage, 4-bit counters two per byte) is checked when
        assigned: dtype, shape and layout (the kernels index it by the size: a smaller array would
        be written out of bounds). Reads stay plain slot reads."""
        if name == "data":
            n, dtype = self.storage_shape(self.size, self.width)
            if not (isinstance(value, np.ndarray) and value.dtype == dtype and value.shape == (n,)
                    and value.flags.c_contiguous):
                raise InvalidParameterError(
                    f"The 'data' parameter of CounterArray must be a C-contiguous {dtype} array of shape ({n},). "
                    f"Got {getattr(value, 'dtype', type(value).__name__)} {getattr(value, 'shape', '')} instead."
                )
        object.__setattr__(self, name, value)

    @staticmethod
    def storage_shape(size: int, width: int) -> tuple[int, Any]:
        """(length, dtype) of the array holding ``size`` counters of ``width`` bits."""
        return ((size + 1) // 2 if width == 4 else size), np.dtype(_DTYPES[width])

    @classmethod
    def from_saved(cls, data: np.ndarray, size: int, width: int, what: str) -> CounterArray:
        """``size`` counters of ``width`` bits over a saved array ``data`` (not copied):
        FormatError naming ``what`` unless it has exactly the storage's length and dtype and,
        for 4-bit counters of odd size, a zero padding nibble (checked before anything of the
        declared size is allocated)."""
        length, dtype = cls.storage_shape(size, width)
        if data.dtype != dtype or data.shape != (length,):
            raise FormatError(f"{what} must be {length} x {dtype} for {size} {width}-bit counters; "
                              f"got {data.shape} {data.dtype}")
        if width == 4 and size % 2 and int(data[-1]) >> 4:
            raise FormatError(f"{what} has a non-zero padding nibble")
        return cls(size, width, data)

    def clear(self) -> None:
        """All counters zero (and not overflowed), in place. Complexity: O(size)."""
        self.data.fill(0)
        self.overflowed = False

    @property
    def max_value(self) -> int:
        """Largest value a counter holds (2**width - 1)."""
        return (1 << self.width) - 1

    def __len__(self) -> int:
        return self.size

    def get(self, i: int) -> int:
        """Value of counter i. Complexity: O(1)."""
        i = check_int(i, "index", "CounterArray", 0, self.size - 1)
        return int(KC.cget(self.data, self.width, np.int64(i)))

    def values(self) -> np.ndarray:
        """All counters as an int64 array. Complexity: O(size)."""
        return KC.counters_unpack(self.data, self.width, self.size)

    @classmethod
    def from_values(cls, values: Any, width: int = 4) -> CounterArray:
        """Counters holding ``values`` (values above the maximum saturate and set ``overflowed``)."""
        v = np.ascontiguousarray(values, dtype=np.int64)
        if v.ndim != 1 or v.size == 0 or (v < 0).any():
            raise InvalidParameterError(
                "The 'values' parameter of CounterArray must be a non-empty 1-D array of "
                "non-negative integers."
            )
        out = cls(v.size, width)
        over = v > out.max_value
        KC.counters_pack(np.minimum(v, out.max_value), out.data, out.width)
        out.overflowed = bool(over.any())
        return out

    def increment_many(self, idx: Any) -> bool:
        """Add one to each indexed counter (repeats count), saturating.

        Returns True (and sets :attr:`overflowed`) if a counter was already at its maximum.
        Complexity: O(len(idx)).
        """
        a = _as_index(idx, self.size, "CounterArray")
        over = bool(KC.counters_inc_idx(self.data, self.width, self.max_value, a))
        self.overflowed |= over
        return over

    def decrement_many(self, idx: Any) -> None:
        """Subtract one from each indexed counter, all or nothing.

        Saturated counters stay saturated. Raises InvalidParameterError, with the array
        unchanged, if a counter would go below zero. Complexity: O(len(idx)).
        """
        a = _as_index(idx, self.size, "CounterArray")
        bad = int(KC.counters_dec_idx(self.data, self.width, self.max_value, a))
        if bad >= 0:
            raise InvalidParameterError(
                f"Counter {int(a[bad])} of CounterArray is zero and cannot be decremented; "
                "nothing was changed."
            )

    def nonzero_count(self) -> int:
        """Number of non-zero counters (numpy alone: no numba start-up). Complexity: O(size)."""
        d = self.data
        if self.width == 4:  # two per byte; the padding nibble of an odd size is zero
            return int(np.count_nonzero(d & np.uint8(0x0F)) + np.count_nonzero(d >> np.uint8(4)))
        return int(np.count_nonzero(d[: self.size]))

    def fold(self, factor: int) -> CounterArray:
        """Sum-fold by a divisor of the size (saturating): c'_j = sum_t c_(j + t*size/factor)."""
        f = _check_divisor(factor, self.size, "CounterArray")
        out = CounterArray(self.size // f, self.width)
        over = KC.counters_fold(self.data, self.width, self.max_value, self.size, f, out.data)
        out.overflowed = self.overflowed or bool(over)
        return out

    def copy(self) -> CounterArray:
        out = CounterArray(self.size, self.width, aligned_copy(self.data))
        out.overflowed = self.overflowed
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CounterArray):
            return NotImplemented
        return (
            self.size == other.size
            and self.width == other.width
            and bool(np.array_equal(self.data, other.data))
        )

    __hash__ = None  # type: ignore[assignment]

    def to_bytes(self) -> bytes:
        """Little-endian bytes of the packed storage."""
        return self.data.astype(self.data.dtype.newbyteorder("<"), copy=False).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes, size: int, width: int) -> CounterArray:
        """Inverse of :meth:`to_bytes`; FormatError on a wrong length."""
        size = check_int(size, "size", "CounterArray", lo=1)
        width = check_choice(width, "width", "CounterArray", (4, 8, 16, 32))
        dtype = np.dtype(_DTYPES[width])
        need = ((size + 1) // 2 if width == 4 else size) * dtype.itemsize
        if len(data) != need:  # checked before anything of the declared size is allocated
            raise FormatError(f"CounterArray of {size} x {width}-bit counters needs {need} bytes, got {len(data)}")
        arr = aligned_copy(np.frombuffer(data, dtype=dtype.newbyteorder("<")).astype(dtype, copy=False))
        if width == 4 and size % 2 and arr[-1] >> 4:
            raise FormatError("CounterArray payload has a non-zero padding nibble")
        return cls(size, width, arr)
