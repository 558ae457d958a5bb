"""Tests of bloomkit.folding: foldable filters, number theory, planner, wire format."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from _damage import assert_damage_detected
from hypothesis import given, settings
from hypothesis import strategies as st

import bloomkit
from bloomkit import BloomFilter, CountingBloomFilter
from bloomkit.errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from bloomkit.folding import (
    FoldableBloomFilter,
    FoldableCountingBloomFilter,
    admissible_sizes,
    aggregate_fpr,
    choose_initial_size,
    dickman_rho,
    divisor_count,
    divisor_counts,
    divisors,
    factorize,
    from_wire,
    highly_composite,
    is_smooth,
    largely_composite,
    next_size,
    paper_eq14_bounds,
    size_for_fpr,
    smooth_numbers,
    superior_highly_composite,
)
from bloomkit.folding.planner import admissible_bounds
from bloomkit.theory import false_positive_rate

# Table III of doc 003 as printed (a star marks superior highly composite numbers).
TABLE_III = [
    "*2", "3", "4", "*6", "8", "10", "*12", "18", "20", "24", "30", "36", "48", "*60",
    "72", "84", "90", "96", "108", "*120", "168", "180", "240", "*360", "420", "480", "504", "540",
    "600", "630", "660", "672", "720", "840", "1080", "1260", "1440", "1680", "7560", "9240", "10080", "12600",
    "13860", "15120", "18480", "20160", "25200", "27720", "30240", "32760", "36960", "37800", "40320", "41580",
    "42840", "43680", "45360", "50400", "*55440", "65520", "75600", "83160", "98280", "110880", "131040",
    "138600", "151200", "163800", "166320", "196560",
]


def _brute_d(m: int) -> int:
    return sum(1 for i in range(1, m + 1) if m % i == 0)


# ------------------------------------------------------------------------------ numbers


def test_factorize_and_divisors_match_brute_force() -> None:
    for m in list(range(1, 400)) + [55440, 720720, 2**40, 3**20 * 7, 999983, 10**12 + 39]:
        fac = factorize(m)
        assert math.prod(p**g for p, g in fac.items()) == m
        assert all(all(p % q for q in range(2, math.isqrt(p) + 1)) for p in fac)
        if m < 400:
            assert divisor_count(m) == _brute_d(m)
            assert divisors(m).tolist() == [i for i in range(1, m + 1) if m % i == 0]


def test_factorize_large_primes_and_semiprimes_quickly() -> None:
    """Pollard's rho after trial division: a 61-bit prime took minutes of trial division."""
    assert factorize(2**61 - 1) == {2**61 - 1: 1}
    assert factorize((2**31 - 1) * (10**9 + 7)) == {10**9 + 7: 1, 2**31 - 1: 1}
    assert factorize((2**31 - 1) ** 2) == {2**31 - 1: 2}
    assert factorize(999983**3 * 4) == {2: 2, 999983: 3}
    assert divisors(2**61 - 1).tolist() == [1, 2**61 - 1]
    assert next_size(2**61 - 1, 1000, 3, 0.05, 0.01) == 2**61 - 1  # no admissible divisor: the largest
    assert factorize(2**63 - 1) == {7: 2, 73: 1, 127: 1, 337: 1, 92737: 1, 649657: 1}
    assert next_size(2**63 - 1, 1000, 3, 0.05, 0.01) == 7 * 7 * 127  # the largest filter size plans in ms
    with pytest.raises(InvalidParameterError):
        factorize(2**63)


def test_divisor_counts_sieve_matches_eq8() -> None:
    assert divisor_counts(1, 998).tolist() == [_brute_d(m) for m in range(1, 1000)]
    x = 10**9 - 500
    got = divisor_counts(x, 1000)
    for i in range(0, 1001, 37):
        assert got[i] == divisor_count(x + i)
    assert divisor_counts(0, 3).tolist() == [0, 1, 2, 2]
    assert divisor_counts(0, 11).tolist() == [0] + [_brute_d(m) for m in range(1, 12)]  # hung before: 0 % p == 0


def test_table_iii_reproduced() -> None:
    lc = largely_composite(196560)
    listed = [int(s.lstrip("*")) for s in TABLE_III]
    # every number of Table III is largely composite (Eq. 10) ...
    assert set(listed) <= set(lc.tolist())
    # ... the table is an extract: it omits 1, 336 and the whole range (1680, 7560)
    missing = sorted(set(lc.tolist()) - set(listed))
    assert 336 in missing and 2520 in missing and 5040 in missing and 1 in missing
    assert all(m == 1 or m == 336 or 1680 < m < 7560 for m in missing)
    # the starred numbers are exactly the superior highly composite ones in the table
    shc = set(superior_highly_composite(196560).tolist())
    starred = {int(s[1:]) for s in TABLE_III if s.startswith("*")}
    assert starred == shc & set(listed)
    # brute force of Eqs. 9 and 10 on a small range
    d = [0] + [_brute_d(m) for m in range(1, 2000)]
    assert largely_composite(1999).tolist() == [m for m in range(1, 2000) if d[m] >= max(d[:m])]
    assert highly_composite(1999).tolist() == [m for m in range(1, 2000) if d[m] > max(d[:m])]


def test_highly_composite_large_limit_is_consistent() -> None:
    hc = highly_composite(10**7)
    lc = largely_composite(10**6)
    assert set(hc[hc <= 10**6].tolist()) <= set(lc.tolist())
    ds = [divisor_count(int(m)) for m in hc]
    assert all(a < b for a, b in zip(ds, ds[1:], strict=False))
    assert int(highly_composite(2**62)[-1]) > 10**18


