"""One calibration suite over every structure with a ``predicted_fpr()`` (issue 27).

The structures come from the structure registry (today ``bloomkit._format.registered_structures()``).
Each has a recipe here: it builds the structure at several fills (seeded), probes it with keys
or points it never saw, and returns the counts (false positives, trials) beside the structure's
own ``predicted_fpr()``. The measured rate must lie in the binomial band of the prediction:

* an exact two-sided binomial test at 5 sigma (p >= 5.7e-7) when the prediction is conditional on
  the structure's own state (its fill, its table loads): given the structure, the probes are
  independent Bernoulli trials;
* a z test at 5 sigma whose sd adds, to the binomial sd of the probes, the spread of one
  structure's rate between builds that the model predicts (the fill of its bits), when the
  prediction is an expectation over builds (a key count, Theorem 7's occupancy).

A registered structure without a recipe fails :func:`test_every_registered_structure_has_a_recipe`;
a new structure joins by adding its recipe (``@recipe("tag")``). :data:`PENDING` would name a
structure whose prediction is being rewritten elsewhere, with the reason (empty today). The default run is fast (a few seconds); ``-m slow`` runs every recipe
at 10x the probes and more seeds (the MLBF family and the MVBF at 12 seeds).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from itertools import product

import numpy as np
import pytest
from scipy import stats

import bloomkit
from bloomkit import theory
from bloomkit._format import registered_structures
from bloomkit.folding import FoldableBloomFilter, FoldableCountingBloomFilter
from bloomkit.lookup import BloomierFilter, GeometricFilter, RibbonRetrieval
from bloomkit.multiattr import ParallelBloomFilter
from bloomkit.static import BinaryFuseFilter, RibbonFilter

Z = 5.0
ALPHA = float(2 * stats.norm.sf(Z))


@dataclass(frozen=True)
class Point:
    """One calibration point: ``events`` false positives in ``trials`` probes of a structure whose
    ``predicted_fpr()`` was ``predicted``; ``sd`` (None: exact binomial test) when the prediction
    is an expectation over builds and a build's rate spreads around it."""

    label: str
    events: int
    trials: int
    predicted: float
    sd: float | None = None
    fill: float = float("nan")  # the quantity that varies between the points (a load, a count)

    def check(self) -> tuple[bool, str]:
        x, p = self.events / self.trials, self.predicted
        if self.sd is None:
            if p <= 0.0:
                return self.events == 0, f"{self.events} events where none are predicted"
            pv = float(stats.binomtest(self.events, self.trials, min(p, 1.0)).pvalue)
            return pv >= ALPHA, f"{self.label}: {x:.4g} vs {p:.4g} ({self.events}/{self.trials}), p = {pv:.2g}"
        sd = math.sqrt(max(p * (1 - p), 0.0) / self.trials + self.sd**2)
        z = (x - p) / sd if sd > 0 else 0.0
        return abs(z) <= Z, f"{self.label}: {x:.4g} vs {p:.4g} ({self.events}/{self.trials}), z = {z:+.2f}"


Build = Callable[[bool, np.random.Generator], list[Point]]
RECIPES: dict[str, Build] = {}
EXTRA = {"similarity.MVBF"}  # a component with predicted_fpr that is not a registered (persistable) structure
PENDING: dict[str, str] = {}  # tag -> why its recipe is missing (a marker for the lead, never a silent gap)


def recipe(tag: str) -> Callable[[Build], Build]:
    def deco(fn: Build) -> Build:
        RECIPES[tag] = fn
        return fn

    return deco


def _keys(rng: np.random.Generator, n: int, probes: int) -> tuple[np.ndarray, np.ndarray]:
    keys = rng.choice(2**62, size=n + probes, replace=False).astype(np.int64)
    return keys[:n], keys[n:]


def _fill_sd(m: int, balls: float, k: int, fpr: float) -> float:
    """sd of one filter's rate fill^k between builds: occupancy of m bits by ``balls`` throws
    (exact variance of the number of empty bits), delta method."""
    e1 = m * (1 - 1 / m) ** balls
    var = m * (m - 1) * (1 - 2 / m) ** balls + e1 - e1 * e1
    fill = 1 - e1 / m
    return k * fpr / fill * math.sqrt(max(var, 0.0)) / m if fill > 0 else 0.0


# -- membership filters ---------------------------------------------------------------------------


