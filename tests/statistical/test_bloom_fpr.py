"""Measured false positive rates against the model (doc 000 Eqs. 1-2), seeded.

Two checks per grid point, each with a binomial tolerance:

* the number of set bits against Eq. (1): E[X] = m (1 - p), sd <= sqrt(m p (1 - p));
* the measured FPR of >= 1e5 never-inserted keys against ``predicted_fpr()`` with the sd of
  :func:`bloomkit.theory.fpr_sd` (binomial sd of the probes combined with the
  filter-to-filter spread of the fill ratio), and against ``fill_ratio() ** k`` (the rate given
  this filter) with the plain binomial sd.

"No false negatives" is asserted exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from bloomkit import BloomFilter, CountingBloomFilter, theory
from bloomkit.theory import fpr_sd

Z = 5.0


def _run(cls, m, k, load, probes, seed):
    rng = np.random.default_rng(seed)
    n = int(load * m)
    keys = rng.choice(2**62, size=n + probes, replace=False)
    inserted, absent = keys[:n], keys[n:]
    bf = cls(num_bits=m, num_hashes=k, seed=int(rng.integers(2**63)))
    bf.add_many(inserted)
    assert bf.contains_many(inserted).all()  # exactly no false negatives
    measured = bf.contains_many(absent).mean()
    p0 = theory.zero_bit_probability(n, m, k)
    set_bits = bf.fill_ratio() * m
    assert abs(set_bits - m * (1 - p0)) <= Z * np.sqrt(m * p0 * (1 - p0)) + 1
    pred = bf.predicted_fpr(num_keys=n)
    assert abs(measured - pred) <= Z * fpr_sd(n, m, k, probes)
    cond = bf.fill_ratio() ** k
    assert abs(measured - cond) <= Z * np.sqrt(cond * (1 - cond) / probes) + 1.0 / probes
    return measured, pred


GRID = [(m, k, load) for m in (1 << 14, 100_003) for k in (1, 3, 7) for load in (0.05, 0.15)]


@pytest.mark.parametrize(("m", "k", "load"), GRID)
def test_bloom_fpr_matches_model(m, k, load):
    _run(BloomFilter, m, k, load, 100_000, seed=m * 31 + k * 7 + int(load * 100))


@pytest.mark.parametrize(("m", "k", "load"), [(30_011, 4, 0.1), (1 << 15, 6, 0.12)])
def test_counting_fpr_matches_model(m, k, load):
    _run(CountingBloomFilter, m, k, load, 100_000, seed=m + k)


def test_string_keys_fpr_matches_model():
    rng = np.random.default_rng(3)
    m, k, n, probes = 50_000, 5, 5_000, 100_000
    ids = rng.choice(10**9, size=n + probes, replace=False)
    keys = [f"user:{i}" for i in ids]
    bf = BloomFilter(num_bits=m, num_hashes=k, seed=1)
    bf.add_many(keys[:n])
    assert bf.contains_many(keys[:n]).all()
    measured = bf.contains_many(keys[n:]).mean()
    assert abs(measured - bf.predicted_fpr(num_keys=n)) <= Z * fpr_sd(n, m, k, probes)


def test_estimated_count_matches_inserted():
    m, k, n = 200_000, 5, 20_000
    bf = BloomFilter(num_bits=m, num_hashes=k)
    bf.add_many(np.arange(n))
    assert abs(bf.estimated_count() - n) < 0.02 * n


@pytest.mark.slow
@pytest.mark.parametrize("k", range(1, 13))
@pytest.mark.parametrize("load", [0.02, 0.08, 0.2])
def test_bloom_fpr_dense_grid(k, load):
    _run(BloomFilter, 1 << 20, k, load, 1_000_000, seed=k * 1000 + int(load * 100))
