"""Reproductions of document 001 (Zhao 2009, the Geometric filter): Figs. 3.1-3.4, Table 4.1,
Figs. 4.1-4.2 (the timing experiments, Figs. 4.3-4.4 and Tables 4.2-4.3, are in
:mod:`bloomkit.experiments.lookup_timing`).

Data: the thesis encodes Google Web 1T trigrams (|S| up to 4e8). We use the trigram table of
the GCIDE dictionary (``dict-gcide``, 5.4 M tokens, 3.7 M distinct trigrams; a prefix in
quick mode) and a seeded Zipf table for larger |S|; when GCIDE is missing the Zipf table
stands in and the notes say so. V = 16 and e_o = 2^-16 throughout, as in the thesis.
Timings are wall-clock on this machine (shared; see notes), not the thesis's E8400.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache
from typing import Any

import numpy as np

from ..lookup import BloomierFilter, GeometricFilter
from ..lookup import params as P
from ..lookup.data import NgramTable, load_table, zipf_table
from . import figures as F
from .evidence import agreement
from .registry import Comparison, ExperimentResult, Measure, Rate, experiment

V = 16
EO = 2.0**-16
P_EX = 32.0 / 33.0  # p of Section 3.5.2 (0.9697)
N_THESIS = 400_000_000
C_RANGE = 1 << 31

# Table 4.1 / 4.3 of the thesis (|S| = 4e8, V = 16, e_o = 2^-16, p = 0.9697, E = 21)
T41 = {  # k: (r, N, e_o actual x1e-5, overflows)
    1: (0.2822, 70, 0.712, 1006),
    2: (0.4738, 36, 0.758, 1070),
    3: (0.6039, 26, 0.703, 1004),
    4: (0.6946, 20, 0.866, 930),
    5: (0.7598, 17, 0.840, 988),
    6: (0.8081, 15, 0.927, 914),
}
T43_NK = {1: 55, 2: 72, 3: 78, 4: 80, 5: 85, 6: 90}
UNIFORM_R = {1: 0.286, 2: 0.479, 3: 0.610, 4: 0.700, 5: 0.765, 6: 0.813}


@lru_cache(maxsize=4)
def _table(quick: bool, n_absent: int) -> tuple[NgramTable, str]:
    """The trigram table (a 4 MB prefix in quick mode) with absent trigrams."""
    # num_keys only sizes the Zipf fallback (the GCIDE prefix has fewer keys in quick mode)
    return load_table(500_000 if quick else None, max_bytes=4_000_000 if quick else None,
                      num_absent=n_absent, seed=20091)


def load_data(quick: bool) -> tuple[NgramTable, str]:
    return _table(quick, 1_000_000 if quick else 4_000_000)


def head_of(t: NgramTable, n: int) -> tuple[Any, np.ndarray]:
    n = min(n, len(t))
    keys = t.keys.slice(0, n) if hasattr(t.keys, "slice") else t.keys[:n]
    return keys, t.values[:n]


def ns_per_op(seconds: float, n: int) -> float:
    return seconds / n * 1e9


# ------------------------------------------------------------------------------------ Fig 3.1


@experiment("001-fig3.1", title="Load factor p_1(r): Eq. 3.11 vs Algorithm 6 (k = 1)", source="doc 001, Fig. 3.1")
def fig31(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    n = 200_000 if quick else N_THESIS
    rs = np.round(np.linspace(0.1, 2.0, 12 if not quick else 20), 4)
    rows = []
    seed = int(rng.integers(0, 2**31))
    for r in rs:
        eq = P.load_factor_k1(float(r))
        uni = P.load_factor_monte_carlo(float(r), 1, n, seed=seed)
        crand = P.load_factor_monte_carlo(
            float(r), 1, n, generator="c_random", random_range=max(2, int(C_RANGE * n / N_THESIS)), seed=seed
        )
        rows.append({"r": float(r), "eq_3_11": eq, "alg6_uniform": uni, "alg6_c_random": crand, "num_keys": n})
    r0 = 0.2860
    at = {
        "eq": P.load_factor_k1(r0),
        "uni": P.load_factor_monte_carlo(r0, 1, n, seed=seed),
        "c": P.load_factor_monte_carlo(r0, 1, n, generator="c_random", random_range=max(2, int(C_RANGE * n / N_THESIS)), seed=seed),
    }
    def mc(p: float, r: float) -> Measure:  # Algorithm 6 fills r |S| cells: occupancy se <= binomial
        return Measure(p, math.sqrt(max(p * (1 - p), 1e-12) / max(1.0, r * n)))

    close = sum(bool((a := agreement(mc(r["alg6_uniform"], r["r"]), r["eq_3_11"])) and a.agrees) for r in rows)

    def plot(fig: Any) -> None:
        ax = fig.add_subplot(111)
        ax.plot(rs, [r["eq_3_11"] for r in rows], "-", label="model: Eq. 3.11")
        ax.plot(rs, [r["alg6_uniform"] for r in rows], "o", ms=4, label="measured: Algorithm 6, uniform")
        ax.plot(rs, [r["alg6_c_random"] for r in rows], "x", ms=5, label="measured: Algorithm 6, random() mod M")
        F.document(ax, [r0], [0.9697], label="document: p = 0.9697 at r = 0.2860")
        ax.set_xlabel("storage ratio r")
        ax.set_ylabel("load factor p")
        F.legend(ax)

    return ExperimentResult(
        rows=rows,
        comparisons=[
            Comparison("p at r = 0.2860 (uniform)", paper=0.9697, model=at["eq"], measured=mc(at["uni"], r0)),
            Comparison("p at r = 0.2860 (random() mod M)", model=at["eq"], measured=mc(at["c"], r0),
                       note="glibc random() range 2^31 scaled with M; biased, lower p"),
            Comparison("r with Algorithm 6 (uniform) within 3 se of Eq. 3.11", paper="all (almost identical)",
                       measured=f"{close}/{len(rows)}"),
        ],
        plot=plot,
        notes=(
            f"|S| = {n} ({'quick; the thesis uses 4e8' if quick else 'as in the thesis'}). The "
            "random() mod M generator is emulated with a range of 2^31 |S| / 4e8 so that the bias "
            "pattern (fraction of cells hit 6 vs 5 times per 2^31 draws) is the thesis's."
        ),
    )


# ------------------------------------------------------------------------------------ Fig 3.2


@experiment("001-fig3.2", title="Space per key vs load factor (V = 16, e_o = 2^-16), with and without ceiling",
            source="doc 001, Fig. 3.2, Eqs. 3.20-3.22, Lemmas 3.5.1-3.5.2")
def fig32(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    ps = np.linspace(0.80, 0.995, 400)
    rows = [
        {"p": float(p), "bits_per_key_ceil": P.geometric_space_per_key(float(p), V, EO, ceil=True),
         "bits_per_key_smooth": P.geometric_space_per_key(float(p), V, EO, ceil=False)}
        for p in ps
    ]
    p_hat, e, p = P.choose_error_bits(V, EO)
    n = 100_000 if quick else 3_700_000
    t, note = load_data(quick)
    keys, vals = head_of(t, n)
    gf = GeometricFilter.build(keys, vals, value_bits=V, fpr=EO)

    load1 = float(gf.table_load_factors()[0])
    cells1 = int(gf.table_sizes[0])

    def plot(fig: Any) -> None:
        ax = fig.add_subplot(111)
        ax.plot(ps, [r["bits_per_key_ceil"] for r in rows], "-", label="model: with ceiling (Eq. 3.21)")
        ax.plot(ps, [r["bits_per_key_smooth"] for r in rows], "--", label="model: without (Eq. 3.22)")
        ax.axvline(p_hat, color="grey", lw=0.8, label=f"model: Lemma 3.5.1 p = {p_hat:.4f}")
        ax.plot([p], [(V + e) / p], "ro", label=f"model: chosen p = {p:.4f}, E = {e}")
        ax.plot([load1], [gf.bits_per_key()], "bs", label=f"measured: a build of {len(vals)} keys")
        F.document(ax, [0.9606, 0.9697], [(V + 20.6073) / 0.9606, (V + 21) / 0.9697],
                   label="document: p_hat = 0.9606, p = 0.9697 (E = 21)")
        ax.set_xlabel("load factor p")
        ax.set_ylabel("bits per key")
        ax.set_ylim(37, 45)
        F.legend(ax)

    return ExperimentResult(
        rows=rows,
        comparisons=[
            Comparison("p_hat (Lemma 3.5.1)", paper=0.9606, model=p_hat, tolerance=1e-3),
            Comparison("log2(p_hat / ((1 - p_hat) e_o))", paper=20.6073, model=math.log2(p_hat / ((1 - p_hat) * EO)),
                       tolerance=1e-3),
            Comparison("E", paper=21, model=e, measured=gf.error_bits),
            Comparison("p (Lemma 3.5.2)", paper=0.9697, model=p,
                       measured=Measure(load1, math.sqrt(load1 * (1 - load1) / cells1)),
                       note="measured: load of A_1 of a real build (r reduced by the margin)"),
            Comparison("bits per key at the optimum", model=(V + e) / p, measured=Measure(gf.bits_per_key(), 0.0),
                       note=f"measured: GeometricFilter on {len(vals)} trigrams, incl. overflow"),
        ],
        plot=plot,
        notes=f"Curves are the formulas; the measured row builds a filter. Data: {note}.",
    )


# ------------------------------------------------------------------------------------ Fig 3.3


@experiment("001-fig3.3", title="Table sizes M_i of the example (k = 1, r = 0.2860, p = 0.9697, N = 61, |S| = 4e8)",
            source="doc 001, Fig. 3.3, Eqs. 3.14-3.16")
def fig33(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    g = P.geometric_parameters(N_THESIS, V, EO, 1)
    sizes = P.table_sizes(N_THESIS, g.storage_ratio, g.load_factor, g.num_tables)
    n = 300_000 if quick else 3_700_000
    t, note = load_data(quick)
    keys, vals = head_of(t, n)
    n = len(vals)
    gf = GeometricFilter.build(keys, vals, value_bits=V, fpr=EO, storage_ratio=g.storage_ratio)
    tried = gf.trying_set_sizes()
    assert tried is not None  # build() records the trying sets
    d = 1 - g.storage_ratio * g.load_factor
    rows = []
    for i, m in enumerate(sizes):
        row: dict[str, Any] = {"table": i + 1, "M_i_4e8": int(m), "S_i_4e8_model": N_THESIS * d**i}
        if i < gf.num_tables:
            row.update(M_i_ours=int(gf.table_sizes[i]), S_i_ours_model=n * d**i, S_i_ours_measured=int(tried[i]),
                       load_ours=float(gf.table_load_factors()[i]))
        rows.append(row)

    def plot(fig: Any) -> None:
        ax = fig.add_subplot(121)
        ax.bar(np.arange(1, len(sizes) + 1), sizes, label="model: Eqs. 3.14-3.16 at 4e8")
        ax.set_yscale("log")
        ax.set_xlabel("table i")
        ax.set_ylabel("M_i (cells), |S| = 4e8")
        F.document(ax, [61], [sizes[-1]], label="document: N = 61 tables")
        F.legend(ax)
        ax2 = fig.add_subplot(122)
        k = np.arange(1, gf.num_tables + 1)
        ax2.semilogy(k, [n * d ** (i - 1) for i in k], "-", label="model: Eq. 3.14")
        ax2.semilogy(k, np.maximum(tried[:-1], 0.5), "o", ms=3, label="measured: |S_i| of a build")
        ax2.set_xlabel("table i")
        ax2.set_ylabel(f"keys tried, |S| = {n}")
        F.legend(ax2)

    return ExperimentResult(
        rows=rows,
        comparisons=[
            Comparison("N (Eq. 3.16)", paper=61, model=g.num_tables),
            Comparison("M_1", model=int(sizes[0]), note="r |S| = 0.2860 x 4e8"),
            Comparison("sum M_i / |S| (Eq. 3.17 bound 1/p)", model=float(sizes.sum() / N_THESIS),
                       measured=Measure(float(gf.table_sizes.sum() / n), 0.0), note="measured: our build at r = 0.2860"),
            Comparison("|S_5| / |S|", model=d**4, measured=Rate(int(tried[4]), n),
                       note="keys that walk on to table 5"),
        ],
        plot=plot,
        notes=(
            "The thesis's figure prints no numbers; N = 61 is in the text. The right panel runs our "
            f"filter at r = 0.2860 on {n} keys ({note}) and compares the trying sets with Eq. 3.14."
        ),
    )


# ------------------------------------------------------------------------------------ Fig 3.4


@experiment("001-fig3.4", title="space_G / space_B for c = V + log2(1/e_o) from 15 to 40",
            source="doc 001, Fig. 3.4, Section 3.6.3")
def fig34(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    cs = np.arange(15, 41)
    rows: list[dict[str, Any]] = [{"c": int(c), "model_ratio": P.space_ratio_to_bloomier(float(c))} for c in cs]
    n = 50_000 if quick else 1_000_000
    t = zipf_table(n, seed=int(rng.integers(0, 2**31)))
    measured = {}
    for c in (16, 20, 24, 26, 28, 32, 40) if not quick else (16, 24, 26, 32, 40):
        v = min(16, c - 8)
        lg = c - v
        vals = np.minimum(t.values, (1 << v) - 1)
        gf = GeometricFilter.build(t.keys, vals, value_bits=v, fpr=2.0**-lg)
        bf = BloomierFilter.build(t.keys, vals, value_bits=v, fpr=2.0**-lg)
        measured[c] = gf.size_in_bits / bf.size_in_bits
        for r in rows:
            if r["c"] == c:
                r.update(V=v, log2_1_over_eo=lg, measured_ratio=measured[c],
                         gf_bits_per_key=gf.bits_per_key(), bloomier_bits_per_key=bf.bits_per_key())
    cross = next(int(c) for c in cs if P.space_ratio_to_bloomier(float(c)) < 1)

    def plot(fig: Any) -> None:
        ax = fig.add_subplot(111)
        ax.plot(cs, [r["model_ratio"] for r in rows], "-", label="model: Lemma 3.5.1 over 1.23 c")
        ax.plot(list(measured), list(measured.values()), "o", label=f"measured: built filters, |S| = {n}")
        F.document(ax, [26, 15], [1.0, 1.1], label="document: crosses 1 at c = 26; <= 1.1 at c = 15")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xlabel("c = V + log2(1/e_o)")
        ax.set_ylabel("space_G / space_B")
        F.legend(ax)

    return ExperimentResult(
        rows=rows,
        comparisons=[
            Comparison("smallest c with space_G < space_B", paper=26, model=cross,
                       measured=min((c for c, v in measured.items() if v < 1), default=None)),
            Comparison("ratio at c = 15", paper="<= 1.1", model=P.space_ratio_to_bloomier(15.0)),
            Comparison("ratio at c = 32 (V = 16, e_o = 2^-16)", model=P.space_ratio_to_bloomier(32.0),
                       measured=Measure(measured[32], 0.0) if 32 in measured else None),
        ],
        plot=plot,
        notes=(
            "Measured points: integer E from Section 3.5.2 for the Geometric filter, "
            "E = ceil(log2 1/e_o) and M = 1.23 |S| + 32 for our Bloomier filter, on seeded Zipf "
            f"keys (|S| = {n}); sizes include the overflow table. The model has no ceiling, hence "
            "the small steps of the measured ratio."
        ),
    )


# ------------------------------------------------------------------------------------ Table 4.1


@lru_cache(maxsize=2)
def table41_runs(quick: bool, seed: int) -> tuple[list[dict[str, Any]], str, int, int]:
    n = 200_000 if quick else 3_700_000
    t, note = load_data(quick)
    keys, vals = head_of(t, n)
    n = len(vals)
    absent = t.absent
    rows = []
    mc_cells_u = 1 << 21 if quick else 120_000_000
    mc_cells_c = 4_000_000 if quick else N_THESIS
    c_range = C_RANGE // (N_THESIS // mc_cells_c)
    for k in range(1, 7):
        r_paper, n_paper, e_paper, ovf_paper = T41[k]
        p_hat, e, p = P.choose_error_bits(V, EO)
        r_uni = P.storage_ratio_k1(p) if k == 1 else P.storage_ratio_monte_carlo(p, k, mc_cells_u, seed=seed)
        r_c = P.storage_ratio_monte_carlo(p, k, mc_cells_c, generator="c_random", random_range=c_range, seed=seed)
        gf = GeometricFilter.build(keys, vals, value_bits=V, fpr=EO, num_hashes=k, seed=seed)
        got, pos_probes = gf.get_many(keys, return_probes=True)
        assert (got == vals).all()
        t0 = time.perf_counter()
        fp = int((gf.get_many(absent) != 0).sum())
        t_neg = time.perf_counter() - t0
        en = gf.location_fpr()
        occupied_probes = pos_probes - n
        ovf_model = 2 * en * occupied_probes
        ovf_model_4e8 = ovf_model * N_THESIS / n
        rows.append({
            "k": k, "p": p, "E": e,
            "r_paper": r_paper, "r_uniform_mc": r_uni, "r_c_random_mc": r_c, "r_ours": gf.storage_ratio,
            "N_paper": n_paper, "N_eq3_16_paper_r_4e8": P.num_tables_for(N_THESIS, r_paper, p),
            "N_ours": gf.num_tables, "NxK_paper": T43_NK[k], "NxK_ours": gf.num_tables * k,
            "fpr_allowed": EO, "fpr_paper": e_paper * 1e-5, "fpr_measured": fp / len(absent),
            "fp_count": fp, "absent_probes": len(absent),
            "fpr_predicted_loads": gf.predicted_fpr(), "fpr_bound_lemma_3_4_2": gf.fpr_bound(),
            "overflow_paper_4e8": ovf_paper, "overflow_ours": gf.overflow_size,
            "exhausted_ours": int(gf.build_stats()["exhausted"]),
            "overflow_model_ours": ovf_model, "overflow_model_4e8": ovf_model_4e8,
            "probes_per_key_positive": pos_probes / n, "neg_query_ns_per_key": ns_per_op(t_neg, len(absent)),
            "num_keys": n, "bits_per_key": gf.bits_per_key(),
        })
    return rows, note, n, len(absent)


@experiment("001-table4.1", title="Per k: p, E, r, N, allowed vs measured e_o, overflow count",
            source="doc 001, Table 4.1, Sections 4.2-4.3")
def table41(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    rows, note, n, na = table41_runs(quick, 7)
    comps = []
    for r in rows:
        k = r["k"]
        comps.append(Comparison(f"r (k={k})", paper=r["r_paper"], measured=Measure(r["r_c_random_mc"], 0.0), tolerance=0.002,
                                note=f"measured: Monte Carlo of Algorithms 6/7 with the thesis's generator random() mod "
                                     f"4e8; a uniform hash gives {r['r_uniform_mc']:.4f} (our filter's r, less its margin)"))
    for r in rows:
        k = r["k"]
        comps.append(Comparison(f"e_o actual (k={k})", paper=Rate.reported(r["fpr_paper"], N_THESIS),
                                model=r["fpr_predicted_loads"], measured=Rate(r["fp_count"], na),
                                note=f"the thesis probed 4e8 absent keys; model: from our table loads; Lemma 3.4.2 "
                                     f"bound {r['fpr_bound_lemma_3_4_2']:.3g}"))
    for r in rows:
        k = r["k"]
        collisions = (r["overflow_ours"] - r["exhausted_ours"]) // 2
        comps.append(Comparison(f"encoding collisions per key (k={k})",
                                paper=Rate.reported(r["overflow_paper_4e8"] / 2 / N_THESIS, N_THESIS),
                                model=r["overflow_model_ours"] / 2 / n, measured=Rate(collisions, n),
                                note=f"each collision puts two keys into the overflow table: ours {r['overflow_ours']} "
                                     f"entries of {n} keys ({r['exhausted_ours']} exhausted), the thesis "
                                     f"{r['overflow_paper_4e8']} of 4e8; model 2 e_n x occupied probes"))
    for r in rows:
        comps.append(Comparison(f"N (k={r['k']})", paper=r["N_paper"], model=r["N_ours"],
                                differs=(f"scale: |S| = {n:,} here, 4e8 in the thesis, and N grows with log |S| "
                                         f"(Eq. 3.16); at the thesis's r and 4e8 Eq. 3.16 gives "
                                         f"{r['N_eq3_16_paper_r_4e8']}, and the thesis's sequences are longer still "
                                         "(ERRATA.md, 001)"),
                                note="model: Eq. 3.16 at our |S| and r (our filter's N)"))

    def plot(fig: Any) -> None:
        ax = fig.add_subplot(121)
        ks = [r["k"] for r in rows]
        F.document(ax, ks, [r["r_paper"] for r in rows], label="document: Table 4.1")
        ax.plot(ks, [r["r_uniform_mc"] for r in rows], "-", label="model: uniform hash (Eq. 3.23, Alg. 7)")
        ax.plot(ks, [r["r_c_random_mc"] for r in rows], "x", ms=7, label="measured: Alg. 6/7 with random() mod M")
        ax.set_xlabel("k")
        ax.set_ylabel("storage ratio r")
        F.legend(ax)
        ax2 = fig.add_subplot(122)
        F.document(ax2, ks, [r["fpr_paper"] * 1e5 for r in rows], label="document: Table 4.1")
        err = [3e5 * math.sqrt(max(r["fp_count"], 1)) / na for r in rows]
        ax2.errorbar(ks, [r["fpr_measured"] * 1e5 for r in rows], yerr=err, fmt="o", capsize=2,
                     label=f"measured: {na:,} absent keys (3 sd)")
        ax2.plot(ks, [r["fpr_predicted_loads"] * 1e5 for r in rows], "-", label="model: from the table loads")
        ax2.axhline(EO * 1e5, color="grey", lw=0.8, label="allowed e_o")
        ax2.set_xlabel("k")
        ax2.set_ylabel("e_o (x 1e-5)")
        F.legend(ax2)

    return ExperimentResult(
        rows=rows, comparisons=comps, plot=plot,
        notes=(
            f"|S| = {n}, {na} absent trigrams ({note}); the thesis uses 4e8 and 4e8. Our r is the "
            "uniform value reduced by the default margin clip(4/sqrt(|S|), 0.001, 0.05); N follows Eq. 3.16 "
            "(the thesis's N are longer than Eq. 3.16, ERRATA). The random() mod M Monte Carlo "
            "reproduces the thesis's r to the 3rd decimal, so its r values are those of glibc "
            "random() mod 4e8, not of a uniform hash. Overflow counts are encoded false positives "
            "(two keys per fingerprint collision met while encoding) plus exhausted keys."
        ),
    )


# ------------------------------------------------------------------------------------ Figs 4.1/4.2


@lru_cache(maxsize=2)
def _seq_runs(quick: bool, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    n = 500_000 if quick else 20_000_000
    t = zipf_table(n, seed=seed)
    p = P_EX
    configs: list[tuple[str, float | None, int]] = [("eq3.23 r=0.2860", P.storage_ratio_k1(p), s) for s in range(4)]
    configs += [("thesis r=0.2822", 0.2822, 0), ("default (margin)", None, 0)]
    rows = []
    summary: dict[str, Any] = {}
    for label, r, s in configs:
        kw: dict[str, Any] = {"storage_ratio": r} if r is not None else {}
        gf = GeometricFilter.build(t.keys, t.values, value_bits=V, fpr=EO, seed=s, **kw)
        loads = gf.table_load_factors()
        tried = gf.trying_set_sizes()
        assert tried is not None  # build() records the trying sets
        st = gf.build_stats()
        key = f"{label} seed {s}"
        summary[key] = {"exhausted": int(st["exhausted"]), "overflow": gf.overflow_size, "N": gf.num_tables,
                        "r": gf.storage_ratio, "last_load": float(loads[-1]), "fpr_model": gf.predicted_fpr(),
                        "last_cells": int(gf.table_sizes[-1]),
                        "last_occupied": int(round(float(loads[-1]) * int(gf.table_sizes[-1])))}
        for i, ld in enumerate(loads):
            rows.append({"config": label, "seed": s, "r": gf.storage_ratio, "table": i + 1, "load_factor": float(ld),
                         "keys_tried": int(tried[i]), "M_i": int(gf.table_sizes[i]), "num_keys": n})
    # uniform simulation of the same sequence (Algorithm 6 over all tables) at r = 0.2860
    r = P.storage_ratio_k1(p)
    sizes = P.table_sizes(n, r, p, P.num_tables_for(n, r, p))
    for s in range(4):
        occ = P.simulate_table_loads(sizes, 1, n, seed=1000 + s)
        summary[f"uniform simulation r=0.2860 seed {s}"] = {"exhausted": int(n - occ.sum()), "last_load": float(occ[-1] / sizes[-1])}
        for i, o in enumerate(occ):
            rows.append({"config": "uniform simulation r=0.2860", "seed": s, "r": r, "table": i + 1,
                         "load_factor": float(o / sizes[i]), "M_i": int(sizes[i]), "num_keys": n})
    return rows, summary, n


def _plot_loads(rows: list[dict[str, Any]], configs: list[str], doc: tuple[list[float], list[float], str] | None = None) -> Any:
    def plot(fig: Any) -> None:
        ax = fig.add_subplot(111)
        for cfg in configs:
            kind = "model: uniform simulation (Alg. 6)" if cfg.startswith("uniform") else "measured: build"
            for s in sorted({r["seed"] for r in rows if r["config"] == cfg}):
                sub = [r for r in rows if r["config"] == cfg and r["seed"] == s]
                ax.plot([r["table"] for r in sub], [r["load_factor"] for r in sub], ".-", lw=0.8,
                        label=f"{kind}, {cfg.replace('uniform simulation ', '')} (seed {s})")
        if doc is not None:
            F.document(ax, *doc[:2], label=f"document: {doc[2]}")
        ax.set_xlabel("hash table i")
        ax.set_ylabel("load factor")
        ax.set_ylim(-0.05, 1.05)
        F.legend(ax, outside=True, ncol=2)

    return plot


@experiment("001-fig4.1", title="Over-filling of the last tables at r = 0.2860 (k = 1, p = 0.9697)",
            source="doc 001, Fig. 4.1, Sections 3.3.3 and 4.2")
def fig41(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    rows, summ, n = _seq_runs(quick, 3)
    sub = [r for r in rows if r["config"] in ("eq3.23 r=0.2860", "uniform simulation r=0.2860")]
    over = [k for k, v in summ.items() if k.startswith("eq3.23") and v["exhausted"] > 0]
    sim_over = [k for k, v in summ.items() if k.startswith("uniform") and v["exhausted"] > 0]
    ovf = {k.split()[-1]: v["overflow"] for k, v in summ.items() if k.startswith("eq3.23")}
    return ExperimentResult(
        rows=sub,
        comparisons=[
            Comparison("runs whose tail over-fills at r = 0.2860", paper="all (1 run, random() hash)", model="knife edge",
                       measured=f"{len(over)} of 4 seeds (real hash); {len(sim_over)} of 4 uniform simulations"),
            Comparison("overflow entries per key at r = 0.2860 (mean over 4 seeds)",
                       paper=Rate.reported(41260 / N_THESIS, N_THESIS),
                       measured=Rate.pooled(list(ovf.values()), [n] * len(ovf)),
                       differs=(f"generator and scale: the thesis's one run of 4e8 keys used random() mod 4e8, which "
                                f"over-fills systematically (it reproduces Table 4.1's r, 001-table4.1); with a real "
                                f"hash r = 0.2860 is a knife edge (per seed, of {n:,} keys: {ovf}; the uniform "
                                f"simulation over-fills in {len(sim_over)} of 4)"),
                       note="overflow = keys that found no cell (exhausted) + two keys per encoding collision"),
        ],
        plot=_plot_loads(sub, ["eq3.23 r=0.2860", "uniform simulation r=0.2860"]),
        notes=(
            f"|S| = {n} seeded Zipf keys (thesis: 4e8 Web 1T trigrams; the caption's 40e8 is a typo "
            "for 4e8). With a uniform hash the exact r of Eq. 3.23 sits on a knife edge: the "
            "relative surplus of keys handed down the sequence grows by p/d = 1.34 per table, so "
            "the fluctuation of the first tables decides between over-filling (Fig. 4.1) and "
            "starvation (Fig. 4.2). The thesis's systematic over-filling comes from its non-uniform "
            "generator (see 001-table4.1). An earlier version of our probe mapping (multiply-shift "
            "of the raw double-hashing value) over-filled systematically for a different reason: "
            "linear correlation of a key's positions across tables. The thesis's figure prints no "
            "load values."
        ),
    )


@experiment("001-fig4.2", title="Starvation of the last tables at r = 0.2822 and with our default margin",
            source="doc 001, Fig. 4.2, Section 4.2")
def fig42(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    rows, summ, n = _seq_runs(quick, 3)
    cfgs = ["thesis r=0.2822", "default (margin)"]
    sub = [r for r in rows if r["config"] in cfgs]
    t22 = summ["thesis r=0.2822 seed 0"]
    dflt = summ["default (margin) seed 0"]
    collisions = (t22["overflow"] - t22["exhausted"]) // 2
    return ExperimentResult(
        rows=sub,
        comparisons=[
            Comparison("load of the last table, r = 0.2822", paper=0.0,
                       measured=Rate(t22["last_occupied"], t22["last_cells"])),
            Comparison("exhausted keys, r = 0.2822", measured=t22["exhausted"]),
            Comparison("encoding collisions per key, r = 0.2822", paper=Rate.reported(1006 / 2 / N_THESIS, N_THESIS),
                       measured=Rate(collisions, n),
                       note=f"{t22['overflow']} overflow entries of {n:,} keys (two per collision); the thesis "
                            "1006 of 4e8 (Table 4.1, k = 1)"),
            Comparison("load of the last table, default r", measured=Rate(dflt["last_occupied"], dflt["last_cells"]),
                       note=f"r = {dflt['r']:.4f}"),
            Comparison("e_o with the starved tail", paper=Rate.reported(0.712e-5, N_THESIS), model=t22["fpr_model"],
                       differs=(f"scale and generator: our model is computed from the table loads of our build "
                                f"({n:,} keys, N = {t22['N']}, a real hash), the thesis's e_o measured on its build "
                                "(4e8 keys, N = 70, random() mod 4e8)"),
                       note=f"model: from our table loads; Lemma 3.4.2 bound {P.false_positive_bound(P_EX, 21):.3g}; "
                            "the thesis's e_o measured with 4e8 absent keys (Table 4.1, k = 1)"),
        ],
        plot=_plot_loads(sub, cfgs),
        notes=(
            f"|S| = {n} seeded Zipf keys. Starvation is harmless: the tail tables are tiny, and the "
            "empty cells stop absent-key walks early, which lowers e_o (Section 4.2). The thesis's "
            "figure prints no load values."
        ),
    )
