"""The analytic model of document 002 (Qian, Zhu, Chen: *Multi-Granularity Locality-Sensitive
Bloom Filter*, IEEE TC 2015), Theorems 1-12, as vectorized functions.

Notation of the document (Table 1) next to the Python names:

=================  ===========================================================================
``distance``       c_i = ||o_i - q||
``w``              w, the bucket width of the finest level (VLBF 0); level theta uses 2^theta w
``and_width``      k, LSH functions per AND-construction g_j
``or_count``       L, AND-constructions in the OR-construction
``num_objects``    n, objects stored
``verify_bits``    m', bits of the MVBF (VVBF 0); VVBF theta has m'' = m' / 2^theta locations
``verify_hashes``  k', hash functions of the MVBF
``level``          theta, granularity level (0 = finest)
``num_levels``     S, number of granularities
=================  ===========================================================================

Every formula lives here once; the structures call these functions for their predictions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import integrate
from scipy.special import ndtr

from .._validation import check_broadcast, check_choice, check_float, check_int, check_reals
from ..errors import InvalidParameterError

__all__ = [
    "alpha",
    "collision_probability",
    "collision_probability_integral",
    "cross_collision_probability",
    "extended_fnr",
    "extended_phi",
    "extended_fpr",
    "jaccard_band_probability",
    "jaccard_fnr",
    "jaccard_fpr",
    "s_curve",
    "level_width",
    "mlbf_fnr",
    "mlbf_fpr",
    "mlbf_star_fpr",
    "mvbf_fpr",
    "or_amplify",
    "typical_phi",
    "verification_pass_probability",
    "vlbf_fnr",
    "vlbf_fpr",
]

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_OWNER = "similarity.theory"
_MAX_COUNT = 1 << 20  # k, L, k' of the models (the structures allow far fewer: similarity.spec)


def _nonneg_array(x: Any, name: str) -> np.ndarray:
    return check_reals(x, name, _OWNER, lo=0)


def _pos_array(x: Any, name: str) -> np.ndarray:
    return check_reals(x, name, _OWNER, lo=0, lo_open=True)


def _prob_array(x: Any, name: str) -> np.ndarray:
    return check_reals(x, name, _OWNER, 0, 1)


def _ret(a: np.ndarray) -> Any:
    return float(a) if a.ndim == 0 else a


def level_width(w: float, level: int) -> float:
    """Bucket width of VLBF ``level``: 2^theta w (Section 4.3, Theorems 3-4).

    Complexity: O(1).

    >>> level_width(1.5, 2)
    6.0
    """
    w = check_float(w, "w", _OWNER, lo=0, lo_open=True)
    level = check_int(level, "level", _OWNER, lo=0, hi=62)
    return w * (1 << level)


def collision_probability(distance: Any, w: Any) -> Any:
    """p(c, w): collision probability of Theorem 1 in closed form (ERRATA, Datar et al. 2004).

    For h(x) = floor(a.x / w) with a ~ N(0, I_d) and c = ||o - q||, Theorem 1 gives
    p(c) = int_0^w (1/c) f_1(t/c) (1 - t/w) dt with f_1 the density of |N(0, 1)|, which is

        p(c) = 1 - 2 Phi(-w/c) - 2 / (sqrt(2 pi) w/c) (1 - exp(-w^2 / (2 c^2))),

    and p(0) = 1. Depends on w/c only (Theorem 3: p(2c, 2w) = p(c, w)).

    Parameters
    ----------
    distance : float or array_like
        c >= 0.
    w : float or array_like
        Bucket width w > 0 (broadcast against ``distance``).

    Returns
    -------
    float or numpy.ndarray

    Complexity: O(size of the broadcast arrays).

    Examples
    --------
    >>> round(collision_probability((20 * 0.1**2) ** 0.5, 0.5), 7)   # Table 3, w = 0.5
    0.404787
    """
    c = _nonneg_array(distance, "distance")
    w_ = _pos_array(w, "w")
    check_broadcast(_OWNER, distance=c, w=w_)
    c, w_ = np.broadcast_arrays(c, w_)
    out = np.ones(c.shape, dtype=np.float64)
    nz = c > 0
    r = np.where(nz, w_ / np.where(nz, c, 1.0), 1.0)  # r = w / c
    val = 1.0 - 2.0 * ndtr(-r) - 2.0 / (_SQRT_2PI * r) * (-np.expm1(-0.5 * r * r))
    out = np.where(nz, val, out)
    return _ret(np.clip(out, 0.0, 1.0))


def collision_probability_integral(distance: Any, w: Any, method: str = "quad") -> Any:
    """p(c, w) of Theorem 1 by numerical integration of the printed integral.

    ``method="quad"`` uses adaptive Gauss-Kronrod (scipy.integrate.quad); ``"simpson"`` uses
    Simpson's rule on 2001 points, as Section 7 says the authors did.

    Complexity: O(size) integrations.

    >>> c = (20 * 0.1**2) ** 0.5
    >>> abs(collision_probability_integral(c, 2.0) - collision_probability(c, 2.0)) < 1e-10
    True
    """
    check_choice(method, "method", _OWNER, ("quad", "simpson"))
    c = _nonneg_array(distance, "distance")
    w_ = _pos_array(w, "w")
    check_broadcast(_OWNER, distance=c, w=w_)
    c, w_ = np.broadcast_arrays(c, w_)
    out = np.empty(c.shape, dtype=np.float64)
    for idx in np.ndindex(c.shape):
        ci, wi = float(c[idx]), float(w_[idx])
        if ci == 0.0:
            out[idx] = 1.0
            continue

        def f(t: float, ci: float = ci, wi: float = wi) -> float:
            return (1.0 / ci) * math.sqrt(2.0 / math.pi) * math.exp(-0.5 * (t / ci) ** 2) * (
                1.0 - t / wi
            )

        upper = min(wi, 40.0 * ci)  # the integrand is negligible beyond t = 40 c
        if method == "quad":
            out[idx] = integrate.quad(f, 0.0, upper, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
        else:
            t = np.linspace(0.0, upper, 2001)
            y = (1.0 / ci) * math.sqrt(2.0 / math.pi) * np.exp(-0.5 * (t / ci) ** 2) * (1 - t / wi)
            out[idx] = integrate.simpson(y, x=t)
    return _ret(out)


def cross_collision_probability(norm_o: Any, norm_q: Any, w: Any) -> Any:
    """p'(o, q): collision probability under two different LSH functions (Theorem 2).

    t = |a'.o - a''.q| ~ |N(0, ||o||^2 + ||q||^2)|, so p' is Theorem 1's p at the distance
    sqrt(||o||^2 + ||q||^2). It depends on the absolute position of the objects, which is why
    the shift of Section 4 matters.

    Complexity: O(size).

    >>> round(cross_collision_probability(3.0, 4.0, 1.0), 6) == round(collision_probability(5.0, 1.0), 6)
    True
    """
    no = _nonneg_array(norm_o, "norm_o")
    nq = _nonneg_array(norm_q, "norm_q")
    check_broadcast(_OWNER, norm_o=no, norm_q=nq, w=_pos_array(w, "w"))
    return collision_probability(np.sqrt(no * no + nq * nq), w)


def alpha(p: Any, p_cross: Any, and_width: int, or_count: int) -> Any:
    """alpha of Theorem 5: probability that all k bits of one g_j(q) are set in the BMLBF.

    alpha = (1 - prod_{i=1}^n (1 - p_i)(1 - p'_i)^(kL - 1))^k

    Parameters
    ----------
    p, p_cross : array_like, shape (..., n)
        p_i (Theorem 1) and p'_i (Theorem 2) of the query against every stored object; the
        product runs over the last axis.
    and_width, or_count : int
        k and L.

    Complexity: O(size).
    """
    k = check_int(and_width, "and_width", _OWNER, lo=1, hi=_MAX_COUNT)
    L = check_int(or_count, "or_count", _OWNER, lo=1, hi=_MAX_COUNT)
    p_ = _prob_array(p, "p")
    pc = _prob_array(p_cross, "p_cross")
    check_broadcast(_OWNER, p=p_, p_cross=pc)
    p_, pc = np.broadcast_arrays(np.atleast_1d(p_), np.atleast_1d(pc))
    # sum of logs for accuracy with many objects
    with np.errstate(divide="ignore"):
        log_miss = np.log1p(-p_) + (k * L - 1) * np.log1p(-pc)
    miss = np.exp(np.sum(log_miss, axis=-1))
    return _ret((1.0 - miss) ** k)


def or_amplify(x: Any, or_count: int) -> Any:
    """1 - (1 - x)^L: probability that at least one of L independent AND-constructions passes.

    Complexity: O(size).
    """
    L = check_int(or_count, "or_count", _OWNER, lo=1, hi=_MAX_COUNT)
    x_ = _prob_array(x, "x")
    with np.errstate(divide="ignore"):
        return _ret(-np.expm1(L * np.log1p(-x_)))


def vlbf_fpr(p: Any, p_cross: Any, and_width: int, or_count: int) -> Any:
    """False positive rate of a VLBF without verification, Theorem 5: 1 - (1 - alpha)^L.

    ``p``/``p_cross`` are the query's probabilities against the n stored objects (last axis);
    use ``w = 2^theta w_0`` in them for VLBF theta (Theorem 3). Theorem 5 assumes all stored
    locations are distinct, so it slightly overestimates (Section 7.3).

    Complexity: O(size).
    """
    return or_amplify(alpha(p, p_cross, and_width, or_count), or_count)


def vlbf_fnr(p: Any, p_cross: Any, and_width: int, or_count: int) -> Any:
    """False negative rate of a VLBF without verification, Theorem 6: (1 - alpha)^L.

    Complexity: O(size).
    """
    L = check_int(or_count, "or_count", _OWNER, lo=1, hi=_MAX_COUNT)
    a = np.asarray(alpha(p, p_cross, and_width, or_count))
    return _ret((1.0 - a) ** L)


def mvbf_fpr(
    num_elements: Any, verify_bits: int, verify_hashes: int, level: int = 0, exact: bool = True
) -> Any:
    """False positive rate of VVBF theta, Theorem 7.

    FPR = (1 - (1 - 1/m'')^(k' n'))^k'  (exact=True)  or  (1 - e^(-k' n'/m''))^k',
    with m'' = m' / 2^theta and n' distinct verification elements (n' = nL for the MLBF).

    Parameters
    ----------
    num_elements : int or array_like
        n'.
    verify_bits : int
        m' (bits of VVBF 0).
    verify_hashes : int
        k'.
    level : int
        theta.
    exact : bool
        Use (1 - 1/m'')^(k'n') instead of the exponential approximation.

    Complexity: O(size).

    >>> round(mvbf_fpr(2500, 65536, 5, level=3, exact=False), 4)
    0.2935
    """
    mp = check_int(verify_bits, "verify_bits", _OWNER, lo=1, hi=1 << 62)
    kp = check_int(verify_hashes, "verify_hashes", _OWNER, lo=1, hi=_MAX_COUNT)
    lv = check_int(level, "level", _OWNER, lo=0, hi=62)
    if mp >> lv < 1:
        raise InvalidParameterError(
            f"The 'level' parameter of {_OWNER} must leave at least one location "
            f"(verify_bits / 2**level >= 1). Got {level!r} instead."
        )
    n = _nonneg_array(num_elements, "num_elements")
    m2 = mp / float(1 << lv)
    if exact:
        zero = np.exp(kp * n * np.log1p(-1.0 / m2)) if m2 > 1 else (n == 0).astype(float)
    else:
        zero = np.exp(-kp * n / m2)
    return _ret((1.0 - zero) ** kp)


def verification_pass_probability(
    num_elements: float,
    coarse_locations: int,
    bit_probs: np.ndarray,
    codes: np.ndarray,
    weights: np.ndarray,
    exact: bool = True,
) -> float:
    """Probability that an element never stored passes VVBF theta when its suffix bits are not
    uniform (the seed-specific form of Theorem 7).

    Section 5.2 builds a VVBF-theta address from a coarse address (k' hashes of j and the upper
    substrings: uniform over the m' / 2^(S-1) coarse locations) and, for each level
    v = 1..S-1-theta, one suffix bit per address i: bit i of a hash of the k-bit slice formed by
    the v-th lower bits of the k addresses. A slice takes only 2^k values, so for a given hash
    seed bit i of level v is 1 for a fraction ``q[v, i]`` of the slices, not 1/2: the stored
    elements crowd some of the 2^(S-1-theta) locations under each coarse location, and a query
    lands in a crowded one more often than Theorem 7 assumes. With the query's k' suffix codes
    taking the values ``codes`` with probabilities ``weights``:

        P_i(s)  = prod_v (q[v, i] if bit v of s else 1 - q[v, i])       (element address i lands on suffix s)
        z(s)    = prod_i' (1 - P_i'(s) / m_c)^(n')     or  exp(-n' sum_i' P_i'(s) / m_c)  (``exact=False``)
        FPR     = sum_w weights[w] prod_i (1 - z(codes[w, i]))

    With every q = 1/2 this is Theorem 7, ``(1 - (1 - 1/m'')^(k' n'))^k'``.

    Parameters
    ----------
    num_elements : float
        n', the elements stored (nL in an MLBF).
    coarse_locations : int
        m_c = m' / 2^(S-1), the locations of VVBF S-1.
    bit_probs : ndarray, shape (V, k')
        q[v, i] for the V = S-1-theta suffix levels (first row: the level appended first).
    codes : ndarray of int, shape (N, k')
        The query's suffix codes (V bits, the first level the most significant), one row per
        class of equally treated slices.
    weights : ndarray, shape (N,)
        The probability of each row (they sum to 1).
    exact : bool
        (1 - x)^n' (Theorem 7's exact form) or e^(-n' x) (its approximation, Theorem 8's form).

    Complexity: O(2^V k' + N k').

    >>> import numpy as np
    >>> q = np.full((2, 1), 0.5)
    >>> codes = np.arange(4).reshape(4, 1); w = np.full(4, 0.25)
    >>> round(verification_pass_probability(2000, 65536 // 4, q, codes, w), 6) == round(mvbf_fpr(2000, 65536, 1, 0), 6)
    True
    """
    n_arr = _nonneg_array(num_elements, "num_elements")
    if n_arr.ndim:
        raise InvalidParameterError(f"The 'num_elements' parameter of {_OWNER} must be one number. "
                                    f"Got an array of shape {n_arr.shape} instead.")
    n = float(n_arr)
    mc = check_int(coarse_locations, "coarse_locations", _OWNER, lo=1)
    q = _prob_array(bit_probs, "bit_probs")
    if q.ndim != 2 or q.shape[1] < 1 or q.shape[0] > 24 or q.shape[1] > _MAX_COUNT:
        raise InvalidParameterError(f"The 'bit_probs' parameter of {_OWNER} must be a 2-d array of shape (V, k') "
                                    f"with V <= 24 suffix levels. Got shape {q.shape} instead.")
    kp = q.shape[1]
    c = check_reals(codes, "codes", _OWNER, lo=0, hi=(1 << q.shape[0]) - 1)
    if c.ndim != 2 or c.shape[1] != kp or (c != np.floor(c)).any():
        raise InvalidParameterError(f"The 'codes' parameter of {_OWNER} must be a 2-d array of whole numbers of "
                                    f"shape (N, {kp}) (k' = {kp} columns, like bit_probs). Got shape {c.shape} instead.")
    w = _prob_array(weights, "weights")
    if w.shape != (c.shape[0],):
        raise InvalidParameterError(f"The 'weights' parameter of {_OWNER} must have one probability per row of "
                                    f"codes, shape ({c.shape[0]},). Got shape {w.shape} instead.")
    if not isinstance(exact, bool | np.bool_):
        raise InvalidParameterError(f"The 'exact' parameter of {_OWNER} must be True or False. Got {exact!r} instead.")
    probs = np.ones((kp, 1))
    for v in range(q.shape[0]):  # kron per address: P_i over the 2^V suffixes, level 1 the MSB
        probs = (probs[:, :, None] * np.stack([1.0 - q[v], q[v]], axis=1)[:, None, :]).reshape(kp, -1)
    if n == 0:
        return 0.0
    if exact:
        with np.errstate(divide="ignore"):
            log_zero = n * np.log1p(-probs / mc).sum(axis=0)
    else:
        log_zero = -n * probs.sum(axis=0) / mc
    hit = -np.expm1(log_zero)  # P(location set) per suffix s
    return float(np.dot(w, np.prod(hit[c.astype(np.int64)], axis=1)))


def typical_phi(
    num_objects: Any, or_count: int, verify_bits: int, verify_hashes: int, level: int
) -> Any:
    """phi of the typical case: (1 - e^(-k' n L / m''))^k' (Theorems 7-8, Fig 13 text).

    Complexity: O(size).
    """
    L = check_int(or_count, "or_count", _OWNER, lo=1, hi=_MAX_COUNT)
    n = _nonneg_array(num_objects, "num_objects")
    return mvbf_fpr(n * L, verify_bits, verify_hashes, level, exact=False)


def mlbf_star_fpr(
    num_objects: Any,
    or_count: int,
    verify_bits: int,
    verify_hashes: int,
    level: int = 0,
    linearized: bool = False,
) -> Any:
    """False positive rate of the MLBF* (Theorem 8, typical case).

    ``linearized=True`` gives the printed L (1 - e^(-k'nL/m''))^k'; the default is the exact OR
    form 1 - (1 - phi)^L from the proof of Theorem 8, which Theorem 11 reduces to and which
    gives Fig 13's worked numbers (the linearized form exceeds 1 at level 3, see ERRATA).

    Complexity: O(size).

    >>> [round(mlbf_star_fpr(500, 5, 65536, 5, t), 4) for t in (3, 2, 1)]
    [0.824, 0.1986, 0.0159]
    """
    return mlbf_fpr(1.0, num_objects, or_count, verify_bits, verify_hashes, level, linearized)


def mlbf_fpr(
    alpha_: Any,
    num_objects: Any,
    or_count: int,
    verify_bits: int,
    verify_hashes: int,
    level: int = 0,
    linearized: bool = False,
) -> Any:
    """False positive rate of the MLBF (Theorem 8, typical case).

    1 - (1 - alpha phi)^L (exact OR form of the proof) or alpha L phi (``linearized``), with
    alpha from :func:`alpha` (Theorem 5) and phi from :func:`typical_phi`.

    Complexity: O(size).
    """
    L = check_int(or_count, "or_count", _OWNER, lo=1, hi=_MAX_COUNT)
    a = _prob_array(alpha_, "alpha")
    phi = np.asarray(typical_phi(num_objects, or_count, verify_bits, verify_hashes, level))
    if linearized:
        return _ret(a * L * phi)
    return or_amplify(a * phi, L)


def mlbf_fnr(p_close: Any, and_width: int, or_count: int) -> Any:
    """False negative rate of the MLBF/MLBF*, Theorems 9-10: prod_{close o_i} (1 - p_i^k)^L.

    ``p_close`` holds p_i (Theorem 1 at the level's width) of the close objects on its last
    axis; one value is Theorem 9. The MVBF's own false positives make the real rate slightly
    smaller.

    Complexity: O(size).

    >>> round(mlbf_fnr(0.4, 5, 5), 2)   # Section 7.4: w = 0.25, c = (20 * 0.05^2)^0.5
    0.95
    """
    k = check_int(and_width, "and_width", _OWNER, lo=1, hi=_MAX_COUNT)
    L = check_int(or_count, "or_count", _OWNER, lo=1, hi=_MAX_COUNT)
    p = np.atleast_1d(_prob_array(p_close, "p_close"))
    with np.errstate(divide="ignore"):
        logs = L * np.log1p(-(p**k))
    return _ret(np.exp(np.sum(logs, axis=-1)))


def extended_phi(
    distances: Any,
    w: float,
    and_width: int,
    or_count: int,
    verify_bits: int,
    verify_hashes: int,
    num_levels: int,
    level: int,
) -> Any:
    """phi of the extended case (Section 6.3, Formula 5).

    For one stored object at distance c_i, with P_u = p(c_i, 2^u w)^k:

        tau_i = (1 - P_theta) prod_{u=theta+1}^{S-1} (1 - (P_u - P_{u-1}) / 2^(u-theta))
                (1 - (1 - P_{S-1}) (1 - e^(-k' L / m''))),     m'' = m' / 2^theta

    (the printed Formula 5 shows '=' where the factors are multiplied), and
    phi = (1 - prod_i tau_i)^k'. When every P_u ~ 0 it reduces to Theorem 7's
    (1 - e^(-k' n L / m''))^k'.

    Parameters
    ----------
    distances : array_like, shape (..., n)
        Distances from the query to every stored object (product over the last axis).

    Complexity: O(size * S).
    """
    k = check_int(and_width, "and_width", _OWNER, lo=1, hi=_MAX_COUNT)
    L = check_int(or_count, "or_count", _OWNER, lo=1, hi=_MAX_COUNT)
    mp = check_int(verify_bits, "verify_bits", _OWNER, lo=1, hi=1 << 62)
    kp = check_int(verify_hashes, "verify_hashes", _OWNER, lo=1, hi=_MAX_COUNT)
    S = check_int(num_levels, "num_levels", _OWNER, lo=1, hi=62)
    th = check_int(level, "level", _OWNER, lo=0, hi=S - 1)
    w = check_float(w, "w", _OWNER, lo=0, lo_open=True)
    c = np.atleast_1d(_nonneg_array(distances, "distances"))
    m2 = mp / float(1 << th)
    P = [np.asarray(collision_probability(c, w * (1 << u))) ** k for u in range(S)]
    log_tau = np.log1p(-np.minimum(P[th], 1 - 1e-16))
    for u in range(th + 1, S):
        log_tau = log_tau + np.log1p(-(P[u] - P[u - 1]) / float(1 << (u - th)))
    fill = -math.expm1(-kp * L / m2)
    log_tau = log_tau + np.log1p(-(1.0 - P[S - 1]) * fill)
    return _ret((1.0 - np.exp(np.sum(log_tau, axis=-1))) ** kp)


def extended_fpr(
    distances: Any,
    w: float,
    and_width: int,
    or_count: int,
    verify_bits: int,
    verify_hashes: int,
    num_levels: int,
    level: int,
    alpha_: Any = None,
) -> Any:
    """False positive rate, Theorem 11: 1 - (1 - phi)^L (MLBF*) or 1 - (1 - alpha phi)^L (MLBF).

    Pass ``alpha_`` (Theorem 5 at the level's width) for the MLBF; leave it ``None`` for the
    MLBF*.

    Complexity: O(size * S).
    """
    phi = np.asarray(
        extended_phi(distances, w, and_width, or_count, verify_bits, verify_hashes, num_levels, level)
    )
    if alpha_ is not None:
        phi = phi * _prob_array(alpha_, "alpha")
    return or_amplify(phi, or_count)


def extended_fnr(
    distances: Any,
    w: float,
    and_width: int,
    or_count: int,
    verify_bits: int,
    verify_hashes: int,
    num_levels: int,
    level: int,
) -> Any:
    """False negative rate, Theorem 12: (1 - phi)^L with phi of the extended case.

    Complexity: O(size * S).
    """
    L = check_int(or_count, "or_count", _OWNER, lo=1, hi=_MAX_COUNT)
    phi = np.asarray(
        extended_phi(distances, w, and_width, or_count, verify_bits, verify_hashes, num_levels, level)
    )
    return _ret((1.0 - phi) ** L)


# -- the Jaccard family (issue 24) ------------------------------------------------------------------
#
# MinHash is an LSH family for the Jaccard similarity s with collision probability exactly s
# (Broder 1997): Definition 1 with P1 = s. A band of r rows is document 002's AND-construction
# (k = r), the b bands its OR-construction (L = b), so Section 2.1's amplification
# P' = 1 - (1 - P^k)^L is the S-curve 1 - (1 - s^r)^b.


def s_curve(similarity: Any, rows: int, bands: int) -> Any:
    """Probability that some band of ``rows`` MinHash values agrees for two documents of Jaccard
    similarity s: 1 - (1 - s^r)^b (document 002, Section 2.1's P'_1 = 1 - (1 - P_1^k)^L with
    P_1 = s, k = r, L = b).

    Complexity: O(size).

    >>> round(s_curve(0.8, 5, 20), 4)
    0.9996
    >>> round(s_curve(0.4, 5, 20), 4)
    0.186
    """
    r = check_int(rows, "rows", _OWNER, lo=1, hi=_MAX_COUNT)
    s = _prob_array(similarity, "similarity")
    return or_amplify(s**r, bands)


def _rows_levels(rows_by_level: Any, level: int) -> tuple[tuple[int, ...], int]:
    check_reals(rows_by_level, "rows_by_level", _OWNER, lo=1)  # never an arbitrary (endless) iterable
    rows = tuple(check_int(r, "rows_by_level", _OWNER, lo=1, hi=_MAX_COUNT) for r in np.atleast_1d(rows_by_level))
    if not rows or any(b >= a for a, b in zip(rows, rows[1:], strict=False)):
        raise InvalidParameterError(
            f"The 'rows_by_level' parameter of {_OWNER} must be a strictly decreasing sequence of row counts. Got "
            f"{rows_by_level!r} instead.")
    return rows, check_int(level, "level", _OWNER, lo=0, hi=len(rows) - 1)


def jaccard_band_probability(similarity: Any, rows_by_level: Any, level: int, verify_hashes: int,
                             fill: float) -> Any:
    """Probability that one band of a query passes VVBF theta of the Jaccard family's MVBF when
    one stored document has Jaccard similarity s to it and the VVBF-theta locations are set with
    probability ``fill`` otherwise (document 002, Section 6.3's extended case, Formula 5, for
    the MinHash family).

    Level theta's address of a band is its coarse address (from the first r_{S-1} values)
    followed by one suffix bit per finer level v = S-2..theta, from the hash of the rows
    r_{v+1}..r_v - 1 (group v, n_v = r_v - r_{v+1} rows). The coarse rows agree with
    probability s^{r_{S-1}}; then each group agrees with probability s^{n_v}, independently; with
    d groups differing, each of the k' addresses lands on the stored document's location with
    probability 2^-d (its d suffix bits equal by chance), else on a location set with
    probability ``fill``:

        P = s^{r_{S-1}} sum_{G} prod_v [s^{n_v} or 1 - s^{n_v}] (2^-d + (1 - 2^-d) fill)^k'
            + (1 - s^{r_{S-1}}) fill^k'.

    With d = 0 (every group agrees) this is s^{r_theta}; at the coarsest level it is
    s^r + (1 - s^r) fill^k'. ``fill`` = 1 - e^(-k' n b / m'') gives Theorem 7's phi = fill^k'.

    Complexity: O(size 2^(S - 1 - theta)).

    >>> round(jaccard_band_probability(0.5, (4, 2), 1, 3, 0.0), 6)    # coarsest: s^r
    0.25
    >>> round(jaccard_band_probability(0.5, (4, 2), 0, 3, 0.0), 6)    # s^4 + s^2 (1 - s^2) 2^-3
    0.085938
    """
    rows, lv = _rows_levels(rows_by_level, level)
    kp = check_int(verify_hashes, "verify_hashes", _OWNER, lo=1, hi=_MAX_COUNT)
    f = check_float(fill, "fill", _OWNER, 0, 1)
    sim = _prob_array(similarity, "similarity")
    S = len(rows)
    groups = [rows[v] - rows[v + 1] for v in range(lv, S - 1)]
    out = np.zeros(np.shape(sim))
    for pattern in range(1 << len(groups)):
        prob = np.ones(np.shape(sim))
        d = 0
        for g, n_v in enumerate(groups):
            agree = sim**n_v
            if pattern >> g & 1:
                prob = prob * agree
            else:
                prob = prob * (1.0 - agree)
                d += 1
        out = out + prob * (2.0**-d + (1.0 - 2.0**-d) * f) ** kp
    out = sim ** rows[-1] * out + (1.0 - sim ** rows[-1]) * f**kp
    return _ret(np.clip(out, 0.0, 1.0))


def jaccard_fnr(similarity: Any, rows_by_level: Any, bands: int, *, level: int = 0, verify_hashes: int = 1,
                fill: float = 0.0) -> Any:
    """Probability that a query is NOT reported at level theta when the stored documents have
    Jaccard similarities s_i to it (last axis; a scalar is one document, the others unlike it):
    Theorems 9-10 with the band probability of :func:`jaccard_band_probability`. Per band, the
    background (no near document) passes with phi = fill^k' and document i adds
    q_i = (P(s_i) - phi) / (1 - phi); the b bands are independent (k-way MinHash):

        FNR = ((1 - phi) prod_i (1 - q_i))^b.

    With one level and fill = 0 it is the S-curve's complement (1 - s^r)^b.

    Complexity: O(size 2^(S - 1 - theta)).

    >>> round(jaccard_fnr(0.5, 5, 20), 4) == round(1 - s_curve(0.5, 5, 20), 4)
    True
    >>> round(jaccard_fnr([0.5, 0.5], 5, 20), 4) == round(jaccard_fnr(0.5, 5, 40), 4)
    True
    """
    b = check_int(bands, "bands", _OWNER, lo=1, hi=_MAX_COUNT)
    kp = check_int(verify_hashes, "verify_hashes", _OWNER, lo=1, hi=_MAX_COUNT)
    f = check_float(fill, "fill", _OWNER, 0, 1)
    phi = f**kp
    s_arr = np.atleast_1d(_prob_array(similarity, "similarity"))
    p = np.asarray(jaccard_band_probability(s_arr, rows_by_level, level, kp, f))
    q = np.clip((p - phi) / (1.0 - phi), 0.0, 1.0) if phi < 1.0 else np.ones_like(p)
    with np.errstate(divide="ignore"):
        log_miss = np.sum(np.log1p(-q), axis=-1) + math.log1p(-min(phi, 1.0)) if phi < 1.0 else -np.inf
    out = np.exp(b * np.asarray(log_miss))
    return _ret(out if np.ndim(similarity) > 1 else np.asarray(out).reshape(()))


def jaccard_fpr(similarity: Any, rows_by_level: Any, bands: int, *, level: int = 0, verify_hashes: int = 1,
                fill: float = 0.0) -> Any:
    """Probability that a query IS reported: 1 - :func:`jaccard_fnr` (a false positive when
    every s_i lies below the threshold; at s_i = 0 it is Theorem 8's 1 - (1 - fill^k')^L).

    Complexity: O(size 2^(S - 1 - theta)).

    >>> round(jaccard_fpr(0.0, 5, 20, verify_hashes=2, fill=0.1), 6) == round(or_amplify(0.01, 20), 6)
    True
    """
    return _ret(1.0 - np.asarray(jaccard_fnr(similarity, rows_by_level, bands, level=level,
                                             verify_hashes=verify_hashes, fill=fill)))
