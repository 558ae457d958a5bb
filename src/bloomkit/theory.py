"""Classic Bloom filter formulas shared by every module.

Notation of document 000 (Section II): ``m`` bits, ``n`` inserted elements, ``k`` hash
functions; ``p`` is the probability that a given bit is still 0 (Eq. 1) and ``f`` the false
positive rate (Eq. 2). Every function accepts scalars or numpy arrays (broadcast).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import Bool, check_broadcast, check_float, check_int, check_reals
from .errors import InvalidParameterError

__all__ = [
    "binomial_sd",
    "double_hashing_fpr",
    "estimate_count",
    "false_positive_rate",
    "fill_ratio",
    "fpr_sd",
    "num_bits_for",
    "optimal_num_hashes",
    "wilson_interval",
    "zero_bit_probability",
]

LN2 = float(np.log(2.0))


def _ret(x: Any) -> Any:
    a = np.asarray(x)
    return float(a) if a.ndim == 0 else a


def _nmk(n: Any, m: Any, k: Any, owner: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n >= 0 keys, m >= 1 bits, k >= 0 probes as float arrays (NaN, strs, ... refused by name)."""
    out = (check_reals(n, "n", owner, lo=0), check_reals(m, "m", owner, lo=1), check_reals(k, "k", owner, lo=0))
    check_broadcast(owner, n=out[0], m=out[1], k=out[2])
    return out


def zero_bit_probability(n: Any, m: Any, k: Any, exact: bool = True) -> Any:
    """Probability that a bit is still 0 after n insertions, doc 000 Eq. (1).

    .. math:: p = (1 - 1/m)^{nk} \\approx e^{-nk/m}

    Parameters
    ----------
    n, m, k : float or array_like
        Inserted elements, bits, hash functions.
    exact : bool
        ``(1 - 1/m)^{nk}`` if True, ``exp(-nk/m)`` otherwise.

    >>> round(zero_bit_probability(1000, 9586, 7), 4)
    0.4818
    """
    n, m, k = _nmk(n, m, k, "zero_bit_probability")
    if Bool()(exact, "exact", "zero_bit_probability"):
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.exp(n * k * np.log1p(-1.0 / m))
        # a one-bit filter (a legal fold target): p = 0 once anything is inserted, 1 before
        return _ret(np.where(m == 1, (n * k == 0).astype(float), p))
    return _ret(np.exp(-n * k / m))


def fill_ratio(n: Any, m: Any, k: Any, exact: bool = True) -> Any:
    """Expected fraction of set bits, ``1 - p`` (doc 000 Eq. 1).

    >>> round(fill_ratio(1000, 9586, 7), 4)
    0.5182
    """
    n, m, k = _nmk(n, m, k, "fill_ratio")
    return _ret(1.0 - np.asarray(zero_bit_probability(n, m, k, exact)))


def false_positive_rate(n: Any, m: Any, k: Any, exact: bool = True) -> Any:
    """False positive rate, doc 000 Eq. (2).

    .. math:: f = (1 - p)^k \\approx (1 - e^{-nk/m})^k

    >>> round(false_positive_rate(1000, 9586, 7), 5)
    0.01004
    """
    n, m, k = _nmk(n, m, k, "false_positive_rate")
    return _ret(np.asarray(fill_ratio(n, m, k, exact)) ** k)


def double_hashing_fpr(n: Any, m: Any, k: Any, exact: bool = True) -> Any:
    """False positive rate of a filter probed by (enhanced) double hashing
    (``BloomFilter(probes="double")``, :mod:`bloomkit._engine.probes`).

    Kirsch & Mitzenmacher, "Less hashing, same performance: building a better Bloom filter"
    (Random Structures & Algorithms 33(2), 2008, Theorem 5.2 with Section 5's example): probes
    ``g_i = h1 + i h2 (mod m)`` give the rate of k independent hashes asymptotically, plus
    the chance that a query's pair ``(h1, h2) mod m`` equals an inserted key's, when all its
    probes are that key's (Dillinger & Manolios' cubic term does not change it)::

        f_dh = f + (1 - f) (1 - (1 - 1/m^2)^n)   ~   f + n / m^2,     f = doc 000 Eq. (2)

    Exact in that form when m divides 2**64 (the sums mod 2**64 are then sums mod m); for
    other m the wraps at 2**64 make a full coincidence rarer, so the model is an upper bound
    by at most ``n / m^2`` (1e-7 at n = 10^5, m = 10^6). Checked against simulation in
    tests/test_calibration.py.

    >>> round(double_hashing_fpr(1000, 9586, 7), 5)
    0.01005
    """
    n, m, k = _nmk(n, m, k, "double_hashing_fpr")
    f = np.asarray(false_positive_rate(n, m, k, exact))
    both = -np.expm1(n * np.log1p(-1.0 / (m * m))) if exact else -np.expm1(-n / (m * m))
    return _ret(f + (1.0 - f) * both)


