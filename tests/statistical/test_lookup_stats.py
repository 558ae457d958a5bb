"""Statistical tests of bloomkit.lookup: false positive rates against the models, load
factors against Eq. 3.11, no false negatives (exact). Seeded; tolerances are 5 sigma of the
binomial."""

from __future__ import annotations

import math

import pytest

from bloomkit.lookup import BloomierFilter, GeometricFilter
from bloomkit.lookup import params as P
from bloomkit.lookup.data import absent_zipf_keys, zipf_table


def _within(count: int, trials: int, rate: float, sigmas: float = 5.0) -> bool:
    sd = math.sqrt(trials * rate * (1 - rate))
    return abs(count - trials * rate) <= sigmas * sd + 1


def _gf_fpr_case(n: int, probes: int, v: int, fpr: float, k: int, seed: int) -> None:
    t = zipf_table(n, seed=seed, value_bits=v)
    gf = GeometricFilter.build(t.keys, t.values, value_bits=v, fpr=fpr, num_hashes=k, seed=seed)
    assert (gf.get_many(t.keys) == t.values).all()  # no false negatives, exact values
    absent = absent_zipf_keys(n, probes, seed=seed)
    fp = int((gf.get_many(absent) != 0).sum())
    pred = gf.predicted_fpr()
    assert _within(fp, probes, pred), (fp, probes * pred)
    # Lemma 3.4.2: below the design bound e_o (5 sigma)
    assert fp <= probes * fpr + 5 * math.sqrt(probes * fpr) + 1


@pytest.mark.parametrize("k", [1, 3])
def test_geometric_fpr_fast(k: int) -> None:
    _gf_fpr_case(20_000, 200_000, 8, 2.0**-9, k, seed=11 + k)


def test_bloomier_fpr_fast() -> None:
    t = zipf_table(20_000, seed=4, value_bits=4)
    bf = BloomierFilter.build(t.keys, t.values, value_bits=4, fpr=2.0**-8)
    assert (bf.get_many(t.keys) == t.values).all()
    probes = 200_000
    fp = int((bf.get_many(absent_zipf_keys(20_000, probes, seed=4)) != 0).sum())
    assert bf.predicted_fpr() == (2**4 - 1) / 2**12
    assert _within(fp, probes, bf.predicted_fpr())


def test_first_table_load_factor_eq_3_11() -> None:
    n = 200_000
    t = zipf_table(n, seed=9)
    gf = GeometricFilter.build(t.keys, t.values, storage_ratio=0.286)
    m = int(gf.table_sizes[0])
    lam = n / m
    occ = gf.table_load_factors()[0] * m
    expect = m * (1 - (1 - 1 / m) ** n)
    sd = math.sqrt(m * math.exp(-lam) * (1 - (1 + lam) * math.exp(-lam)))
    assert abs(occ - expect) <= 5 * sd + 1
    assert abs(P.load_factor_k1(m / n) - expect / m) < 1e-4


def test_sequence_starves_with_default_margin() -> None:
    # the default margin (params.storage_margin) puts the tail on the starvation side
    for seed in range(3):
        t = zipf_table(100_000, seed=seed)
        gf = GeometricFilter.build(t.keys, t.values, seed=seed)
        assert gf.build_stats()["exhausted"] == 0
        assert gf.table_load_factors()[-1] == 0.0


@pytest.mark.slow
def test_geometric_fpr_thesis_config_slow() -> None:
    _gf_fpr_case(1_000_000, 4_000_000, 16, 2.0**-16, 1, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 4, 6])
def test_geometric_fpr_k_slow(k: int) -> None:
    _gf_fpr_case(300_000, 2_000_000, 12, 2.0**-12, k, seed=k)
