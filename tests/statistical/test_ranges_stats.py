"""Seeded statistical tests of document 000's model (Eq. 14) against the Section V simulation.

The simulation averages, over every inserted range of size n (edges skipped as in the report),
the fraction of false positives among the values outside the range. One attribute name fixes
one hash function, so the rate for a single name is not binomial; we average over many random
names (independent hash functions) and use the spread over names for the standard error.
Tolerance: 5 standard errors plus the documented model bias: the model evaluates every term
at the mean fill, E[fill]^e, where the filter gives E[fill^e] >= E[fill]^e. The second-order
(delta-method) size of that gap, sum over terms of c_e E[fill]^e * e(e-1)/2 * Var(fill)/E[fill]^2
with the exact variance of the number of empty bits, grows like k^2 / m (8 % at k = 14, m = 256).
We allow max(3 % of the model, that delta-method bias); docs/ranges.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bloomkit.ranges import Integer, RangeBloomFilter, RangeConfig, Schema, Text
from bloomkit.ranges import model as M
from bloomkit.ranges.simulate import random_names, simulate_names

BIAS = 0.03

FAST_GRID = [
    # (R, n, d, s, k, m, hash)
    (121, 20, 1, 2, 10, 512, "sha512"),
    (300, 60, 3, 1, 10, 512, "xxh64"),
    (300, 100, 2, 2, 8, 512, "xxh64"),
    (1000, 100, 1, 1, 6, 256, "xxh64"),
]

SLOW_GRID = [
    (R, n, d, s, k, m, h)
    for (R, n, d, s, k, m) in [
        (121, 10, 1, 3, 10, 512), (121, 40, 1, 1, 8, 256), (121, 52, 1, 4, 10, 512), (500, 50, 1, 3, 12, 512),
        (400, 200, 4, 1, 12, 512), (2000, 300, 6, 1, 9, 512), (2000, 100, 1, 2, 11, 512), (800, 80, 2, 3, 9, 256),
        (5000, 500, 5, 1, 15, 512), (600, 30, 1, 7, 14, 256),
    ]
    for h in ("xxh64", "sha512")
]


def fill_bias(R: int, n: int, d: int, s: int, k: int, m: int) -> float:
    """Delta-method estimate of E[f(fill)] - f(E[fill]) for Eq. (14) (b = go(n, d, s, k) throws)."""
    b = float(M.go(n, d, s, k))
    p0 = (1 - 1 / m) ** b
    var_empty = m * (m - 1) * (1 - 2 / m) ** b + m * p0 - (m * p0) ** 2
    mu = 1 - p0
    rel_var = max(var_empty, 0.0) / m**2 / mu**2
    r = int(M.r(k, s))
    terms = [(2 * d / (R - n), i * s) for i in range(1, r + 1)]
    terms.append((max(R - n - (d - 1) - 2 * r * d, 0) / (R - n), k))
    return float(sum(c * mu**e * e * (e - 1) / 2 * rel_var for c, e in terms))


def _check(R: int, n: int, d: int, s: int, k: int, m: int, hash: str, names: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    per_name = simulate_names(R, n, m, k, d, s, names=random_names(names, rng), hash=hash)
    model = float(M.f_go(R, n, d, s, k, m))
    mean = float(per_name.mean())
    se = float(per_name.std(ddof=1) / np.sqrt(len(per_name)))
    bias = max(BIAS * model, fill_bias(R, n, d, s, k, m))
    assert abs(mean - model) <= 5 * se + bias, (R, n, d, s, k, m, hash, mean, model, se, bias)


@pytest.mark.parametrize("case", FAST_GRID)
def test_model_vs_simulation_fast(case: tuple[int, int, int, int, int, int, str]) -> None:
    _check(*case, names=150, seed=1234)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_GRID)
def test_model_vs_simulation_grid(case: tuple[int, int, int, int, int, int, str]) -> None:
    _check(*case, names=600, seed=4321)


def test_no_false_negatives_exact() -> None:
    rng = np.random.default_rng(5)
    sch = Schema([Text("Name"), Integer("Age", 0, 500)])
    for d, s, k in [(1, 1, 6), (3, 2, 7), (1, 7, 7), (10, 1, 4), (4, 4, 4)]:
        bf = RangeBloomFilter(sch, 256, RangeConfig(k, {"Age": (d, s)}), seed=int(rng.integers(1000)))
        ranges = []
        for _ in range(6):
            lo = int(rng.integers(0, 480))
            hi = int(rng.integers(lo, min(lo + 40, 500) + 1))
            bf.insert({"Age": (lo, hi), "Name": f"user{lo}"})
            ranges.append((lo, hi))
        bf._check()
        for lo, hi in ranges:
            assert all(bf.might_contain("Age", v) for v in range(lo, hi + 1))
            assert bf.might_cover("Age", lo, hi)
            assert bf.might_intersect("Age", lo, hi)
            assert bf.might_contain("Name", f"user{lo}")
            assert bf.matches({"Age": (lo, hi), "Name": f"user{lo}"})


def test_text_attribute_rate_at_observed_fill() -> None:
    """Text keys: measured rate vs (1-p)^k at the observed fill (binomial test)."""
    sch = Schema([Text("Name"), Integer("Age", 0, 10_000)])
    fp = trials = 0
    expected = 0.0
    for seed in range(5):
        bf = RangeBloomFilter(sch, 256, RangeConfig(4, {"Age": (1, 1)}), seed=seed)
        bf.insert({"Age": (100, 180)})  # 84 positions -> fill about 0.28
        probes = [f"absent-{seed}-{i}" for i in range(3000)]
        hits = sum(bf.might_contain("Name", p) for p in probes)
        fp += hits
        trials += len(probes)
        expected += len(probes) * float(M.f_text(4, bf.fill_ratio()))
    p0 = expected / trials
    res = stats.binomtest(fp, trials, p0)
    sd = np.sqrt(trials * p0 * (1 - p0))
    assert abs(fp - expected) <= 5 * sd + 0.03 * expected, (fp, expected, res.pvalue)


def test_profile_index_text_rate_per_profile_and_at_the_mean_fill() -> None:
    """ProfileIndex (profiles published as filters, searched bit-sliced): the number of profiles
    returned for texts no profile has, against (1-p_i)^k of each profile's own fill (a sum of
    binomials, 5 sigma), and ``attribute_fprs()`` (Eq. 2 at the mean fill of the live profiles)
    within 5 % of the mean of the per-profile rates (the mean-fill approximation)."""
    from bloomkit.ranges import ProfileIndex

    n, queries, k = 2000, 300, 4
    sch = Schema([Text("Name"), Integer("Age", 0, 10_000)])
    idx = ProfileIndex(sch, 256, RangeConfig(k, {"Age": (1, 1)}), seed=7)
    starts = np.random.default_rng(11).integers(0, 9000, n)
    idx.add_many({"Name": [f"user{i}" for i in range(n)], "Age.lo": starts, "Age.hi": starts + 80})
    fills = np.array([idx.get_filter(i).fill_ratio() for i in range(n)])
    per = np.asarray(M.f_text(k, fills))
    hits = sum(idx.search({"Name": f"absent-{j}"}).size for j in range(queries))
    expected = queries * per.sum()
    sd = np.sqrt(queries * np.sum(per * (1 - per)))
    assert abs(hits - expected) <= 5 * sd, (hits, expected, sd)
    model = idx.attribute_fprs()["Name"]
    assert model == pytest.approx(float(M.f_text(k, fills.mean())), rel=1e-9)
    assert abs(model - per.mean()) <= 0.05 * per.mean(), (model, per.mean())
