"""Parameter validation with uniform messages (after scikit-learn's parameter constraints).

Every public constructor validates its parameters once through these helpers, so that
messages read the same everywhere::

    The 'fpr' parameter of BloomFilter must be in (0, 1). Got 1.5 instead.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable
from typing import Any, TypeVar, cast

import numpy as np

from .errors import InvalidParameterError

__all__ = [
    "CAPACITY", "FPR", "KEY_TYPES", "KEY_TYPE_CHOICES", "MAX_HASHES", "NUM_HASHES", "SEED", "UINT64_MAX",
    "Bool", "Check", "Constraint", "Int", "ListOf", "Optional", "Options", "Real", "Spec", "Str",
    "check_broadcast", "check_bytes", "check_choice", "check_float", "check_hashes", "check_int", "check_params", "check_path",
    "check_reals", "param_error", "safe_repr",
]


class InvariantError(AssertionError):
    """A broken invariant found by a structure's ``_check()``. Raised by an ``if``, never by
    ``assert``: it stays under ``python -O``, where the loader relies on it (a forged file that
    breaks an invariant is a FormatError there too)."""


def param_error(name: str, owner: str, allowed: str, got: Any) -> InvalidParameterError:
    """Build the standard error for parameter ``name`` of ``owner``.

    >>> str(param_error("fpr", "BloomFilter", "in (0, 1)", 1.5))
    "The 'fpr' parameter of BloomFilter must be in (0, 1). Got 1.5 instead."
    """
    return InvalidParameterError(
        f"The {name!r} parameter of {owner} must be {allowed}. Got {safe_repr(got)} instead."
    )


def safe_repr(value: Any, limit: int = 200) -> str:
    """repr() for messages: long reprs cut, huge ints described (repr would raise)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"<an integer of {value.bit_length()} bits>"
    try:
        r = repr(value)
    except Exception:  # a broken __repr__ must not hide the real error
        return f"<{type(value).__name__}>"
    return r if len(r) <= limit else r[:limit] + "..."


def _interval(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool) -> str:
    if lo is None and hi is None:
        return "a finite number"
    if hi is None:
        return f"{'>' if lo_open else '>='} {lo}"
    if lo is None:
        return f"{'<' if hi_open else '<='} {hi}"
    return f"in {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"


def check_int(
    value: Any,
    name: str,
    owner: str,
    lo: int | None = None,
    hi: int | None = None,
) -> int:
    """Return ``value`` as a Python int in [lo, hi]; bools, floats and NaN are refused.

    >>> check_int(3, "num_hashes", "BloomFilter", lo=1)
    3
    """
    allowed = "an integer" + ("" if lo is None and hi is None else " " + _interval(lo, hi, False, False))
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise param_error(name, owner, allowed, value)
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise param_error(name, owner, allowed, value)
    return v


def check_float(
    value: Any,
    name: str,
    owner: str,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """Return ``value`` as a finite float inside the given interval.

    NaN, infinities, bools and non-numbers are refused.

    >>> check_float(0.01, "fpr", "BloomFilter", 0, 1, lo_open=True, hi_open=True)
    0.01
    """
    allowed = _interval(lo, hi, lo_open, hi_open)
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise param_error(name, owner, allowed, value)
    try:
        v = float(value)
    except OverflowError:  # an int beyond the float range
        raise param_error(name, owner, allowed, value) from None
    if not math.isfinite(v):
        raise param_error(name, owner, allowed, value)
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise param_error(name, owner, allowed, value)
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise param_error(name, owner, allowed, value)
    return v


def check_reals(
    value: Any,
    name: str,
    owner: str,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    *,
    finite: bool = True,
) -> np.ndarray:
    """``value``, a real number or an array_like of real numbers, as a float64 array (0-d for
    a scalar): what the vectorised model functions take. Bools, strs, None, complex numbers,
    ragged nesting, NaN (and infinities unless ``finite=False``) and values outside the
    interval are refused, naming the parameter (and the position, in an array).

    >>> check_reals([1, 2.5], "n", "f", lo=0).tolist()
    [1.0, 2.5]
    >>> check_reals(float("nan"), "n", "f")
    Traceback (most recent call last):
    ...
    bloomkit.errors.InvalidParameterError: The 'n' parameter of f must be a real number or an array of real numbers (each a finite number). Got nan instead.
    """
    what = _interval(lo, hi, lo_open, hi_open)
    if what == "a finite number" and not finite:
        what = "not NaN"
    allowed = f"a real number or an array of real numbers (each {what})"
    if isinstance(value, np.ndarray):
        a = value
    elif isinstance(value, bool | np.bool_) or isinstance(value, str | bytes | bytearray) or value is None:
        raise param_error(name, owner, allowed, value)
    elif isinstance(value, numbers.Real):
        try:
            a = np.asarray(float(value))
        except OverflowError:
            raise param_error(name, owner, allowed, value) from None
    elif (isinstance(value, list | tuple) and _plain_numbers(value, 0)) or isinstance(value, range) or (
            hasattr(value, "__array__") and not isinstance(value, list | tuple)):
        # lists of numbers, or array-likes (pandas, pyarrow): never an arbitrary iterable,
        # which numpy would read to its end (an endless one never ends)
        try:
            with np.errstate(all="ignore"):
                a = np.asarray(value)
        except (ValueError, TypeError, OverflowError, RecursionError, MemoryError):
            raise param_error(name, owner, allowed, value) from None
    else:
        raise param_error(name, owner, allowed, value)
    if a.dtype.kind not in "iuf":
        raise param_error(name, owner, allowed, value)
    a = a.astype(np.float64, copy=False)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(a) if finite else np.isnan(a)
        if lo is not None:
            bad |= (a <= lo) if lo_open else (a < lo)
        if hi is not None:
            bad |= (a >= hi) if hi_open else (a > hi)
    if bad.any():
        if a.ndim == 0:
            raise param_error(name, owner, allowed, value)
        pos = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), a.shape)
        at = pos[0] if len(pos) == 1 else tuple(int(p) for p in pos)
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be {allowed}. Got {float(a[pos])!r} at position {at} instead."
        )
    return a


