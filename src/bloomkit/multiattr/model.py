"""Analytic model of the parallel Bloom filter with a verification table (document 004).

Notation of the document: ``p`` attributes per item, ``q`` hash functions per attribute,
``m`` counters per array; the PBF holds ``p*q*m`` counters (Section 3.1). ``H_ij(a_i)`` in
[0, m) is the position of attribute i under hash j. The verification value is

* basic method (Section 3.3):       V_a = sum_i sum_j H_ij(a_i)
* attenuated / improved method:     V_a = sum_i sum_j H_ij(a_i) / 2^j, kept as the integer
  sum_i sum_j H_ij(a_i) * 2^(q-j) (same collisions; ERRATA.md, 004).

The document prints no numbered equations; the model here is ours and is checked against
simulation in ``tests/statistical/test_multiattr_model.py``. A query passes the two-step check
of Fig. 3 if (1) all p*q counters are non-zero and (2) its V_a is in the table.

* PBF stage: for a query whose attribute values were never stored, each of the p*q probes hits
  a non-zero counter with probability ``1 - (1 - 1/m)^n`` (n distinct stored values of that
  attribute), so ``P1 = (1 - (1 - 1/m)^n)^(p q)`` (:func:`pbf_pass_probability`).
* table stage: V of a random item is a sum of p*q independent uniform terms ``w_j * U{0..m-1}``;
  its distribution is their convolution (:func:`verification_pmf`, exact by FFT). Two items
  that differ in r attributes collide with probability ``c_r = sum_v P_r(V = v)^2``
  (:func:`collision_probability`).
* fresh query: ``FPR = P1 * (1 - (1 - c_p)^n)`` (independence of the two stages assumed);
  recombined query (each attribute taken from a different stored item, so the PBF stage always
  passes): ``FPR = 1 - (1 - c_p)^(n - p) (1 - c_(p-1))^p`` (:func:`two_step_fpr`).

Theorems 1 and 2 of Section 5.1 are :func:`theorem1_union_fprs` and
:func:`theorem2_probability`; Fig. 6's union / intersection comparisons use
:func:`bf_union_fpr`, :func:`bf_intersection_fpr`, :func:`pbf_union_fpr` and
:func:`pbf_intersection_fpr`.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import fft as sfft
from scipy import special

from .. import theory
from .._validation import (
    CAPACITY,
    FPR,
    Options,
    check_broadcast,
    check_choice,
    check_int,
    check_reals,
    safe_repr,
)
from ..errors import InvalidParameterError

__all__ = [
    "EXACT_PMF_LIMIT",
    "bf_intersection_fpr",
    "bf_union_fpr",
    "collision_probability",
    "max_verification_value",
    "optimal_parameters",
    "overflow_expectation",
    "pbf_intersection_fpr",
    "pbf_pass_probability",
    "pbf_union_fpr",
    "sbf_fpr",
    "table_hit_probability",
    "table_stage_probability",
    "theorem1_union_fprs",
    "theorem2_probability",
    "two_step_fpr",
    "verification_moments",
    "verification_pmf",
    "verification_weights",
]

VERIFICATIONS = ("attenuated", "basic")
#: largest V_max + 1 for which the exact distribution is computed (beyond: local normal limit)
EXACT_PMF_LIMIT = 1 << 23


COUNTER_BITS = Options(4, 8, 16, 32)
MAX_ATTRIBUTES = 1 << 16
MAX_COUNTERS = 1 << 40


def _pqm(owner: str, num_attributes: Any, num_hashes: Any, num_counters: Any, verification: Any = "attenuated",
         *, min_attributes: int = 1) -> tuple[int, int, int]:
    """p, q, m checked (p attributes, q in 1..62 hashes, m counters per array) and the
    verification method."""
    p = check_int(num_attributes, "num_attributes", owner, lo=min_attributes, hi=MAX_ATTRIBUTES)
    q = check_int(num_hashes, "num_hashes", owner, lo=1, hi=62)
    m = check_int(num_counters, "num_counters", owner, lo=1, hi=MAX_COUNTERS)
    check_choice(verification, "verification", owner, VERIFICATIONS)
    return p, q, m


def _sizes(owner: str, **values: Any) -> list[np.ndarray]:
    """Item counts (n, n_a, ...): reals >= 0 or arrays of them."""
    return [check_reals(v, name, owner, lo=0) for name, v in values.items()]


def _overlap(owner: str, n_a: Any, n_b: Any, n_ab: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """|A|, |B|, |A n B| with |A n B| <= min(|A|, |B|)."""
    a, b, ab = _sizes(owner, n_a=n_a, n_b=n_b, n_ab=n_ab)
    check_broadcast(owner, n_a=a, n_b=b, n_ab=ab)
    if (ab > np.minimum(a, b)).any():
        raise InvalidParameterError(
            f"The 'n_ab' parameter of {owner} must be at most n_a and n_b (|A n B| <= |A|, |B|). "
            f"Got n_ab = {safe_repr(n_ab)}, n_a = {safe_repr(n_a)}, n_b = {safe_repr(n_b)} instead.")
    return a, b, ab


def verification_weights(num_hashes: int, verification: str = "attenuated") -> np.ndarray:
    """Integer weights w_j (j = 1..q) of the verification value (Section 3.3).

    ``2^(q-j)`` for the attenuated (improved) method, the integer form of ``1/2^j``;
    ``1`` for the basic method.

    >>> verification_weights(4).tolist()
    [8, 4, 2, 1]
    >>> verification_weights(3, "basic").tolist()
    [1, 1, 1]
    """
    q = check_int(num_hashes, "num_hashes", "verification_weights", lo=1, hi=62)
    check_choice(verification, "verification", "verification_weights", VERIFICATIONS)
    if verification == "basic":
        return np.ones(q, dtype=np.int64)
    return np.array([1 << (q - j) for j in range(1, q + 1)], dtype=np.int64)


def max_verification_value(num_attributes: int, num_hashes: int, num_counters: int,
                           verification: str = "attenuated") -> int:
    """Largest V_a: ``p (m - 1) sum_j w_j``.

    >>> max_verification_value(2, 3, 10)
    126
    """
    p, q, m = _pqm("max_verification_value", num_attributes, num_hashes, num_counters, verification)
    w = verification_weights(q, verification)
    return p * (m - 1) * int(w.sum())


def verification_moments(num_attributes: int, num_hashes: int, num_counters: int,
                         verification: str = "attenuated") -> tuple[float, float]:
    """Mean and variance of V_a for an item of random attribute values.

    ``E V = p (m - 1)/2 sum_j w_j``, ``Var V = p (m^2 - 1)/12 sum_j w_j^2``.

    >>> verification_moments(1, 1, 3, "basic")
    (1.0, 0.6666666666666666)
    """
    pi, q, mi = _pqm("verification_moments", num_attributes, num_hashes, num_counters, verification)
    w = verification_weights(q, verification).astype(float)
    p, m = float(pi), float(mi)
    return p * (m - 1) / 2 * float(w.sum()), p * (m * m - 1) / 12 * float((w * w).sum())


@lru_cache(maxsize=32)
def _pmf_cached(p: int, q: int, m: int, verification: str) -> np.ndarray:
    w = verification_weights(q, verification)
    vmax = max_verification_value(p, q, m, verification)
    n = sfft.next_fast_len(vmax + 1, real=True)
    spec = np.ones(n // 2 + 1, dtype=complex)
    for wj in w:
        u = np.zeros(n)
        u[: (m - 1) * int(wj) + 1 : int(wj)] = 1.0 / m
        spec *= sfft.rfft(u)
    pmf: np.ndarray = sfft.irfft(spec**p, n)[: vmax + 1]
    pmf = np.clip(pmf, 0.0, None)
    pmf /= pmf.sum()
    pmf.setflags(write=False)
    return pmf


def verification_pmf(num_attributes: int, num_hashes: int, num_counters: int,
                     verification: str = "attenuated") -> np.ndarray:
    """Exact distribution of V_a over 0..V_max for random attribute values (FFT convolution).

    Each of the p*q terms is ``w_j * U{0, ..., m-1}`` and the terms are independent.
    Raises InvalidParameterError if ``V_max + 1 > EXACT_PMF_LIMIT``.

    >>> verification_pmf(1, 2, 2, "basic").round(3).tolist()
    [0.25, 0.5, 0.25]

    Complexity: O(V_max log V_max) time, O(V_max) memory (cached).
    """
    p, q, m = _pqm("verification_pmf", num_attributes, num_hashes, num_counters, verification)
    vmax = max_verification_value(p, q, m, verification)
    if vmax + 1 > EXACT_PMF_LIMIT:
        raise InvalidParameterError(
            f"The exact verification distribution has {vmax + 1} values, more than "
            f"EXACT_PMF_LIMIT = {EXACT_PMF_LIMIT}; use the normal approximation."
        )
    return _pmf_cached(p, q, m, verification)


def collision_probability(num_attributes: int, num_hashes: int, num_counters: int,
                          verification: str = "attenuated", exact: bool | None = None) -> float:
    """Probability that two items differing in all ``r = num_attributes`` attributes have the
    same verification value: ``c_r = sum_v P(V = v)^2``.

    Exact (FFT) when the support is small enough, else the local limit theorem for a lattice
    of span 1: ``c ~ 1 / (2 sqrt(pi) sigma)``, sigma^2 the variance of V.

    >>> round(collision_probability(4, 6, 1280, "basic"), 7)  # doctest: +SKIP
    0.0001558
    >>> collision_probability(1, 1, 4, "basic")
    0.25
    """
    p, _, _ = _pqm("collision_probability", num_attributes, num_hashes, num_counters, verification,
                   min_attributes=0)
    if exact is not None and not isinstance(exact, bool):
        raise InvalidParameterError(f"The 'exact' parameter of collision_probability must be None or a bool. "
                                    f"Got {safe_repr(exact)} instead.")
    if p == 0:
        return 1.0
    vmax = max_verification_value(p, num_hashes, num_counters, verification)
    if exact is None:
        exact = vmax + 1 <= EXACT_PMF_LIMIT
    if exact:
        pmf = verification_pmf(p, num_hashes, num_counters, verification)
        return float(np.dot(pmf, pmf))
    _, var = verification_moments(p, num_hashes, num_counters, verification)
    if var <= 0.0:  # m = 1 (probed by optimal_parameters' bisection): every item has the same V;
        return math.nextafter(1.0, 0.0)  # 1 up to rounding, so that callers' log1p(-c) stays finite
    return min(1.0, 1.0 / (2.0 * math.sqrt(math.pi * var)))


def table_hit_probability(values: np.ndarray, num_attributes: int, num_hashes: int,
                          num_counters: int, verification: str = "attenuated") -> float:
    """Probability that a random item's V_a is one of the distinct ``values`` of a table.

    ``sum_{v in T} P(V = v)`` with the exact distribution when available, else the normal
    density. Used by :meth:`ParallelBloomFilter.predicted_fpr`.

    Complexity: O(len(values)) after the (cached) distribution.
    """
    owner = "table_hit_probability"
    _pqm(owner, num_attributes, num_hashes, num_counters, verification)
    vmax = max_verification_value(num_attributes, num_hashes, num_counters, verification)
    v = check_reals(values, "values", owner, lo=0, hi=vmax).astype(np.int64)
    if v.size == 0:
        return 0.0
    if vmax + 1 <= EXACT_PMF_LIMIT:
        pmf = verification_pmf(num_attributes, num_hashes, num_counters, verification)
        return float(min(1.0, pmf[v].sum()))
    mean, var = verification_moments(num_attributes, num_hashes, num_counters, verification)
    z = (v.astype(float) - mean) / math.sqrt(var)
    return float(min(1.0, (np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi * var)).sum()))


def table_stage_probability(n: Any, num_attributes: int, num_hashes: int, num_counters: int,
                            verification: str = "attenuated", exact: bool | None = None) -> Any:
    """Probability that a random item's V_a equals that of at least one of n independent
    random items: ``sum_v P(V = v) (1 - (1 - P(V = v))^n)``.

    Exact over the distribution of V when it is available (``exact=None``: when
    ``V_max < EXACT_PMF_LIMIT``); otherwise (or with ``exact=False``) ``1 - (1 - c_p)^n`` with
    the local normal limit of c_p (larger by Jensen's inequality, noticeably only when
    ``n c_p`` is not small).

    >>> a = table_stage_probability(2000, 2, 5, 1024, "basic")
    >>> b = 1 - (1 - collision_probability(2, 5, 1024, "basic")) ** 2000
    >>> bool(a < b)
    True
    """
    p, _, _ = _pqm("table_stage_probability", num_attributes, num_hashes, num_counters, verification)
    (nn,) = _sizes("table_stage_probability", n=n)
    vmax = max_verification_value(p, num_hashes, num_counters, verification)
    if exact is None:
        exact = vmax + 1 <= EXACT_PMF_LIMIT
    if exact:
        pmf = verification_pmf(p, num_hashes, num_counters, verification)
        pmf = pmf[pmf > 0]
        lg = np.log1p(-np.minimum(pmf, 1 - 1e-16))
        out = np.array([float(np.dot(pmf, -np.expm1(x * lg))) for x in nn.ravel()]).reshape(nn.shape)
    else:
        cp = collision_probability(p, num_hashes, num_counters, verification, exact=False)
        out = -np.expm1(nn * np.log1p(-cp))
    return float(out) if out.ndim == 0 else out


def pbf_pass_probability(n: Any, num_attributes: int, num_hashes: int, num_counters: int) -> Any:
    """Probability that a fresh item passes the PBF stage (step 1 of Fig. 3).

    ``P1 = (1 - (1 - 1/m)^n)^(p q)``: each of the p*q arrays has one probe per attribute and
    received n insertions (n distinct values of each attribute).

    >>> round(pbf_pass_probability(1280, 3, 7, 1280), 6)
    6.6e-05
    """
    p, q, m = _pqm("pbf_pass_probability", num_attributes, num_hashes, num_counters)
    (nn,) = _sizes("pbf_pass_probability", n=n)
    fill = np.asarray(theory.fill_ratio(nn, m, 1))
    out = fill ** (p * q)
    return float(out) if out.ndim == 0 else out


def two_step_fpr(n: Any, num_attributes: int, num_hashes: int, num_counters: int,
                 verification: str = "attenuated", query: str = "fresh", exact: bool | None = None) -> Any:
    """False positive rate of the two-step check (Fig. 3) after n random items.

    ``query="fresh"``: attribute values never stored,
    ``FPR = P1 (1 - (1 - c_p)^n)``.
    ``query="recombined"``: attribute i taken from a different stored item for every i (the
    case the verification table exists for; the PBF stage always passes),
    ``FPR = 1 - (1 - c_p)^(n - p) (1 - c_(p-1))^p``.
    ``1 - (1 - c_p)^N`` is evaluated as :func:`table_stage_probability` (exact average over
    the query's V when the distribution is available; ``exact`` as there).

    >>> f = two_step_fpr(200, 4, 6, 1280, "attenuated", "recombined")
    >>> 0.001 < f < 0.003
    True
    """
    check_choice(query, "query", "two_step_fpr", ("fresh", "recombined"))
    p, q, m = _pqm("two_step_fpr", num_attributes, num_hashes, num_counters, verification)
    (nn,) = _sizes("two_step_fpr", n=n)
    if query == "fresh":
        out = np.asarray(pbf_pass_probability(nn, p, q, m)) * np.asarray(
            table_stage_probability(nn, p, q, m, verification, exact))
    else:
        if p < 2:
            raise InvalidParameterError(
                f"The 'query' parameter of two_step_fpr can be 'recombined' only for p >= 2. Got p = {p} instead."
            )
        cq = collision_probability(p - 1, q, m, verification, exact)
        rest = np.asarray(table_stage_probability(np.maximum(nn - p, 0.0), p, q, m, verification, exact))
        out = 1.0 - (1.0 - rest) * np.exp(np.minimum(nn, p) * np.log1p(-cq))
    return float(out) if out.ndim == 0 else out


def sbf_fpr(n: Any, num_bits: Any, num_hashes: Any) -> Any:
    """False positive rate of the standard Bloom filter over concatenated attributes (SBF,
    Section 6): the classic ``(1 - (1 - 1/m)^(k n))^k`` of :mod:`bloomkit.theory`."""
    return theory.false_positive_rate(n, num_bits, num_hashes)


def theorem1_union_fprs(n_a: Any, n_b: Any, n_union: Any, m: Any, k: Any) -> tuple[Any, Any, Any]:
    """Theorem 1 (Section 5.1): false positive rates of BF(A), BF(B) and BF(A u B).

    ``(1 - (1 - 1/m)^(k|X|))^k`` for X = A, B, A u B; since |A u B| >= max(|A|, |B|) the last
    is the largest.

    >>> a, b, u = theorem1_union_fprs(100, 150, 200, 1280, 6)
    >>> bool(u >= max(a, b))
    True
    """
    f = theory.false_positive_rate
    return f(n_a, m, k), f(n_b, m, k), f(n_union, m, k)


def theorem2_probability(n_a: Any, n_b: Any, n_ab: Any, m: Any, k: Any) -> Any:
    """Theorem 2 (Section 5.1): probability that the false positive rate of BF(A n B) is smaller
    than that of BF(A) n BF(B) (a bit is set by A - (A n B) and by B - (A n B)):

    ``(1 - (1 - 1/m)^(k|A - A n B|)) (1 - (1 - 1/m)^(k|B - A n B|))``

    >>> round(theorem2_probability(100, 100, 50, 1280, 6), 4)
    0.0437
    """
    a, b, ab = _overlap("theorem2_probability", n_a, n_b, n_ab)
    fa = np.asarray(theory.fill_ratio(a - ab, m, k))
    fb = np.asarray(theory.fill_ratio(b - ab, m, k))
    out = fa * fb
    return float(out) if out.ndim == 0 else out


def bf_union_fpr(n_a: Any, n_b: Any, n_ab: Any, m: Any, k: Any) -> Any:
    """FPR of BF(A) | BF(B) (bitwise OR, Definition 1): identical to BF(A u B)."""
    a, b, ab = _overlap("bf_union_fpr", n_a, n_b, n_ab)
    return theory.false_positive_rate(a + b - ab, m, k)


def _both_set(n_a: np.ndarray, n_b: np.ndarray, n_ab: np.ndarray, m: Any, k: Any) -> np.ndarray:
    z_ab = np.asarray(theory.zero_bit_probability(n_ab, m, k))
    fa = np.asarray(theory.fill_ratio(n_a - n_ab, m, k))
    fb = np.asarray(theory.fill_ratio(n_b - n_ab, m, k))
    out: np.ndarray = 1.0 - z_ab * (1.0 - fa * fb)
    return out


def bf_intersection_fpr(n_a: Any, n_b: Any, n_ab: Any, m: Any, k: Any) -> Any:
    """FPR of BF(A) & BF(B) (bitwise AND, Definition 2) for a fresh key.

    A bit is set in both if an item of A n B set it, or items of both A - B and B - A did
    (proof of Theorem 2): ``s = 1 - z_AB (1 - f_A' f_B')``, FPR = ``s^k``.
    """
    a, b, ab = _overlap("bf_intersection_fpr", n_a, n_b, n_ab)
    k = check_reals(k, "k", "bf_intersection_fpr", lo=0)
    out = _both_set(a, b, ab, m, k) ** k
    return float(out) if out.ndim == 0 else out


def pbf_union_fpr(n_a: Any, n_b: Any, n_ab: Any, num_attributes: int, num_hashes: int,
                  num_counters: int, verification: str = "attenuated") -> Any:
    """FPR of PBF(A) | PBF(B) (max of counters + union of tables, Section 5.2), fresh query.

    Max-counters are non-zero exactly where PBF(A u B) is, and the table holds A u B, so this is
    :func:`two_step_fpr` at n = |A u B|.
    """
    a, b, ab = _overlap("pbf_union_fpr", n_a, n_b, n_ab)
    return two_step_fpr(a + b - ab, num_attributes, num_hashes, num_counters, verification)


def pbf_intersection_fpr(n_a: Any, n_b: Any, n_ab: Any, num_attributes: int, num_hashes: int,
                         num_counters: int, verification: str = "attenuated") -> Any:
    """FPR of PBF(A) & PBF(B) (min of counters + intersection of tables, Section 5.2), fresh query.

    Stage 1: each of the p*q arrays is non-zero in both with ``s = 1 - z_AB (1 - f_A' f_B')``
    (one probe per array, k = 1). Stage 2: the table holds |A n B| values plus the expected
    ``|A - B| |B - A| c_p`` chance coincidences.
    """
    p, q, m = _pqm("pbf_intersection_fpr", num_attributes, num_hashes, num_counters, verification)
    n_a_, n_b_, n_ab_ = _overlap("pbf_intersection_fpr", n_a, n_b, n_ab)
    s = _both_set(n_a_, n_b_, n_ab_, m, 1)
    cp = collision_probability(p, q, m, verification)
    entries = n_ab_ + (n_a_ - n_ab_) * (n_b_ - n_ab_) * cp
    out = s ** (p * q) * -np.expm1(entries * np.log1p(-cp))
    return float(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------
# sizing (ours: the document gives no sizing rule)

QUERIES = ("any", "fresh", "recombined")
#: largest expected number of saturated counters :func:`optimal_parameters` accepts at capacity
MAX_EXPECTED_OVERFLOWS = 0.01
_MAX_COUNTERS_PER_ARRAY = 1 << 32
_MAX_TOTAL_COUNTERS = 1 << 40


def overflow_expectation(n: Any, num_attributes: int, num_hashes: int, num_counters: int,
                         counter_bits: int = 4) -> Any:
    """Expected number of counters that saturate after n items of distinct attribute values.

    Each of the p*q arrays receives n increments at uniform positions, so a counter's count is
    about Poisson(n/m); it saturates (and sets ``overflowed``) when an increment finds it at
    ``2^b - 1``: ``E = p q m P(X >= 2^b)``. Repeated attribute values (ports, protocols) put
    the same counter up once per item and saturate sooner than this.

    >>> overflow_expectation(1000, 3, 7, 1000) < 1e-6
    True
    """
    p, q, m = _pqm("overflow_expectation", num_attributes, num_hashes, num_counters)
    b = COUNTER_BITS(counter_bits, "counter_bits", "overflow_expectation")
    (nn,) = _sizes("overflow_expectation", n=n)
    lam = nn / float(m)
    tail = special.pdtrc((1 << b) - 1, lam)  # P(X > 2^b - 1)
    out = p * q * float(m) * tail
    return float(out) if np.ndim(out) == 0 else out


def _rate(n: int, p: int, q: int, m: int, verification: str, query: str, exact: bool | None) -> float:
    kinds = ("fresh", "recombined") if query == "any" else (query,)
    return max(float(two_step_fpr(n, p, q, m, verification, k, exact)) for k in kinds
               if not (k == "recombined" and p < 2))


def optimal_parameters(num_attributes: int, capacity: int, fpr: float, *, query: str = "any",
                       counter_bits: int = 4, verification: str = "attenuated") -> tuple[int, int]:
    """(q, m): the smallest parallel Bloom filter (counters plus table) for ``capacity`` items of
    p attributes whose :func:`two_step_fpr` at ``capacity`` items is at most ``fpr``.

    ``query`` says which false positives count: ``"fresh"`` (attribute values never stored),
    ``"recombined"`` (each attribute from a different stored item, the case the verification
    table exists for; p >= 2), or ``"any"`` (the larger of both, the default). Besides the
    rate, every configuration keeps the expected number of saturated counters at capacity
    (:func:`overflow_expectation`) at most :data:`MAX_EXPECTED_OVERFLOWS`, V_max below 2^62,
    m <= 2^32 and p q m <= 2^40.

    For each q = 1..62 the smallest such m is found by bisection (the rate falls with m) on
    the local normal approximation of the collision probabilities, held to ``fpr / 1.05`` (the
    approximation is within a few per cent of the exact rate); the q of fewest bits
    (``p q m counter_bits`` plus the table's ``slots (key_bits + 32)`` at capacity) wins. When
    the exact distribution of V is small (V_max < 2^20) the result is checked against the
    exact rate and m raised in 1 % steps until it holds. The document gives no sizing rule:
    this one is ours, from the model above.

    Raises InvalidParameterError if no configuration within those limits meets ``fpr``.

    >>> optimal_parameters(3, 10_000, 0.01)
    (9, 3364)

    Complexity: O(62 * 32) evaluations of the closed forms (plus a few exact ones when cheap).
    """
    owner = "optimal_parameters"
    p = check_int(num_attributes, "num_attributes", owner, lo=1, hi=64)
    n = CAPACITY(capacity, "capacity", owner)
    rate = FPR(fpr, "fpr", owner)
    check_choice(query, "query", owner, QUERIES)
    b = COUNTER_BITS(counter_bits, "counter_bits", owner)
    check_choice(verification, "verification", owner, VERIFICATIONS)
    if query == "recombined" and p < 2:
        raise InvalidParameterError(
            f"The 'query' parameter of {owner} can be 'recombined' only for p >= 2. Got p = {p} instead.")
    slots = 1 << (max(16, int(n / 0.6) + 1) - 1).bit_length()  # the table at capacity

    def ok(q: int, m: int, exact: bool | None, target: float) -> bool:
        return (overflow_expectation(n, p, q, m, b) <= MAX_EXPECTED_OVERFLOWS
                and _rate(n, p, q, m, verification, query, exact) <= target)

    best: tuple[int, int, int] | None = None  # (bits, q, m)
    for q in range(1, 63):
        hi = min(_MAX_COUNTERS_PER_ARRAY, _MAX_TOTAL_COUNTERS // (p * q))
        hi = min(hi, ((1 << 62) - 1) // (p * int(verification_weights(q, verification).sum())))
        if hi < 1 or not ok(q, hi, False, rate / 1.05):
            continue
        lo = 1
        while lo < hi:
            mid = (lo + hi) // 2
            if ok(q, mid, False, rate / 1.05):
                hi = mid
            else:
                lo = mid + 1
        key_bits = 32 if max_verification_value(p, q, lo, verification) < (1 << 32) - 1 else 64
        bits = p * q * lo * b + slots * (key_bits + 32)
        if best is None or bits < best[0]:
            best = (bits, q, lo)
    if best is None:
        raise InvalidParameterError(
            f"No parallel Bloom filter of p = {p} attributes with m <= 2**32 counters per array holds "
            f"{n} items at a false positive rate of {rate} ({query} queries) with {b}-bit counters.")
    _, q, m = best
    while max_verification_value(p, q, m, verification) < 1 << 20 and not ok(q, m, True, rate):
        m = math.ceil(m * 1.01)
    return q, m
