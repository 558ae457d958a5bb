"""Configuration optimizers of document 000, Section IV.

* :func:`optimize_single`: the single-range search of Figure 5 for each of the four schemes
  (Eq. 17 start, concavity search over the (d, s) sequence, inner concavity search over k).
* :func:`optimize_single_bruteforce`: exhaustive search over a bounded (k, d, s) grid.
* :func:`phase1_k_ini` / :func:`optimize_multi`: the two-phase multi-attribute optimizer of
  Figures 6-7 (Phase 1 marginal utility, Eqs. 34-35 with the corrected Eq. 24; Phase 2
  gradient re-allocation for k in [k_ini - 4, k_ini + 3]), optionally with one k per attribute
  (the future work of Section VI).
* :func:`optimize_multi_grid`: a reference search used to measure how close the heuristic
  gets (exhaustive per attribute over the whole bounded grid, repeated to a fixed point, from
  several starts, over a wider range of k).

``exact`` selects ``p = (1 - 1/m)^b`` (True) or ``e^(-b/m)`` (False) inside the rates; the
report's Phase 2 used the exponential form: with ``exact=False`` Table 2's eight f_T values
are reproduced to all four printed digits, with ``exact=True`` they are 0.2-0.3 % higher.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._engine.columns import sized_items
from .._validation import MAX_HASHES, Bool, check_choice, check_float, check_int, param_error
from . import _kernels as K
from . import model as M

__all__ = [
    "SCHEMES",
    "AttributeChoice",
    "MultiResult",
    "SingleResult",
    "optimize_multi",
    "optimize_multi_grid",
    "optimize_single",
    "optimize_single_bruteforce",
    "phase1_config",
    "phase1_k_ini",
    "PHASE1_RULES",
]

SCHEMES = ("traditional", "grouping", "overlapping", "grouping-overlapping")
LN2 = math.log(2.0)
MAX_BRUTEFORCE = 10_000_000
"""Most (k, d, s) candidates :func:`optimize_single_bruteforce` evaluates (bounded time and memory)."""


# ---------------------------------------------------------------------------------------------
# single range (Figure 5)


@dataclass(frozen=True)
class SingleResult:
    """Optimal configuration of one inserted range.

    Attributes
    ----------
    k, d, s : positions per key (k), group size (d), positions generated per group (s).
    fpr : the model's false positive rate, Eq. (14).
    expected_set_bits : a_1 of Eq. (36).
    scheme : one of SCHEMES.
    evaluations : number of model evaluations the search used.
    """

    k: int
    d: int
    s: int
    fpr: float
    expected_set_bits: float
    scheme: str
    evaluations: int = 0


def _seq_to_ds(idx: int) -> tuple[int, int]:
    """Position on (..., (3,1), (2,1), (1,1), (1,2), (1,3), ...): idx >= 0 -> (1, idx+1)."""
    return (1, idx + 1) if idx >= 0 else (1 - idx, 1)


def _ds_to_seq(d: int, s: int) -> int:
    return s - 1 if d == 1 else 1 - d


class _SingleSearch:
    def __init__(self, R: int, n: int, m: int, scheme: str, k_fixed: int | None, exact: bool, k_max: int):
        self.R, self.n, self.m, self.scheme = R, n, m, scheme
        self.k_fixed, self.exact, self.k_max = k_fixed, exact, k_max
        self.evals = 0
        self.cache: dict[tuple[int, int, int], float] = {}

    def f(self, k: int, d: int, s: int) -> float:
        key = (k, d, s)
        if key not in self.cache:
            self.evals += 1
            self.cache[key] = float(M.f_go(self.R, self.n, d, s, k, self.m, self.exact))
        return self.cache[key]

    def params(self, idx: int, k: int) -> tuple[int, int] | None:
        """(d, s) of a point of the scheme's sequence for a given k (None if not allowed)."""
        sch = self.scheme
        if sch == "traditional":
            return (1, k)
        if sch == "grouping":  # idx = d - 1 >= 0, s = k
            return (idx + 1, k)
        if sch == "overlapping":  # idx = s - 1 >= 0
            s = idx + 1
            return (1, s) if s <= k else None
        d, s = _seq_to_ds(idx)
        if s > k or d > self.R:
            return None
        return (d, s)

    def idx_ok(self, idx: int) -> bool:
        if self.scheme == "traditional":
            return idx == 0
        if self.scheme in ("grouping", "overlapping"):
            return 0 <= idx and (self.scheme != "grouping" or idx + 1 <= self.R)
        d, s = _seq_to_ds(idx)
        return d <= self.R and s <= (self.k_fixed or self.k_max)

    def best_k(self, idx: int) -> tuple[float, int]:
        """Inner loop: the k minimising f for this point, by walking downhill from a start."""
        if self.k_fixed is not None:
            ds = self.params(idx, self.k_fixed)
            return (math.inf, self.k_fixed) if ds is None else (self.f(self.k_fixed, *ds), self.k_fixed)
        # the lowest k allowed for this point
        if self.scheme == "overlapping":
            k_lo = idx + 1
        elif self.scheme == "grouping-overlapping":
            k_lo = _seq_to_ds(idx)[1]
        else:
            k_lo = 1
        # start where about m ln 2 positions are hashed (Eq. 15)
        d, s = self.params(idx, self.k_max) or (1, 1)
        if self.scheme in ("traditional", "grouping"):
            k0 = round(self.m * LN2 / ((self.n - 1) / d + 1))
        else:
            k0 = round(self.m * LN2 - (self.n - 1) * s / d)
        k = min(max(k0, k_lo, 1), self.k_max)

        def val(kk: int) -> float:
            ds = self.params(idx, kk)
            return math.inf if ds is None or kk < k_lo or kk > self.k_max else self.f(kk, *ds)

        cur = val(k)
        for step in (1, -1):
            moved = False
            while True:
                nxt = val(k + step)
                if nxt < cur:
                    k, cur, moved = k + step, nxt, True
                else:
                    break
            if moved:
                break
        return cur, k

    def run(self) -> SingleResult:
        ratio = self.m * LN2 / self.n  # Eq. (16)
        if self.scheme == "traditional":
            idx = 0
        elif self.scheme == "grouping":
            idx = 0
        elif self.scheme == "overlapping":
            idx = max(1, round(ratio)) - 1
        else:  # Eq. (17)
            d, s = (1, max(1, round(ratio))) if ratio >= 0.7 else (max(1, round(1.0 / ratio)), 1)
            idx = _ds_to_seq(d, s)
        cap = self.k_fixed or self.k_max
        if self.scheme in ("overlapping", "grouping-overlapping"):
            idx = min(idx, cap - 1)  # s <= k: first (a start of s = m ln2 / n is unbounded)
            while not self.idx_ok(idx) and idx > 0:
                idx -= 1
        cur, k = self.best_k(idx)
        for step in (1, -1):
            moved = False
            while self.idx_ok(idx + step):
                nxt, k2 = self.best_k(idx + step)
                if nxt < cur:
                    idx, cur, k, moved = idx + step, nxt, k2, True
                else:
                    break
            if moved:
                break
        d, s = self.params(idx, k) or (1, k)
        a = float(M.a1(M.go(self.n, d, s, k), self.m, self.exact))
        return SingleResult(k, d, s, cur, a, self.scheme, self.evals)


