"""The parameters of document 002 as constraint objects, shared by MLBF, MLBF*, LSBF, MVBF and
the loader (issue 11: a file can never hold a value the constructor would refuse).

Each constraint is called ``C(value, name, owner)`` and returns the normalised value or raises
InvalidParameterError in the standard form (:mod:`bloomkit._validation`). Relations between
parameters (m = 2^B >= 2^S, k L functions) are checked by :func:`check_levels_fit` and by the
structures' loaders.

>>> NUM_BITS(1 << 20, "num_bits", "MLBF")
1048576
>>> VERIFY_BITS(3000, "verify_bits", "MLBF")
Traceback (most recent call last):
...
bloomkit.errors.InvalidParameterError: The 'verify_bits' parameter of MLBF must be a power of two in [2^1, 2^40] (the levels align only for m = 2^B, Theorem 4). Got 3000 instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import Bool, Constraint, Int, Real, check_int, param_error
from ..errors import InvalidParameterError

__all__ = [
    "AND_WIDTH",
    "DIM",
    "DOMAIN_MARGIN",
    "FINITE",
    "NUM_BITS",
    "NUM_FUNCTIONS",
    "NUM_LEVELS",
    "OR_COUNT",
    "RANDOM_OFFSET",
    "VERIFY_BITS",
    "VERIFY_HASHES",
    "WIDTH",
    "PowerOfTwo",
    "check_levels_fit",
]

FINITE = float(np.finfo(np.float64).max)
"""Bound of saved float arrays (the loader then refuses NaN and infinities)."""


class PowerOfTwo(Constraint):
    """An integer 2^B with ``lo_exp <= B <= hi_exp`` (m = 2^B: Theorem 4's alignment of the levels
    holds for loc = bucket & (m - 1), not for a general modulus; ERRATA 002)."""

    def __init__(self, lo_exp: int, hi_exp: int) -> None:
        self.lo_exp, self.hi_exp = lo_exp, hi_exp
        self.allowed = (f"a power of two in [2^{lo_exp}, 2^{hi_exp}] (the levels align only for m = 2^B, "
                        "Theorem 4)")

    def __call__(self, value: Any, name: str, owner: str) -> int:
        try:
            v = check_int(value, name, owner, lo=1)
        except InvalidParameterError:
            raise param_error(name, owner, self.allowed, value) from None
        if v & (v - 1) or not self.lo_exp <= v.bit_length() - 1 <= self.hi_exp:
            raise param_error(name, owner, self.allowed, value)
        return v


DIM = Int(1, 1 << 20)
"""d, the dimension of the vectors."""
WIDTH = Real(0, None, lo_open=True)
"""w, the bucket width of level 0."""
NUM_LEVELS = Int(1, 32)
"""S, the number of granularities (levels 0..S-1)."""
AND_WIDTH = Int(1, 63)
"""k, LSH functions per AND-construction (the k bits of one level of the MVBF's suffix slice
share a 64-bit word)."""
OR_COUNT = Int(1, 4096)
"""L, AND-constructions in the OR-construction."""
NUM_FUNCTIONS = Int(1, 1 << 24)
"""The number of LSH functions (k L in a filter: the loader checks that relation)."""
NUM_BITS = PowerOfTwo(1, 62)
"""m = 2^B, bits of the BMLBF / LSH array (the MLBF*'s virtual address space)."""
VERIFY_BITS = PowerOfTwo(1, 40)
"""m' = 2^B', bits of the MVBF / verification filter."""
VERIFY_HASHES = Int(1, 64)
"""k', hashes of the MVBF: address i takes suffix bit i of one 64-bit hash per level, so k' <= 64
(a structural limit, below bloomkit's MAX_HASHES)."""
DOMAIN_MARGIN = Real(0, None)
"""Fraction of the data span added on each side when the domain is fitted."""
RANDOM_OFFSET = Bool()
"""Whether the LSH family has the random offsets b of Formula 1 (LSBF) or not (H^(a), MLBF)."""


def check_levels_fit(bits: int, num_levels: int, name: str, owner: str) -> int:
    """``bits`` (a power of two) must hold the S levels: bits >= 2^S (VLBF / VVBF S-1 keeps at
    least two locations). Returns ``bits``.

    >>> check_levels_fit(1 << 10, 3, "num_bits", "MLBF")
    1024
    """
    if bits < 1 << num_levels:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be at least 2^num_levels = {1 << num_levels} "
            f"(every level needs two locations). Got {bits} instead."
        )
    return bits
