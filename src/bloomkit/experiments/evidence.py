"""What a comparison of the reproduction report holds, and how two values are judged equal.

A measured rate is never a bare float: it is a :class:`Rate` (events in trials, and for rates
pooled over rebuilt filters the standard error from the spread between them), so every
comparison applies the statistics of its real sample size. Other measurements are a
:class:`Measure` (a value with its standard error, 0 when the measurement has no sampling
noise), wall-clock times only a :class:`Timing` (a ratio of two times of the same run, judged
by its direction). A :class:`Check` is an independent derivation (a computation that does not
use the code under test) offered as evidence for a cause: a document erratum, a document model
that is only approximate.

:func:`agreement` compares ours with a reference (the document's value, our model's, a check):

* a rate against a number p: an exact two-sided binomial test at the level of
  :data:`Z_TOLERANCE` normal standard deviations (p = 0.0027); pooled over G rebuilt filters,
  a t test with G - 1 degrees of freedom on the larger of the binomial and the between-filter
  standard error;
* two rates (ours and the document's, which states its sample size): the exact conditional
  test of two Poisson rates (given all events, ours are binomial in the share of the trials);
* a measure: within :data:`Z_TOLERANCE` standard errors; numbers without noise: within the
  relative tolerance (:data:`TOLERANCE`, :data:`APPROX_TOLERANCE` where the document says
  "about");
* the document's words: "yes" / "no", bounds ("<= 0.002"), ranges ("265-274"), lists
  ("511, 897") and "all" (against "5/5"); other text is not judged.

An agreement that needs the noise band (the values differ by more than the tolerance) is
marked ``noise``; one whose band is wider than +-50% of the reference cannot tell the value
from half or 1.5 times it and is marked ``unresolved``; one whose band is wider than the
tolerance cannot tell a difference of the tolerance's size and is marked ``coarse`` (the quick
run says so instead of "reproduced"). A value within the relative tolerance agrees whatever its
band (a large sample resolves a difference of a few percent: that is still "reproduced", with
the difference and its sd in the cause), for rates as for other measures.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

__all__ = [
    "APPROX_TOLERANCE",
    "RESOLUTION",
    "TOLERANCE",
    "Z_TOLERANCE",
    "Agreement",
    "Check",
    "Measure",
    "Rate",
    "Timing",
    "agreement",
    "fmt",
    "number",
]

TOLERANCE = 0.10
"""Relative difference within which two values without sampling noise agree."""
APPROX_TOLERANCE = 0.25
"""... where the document gives an approximate value ("about 2", "~250", "close to 256")."""
Z_TOLERANCE = 3.0
"""Normal standard deviations of the tests (two-sided level 0.0027)."""
ALPHA = float(2 * stats.norm.sf(Z_TOLERANCE))
RESOLUTION = 0.5
"""A band wider than this share of the reference value cannot resolve it."""


def _count(v: Any, name: str, owner: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int | np.integer):
        raise TypeError(f"{owner}.{name} must be an int (a count). Got {type(v).__name__} instead.")
    return int(v)


@dataclass(frozen=True)
class Rate:
    """A measured proportion: ``events`` in ``trials`` Bernoulli trials.

    ``se`` is the standard error of the pooled rate estimated from the spread between
    ``groups`` rebuilt filters (or other independent repetitions), when the rate is an average
    over them (:meth:`pooled`); for one filter (``groups=1``) it may give the standard deviation
    of its rate including the filter-to-filter spread a model predicts (the fill of its bits);
    ``se=None``: the binomial standard deviation alone.

    >>> Rate(7, 10**6).value
    7e-06
    >>> Rate(3, 2)
    Traceback (most recent call last):
    ...
    ValueError: Rate: 0 <= events <= trials and trials > 0 (got 3 of 2)
    """

    events: int
    trials: int
    se: float | None = None
    groups: int = 1

    def __post_init__(self) -> None:
        e = _count(self.events, "events", "Rate")
        t = _count(self.trials, "trials", "Rate")
        g = _count(self.groups, "groups", "Rate")
        if t <= 0 or e < 0 or e > t or g < 1:
            raise ValueError(f"Rate: 0 <= events <= trials and trials > 0 (got {e} of {t})")
        if self.se is not None and not (math.isfinite(self.se) and self.se >= 0):
            raise ValueError(f"Rate: se must be finite and >= 0 (got {self.se!r})")
        object.__setattr__(self, "events", e)
        object.__setattr__(self, "trials", t)
        object.__setattr__(self, "groups", g)

    @property
    def value(self) -> float:
        """events / trials."""
        return self.events / self.trials

    @classmethod
    def pooled(cls, events: Sequence[int] | np.ndarray, trials: Sequence[int] | np.ndarray) -> Rate:
        """The rate pooled over G independent filters (events and trials of each): the sums,
        with the standard error of the ratio estimator from the spread between the filters.

        >>> r = Rate.pooled([10, 30], [1000, 1000])
        >>> r.events, r.trials, r.groups, round(r.se, 4)
        (40, 2000, 2, 0.01)
        """
        e = np.asarray(events, dtype=np.int64).ravel()
        t = np.asarray(trials, dtype=np.int64).ravel()
        if e.shape != t.shape or e.size == 0:
            raise ValueError("Rate.pooled: one count of events and one of trials per filter")
        E, T, G = int(e.sum()), int(t.sum()), int(e.size)
        if G < 2:
            return cls(E, T)
        resid = e - (E / T) * t
        se = math.sqrt(G / (G - 1) * float((resid**2).sum())) / T
        return cls(E, T, se=se, groups=G)

    @classmethod
    def reported(cls, value: float, trials: int) -> Rate:
        """The document's measured rate with the sample size the document states.

        >>> Rate.reported(6.6e-4, 10**5)
        Rate(events=66, trials=100000, se=None, groups=1)
        """
        t = _count(trials, "trials", "Rate.reported")
        return cls(int(round(float(value) * t)), t)

    def combine(self, other: Rate) -> Rate:
        """The two samples pooled (two independent implementations measuring one rate): counts
        summed, the standard errors combined as those of a trial-weighted mean.

        >>> Rate(10, 1000).combine(Rate(30, 1000))
        Rate(events=40, trials=2000, se=None, groups=2)
        """
        T = self.trials + other.trials
        if self.se is None and other.se is None:
            return Rate(self.events + other.events, T, groups=self.groups + other.groups)
        v = sum((r.trials * r.sd(r.value)) ** 2 for r in (self, other))
        return Rate(self.events + other.events, T, se=math.sqrt(v) / T, groups=self.groups + other.groups)

    def sd(self, p: float) -> float:
        """Standard deviation of this rate if the true rate were ``p``: binomial, or the
        between-filter standard error when that is larger."""
        b = math.sqrt(max(p * (1.0 - p), 0.0) / self.trials)
        return max(b, self.se) if self.se is not None else b

    def __str__(self) -> str:
        return f"{fmt(self.value)} ({self.events:,} / {self.trials:,})"


@dataclass(frozen=True)
class Measure:
    """A measured quantity that is not a proportion (a mean, a size, a ratio of counts), with its
    standard error ``se`` (0 when the measurement has no sampling noise)."""

    value: float
    se: float

    def __post_init__(self) -> None:
        v, s = float(self.value), float(self.se)
        if not (math.isfinite(v) and math.isfinite(s) and s >= 0):
            raise ValueError(f"Measure: a finite value and se >= 0 (got {self.value!r}, {self.se!r})")
        object.__setattr__(self, "value", v)
        object.__setattr__(self, "se", s)

    def __str__(self) -> str:
        return fmt(self.value) + (f" +- {fmt(self.se)}" if self.se else "")


@dataclass(frozen=True)
class Timing:
    """The ratio a / b of two wall-clock times measured in the same run. Only its direction
    (which of the two is slower) is judged: another machine's absolute times, or the size of
    the ratio, say nothing about ours."""

    ratio: float

    def __post_init__(self) -> None:
        r = float(self.ratio)
        if not (math.isfinite(r) and r > 0):
            raise ValueError(f"Timing: the ratio must be finite and > 0 (got {self.ratio!r})")
        object.__setattr__(self, "ratio", r)

    def __str__(self) -> str:
        return f"{self.ratio:.3g}x"


@dataclass(frozen=True)
class Check:
    """An independent derivation: ``value`` computed by ``how`` -- code written from the
    document that does not call the code under test (a brute force, a closed form, a separate
    simulation), or a measurement of another kind. The report offers it as the evidence of a
    cause (a document erratum, an approximate document model)."""

    value: Any
    how: str

    def __post_init__(self) -> None:
        if isinstance(self.value, float | np.floating) and not isinstance(self.value, bool):
            # a check is a reference, never a bare measured rate: plain floats are computed values
            object.__setattr__(self, "value", float(self.value))
        if not self.how.strip():
            raise ValueError("Check: say how the value was derived")


# ---------------------------------------------------------------------------------------------


_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_APPROX = re.compile(rf"^(?:about|approximately|approx\.?|around|roughly|close to|near|~|≈)\s*({_NUM})(?:\s|$|\()", re.I)
_BOUND = re.compile(rf"^(<=|>=|<|>|≤|≥)\s*({_NUM})(?:\s|$|,|\()")
_RANGE = re.compile(rf"^({_NUM})\s*(?:-|–|\.\.)\s*({_NUM})(?:\s|$|\()")
_LIST = re.compile(rf"^{_NUM}(?:\s*,\s*{_NUM})+$")
_FRACTION = re.compile(r"^(\d+)\s*/\s*(\d+)(?:\s|$)")


def number(v: Any) -> float | None:
    """A finite float from a number or a string holding only a number; else None."""
    if isinstance(v, bool | np.bool_):
        return None
    if isinstance(v, int | float | np.integer | np.floating):
        x = float(v)
    elif isinstance(v, str) and re.fullmatch(rf"\s*{_NUM}\s*", v):
        x = float(v)
    else:
        return None
    return x if math.isfinite(x) else None


def fmt(v: Any) -> str:
    """A value as the report prints it (4 significant digits)."""
    if v is None:
        return ""
    if isinstance(v, Rate | Measure | Timing):
        return str(v)
    if isinstance(v, float | np.floating):
        x = float(v)
        if x == 0 or 1e-3 <= abs(x) < 1e6:
            return f"{x:.4g}"
        return f"{x:.3e}"
    return str(v)


@dataclass(frozen=True)
class Agreement:
    """Ours against a reference: ``agrees``, ``how`` (the difference as text), ``noise`` (the
    agreement needs the noise band), ``unresolved`` (the band is wider than +-50% of the
    reference), ``rel`` (ours / reference - 1, when both are numbers), ``coarse`` (the band is
    wider than the relative tolerance)."""

    agrees: bool
    how: str
    noise: bool = False
    unresolved: bool = False
    rel: float | None = None
    coarse: bool = False


def _value(v: Any) -> float | None:
    if isinstance(v, Rate | Measure):
        return v.value
    if isinstance(v, Timing):
        return v.ratio
    return number(v)


def _rel(x: float, ref: float) -> float | None:
    return None if ref == 0 else x / ref - 1.0


def _pct(r: float | None) -> str:
    return "" if r is None else f"{r:+.1%}"


def _rate_vs(ours: Rate, ref: Any, tol: float) -> Agreement:
    """A measured rate against a number or another rate (module docstring)."""
    x = ours.value
    if isinstance(ref, Rate):  # two samples: the exact conditional test of two Poisson rates
        p = ref.value
        n1, n2 = ours.trials, ref.trials
        total = ours.events + ref.events
        pooled = total / (n1 + n2)
        sd = math.sqrt(max(pooled * (1 - pooled), 1e-300) * (1 / n1 + 1 / n2))
        if ours.se is not None or ref.se is not None:  # rebuilt filters on either side: their spread
            sd = math.sqrt(ours.sd(pooled) ** 2 + ref.sd(pooled) ** 2)
            z = (x - p) / sd if sd > 0 else 0.0
            groups = min(g.groups for g in (ours, ref) if g.se is not None)
            ok = abs(z) <= _critical(groups)
            how = f"{z:+.1f} sd (two samples, {ours.groups} and {ref.groups} filters)"
        elif total == 0:
            return Agreement(True, "none in either sample", rel=None)
        else:
            pv = float(stats.binomtest(ours.events, total, n1 / (n1 + n2)).pvalue)
            z = (x - p) / sd if sd > 0 else 0.0
            ok = pv >= ALPHA
            how = (f"{z:+.1f} sd (two samples)" if min(ours.events, ref.events) >= 10
                   else f"p = {pv:.2g} (two samples, exact)")
        band = Z_TOLERANCE * sd
    else:
        p = float(ref)
        if ours.se is not None:
            sd = ours.sd(p)
            z = (x - p) / sd if sd > 0 else (0.0 if x == p else math.inf)
            crit = _critical(ours.groups)
            ok = abs(z) <= crit
            how = f"{z:+.1f} sd ({ours.groups} rebuilt filters)" if ours.groups > 1 else \
                f"{z:+.1f} sd (binomial and the spread between filters)"
            band = crit * sd
        else:
            sd = math.sqrt(max(p * (1 - p), 0.0) / ours.trials)
            if p <= 0.0 or p >= 1.0:
                if x == p:
                    return Agreement(True, "equal", rel=None if p == 0 else 0.0)
                ok, z = False, 0.0
                how = f"{ours.events} events where the reference allows none" if p == 0 else \
                    f"{ours.trials - ours.events} misses where the reference allows none"
            else:
                pv = float(stats.binomtest(ours.events, ours.trials, p).pvalue)
                ok = pv >= ALPHA
                z = (x - p) / sd
                mu = p * ours.trials
                how = f"{z:+.1f} sd" if min(mu, ours.trials - mu) >= 10 else f"p = {pv:.2g} (exact binomial, {mu:.3g} expected)"
            band = Z_TOLERANCE * sd
    rel = _rel(x, p)
    unresolved = p == 0 or band >= RESOLUTION * p
    close = rel is not None and abs(rel) <= tol
    ok = ok or close
    return Agreement(ok, f"{_pct(rel)}, {how}" if rel is not None else how, ok and not close, unresolved, rel,
                     band > tol * p)


def _critical(groups: int) -> float:
    """The critical value of a t test with groups - 1 degrees of freedom at the level of
    :data:`Z_TOLERANCE` normal sd (a few rebuilt filters estimate their spread poorly)."""
    if groups < 2:
        return Z_TOLERANCE
    return float(stats.t.isf(ALPHA / 2, groups - 1))


def _measure_vs(ours: Measure, ref: float, tol: float) -> Agreement:
    rel = _rel(ours.value, ref)
    close = (abs(rel) <= tol * (1 + 1e-9)) if rel is not None else abs(ours.value) <= 1e-12
    if ours.se > 0:
        z = (ours.value - ref) / ours.se
        ok = close or abs(z) <= Z_TOLERANCE
        unresolved = ref == 0 or Z_TOLERANCE * ours.se >= RESOLUTION * abs(ref)
        return Agreement(ok, f"{_pct(rel)}, {z:+.1f} se".lstrip(", "), ok and not close, unresolved, rel,
                         Z_TOLERANCE * ours.se > tol * abs(ref))
    return Agreement(close, _pct(rel) or ("equal" if close else f"{fmt(ours.value)} vs 0"), False, False, rel)


def _numbers(x: float, ref: float, tol: float) -> Agreement:
    if x == ref:
        return Agreement(True, "equal", rel=0.0 if ref else None)
    rel = _rel(x, ref)
    if rel is None:
        return Agreement(abs(x) <= 1e-12, f"{fmt(x)} vs 0")
    return Agreement(abs(rel) <= tol * (1 + 1e-9), _pct(rel), rel=rel)


def _direction(ratio: float, ref: float) -> Agreement:
    same = (ratio > 1) == (ref > 1) or ratio == ref == 1
    side = "slower" if ref > 1 else "faster"
    how = (f"direction agrees (both {'>' if ref > 1 else '<'} 1: the first {side}); the size "
           f"{ratio:.3g} vs {fmt(ref)} depends on the machine and is not judged") if same else \
        f"direction differs: ours {ratio:.3g}, the reference {fmt(ref)}"
    return Agreement(same, how, rel=_rel(ratio, ref))


def agreement(ours: Any, ref: Any, tolerance: float | None = None) -> Agreement | None:
    """Ours against a reference (module docstring); None when they cannot be compared.

    >>> agreement(Rate(9, 10**6), 7.12e-6).agrees
    True
    >>> agreement(22, 27).agrees, agreement(Measure(1.9, 0.0), "about 2").how
    (False, '-5.0%')
    >>> agreement("0/5", "all n").agrees
    False
    """
    tol = TOLERANCE if tolerance is None else tolerance
    if ours is None or ref is None:
        return None
    if isinstance(ref, str):
        return _words(ours, ref.strip(), tolerance)
    if isinstance(ref, Measure):  # an independent estimate as the reference: our value within its se
        ref_v = ref.value
        if isinstance(ours, Rate):
            sd = math.sqrt(ours.sd(ref_v) ** 2 + ref.se**2)
            z = (ours.value - ref_v) / sd if sd > 0 else 0.0
            rel = _rel(ours.value, ref_v)
            crit = _critical(ours.groups) if ours.se is not None else Z_TOLERANCE
            close = rel is not None and abs(rel) <= tol
            ok = close or abs(z) <= crit
            return Agreement(ok, f"{_pct(rel)}, {z:+.1f} sd", ok and not close, Z_TOLERANCE * sd >= RESOLUTION * ref_v, rel,
                             crit * sd > tol * abs(ref_v))
        if isinstance(ours, Measure):
            return _measure_vs(Measure(ours.value, math.hypot(ours.se, ref.se)), ref_v, tol)
        x = _value(ours)
        return None if x is None else _measure_vs(Measure(x, ref.se), ref_v, tol)
    if isinstance(ours, Timing):
        r = _value(ref)
        return None if r is None else _direction(ours.ratio, r)
    if isinstance(ours, Rate):
        if isinstance(ref, Rate):
            return _rate_vs(ours, ref, tol)
        r = _value(ref)
        return None if r is None or not 0 <= r <= 1 else _rate_vs(ours, r, tol)
    if isinstance(ref, Rate):  # the reference is a measured rate, ours a number (a model value)
        x = _value(ours)
        if x is None or not 0 <= x <= 1:
            return None
        flipped = _rate_vs(ref, x, tol)
        rel = _rel(x, ref.value)
        return Agreement(flipped.agrees, f"{_pct(rel)}, the reference's noise".lstrip(", "), flipped.noise,
                         flipped.unresolved, rel)
    if isinstance(ours, Measure):
        r = _value(ref)
        return None if r is None else _measure_vs(ours, r, tol)
    x, r = _value(ours), _value(ref)
    if x is None or r is None:
        return None
    return _numbers(x, r, tol)


def _words(ours: Any, text: str, tolerance: float | None) -> Agreement | None:
    """The document's words: a number, "yes"/"no", "about x", bounds, ranges, lists, "all"."""
    low = text.lower()
    r = number(text)
    if r is not None:
        return agreement(ours, r, tolerance)
    ours_text = str(ours).strip().lower() if isinstance(ours, str) else ""
    if low in ("yes", "no"):
        return Agreement(ours_text == low, f"{ours_text or fmt(ours)} vs {low}") if ours_text else None
    m = _APPROX.match(text)
    if m:
        return agreement(ours, float(m.group(1)), APPROX_TOLERANCE if tolerance is None else tolerance)
    x = _value(ours)
    m = _BOUND.match(text)
    if m and x is not None:
        op, bound = m.group(1), float(m.group(2))
        upper = op in ("<=", "<", "≤")
        slack = 0.0
        if isinstance(ours, Rate):
            slack = Z_TOLERANCE * ours.sd(min(max(bound, 0.0), 1.0))
        elif isinstance(ours, Measure):
            slack = Z_TOLERANCE * ours.se
        strict = x < bound if op in ("<",) else x > bound if op in (">",) else x <= bound if upper else x >= bound
        ok = strict or (x - slack <= bound if upper else x + slack >= bound)
        return Agreement(ok, f"{fmt(x)} {'within' if strict else 'beyond'} the bound {op} {fmt(bound)}",
                         ok and not strict, False)
    m = _RANGE.match(text)
    if m and x is not None:
        lo, hi = sorted((float(m.group(1)), float(m.group(2))))
        slack = Z_TOLERANCE * (ours.se if isinstance(ours, Measure) else 0.0)
        inside = lo <= x <= hi
        ok = inside or lo - slack <= x <= hi + slack
        return Agreement(ok, f"{fmt(x)} {'inside' if inside else 'outside'} {fmt(lo)}-{fmt(hi)}", ok and not inside)
    if _LIST.match(text) and isinstance(ours, str) and _LIST.match(ours.strip()):
        want = [float(v) for v in text.split(",")]
        got = [float(v) for v in ours.split(",")]
        if len(want) != len(got):
            return Agreement(False, f"{len(got)} values, not {len(want)}")
        tol = TOLERANCE if tolerance is None else tolerance
        parts = [_numbers(g, w, tol) for g, w in zip(got, want, strict=True)]
        return Agreement(all(p.agrees for p in parts), "; ".join(p.how for p in parts))
    m = _FRACTION.match(ours_text)
    if low.startswith("all") and m:
        return Agreement(m.group(1) == m.group(2), f"{m.group(1)} of {m.group(2)}")
    if ours_text and ours_text == low:
        return Agreement(True, "equal")
    return None
