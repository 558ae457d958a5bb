"""Parameter validation with uniform messages (after scikit-learn's parameter constraints).

Every public constructor validates its parameters once through these helpers, so that
messages read the same everywhere::

    The 'fpr' parameter of BloomFilter must be in (0, 1). Got 1.5 instead.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any, TypeVar, cast

import numpy as np

from .errors import InvalidParameterError

__all__ = ["check_choice", "check_float", "check_int", "param_error"]


def param_error(name: str, owner: str, allowed: str, got: Any) -> InvalidParameterError:
    """Build the standard error for parameter ``name`` of ``owner``.

    >>> str(param_error("fpr", "BloomFilter", "in (0, 1)", 1.5))
    "The 'fpr' parameter of BloomFilter must be in (0, 1). Got 1.5 instead."
    """
    return InvalidParameterError(
        f"The {name!r} parameter of {owner} must be {allowed}. Got {got!r} instead."
    )


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
    v = float(value)
    if not math.isfinite(v):
        raise param_error(name, owner, allowed, value)
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise param_error(name, owner, allowed, value)
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise param_error(name, owner, allowed, value)
    return v


_T = TypeVar("_T")


def check_choice(value: object, name: str, owner: str, choices: Iterable[_T]) -> _T:
    """Return ``value`` if it is one of ``choices``.

    >>> check_choice("basic", "verification", "ParallelBloomFilter", ("basic", "attenuated"))
    'basic'
    """
    options = tuple(choices)
    try:
        ok = value in options
    except TypeError:
        ok = False
    if not ok:
        raise param_error(name, owner, "one of " + ", ".join(repr(c) for c in options), value)
    return cast(_T, value)  # equal to one of the choices