def _check_single(scope_size: Any, range_size: Any, num_bits: Any, scheme: Any, owner: str) -> tuple[int, int, int, str]:
    R = check_int(scope_size, "scope_size", owner, lo=2)
    n = check_int(range_size, "range_size", owner, lo=1, hi=R - 1)
    m = check_int(num_bits, "num_bits", owner, lo=2)
    sch = check_choice(scheme, "scheme", owner, SCHEMES)
    return R, n, m, sch


def optimize_single(
    scope_size: int,
    range_size: int,
    num_bits: int,
    scheme: str = "grouping-overlapping",
    *,
    num_hashes: int | None = None,
    exact: bool = False,
    k_max: int = 64,
) -> SingleResult:
    """Optimal (k, d, s) for one inserted range, Figure 5 (document 000, Section IV.1).

    The initial (d, s) follows Eq. (17) from the s-to-d ratio ``m ln2 / n`` of Eq. (16); the
    outer loop walks the sequence ``(..., (3,1), (2,1), (1,1), (1,2), (1,3), ...)`` downhill
    ("concavity" conjecture), the inner loop walks k downhill for each (d, s). The other
    schemes are the special cases traditional (d = 1, s = k), grouping (s = k) and
    overlapping (d = 1).

    Parameters
    ----------
    scope_size : int
        R, the number of values of the attribute.
    range_size : int
        n, the size of the inserted range (1 <= n < R).
    num_bits : int
        m.
    scheme : str
        One of "traditional", "grouping", "overlapping", "grouping-overlapping".
    num_hashes : int, optional
        Fix k (Figure 13) and optimise (d, s) only.
    exact : bool
        ``p = (1-1/m)^go`` instead of ``e^(-go/m)``.
    k_max : int
        Largest k considered.

    Returns
    -------
    SingleResult

    Examples
    --------
    >>> res = optimize_single(10000, 100, 512)
    >>> (res.d, res.s) == (1, 3)
    True

    Complexity: O((number of points visited) * (k steps)) model evaluations, typically < 100.
    """
    R, n, m, sch = _check_single(scope_size, range_size, num_bits, scheme, "optimize_single")
    kmax = check_int(k_max, "k_max", "optimize_single", lo=1, hi=MAX_HASHES)
    kf = None if num_hashes is None else check_int(num_hashes, "num_hashes", "optimize_single", lo=1, hi=MAX_HASHES)
    return _SingleSearch(R, n, m, sch, kf, bool(exact), kmax).run()


