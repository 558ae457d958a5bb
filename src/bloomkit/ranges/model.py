"""Analytic false-positive models of document 000, Section III (Eqs. 3-14) and Eq. (36).

Notation (document 000): ``R`` scope size of a numeric attribute, ``n`` size of the inserted
range, ``m`` number of bits, ``k`` positions set per inserted key, ``d`` group size, ``s``
positions generated per key (group). ``p`` is the probability that a bit is still 0
(ERRATA 000: the same ``p`` as in Eqs. (1)-(2) and in Phase 1's "p = 1/2").

All functions accept scalars or numpy arrays (broadcast together) and return a float or an
array. The expected number of hashed positions (``g``, ``o``, ``go``) is the fractional
expectation of Eqs. (3), (7), (11), averaged over the alignment of the range to the groups.

The grouping-overlapping formula, Eq. (14), contains the other three schemes as special cases:
grouping is ``s = k`` (then ``r = 0``), overlapping is ``d = 1`` and traditional is
``d = 1, s = k``; :func:`f_g` and :func:`f_o` are checked against it in the tests.

Conventions where the document is silent (documented, tested):

* ``R <= n`` (nothing outside the inserted range) gives a false positive rate of 0.
* The count of values "caused by neither grouping nor overlapping", ``R - n - (d-1) - 2rd``,
  is clamped at 0, and the rate at 1, for degenerate configurations with groups as large as
  the scope; the document's configurations never reach this.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import MAX_HASHES, check_broadcast, check_int, check_reals, safe_repr
from ..errors import InvalidParameterError
from ..theory import zero_bit_probability

__all__ = [
    "a1",
    "f_g",
    "f_go",
    "f_go_fill",
    "f_o",
    "f_text",
    "g",
    "go",
    "go_total",
    "intersect_pass_probability",
    "o",
    "p_g",
    "p_go",
    "p_o",
    "pass_probability",
    "query_words",
    "r",
    "uncovered_words",
]

ArrayLike = Any


_LO = {"R": 0, "n": 0, "d": 1, "s": 1, "k": 0, "m": 1, "h": 0, "values": 0, "entries": 0, "fill": 0}


def _args(owner: str, **values: Any) -> list[np.ndarray]:
    """The named arguments as float arrays, each checked (a real number or an array of them:
    no NaN or infinity, strs, ...; R, n, h >= 0, d, s, m >= 1, 0 <= k <= MAX_HASHES,
    0 <= fill <= 1), in the order given."""
    out = {}
    for name, v in values.items():
        hi = MAX_HASHES if name == "k" else 1 if name == "fill" else None
        out[name] = check_reals(v, name, owner, lo=_LO[name], hi=hi)
    check_broadcast(owner, **out)
    return list(out.values())


def _ints(owner: str, **values: Any) -> list[np.ndarray]:
    """The named arguments as int64 arrays, each a whole number or an array of whole numbers
    (group numbers: any sign; s >= 1; r, last, uncovered, offset >= 0), broadcast-checked."""
    out = {}
    for name, v in values.items():
        a = check_reals(v, name, owner, lo=_INT_LO.get(name), hi=2.0**53)
        if (a != np.floor(a)).any():
            raise InvalidParameterError(f"The {name!r} parameter of {owner} must be a whole number or an array of "
                                        f"whole numbers. Got {safe_repr(v)} instead.")
        out[name] = a.astype(np.int64)
    check_broadcast(owner, **out)
    return list(out.values())


_INT_LO = {"s": 1, "r": 0, "last": 0, "offset": 0}


def _out(x: np.ndarray) -> Any:
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


def _zero_prob(h: ArrayLike, m: ArrayLike, exact: bool) -> np.ndarray:
    """``p = (1 - 1/m)^h`` (exact) or ``e^(-h/m)``: Eqs. (4), (8), (12) with h hashed positions."""
    return np.asarray(zero_bit_probability(h, m, 1, exact=exact), dtype=np.float64)


def g(n: ArrayLike, d: ArrayLike, k: ArrayLike) -> Any:
    """Expected hashed positions of a range of size n in a grouping filter, Eq. (3).

    ``g(n, d, k) = ((n - 1)/d + 1) k``.

    >>> g(10, 5, 4)
    11.2
    """
    n, d, k = _args("g", n=n, d=d, k=k)
    return _out(((n - 1.0) / d + 1.0) * k)


def o(n: ArrayLike, s: ArrayLike, k: ArrayLike) -> Any:
    """Hashed positions of a range of size n in an overlapping filter, Eq. (7).

    ``o(n, s, k) = (n - 1) s + k``.

    >>> o(10, 2, 5)
    23.0
    """
    n, s, k = _args("o", n=n, s=s, k=k)
    return _out((n - 1.0) * s + k)


def go(n: ArrayLike, d: ArrayLike, s: ArrayLike, k: ArrayLike) -> Any:
    """Expected hashed positions in a grouping-overlapping filter, Eq. (11).

    ``go(n, d, s, k) = (n - 1) s / d + k``; ``go(n, d, k, k) = g(n, d, k)`` and
    ``go(n, 1, s, k) = o(n, s, k)``.

    >>> go(500, 5, 1, 15)
    114.8
    """
    n, d, s, k = _args("go", n=n, d=d, s=s, k=k)
    return _out(go_total_unchecked(n, 1.0, d, s, k))


def go_total(values: ArrayLike, entries: ArrayLike, d: ArrayLike, s: ArrayLike, k: ArrayLike) -> Any:
    """Sum of Eq. (11) over ``entries`` inserted ranges of ``values`` values in all: Eq. (11)
    is affine in n, so the sum is ``(values - entries) s / d + entries k`` whatever the split.

    Python numbers in, a Python float out (numpy arrays broadcast).

    >>> go_total(1000, 2, 5, 1, 15) == go(500, 5, 1, 15) + go(500, 5, 1, 15)
    True
    """
    args = _args("go_total", values=values, entries=entries, d=d, s=s, k=k)
    return _out(go_total_unchecked(*args))


def go_total_unchecked(values: Any, entries: Any, d: Any, s: Any, k: Any) -> Any:
    """:func:`go_total` without the checks (the per-insert statistics of ranges.layout)."""
    return (values - entries) * s / d + entries * k


def p_g(n: ArrayLike, d: ArrayLike, k: ArrayLike, m: ArrayLike, exact: bool = True) -> Any:
    """Probability that a bit is still 0 in a grouping filter, Eq. (4): ``(1 - 1/m)^g``."""
    (m,) = _args("p_g", m=m)
    return _out(_zero_prob(g(n, d, k), m, exact))


def p_o(n: ArrayLike, s: ArrayLike, k: ArrayLike, m: ArrayLike, exact: bool = True) -> Any:
    """Probability that a bit is still 0 in an overlapping filter, Eq. (8): ``(1 - 1/m)^o``."""
    (m,) = _args("p_o", m=m)
    return _out(_zero_prob(o(n, s, k), m, exact))


def p_go(n: ArrayLike, d: ArrayLike, s: ArrayLike, k: ArrayLike, m: ArrayLike, exact: bool = True) -> Any:
    """Probability that a bit is still 0 in a grouping-overlapping filter, Eq. (12)."""
    (m,) = _args("p_go", m=m)
    return _out(_zero_prob(go(n, d, s, k), m, exact))


def r(k: ArrayLike, s: ArrayLike) -> Any:
    """Values (groups) at each end of a range with overlapping false positives, Eqs. (9), (13).

    ``r = ceil(k/s) - 1``.

    >>> r(15, 6), r(15, 1), r(5, 5)
    (2, 14, 0)
    """
    k_f, s_f = _args("r", k=k, s=s)
    k_arr, s_arr = k_f.astype(np.int64), s_f.astype(np.int64)
    out = -(-k_arr // s_arr) - 1
    return int(out) if out.ndim == 0 else out


def f_text(k: ArrayLike, fill: ArrayLike) -> Any:
    """False positive rate of an atomic (text) attribute, Eqs. (2) and (18): ``(1 - p)^k``.

    ``fill`` is ``1 - p``, the probability that a bit is set.
    """
    k, fill = _args("f_text", k=k, fill=fill)
    return _out(fill**k)


def f_go_fill(
    R: ArrayLike, n: ArrayLike, d: ArrayLike, s: ArrayLike, k: ArrayLike, fill: ArrayLike
) -> Any:
    """Eq. (14) for a given fill probability ``1 - p`` (the multi-attribute form of Section IV).

    ``f_go = (d-1)/(R-n) + 2d/(R-n) sum_{i=1..r} (1-p)^(is) + (R-n-(d-1)-2rd)/(R-n) (1-p)^k``

    In a filter holding several attributes ``p`` is shared: it follows from the total number
    of hashed positions of all attributes, not from this attribute's ``go`` alone.

    Complexity: O(1) per element (the sum over i is a geometric series).
    """
    R, n, d, s, k, q = np.broadcast_arrays(*_args("f_go_fill", R=R, n=n, d=d, s=s, k=k, fill=fill))
    rr = np.ceil(k / s) - 1.0
    out_count = R - n
    with np.errstate(divide="ignore", invalid="ignore"):
        qs = q**s
        geo = np.where(
            np.abs(1.0 - qs) > 1e-15,
            qs * (1.0 - q ** (rr * s)) / np.where(np.abs(1.0 - qs) > 1e-15, 1.0 - qs, 1.0),
            rr,
        )
        rest = np.maximum(out_count - (d - 1.0) - 2.0 * rr * d, 0.0)
        f = ((d - 1.0) + 2.0 * d * geo + rest * q**k) / out_count
    f = np.where(out_count > 0, np.minimum(f, 1.0), 0.0)
    return _out(f)


def f_go(
    R: ArrayLike, n: ArrayLike, d: ArrayLike, s: ArrayLike, k: ArrayLike, m: ArrayLike, exact: bool = True
) -> Any:
    """False positive rate of a grouping-overlapping filter holding one range, Eq. (14).

    Parameters
    ----------
    R, n : scope size and inserted range size.
    d : group size (``d`` in the report).
    s : positions generated per group (``s``), ``1 <= s <= k``.
    k : positions set per inserted key (``k``).
    m : number of bits (``m``).
    exact : use ``p = (1 - 1/m)^go`` (True) or ``e^(-go/m)`` (False), Eq. (12).

    Examples
    --------
    Overlapping with s = 2 at n = 100 (k = 10, R = 10000, m = 512):

    >>> round(f_go(10000, 100, 1, 2, 10, 512), 7)
    4.27e-05

    Complexity: O(1) per element.
    """
    R, n, d, s, k, m = _args("f_go", R=R, n=n, d=d, s=s, k=k, m=m)
    fill = 1.0 - np.asarray(p_go(n, d, s, k, m, exact))
    return f_go_fill(R, n, d, s, k, fill)


def f_g(R: ArrayLike, n: ArrayLike, d: ArrayLike, k: ArrayLike, m: ArrayLike, exact: bool = True) -> Any:
    """False positive rate of a grouping filter, Eq. (6).

    ``f_g = (d-1)/(R-n) + (R-n-(d-1))/(R-n) (1-p_g)^k``; equals ``f_go(R, n, d, k, k, m)``.
    """
    R, n, d, k, m = _args("f_g", R=R, n=n, d=d, k=k, m=m)
    q = 1.0 - np.asarray(p_g(n, d, k, m, exact))
    out_count = R - n
    with np.errstate(divide="ignore", invalid="ignore"):
        f = ((d - 1.0) + np.maximum(out_count - (d - 1.0), 0.0) * q**k) / out_count
    return _out(np.where(out_count > 0, np.minimum(f, 1.0), 0.0))


def f_o(R: ArrayLike, n: ArrayLike, s: ArrayLike, k: ArrayLike, m: ArrayLike, exact: bool = True) -> Any:
    """False positive rate of an overlapping filter, Eq. (10).

    ``f_o = 2/(R-n) sum_{i=1..r} (1-p_o)^(is) + (R-n-2r)/(R-n) (1-p_o)^k``;
    equals ``f_go(R, n, 1, s, k, m)``.
    """
    R, n, s, k = np.broadcast_arrays(*_args("f_o", R=R, n=n, s=s, k=k))
    q = 1.0 - np.asarray(p_o(n, s, k, m, exact))
    rr = np.ceil(k / s) - 1.0
    i_max = int(np.max(rr)) if rr.size else 0
    total = np.zeros(np.broadcast(R, q).shape)
    for i in range(1, i_max + 1):
        total = total + np.where(i <= rr, q ** (i * s), 0.0)
    out_count = R - n
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (2.0 * total + np.maximum(out_count - 2.0 * rr, 0.0) * q**k) / out_count
    return _out(np.where(out_count > 0, np.minimum(f, 1.0), 0.0))


def a1(h: ArrayLike, m: ArrayLike, exact: bool = True) -> Any:
    """Expected number of bits set to 1 after ``h`` hashed positions, Eq. (36).

    ``a_1 = m (1 - (1 - 1/m)^h)``.

    >>> round(a1(384, 512), 1)
    270.3
    """
    h, m = _args("a1", h=h, m=m)
    return _out(m * (1.0 - _zero_prob(h, m, exact)))




# ---------------------------------------------------------------------------------------------
# the model of one query against one stored profile (ProfileIndex.expected_false_candidates)


def query_words(ga: ArrayLike, gb: ArrayLike, s: ArrayLike, r: ArrayLike, last: ArrayLike) -> Any:
    """Words (hashed positions, counted with repeats) of the keys of a query range whose first
    and last values lie in groups ``ga`` and ``gb``: the s words of groups ``ga .. gb + r - 1``
    and the first ``last = k - r s`` of group ``gb + r``, i.e. ``(gb - ga) s + k`` (Eq. 11 for
    a range of known alignment; ``k`` for a point, Eq. 7 with n = 1).

    Numbered ``g s + w`` (word w of group g), a range's words are one interval
    ``[ga s, (gb + r) s + last)``.

    >>> query_words(3, 3, 6, 2, 3), query_words(0, 9, 1, 14, 1)
    (15, 24)
    """
    ga_, gb_, s_, r_, last_ = _ints("query_words", ga=ga, gb=gb, s=s, r=r, last=last)
    return _int_out((gb_ - ga_ + r_) * s_ + last_)


def uncovered_words(ga: ArrayLike, gb: ArrayLike, g0: ArrayLike | None, g1: ArrayLike | None, s: ArrayLike,
                    r: ArrayLike, last: ArrayLike) -> Any:
    """Words of a query range's keys (groups ``ga .. gb``) that a profile's keys (its range in
    groups ``g0 .. g1``; None: the profile does not give the attribute) do not set.

    The profile's keys set the interval of words ``[g0 s, (g1 + r) s + last)`` and the query
    needs ``[ga s, (gb + r) s + last)`` (:func:`query_words`), so the count is the query's
    words minus the overlap of the two intervals. The cases of Eqs. (13)-(14) for a point
    query (``ga = gb = g``, k words): 0 when ``g0 <= g <= g1`` (a value inside the range, or
    outside it in a group the range touches: Eq. 14's grouping false positives), ``i s`` when
    g is ``i <= r`` groups before g0 or after g1 (the overlapping false positives of Eq. 13's r
    groups at each end), k beyond. A filter of fill ``1 - p`` then passes the query with
    probability ``(1 - p)^J`` (:func:`pass_probability`).

    >>> uncovered_words(5, 5, 5, 9, 6, 2, 3), uncovered_words(4, 4, 5, 9, 6, 2, 3)
    (0, 6)
    >>> uncovered_words(11, 11, 5, 9, 6, 2, 3), uncovered_words(12, 12, 5, 9, 6, 2, 3), uncovered_words(3, 3, None, None, 6, 2, 3)
    (12, 15, 15)
    """
    ga_, gb_, s_, r_, last_ = _ints("uncovered_words", ga=ga, gb=gb, s=s, r=r, last=last)
    q0 = ga_ * s_
    q1 = (gb_ + r_) * s_ + last_
    if g0 is None or g1 is None:
        return _int_out(q1 - q0)
    g0_, g1_ = _ints("uncovered_words", g0=g0, g1=g1)
    check_broadcast("uncovered_words", ga=ga_, gb=gb_, g0=g0_, g1=g1_, s=s_)
    p0 = g0_ * s_
    p1 = (g1_ + r_) * s_ + last_
    overlap = np.maximum(np.minimum(p1, q1) - np.maximum(p0, q0), 0)
    return _int_out(q1 - q0 - overlap)


def pass_probability(fill: ArrayLike, uncovered: ArrayLike) -> Any:
    """Probability that a filter of fill ``1 - p`` has all of ``uncovered`` words set:
    ``(1 - p)^J``, Eq. (2) with the words the filter does not hold by construction (each is an
    independent uniform position, set with probability ``1 - p``; words the filter holds are
    set for sure). With ``J = k`` it is Eq. (2) itself, with ``J = i s`` the i-th overlapping
    term of Eq. (14).

    >>> pass_probability(0.5, 15), pass_probability(0.5, 0)
    (3.0517578125e-05, 1.0)
    """
    f = check_reals(fill, "fill", "pass_probability", lo=0, hi=1)
    (j,) = _ints("pass_probability", uncovered=uncovered)
    check_broadcast("pass_probability", fill=f, uncovered=j)
    return _out(f ** j)


def intersect_pass_probability(groups: int, s: int, k: int, fill: ArrayLike, offset: ArrayLike = 0) -> Any:
    """Probability that some key of a query range of ``groups`` groups passes a filter of fill
    ``1 - p`` that holds none of the query's values (the intersect search: an OR over the
    range's groups of the AND of each group's k words).

    ``offset`` 0: the filter's keys share no word with the query's (every word is set with
    probability ``1 - p``); ``offset = j`` (1 .. r): the filter's range ends j groups before
    the query's first group (or starts j groups after its last), so its keys cover the words
    of the query's first (last) keys but ``j s`` of them, the overlapping case of Eq. (13).
    Neighbouring keys share ``k - s`` words, so the keys' events are dependent: a pass over
    the ``(groups - 1) s + k`` words keeps the distribution of the run of set words, and a key
    passes when the run reaches k at its last word (a range of more than 256 groups is
    extrapolated from the stationary per-group survival). For one group (a point) it is
    :func:`pass_probability` of k words at offset 0 and of ``j s`` words at offset j.

    Parameters
    ----------
    groups, s, k : the query range's groups, s and k of the attribute.
    fill : ``1 - p`` (scalar or array).
    offset : scalar or array broadcast against ``fill``.

    >>> round(intersect_pass_probability(1, 6, 15, 0.5), 12) == round(pass_probability(0.5, 15), 12)
    True
    >>> intersect_pass_probability(3, 1, 4, 0.0), intersect_pass_probability(3, 1, 4, 1.0)
    (0.0, 1.0)

    Complexity: O(min(groups, 256) s k len(fill)), in a numba kernel.
    """
    from . import _index_kernels as IK

    owner = "intersect_pass_probability"
    k = check_int(k, "k", owner, lo=1, hi=MAX_HASHES)
    s = check_int(s, "s", owner, lo=1, hi=k)
    groups = check_int(groups, "groups", owner, lo=1, hi=1 << 40)
    q = check_reals(fill, "fill", owner, lo=0, hi=1)
    (off,) = _ints(owner, offset=offset)
    check_broadcast(owner, fill=q, offset=off)
    rr = int(r(k, s))
    if np.any(off > rr):
        raise InvalidParameterError(f"The 'offset' parameter of {owner} must be in 0 .. r = {rr}. "
                                    f"Got {int(off.max())} instead.")
    table = IK.intersect_pass_tables(groups, s, k, np.ascontiguousarray(q.ravel()), 256)
    shape = np.broadcast_shapes(q.shape, off.shape)
    cols = np.broadcast_to(np.arange(q.size).reshape(q.shape), shape)
    return _out(table[np.broadcast_to(off, shape), cols])


def _int_out(x: Any) -> Any:
    x = np.asarray(x, dtype=np.int64)
    return int(x) if x.ndim == 0 else x