def _membership(cls: type, slow: bool, rng: np.random.Generator, *, remove: bool = False,
                probes_kw: str = "independent", loads: tuple[float, ...] = (0.05, 0.1, 0.2)) -> list[Point]:
    """Bloom-type filters: loads n/m = 0.05, 0.1, 0.2, k = 3 and 7; predicted_fpr() estimates the
    count from the fill, so it is the rate given the filter (exact binomial test)."""
    m, probes = (1 << 20, 1_000_000) if slow else (1 << 15, 100_000)
    out = []
    for load in loads:
        for k in (3, 7):
            n = int(load * m)
            keys, absent = _keys(rng, 2 * n if remove else n, probes)
            f = cls(num_bits=m, num_hashes=k, seed=int(rng.integers(2**63)), probes=probes_kw)
            f.add_many(keys)
            if remove:  # a counting filter after removing half of what it holds
                f.remove_many(keys[n:])
            assert f.contains_many(keys[:n]).all()
            out.append(Point(f"{probes_kw} probes, n/m = {load}, k = {k}", int(f.contains_many(absent).sum()), probes,
                             f.predicted_fpr(), fill=load))
    return out


@recipe("bloom.BloomFilter")
def _bloom(slow: bool, rng: np.random.Generator) -> list[Point]:
    pts = _membership(bloomkit.BloomFilter, slow, rng)
    # and the model at the key count (an expectation over filters: the fill spreads)
    m, probes, k = 1 << 15, 100_000, 5
    for load in (0.05, 0.15):
        n = int(load * m)
        keys, absent = _keys(rng, n, probes)
        f = bloomkit.BloomFilter(num_bits=m, num_hashes=k, seed=int(rng.integers(2**63)))
        f.add_many(keys)
        p = f.predicted_fpr(num_keys=n)
        pts.append(Point(f"Eq. 2 at n = {n}", int(f.contains_many(absent).sum()), probes, p,
                         sd=_fill_sd(m, n * k, k, p), fill=load))
    # double hashing (probes="double"): theory.double_hashing_fpr at the key count, at m a power
    # of two (sums mod 2**64 are sums mod m there), a smooth m (2^4 5^5: where double hashing
    # mod m measured 0.0126 against 0.0094) and a prime; and given the fill
    for m, load in ((1 << 15, 0.1), (50_000, 0.1), (32_749, 0.2)):
        n = int(load * m)
        keys, absent = _keys(rng, n, probes)
        f = bloomkit.BloomFilter(num_bits=m, num_hashes=k, seed=int(rng.integers(2**63)), probes="double")
        f.add_many(keys)
        p = f.predicted_fpr(num_keys=n)
        hits = int(f.contains_many(absent).sum())
        pts.append(Point(f"double hashing at m = {m}, n = {n}", hits, probes, p, sd=_fill_sd(m, n * k, k, p), fill=load))
        pts.append(Point(f"double hashing at m = {m}, given the fill", hits, probes, f.predicted_fpr(), fill=load))
    return pts


@recipe("bloom.CountingBloomFilter")
def _counting(slow: bool, rng: np.random.Generator) -> list[Point]:
    # and double hashing (probes="double": theory.double_hashing_fpr given the fill) after removals too
    return (_membership(bloomkit.CountingBloomFilter, slow, rng, remove=True)
            + _membership(bloomkit.CountingBloomFilter, slow, rng, remove=True, probes_kw="double", loads=(0.1, 0.2)))


@recipe("scalable.ScalableBloomFilter")
def _scalable(slow: bool, rng: np.random.Generator) -> list[Point]:
    """Growth from 1000 keys: the compound rate of the slices' fills (given the filter)."""
    probes = 1_000_000 if slow else 100_000
    out = []
    for n in (2_000, 20_000, 200_000):
        keys, absent = _keys(rng, n, probes)
        f = bloomkit.ScalableBloomFilter(1000, 0.02, seed=int(rng.integers(2**63)))
        for part in np.array_split(keys, 5):
            f.add_many(part)
        out.append(Point(f"{n} keys, {f.num_slices} slices", int(f.contains_many(absent).sum()), probes,
                         f.predicted_fpr(), fill=n))
    return out