def optimize_single_bruteforce(
    scope_size: int,
    range_size: int,
    num_bits: int,
    scheme: str = "grouping-overlapping",
    *,
    num_hashes: int | None = None,
    exact: bool = False,
    k_max: int = 64,
    d_max: int | None = None,
    general: bool = False,
) -> SingleResult:
    """Exhaustive minimum of Eq. (14) over k <= k_max, d <= d_max and the scheme's s.

    ``general=True`` also tries (d, s) with both d > 1 and s > 1 (the report conjectures that
    the optimum always has d = 1 or s = 1).

    Complexity: O(k_max * d_max * k_max) model evaluations (vectorised).
    """
    owner = "optimize_single_bruteforce"
    R, n, m, sch = _check_single(scope_size, range_size, num_bits, scheme, owner)
    kmax = check_int(k_max, "k_max", owner, lo=1, hi=MAX_HASHES)
    dm = min(R, check_int(d_max, "d_max", owner, lo=1) if d_max is not None else max(64, 4 * n // max(1, m) + 64))
    ks = np.arange(1, kmax + 1) if num_hashes is None else np.array([check_int(num_hashes, "num_hashes", owner, lo=1,
                                                                               hi=MAX_HASHES)])
    general = Bool()(general, "general", owner)
    candidates = len(ks) * (dm + kmax) * (kmax if general else 1)
    if candidates > MAX_BRUTEFORCE:
        raise param_error("d_max", owner, f"small enough that k_max x (d_max + k_max){' x k_max' if general else ''} "
                          f"<= {MAX_BRUTEFORCE} candidates are tried", d_max)
    rows: list[tuple[int, int, int]] = []
    for k in ks:
        k = int(k)
        if sch == "traditional":
            cand = [(1, k)]
        elif sch == "grouping":
            cand = [(d, k) for d in range(1, dm + 1)]
        elif sch == "overlapping":
            cand = [(1, s) for s in range(1, k + 1)]
        elif general:
            cand = [(d, s) for d in range(1, dm + 1) for s in range(1, k + 1)]
        else:
            cand = [(1, s) for s in range(1, k + 1)] + [(d, 1) for d in range(2, dm + 1)]
        rows.extend((k, d, s) for d, s in cand)
    arr = np.array(rows, dtype=np.float64)
    f = np.asarray(M.f_go(R, n, arr[:, 1], arr[:, 2], arr[:, 0], m, exact))
    i = int(np.argmin(f))
    k, d, s = (int(v) for v in arr[i])
    a = float(M.a1(M.go(n, d, s, k), m, exact))
    return SingleResult(k, d, s, float(f[i]), a, sch, len(rows))


# ---------------------------------------------------------------------------------------------
# multiple attributes (Figures 6 and 7)


@dataclass(frozen=True)
class AttributeChoice:
    """Configuration and model rate of one attribute.

    ``d`` / ``s`` are None for text attributes; ``bits`` is b_i (Eqs. 21/28, k for text);
    ``k`` is the attribute's k (equal for all attributes unless per-attribute k was asked).
    """

    name: str
    d: int | None
    s: int | None
    bits: float
    fpr: float
    k: int


@dataclass
class MultiResult:
    """Result of :func:`optimize_multi` / :func:`optimize_multi_grid`.

    Attributes
    ----------
    k_ini : Phase 1's initial k (Figure 6).
    k : the k with the smallest total rate (for per-attribute k: the shared k it started from).
    total_fpr : f_T, the sum of the attributes' rates.
    expected_set_bits : a_1 of Eq. (36) for b = sum b_i.
    attributes : list of AttributeChoice, in input order.
    by_k : {k: MultiResult} for every k searched (the chosen k maps to the result itself, so
        ``by_k`` is left out of ``==`` and ``repr``).
    per_attribute_k : whether k was optimised per attribute.
    """

    k_ini: int
    k: int
    total_fpr: float
    expected_set_bits: float
    attributes: list[AttributeChoice]
    by_k: dict[int, MultiResult] = field(default_factory=dict, compare=False, repr=False)
    per_attribute_k: bool = False
    steps: int = 0

    def config(self) -> dict[str, tuple[int, int] | None]:
        """{name: (d, s)} (None for text), ready for :class:`bloomkit.ranges.RangeConfig`."""
        return {a.name: (None if a.d is None else (a.d, a.s)) for a in self.attributes}  # type: ignore[misc]


@dataclass(frozen=True)
class _Attrs:
    names: list[str]
    R: np.ndarray
    n: np.ndarray
    text: np.ndarray


def _parse_attributes(attributes: Any, owner: str) -> _Attrs:
    if isinstance(attributes, str | bytes) or not isinstance(attributes, Iterable):
        raise param_error("attributes", owner, "a list of (name, scope_size or None, range_size)", attributes)
    items = sized_items(attributes, "attributes", owner, "attributes")
    if not items:
        raise param_error("attributes", owner, "a non-empty list", attributes)
    names, R, n, text = [], [], [], []
    for it in items:
        if not isinstance(it, Sequence) or isinstance(it, str) or len(it) not in (2, 3):
            raise param_error("attributes", owner, "a list of (name, scope_size or None, range_size)", it)
        name, scope = it[0], it[1]
        size = it[2] if len(it) == 3 else None
        if not isinstance(name, str):
            raise param_error("attributes", owner, "items whose name is a str", it)
        if scope is None:
            names.append(name)
            R.append(1.0)
            n.append(1.0)
            text.append(True)
            continue
        Ri = check_int(scope, "scope_size", owner, lo=2)
        ni = check_int(1 if size is None else size, "range_size", owner, lo=1, hi=Ri - 1)
        names.append(name)
        R.append(float(Ri))
        n.append(float(ni))
        text.append(False)
    if len(set(names)) != len(names):
        raise param_error("attributes", owner, "attributes with unique names", names)
    return _Attrs(names, np.array(R), np.array(n), np.array(text, dtype=np.bool_))


PHASE1_RULES = ("errata", "report")


def phase1_config(R: float | None, n: float, k: int, rule: str = "errata") -> tuple[int, int]:
    """(d_i, s_i) of Eqs. (34)-(35) for a given k (Phase 1 of Section IV.2).

    ``rule="errata"``: ``d_i = max(1, round(sqrt(R_i n_i (1/2)^(k+1) / 3)))``, the value that
    follows from the corrected Eq. (24) (ERRATA 000). ``rule="report"``:
    ``d_i = max(1, round(sqrt(R_i n_i (1/2)^k / 3)))``, which is what the report's own numbers
    imply: both rules give Table 1's k_ini = 15 and Tables 2-3, but only this one reproduces
    Table 4 (optimal k = k_ini in 78 % of random sets, k_ini - 1 in 21 %; with the errata rule
    k_ini comes out one lower on such sets). ``s_i = max(1, round(k + 1 - log2(R_i n_i)))``
    in both. An attribute with d_i > 1 is grouping-overlapping with s_i = 1, otherwise
    overlapping with s_i (capped at k). Text attributes (R None) get (1, k).

    >>> phase1_config(120, 10, 15), phase1_config(5001, 500, 14)
    ((1, 6), (5, 1))
    """
    owner = "phase1_config"
    k = check_int(k, "k", owner, lo=1, hi=MAX_HASHES)
    rule = check_choice(rule, "rule", owner, PHASE1_RULES)
    if R is None:
        return 1, k
    R = check_float(R, "R", owner, lo=1, hi=float(1 << 62))
    n = check_float(n, "n", owner, lo=1, hi=R)
    Rn = float(R) * float(n)
    expo = k + 1 if rule == "errata" else k
    d = max(1, int(round(math.sqrt(Rn * 0.5**expo / 3.0))))
    if d > 1:
        return min(d, int(R)), 1
    s = max(1, int(round(k + 1 - math.log2(Rn))))
    return 1, min(s, k)


def _init_arrays(at: _Attrs, k: int, rule: str = "errata") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = np.ones(len(at.names), dtype=np.float64)
    s = np.ones(len(at.names), dtype=np.float64)
    for i in range(len(at.names)):
        di, si = phase1_config(None if at.text[i] else at.R[i], at.n[i], k, rule)
        d[i], s[i] = di, si
    return d, s, np.full(len(at.names), float(k))


def _phase1(at: _Attrs, m: int, rule: str = "errata") -> int:
    budget = m * LN2
    k = 0
    while True:  # Figure 6
        k += 1
        d, s, kk = _init_arrays(at, k, rule)
        b = float(np.sum(np.where(at.text, kk, (at.n - 1.0) * s / d + kk)))
        if b >= budget or k >= 10 * m:
            return k


def phase1_k_ini(attributes: Any, num_bits: int, rule: str = "errata") -> int:
    """k_ini of Figure 6: the first k whose Phase 1 configuration hashes >= m ln 2 positions.

    >>> table1 = [(t, None, 1) for t in "ABCDE"] + [("Age", 120, 10), ("Year", 201, 20),
    ...     ("Income", 5001, 500), ("Longitude", 3600001, 100), ("Latitude", 1800001, 100)]
    >>> phase1_k_ini(table1, 512)
    15

    Complexity: O(k_ini * number of attributes).
    """
    at = _parse_attributes(attributes, "phase1_k_ini")
    m = check_int(num_bits, "num_bits", "phase1_k_ini", lo=2)
    return _phase1(at, m, check_choice(rule, "rule", "phase1_k_ini", PHASE1_RULES))


def _result(at: _Attrs, d: np.ndarray, s: np.ndarray, kk: np.ndarray, m: int, exact: bool, k_ini: int, k: int, per_k: bool, steps: int = 0) -> MultiResult:
    f, b = K.total_fpr(at.R, at.n, at.text, d, s, kk, float(m), exact)
    q = K.fill_of(b, float(m), exact)
    choices = []
    for i, name in enumerate(at.names):
        bi = K.attr_bits(at.n[i], d[i], s[i], kk[i], at.text[i])
        fi = K.attr_fpr(at.R[i], at.n[i], d[i], s[i], kk[i], at.text[i], q)
        if at.text[i]:
            choices.append(AttributeChoice(name, None, None, float(bi), float(fi), int(kk[i])))
        else:
            choices.append(AttributeChoice(name, int(d[i]), int(s[i]), float(bi), float(fi), int(kk[i])))
    a = float(M.a1(b, m, True))  # Eq. (36) as printed (Table 2's a_1 row)
    return MultiResult(k_ini, k, float(f), a, choices, {}, per_k, steps)


def _dmax(at: _Attrs) -> np.ndarray:
    out: np.ndarray = np.maximum(1.0, at.R - at.n).astype(np.int64)
    return out


def optimize_multi(
    attributes: Any,
    num_bits: int,
    ks: Iterable[int] | None = None,
    *,
    exact: bool = False,
    per_attribute_k: bool = False,
    accelerate: bool = False,
    phase1: str = "errata",
    max_steps: int = 1_000_000,
) -> MultiResult:
    """Two-phase configuration of a multi-attribute filter, Figures 6 and 7 (Section IV.2).

    Phase 1 (Figure 6) finds k_ini, the first k whose marginal-utility configuration
    (Eqs. 34-35) hashes at least ``m ln 2`` positions. Phase 2 (Figure 7), for every k in
    ``ks`` (default ``k_ini - 4 .. k_ini + 3``), starts from Eqs. (34)-(35) and repeatedly
    takes the single step of one attribute along the (d, s) sequence that lowers the total
    rate ``f_T = sum_i f_i`` the most per hashed position changed, computing p from
    ``b = sum_i b_i`` (Eq. 11), until no step helps. The k with the smallest f_T wins.

    Parameters
    ----------
    attributes : list of (name, scope_size or None, inserted_range_size)
        ``None`` marks a text attribute (n = 1).
    num_bits : int
        m.
    ks : iterable of int, optional
        The k values to search (default ``range(k_ini - 4, k_ini + 4)``, clipped at 1).
    exact : bool
        ``p = (1-1/m)^b`` (True) or ``e^(-b/m)`` (False, the report's choice).
    per_attribute_k : bool
        After the shared-k search, give every attribute its own k (Section VI's future work):
        a coordinate search over (k_i, d_i, s_i), |k_i - k| <= 6, then Phase 2 steps that also
        move k_i by +-1. The result is never worse than shared k.
    accelerate : bool
        First walk with d steps of ``max(1, d/16)``, then finish with Figure 7's unit steps.
        The end point is again one where no unit step lowers f_T, reached in ~10x fewer steps
        when Phase 1's d is far from the optimum (large R n); it can be a different local
        optimum than the unit-step walk.
    phase1 : {"errata", "report"}
        The d_i rule of Phase 1 (see :func:`phase1_config`); it sets k_ini and Phase 2's start.

    Returns
    -------
    MultiResult

    Examples
    --------
    >>> table1 = [(t, None, 1) for t in "ABCDE"] + [("Age", 120, 10), ("Year", 201, 20),
    ...     ("Income", 5001, 500), ("Longitude", 3600001, 100), ("Latitude", 1800001, 100)]
    >>> res = optimize_multi(table1, 512)
    >>> res.k_ini, res.k, round(res.total_fpr, 6), round(res.expected_set_bits)
    (15, 15, 0.005496, 270)

    Complexity: O(|ks| * steps * attributes^2) model evaluations; ~1 ms for 10 attributes.
    """
    at = _parse_attributes(attributes, "optimize_multi")
    m = check_int(num_bits, "num_bits", "optimize_multi", lo=2)
    rule = check_choice(phase1, "phase1", "optimize_multi", PHASE1_RULES)
    k_ini = _phase1(at, m, rule)
    k_list = _ks(ks, k_ini, "optimize_multi")
    dmax = _dmax(at)
    best: MultiResult | None = None
    by_k: dict[int, MultiResult] = {}
    for k in k_list:
        d, s, kk = _init_arrays(at, k, rule)
        steps = 0
        if accelerate:
            steps += K.phase2(at.R, at.n, at.text, d, s, kk, float(m), bool(exact), dmax, False, k, max_steps, 1.0 / 16)[2]
        steps += K.phase2(at.R, at.n, at.text, d, s, kk, float(m), bool(exact), dmax, False, k, max_steps, 0.0)[2]
        res = _result(at, d, s, kk, m, exact, k_ini, k, False, int(steps))
        by_k[k] = res
        if best is None or res.total_fpr < best.total_fpr:
            best = res
    assert best is not None
    if per_attribute_k:
        best = _per_attribute_k(at, best, m, bool(exact), dmax, k_ini, max_steps)
    best.by_k = by_k
    return best


def _per_attribute_k(at: _Attrs, best: MultiResult, m: int, exact: bool, dmax: np.ndarray, k_ini: int, max_steps: int) -> MultiResult:
    """From the shared-k optimum, give every attribute its own k (Section VI's future work).

    Coordinate search: each attribute in turn takes the best (k_i, d_i, s_i) with
    |k_i - k| <= 6 and (d_i, s_i) over its bounded grid (the others fixed), until a round
    changes nothing; then Phase 2's unit steps (including k_i +- 1) polish the result.
    """
    k = best.k
    d = np.array([1.0 if c.d is None else c.d for c in best.attributes])
    s = np.array([float(k) if c.s is None else c.s for c in best.attributes])
    kk = np.full(len(d), float(k))
    opts = []
    for i in range(len(d)):
        rows = []
        for ki in range(max(1, k - 6), k + 7):
            if at.text[i]:
                rows.append((1.0, float(ki), float(ki)))
                continue
            cap = int(min(2 * max(d[i], phase1_config(at.R[i], at.n[i], ki)[0]) + 16, dmax[i]))
            rows.extend((1.0, float(si), float(ki)) for si in range(1, ki + 1))
            rows.extend((float(di), 1.0, float(ki)) for di in range(2, cap + 1))
        opts.append(np.array(rows))
    f_cur, _ = K.total_fpr(at.R, at.n, at.text, d, s, kk, float(m), exact)
    changed = True
    while changed:
        changed = False
        for i in range(len(d)):
            o = opts[i]
            fb, jb = K.coord_best(at.R, at.n, at.text, d, s, kk, float(m), exact, i, o[:, 0].copy(), o[:, 1].copy(), o[:, 2].copy())
            if fb < f_cur * (1 - 1e-13):
                d[i], s[i], kk[i] = o[jb]
                f_cur = fb
                changed = True
    _, _, steps = K.phase2(at.R, at.n, at.text, d, s, kk, float(m), exact, dmax, True, k + 16, max_steps, 0.0)
    return _result(at, d, s, kk, m, exact, k_ini, k, True, int(steps))


def _ks(ks: Iterable[int] | None, k_ini: int, owner: str) -> list[int]:
    if ks is None:
        return [k for k in range(k_ini - 4, k_ini + 4) if k >= 1]
    if isinstance(ks, str | bytes) or not isinstance(ks, Iterable):
        raise param_error("ks", owner, "an iterable of positive integers", ks)
    out = sorted({check_int(k, "ks", owner, lo=1) for k in ks})
    if not out:
        raise param_error("ks", owner, "a non-empty iterable of positive integers", ks)
    return out


def _options(R: float, n: float, k: int, d_cap: int) -> np.ndarray:
    """All (d, s) of the bounded grid: (1, s) for s <= k and (d, 1) for 2 <= d <= d_cap."""
    ds = [(1, s) for s in range(1, k + 1)] + [(d, 1) for d in range(2, d_cap + 1)]
    return np.array(ds, dtype=np.float64)


def optimize_multi_grid(
    attributes: Any,
    num_bits: int,
    ks: Iterable[int] | None = None,
    *,
    exact: bool = False,
    d_cap: int | None = None,
    restarts: int = 1,
    seed: int = 0,
) -> MultiResult:
    """Reference optimum over a bounded grid, used to measure the two-phase heuristic.

    For every k (default: ``max(1, k_ini - 6) .. k_ini + 6``) each numeric attribute may take
    any (1, s), s <= k, or (d, 1), 2 <= d <= d_cap (default ``2 max(d_phase1, d_two_phase) + 16``,
    at most R - n). Attributes are optimised one at a time *exhaustively over their whole grid* with
    the others fixed, in rounds, until a full round changes nothing; this runs from the
    Phase 1 start, from the two-phase result and from ``restarts`` random starts, and the best
    is kept. It is not a proof of global optimality (the joint grid has ~60^10 points), but it
    strictly contains the two-phase search's neighbourhood moves; exact enumeration of small
    sets (tests) finds the same optimum.

    Complexity: O(|ks| * rounds * attributes * grid size) model evaluations.
    """
    at = _parse_attributes(attributes, "optimize_multi_grid")
    m = check_int(num_bits, "num_bits", "optimize_multi_grid", lo=2)
    k_ini = _phase1(at, m)
    k_list = _ks(ks, k_ini, "optimize_multi_grid") if ks is not None else list(range(max(1, k_ini - 6), k_ini + 7))
    heur = optimize_multi(attributes, m, k_list, exact=exact, accelerate=True)
    rng = np.random.default_rng(seed)
    A = len(at.names)
    best: MultiResult | None = None
    by_k: dict[int, MultiResult] = {}
    for k in k_list:
        opts = []
        h = heur.by_k[k]
        for i in range(A):
            if at.text[i]:
                opts.append(np.array([[1.0, float(k)]]))
                continue
            d1 = max(phase1_config(at.R[i], at.n[i], k)[0], h.attributes[i].d or 1)
            cap = d_cap if d_cap is not None else 2 * d1 + 16
            cap = int(min(cap, max(1, at.R[i] - at.n[i])))
            opts.append(_options(at.R[i], at.n[i], k, cap))
        starts = []
        d0, s0, _ = _init_arrays(at, k)
        starts.append((d0, s0))
        starts.append((np.array([1.0 if c.d is None else c.d for c in h.attributes]),
                       np.array([float(k) if c.s is None else c.s for c in h.attributes])))
        for _ in range(restarts):
            idx = [rng.integers(len(o)) for o in opts]
            starts.append((np.array([opts[i][j, 0] for i, j in enumerate(idx)]),
                           np.array([opts[i][j, 1] for i, j in enumerate(idx)])))
        kk = np.full(A, float(k))
        best_k: tuple[float, np.ndarray, np.ndarray] | None = None
        for d, s in starts:
            d, s = d.copy(), s.copy()
            f_cur, _ = K.total_fpr(at.R, at.n, at.text, d, s, kk, float(m), exact)
            changed = True
            while changed:
                changed = False
                for i in range(A):
                    if at.text[i]:
                        continue
                    fb, jb = K.coord_best(at.R, at.n, at.text, d, s, kk, float(m), bool(exact), i, opts[i][:, 0].copy(),
                                          opts[i][:, 1].copy(), kk[i] + 0.0 * opts[i][:, 0])
                    if fb < f_cur * (1 - 1e-13):
                        d[i], s[i] = opts[i][jb]
                        f_cur = fb
                        changed = True
            if best_k is None or f_cur < best_k[0]:
                best_k = (f_cur, d.copy(), s.copy())
        assert best_k is not None
        res = _result(at, best_k[1], best_k[2], kk, m, exact, k_ini, k, False)
        by_k[k] = res
        if best is None or res.total_fpr < best.total_fpr:
            best = res
    assert best is not None
    best.by_k = by_k
    return best