def check_bytes(value: Any, name: str, owner: str) -> bytes:
    """``value`` (bytes, a bytearray or a memoryview) as bytes; anything else refused (an int
    would make ``bytes(n)`` allocate n zero bytes).

    >>> check_bytes(bytearray(b"ab"), "data", "parse")
    b'ab'
    """
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise param_error(name, owner, "bytes (or a bytearray / memoryview)", value)


def check_hashes(value: Any, name: str, owner: str) -> np.ndarray:
    """``value``, a 1-D array_like of unsigned 64-bit hash values (numpy integers, or Python
    ints in [0, 2**64)), as a contiguous uint64 array; signed integers keep their bit pattern.

    >>> check_hashes([1, 2**64 - 1], "hashes", "f").dtype
    dtype('uint64')
    """
    allowed = "a 1-D array of 64-bit hash values (unsigned integers)"
    if isinstance(value, np.ndarray):
        a = value
    elif not (isinstance(value, list | tuple) and all(isinstance(v, numbers.Integral) for v in value)) and not (
            hasattr(value, "__array__") and not isinstance(value, list | tuple)):
        raise param_error(name, owner, allowed, value)  # never an arbitrary iterable (an endless one)
    else:
        try:
            if isinstance(value, list | tuple):  # Python ints: unsigned unless one is negative
                a = np.array(value, dtype=np.int64 if any(v < 0 for v in value) else np.uint64)
            else:
                a = np.asarray(value)
        except (TypeError, ValueError, OverflowError, RecursionError):
            raise param_error(name, owner, allowed, value) from None
    if a.ndim != 1 or a.dtype.kind not in "iu":
        if isinstance(value, np.ndarray):
            raise InvalidParameterError(f"The {name!r} parameter of {owner} must be {allowed}. Got an array of "
                                        f"shape {a.shape} and dtype {a.dtype} instead.")
        raise param_error(name, owner, allowed, value)
    return np.ascontiguousarray(a.astype(np.uint64, copy=False))


def check_path(value: Any, name: str, owner: str, *, hint: str = "") -> str:
    """``value`` as a file system path (str): a str or an ``os.PathLike`` naming one; bytes,
    numbers, arrays, ... refused, and so are an empty path, an embedded NUL and a str the file
    system cannot encode (a lone surrogate). ``hint`` is added to the message for bytes (e.g.
    "use loads() for the contents of a file").

    >>> check_path("f.bkf", "path", "load")
    'f.bkf'
    """
    allowed = "a file path (a str or an os.PathLike)"
    if isinstance(value, str | os.PathLike) and not isinstance(value, bytes):
        try:
            p = os.fspath(value)
        except TypeError:
            p = None
        if isinstance(p, str) and p and "\x00" not in p:
            try:
                os.fsencode(p)
                return p
            except UnicodeEncodeError:
                pass
    if isinstance(value, bytes | bytearray | memoryview) and hint:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be {allowed}. Got {type(value).__name__} instead: {hint}."
        )
    raise param_error(name, owner, allowed, value)


