"""Deliberately faulty public calls: tests/test_fuzz.py checks that the fuzzer (tests/_fuzz.py)
reports each kind of problem it exists to find (a fuzzer that reports nothing proves nothing)."""

from __future__ import annotations

import time

__all__ = ["bomb", "clean", "hang", "unclear"]


def hang(n: int) -> None:
    """Never returns."""
    while True:
        time.sleep(0.01)


def bomb(n: int) -> bytes:
    """Allocates 8 GiB for any argument."""
    return bytes(8 << 30)


def unclear(n: int) -> None:
    """Fails with an error that names no parameter."""
    raise AttributeError("'NoneType' object has no attribute 'x'")


def clean(n: int) -> int:
    """Fails with a message naming its parameter, or returns."""
    if not isinstance(n, int):
        raise TypeError(f"The 'n' parameter must be an int. Got {type(n).__name__} instead.")
    return n
