"""Space and false positive models of the static filters, pure functions (DESIGN convention 3).

* Binary fuse filters (Graf and Lemire, "Binary Fuse Filters: Fast and Smaller Than Xor
  Filters", ACM JEA 27, 2022): M cells of r bits in (S + arity - 1) segments of L cells; the
  sizing functions are those of the authors' reference code (FastFilter/xor_singleheader,
  ``binary_fuse_calculate_segment_length`` / ``binary_fuse_calculate_size_factor``), which the
  paper's experiments use: size factor ``max(1.125, 0.875 + 0.25 ln(10^6) / ln n)`` (3-wise) and
  ``max(1.075, 0.77 + 0.305 ln(6 10^5) / ln n)`` (4-wise), segment length
  ``2^floor(ln n / ln 3.33 + 2.25)`` / ``2^floor(ln n / ln 2.91 - 0.5)``.
* Ribbon (Dillinger and Walzer, "Ribbon filter: practically smaller than Bloom and Xor", 2021;
  Dillinger, Huebschle-Schneider, Sanders, Walzer, "Fast Succinct Retrieval and Approximate
  Membership using Ribbon", SEA 2022): m = (1 + eps) n slots of c bits, w = 64.
* Both: an absent key's r-bit check value is uniform, so its false positive rate is 2^-r
  (retrieval: (2^V - 1) / 2^c, the share of the answers that are a value).

The information bound of a filter of rate e is log2(1/e) bits per key (retrieval: V + log2(1/e)).
"""

from __future__ import annotations

import math

from .._validation import Int, Options, Real

__all__ = [
    "fuse_bits_per_key",
    "fuse_layout",
    "fuse_segment_length",
    "fuse_size_factor",
    "ribbon_slots",
    "static_fpr",
]

_N = Int(0, 1 << 48)
_ARITY = Options(3, 4)
_BITS = Int(1, 64)
_VALUE_BITS = Int(0, 64)
_OVERHEAD = Real(0.0, 10.0)

MAX_SEGMENT = {3: 1 << 18, 4: 1 << 16}
"""Largest segment length L: its offset bits come from the low bits of one 64-bit hash (3 x 18 or
4 x 16 bits; the reference code caps 3-wise at 2^18 too)."""


def fuse_segment_length(n: int, arity: int) -> int:
    """L, the segment length of a binary fuse filter of ``n`` keys (a power of two).

    >>> fuse_segment_length(10**6, 3), fuse_segment_length(10**6, 4)
    (8192, 4096)
    """
    n = _N(n, "n", "fuse_segment_length")
    arity = _ARITY(arity, "arity", "fuse_segment_length")
    if n <= 1:
        return 4
    base, off = (3.33, 2.25) if arity == 3 else (2.91, -0.5)
    return min(MAX_SEGMENT[arity], 1 << max(1, int(math.floor(math.log(n) / math.log(base) + off))))


def fuse_size_factor(n: int, arity: int) -> float:
    """M / n before rounding to whole segments (Graf and Lemire 2022; see the module docstring).

    >>> round(fuse_size_factor(10**6, 3), 4), round(fuse_size_factor(10**7, 4), 4)
    (1.125, 1.075)
    """
    n = _N(n, "n", "fuse_size_factor")
    arity = _ARITY(arity, "arity", "fuse_size_factor")
    if n <= 1:
        return 0.0
    if arity == 3:
        return max(1.125, 0.875 + 0.25 * math.log(1e6) / math.log(n))
    return max(1.075, 0.77 + 0.305 * math.log(6e5) / math.log(n))


def fuse_layout(n: int, arity: int) -> tuple[int, int, int]:
    """(L, S, M): segment length, segment count and cells of a filter of ``n`` keys, M = (S + arity
    - 1) L (xor_singleheader's ``binary_fuse8_allocate``).

    >>> fuse_layout(10**6, 4)
    (4096, 260, 1077248)
    """
    n = _N(n, "n", "fuse_layout")
    seg = fuse_segment_length(n, arity)
    cap = round(n * fuse_size_factor(n, arity)) if n > 1 else 0
    init = max(0, (cap + seg - 1) // seg - (arity - 1))
    cells = (init + arity - 1) * seg
    count = (cells + seg - 1) // seg
    count = 1 if count <= arity - 1 else count - (arity - 1)
    return seg, count, (count + arity - 1) * seg


def fuse_bits_per_key(n: int, arity: int, fingerprint_bits: int) -> float:
    """r M / n: the space of a binary fuse filter per key; ``/ r`` is its overhead over the bound.

    >>> round(fuse_bits_per_key(10**6, 3, 8), 3), round(fuse_bits_per_key(10**6, 4, 8), 3)
    (9.044, 8.618)
    """
    fingerprint_bits = _BITS(fingerprint_bits, "fingerprint_bits", "fuse_bits_per_key")
    return fingerprint_bits * fuse_layout(n, arity)[2] / max(1, n)


def ribbon_slots(n: int, overhead: float) -> int:
    """m, the slots of a standard ribbon of width 64 for ``n`` keys: ``ceil((1 + eps) n)`` rounded
    up to a whole number of 64-slot blocks (at least one block: every key's band of 64 slots
    fits).

    >>> ribbon_slots(1000, 0.05)
    1088
    """
    n = _N(n, "n", "ribbon_slots")
    overhead = _OVERHEAD(overhead, "overhead", "ribbon_slots")
    return max(64, 64 * math.ceil(math.ceil((1.0 + overhead) * n) / 64))


def static_fpr(check_bits: int, value_bits: int = 0) -> float:
    """An absent key's false positive rate: (2^V - 1)/2^c for retrieval of V-bit values in
    c-bit cells, 2^-r for a filter (V = 0) of r-bit fingerprints.

    >>> static_fpr(8), static_fpr(32, 16) == (2**16 - 1) / 2**32
    (0.00390625, True)
    """
    check_bits = _BITS(check_bits, "check_bits", "static_fpr")
    value_bits = Int(0, check_bits)(value_bits, "value_bits", "static_fpr")
    if value_bits == 0:
        return 2.0**-check_bits
    return ((1 << value_bits) - 1) / float(1 << check_bits)