def test_smooth_numbers_against_trial_factorization() -> None:
    rng = np.random.default_rng(1)
    for _ in range(12):
        x = int(rng.integers(1, 10**7))
        z = int(rng.integers(0, 3000))
        y = int(rng.choice([1, 2, 3, 7, 13, 100, 1000]))
        got = smooth_numbers(x, z, y).tolist()
        want = [v for v in range(x, x + z + 1) if is_smooth(v, y)]
        assert got == want
    assert smooth_numbers(1, 20, 1).tolist() == [1]
    assert smooth_numbers(1, 20, 3).tolist() == [1, 2, 3, 4, 6, 8, 9, 12, 16, 18]
    # near the top of the range: check the claimed smooth numbers and a sample of the rest
    x = 10**15
    got = smooth_numbers(x, 2000, 50)
    assert all(is_smooth(int(v), 50) for v in got)
    others = sorted(set(range(x, x + 2001)) - set(got.tolist()))
    assert not any(is_smooth(v, 50) for v in others[::97])


def test_dickman_rho_values() -> None:
    assert dickman_rho(0.5) == 1.0
    assert dickman_rho(2.0) == pytest.approx(1 - math.log(2), abs=1e-6)
    assert dickman_rho(3.0) == pytest.approx(0.0486083882911, rel=1e-5)
    assert dickman_rho(4.0) == pytest.approx(0.00491092564776, rel=1e-4)
    arr = dickman_rho(np.array([1.0, 2.5]))
    assert isinstance(arr, np.ndarray) and arr.shape == (2,)


def test_number_bad_inputs() -> None:
    for bad in (0, -3, 2.5, True, "12"):
        with pytest.raises(InvalidParameterError):
            factorize(bad)
    with pytest.raises(InvalidParameterError):
        smooth_numbers(0, 10, 5)
    with pytest.raises(InvalidParameterError):
        smooth_numbers(10, -1, 5)
    with pytest.raises(InvalidParameterError):
        smooth_numbers(10, 10, 0)
    with pytest.raises(InvalidParameterError):
        smooth_numbers(2**62, 10, 5)
    with pytest.raises(InvalidParameterError):
        largely_composite(0)
    with pytest.raises(InvalidParameterError):
        dickman_rho(-1.0)


# ------------------------------------------------------------------------------ planner


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_admissible_sizes_is_exact_band() -> None:
    for n, k, rho, eps in [(1000, 2, 0.1, 0.02), (50, 3, 0.05, 0.01), (10**6, 7, 0.01, 0.002), (1, 1, 0.5, 0.1)]:
        lo, hi = admissible_sizes(n, k, rho, eps)
        assert lo <= hi
        assert rho - eps <= false_positive_rate(n, lo, k) <= rho + eps
        assert rho - eps <= false_positive_rate(n, hi, k) <= rho + eps
        assert lo == 1 or false_positive_rate(n, lo - 1, k) > rho + eps
        assert false_positive_rate(n, hi + 1, k) < rho - eps
        rlo, rhi = admissible_bounds(n, k, rho, eps)
        assert abs(rlo - lo) <= 1 and abs(rhi - hi) <= 1
    assert admissible_sizes(0, 2, 0.1, 0.02).empty


def test_size_for_fpr_inverts_eq4() -> None:
    for n, k, r in [(10, 2, 0.3), (1000, 4, 0.01), (10**7, 3, 0.001)]:
        m = size_for_fpr(n, k, r)
        assert false_positive_rate(n, m, k) == pytest.approx(r, rel=1e-9)


def test_printed_eq14_is_not_the_inversion() -> None:
    lo, hi = paper_eq14_bounds(1000, 2, 0.1, 0.02)
    good = admissible_sizes(1000, 2, 0.1, 0.02)
    assert lo > hi  # the printed interval is empty here
    assert abs(lo - good.lo) > 1000


def test_band_bad_inputs() -> None:
    for rho, eps in [(0.1, 0.1), (0.1, 0.2), (0.6, 0.4), (0.9, 0.2), (0.1, 0.0), (0.1, -0.01), (1.2, 0.1), (float("nan"), 0.1)]:
        with pytest.raises(InvalidParameterError):
            admissible_sizes(100, 2, rho, eps)
        with pytest.raises(InvalidParameterError):
            next_size(5040, 100, 2, rho, eps)
    with pytest.raises(InvalidParameterError):
        admissible_sizes(-1, 2, 0.1, 0.02)
    with pytest.raises(InvalidParameterError):
        next_size(5040, 100, 2, 0.1, 0.02, policy="random")
    with pytest.raises(InvalidParameterError):
        next_size(5040, 100, 2, 0.1, 0.02, current=11)


@pytest.mark.parametrize("policy", ["independent", "greedy", "min_cost", "entropy"])
def test_next_size_policies_return_admissible_divisors(policy: str) -> None:
    m1 = 720720
    cur = m1
    sent: list[int] = []
    for n in [100, 300, 1000, 3000, 10000, 3000, 200]:
        s = next_size(m1, n, 3, 0.05, 0.01, policy=policy, current=cur, sent=sent)
        assert m1 % s == 0
        assert admissible_sizes(n, 3, 0.05, 0.01).contains(s)
        cur = s
        sent.append(s)


