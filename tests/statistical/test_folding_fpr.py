"""Statistical tests of folded filters: measured false positive rates against Eq. 4."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bloomkit.folding import (
    FoldableBloomFilter,
    FoldableCountingBloomFilter,
    MultiTransmissionReceiver,
    admissible_sizes,
    aggregate_fpr,
    next_size,
)
from bloomkit.theory import false_positive_rate


def _within(measured_hits: int, trials: int, p: float, sigmas: float = 5.0) -> bool:
    sd = math.sqrt(trials * p * (1 - p))
    return abs(measured_hits - trials * p) <= sigmas * sd + 1


def _check_filter_rate(f: object, n: int, k: int, absent: np.ndarray) -> None:
    """Two 5-sigma checks: the fill of the (folded) filter against Eq. 1 at m_t (bit-count sd
    sqrt(m p (1-p))), and the measured rate against fill^k (binomial over the probes)."""
    m = f.num_bits  # type: ignore[attr-defined]
    fill = f.fill_ratio()  # type: ignore[attr-defined]
    p1 = 1.0 - math.exp(n * k * math.log1p(-1.0 / m))
    assert abs(fill - p1) * m <= 5 * math.sqrt(m * p1 * (1 - p1)) + 1, (m, fill, p1)
    hits = int(f.contains_many(absent).sum())  # type: ignore[attr-defined]
    assert _within(hits, absent.size, fill**k), (m, hits / absent.size, fill**k)
    # and Eq. 4 itself, with the fill spread propagated (delta method)
    model = false_positive_rate(n, m, k)
    sd = math.sqrt(model * (1 - model) / absent.size + (k * model * math.sqrt(p1 * (1 - p1) / m) / p1) ** 2)
    assert abs(hits / absent.size - model) <= 5 * sd, (m, hits / absent.size, model)


def _run_fold_fpr(n: int, m1: int, factors: list[int], k: int, probes: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 2**62, n)
    absent = rng.integers(2**62, 2**63 - 1, probes)
    f = FoldableBloomFilter(m1, k, seed=seed)
    f.add_many(keys)
    for fac in factors:
        f.fold(fac)
        assert f.contains_many(keys).all()  # no false negatives, exactly
        _check_filter_rate(f, n, k, absent)
    f._check()


def test_folded_fpr_matches_eq4_fast() -> None:
    # 720720 -> 144144 -> 24024 -> 3432 bits with 1500 items, k = 3
    _run_fold_fpr(1500, 720720, [5, 6, 7], 3, 100_000, seed=31)


@pytest.mark.slow
def test_folded_fpr_matches_eq4_large() -> None:
    _run_fold_fpr(500_000, 2 * 3 * 4 * 5 * 7 * 9 * 11 * 13 * 16, [2, 3, 2], 4, 2_000_000, seed=32)


def test_counting_folded_fpr_matches_eq4() -> None:
    rng = np.random.default_rng(33)
    keys = rng.integers(0, 2**62, 1200)
    absent = rng.integers(2**62, 2**63 - 1, 100_000)
    c = FoldableCountingBloomFilter(55440, 3, seed=33, counter_bits=8)
    c.add_many(keys)
    c.fold(4)
    c.remove_many(keys[:400])
    assert c.contains_many(keys[400:]).all()
    _check_filter_rate(c, 800, 3, absent)
    c._check()


def test_fold_to_band_keeps_measured_fpr_in_band() -> None:
    rng = np.random.default_rng(34)
    absent = rng.integers(2**62, 2**63 - 1, 100_000)
    m1, rho, eps, k = 720720, 0.05, 0.01, 3
    f = FoldableBloomFilter(m1, k, seed=34)
    total = 0
    for batch in (500, 1500, 3000):
        f.add_many(rng.integers(0, 2**62, batch))
        total += batch
        f.fold_to_band(rho, eps, policy="greedy")
        assert admissible_sizes(total, k, rho, eps).contains(f.num_bits)
        _check_filter_rate(f, total, k, absent)
        f._check()


def test_receiver_aggregate_fpr_vs_models() -> None:
    """ANDed copies beat one copy; the fold-aware model (aggregate_fpr) matches the measured
    rate within 5 sd, the product-of-rates model is below it."""
    rng = np.random.default_rng(35)
    n, k, m1, rho, eps = 200, 3, 2882880, 0.05, 0.01
    keys = rng.integers(0, 2**62, n)
    absent = rng.integers(2**62, 2**63 - 1, 400_000)
    f = FoldableBloomFilter(m1, k, seed=35)
    f.add_many(keys)
    r = MultiTransmissionReceiver(window=3)
    sent: list[int] = []
    fills = []
    for _ in range(3):
        s = next_size(m1, n, k, rho, eps, policy="entropy", sent=sent)
        sent.append(s)
        copy = f.folded(m1 // s)
        fills.append((copy.fill_ratio(), s))
        r.receive(copy.to_wire(set_version=1))
    assert len(set(sent)) == 3 and r.contains_many(keys).all()
    single = min(float(f.folded(m1 // s).contains_many(absent).mean()) for s in sent)
    rate = float(r.contains_many(absent).mean())
    model = r.predicted_fpr()
    assert model == aggregate_fpr(sent, n, k) > r.predicted_fpr("product")
    # binomial sd of the probes plus the filter-to-filter spread of the fills (delta method)
    rel = sum((k * math.sqrt(fl * (1 - fl) / m) / fl) ** 2 for fl, m in fills)
    sd = math.sqrt(model * (1 - model) / absent.size + model**2 * rel)
    assert abs(rate - model) <= 5 * sd, (rate, model, sd)
    assert rate < single / 20  # aggregation helps a lot
