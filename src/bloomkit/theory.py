"""Classic Bloom filter formulas shared by every module.

Notation of document 000 (Section II): ``m`` bits, ``n`` inserted elements, ``k`` hash
functions; ``p`` is the probability that a given bit is still 0 (Eq. 1) and ``f`` the false
positive rate (Eq. 2). Every function accepts scalars or numpy arrays (broadcast).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "binomial_sd",
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
    n, m, k = (np.asarray(v, dtype=float) for v in (n, m, k))
    if exact:
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
    return _ret(1.0 - np.asarray(zero_bit_probability(n, m, k, exact)))


def false_positive_rate(n: Any, m: Any, k: Any, exact: bool = True) -> Any:
    """False positive rate, doc 000 Eq. (2).

    .. math:: f = (1 - p)^k \\approx (1 - e^{-nk/m})^k

    >>> round(false_positive_rate(1000, 9586, 7), 5)
    0.01004
    """
    k_arr = np.asarray(k, dtype=float)
    return _ret(np.asarray(fill_ratio(n, m, k, exact)) ** k_arr)


def optimal_num_hashes(n: Any, m: Any) -> Any:
    """k minimizing Eq. (2): ``round((m/n) ln 2)``, at least 1 (doc 000, after Eq. 2).

    >>> optimal_num_hashes(1000, 9586)
    7
    """
    k = np.maximum(1, np.rint(np.asarray(m, dtype=float) / np.asarray(n, dtype=float) * LN2))
    a = k.astype(np.int64)
    return int(a) if a.ndim == 0 else a


def num_bits_for(n: Any, fpr: Any) -> Any:
    """Bits for n elements at false positive rate ``fpr`` with the optimal k:
    ``m = ceil(-n ln(fpr) / (ln 2)^2)`` (doc 000, Section I: 1.44 log2(1/f) bits per element).

    >>> num_bits_for(1000, 0.01)
    9586
    """
    m = np.ceil(-np.asarray(n, dtype=float) * np.log(np.asarray(fpr, dtype=float)) / LN2**2)
    a = np.maximum(m, 1).astype(np.int64)
    return int(a) if a.ndim == 0 else a


def estimate_count(set_bits: Any, m: Any, k: Any) -> Any:
    """Swamidass-Baldi estimate of the number of inserted elements from the set bits X:

    .. math:: n^* = -\\frac{m}{k} \\ln\\left(1 - \\frac{X}{m}\\right)

    Returns ``inf`` for a full filter.

    >>> round(estimate_count(4967, 9586, 7), 1)
    999.9
    """
    x = np.asarray(set_bits, dtype=float)
    m = np.asarray(m, dtype=float)
    with np.errstate(divide="ignore"):
        return _ret(-m / np.asarray(k, dtype=float) * np.log1p(-x / m))


# ---------------------------------------------------------------------------------------------
# statistics of measured rates: the tolerances of the seeded statistical tests


def binomial_sd(p: float, trials: int) -> float:
    """Standard deviation of a proportion measured over ``trials`` Bernoulli(p) trials:
    ``sqrt(p (1 - p) / trials)``.

    >>> round(binomial_sd(0.01, 10_000), 5)
    0.00099
    """
    return float(np.sqrt(p * (1.0 - p) / max(int(trials), 1)))


def wilson_interval(successes: int, trials: int, z: float = 3.0) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (``z`` standard deviations).

    >>> lo, hi = wilson_interval(10, 1000)
    >>> round(lo, 4), round(hi, 4)
    (0.004, 0.0247)
    """
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
    f = float(false_positive_rate(n, m, k))
    fill = f ** (1.0 / k)
    sd_fill = np.sqrt(fill * (1 - fill) / m)
    return float(np.sqrt(f * (1 - f) / probes + (k * f * sd_fill / fill) ** 2))
