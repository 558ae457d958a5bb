"""Parameter selection of document 002, Section 6.4 (Formulas 6-8 and the MVBF condition).

From the user's requirements -- a near distance r1 with its collision probability P1 (or the
bucket width w directly), a far distance r2, the false negative bound delta_n, the split of
the false positive bound delta_p = delta'_p + delta''_p and the number n of objects -- choose

1. w from p(r1, w) = P1 (Theorem 1, solved numerically), and P2 = p(r2, w);
2. the smallest AND width k for which Formula 8 admits an integer L:
   ln(delta_n) / ln(1 - P1^k) <= L <= ln(1 - delta'_p) / (n ln(1 - P2^k)) (Formulas 6, 7);
3. L = the smallest integer allowed by Formula 6;
4. the smallest power of two m' and then the smallest k' for which the filter built from these
   parameters predicts a verification false positive rate <= delta''_p at every level theta the
   application needs: ``1 - (1 - phi)^L``, phi = (1 - e^(-k' n' / m''))^k', n' = nL,
   m'' = m' / 2^theta -- exactly ``predicted_fpr(level=theta)`` of the MLBF* (and of the MLBF
   with alpha = 1) holding n objects; with ``seed`` given, phi carries that seed's suffix bits
   as the filter's own prediction does.

Section 6.4 prints the condition of step 4 as (1 - P2^k)^(n') (1 - e^(-k' n'/m''))^k' <= delta''_p.
That is the rate of ONE AND-construction: a far query is a false positive when ANY of the L
constructions passes the MVBF, so the printed form is about L times too small (the filter it
chose for 10^5 objects with r2 = 4 r1 reported 0.0039 and predicted / measured 0.497). The
factor (1 - P2^k)^(n') (no LSH collision) is >= 1 - delta'_p once Formula 7 holds, and is left
out (conservative). See docs/similarity.md, "Parameter selection".

The worked example of Section 6.4 (r1 = (20 * 0.1^2)^0.5, P1 = 0.8, r2 = 10 r1, delta_n = 0.1,
delta'_p = 0.09, delta''_p = 0.001, n = 100, theta = 0, 1, 2) gives w = 1.78, P2 = 0.16,
k = 5, L = 6 (5.8 <= L <= 9.0) and m' = 65,536, as printed, and k' = 5: the printed k' = 4
follows from the printed condition, and that filter's verification rate at level 2 is
0.0021 > delta''_p (k' = 5: 0.00079).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scipy.optimize import brentq

from .._validation import SEED, check_float, check_int, safe_repr
from ..errors import InvalidParameterError
from . import theory
from .mvbf import verification_fpr
from .theory import collision_probability

__all__ = ["JaccardParameters", "SimilarityParameters", "select_jaccard_parameters", "select_parameters",
           "width_for_probability"]

_OWNER = "select_parameters"


@dataclass(frozen=True)
class SimilarityParameters:
    """The outcome of :func:`select_parameters` (document 002, Section 6.4).

    Attributes
    ----------
    w : float
        Bucket width of level 0.
    p1, p2 : float
        P1 = p(r1, w), P2 = p(r2, w) (Theorem 1).
    and_width : int
        k.
    or_count : int
        L.
    l_min, l_max : float
        The bounds of Formulas 6 and 7 for the chosen k.
    verify_bits : int
        m' (a power of two).
    verify_hashes : int
        k'.
    levels : tuple of int
        The levels theta the verification condition was checked for.
    predicted_fnr : float
        (1 - P1^k)^L (Theorem 9 at distance r1).
    predicted_lsh_fpr : float
        1 - (1 - P2^k)^(nL) (left side of Formula 7).
    predicted_verify_fpr : tuple of float
        Per level: the verification false positive rate the built filter predicts at n objects,
        ``1 - (1 - phi)^L`` (its ``predicted_fpr(level=theta)`` with alpha = 1).
    seed : int or None
        The seed the verification rates were computed for (None: uniform suffix bits).
    """

    w: float
    p1: float
    p2: float
    and_width: int
    or_count: int
    l_min: float
    l_max: float
    verify_bits: int
    verify_hashes: int
    levels: tuple[int, ...]
    predicted_fnr: float
    predicted_lsh_fpr: float
    predicted_verify_fpr: tuple[float, ...]
    seed: int | None = None


def width_for_probability(distance: float, probability: float) -> float:
    """w such that p(distance, w) = probability (Theorem 1 inverted numerically).

    p(c, w) increases with w from 0 to 1, so the root is unique.

    Complexity: O(log(1/tol)) evaluations of the closed form.

    >>> round(width_for_probability((20 * 0.1**2) ** 0.5, 0.80), 2)
    1.78
    """
    c = check_float(distance, "distance", "width_for_probability", lo=1e-300)  # > 0, and a tolerance 1e-14 c > 0
    p = check_float(probability, "probability", "width_for_probability", 0, 1, True, True)
    lo, hi = 1e-12 * c, c
    for _ in range(2000):  # bracket the root (bounded: floats run out first)
        if float(collision_probability(c, hi)) >= p or not math.isfinite(hi * 2.0):
            break
        hi *= 2.0
    for _ in range(2000):
        if float(collision_probability(c, lo)) <= p or lo / 2.0 == 0.0:
            break
        lo /= 2.0
    if not float(collision_probability(c, lo)) <= p <= float(collision_probability(c, hi)):
        raise InvalidParameterError(
            f"The 'probability' parameter of width_for_probability must be reachable by a finite width at "
            f"distance {c!r}. Got {p!r} instead.")
    return float(brentq(lambda w: float(collision_probability(c, w)) - p, lo, hi, xtol=1e-14 * c))


def select_parameters(
    r1: float,
    r2: float,
    delta_n: float,
    delta_p_lsh: float,
    delta_p_verify: float,
    num_objects: int,
    *,
    p1: float | None = None,
    w: float | None = None,
    levels: Sequence[int] = (0,),
    max_and_width: int = 64,
    max_verify_hashes: int = 64,
    max_verify_log2: int = 40,
    seed: int | None = None,
) -> SimilarityParameters:
    """Choose w, k, L, m', k' from the requirements (document 002, Section 6.4).

    Parameters
    ----------
    r1, r2 : float
        Near and far distances, 0 < r1 < r2 (Definition 1).
    delta_n : float
        Bound on the false negative rate at distance r1 (Formula 6).
    delta_p_lsh : float
        delta'_p: bound on the LSH false positives at distance r2 (Formula 7).
    delta_p_verify : float
        delta''_p: bound on the false positives that pass BMLBF and MVBF.
    num_objects : int
        n.
    p1 : float, optional
        P1 = p(r1, w); w is solved from it. Give exactly one of ``p1`` and ``w``.
    w : float, optional
        The bucket width directly.
    levels : sequence of int
        Levels theta at which the verification bound must hold (the coarsest decides).
    max_and_width, max_verify_hashes, max_verify_log2 : int
        Search limits.
    seed : int, optional
        The seed of the filter to be built: its verification rates then include that seed's
        suffix bits (below the coarsest level 1.0-1.4 times the uniform value), so that
        ``predicted_verify_fpr`` equals the built filter's ``predicted_fpr(level=theta)``.

    Returns
    -------
    SimilarityParameters

    Raises
    ------
    InvalidParameterError
        Bad input, or no k <= max_and_width satisfies Formula 8.

    Complexity: O(max_and_width + max_verify_log2 * max_verify_hashes * len(levels)), with a
    seed O(2^k S + N k') more per k' tried (:func:`bloomkit.similarity.mvbf.suffix_model`).

    Examples
    --------
    >>> r1 = (20 * 0.1**2) ** 0.5
    >>> s = select_parameters(r1, 10 * r1, 0.1, 0.09, 0.001, 100, p1=0.80, levels=(0, 1, 2))
    >>> round(s.w, 2), round(s.p2, 2), s.and_width, s.or_count, s.verify_bits, s.verify_hashes
    (1.78, 0.16, 5, 6, 65536, 5)
    """
    r1 = check_float(r1, "r1", _OWNER, lo=0, lo_open=True)
    r2 = check_float(r2, "r2", _OWNER, lo=0, lo_open=True)
    if r2 <= r1:
        raise InvalidParameterError(
            f"The 'r2' parameter of {_OWNER} must be > r1 = {r1!r}. Got {r2!r} instead."
        )
    dn = check_float(delta_n, "delta_n", _OWNER, 0, 1, True, True)
    dpl = check_float(delta_p_lsh, "delta_p_lsh", _OWNER, 0, 1, True, True)
    dpv = check_float(delta_p_verify, "delta_p_verify", _OWNER, 0, 1, True, True)
    n = check_int(num_objects, "num_objects", _OWNER, lo=1)
    kmax = check_int(max_and_width, "max_and_width", _OWNER, lo=1)
    kpmax = check_int(max_verify_hashes, "max_verify_hashes", _OWNER, lo=1)
    bmax = check_int(max_verify_log2, "max_verify_log2", _OWNER, lo=1, hi=62)
    lv = tuple(check_int(t, "levels", _OWNER, lo=0, hi=bmax) for t in levels)
    if not lv:
        raise InvalidParameterError(
            f"The 'levels' parameter of {_OWNER} must name at least one level. Got {levels!r} instead."
        )
    if (p1 is None) == (w is None):
        raise InvalidParameterError(
            f"The 'p1' parameter of {_OWNER} must be given exactly when 'w' is not. "
            f"Got p1={p1!r}, w={w!r} instead."
        )
    if p1 is not None:
        p1v = check_float(p1, "p1", _OWNER, 0, 1, True, True)
        wv = width_for_probability(r1, p1v)
    else:
        wv = check_float(w, "w", _OWNER, lo=0, lo_open=True)
        p1v = float(collision_probability(r1, wv))
    p2v = float(collision_probability(r2, wv))
    if not (0.0 < p2v < p1v < 1.0):
        raise InvalidParameterError(
            f"The 'w' parameter of {_OWNER} must give 0 < P2 < P1 < 1. "
            f"Got w={wv!r} (P1={p1v!r}, P2={p2v!r}) instead."
        )
    chosen: tuple[int, int, float, float] | None = None
    for k in range(1, kmax + 1):
        l_min = math.log(dn) / math.log1p(-(p1v**k))  # Formula 6
        l_max = math.log1p(-dpl) / (n * math.log1p(-(p2v**k)))  # Formula 7
        L = max(1, math.ceil(l_min - 1e-12))
        if L <= l_max:  # Formula 8 with an integer L
            chosen = (k, L, l_min, l_max)
            break
    if chosen is None:
        raise InvalidParameterError(
            f"The 'max_and_width' parameter of {_OWNER} must allow a k satisfying Formula 8 "
            f"for these requirements. Got {kmax!r} instead (no k <= {kmax} works)."
        )
    k, L, l_min, l_max = chosen
    n_prime = n * L
    sd = None if seed is None else SEED(seed, "seed", _OWNER)
    num_levels = max(lv) + 1

    def verify_fpr(mp: int, kp: int, theta: int, seeded: bool) -> float:
        if seeded and sd is not None:
            phi = verification_fpr(n_prime, mp, kp, num_levels, theta, sd, k, exact=False)
        else:
            phi = float(theory.mvbf_fpr(n_prime, mp, kp, theta, exact=False))
        return float(theory.or_amplify(phi, L))

    def meets(mp: int, kp: int) -> bool:
        uniform = [verify_fpr(mp, kp, t, False) for t in lv]
        if sd is None:
            return max(uniform) <= dpv
        # A seed's rate is never below the uniform one at a load k' n' / m'' <= 1 and never
        # below 0.74 times it above (checked over 92,400 (seed, k, k', S, level, load) cases,
        # k <= 8, k' <= 12, loads 0.05-12): only candidates within 2x of the bound need the
        # seed's suffix tables.
        if max(uniform) > 2.0 * dpv:
            return False
        return all(verify_fpr(mp, kp, t, True) <= dpv for t in lv)

    found = _smallest_mvbf(meets, max(lv), n_prime, bmax, kpmax)
    if found is None:
        raise InvalidParameterError(
            f"The 'max_verify_log2' parameter of {_OWNER} must allow an MVBF meeting "
            f"delta_p_verify={dpv!r}. Got {bmax!r} instead."
        )
    mp, kp = found
    return SimilarityParameters(
        w=wv,
        p1=p1v,
        p2=p2v,
        and_width=k,
        or_count=L,
        l_min=l_min,
        l_max=l_max,
        verify_bits=mp,
        verify_hashes=kp,
        levels=lv,
        predicted_fnr=(1.0 - p1v**k) ** L,
        predicted_lsh_fpr=1.0 - (1.0 - p2v**k) ** n_prime,
        predicted_verify_fpr=tuple(verify_fpr(mp, kp, t, sd is not None) for t in lv),
        seed=sd,
    )


def _smallest_mvbf(meets: Callable[[int, int], bool], top: int, n_prime: int, bmax: int,
                   kpmax: int) -> tuple[int, int] | None:
    """The smallest m' = 2^B (B > top level) and then the smallest k' with ``meets(m', k')``."""
    for b in range(top + 1, bmax + 1):
        mp = 1 << b
        # past k' = ln 2 m'' / n' (+3 for the seed's suffix bits) every level's rate grows with k'
        kp_top = min(kpmax, math.ceil(math.log(2) * mp / n_prime) + 3)
        for kp in range(1, kp_top + 1):
            if meets(mp, kp):
                return mp, kp
    return None


@dataclass(frozen=True)
class JaccardParameters:
    """The outcome of :func:`select_jaccard_parameters` (the Jaccard family, issue 24).

    Attributes
    ----------
    thresholds : tuple of float
        The Jaccard thresholds, one per level (level 0 the highest).
    rows_by_level : tuple of int
        r_theta, MinHash rows per band used at level theta (strictly decreasing).
    bands : int
        b, bands (document 002's L); the signature has K = r_0 b values.
    verify_bits, verify_hashes : int
        m', k' of the verification filter.
    predicted_fnr : tuple of float
        Per level: the built filter's ``predicted_fnr(t + near_gap, level=theta)`` at ``capacity``
        texts (about the S-curve's miss rate (1 - (t + near_gap)^r)^b).
    predicted_lsh_fpr : tuple of float
        Per level: ``predicted_fpr(level=theta, similarity=t - far_gap)``: a stored text at the
        far similarity reported (about 1 - (1 - (t - far_gap)^r)^b, plus the suffix bits'
        and the verification filter's part).
    predicted_verify_fpr : tuple of float
        Per level: ``predicted_fpr(level=theta)`` at ``capacity`` texts (1 - (1 - phi)^b, phi of
        Theorem 7 at VVBF theta).
    """

    thresholds: tuple[float, ...]
    rows_by_level: tuple[int, ...]
    bands: int
    verify_bits: int
    verify_hashes: int
    capacity: int
    predicted_fnr: tuple[float, ...]
    predicted_lsh_fpr: tuple[float, ...]
    predicted_verify_fpr: tuple[float, ...]

    @property
    def num_perm(self) -> int:
        """K = r_0 b, the MinHash values per document."""
        return self.rows_by_level[0] * self.bands


_JOWN = "select_jaccard_parameters"


def check_thresholds(thresholds: Any, owner: str) -> tuple[float, ...]:
    """Jaccard thresholds: one number or a sequence, each in (0, 1), strictly decreasing
    (level 0 the highest). Complexity: O(S)."""
    seq = [thresholds] if isinstance(thresholds, int | float) else thresholds
    if isinstance(seq, str | bytes) or not isinstance(seq, Sequence) or not 1 <= len(seq) <= 32:
        raise InvalidParameterError(
            f"The 'thresholds' parameter of {owner} must be a number in (0, 1) or a sequence of 1 to 32 of them. "
            f"Got {safe_repr(thresholds)} instead.")
    ts = tuple(check_float(t, "thresholds", owner, 0, 1, True, True) for t in seq)
    if any(b >= a for a, b in zip(ts, ts[1:], strict=False)):
        raise InvalidParameterError(
            f"The 'thresholds' parameter of {owner} must be strictly decreasing (level 0 the highest). Got "
            f"{safe_repr(thresholds)} instead.")
    return ts


def select_jaccard_parameters(
    thresholds: Any,
    capacity: int,
    *,
    fnr: float = 0.05,
    fpr: float = 0.05,
    verify_fpr: float = 0.01,
    near_gap: float = 0.1,
    far_gap: float = 0.2,
    max_rows: int = 63,
    max_bands: int = 1024,
    max_verify_log2: int = 40,
) -> JaccardParameters:
    """Bands b, rows r_theta per level and the verification filter for Jaccard thresholds
    (document 002, Section 6.4's procedure for the MinHash family, P1 = s).

    For every threshold t_theta: Formula 6 at the near similarity t + near_gap,
    (1 - (t + near_gap)^r)^b <= ``fnr``; Formula 7 for one stored document at the far similarity
    t - far_gap, 1 - (1 - (t - far_gap)^r)^b <= ``fpr``; near of a threshold above 1 - near_gap is
    halfway to 1, (t + 1) / 2, and far of one below far_gap is t / 2 (at s = 1 a band never
    misses and at s = 0 never collides: the constraints would be empty). Among the (b, r_0 > r_1 > ...) meeting both
    at every level, the smallest signature K = r_0 b (then the smallest b). Then the smallest
    m' = 2^B and k' with the filter's predicted false positive rate for far queries
    1 - (1 - phi)^b <= ``verify_fpr`` at ``capacity`` documents at every level (Theorems 7-8),
    and its rate at the far similarity (the S-curve, the suffix bits of the finer levels and the
    filter's own false positives, :func:`bloomkit.similarity.theory.jaccard_fpr`) <= fpr +
    verify_fpr.

    Raises InvalidParameterError for thresholds outside (0, 1) or not strictly decreasing, bad
    rates, and when no r <= max_rows, b <= max_bands reaches the targets (the message names the
    level and the best rates found).

    Complexity: O(max_bands * S * max_rows + max_verify_log2 * k').

    >>> p = select_jaccard_parameters((0.9, 0.8, 0.7), 100_000)
    >>> p.rows_by_level, p.bands, p.num_perm
    ((17, 12, 9), 21, 357)
    >>> [round(x, 3) for x in p.predicted_fnr], [round(x, 3) for x in p.predicted_lsh_fpr]
    ([0.0, 0.001, 0.048], [0.049, 0.046, 0.05])
    """
    ts = check_thresholds(thresholds, _JOWN)
    n = check_int(capacity, "capacity", _JOWN, lo=1)
    dn = check_float(fnr, "fnr", _JOWN, 0, 1, True, True)
    dp = check_float(fpr, "fpr", _JOWN, 0, 1, True, True)
    dv = check_float(verify_fpr, "verify_fpr", _JOWN, 0, 1, True, True)
    g1 = check_float(near_gap, "near_gap", _JOWN, 0, 1)
    g2 = check_float(far_gap, "far_gap", _JOWN, 0, 1)
    rmax = check_int(max_rows, "max_rows", _JOWN, lo=1, hi=63)
    bmaxb = check_int(max_bands, "max_bands", _JOWN, lo=1, hi=4096)
    bmax = check_int(max_verify_log2, "max_verify_log2", _JOWN, lo=1, hi=40)
    near = [min(t + g1, (t + 1.0) / 2.0) for t in ts]
    far = [max(t - g2, t / 2.0) for t in ts]

    best: tuple[int, int, tuple[int, ...]] | None = None
    for b in range(1, bmaxb + 1):
        # Formula 7: far^r <= 1 - (1 - fpr)^(1/b); Formula 6: near^r >= 1 - fnr^(1/b) (closed forms in r)
        cap_far = -math.expm1(math.log1p(-dp) / b)
        floor_near = -math.expm1(math.log(dn) / b)
        rows: list[int] = []
        prev = 0
        for lv in reversed(range(len(ts))):  # coarsest (lowest threshold, fewest rows) first
            r_lo = max(prev + 1, math.ceil(math.log(cap_far) / math.log(far[lv]) - 1e-9))
            r_hi = math.floor(math.log(floor_near) / math.log(near[lv]) + 1e-9) if near[lv] < 1 else rmax
            if r_lo > min(r_hi, rmax):
                break
            rows.insert(0, r_lo)
            prev = r_lo
        if len(rows) == len(ts) and (best is None or rows[0] * b < best[0]):
            best = (rows[0] * b, b, tuple(rows))
    if best is None:
        raise InvalidParameterError(
            f"The targets of {_JOWN} must be reachable with r <= max_rows = {rmax} rows and b <= max_bands = "
            f"{bmaxb} bands: no r x b gives FNR <= {dn} at t + {g1} and FPR <= {dp} at t - {g2} for every "
            f"threshold of {ts}. Got those targets instead; widen the gaps, relax fnr / fpr, or raise the limits.")
    _, b, rows_t = best
    levels = range(len(ts))

    def fill(mp: int, kp: int, t: int) -> float:
        return float(-math.expm1(-kp * n * b / (mp >> t)))

    def rate(s_: float, mp: int, kp: int, t: int) -> float:  # the built filter's predicted_fpr(similarity=s_)
        return float(theory.jaccard_fpr(s_, rows_t, b, level=t, verify_hashes=kp, fill=fill(mp, kp, t)))

    def meets(mp: int, kp: int) -> bool:
        # far queries within verify_fpr; a stored text at the far similarity within fpr + verify_fpr
        # (the S-curve's fpr plus the suffix bits of the finer levels, Section 6.3, and the filter's own)
        return all(rate(0.0, mp, kp, t) <= dv and rate(far[t], mp, kp, t) <= dp + dv for t in levels)

    found = _smallest_mvbf(meets, len(ts) - 1, n * b, bmax, 64)
    if found is None:
        raise InvalidParameterError(
            f"The 'max_verify_log2' parameter of {_JOWN} must allow a verification filter meeting "
            f"verify_fpr={dv!r} for {n} documents. Got {bmax!r} instead.")
    mp, kp = found
    return JaccardParameters(
        thresholds=ts, rows_by_level=rows_t, bands=b, verify_bits=mp, verify_hashes=kp, capacity=n,
        predicted_fnr=tuple(1.0 - rate(near[t], mp, kp, t) for t in levels),
        predicted_lsh_fpr=tuple(rate(far[t], mp, kp, t) for t in levels),
        predicted_verify_fpr=tuple(rate(0.0, mp, kp, t) for t in levels),
    )