def check_broadcast(owner: str, **arrays: np.ndarray) -> tuple[int, ...]:
    """The broadcast shape of the named arrays (vectorised model arguments), or
    InvalidParameterError naming them and their shapes.

    >>> check_broadcast("f", n=np.zeros(3), m=np.zeros(1))
    (3,)
    """
    try:
        return tuple(np.broadcast_shapes(*(np.shape(a) for a in arrays.values())))
    except ValueError:
        names = ", ".join(repr(n) for n in arrays)
        shapes = ", ".join(f"{n} {np.shape(a)}" for n, a in arrays.items())
        raise InvalidParameterError(
            f"The {names} parameters of {owner} must broadcast together (numpy rules). Got shapes {shapes} instead."
        ) from None


def _plain_numbers(value: list[Any] | tuple[Any, ...], depth: int) -> bool:
    """True if ``value`` nests only lists / tuples / numpy arrays of numbers, at most 32 deep."""
    if depth > 32:
        return False
    for v in value:
        if isinstance(v, list | tuple):
            if not _plain_numbers(v, depth + 1):
                return False
        elif not isinstance(v, numbers.Number | np.ndarray) or isinstance(v, bool | np.bool_):
            return False
    return True


_T = TypeVar("_T")


def check_choice(value: object, name: str, owner: str, choices: Iterable[_T]) -> _T:
    """Return ``value`` if it is one of ``choices``.

    >>> check_choice("basic", "verification", "ParallelBloomFilter", ("basic", "attenuated"))
    'basic'
    """
    options = tuple(choices)
    try:
        ok = bool(value in options)
    except (TypeError, ValueError):  # unhashable, or an array whose == is elementwise
        ok = False
    if not ok:
        raise param_error(name, owner, "one of " + ", ".join(repr(c) for c in options), value)
    return cast(_T, value)  # equal to one of the choices


# ---------------------------------------------------------------------------------------------
# Declarative parameter specs (after scikit-learn's ``_parameter_constraints``).
#
# A structure declares ``_PARAMS = {"num_bits": Int(1, MAX_BITS), "fpr": Real(0, 1, ...), ...}``:
# the parameters it saves. ``__init__`` checks each argument with the same constraint objects
# (``_PARAMS["fpr"](fpr, "fpr", owner)``) and the loader checks a file's whole parameter block
# with :func:`check_params` (bloomkit._format), so a file can never hold a value the constructor
# would refuse.

INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


class Constraint:
    """One allowed set of values. ``c(value, name, owner)`` returns the value, normalised (a
    Python int / float / bool / str / list), or raises InvalidParameterError in the standard
    form. ``c.allowed`` describes the set for messages and docs."""

    allowed = "any value"

    def __call__(self, value: Any, name: str, owner: str) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.allowed}>"


class Int(Constraint):
    """An integer in [lo, hi] (bools and floats refused); ``hi`` defaults to 2**63 - 1."""

    def __init__(self, lo: int | None = None, hi: int | None = INT64_MAX) -> None:
        self.lo, self.hi = lo, hi
        self.allowed = "an integer" + ("" if lo is None and hi is None else " " + _interval(lo, hi, False, False))

    def __call__(self, value: Any, name: str, owner: str) -> int:
        return check_int(value, name, owner, self.lo, self.hi)


class Real(Constraint):
    """A finite real number in an interval (NaN, infinities, bools and non-numbers refused)."""

    def __init__(self, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
                 hi_open: bool = False) -> None:
        self.lo, self.hi, self.lo_open, self.hi_open = lo, hi, lo_open, hi_open
        self.allowed = _interval(lo, hi, lo_open, hi_open)

    def __call__(self, value: Any, name: str, owner: str) -> float:
        return check_float(value, name, owner, self.lo, self.hi, self.lo_open, self.hi_open)


class Options(Constraint):
    """One of a fixed set of values (compared with ``==`` and the same type: ``True`` is not 1)."""

    def __init__(self, *choices: Any) -> None:
        self.choices = choices
        self.allowed = "one of " + ", ".join(repr(c) for c in choices)

    def __call__(self, value: Any, name: str, owner: str) -> Any:
        for c in self.choices:
            if type(value) is type(c) and value == c:
                return c
            if isinstance(c, int) and not isinstance(c, bool) and isinstance(value, numbers.Integral) \
                    and not isinstance(value, bool | np.bool_) and int(value) == c:
                return c
        raise param_error(name, owner, self.allowed, value)