def test_next_size_policy_details() -> None:
    m1 = 720720
    iv = admissible_sizes(1000, 3, 0.05, 0.01)
    adm = [d for d in divisors(m1).tolist() if iv.contains(d)]
    assert next_size(m1, 1000, 3, 0.05, 0.01) == adm[0]
    # greedy keeps an admissible current size; min_cost prefers a fold of the current one
    assert next_size(m1, 1000, 3, 0.05, 0.01, policy="greedy", current=adm[-1]) == adm[-1]
    assert next_size(m1, 1000, 3, 0.05, 0.01, policy="min_cost", current=adm[-1]) == adm[-1]
    # entropy avoids sizes already sent and their divisors / multiples
    e = next_size(m1, 1000, 3, 0.05, 0.01, policy="entropy", sent=[adm[0]])
    assert e != adm[0] and e % adm[0] and adm[0] % e
    # no admissible divisor: smallest divisor below the band
    assert next_size(7, 1, 2, 0.05, 0.01) == 7
    assert next_size(1024, 0, 2, 0.05, 0.01) == 1


def test_aggregate_fpr_model() -> None:
    # one copy (or repeats of one size) is Eq. 4
    assert aggregate_fpr([5040], 300, 3) == pytest.approx(false_positive_rate(300, 5040, 3), rel=1e-9)
    assert aggregate_fpr([5040, 5040], 300, 3) == pytest.approx(false_positive_rate(300, 5040, 3), rel=1e-9)
    # a copy whose size divides another's is a fold of it and adds nothing
    assert aggregate_fpr([5040, 2520], 300, 3) == pytest.approx(false_positive_rate(300, 5040, 3), rel=1e-9)
    # coprime sizes with lcm far above n behave like independent copies
    ind = aggregate_fpr([1009, 1013], 50, 2)
    assert ind == pytest.approx(aggregate_fpr([1009, 1013], 50, 2, model="product"), rel=0.01)
    # folds of one B_1 are positively correlated: never below the product model
    for sizes in ([12320, 12870], [12320, 12870, 13104], [1232, 1365, 1287]):
        assert aggregate_fpr(sizes, 2000, 3) >= aggregate_fpr(sizes, 2000, 3, model="product")
    assert aggregate_fpr([100, 200], 0, 3) == 0.0
    with pytest.raises(InvalidParameterError):
        aggregate_fpr([], 10, 3)
    with pytest.raises(InvalidParameterError):
        aggregate_fpr([0, 10], 10, 3)
    with pytest.raises(InvalidParameterError):
        aggregate_fpr([10, 20], 10, 3, model="other")
    with pytest.raises(InvalidParameterError):
        aggregate_fpr(list(range(100, 113)), 10, 3)


def test_choose_initial_size_prefers_foldable_sizes() -> None:
    m1, reports = choose_initial_size(200, 20000, 3, 0.05, 0.01, y=7, n_points=64)
    best = reports[0]
    assert best.m1 == m1 and best.coverage == max(r.coverage for r in reports)
    lo = admissible_sizes(20000, 3, 0.05, 0.01).lo
    assert m1 >= lo and is_smooth(m1, 7) or m1 in largely_composite(m1).tolist()
    assert best.coverage > 0.9 and best.max_overhead < 0.5
    # a prime m_1 covers almost nothing
    prime = 1000003
    from bloomkit.folding.planner import _score

    with pytest.raises(InvalidParameterError):
        choose_initial_size(200, 20000, 3, 0.05, 0.01, objective="min")
    with pytest.raises(InvalidParameterError):
        choose_initial_size(200, 100, 3, 0.05, 0.01)
    mean_m1, mean_reports = choose_initial_size(200, 20000, 3, 0.05, 0.01, y=7, n_points=64, objective="mean")
    assert mean_reports[0].mean_overhead <= best.mean_overhead
    grid = np.unique(np.geomspace(200, 20000, 64).round().astype(np.int64))
    rlo, rhi = admissible_bounds(grid, 3, 0.05, 0.01)
    assert _score(prime, grid, np.ceil(rlo), np.floor(rhi)).coverage < 0.1


# ------------------------------------------------------------------------------ filters

KEYS = np.arange(3000, dtype=np.int64)


PROBES = ["independent", "double"]
"""The fold suite runs on both probe schemes (issue 28): G_i is independent of m in both."""


def _rebuild(size: int, keys: np.ndarray, k: int, seed: int, probes: str = "independent") -> BloomFilter:
    r = BloomFilter(num_bits=size, num_hashes=k, seed=seed, probes=probes)
    r.add_many(keys)
    return r