@recipe("splitblock.SplitBlockBloomFilter")
def _splitblock(slow: bool, rng: np.random.Generator) -> list[Point]:
    """Native and Parquet layouts at 6, 10, 16 bits per key: the rate given the filter's bits."""
    probes = 1_000_000 if slow else 100_000
    out = []
    for mode, bpks in (("native", (6.0, 10.0, 16.0)), ("parquet", (8.0, 12.0))):
        B = 256
        for bpk in bpks:
            block_bits = 512 if mode == "native" else 256
            n = int(B * block_bits / bpk)
            keys, absent = _keys(rng, n, probes)
            f = (bloomkit.SplitBlockBloomFilter(num_blocks=B, seed=int(rng.integers(2**63))) if mode == "native"
                 else bloomkit.SplitBlockBloomFilter.for_parquet(physical_type="INT64", num_bytes=32 * B))
            f.add_many(keys)
            out.append(Point(f"{mode}, {bpk} bits per key", int(f.contains_many(absent).sum()), probes,
                             f.predicted_fpr(), fill=bpk))
    return out


def _foldable(cls: type, slow: bool, rng: np.random.Generator) -> list[Point]:
    """Eq. 4 at the count, at the full size and after folding by 2 and 3 (m_t = m_1 / 6): an
    expectation over filters, the fill spread at m_t added; both probe schemes (double hashing:
    theory.double_hashing_fpr at m_t)."""
    probes = 1_000_000 if slow else 100_000
    m1, k, n = 6 * 4096, 4, 1500
    out = []
    for seed_draw, scheme in product(range(2 if slow else 1), ("independent", "double")):
        keys, absent = _keys(rng, n, probes)
        f = cls(m1, k, seed=int(rng.integers(2**63)) + seed_draw, probes=scheme)
        f.add_many(keys)
        for fac in (1, 2, 3):
            if fac > 1:
                f.fold(fac)
            p = f.predicted_fpr()
            out.append(Point(f"{scheme} probes, m = {f.num_bits}", int(f.contains_many(absent).sum()), probes, p,
                             sd=_fill_sd(f.num_bits, n * k, k, p), fill=n * k / f.num_bits))
    return out


@recipe("folding.FoldableBloomFilter")
def _folding(slow: bool, rng: np.random.Generator) -> list[Point]:
    return _foldable(FoldableBloomFilter, slow, rng)


@recipe("folding.FoldableCounting")
def _folding_counting(slow: bool, rng: np.random.Generator) -> list[Point]:
    return _foldable(FoldableCountingBloomFilter, slow, rng)