class Bool(Constraint):
    """``True`` or ``False`` (numpy bools too); ``"x"``, 0 and 1 are refused."""

    allowed = "a bool"

    def __call__(self, value: Any, name: str, owner: str) -> bool:
        if isinstance(value, bool | np.bool_):
            return bool(value)
        raise param_error(name, owner, self.allowed, value)


class Str(Constraint):
    """A str of at most ``max_len`` characters (at least ``min_len``)."""

    def __init__(self, min_len: int = 0, max_len: int = 1 << 16) -> None:
        self.min_len, self.max_len = min_len, max_len
        self.allowed = f"a str of {min_len} to {max_len} characters"

    def __call__(self, value: Any, name: str, owner: str) -> str:
        if not isinstance(value, str) or not self.min_len <= len(value) <= self.max_len:
            raise param_error(name, owner, self.allowed, value)
        return value


class Optional(Constraint):
    """``None`` or a value of ``inner``."""

    def __init__(self, inner: Constraint) -> None:
        self.inner = inner
        self.allowed = f"None or {inner.allowed}"

    def __call__(self, value: Any, name: str, owner: str) -> Any:
        if value is None:
            return None
        try:
            return self.inner(value, name, owner)
        except InvalidParameterError:
            raise param_error(name, owner, self.allowed, value) from None


class ListOf(Constraint):
    """A list (or tuple) of ``min_len`` .. ``max_len`` items of ``inner``; returns a list."""

    def __init__(self, inner: Constraint, min_len: int = 0, max_len: int = 1 << 20, *,
                 unique: bool = False) -> None:
        self.inner, self.min_len, self.max_len, self.unique = inner, min_len, max_len, unique
        self.allowed = f"a list of {min_len} to {max_len}{' distinct' if unique else ''} items, each {inner.allowed}"

    def __call__(self, value: Any, name: str, owner: str) -> list[Any]:
        if not isinstance(value, list | tuple) or not self.min_len <= len(value) <= self.max_len:
            raise param_error(name, owner, self.allowed, value)
        out = [self.inner(v, f"{name}[{i}]", owner) for i, v in enumerate(value)]
        if self.unique and len({repr(v) for v in out}) != len(out):
            raise param_error(name, owner, self.allowed, value)
        return out


class Check(Constraint):
    """A constraint given by a function ``fn(value, name, owner) -> value`` (raising
    InvalidParameterError), for nested parameters a structure validates itself (a schema)."""

    def __init__(self, fn: Any, allowed: str) -> None:
        self.fn, self.allowed = fn, allowed

    def __call__(self, value: Any, name: str, owner: str) -> Any:
        return self.fn(value, name, owner)


Spec = dict[str, Constraint]


def check_params(spec: Spec, params: Any, owner: str) -> dict[str, Any]:
    """Validate a whole parameter mapping against ``spec``: every declared parameter present,
    nothing else, each value allowed. Returns the normalised values; raises
    InvalidParameterError naming the first bad field (the loader turns it into FormatError).

    >>> check_params({"k": Int(1, 8)}, {"k": 3}, "Thing")
    {'k': 3}
    """
    if not isinstance(params, dict):
        raise InvalidParameterError(f"The parameters of {owner} must be a mapping. Got {type(params).__name__} instead.")
    unknown = sorted(set(params) - set(spec), key=str)
    if unknown:
        raise InvalidParameterError(f"{owner} has no parameter {unknown[0]!r} (known: {', '.join(sorted(spec))}).")
    missing = [k for k in spec if k not in params]
    if missing:
        raise InvalidParameterError(f"The {missing[0]!r} parameter of {owner} is missing.")
    return {k: c(params[k], k, owner) for k, c in spec.items()}


# the shared vocabulary (DESIGN convention 1): one constraint per concept, used by every structure
CAPACITY = Int(1)
"""n, the number of keys a structure is sized for."""
FPR = Real(0, 1, lo_open=True, hi_open=True)
"""A target false positive rate."""
SEED = Int(0, UINT64_MAX)
"""A hash seed."""
MAX_HASHES = 1024
"""Largest number of probes (k) any structure accepts."""
NUM_HASHES = Int(1, MAX_HASHES)
"""k, probes per key."""
KEY_TYPE_CHOICES = ("bool", "bytes", "float", "int", "str", "tuple", "unknown")
KEY_TYPES = ListOf(Options(*KEY_TYPE_CHOICES), 0, len(KEY_TYPE_CHOICES), unique=True)
"""The saved ``key_types`` of a structure (bloomkit._engine.hashing.key_type_names)."""