@pytest.mark.parametrize("probes", PROBES)
def test_fold_equals_rebuild_elementary_composite_sequential(probes: str) -> None:
    f = FoldableBloomFilter(720720, 4, seed=11, probes=probes)
    f.add_many(KEYS)
    f._check()
    for factor in (2, 9, 4, 7, 11, 5, 13):
        f.fold(factor)
        f._check()
        assert f.bits == _rebuild(f.num_bits, KEYS, 4, 11, probes).bits
    assert f.num_bits == 2 and f.fold_factor == 360360
    composite = FoldableBloomFilter(720720, 4, seed=11, probes=probes)
    composite.add_many(KEYS)
    composite.fold(720720 // 360)
    assert composite.bits == _rebuild(360, KEYS, 4, 11, probes).bits
    assert composite.contains_many(KEYS).all()


@pytest.mark.parametrize("probes", PROBES)
def test_membership_on_folded_filter_uses_current_size(probes: str) -> None:
    f = FoldableBloomFilter(5040, 3, seed=2, probes=probes)
    f.add_many(KEYS[:200])
    f.fold(12)
    r = _rebuild(420, KEYS[:200], 3, 2, probes)
    probe = np.arange(10**6, 10**6 + 5000)
    assert np.array_equal(f.contains_many(probe), r.contains_many(probe))
    assert all((int(q) in f) == (int(q) in r) for q in probe[:300])
    f.add(10**9)  # single-key add on the folded filter sets both B_t and B_1
    assert 10**9 in f and f.count == 201
    f._check()


@settings(max_examples=40, deadline=None)
@given(
    a=st.sampled_from([2, 3, 4, 5, 6, 7, 10]),
    b=st.sampled_from([2, 3, 4, 5, 6, 9]),
    c=st.sampled_from([2, 3, 7, 8]),
    seed=st.integers(0, 2**64 - 1),
    probes=st.sampled_from(PROBES),
)
def test_composition_commutativity_associativity(a: int, b: int, c: int, seed: int, probes: str) -> None:
    m1 = a * b * c * 97
    f = FoldableBloomFilter(m1, 3, seed=seed, probes=probes)
    f.add_many(KEYS[:150])
    ab = f.folded(a).folded(b)
    assert ab == f.folded(a * b)  # Lemma, Eq. 5
    assert ab == f.folded(b).folded(a)  # commutativity
    assert ab.folded(c) == f.folded(a).folded(b * c) == f.folded(a * b * c)  # associativity
    assert f.folded(a * b * c).bits == _rebuild(97, KEYS[:150], 3, seed, probes).bits


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["fold", "unfold", "add", "resize"]), st.integers(0, 10**6)), max_size=12),
       probes=st.sampled_from(PROBES))
def test_no_false_negatives_after_any_sequence(ops: list[tuple[str, int]], probes: str) -> None:
    m1 = 2**3 * 3**2 * 5 * 7
    f = FoldableBloomFilter(m1, 3, seed=5, probes=probes)
    c = FoldableCountingBloomFilter(m1, 3, seed=5, probes=probes)
    inserted = list(range(40))
    f.add_many(inserted)
    c.add_many(inserted)
    for op, arg in ops:
        divs = divisors(m1).tolist()
        if op == "fold":
            choices = [d for d in divisors(f.num_bits).tolist() if d >= 2]
            if choices:
                fac = choices[arg % len(choices)]
                f.fold(fac)
                c.fold(fac)
        elif op == "unfold":
            ups = [d for d in divs if d % f.num_bits == 0]
            f.unfold(ups[arg % len(ups)])
            c.unfold(ups[arg % len(ups)])
        elif op == "resize":
            f.resize(divs[arg % len(divs)])
            c.resize(divs[arg % len(divs)])
        else:
            f.add_many([arg + 10**7])
            c.add_many([arg + 10**7])
            inserted.append(arg + 10**7)
        f._check()
        c._check()
        assert f.contains_many(inserted).all()
        assert c.contains_many(inserted).all()
        assert f.num_bits == c.num_bits
        assert f.bits == c.bits  # counting filter's support equals the bit filter


@pytest.mark.parametrize("probes", PROBES)
def test_unfold_regenerates_from_original(probes: str) -> None:
    f = FoldableBloomFilter(55440, 3, seed=9, probes=probes)
    f.add_many(KEYS)
    f.fold(7)
    f.fold(11)
    f.unfold(55440 // 7)
    assert f.bits == _rebuild(7920, KEYS, 3, 9, probes).bits
    f.unfold()
    assert f.num_bits == 55440 and f.bits == _rebuild(55440, KEYS, 3, 9, probes).bits
    assert f.size_history == [55440, 7920, 720, 7920, 55440]
    f._check()


def test_fold_and_unfold_bad_inputs() -> None:
    f = FoldableBloomFilter(360, 3, seed=1)
    for bad in (0, 1, -2, 7, 2.0, True, "2"):
        with pytest.raises(InvalidParameterError):
            f.fold(bad)
        with pytest.raises(InvalidParameterError):
            f.folded(bad)
    f.fold(4)  # 90
    for bad in (720, 100, 45, 135, 0, -90):
        with pytest.raises(InvalidParameterError):
            f.unfold(bad)
    g = FoldableBloomFilter(360, 3, seed=1, retain_original=False)
    g.fold(2)
    with pytest.raises(InvalidParameterError):
        g.unfold()
    with pytest.raises(InvalidParameterError):
        FoldableBloomFilter(0, 3)
    with pytest.raises(InvalidParameterError):
        FoldableBloomFilter(360, 0)
    with pytest.raises(InvalidParameterError):
        FoldableBloomFilter(360, 3, retain_original=1)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError):
        FoldableCountingBloomFilter(360, 3, counter_bits=5)
    f._check()
    assert f.num_bits == 90


@pytest.mark.parametrize("probes", PROBES)
def test_counting_fold_is_sum_and_supports_removal(probes: str) -> None:
    c = FoldableCountingBloomFilter(2520, 3, seed=4, counter_bits=16, probes=probes)
    c.add_many(KEYS[:500])
    before = c.counters.values().copy()
    c.fold(9)
    assert np.array_equal(c.counters.values(), before.reshape(9, 280).sum(axis=0))
    ref = CountingBloomFilter(num_bits=280, num_hashes=3, seed=4, counter_bits=16, probes=probes)
    ref.add_many(KEYS[:500])
    assert np.array_equal(c.counters.values(), ref.counters.values())
    c.remove_many(KEYS[:250])
    ref.remove_many(KEYS[:250])
    assert np.array_equal(c.counters.values(), ref.counters.values())
    c._check()
    assert c.contains_many(KEYS[250:500]).all() and c.count == 250
    c.unfold()
    c._check()
    assert c.contains_many(KEYS[250:500]).all()
    empty = FoldableCountingBloomFilter(2520, 3, seed=4, probes=probes)
    empty.add_many(KEYS[:10])
    with pytest.raises(InvalidParameterError):
        empty.remove_many(KEYS[:11].tolist() + [10**9])
    assert empty.count == 10
    empty._check()
    with pytest.raises(InvalidParameterError):
        empty.remove(10**12)


