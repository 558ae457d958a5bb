"""Folding and unfolding Bloom filters (doc 003: Sailhan & Stehr, GreenCom 2012).

* :class:`FoldableBloomFilter`, :class:`FoldableCountingBloomFilter`: filters created at a
  planned maximal size ``m_1`` that fold to any divisor (Eq. 3) and unfold back from the
  retained ``B_1``; compact wire encoding (:meth:`~FoldableBloomFilter.to_wire`,
  :func:`from_wire`) and a :class:`MultiTransmissionReceiver` for the "entropy" policy.
* :mod:`bloomkit.folding.numbers`: divisor counts (Eq. 8), highly / largely composite numbers
  (Eqs. 9-10, Table III), smooth numbers by the sieve of Section IV-B, the chooser of ``m_1``.
* :mod:`bloomkit.folding.planner`: admissible sizes (corrected Eq. 14) and next-size policies.
"""

from __future__ import annotations

from .foldable import (
    FoldableBloomFilter,
    FoldableCountingBloomFilter,
    MultiTransmissionReceiver,
    from_wire,
)
from .numbers import (
    FoldabilityReport,
    choose_initial_size,
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
    SizeInterval,
    admissible_bounds,
    admissible_sizes,
    aggregate_fpr,
    next_size,
    paper_eq14_bounds,
    size_for_fpr,
)

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
    "factorize",
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
