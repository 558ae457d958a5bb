"""Shared test helper: every truncation and every flipped byte of a serialized blob is refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bloomkit.errors import FormatError


def assert_damage_detected(
    data: bytes,
    decode: Callable[[bytes], Any],
    flip: int = 0xFF,
    *,
    cut_step: int = 1,
    decode_flipped: Callable[[bytes], Any] | None = None,
) -> None:
    """``decode`` raises FormatError on every prefix (every ``cut_step``-th) of ``data`` and
    ``decode_flipped`` (default ``decode``) on ``data`` with any one byte XORed with ``flip``."""
    for cut in range(0, len(data), cut_step):
        with pytest.raises(FormatError):
            decode(data[:cut])
    for i in range(len(data)):
        bad = bytearray(data)
        bad[i] ^= flip
        with pytest.raises(FormatError):
            (decode_flipped or decode)(bytes(bad))