@pytest.mark.parametrize("probes", PROBES)
def test_counting_fold_saturates_without_false_negatives(probes: str) -> None:
    c = FoldableCountingBloomFilter(4096, 4, seed=3, counter_bits=4, probes=probes)
    c.add_many(KEYS[:1000])
    c.fold(256)  # 16 counters, sums far above 15
    assert c.overflowed
    c._check()
    c.remove_many(KEYS[:900])
    assert c.contains_many(KEYS[900:1000]).all()
    c._check()
    c.unfold(4096)
    assert c.contains_many(KEYS[900:1000]).all()
    c._check()


def test_fold_to_band_and_fpr() -> None:
    f = FoldableBloomFilter(720720, 3, seed=8)
    f.add_many(KEYS)
    size = f.fold_to_band(0.05, 0.01)
    iv = admissible_sizes(3000, 3, 0.05, 0.01)
    assert iv.contains(size) and f.num_bits == size
    f._check()
    f.add_many(np.arange(10**6, 10**6 + 6000))
    size2 = f.fold_to_band(0.05, 0.01, policy="greedy")
    assert admissible_sizes(9000, 3, 0.05, 0.01).contains(size2) and size2 > size
    s3 = f.fold_to_fpr(0.02)
    assert (f.fill_ratio()) ** 3 <= 0.02
    smaller = [d for d in divisors(720720).tolist() if d < s3]
    fo = FoldableBloomFilter(720720, 3, seed=8)
    fo.add_many(KEYS)
    fo.add_many(np.arange(10**6, 10**6 + 6000))
    for d in smaller[-3:]:
        fo.resize(d)
        assert fo.fill_ratio() ** 3 > 0.02  # s3 is the smallest qualifying divisor
        fo.unfold()
    with pytest.raises(InvalidParameterError):
        f.fold_to_band(0.05, 0.06)
    with pytest.raises(InvalidParameterError):
        f.fold_to_fpr(1.5)


@pytest.mark.parametrize("probes", PROBES)
def test_union_and_intersection(probes: str) -> None:
    a = FoldableBloomFilter(5040, 3, seed=1, probes=probes)
    b = FoldableBloomFilter(5040, 3, seed=1, probes=probes)
    a.add_many(KEYS[:100])
    b.add_many(KEYS[50:150])
    a.fold(4)
    b.fold(4)
    u = a | b
    u._check()
    assert u.contains_many(KEYS[:150]).all()
    i = a & b
    i._check()
    assert i.contains_many(KEYS[50:100]).all()
    assert i.bits.popcount() <= (a.bits & b.bits).popcount()
    c = FoldableBloomFilter(2520, 3, seed=1, probes=probes)
    with pytest.raises(IncompatibleFiltersError):
        a.union(c)
    with pytest.raises(IncompatibleFiltersError):
        a.union(FoldableBloomFilter(5040, 3, seed=2, probes=probes).folded(4))
    other = FoldableBloomFilter(5040, 3, seed=1, probes=PROBES[probes == PROBES[0]])  # the other scheme
    other.add_many(KEYS[:100])
    assert other.folded(4).bits != a.bits
    with pytest.raises(IncompatibleFiltersError):
        a.union(other.folded(4))
    ca = FoldableCountingBloomFilter(5040, 3, seed=1, probes=probes)
    cb = FoldableCountingBloomFilter(5040, 3, seed=1, probes=probes)
    ca.add_many(KEYS[:100])
    cb.add_many(KEYS[50:150])
    cu = ca | cb
    cu._check()
    assert cu.contains_many(KEYS[:150]).all() and cu.count == 200


# ------------------------------------------------------------------------------ persistence


@pytest.mark.parametrize("probes", PROBES)
def test_persistence_round_trip(probes: str, tmp_path: object) -> None:
    f = FoldableBloomFilter(55440, 3, seed=12, probes=probes)
    f.add_many(KEYS)
    f.fold(6)
    c = FoldableCountingBloomFilter(5040, 3, seed=12, counter_bits=4, probes=probes)
    c.add_many(KEYS[:200])
    c.fold(5)
    g = FoldableBloomFilter(360, 2, seed=3, retain_original=False, probes=probes)
    g.add_many(KEYS[:5])
    g.fold(3)
    for obj in (f, c, g):
        back = bloomkit.loads(obj.to_bytes())
        assert type(back) is type(obj) and back == obj and back.probes == probes
        wired = from_wire(obj.to_wire())
        assert wired.probes == probes and wired.bits == obj.bits
        assert back.size_history == obj.size_history and back.count == obj.count
        assert back.retains_original == obj.retains_original
        back._check()
        assert pickle.loads(pickle.dumps(obj)) == obj
    path = tmp_path / "f.bkf"  # type: ignore[operator]
    f.save(path)
    back = bloomkit.load(path)
    back.unfold()
    assert back.bits == _rebuild(55440, KEYS, 3, 12, probes).bits


