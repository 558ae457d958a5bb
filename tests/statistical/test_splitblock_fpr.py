"""Measured false positive rates of SplitBlockBloomFilter against its model, seeded.

The model (:func:`bloomkit.splitblock.split_block_fpr`, after Putze, Sanders, Singler 2007,
Section 3) averages a split block's rate ``(1 - (1 - 1/w)^j)^8`` over the Binomial(n, 1/B)
block loads j. Per grid point, three checks with binomial tolerances:

* measured rate of never-inserted keys vs the filter's own rate given its bits
  (``predicted_fpr()``, exact for a uniform hash): the binomial sd of the probes;
* measured rate vs the model: :func:`~bloomkit.splitblock.split_block_fpr_sd` (probes and the
  filter-to-filter spread of its rate);
* sizing: a filter built for ``capacity, fpr`` meets ``fpr`` within that band.

Both layouts: native (512-bit blocks, w = 64, block h mod B) and Parquet (256-bit, w = 32,
multiply-shift block, salted bits of XXH64 of the plain value). No false negatives, exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from bloomkit import SplitBlockBloomFilter
from bloomkit.splitblock import split_block_fpr, split_block_fpr_sd

Z = 5.0


def _filter(mode: str, B: int, seed: int) -> SplitBlockBloomFilter:
    if mode == "native":
        return SplitBlockBloomFilter(num_blocks=B, seed=seed)
    return SplitBlockBloomFilter.for_parquet(physical_type="INT64", num_bytes=32 * B)


def _run(mode: str, B: int, n: int, probes: int, seed: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    keys = rng.choice(2**62, size=n + probes, replace=False).astype(np.int64)
    inserted, absent = keys[:n], keys[n:]
    f = _filter(mode, B, int(rng.integers(2**63)))
    f.add_many(inserted)
    assert f.contains_many(inserted).all()  # exactly no false negatives
    measured = float(f.contains_many(absent).mean())
    given_bits = f.predicted_fpr()
    lane_bits = 64 if mode == "native" else 32
    model = split_block_fpr(n, B, lane_bits)
    assert f.predicted_fpr(n) == pytest.approx(model)
    assert abs(measured - given_bits) <= Z * np.sqrt(given_bits * (1 - given_bits) / probes) + 1.0 / probes
    assert abs(measured - model) <= Z * split_block_fpr_sd(n, B, probes, lane_bits) + 1.0 / probes
    return measured, given_bits, model


GRID = [(mode, B, bpk) for mode in ("native", "parquet") for B in (64, 1500) for bpk in (6.0, 10.0, 16.0)]


@pytest.mark.parametrize(("mode", "B", "bits_per_key"), GRID)
def test_measured_rate_matches_the_model(mode, B, bits_per_key):
    block_bits = 512 if mode == "native" else 256
    n = int(B * block_bits / bits_per_key)
    _run(mode, B, n, 100_000, seed=B * 7 + int(bits_per_key) + (mode == "native"))


@pytest.mark.parametrize(("n", "fpr"), [(20_000, 0.01), (20_000, 0.001)])
def test_capacity_and_fpr_give_fpr(n, fpr):
    f = SplitBlockBloomFilter(capacity=n, fpr=fpr)
    probes = 400_000 if fpr < 0.005 else 100_000
    measured, _given, model = _run("native", f.num_blocks, n, probes, seed=n + int(1 / fpr))
    assert model <= fpr
    assert measured <= fpr + Z * split_block_fpr_sd(n, f.num_blocks, probes)


def test_the_model_is_the_blocked_sum_and_tends_to_poisson():
    """Against a direct evaluation of the sum (and its Poisson limit for large B)."""
    from scipy import stats

    n, B, w = 5000, 100, 64
    j = np.arange(0, n + 1)
    direct = float(np.sum(stats.binom.pmf(j, n, 1 / B) * (1 - (1 - 1 / w) ** j) ** 8))
    assert split_block_fpr(n, B) == pytest.approx(direct, rel=1e-9)
    big_n, big_B = 10**7, 10**6
    pois = float(np.sum(stats.poisson.pmf(j[:200], big_n / big_B) * (1 - (1 - 1 / w) ** j[:200]) ** 8))
    assert split_block_fpr(big_n, big_B) == pytest.approx(pois, rel=1e-4)
    assert split_block_fpr(0, 5) == 0.0 and split_block_fpr(10**6, 1) == pytest.approx(1.0)
    half = float(np.sum(stats.poisson.pmf(j[:400], 100.05) * (1 - (1 - 1 / w) ** j[:400]) ** 8))
    assert split_block_fpr(1000.5, 10) == pytest.approx(half, rel=1e-9)  # non-integral n: Poisson


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["native", "parquet"])
def test_many_filters_average_to_the_model(mode):
    """The mean over 20 seeded filters of 2e5 keys: the model within 5 sd of the mean."""
    B = 4000
    n = int(B * (512 if mode == "native" else 256) / 9.0)
    rates = [_run(mode, B, n, 200_000, seed=s)[0] for s in range(20)]
    sd = split_block_fpr_sd(n, B, 200_000, 64 if mode == "native" else 32) / np.sqrt(len(rates))
    assert abs(np.mean(rates) - split_block_fpr(n, B, 64 if mode == "native" else 32)) <= Z * sd