def optimal_num_hashes(n: Any, m: Any) -> Any:
    """k minimizing Eq. (2): ``round((m/n) ln 2)``, at least 1 (doc 000, after Eq. 2).

    >>> optimal_num_hashes(1000, 9586)
    7
    """
    n = check_reals(n, "n", "optimal_num_hashes", lo=0, lo_open=True)
    m = check_reals(m, "m", "optimal_num_hashes", lo=1, hi=2.0**62)
    check_broadcast("optimal_num_hashes", n=n, m=m)
    k = np.minimum(np.maximum(1, np.rint(m / n * LN2)), 2.0**62)
    a = k.astype(np.int64)
    return int(a) if a.ndim == 0 else a


def num_bits_for(n: Any, fpr: Any) -> Any:
    """Bits for n elements at false positive rate ``fpr`` with the optimal k:
    ``m = ceil(-n ln(fpr) / (ln 2)^2)`` (doc 000, Section I: 1.44 log2(1/f) bits per element).

    >>> num_bits_for(1000, 0.01)
    9586
    """
    n = check_reals(n, "n", "num_bits_for", lo=0)
    fpr = check_reals(fpr, "fpr", "num_bits_for", 0, 1, lo_open=True, hi_open=True)
    check_broadcast("num_bits_for", n=n, fpr=fpr)
    m = np.ceil(-n * np.log(fpr) / LN2**2)
    if (m >= 2.0**63).any():
        raise InvalidParameterError(
            f"The 'n' parameter of num_bits_for needs more than 2**63 bits at the requested fpr. Got {_ret(n)!r} instead."
        )
    a = np.maximum(m, 1).astype(np.int64)
    return int(a) if a.ndim == 0 else a


def estimate_count(set_bits: Any, m: Any, k: Any) -> Any:
    """Swamidass-Baldi estimate of the number of inserted elements from the set bits X:

    .. math:: n^* = -\\frac{m}{k} \\ln\\left(1 - \\frac{X}{m}\\right)

    Returns ``inf`` for a full filter.

    >>> round(estimate_count(4967, 9586, 7), 1)
    999.9
    """
    x = check_reals(set_bits, "set_bits", "estimate_count", lo=0)
    m = check_reals(m, "m", "estimate_count", lo=1)
    k = check_reals(k, "k", "estimate_count", lo=0, lo_open=True)
    check_broadcast("estimate_count", set_bits=x, m=m, k=k)
    if (x > m).any():
        raise InvalidParameterError("The 'set_bits' parameter of estimate_count must be at most m. "
                                    f"Got {_ret(x)!r} for m = {_ret(m)!r} instead.")
    with np.errstate(divide="ignore"):
        return _ret(-m / k * np.log1p(-x / m))


# ---------------------------------------------------------------------------------------------
# statistics of measured rates: the tolerances of the seeded statistical tests


def binomial_sd(p: float, trials: int) -> float:
    """Standard deviation of a proportion measured over ``trials`` Bernoulli(p) trials:
    ``sqrt(p (1 - p) / trials)``.

    >>> round(binomial_sd(0.01, 10_000), 5)
    0.00099
    """
    p = check_float(p, "p", "binomial_sd", 0, 1)
    trials = check_int(trials, "trials", "binomial_sd", hi=1 << 62)
    return float(np.sqrt(p * (1.0 - p) / max(trials, 1)))


def wilson_interval(successes: int, trials: int, z: float = 3.0) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (``z`` standard deviations).

    >>> lo, hi = wilson_interval(10, 1000)
    >>> round(lo, 4), round(hi, 4)
    (0.004, 0.0247)
    """
    trials = check_int(trials, "trials", "wilson_interval", hi=1 << 62)
    successes = check_int(successes, "successes", "wilson_interval", 0, max(trials, 0))
    z = check_float(z, "z", "wilson_interval", lo=0)
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    d = 1 + z * z / trials
    c = (p + z * z / (2 * trials)) / d
    h = z * np.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / d
    return max(0.0, float(c - h)), min(1.0, float(c + h))


def fpr_sd(n: int, m: int, k: int, probes: int) -> float:
    """Standard deviation of the FPR measured on one filter of n keys with ``probes`` absent
    keys: the binomial sd of the probes combined with the filter-to-filter spread of the fill
    ratio (delta method: FPR = fill^k, and the number of set bits has variance at most
    m p (1 - p), p = doc 000 Eq. (1)).

    >>> round(fpr_sd(1000, 9586, 7, 100_000), 5)
    0.00076
    """
    owner = "fpr_sd"
    nf, mf = check_float(n, "n", owner, lo=0), check_float(m, "m", owner, lo=1)
    kf, trials = check_float(k, "k", owner, lo=0, lo_open=True), check_int(probes, "probes", owner, lo=1)
    f = float(false_positive_rate(nf, mf, kf))
    if f == 0.0:
        return 0.0
    fill = f ** (1.0 / kf)
    sd_fill = np.sqrt(fill * (1 - fill) / mf)
    return float(np.sqrt(f * (1 - f) / trials + (kf * f * sd_fill / fill) ** 2))
