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
    "level_width",
    "mlbf_fnr",
    "mlbf_fpr",
    "mlbf_star_fpr",
    "mvbf_fpr",
    "or_amplify",
    "typical_phi",
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
