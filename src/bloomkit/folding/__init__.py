"""Folding and unfolding Bloom filters (doc 003: Sailhan & Stehr, GreenCom 2012).

* :mod:`bloomkit.folding.foldable`: :class:`FoldableBloomFilter`,
  :class:`FoldableCountingBloomFilter`, filters created at a planned maximal size ``m_1`` that
  fold to any divisor (Eq. 3) and unfold back from the retained ``B_1``
  (:mod:`bloomkit.folding.base`: what both share).
* :mod:`bloomkit.folding.wire`: the compact wire format (:meth:`~FoldableBloomFilter.to_wire`).
* :mod:`bloomkit.folding.receiver`: :func:`from_wire` and the :class:`MultiTransmissionReceiver`
  of the "entropy" policy.
* :mod:`bloomkit.folding.numbers`: divisor counts (Eq. 8), highly / largely composite numbers
  (Eqs. 9-10, Table III), smooth numbers by the sieve of Section IV-B, the chooser of ``m_1``.
* :mod:`bloomkit.folding.planner`: the exact rate (corrected Eq. 4), admissible sizes
  (corrected Eq. 14) and next-size policies.
"""

from __future__ import annotations

from .foldable import FoldableBloomFilter, FoldableCountingBloomFilter
from .numbers import (
    dickman_rho,
    divisor_count,
    divisor_counts,
    divisors,
    factorize,
    highly_composite,
    is_smooth,
    largely_composite,
    primes_up_to,
    smooth_numbers,
    superior_highly_composite,
)
from .planner import (
    POLICIES,
    FoldabilityReport,
    SizeInterval,
    admissible_bounds,
    admissible_sizes,
    aggregate_fpr,
    choose_initial_size,
    exact_fpr,
    foldable_size,
    next_size,
    paper_eq14_bounds,
    size_for_fpr,
)
from .receiver import MultiTransmissionReceiver, from_wire

__all__ = [
    "POLICIES",
    "FoldabilityReport",
    "FoldableBloomFilter",
    "FoldableCountingBloomFilter",
    "MultiTransmissionReceiver",
    "SizeInterval",
    "admissible_bounds",
    "aggregate_fpr",
    "admissible_sizes",
    "choose_initial_size",
    "dickman_rho",
    "divisor_count",
    "divisor_counts",
    "divisors",
    "exact_fpr",
    "factorize",
    "foldable_size",
    "from_wire",
    "highly_composite",
    "is_smooth",
    "largely_composite",
    "next_size",
    "paper_eq14_bounds",
    "primes_up_to",
    "size_for_fpr",
    "smooth_numbers",
    "superior_highly_composite",
]