def test_damaged_container_raises_format_error() -> None:
    f = FoldableBloomFilter(120, 2, seed=1)
    f.add_many(KEYS[:10])
    f.fold(2)
    assert_damage_detected(f.to_bytes(), FoldableBloomFilter.from_bytes, 0x41,
                           decode_flipped=bloomkit.loads)


def test_inconsistent_container_state_raises_format_error() -> None:
    from bloomkit._format import pack

    f = FoldableBloomFilter(120, 2, seed=1)
    f.add_many(KEYS[:10])
    f.fold(2)
    params, arrays = f._to_state()
    bad_words = arrays["words"].copy()
    bad_words[0] ^= np.uint64(1)
    blob = pack(f._STRUCTURE, params, {"words": bad_words, "origin": arrays["origin"]}, hash_id=1, seed=1)
    with pytest.raises(FormatError):
        bloomkit.loads(blob)
    for key, value in [("history", [120, 7]), ("num_bits", 7), ("count", -1), ("m1", 0)]:
        p = dict(params)
        p[key] = value
        with pytest.raises(FormatError):
            bloomkit.loads(pack(f._STRUCTURE, p, arrays, hash_id=1, seed=1))


@pytest.mark.parametrize("probes", PROBES)
def test_single_key_paths_on_every_construction_path(probes: str):
    """Single-key add / in work on filters made by fold, folded, unfold, wire and load."""
    from bloomkit.folding import FoldableBloomFilter, FoldableCountingBloomFilter

    for cls in (FoldableBloomFilter, FoldableCountingBloomFilter):
        f = cls(num_bits=2 * 3 * 5 * 7 * 64, num_hashes=3, seed=9, probes=probes)
        f.add("alpha")
        f.add(17)
        made = [f.folded(3), from_wire(f.to_bloom().to_wire(set_version=1) if cls is FoldableCountingBloomFilter
                                        else f.to_wire(set_version=1), seed=9, num_hashes=3),
                cls.from_bytes(f.to_bytes()), f.copy()]
        g = f.folded(5)
        g.unfold(g.num_bits * 5)
        made.append(g)
        for h in made:
            assert "alpha" in h and 17 in h
            h.add("beta")
            assert "beta" in h


# ------------------------------------------------------------------------------ issue 11 / 12: the contract


def test_constructor_takes_the_bloom_filter_vocabulary() -> None:
    f = FoldableBloomFilter(capacity=1000, fpr=0.01, seed=3)
    assert f.num_bits == f.m1 == 9600 and f.num_bits >= 9586  # 9586 rounded up to a multiple of 60
    assert f.capacity == 1000 and f.fpr == 0.01 and f.num_hashes == 7
    assert all(f.m1 % d == 0 for d in range(2, 6))
    c = FoldableCountingBloomFilter(capacity=1000, fpr=0.01, counter_bits=16)
    assert c.num_bits == 9600 and c.counter_bits == 16 and c.size_in_bits == 9600 * 16
    g = FoldableBloomFilter.for_requirements(1000, 0.01, seed=3)
    assert g.num_bits == 9600 and g.seed == 3 and g.retains_original
    h = FoldableCountingBloomFilter.for_requirements(1000, 0.01, counter_bits=4, retain_original=False)
    assert h.counter_bits == 4 and not h.retains_original
    assert FoldableBloomFilter(num_bits=5040, capacity=100).num_hashes == round(5040 / 100 * math.log(2))
    # positional (num_bits, num_hashes); seed is keyword-only
    assert FoldableBloomFilter(5040, 3).num_bits == 5040
    with pytest.raises(TypeError):
        FoldableCountingBloomFilter(5040, 3, 7)
    assert FoldableCountingBloomFilter(5040, 3, seed=7).counter_bits == 8
    for bad in (dict(), dict(capacity=10), dict(fpr=0.1), dict(num_bits=100), dict(num_bits=100, fpr=0.1, capacity=5),
                dict(capacity=0, fpr=0.1), dict(capacity=10, fpr=1.0), dict(capacity=2**62, fpr=1e-300),
                dict(num_bits=100, num_hashes=0), dict(num_bits=100, num_hashes=2000), dict(num_bits=2**63, num_hashes=2),
                dict(num_bits=100, num_hashes=2, seed=-1), dict(num_bits=100, num_hashes=2, retain_original="x")):
        with pytest.raises(InvalidParameterError):
            FoldableBloomFilter(**bad)
    with pytest.raises(InvalidParameterError):
        FoldableCountingBloomFilter(100, 2, counter_bits=12)
    with pytest.raises(TypeError):
        FoldableBloomFilter(100, 2, 3, 4, 5, 6, 7)  # type: ignore[call-arg]


