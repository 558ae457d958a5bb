"""Planning the folds: admissible sizes (corrected Eq. 14) and next-size policies.

Section IV-C of doc 003: at stage ``t`` a filter holding ``n`` items with ``k`` hash
functions must keep its false positive rate inside the band ``[rho - eps, rho + eps]``.
With the exact rate of Eq. 4 (corrected in ERRATA.md)

    rho(m, n, k) = (1 - (1 - 1/m)^(k n))^k

the size giving rate ``r`` is ``m(r) = 1 / (1 - (1 - r^(1/k))^(1/(k n)))`` and the admissible
sizes are ``m(rho + eps) <= m <= m(rho - eps)`` (the printed Eq. 14 is not this inversion; it
is kept as :func:`paper_eq14_bounds` for comparison). The next size is a divisor of the
initial size ``m_1`` (every divisor is reachable by folding, Eq. 3, or by unfolding from
``B_1``), chosen by one of the policies of Section IV-C:

``"independent"``
    the smallest admissible divisor of ``m_1`` regardless of history (fewest bytes);
``"greedy"``
    keep the current size while it is admissible; otherwise search only the sizes next to
    the previous fold (divisors of ``m_t`` when shrinking, multiples of ``m_t`` dividing
    ``m_1`` when growing) and fall back to ``"independent"``;
``"min_cost"``
    the admissible divisor that is cheapest to produce (0 if it is the current size,
    ``O(m_t)`` for a fold of the current filter, ``O(m_1)`` for an unfold from ``B_1``;
    Table II), ties broken by size;
``"entropy"``
    like ``"independent"`` for the first copy of a set; afterwards the admissible size not
    yet sent that minimises ``max_s gcd(d, s) / min(d, s)`` over the sizes ``s`` already sent
    (then the smallest). The score is 1 when ``d`` divides or is divided by a sent size: a
    folded filter is a function of every multiple of its size, so such a copy carries no
    new information to a receiver that intersects its copies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._validation import (
    INT64_MAX,
    NUM_HASHES,
    Int,
    check_choice,
    check_float,
    check_int,
    check_reals,
    param_error,
)
from ..bloom import NUM_BITS
from ..theory import false_positive_rate, num_bits_for
from .numbers import (
    MAX_VALUE,
    _enumerate_smooth,
    divisors,
    highly_composite,
    largely_composite,
    smooth_numbers,
)

__all__ = [
    "FoldabilityReport",
    "ITEMS",
    "POLICIES",
    "SizeInterval",
    "aggregate_fpr",
    "admissible_bounds",
    "admissible_sizes",
    "band_interval",
    "choose_initial_size",
    "bits_for_capacity",
    "exact_fpr",
    "fallback_size",
    "foldable_size",
    "next_size",
    "paper_eq14_bounds",
    "size_for_fpr",
    "validate_band",
]

POLICIES = ("independent", "greedy", "min_cost", "entropy")
ITEMS = Int(0)
"""``n``, a number of stored items (the planner's input; at most 2**63 - 1)."""
MAX_BITS = INT64_MAX
"""The largest size (bits or counters) of any filter: 2**63 - 1 (``bloomkit.bloom.NUM_BITS``)."""


def validate_band(rho: Any, eps: Any, owner: str) -> tuple[float, float]:
    """Check the band ``[rho - eps, rho + eps]``: ``0 < rho - eps`` and ``rho + eps < 1``.

    Raises
    ------
    InvalidParameterError
        If ``rho`` is not in (0, 1), ``eps <= 0``, ``rho - eps <= 0`` or ``rho + eps >= 1``.
    """
    rho = check_float(rho, "rho", owner, 0, 1, lo_open=True, hi_open=True)
    eps = check_float(eps, "eps", owner, 0, 1, lo_open=True, hi_open=True)
    if rho - eps <= 0:
        raise param_error("eps", owner, f"< rho = {rho} (the band needs rho - eps > 0)", eps)
    if rho + eps >= 1:
        raise param_error("eps", owner, f"< 1 - rho = {1 - rho} (the band needs rho + eps < 1)", eps)
    return rho, eps


def _n_k(n: Any, num_hashes: Any, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """n >= 0 items and 1 <= k <= MAX_HASHES probes, as float arrays."""
    return (check_reals(n, "n", owner, lo=0),
            check_reals(num_hashes, "num_hashes", owner, lo=1, hi=NUM_HASHES.hi))


def size_for_fpr(n: Any, num_hashes: Any, fpr: Any) -> Any:
    """Real size ``m(r)`` at which ``n`` items and ``k`` hashes give false positive rate ``r``.

    Inverts Eq. 4 of doc 003 (with the exponent ``k`` restored, ERRATA.md):

    .. math:: m(r) = \\frac{1}{1 - (1 - r^{1/k})^{1/(k n)}}

    computed as ``-1 / expm1(log1p(-r^(1/k)) / (k n))`` to keep precision for large ``n``.
    Scalars or broadcastable arrays; ``n = 0`` gives 0 (any size has rate 0).

    Notes
    -----
    Complexity: O(1) per element.

    >>> round(size_for_fpr(1000, 2, 0.1), 1)
    5261.9
    """
    n_a, k_a = _n_k(n, num_hashes, "size_for_fpr")
    r_a = check_reals(fpr, "fpr", "size_for_fpr", 0, 1, lo_open=True, hi_open=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.log1p(-(r_a ** (1.0 / k_a))) / (k_a * n_a)
        m = -1.0 / np.expm1(step)
    m = np.where(n_a > 0, m, 0.0)
    return float(m) if m.ndim == 0 else m


def admissible_bounds(n: Any, num_hashes: Any, rho: float, eps: float) -> tuple[Any, Any]:
    """Real bounds ``(m(rho + eps), m(rho - eps))`` of the admissible sizes (corrected Eq. 14).

    Notes
    -----
    Complexity: O(1) per element.

    >>> lo, hi = admissible_bounds(1000, 2, 0.1, 0.02)
    >>> round(lo), round(hi)
    (4703, 6016)
    """
    rho, eps = validate_band(rho, eps, "admissible_bounds")
    return size_for_fpr(n, num_hashes, rho + eps), size_for_fpr(n, num_hashes, rho - eps)


def paper_eq14_bounds(n: Any, num_hashes: Any, rho: float, eps: float) -> tuple[Any, Any]:
    """Eq. 14 of doc 003 as printed (not a correct inversion; for comparison only).

    .. math:: \\frac{1}{1 - (1 - \\frac{\\epsilon}{\\rho + \\epsilon})^{1/(kn)}} \\le m \\le
              \\frac{1}{1 - (1 - \\frac{\\epsilon}{\\rho - \\epsilon})^{1/(kn)}}

    The upper bound is NaN when ``eps > rho - eps`` (negative base).
    """
    n_a, k_a = _n_k(n, num_hashes, "paper_eq14_bounds")
    rho = check_float(rho, "rho", "paper_eq14_bounds", 0, 1, lo_open=True, hi_open=True)
    eps = check_float(eps, "eps", "paper_eq14_bounds", 0, 1, lo_open=True, hi_open=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = 1.0 / (1.0 - (1.0 - eps / (rho + eps)) ** (1.0 / (k_a * n_a)))
        hi = 1.0 / (1.0 - (1.0 - eps / (rho - eps)) ** (1.0 / (k_a * n_a)))
    return (float(lo) if np.ndim(lo) == 0 else lo), (float(hi) if np.ndim(hi) == 0 else hi)


class SizeInterval(NamedTuple):
    """Inclusive integer interval ``[lo, hi]`` of admissible sizes (empty if ``lo > hi``)."""

    lo: int
    hi: int

    @property
    def empty(self) -> bool:
        """True if no integer size is admissible."""
        return self.lo > self.hi

    def contains(self, m: int) -> bool:
        """True if ``lo <= m <= hi``."""
        return self.lo <= m <= self.hi


def exact_fpr(n: float, num_bits: int, num_hashes: int) -> float:
    """Eq. 4 of doc 003 (outer exponent restored, ERRATA.md): ``(1 - (1 - 1/m)^(k n))^k``.

    The rate of ``n`` items in a filter of ``m`` bits with ``k`` probes, through
    :func:`bloomkit.theory.false_positive_rate` (exact form); ``m = 1`` gives 1 for ``n > 0``
    and ``n = 0`` gives 0, without floating-point warnings.

    Notes
    -----
    Complexity: O(1).

    >>> round(exact_fpr(1000, 4704, 2), 5), exact_fpr(5, 1, 3), exact_fpr(0, 10, 3)
    (0.11997, 1.0, 0.0)
    """
    n = check_float(n, "n", "exact_fpr", lo=0)
    num_bits = Int(1, MAX_BITS)(num_bits, "num_bits", "exact_fpr")
    num_hashes = NUM_HASHES(num_hashes, "num_hashes", "exact_fpr")
    if num_bits <= 1:  # (1 - 1/m)^(kn) is 0^(kn): rate 1 for n > 0 (avoid log1p(-1) warnings)
        return 1.0 if n > 0 else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(false_positive_rate(n, num_bits, num_hashes, exact=True))


def foldable_size(num_bits: int) -> int:
    """A size ``m_1 >= m`` with many divisors, at most ``m / 64`` larger than ``m``.

    ``m_1`` is the smallest multiple of ``L_j = lcm(1, ..., j)`` that is at least ``m``, for
    the largest ``j`` with ``L_j <= m / 64``: every factor ``2 .. j`` divides ``m_1``, so the
    filter folds by each of them (Eq. 3), and ``d(m_1) >= d(L_j)`` (Eq. 8). This is how
    ``FoldableBloomFilter(capacity=, fpr=)`` rounds the size of doc 000 Eqs. 1-2 (plan a
    range of item counts with :func:`~bloomkit.folding.choose_initial_size` instead).

    Notes
    -----
    Complexity: O(log m).

    >>> foldable_size(9586), foldable_size(10**6), foldable_size(50)
    (9600, 1000440, 50)
    """
    m = check_int(num_bits, "num_bits", "foldable_size", lo=1, hi=MAX_BITS)
    step, j = 1, 1
    while math.lcm(step, j + 1) <= m // 64:
        step, j = math.lcm(step, j + 1), j + 1
    out = -(-m // step) * step
    return out if out <= MAX_BITS else m


def bits_for_capacity(capacity: int, fpr: float, owner: str) -> int:
    """``foldable_size`` of the size of doc 000 Eqs. 1-2 for ``capacity`` keys at ``fpr``
    (:func:`bloomkit.theory.num_bits_for`); InvalidParameterError naming ``capacity`` when no
    filter of at most 2**63 - 1 bits holds it. Arguments already validated."""
    if -capacity * math.log(fpr) / math.log(2) ** 2 > MAX_BITS:  # num_bits_for before its int64 cast
        raise param_error("capacity", owner, f"small enough for {MAX_BITS} bits at fpr={fpr}", capacity)
    return foldable_size(int(num_bits_for(capacity, fpr)))


def _first_true(pred: Callable[[int], bool], guess: int, limit: int) -> int:
    """Smallest ``m`` in ``[1, limit]`` with ``pred(m)`` for a predicate that is False then
    True (``pred(limit)`` is taken as True), searched from ``guess`` by doubling steps and
    then bisection: O(log |answer - guess|) calls."""
    g = min(max(1, guess), limit)
    if pred(g):
        hi, step = g, 1
        lo = g - step
        while lo >= 1 and pred(lo):
            hi, step = lo, step * 2
            lo = g - step
        lo = max(lo, 0)  # pred(lo) is False, or lo = 0 (below the range)
    else:
        lo, step = g, 1
        hi = min(g + step, limit)
        while hi < limit and not pred(hi):
            lo, step = hi, step * 2
            hi = min(g + step, limit)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi


def band_interval(n: int, k: int, rho: float, eps: float, owner: str) -> SizeInterval:
    """:func:`admissible_sizes` for validated arguments; InvalidParameterError naming ``n``
    when no filter of at most 2**63 - 1 bits keeps ``n`` items at rate ``<= rho + eps``."""
    if n == 0:
        return SizeInterval(1, 0)
    lo_r, hi_r = admissible_bounds(n, k, rho, eps)
    if not lo_r <= MAX_BITS:
        raise param_error(
            "n", owner, f"at most what a filter of {MAX_BITS} bits holds at rate {rho + eps:g} "
            f"(n = {n} needs {lo_r:.4g} bits)", n)
    top, bottom = rho + eps, rho - eps
    lo = _first_true(lambda m: exact_fpr(n, m, k) <= top, math.ceil(lo_r), MAX_BITS)
    guess = math.floor(hi_r) + 1 if hi_r < MAX_BITS else MAX_BITS
    hi = _first_true(lambda m: exact_fpr(n, m, k) < bottom, guess, MAX_BITS + 1) - 1
    return SizeInterval(lo, min(hi, MAX_BITS))


def admissible_sizes(n: int, num_hashes: int, rho: float, eps: float) -> SizeInterval:
    """Integer sizes ``m`` whose exact false positive rate lies in ``[rho - eps, rho + eps]``.

    Corrected Eq. 14 of doc 003 (ERRATA.md): ``ceil(m(rho + eps)) <= m <= floor(m(rho - eps))``
    with :func:`size_for_fpr`; the integer end points are then checked against the exact rate
    (:func:`exact_fpr`) and moved where rounding put them on the wrong side (a doubling then
    bisecting search from the real bounds: a few evaluations, for any ``n``).

    Parameters
    ----------
    n : int
        Number of stored items, ``>= 0``. For ``n = 0`` every size has rate 0 and the
        interval is empty.
    num_hashes : int
        ``k`` in ``[1, 1024]``.
    rho, eps : float
        The band; ``rho - eps > 0`` and ``rho + eps < 1``.

    Returns
    -------
    SizeInterval
        ``(lo, hi)``, inclusive; ``lo > hi`` if empty. ``hi`` is at most ``2**63 - 1``.

    Raises
    ------
    InvalidParameterError
        On a bad ``n``, ``k`` or band, or an ``n`` that no filter of at most ``2**63 - 1``
        bits keeps at rate ``<= rho + eps``.

    Notes
    -----
    Complexity: O(log m) evaluations of Eq. 4 (a handful in practice).

    >>> admissible_sizes(1000, 2, 0.1, 0.02)
    SizeInterval(lo=4704, hi=6016)
    """
    owner = "admissible_sizes"
    n = ITEMS(n, "n", owner)
    k = NUM_HASHES(num_hashes, "num_hashes", owner)
    rho, eps = validate_band(rho, eps, owner)
    return band_interval(n, k, rho, eps, owner)


def aggregate_fpr(sizes: Sequence[int], n: int, num_hashes: int, model: str = "folds") -> float:
    """False positive rate of a receiver that ANDs copies of one set folded to ``sizes``.

    ``model="product"`` is the product of the Eq. 4 rates (copies treated as independent).
    ``model="folds"`` accounts for the copies being folds of one ``B_1``: with ``L`` the lcm
    of the sizes, a probe of a non-member falls in cell ``u`` of ``B_L``; copy ``j`` tests the
    OR of the class ``C_j = {v : v = u mod m_j}`` of ``L / m_j`` cells, and
    ``|C_S| = |union_{j in S} C_j| / L = sum_{T subset S, T != {}} (-1)^(|T|+1) / lcm(m_T)``
    (classes of a set ``T`` meet in the ``L / lcm(m_T)`` cells ``= u mod lcm(m_T)``). With the
    ``k n`` member probes uniform and independent, one probe passes every copy with probability

    .. math:: p = \\sum_{S \\subseteq \\{1..c\\}} (-1)^{|S|} (1 - |C_S|)^{k n}

    (inclusion-exclusion over the copies whose cell is empty), and the rate is ``p^k`` (the
    usual independence of a key's k probes, as in Eq. 4). Repeated sizes count once (an
    identical copy adds nothing); a size dividing another still counts (its class is a
    superset). For one copy this is Eq. 4.

    Parameters
    ----------
    sizes : sequence of int
        Sizes of the copies (each >= 1).
    n : int
        Items in the set.
    num_hashes : int
        ``k``.
    model : {"folds", "product"}
        See above.

    Returns
    -------
    float

    Notes
    -----
    Complexity: O(3^c) for c distinct sizes (at most 12 accepted for ``"folds"``).

    >>> round(aggregate_fpr([12320, 12870], 2000, 3, "product"), 6)
    0.002965
    >>> round(aggregate_fpr([12320, 12870], 2000, 3), 6)
    0.003065
    """
    owner = "aggregate_fpr"
    k = NUM_HASHES(num_hashes, "num_hashes", owner)
    n = ITEMS(n, "n", owner)
    model = check_choice(model, "model", owner, ("folds", "product"))
    if not isinstance(sizes, Sequence | np.ndarray | set | frozenset) or isinstance(sizes, str | bytes) or not len(sizes):
        raise param_error("sizes", owner, "a non-empty sequence of sizes", sizes)
    uniq = sorted({check_int(m, "sizes", owner, lo=1) for m in sizes})
    if model == "product":
        return float(math.prod(exact_fpr(n, int(m), k) for m in sizes))
    if len(uniq) > 12:
        raise param_error("sizes", owner, "at most 12 distinct sizes for model='folds'", len(uniq))
    c = len(uniq)
    # |union of classes| / L for every subset S (bit mask), by inclusion-exclusion over T subset S
    inv_lcm = [0.0] * (1 << c)
    for mask in range(1, 1 << c):
        lcm = 1
        for j in range(c):
            if mask >> j & 1:
                lcm = math.lcm(lcm, uniq[j])
        inv_lcm[mask] = 1.0 / lcm
    total = 0.0
    for mask in range(1 << c):
        union = 0.0
        sub = mask
        while sub:
            union += (1.0 if bin(sub).count("1") % 2 else -1.0) * inv_lcm[sub]
            sub = (sub - 1) & mask
        empty_all = math.exp(k * n * math.log1p(-union)) if union < 1.0 else (1.0 if n == 0 else 0.0)
        total += (-1.0 if bin(mask).count("1") % 2 else 1.0) * empty_all
    return float(min(1.0, max(0.0, total)) ** k)


def fallback_size(divs: np.ndarray, n: int, k: int, rho: float, eps: float) -> int:
    """The size to use when no divisor is admissible.

    The smallest divisor whose rate is at most ``rho + eps`` (the rate is then below the
    band: the divisor grid is too coarse there, or ``n = 0``); the largest divisor if even
    that exceeds ``rho + eps`` (the filter is over capacity).
    """
    if n == 0:
        return int(divs[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = np.asarray(false_positive_rate(n, divs, k, exact=True))
    ok = np.flatnonzero(rates <= rho + eps)
    return int(divs[ok[0]]) if ok.size else int(divs[-1])


def next_size(
    m1: int,
    n: int,
    num_hashes: int,
    rho: float,
    eps: float,
    *,
    policy: str = "independent",
    current: int | None = None,
    sent: Sequence[int] = (),
) -> int:
    """The next size of a filter of initial size ``m_1`` holding ``n`` items (Section IV-C).

    Parameters
    ----------
    m1 : int
        Initial (maximal) size ``m_1``.
    n : int
        Items currently stored.
    num_hashes : int
        ``k``.
    rho, eps : float
        The band ``[rho - eps, rho + eps]``.
    policy : {"independent", "greedy", "min_cost", "entropy"}
        See the module docstring.
    current : int, optional
        Current size ``m_t`` (a divisor of ``m_1``; default ``m_1``), used by ``"greedy"`` and
        ``"min_cost"``.
    sent : sequence of int
        Sizes already transmitted for the current set (``"entropy"`` avoids them).

    Returns
    -------
    int
        A divisor of ``m_1``: admissible if any divisor is, else :func:`fallback_size`.

    Raises
    ------
    InvalidParameterError
        On bad arguments or a ``current`` that does not divide ``m_1``.

    Notes
    -----
    Complexity: O(m_1^(1/4) + d(m_1)) (factorisation plus a scan of the divisors); the
    greedy policy scans only the divisors of ``m_t`` (or of ``m_1 / m_t``) when it moves.

    >>> next_size(5040, 100, 2, 0.1, 0.02)
    504
    """
    owner = "next_size"
    m1 = NUM_BITS(m1, "m1", owner)
    n = ITEMS(n, "n", owner)
    k = NUM_HASHES(num_hashes, "num_hashes", owner)
    rho, eps = validate_band(rho, eps, owner)
    policy = check_choice(policy, "policy", owner, POLICIES)
    cur = m1 if current is None else check_int(current, "current", owner, lo=1, hi=m1)
    if m1 % cur:
        raise param_error("current", owner, f"a divisor of m1 = {m1}", current)
    interval = band_interval(n, k, rho, eps, owner)
    divs = divisors(m1)
    adm = divs[(divs >= interval.lo) & (divs <= interval.hi)]
    if adm.size == 0:
        return fallback_size(divs, n, k, rho, eps)
    if policy == "independent":
        return int(adm[0])
    if policy == "greedy":
        if interval.contains(cur):
            return cur
        if cur > interval.hi:  # too big: fold the current filter further
            local = divisors(cur)
        else:  # too small: unfold towards m_1 along multiples of m_t
            local = cur * divisors(m1 // cur)
        hit = local[(local >= interval.lo) & (local <= interval.hi)]
        return int(hit[0]) if hit.size else int(adm[0])
    if policy == "min_cost":
        cost = np.where(adm == cur, 0, np.where(cur % adm == 0, cur, m1))
        order = np.lexsort((adm, cost))
        return int(adm[order[0]])
    # entropy
    prev = [check_int(s, "sent", owner, lo=1, hi=m1) for s in sent]
    if not prev:
        return int(adm[0])
    best: tuple[float, int] | None = None
    for d in adm.tolist():
        if d in prev:
            continue
        # 1.0 when d divides or is divided by a sent size: such a copy adds nothing
        corr = max(math.gcd(d, s) / min(d, s) for s in prev)
        key = (corr, d)
        if best is None or key < best:
            best = key
    return int(adm[0]) if best is None else best[1]


# ---------------------------------------------------------------------------------------------
# the chooser of m_1 (Section IV-A "Synthesis")


@dataclass(frozen=True)
class FoldabilityReport:
    """Foldability of one candidate initial size ``m_1`` for a range of item counts.

    Attributes
    ----------
    m1 : int
        The candidate size (bits).
    num_divisors : int
        ``d(m_1)`` (Eq. 8).
    coverage : float
        Fraction of the item counts ``n`` in the range for which some divisor of ``m_1``
        lies in the admissible interval of Eq. 14 (corrected).
    mean_overhead : float
        Mean over the covered ``n`` of (smallest admissible divisor) / (smallest admissible
        size) - 1: the bandwidth the divisor grid wastes against the per-``n`` optimum.
    max_overhead : float
        Largest such overhead over the covered ``n``.
    """

    m1: int
    num_divisors: int
    coverage: float
    mean_overhead: float
    max_overhead: float


def _score(m1: int, n_grid: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> FoldabilityReport:
    divs = divisors(m1)
    # smallest divisor >= lo(n) for every n
    idx = np.searchsorted(divs, lo, side="left")
    ok = idx < divs.size
    best = np.where(ok, divs[np.minimum(idx, divs.size - 1)], 0)
    ok &= best <= hi
    cov = float(ok.mean()) if n_grid.size else 0.0
    if ok.any():
        over = best[ok] / lo[ok] - 1.0
        mean_o, max_o = float(over.mean()), float(over.max())
    else:
        mean_o = max_o = math.inf
    return FoldabilityReport(int(m1), int(divs.size), cov, mean_o, max_o)


def choose_initial_size(
    n_min: int,
    n_max: int,
    num_hashes: int,
    rho: float,
    eps: float,
    *,
    y: int = 13,
    oversize: float = 32.0,
    max_candidates: int = 3000,
    n_points: int = 256,
    objective: str = "max",
) -> tuple[int, list[FoldabilityReport]]:
    """Choose ``m_1`` maximising foldability for ``n`` in ``[n_min, n_max]`` and a band.

    Candidates are the ``y``-smooth numbers (Section IV-A "Synthesis") and the largely
    composite numbers in ``[M_lo, oversize * M_lo]``, where ``M_lo`` is the smallest
    size keeping the false positive rate of ``n_max`` items at most ``rho + eps`` (corrected
    Eq. 14). Each candidate is scored on a grid of ``n_points`` item counts by
    :class:`FoldabilityReport`; the winner maximises coverage, then minimises the largest
    (``objective="max"``) or the mean (``objective="mean"``) overhead, then the other one,
    then the size.

    Why oversize: folding reaches only ``m_1 / f`` for integers ``f``, and no divisor of
    ``m_1`` lies in ``(m_1 / 2, m_1)``; consecutive sizes ``m_1 / f`` and ``m_1 / (f + 1)``
    differ by the ratio ``1 + 1/f``. A band whose admissible interval has ratio
    ``m(rho - eps) / m(rho + eps) = R`` is therefore covered near ``n_max`` only if ``m_1`` is
    at least about ``1 / (R - 1)`` times the size ``n_max`` needs. ``B_1`` is kept by the
    sender only; what is sent is the folded filter.

    Parameters
    ----------
    n_min, n_max : int
        Range of the number of stored items, ``1 <= n_min <= n_max``.
    num_hashes : int
        ``k``.
    rho, eps : float
        The band ``[rho - eps, rho + eps]`` (``0 < rho - eps``, ``rho + eps < 1``).
    y : int
        Smoothness bound of the candidates.
    oversize : float
        Candidates go up to ``oversize * M_lo`` (>= 1). Larger values give a finer grid of
        sizes (smaller overhead) at the cost of sender memory for ``B_1``.
    max_candidates : int
        At most this many candidates (evenly subsampled) are scored.
    n_points : int
        Number of item counts (log-spaced) the coverage is measured on.
    objective : {"max", "mean"}
        Which bandwidth overhead to minimise after coverage.

    Returns
    -------
    (int, list of FoldabilityReport)
        The chosen ``m_1`` and the scored candidates, best first.

    Notes
    -----
    Complexity: O(C (m_1^(1/4) + d(m_1) + n_points log d(m_1))) for C candidates.
    """
    owner = "choose_initial_size"
    n_min = check_int(n_min, "n_min", owner, lo=1, hi=MAX_VALUE)
    n_max = check_int(n_max, "n_max", owner, lo=n_min, hi=MAX_VALUE)  # more items need more than 2**62 bits
    k = check_int(num_hashes, "num_hashes", owner, lo=1, hi=64)
    rho, eps = validate_band(rho, eps, owner)
    y = check_int(y, "y", owner, lo=2, hi=10**6)
    oversize = check_float(oversize, "oversize", owner, 1, 1e6)
    max_candidates = check_int(max_candidates, "max_candidates", owner, lo=1)
    n_points = check_int(n_points, "n_points", owner, lo=2)
    objective = check_choice(objective, "objective", owner, ("max", "mean"))
    n_grid = np.unique(np.round(np.geomspace(n_min, n_max, n_points)).astype(np.int64))
    lo_r, hi_r = admissible_bounds(n_grid, k, rho, eps)
    lo = np.ceil(lo_r)
    hi = np.floor(hi_r)
    m_lo = int(math.ceil(lo_r[-1]))
    z = max(1, int(m_lo * (oversize - 1.0)))
    if m_lo + z > MAX_VALUE:
        raise param_error("n_max", owner, "small enough for a filter below 2**62 bits", n_max)
    cands = smooth_numbers(m_lo, z, y) if z <= 10**7 else _enumerate_smooth(m_lo, m_lo + z, y)
    if m_lo + z <= 10**7:
        lc = largely_composite(m_lo + z)
        cands = np.union1d(cands, lc[lc >= m_lo])
    else:
        hc = highly_composite(m_lo + z)
        cands = np.union1d(cands, hc[hc >= m_lo])
    if cands.size == 0:
        cands = np.array([m_lo], dtype=np.int64)
    if cands.size > max_candidates:
        cands = cands[np.linspace(0, cands.size - 1, max_candidates).round().astype(np.int64)]
    reports = [_score(int(c), n_grid, lo, hi) for c in cands]
    if objective == "max":
        reports.sort(key=lambda r: (-r.coverage, r.max_overhead, r.mean_overhead, r.m1))
    else:
        reports.sort(key=lambda r: (-r.coverage, r.mean_overhead, r.max_overhead, r.m1))
    return reports[0].m1, reports
