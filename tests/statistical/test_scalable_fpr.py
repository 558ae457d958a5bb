"""The growing filter keeps its promise (Almeida et al. 2007; issue 12 target), seeded.

After 1000x growth (initial capacity 1000 -> 10^6 keys, fpr 0.01) the measured false positive
rate of >= 1e5 keys never inserted is below the requested fpr with 5-sigma confidence (the
upper end of the Wilson interval), it matches the compound rate of the slices' fills
``1 - prod(1 - fill_i^k_i)`` within the binomial tolerance, and the filter uses at most 1.8x
the bits of a static Bloom filter sized for the final count. No false negatives, exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from bloomkit import BloomFilter, ScalableBloomFilter
from bloomkit.theory import binomial_sd, wilson_interval

Z = 5.0


def _run(n0: int, fpr: float, growth: int, tightening: float, n: int, probes: int, seed: int,
         strings: bool = False) -> tuple[ScalableBloomFilter, int]:
    """Insert n keys in 7 batches (growth crosses their boundaries), probe ``probes`` others;
    assert no false negatives, a measured rate not significantly above ``fpr`` and equal to
    the compound rate of the fills within the binomial tolerance. Returns (filter, hits)."""
    rng = np.random.default_rng(seed)
    keys = rng.choice(2**62, size=n + probes, replace=False)
    if strings:
        keys = np.array([f"user:{k}" for k in keys])
    inserted, absent = keys[:n], keys[n:]
    f = ScalableBloomFilter(n0, fpr, growth=growth, tightening=tightening, seed=int(rng.integers(2**63)))
    for part in np.array_split(inserted, 7):
        f.add_many(part)
    assert f.contains_many(inserted).all()  # exactly no false negatives
    hits = int(f.contains_many(absent).sum())
    measured = hits / probes
    assert measured <= fpr + Z * binomial_sd(fpr, probes), f"measured {measured} is above {fpr}"
    pred = f.predicted_fpr()
    assert abs(measured - pred) <= Z * binomial_sd(pred, probes) + 1.0 / probes, (measured, pred)
    return f, hits


def test_1000x_growth_stays_below_the_requested_rate_within_the_space_target():
    n, probes = 1_000_000, 200_000
    f, hits = _run(1000, 0.01, 2, 0.9, n, probes, seed=12)
    assert wilson_interval(hits, probes, z=Z)[1] < 0.01  # below the target with 5-sigma confidence
    assert f.num_slices == 10
    static = BloomFilter.for_requirements(n, 0.01).num_bits
    assert f.size_in_bits <= 1.8 * static, f.size_in_bits / static


@pytest.mark.parametrize(("n0", "growth", "tightening", "n", "strings"), [
    (100, 4, 0.5, 100_000, False),
    (50, 2, 0.8, 100_000, True),
    (10, 2, 0.5, 20_000, False),
    (1000, 3, 0.7, 300_000, False),
])
def test_growth_and_tightening_variants(n0, growth, tightening, n, strings):
    _run(n0, 0.02, growth, tightening, n, 100_000, seed=n0 + growth, strings=strings)


def test_duplicates_do_not_raise_the_rate():
    """A stream of 10^6 adds of 2*10^5 distinct keys: the filter sizes for the distinct keys."""
    rng = np.random.default_rng(4)
    distinct = rng.choice(2**62, size=300_000, replace=False)
    stream = distinct[rng.integers(0, 200_000, 1_000_000)]
    f = ScalableBloomFilter(1000, 0.01, seed=3)
    f.add_many(stream)
    assert f.capacity <= 2 * 200_000 and len(f) <= 200_000
    hits = int(f.contains_many(distinct[200_000:]).sum())
    assert wilson_interval(hits, 100_000, z=Z)[1] < 0.01


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("growth", "tightening"), [(2, 0.9), (2, 0.5), (4, 0.9), (4, 0.5)])
def test_1000x_growth_many_probes(seed, growth, tightening):
    _run(1000, 0.01, growth, tightening, 1_000_000, 1_000_000, seed=100 + seed)