def test_protocol_surface_clear_info_len_key_types() -> None:
    from bloomkit._protocols import MembershipFilter

    for cls in (FoldableBloomFilter, FoldableCountingBloomFilter):
        f = cls(capacity=2000, fpr=0.01, seed=4)
        assert isinstance(f, MembershipFilter) and type(f).exact_len is False
        f.add_many(KEYS[:1000])
        f.add("word")
        assert f.key_types == ("int", "str") and f.count == 1001
        assert abs(len(f) - 1001) < 60  # the Swamidass-Baldi estimate, from B_1
        f.fold(4)
        assert abs(len(f) - 1001) < 60 and f.count == 1001
        rate = f.predicted_fpr()
        assert isinstance(rate, float) and rate == pytest.approx(false_positive_rate(1001, f.num_bits, f.num_hashes))
        assert f.predicted_fpr(10) == pytest.approx(false_positive_rate(10, f.num_bits, f.num_hashes))
        info = f.info()
        assert info["structure"] == cls._STRUCTURE and info["m1"] == f.m1 and info["num_bits"] == f.num_bits
        assert info["fold_factor"] == 4 and info["size_history"] == [f.m1, f.num_bits] and info["count"] == 1001
        assert info["predicted_fpr"] == rate and info["size_in_bits"] == f.size_in_bits and info["retains_original"]
        assert info["fill_ratio"] == f.fill_ratio() and info["key_types"] == ["int", "str"]
        f.clear()
        assert f.count == 0 and f.key_types == () and not f and f.num_bits == f.m1 // 4
        assert not f.contains_many(KEYS[:1000]).any() and f.predicted_fpr() == 0.0
        f._check()
        f.unfold()  # B_1 was cleared too
        assert not f.contains_many(KEYS[:1000]).any()
        f._check()
        with pytest.raises(InvalidParameterError):
            f.predicted_fpr(-1)


def test_union_keeps_both_key_types() -> None:
    a = FoldableBloomFilter(5040, 3, seed=1)
    b = FoldableBloomFilter(5040, 3, seed=1)
    a.add_many(["x", "y"])
    b.add_many([1, 2])
    assert (a | b).key_types == ("int", "str") and (b | a).key_types == ("int", "str")
    assert (a & b).key_types == ()
    a |= b
    assert a.key_types == ("int", "str") and a.contains_many([1, 2, "x", "y"]).all() and a.count == 4
    a._check()
    assert (a | a) == a