@recipe("ranges.RangeBloomFilter")
def _ranges(slow: bool, rng: np.random.Generator) -> list[Point]:
    """One numeric attribute inserted as ranges of three sizes, one position per value (d = 1,
    s = k: no grouping or overlap false positives, Eq. 14 reduces to (1-p)^k at the observed
    fill); every value outside the ranges probed with might_contain. Given the filter the values
    hash independently (binomial)."""
    from bloomkit.ranges import Integer, RangeBloomFilter, RangeConfig, Schema

    R = 200_000 if slow else 40_000
    schema = Schema([Integer("Age", 0, R - 1)])
    out = []
    for width in (20, 60, 150):
        f = RangeBloomFilter(schema, 2048, RangeConfig(6, {"Age": (1, 6)}), seed=int(rng.integers(2**31)))
        starts = rng.choice(R // 200, size=3, replace=False) * 200
        inside = np.zeros(R, dtype=bool)
        for a in starts:
            f.insert({"Age": (int(a), int(a) + width - 1)})
            inside[a : a + width] = True
        probes = np.flatnonzero(~inside)
        hits = sum(f.might_contain("Age", int(v)) for v in probes)
        out.append(Point(f"3 ranges of {width}", int(hits), probes.size, float(f.predicted_fpr(attributes=["Age"])),
                         fill=f.fill_ratio()))
    return out


# -- lookup tables ---------------------------------------------------------------------------------


def _lookup(build: Callable[..., object], slow: bool, rng: np.random.Generator, sizes: tuple[int, ...],
            label: str) -> list[Point]:
    """An absent key's answer is a value (not 0): the table's rate for it (given the table)."""
    probes = 2_000_000 if slow else 200_000
    out = []
    for n in sizes:
        keys, absent = _keys(rng, n, probes)
        values = rng.integers(1, 256, n)
        t = build(keys, values, int(rng.integers(2**31)))
        assert (t.get_many(keys) == values).all()  # type: ignore[attr-defined]
        hits = int((t.get_many(absent) != 0).sum())  # type: ignore[attr-defined]
        out.append(Point(f"{label}, {n} keys", hits, probes, t.predicted_fpr(), fill=n))  # type: ignore[attr-defined]
    return out


@recipe("lookup.BloomierFilter")
def _bloomier(slow: bool, rng: np.random.Generator) -> list[Point]:
    return _lookup(lambda k, v, s: BloomierFilter.build(k, v, value_bits=8, fpr=2.0**-10, seed=s),
                   slow, rng, (2_000, 20_000, 100_000), "V = 8, e_o = 2^-10")


@recipe("lookup.GeometricFilter")
def _geometric(slow: bool, rng: np.random.Generator) -> list[Point]:
    return _lookup(lambda k, v, s: GeometricFilter.build(k, v, value_bits=8, fpr=2.0**-10, seed=s),
                   slow, rng, (2_000, 20_000, 100_000), "V = 8, e_o = 2^-10")


@recipe("lookup.RibbonRetrieval")
def _ribbon_retrieval(slow: bool, rng: np.random.Generator) -> list[Point]:
    # c = 16: the rows layout (the ribbon filter's recipe checks the columns layout's query)
    return _lookup(lambda k, v, s: RibbonRetrieval.build(k, v, value_bits=8, fpr=2.0**-8, seed=s),
                   slow, rng, (2_000, 20_000, 100_000), "V = 8, e = 2^-8")


@recipe("dask.ShardedLookupTable")
def _sharded(slow: bool, rng: np.random.Generator) -> list[Point]:
    from bloomkit.dask import ShardedLookupTable

    return _lookup(lambda k, v, s: ShardedLookupTable.build(k, v, num_shards=4, value_bits=8, fpr=2.0**-10, seed=s),
                   slow, rng, (4_000, 40_000), "4 geometric shards") + _lookup(
        lambda k, v, s: ShardedLookupTable.build(k, v, num_shards=2, kind="bloomier", value_bits=8, fpr=2.0**-10,
                                                 seed=s),
        slow, rng, (10_000,), "2 Bloomier shards")


# -- static filters --------------------------------------------------------------------------------


def _static(build: Callable[[np.ndarray, int], object], slow: bool, rng: np.random.Generator,
            label: str) -> list[Point]:
    """An absent key matches when its r-bit check is 0: 2^-r given the filter (exact binomial)."""
    probes = 1_000_000 if slow else 100_000
    out = []
    for n in (1_000, 20_000, 100_000):
        keys, absent = _keys(rng, n, probes)
        f = build(keys, int(rng.integers(2**31)))
        assert f.contains_many(keys).all()  # type: ignore[attr-defined]
        hits = int(f.contains_many(absent).sum())  # type: ignore[attr-defined]
        out.append(Point(f"{label}, {n} keys", hits, probes, f.predicted_fpr(), fill=n))  # type: ignore[attr-defined]
    return out


@recipe("static.BinaryFuseFilter")
def _fuse(slow: bool, rng: np.random.Generator) -> list[Point]:
    return [p for a in (3, 4) for p in _static(
        lambda k, s, a=a: BinaryFuseFilter.build(k, fingerprint_bits=8, arity=a, seed=s), slow, rng,  # type: ignore[misc]
        f"{a}-wise, r = 8")]


@recipe("static.RibbonFilter")
def _ribbon_filter(slow: bool, rng: np.random.Generator) -> list[Point]:
    return _static(lambda k, s: RibbonFilter.build(k, fingerprint_bits=7, seed=s), slow, rng, "r = 7")


# -- multi-attribute items -------------------------------------------------------------------------


@recipe("multiattr.ParallelBloomFilter")
def _pbf(slow: bool, rng: np.random.Generator) -> list[Point]:
    """p = 3 attributes, q = 4, m = 256 counters per array, at loads where a fresh item's rate is
    measurable (the stage-1 fill measured, so given the filter) and recombined items (each
    attribute from a different stored item: the table's collision rate, Eq. of two_step_fpr)."""
    probes = 400_000 if slow else 40_000
    out = []
    for n in (150, 300, 600):
        vals = rng.choice(2**62, size=3 * (n + probes), replace=False).astype(np.int64).reshape(3, -1)
        stored, fresh = [c[:n] for c in vals], [c[n:] for c in vals]
        f = ParallelBloomFilter(3, 4, 256, seed=int(rng.integers(2**31)))
        f.add_many(stored)
        out.append(Point(f"fresh items, n = {n}", int(f.contains_many(fresh).sum()), probes, f.predicted_fpr(),
                         fill=n))
        idx = np.stack([rng.integers(0, n, probes) for _ in range(3)])
        ok = (idx[0] != idx[1]) & (idx[0] != idx[2]) & (idx[1] != idx[2])
        rec = [stored[a][idx[a, ok]] for a in range(3)]
        out.append(Point(f"recombined items, n = {n}", int(f.contains_many(rec).sum()), int(ok.sum()),
                         f.predicted_fpr(query="recombined"), fill=n))
    return out


# -- similarity --------------------------------------------------------------------------------------

D = 20


def _sim_points(make: Callable[[int], object], levels: tuple[int, ...], ns: tuple[int, ...], seeds: range,
                nq: int, rng: np.random.Generator, spread: Callable[[object, int, float], float]) -> list[Point]:
    """Far queries (fresh uniform points) against filters of n uniform points, one per seed and n:
    measured FPR per level against predicted_fpr(level=...) (alpha = 1: the LSH array saturated
    or absent), with the fill spread of the verification filter between builds."""
    out = []
    for n in ns:
        for seed in seeds:
            f = make(seed)
            f.add_many(rng.uniform(1, 1000, (n, D)))  # type: ignore[attr-defined]
            Q = rng.uniform(1, 1000, (nq, D))
            for lv in levels:
                p = f.predicted_fpr(level=lv)  # type: ignore[attr-defined]
                hits = int(f.query_many(Q, lv).sum())  # type: ignore[attr-defined]
                out.append(Point(f"n = {n}, seed {seed}, level {lv}", hits, nq, p, sd=spread(f, lv, p), fill=n))
    return out


def _verify_spread(f: object, level: int, p: float) -> float:
    """Spread of the MLBF family's rate 1 - (1 - phi)^L between builds: the fill of VVBF theta
    (k' n L balls into m' / 2^theta locations) through phi = fill^k'."""
    L, kp, mp = f.or_count, f.verify_hashes, f.verify_bits  # type: ignore[attr-defined]
    m2 = mp >> level
    balls = kp * len(f) * L  # type: ignore[arg-type]
    phi = 1 - (1 - p) ** (1 / L)
    return L * (1 - phi) ** (L - 1) * _fill_sd(m2, balls, kp, phi)


def _similarity(cls_name: str, slow: bool, rng: np.random.Generator) -> list[Point]:
    from bloomkit.similarity import LSBF, MLBFStar

    seeds = range(12) if slow else range(3)
    nq = 40_000 if slow else 8_000
    if cls_name == "LSBF":  # S = 1; a 64-bit LSH array saturates: alpha = 1, Theorem 7 with n' = n
        def make(seed: int) -> object:
            return LSBF(D, 2.0, and_width=5, num_bits=64, verify_bits=1 << 13, verify_hashes=3, seed=seed,
                        domain=(0, 1001))
        return _sim_points(make, (0,), (500, 1000, 2000), seeds, nq, rng, _verify_spread)
    if cls_name == "MLBF":
        return _mlbf_given_bmlbf(seeds, nq, rng)

    def make_star(seed: int) -> object:
        return MLBFStar(D, 1.0, num_levels=4, and_width=5, or_count=5, verify_bits=1 << 16, verify_hashes=5,
                        seed=seed, domain=(0, 1001))
    return _sim_points(make_star, (0, 1, 2, 3), (300, 500, 800), seeds, nq, rng, _verify_spread)


def _mlbf_given_bmlbf(seeds: range, nq: int, rng: np.random.Generator) -> list[Point]:
    """The MLBF: which of a far query's L AND-constructions pass the BMLBF is measured
    (``and_pass_many``; its model, Theorem 5's alpha, is approximate: 002 Fig 8 in the report);
    given that, the query is positive with probability 1 - (1 - phi)^c for c passing
    constructions, phi the verification rate in the filter's own prediction
    (``predicted_fpr(level, alpha=1) = 1 - (1 - phi)^L``). w = 2.5: most constructions pass, and
    their concatenations are distinct (the typical case of Theorems 7-8)."""
    from bloomkit.similarity import MLBF

    out = []
    for n in (200, 500, 1000):
        for seed in seeds:
            f = MLBF(D, 2.5, num_levels=3, and_width=5, or_count=5, num_bits=1 << 20, verify_bits=1 << 15,
                     verify_hashes=1, seed=seed, domain=(0, 1001))
            f.add_many(rng.uniform(1, 1000, (n, D)))
            Q = rng.uniform(1, 1000, (nq, D))
            for lv in range(3):
                top = f.predicted_fpr(level=lv)
                phi = 1 - (1 - top) ** (1 / f.or_count)
                c = f.and_pass_many(Q, lv).sum(axis=1)
                p = float(np.mean(1 - (1 - phi) ** c))
                hits = int(f.query_many(Q, lv).sum())
                alpha = float(c.mean() / f.or_count)
                spread = _verify_spread(f, lv, top) * (p / top if top > 0 else 0.0)
                out.append(Point(f"n = {n}, seed {seed}, level {lv} (BMLBF passes {alpha:.2f})", hits, nq, p,
                                 sd=spread, fill=n))
    return out


@recipe("similarity.LSBF")
def _lsbf(slow: bool, rng: np.random.Generator) -> list[Point]:
    return _similarity("LSBF", slow, rng)


@recipe("similarity.MLBF")
def _mlbf(slow: bool, rng: np.random.Generator) -> list[Point]:
    return _similarity("MLBF", slow, rng)


@recipe("similarity.MLBFStar")
def _mlbf_star(slow: bool, rng: np.random.Generator) -> list[Point]:
    return _similarity("MLBFStar", slow, rng)


def _jaccard(make: Callable[[int], object], slow: bool, rng: np.random.Generator, ns: tuple[int, ...]) -> list[Point]:
    """The Jaccard family (issue 24): texts unlike every stored one are random signatures (the
    MinHash values of unrelated texts are independent uniform draws), so each level's far rate is
    Theorem 8, 1 - (1 - alpha phi)^b, with the verification filter's fill spread between builds;
    for the MLBF alpha = (BMLBF fill)^r_theta, measured. Then the S-curve: a stored text per query
    at Jaccard 0.3 / 0.6 / 0.8 (token sets, k-way MinHash), against predicted_fpr(similarity=s)."""
    from bloomkit.similarity import MinHasher

    seeds = range(8) if slow else range(2)
    nq = 40_000 if slow else 8_000
    out = []
    for n in ns:
        for seed in seeds:
            f = make(seed)
            K = f.and_width * f.or_count  # type: ignore[attr-defined]
            f.add_signatures(rng.integers(0, 2**63, (n, K), dtype=np.uint64))  # type: ignore[attr-defined]
            Q = rng.integers(0, 2**63, (nq, K), dtype=np.uint64)
            bml = getattr(f, "_bml", None)
            for lv in range(f.num_levels):  # type: ignore[attr-defined]
                alpha = 1.0 if bml is None else (bml.popcount() / bml.num_bits) ** f.rows_by_level[lv]  # type: ignore[attr-defined]
                top = f.predicted_fpr(level=lv)  # type: ignore[attr-defined]
                p = f.predicted_fpr(level=lv, alpha=alpha)  # type: ignore[attr-defined]
                hits = int(f.query_signatures(Q, lv).sum())  # type: ignore[attr-defined]
                spread = _verify_spread(f, lv, top) * (p / top if top > 0 else 0.0)
                out.append(Point(f"n = {n}, seed {seed}, level {lv}", hits, nq, p, sd=spread, fill=n))
    pairs = 4000 if slow else 1000
    for s in (0.3, 0.6, 0.8):
        f = make(100)
        x = round(120 * s / (1 + s))
        A = [[f"a{s}-{i}-{j}" for j in range(60)] for i in range(pairs)]
        B = [a[:x] + [f"b{s}-{i}-{j}" for j in range(60 - x)] for i, a in enumerate(A)]
        J = x / (120 - x)
        mh: MinHasher = f.hasher  # type: ignore[attr-defined]
        f.add_signatures(mh.signatures(A))  # type: ignore[attr-defined]
        for lv in range(f.num_levels):  # type: ignore[attr-defined]
            if f.rows_by_level[lv] > 1 and getattr(f, "_bml", None) is None:  # type: ignore[attr-defined]
                hits = int(f.query_signatures(mh.signatures(B), lv).sum())  # type: ignore[attr-defined]
                out.append(Point(f"S-curve at J = {J:.3f}, level {lv}", hits, pairs,
                                 float(f.predicted_fpr(level=lv, similarity=J)), fill=J))  # type: ignore[attr-defined]
    return out


@recipe("similarity.JaccardMLBFStar")
def _jaccard_star(slow: bool, rng: np.random.Generator) -> list[Point]:
    from bloomkit.similarity import JaccardMLBFStar

    return _jaccard(lambda seed: JaccardMLBFStar((6, 4, 2), bands=5, verify_bits=1 << 15, verify_hashes=3, seed=seed),
                    slow, rng, (300, 600, 1200))


@recipe("similarity.JaccardMLBF")
def _jaccard_mlbf(slow: bool, rng: np.random.Generator) -> list[Point]:
    from bloomkit.similarity import JaccardMLBF

    return _jaccard(lambda seed: JaccardMLBF((3, 2), bands=4, num_bits=1 << 12, verify_bits=1 << 14, verify_hashes=2,
                                             seed=seed), slow, rng, (200, 400, 800))


@recipe("similarity.JaccardLSBF")
def _jaccard_lsbf(slow: bool, rng: np.random.Generator) -> list[Point]:
    from bloomkit.similarity import JaccardLSBF

    return _jaccard(lambda seed: JaccardLSBF(rows=5, bands=6, verify_bits=1 << 14, verify_hashes=3, seed=seed),
                    slow, rng, (500, 1000, 2000))


@recipe("similarity.MVBF")
def _mvbf(slow: bool, rng: np.random.Generator) -> list[Point]:
    """Raw verification elements (Fig 7's setting: k = 5 addresses, S = 5) at k' = 1 and 3: every
    level against the per-seed prediction (the suffix bits of a seed are not uniform)."""
    from bloomkit.similarity import MVBF

    seeds = range(12) if slow else range(3)
    tests = 200_000 if slow else 40_000
    out = []
    for kp, n in ((1, 1000), (1, 2000), (1, 4000), (3, 2000)):
        for seed in seeds:
            jv = rng.integers(0, 6, n + tests)
            addr = rng.integers(0, 200_001, (n + tests, 5))
            mv = MVBF(1 << 16, kp, 5, seed=seed)
            mv.add_many(jv[:n], addr[:n])
            for lv in range(5):
                p = mv.predicted_fpr(lv)
                hits = int(mv.contains_many(jv[n:], addr[n:], lv).sum())
                out.append(Point(f"k' = {kp}, n' = {n}, seed {seed}, level {lv}", hits, tests, p,
                                 sd=_fill_sd((1 << 16) >> lv, kp * n, kp, p), fill=n))
    return out


# -- the matching service ---------------------------------------------------------------------------

DEMO_REGION = (120.9, 121.7, 24.6, 25.3)  # the `bloomkit serve --demo` region


def _demo_query(rng: np.random.Generator) -> dict[str, object]:
    """An Age point or range and a Latitude 0.01-degree range or point, inside the demo region."""
    age = int(rng.integers(1, 115))
    lat = int(rng.integers(246_000, 253_000))
    return {"Age": age if rng.random() < 0.5 else [age, age + int(rng.integers(1, 6))],
            "Latitude": [lat / 1e4, (lat + 99) / 1e4] if rng.random() < 0.75 else lat / 1e4}


def service_counts(profiles: int, searches: int, seed: int, modes: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """Counts of one index of `bloomkit serve --demo` profiles (hash seed ``seed``) per mode over
    random searches: false candidates observed (candidates that verification removes), their
    expectation and variance under ``ProfileIndex.expected_false_candidates`` (what the service
    reports as ``expected_false_candidates``), and the trials (non-matching profiles x searches)."""
    from bloomkit.ranges import ProfileIndex
    from bloomkit.serve.demo import table1_profiles, table1_schema

    sf = table1_schema()
    d = sf.design()
    idx = ProfileIndex(sf.schema, d.num_bits, d.config, seed=seed, capacity=profiles, store_records=True)
    idx.add_many(table1_profiles(profiles, seed=seed, region=DEMO_REGION))
    rng = np.random.default_rng(1000 + seed)
    out = {m: {"observed": 0.0, "expected": 0.0, "variance": 0.0, "trials": 0.0} for m in modes}
    for _ in range(searches):
        q = _demo_query(rng)
        for mode in modes:
            cand, match = idx.search_candidates(q, mode=mode)
            fc = idx.expected_false_candidates(q, mode=mode)
            assert fc.nonmatching == len(idx) - match.size and np.isfinite(fc.expected)
            o = out[mode]
            o["observed"] += cand.size - match.size
            o["expected"] += fc.expected
            o["variance"] += fc.variance
            o["trials"] += fc.nonmatching
    return out


@recipe("ranges.ProfileIndex")
def _profile_index(slow: bool, rng: np.random.Generator) -> list[Point]:
    """The service's per-query model (document 000, Eqs. 13-14 per stored profile) against the
    false candidates found, both modes, 500 / 1000 / 2000 profiles. The model is an expectation
    over hash functions (Section V: "our analytic model produces the average false positive
    rates"), so each point pools several hash seeds and its sd is the spread of the per-seed
    deviations (never below the model's own variance): a t test at 5 sd over 4-8 seeds."""
    seeds, searches = (range(12), 200) if slow else (range(4), 60)
    out = []
    for profiles in (500, 1000, 2000):
        runs = [service_counts(profiles, searches, 97 * profiles + s, ("subset", "intersect")) for s in seeds]
        for mode in ("subset", "intersect"):
            obs = np.array([r[mode]["observed"] for r in runs])
            exp = np.array([r[mode]["expected"] for r in runs])
            var = np.array([r[mode]["variance"] for r in runs])
            trials = sum(r[mode]["trials"] for r in runs)
            sd_dev = max(float((obs - exp).std(ddof=1)), float(np.sqrt(var.mean())))
            out.append(Point(f"{mode}, {profiles} profiles x {len(seeds)} seeds", int(obs.sum()), int(trials),
                             float(exp.sum()) / trials, sd=sd_dev * math.sqrt(len(seeds)) / trials, fill=profiles))
    assert sum(p.events for p in out) > 400  # enough false candidates to mean something
    return out


# -- the suite -------------------------------------------------------------------------------------


def test_every_registered_structure_has_a_recipe() -> None:
    registered = registered_structures()
    missing = set(registered) - set(RECIPES) - set(PENDING)
    assert not missing, f"no calibration recipe for {sorted(missing)}: add one to {__file__} (@recipe(tag))"
    assert not set(PENDING) & set(RECIPES), "a pending structure has a recipe: remove it from PENDING"
    assert set(RECIPES) - set(registered) == EXTRA, "a recipe for a structure the registry does not know"
    for tag, cls in registered.items():
        assert callable(getattr(cls, "predicted_fpr", None)), tag


def _run(tag: str, slow: bool) -> list[Point]:
    seed = sum(map(ord, tag)) + (10_000 if slow else 0)
    pts = RECIPES[tag](slow, np.random.default_rng(seed))
    assert len({p.fill for p in pts}) >= 3, f"{tag}: calibrate at several fills"
    assert all(p.trials >= 1000 for p in pts)
    bad = [msg for ok, msg in (p.check() for p in pts) if not ok]
    assert not bad, f"{tag}: outside the {Z:g}-sigma band: " + "; ".join(bad)
    return pts


@pytest.mark.parametrize("tag", sorted(RECIPES))
def test_measured_rate_within_the_band_of_the_prediction(tag: str) -> None:
    _run(tag, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("tag", sorted(RECIPES))
def test_measured_rate_within_the_band_of_the_prediction_many_probes(tag: str) -> None:
    _run(tag, slow=True)


def test_the_band_catches_a_wrong_prediction() -> None:
    """The check can fail: a prediction 25 % low at 10^5 probes is outside the band."""
    assert not Point("x", 1250, 100_000, 0.01).check()[0]
    assert Point("x", 1030, 100_000, 0.01).check()[0]
    assert not Point("x", 1250, 100_000, 0.01, sd=0.0001).check()[0]
    assert not Point("x", 3, 100_000, 0.0).check()[0]
    assert theory.binomial_sd(0.01, 100_000) > 0


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["subset", "intersect"])
def test_service_target_100k_profiles_1000_searches(mode: str) -> None:
    """Issue 27's target for the service: 100,000 demo profiles, 1,000 random searches per mode:
    observed / expected false candidates within [0.85, 1.15]."""
    r = service_counts(100_000, 1000, 0, (mode,))[mode]
    ratio = r["observed"] / r["expected"]
    assert r["observed"] > 10_000
    assert 0.85 <= ratio <= 1.15, (mode, r, ratio)
