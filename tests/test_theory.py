"""Classic formulas (doc 000 Eqs. 1-2); the doctests of every module run in tests/test_docs.py."""

from __future__ import annotations

import numpy as np
import pytest

from bloomkit import InvalidParameterError, theory
from bloomkit._validation import check_choice, check_float, check_int


def test_formulas_agree_and_vectorize():
    n, m, k = np.array([100, 1000]), 9586, np.array([3, 7])
    exact = theory.false_positive_rate(n, m, k)
    approx = theory.false_positive_rate(n, m, k, exact=False)
    assert exact.shape == (2,) and np.allclose(exact, approx, rtol=1e-3)
    assert theory.zero_bit_probability(0, 10, 3) == 1.0
    assert theory.fill_ratio(10**9, 10, 3) == pytest.approx(1.0)
    # k = (m/n) ln 2 minimizes the rate and makes p = 1/2 (doc 000, after Eq. 2)
    ks = np.arange(1, 20)
    best = ks[np.argmin(theory.false_positive_rate(1000, 9586, ks))]
    assert best == theory.optimal_num_hashes(1000, 9586) == 7
    assert theory.zero_bit_probability(1000, 9586, 6.644, exact=False) == pytest.approx(0.5, abs=1e-3)
    # m(n, fpr) with optimal k reaches the target rate
    m2 = theory.num_bits_for(10_000, 0.001)
    assert theory.false_positive_rate(10_000, m2, theory.optimal_num_hashes(10_000, m2)) <= 0.00101
    assert list(theory.num_bits_for(np.array([10, 100]), 0.01)) == [96, 959]


def test_estimate_count_inverts_fill():
    m, k = 10_000, 5
    for n in (10, 500, 1500):
        x = m * theory.fill_ratio(n, m, k, exact=False)
        assert theory.estimate_count(x, m, k) == pytest.approx(n)
    assert theory.estimate_count(m, m, k) == np.inf


def test_validation_helpers():
    assert check_int(np.int64(3), "a", "X", lo=1) == 3
    assert check_float(np.float32(0.5), "a", "X", 0, 1) == 0.5
    for bad in (True, 1.5, "1", None):
        with pytest.raises(InvalidParameterError):
            check_int(bad, "a", "X")
    for bad in (float("nan"), float("inf"), "0.5", None, np.bool_(True)):
        with pytest.raises(InvalidParameterError):
            check_float(bad, "a", "X")
    with pytest.raises(InvalidParameterError, match=r"must be in \[0, 1\)"):
        check_float(1.0, "a", "X", 0, 1, hi_open=True)
    with pytest.raises(InvalidParameterError, match="one of 'a', 'b'"):
        check_choice("c", "mode", "X", ("a", "b"))
    with pytest.raises(InvalidParameterError):
        check_choice([], "mode", "X", ("a", "b"))