def test_history_is_bounded() -> None:
    from bloomkit.folding.base import MAX_HISTORY

    f = FoldableBloomFilter(60, 2, seed=1)
    for _ in range(MAX_HISTORY // 2 + 3):
        f.fold(2)
        f.unfold()
    h = f.size_history
    assert len(h) == MAX_HISTORY and h[0] == 60 and h[-2:] == [30, 60]
    f._check()
    assert bloomkit.loads(f.to_bytes()).size_history == h


def test_planner_refuses_what_no_filter_holds_at_once() -> None:
    import time

    t = time.perf_counter()
    for call in (lambda: admissible_sizes(10**30, 3, 0.05, 0.01), lambda: admissible_sizes(2**62, 3, 0.05, 0.01),
                 lambda: next_size(5040, 10**30, 3, 0.05, 0.01), lambda: next_size(5040, 2**62, 3, 0.05, 0.01),
                 lambda: FoldableBloomFilter(5040, 3).fold_to_band(0.05, 0.01, n=10**30),
                 lambda: FoldableBloomFilter(5040, 3).fold_to_band(0.05, 0.01, n=2**62),
                 lambda: FoldableBloomFilter(5040, 3).fold_to_band(0.05, 0.01, sent=["x"]),
                 lambda: FoldableBloomFilter(5040, 3).predicted_fpr_at(100, n=-1),
                 lambda: choose_initial_size(200, 10**30, 3, 0.05, 0.01),
                 lambda: choose_initial_size(200, 2**61, 3, 0.05, 0.01)):
        with pytest.raises(InvalidParameterError):
            call()
    assert time.perf_counter() - t < 30  # minutes before (a +-1 walk); no timing in the normal sense
    # the largest n a filter holds still gets its exact band, quickly
    for n, k in ((10**15, 3), (2**58, 1), (10**17, 7)):
        lo, hi = admissible_sizes(n, k, 0.05, 0.01)
        assert false_positive_rate(n, lo, k) <= 0.06 < false_positive_rate(n, lo - 1, k)
        assert false_positive_rate(n, hi, k) >= 0.04 > false_positive_rate(n, hi + 1, k)


def test_foldable_size() -> None:
    from bloomkit.folding import foldable_size

    for m in (1, 63, 64, 9586, 10**6, 123457, 2**40 + 1):
        s = foldable_size(m)
        assert m <= s <= m + m // 64
    assert foldable_size(10**6) % 2520 == 0 and divisor_count(foldable_size(10**6)) >= 48
    assert foldable_size(2**63 - 1) == 2**63 - 1
    with pytest.raises(InvalidParameterError):
        foldable_size(0)


def test_loader_checks_sizes_history_and_origin_against_each_other() -> None:
    from bloomkit._format import pack

    f = FoldableCountingBloomFilter(120, 2, seed=1, counter_bits=4)
    f.add_many(KEYS[:10])
    f.fold(2)
    params, arrays = f._to_state()

    def load(p: dict, a: dict) -> object:
        return bloomkit.loads(pack(f._STRUCTURE, p, a, hash_id=1, seed=1))

    assert load(params, arrays) == f
    bad_params = [("history", [60]), ("history", [120, 7, 60]), ("history", []), ("history", [120] * 70000),
                  ("num_bits", 7), ("num_bits", 240), ("m1", 2**40), ("count", 2**63), ("set_version", -1),
                  ("retain_original", False), ("origin_overflowed", "x"), ("counter_bits", 8)]
    for key, value in bad_params:
        with pytest.raises(FormatError):
            load({**params, key: value}, arrays)
    with pytest.raises(FormatError, match="origin_overflowed"):
        load({**params, "retain_original": False, "origin_overflowed": True}, {"counters": arrays["counters"]})
    back = load({**params, "retain_original": False}, {"counters": arrays["counters"]})
    assert not back.retains_original and back.num_bits == 60
    with pytest.raises(FormatError):
        load(params, {"counters": arrays["counters"][:-1], "origin": arrays["origin"]})
    odd = FoldableCountingBloomFilter(45, 2, seed=1, counter_bits=4)
    p2, a2 = odd._to_state()
    pad = a2["origin"].copy()
    pad[-1] |= 0xF0
    with pytest.raises(FormatError, match="padding"):
        load(p2, {"counters": a2["counters"], "origin": pad})


# ------------------------------------------------------------------------------ threads and real data


@pytest.mark.parametrize("cls", [FoldableBloomFilter, FoldableCountingBloomFilter])
def test_adds_from_threads_while_another_thread_folds_unfolds_and_saves(cls: type) -> None:
    """4 writer threads (single keys and batches) and a reader while a sixth thread resizes,
    folds, unfolds and saves: no add is lost, the count is exact, the reader never misses a
    key added before (queries read one storage object: an unfold cannot pair a small array
    with a larger size), every saved snapshot is consistent."""
    import threading

    f = cls(2**6 * 3**2 * 5 * 7 * 11, 3, seed=8)
    before = [f"pre-{i}" for i in range(500)]
    f.add_many(before)
    sizes = [d for d in divisors(f.m1).tolist() if d >= 64]
    stop = threading.Event()
    errors: list[BaseException] = []
    snapshots: list[bytes] = []

    def writer(w: int) -> None:
        try:
            for i in range(300):
                f.add(f"w{w}-{i}")
                f.add_many(np.arange(i * 10, i * 10 + 10, dtype=np.int64) + w * 10**6)
        except BaseException as e:
            errors.append(e)

    def reader() -> None:
        while not stop.is_set():
            if not (f.contains_many(before).all() and before[7] in f):
                errors.append(AssertionError("a key added before was missed"))
                return

    def shaper() -> None:
        i = 0
        while not stop.is_set():
            try:
                f.resize(sizes[i % len(sizes)])
                if i % 7 == 0:
                    snapshots.append(f.to_bytes())
                if i % 5 == 0:
                    f.fold(2) if f.num_bits % 2 == 0 else f.unfold()
            except BaseException as e:
                errors.append(e)
                return
            i += 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    others = [threading.Thread(target=shaper), threading.Thread(target=reader)]
    for t in others + threads:
        t.start()
    for t in threads:
        t.join(120)
    stop.set()
    for t in others:
        t.join(120)
    assert not errors, errors[:3]
    f._check()
    assert f.count == 500 + 4 * 300 * 11 and snapshots
    for w in range(4):
        assert f.contains_many([f"w{w}-{i}" for i in range(300)]).all()
        assert f.contains_many(np.arange(3000, dtype=np.int64) + w * 10**6).all()
    f.unfold()
    assert f.contains_many(np.arange(3000, dtype=np.int64) + 3 * 10**6).all()
    for raw in snapshots:  # every save saw B_t and B_1 of the same adds
        bloomkit.loads(raw)._check()


@pytest.mark.parametrize("probes", PROBES)
def test_real_data_inputs_answer_like_the_filter_built_at_the_folded_size(probes: str) -> None:
    """pandas (shuffled index, string, categorical, nullable), pyarrow, polars: the folded filter
    answers exactly as a plain filter built at the folded size from a Python list."""
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    words = [f"w{i}" for i in range(2000)]
    ints = list(range(-1000, 1000))
    rng = np.random.default_rng(3)
    inputs = {
        "pandas str, shuffled index": (pd.Series(words, index=rng.permutation(2000), dtype="string"), words),
        "pandas categorical, reversed index": (pd.Series(words, index=range(1999, -1, -1), dtype="category"), words),
        "pandas Int64, shuffled index": (pd.Series(ints, index=rng.permutation(2000), dtype="Int64"), ints),
        "pandas one-column frame": (pd.DataFrame({"w": words}, index=rng.permutation(2000)), words),
        "pyarrow dictionary": (pa.array(words).dictionary_encode(), words),
        "pyarrow chunked int": (pa.chunked_array([pa.array(ints[:700]), pa.array(ints[700:])]), ints),
        "polars": (pl.Series(words), words),
    }
    probe_str = [f"q{i}" for i in range(5000)] + words
    probe_int = list(range(10**6, 10**6 + 5000)) + ints
    for name, (data, plain) in inputs.items():
        for cls in (FoldableBloomFilter, FoldableCountingBloomFilter):
            f = cls(2**5 * 3**2 * 5 * 7, 3, seed=12, probes=probes)
            f.add_many(data)
            f.fold(12)
            ref = BloomFilter(num_bits=f.num_bits, num_hashes=3, seed=12, probes=probes)
            ref.add_many(plain)
            probe = probe_str if isinstance(plain[0], str) else probe_int
            assert np.array_equal(f.contains_many(probe), ref.contains_many(probe)), (name, cls.__name__)
            assert f.contains_many(data).all() and f.count == len(plain)
            assert f.key_types == (("str",) if isinstance(plain[0], str) else ("int",))
            if cls is FoldableCountingBloomFilter:  # removal by the same input, by position
                f.remove_many(data)
                assert f.count == 0 and not f.contains_many(plain).any()
    with pytest.raises(InvalidParameterError, match="keys"):
        FoldableBloomFilter(60, 2, probes=probes).add_many(pd.Series(["a", None, "b"]))
    with pytest.raises(InvalidParameterError):
        FoldableCountingBloomFilter(60, 2, probes=probes).remove_many(pd.Series(["a", None]))
