"""Reproductions of document 001's timing experiments (Zhao 2009, the Geometric filter): Figs.
4.3-4.4 and Tables 4.2-4.3, on the data of :mod:`bloomkit.experiments.lookup` (which holds the
other figures and tables of the document, and the data they share). Timings are wall-clock on
this machine (shared; see notes), not the thesis's E8400.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache
from typing import Any

import numpy as np

from ..lookup import BloomierFilter, GeometricFilter
from ..lookup import params as P
from ..lookup.data import NgramTable, zipf_table
from . import figures as F
from .lookup import EO, N_THESIS, P_EX, V, head_of, load_data, ns_per_op, table41_runs
from .registry import Comparison, ExperimentResult, Measure, Timing, experiment

T42 = {  # k: seconds for 1st scan, 2nd scan, test, not-test at |S| = 4e8
    1: (1026, 1267, 1149, 1802),
    2: (1049, 1233, 1142, 1722),
    3: (975, 1195, 1084, 1738),
    4: (1018, 1207, 1106, 1784),
    5: (989, 1197, 1105, 1797),
    6: (993, 1206, 1105, 1873),
}


# ------------------------------------------------------------------------------------ Figs 4.3/4.4, Tables 4.2/4.3


def _warm_up(t: NgramTable) -> None:
    """Compile (or load from the cache) every kernel a timed build or query uses, outside the
    timings: builds of every k with the full second scan, one with a 5-bit fingerprint
    (invalidated cells, the targeted rescan, overflow entries), batch queries on several threads
    (a batch big enough to split)."""
    keys, vals = head_of(t, 70_000)
    for k in range(1, 7):
        GeometricFilter.build(keys, vals, value_bits=V, fpr=EO, num_hashes=k, rescan="full").get_many(keys)
    g = GeometricFilter.build(keys, vals % 255 + 1, value_bits=8, error_bits=5, fpr=2.0**-5)
    g.get_many(keys, return_probes=True)
    g.get_many(t.absent)
    BloomierFilter.build(keys, vals, value_bits=V, fpr=EO).get_many(keys)


@lru_cache(maxsize=2)
def _timing_runs(quick: bool, seed: int) -> tuple[list[dict[str, Any]], str]:
    t, note = load_data(quick)
    sizes_real = [100_000, 200_000, 400_000] if quick else [500_000, 1_000_000, 2_000_000, len(t)]
    sizes_zipf = [] if quick else [5_000_000, 10_000_000, 20_000_000, 50_000_000]
    ks = range(1, 7)
    rows: list[dict[str, Any]] = []

    def run(data: str, keys: Any, vals: np.ndarray, absent: Any, kset: Any) -> None:
        n = len(vals)
        na = min(len(absent), n)
        absent = absent.slice(0, na) if hasattr(absent, "slice") else absent[:na]
        for k in kset:
            P.geometric_parameters(n, V, EO, k)  # parameter setting (Algorithm 7 for k > 1, cached): not timed
            t0 = time.perf_counter()
            # the thesis's second scan (Algorithm 3, lines 24-29) queries every key: rescan="full"
            gf = GeometricFilter.build(keys, vals, value_bits=V, fpr=EO, num_hashes=k, seed=seed, rescan="full")
            enc = time.perf_counter() - t0
            st = gf.build_stats()
            t0 = time.perf_counter()
            got, pos_probes = gf.get_many(keys, return_probes=True)
            tpos = time.perf_counter() - t0
            ok = bool((got == vals).all())
            t0 = time.perf_counter()
            got, neg_probes = gf.get_many(absent, return_probes=True)
            tneg = time.perf_counter() - t0
            fp = int((got != 0).sum())
            rows.append({"data": data, "structure": "geometric", "k": k, "num_keys": n, "N": gf.num_tables, "r": gf.storage_ratio,
                         "encode_s": enc, "scan1_s": st["scan1_seconds"], "scan2_s": st["scan2_seconds"],
                         "pos_query_s": tpos, "neg_query_s": tneg, "absent_probes": na,
                         "encode_ns_per_key": ns_per_op(enc, n), "pos_ns_per_key": ns_per_op(tpos, n), "neg_ns_per_key": ns_per_op(tneg, na),
                         "bits_per_key": gf.bits_per_key(), "fpr_measured": fp / na, "fpr_predicted": gf.predicted_fpr(),
                         "probes_pos": pos_probes / n, "probes_neg": neg_probes / na, "all_exact": ok})
        t0 = time.perf_counter()
        bf = BloomierFilter.build(keys, vals, value_bits=V, fpr=EO, seed=seed)
        enc = time.perf_counter() - t0
        t0 = time.perf_counter()
        got = bf.get_many(keys)
        tpos = time.perf_counter() - t0
        ok = bool((got == vals).all())
        t0 = time.perf_counter()
        got = bf.get_many(absent)
        tneg = time.perf_counter() - t0
        fp = int((got != 0).sum())
        rows.append({"data": data, "structure": "bloomier", "k": 3, "num_keys": n, "N": 1, "r": bf.num_cells / n, "encode_s": enc,
                     "pos_query_s": tpos, "neg_query_s": tneg, "absent_probes": na,
                     "encode_ns_per_key": ns_per_op(enc, n), "pos_ns_per_key": ns_per_op(tpos, n), "neg_ns_per_key": ns_per_op(tneg, na),
                     "bits_per_key": bf.bits_per_key(), "fpr_measured": fp / na, "fpr_predicted": bf.predicted_fpr(),
                     "all_exact": ok})

    _warm_up(t)
    for n in sizes_real:
        keys, vals = head_of(t, n)
        run("trigrams", keys, vals, t.absent, ks)
    for n in sizes_zipf:
        z = zipf_table(n, seed=seed, num_absent=min(n, 5_000_000))
        run("zipf", z.keys, z.values, z.absent, (1, 3, 6))
        del z
    return rows, note


def _avg_geo(rows: list[dict[str, Any]], data: str, n: int, field: str) -> float:
    vals = [r[field] for r in rows if r["data"] == data and r["num_keys"] == n and r["structure"] == "geometric"]
    return float(np.mean(vals))


def _bl(rows: list[dict[str, Any]], data: str, n: int, field: str) -> float:
    return float(next(r[field] for r in rows if r["data"] == data and r["num_keys"] == n and r["structure"] == "bloomier"))


def _timing_notes(quick: bool, note: str) -> str:
    return (
        f"Data: {note}{'' if quick else '; Zipf tables of 5e6-5e7 keys (k = 1, 3, 6)'}. Quick mode "
        "uses 1e5-4e5 trigrams (thesis: 0.5e7-5e7 and 4e8). Times are wall clock on this "
        "machine (ours: a 2-core VM shared with other jobs, so absolute values can be inflated "
        "and noisy); compare ratios within one run. Every kernel is compiled before the first "
        "timing (a warm-up of every k), and the parameter setting (Algorithm 7's Monte Carlo for "
        "k > 1, cached) is done before each timed build. Encode = hashing + both scans; queries "
        "are batch get_many calls (hashing included)."
    )


@experiment("001-fig4.3", title="Encoding time and space: Geometric (mean over k = 1..6) vs Bloomier",
            source="doc 001, Fig. 4.3, Section 4.4")
def fig43(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    rows, note = _timing_runs(quick, 11)
    sizes = sorted({r["num_keys"] for r in rows if r["data"] == "trigrams"})
    big = sizes[-1]
    ratio_enc = _bl(rows, "trigrams", big, "encode_s") / _avg_geo(rows, "trigrams", big, "encode_s")
    comps = [
        Comparison(f"Bloomier / Geometric encode time (|S| = {big})", paper="about 2", measured=Timing(ratio_enc)),
        Comparison(f"space_G / space_B (|S| = {big})", model=P.space_ratio_to_bloomier(32.0),
                   measured=Measure(_avg_geo(rows, "trigrams", big, "bits_per_key") / _bl(rows, "trigrams", big, "bits_per_key"), 0.0)),
        Comparison("Geometric encode ns/key (mean k)",
                   paper=f"{1e9 * np.mean([T42[k][0] + T42[k][1] for k in T42]) / N_THESIS:.0f} (E8400, 2009, 4e8 keys)",
                   measured=f"{_avg_geo(rows, 'trigrams', big, 'encode_ns_per_key'):.0f} (this machine, {big:,} keys)",
                   note="absolute times of two machines are shown, not judged"),
    ]
    for data in sorted({r["data"] for r in rows} - {"trigrams"}):
        zs = sorted({r["num_keys"] for r in rows if r["data"] == data})
        comps.append(Comparison(f"Bloomier / Geometric encode time ({data}, |S| = {zs[-1]})", paper="about 2",
                                measured=Timing(_bl(rows, data, zs[-1], "encode_s") / _avg_geo(rows, data, zs[-1], "encode_s"))))

    def plot(fig: Any) -> None:
        ax = fig.add_subplot(121)
        ax2 = fig.add_subplot(122)
        for data in sorted({r["data"] for r in rows}):
            ns = sorted({r["num_keys"] for r in rows if r["data"] == data})
            ax.plot(ns, [_avg_geo(rows, data, n, "encode_s") for n in ns], "o-", label=f"measured: Geometric ({data})")
            ax.plot(ns, [_bl(rows, data, n, "encode_s") for n in ns], "s--", label=f"measured: Bloomier ({data})")
            ax2.plot(ns, [_avg_geo(rows, data, n, "bits_per_key") * n / 8e6 for n in ns], "o-", label=f"measured: Geometric ({data})")
            ax2.plot(ns, [_bl(rows, data, n, "bits_per_key") * n / 8e6 for n in ns], "s--", label=f"measured: Bloomier ({data})")
        F.no_document_values(ax, "document: E8400 times, not comparable")
        ax.set_xlabel("|S|")
        ax.set_ylabel("encode time (s)")
        ax2.set_xlabel("|S|")
        ax2.set_ylabel("space (MB)")
        F.figure_legend(fig)

    return ExperimentResult(rows=rows, comparisons=comps, plot=plot, notes=_timing_notes(quick, note))


@experiment("001-fig4.4", title="Positive and negative query time: Geometric (mean over k) vs Bloomier",
            source="doc 001, Fig. 4.4, Sections 3.6.2 and 5.1")
def fig44(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    rows, note = _timing_runs(quick, 11)
    big = max(r["num_keys"] for r in rows if r["data"] == "trigrams")
    gpos = _avg_geo(rows, "trigrams", big, "pos_ns_per_key")
    gneg = _avg_geo(rows, "trigrams", big, "neg_ns_per_key")
    bpos = _bl(rows, "trigrams", big, "pos_ns_per_key")
    bneg = _bl(rows, "trigrams", big, "neg_ns_per_key")
    k1 = next(r for r in rows if r["data"] == "trigrams" and r["num_keys"] == big and r["k"] == 1 and r["structure"] == "geometric")
    comps = [
        Comparison("Geometric / Bloomier negative query time", paper="about 2 (Section 5.1)", measured=Timing(gneg / bneg)),
        Comparison("Geometric / Bloomier positive query time", paper="close (Fig. 4.4)", measured=Timing(gpos / bpos),
                   note="'close' has no direction to judge"),
        Comparison("probes per positive query, k = 1 (Eq. 3.25)", paper=3.6058,
                   model=P.encode_cost(1, k1["r"], P_EX), measured=Measure(k1["probes_pos"], k1["probes_pos"] / math.sqrt(big)),
                   note="model: k/(r p) at our r; se <= mean / sqrt(|S|)"),
        Comparison("probes per negative query, k = 1", paper="<= 27.95 (Eq. 3.26 bound, N = 61)",
                   model=f"<= {P.unmatched_query_bound(1, P_EX, k1['N']):.4g} (Eq. 3.26 bound, N = {k1['N']})",
                   measured=Measure(k1["probes_neg"], k1["probes_neg"] / math.sqrt(k1["absent_probes"])),
                   note="Eq. 3.26 is an upper bound, not a point value"),
    ]

    def plot(fig: Any) -> None:
        ax = fig.add_subplot(111)
        for data in sorted({r["data"] for r in rows}):
            ns = sorted({r["num_keys"] for r in rows if r["data"] == data})
            ax.plot(ns, [_avg_geo(rows, data, n, "pos_ns_per_key") for n in ns], "o-", label=f"measured: Geometric test ({data})")
            ax.plot(ns, [_avg_geo(rows, data, n, "neg_ns_per_key") for n in ns], "o:", label=f"measured: Geometric not-test ({data})")
            ax.plot(ns, [_bl(rows, data, n, "pos_ns_per_key") for n in ns], "s--", label=f"measured: Bloomier test ({data})")
            ax.plot(ns, [_bl(rows, data, n, "neg_ns_per_key") for n in ns], "s-.", label=f"measured: Bloomier not-test ({data})")
        F.no_document_values(ax, "document: E8400 times, not comparable")
        ax.set_xlabel("|S|")
        ax.set_ylabel("ns per query")
        F.legend(ax, outside=True, ncol=2)

    return ExperimentResult(rows=rows, comparisons=comps, plot=plot, notes=_timing_notes(quick, note))


@experiment("001-table4.2", title="Geometric filter running time per k: 1st scan, 2nd scan, test, not-test",
            source="doc 001, Table 4.2")
def table42(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    rows, note = _timing_runs(quick, 11)
    big = max(r["num_keys"] for r in rows if r["data"] == "trigrams")
    out = []
    comps = []
    for k in range(1, 7):
        r = next(x for x in rows if x["data"] == "trigrams" and x["num_keys"] == big and x["k"] == k and x["structure"] == "geometric")
        pk = T42[k]
        row = {"k": k, "num_keys": big,
               "scan1_ns_per_key": ns_per_op(r["scan1_s"], big), "scan2_ns_per_key": ns_per_op(r["scan2_s"], big),
               "test_ns_per_key": r["pos_ns_per_key"], "not_test_ns_per_key": r["neg_ns_per_key"],
               "paper_scan1_ns_per_key": ns_per_op(pk[0], N_THESIS), "paper_scan2_ns_per_key": ns_per_op(pk[1], N_THESIS),
               "paper_test_ns_per_key": ns_per_op(pk[2], N_THESIS), "paper_not_test_ns_per_key": ns_per_op(pk[3], N_THESIS)}
        out.append(row)
        comps.append(Comparison(f"not-test / test (k={k})", paper=pk[3] / pk[2],
                                measured=Timing(row["not_test_ns_per_key"] / row["test_ns_per_key"])))
    comps.append(Comparison(
        "2nd scan / 1st scan (mean k)", paper=float(np.mean([T42[k][1] / T42[k][0] for k in T42])),
        measured=Timing(float(np.mean([r["scan2_ns_per_key"] / r["scan1_ns_per_key"] for r in out]))),
        differs=("implementation: both scans walk the same probes, but our second scan (every key queried, as "
                 "Algorithm 3 lines 24-29) is the batched query kernel that walks 8,192 keys together with "
                 "prefetching (the pipelining of Section 5.3), while our first scan writes the cells it reads and "
                 "goes key by key; the thesis times two plain loops"),
        note="per k: " + ", ".join(f"{r['scan2_ns_per_key'] / r['scan1_ns_per_key']:.2f}" for r in out)))

    def plot(fig: Any) -> None:
        ax = fig.add_subplot(121)
        ks = [r["k"] for r in out]
        for f, lab in (("scan1", "1st scan"), ("scan2", "2nd scan"), ("test", "test"), ("not_test", "not-test")):
            ax.plot(ks, [r[f"{f}_ns_per_key"] for r in out], "o-", label=f"measured: {lab}")
        ax.set_xlabel("k")
        ax.set_ylabel("ns per key (this machine)")
        ax.set_yscale("log")
        F.legend(ax, outside=True, ncol=2)
        ax2 = fig.add_subplot(122)
        ax2.plot(ks, [r["not_test_ns_per_key"] / r["test_ns_per_key"] for r in out], "o-", label="measured: not-test / test")
        ax2.plot(ks, [r["scan2_ns_per_key"] / r["scan1_ns_per_key"] for r in out], "s-", label="measured: 2nd / 1st scan")
        F.document(ax2, ks, [T42[k][3] / T42[k][2] for k in ks], label="document: not-test / test")
        ax2.plot(ks, [T42[k][1] / T42[k][0] for k in ks], marker="P", color="black", ls="none", ms=9,
                 label="document: 2nd / 1st scan")
        ax2.axhline(1.0, color="grey", lw=0.8)
        ax2.set_xlabel("k")
        ax2.set_ylabel("ratio of times within one run")
        F.legend(ax2, outside=True)

    return ExperimentResult(rows=out, comparisons=comps, plot=plot, notes=_timing_notes(quick, note)
                            + " Thesis times are per key at |S| = 4e8 (seconds / 4e8, in the CSV); only ratios of"
                            " one run are compared. Our builds here use the thesis's full second scan"
                            " (rescan='full': every key queried, Algorithm 3 lines 24-29), not the default"
                            " targeted rescan, which gives the same overflow table walking only the owners"
                            " of invalidated cells.")


@experiment("001-table4.3", title="Tradeoff between N and k", source="doc 001, Table 4.3, Section 4.5")
def table43(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    rows41, note, n, na = table41_runs(quick, 7)
    out = []
    comps = []
    for r in rows41:
        k = r["k"]
        out.append({"k": k, "N_paper": r["N_paper"], "N_ours": r["N_ours"], "p": r["p"],
                    "e_paper": r["fpr_paper"], "e_ours": r["fpr_measured"], "e_model": r["fpr_predicted_loads"],
                    "NxK_paper": r["NxK_paper"], "NxK_ours": r["NxK_ours"], "probes_per_positive_query": r["probes_per_key_positive"],
                    "neg_query_ns_per_key": r["neg_query_ns_per_key"]})
        comps.append(Comparison(f"N x k (k={k})", paper=r["NxK_paper"], model=r["NxK_ours"],
                                differs=(f"scale: |S| = {n:,} here, 4e8 in the thesis (N grows with log |S|, Eq. "
                                         f"3.16: {r['N_eq3_16_paper_r_4e8'] * k} at the thesis's r and 4e8)"
                                         + ("; the thesis prints 55 with N = 70 (ERRATA.md, 001)" if k == 1 else "")),
                                note="model: our N (Eq. 3.16 at our |S|) times k"))
    trend = all(a["N_ours"] > b["N_ours"] and a["NxK_ours"] <= b["NxK_ours"] for a, b in zip(out, out[1:], strict=False))
    comps.insert(0, Comparison("N falls and N x k grows as k grows (the tradeoff)", paper="yes",
                               model="yes" if trend else "no", note="read from Eq. 3.16 at our |S|, k = 1..6"))

    def plot(fig: Any) -> None:
        ax = fig.add_subplot(111)
        ks = [r["k"] for r in out]
        F.document(ax, ks, [r["N_paper"] for r in out], label="document: N (4e8 keys)")
        ax.plot(ks, [r["NxK_paper"] for r in out], marker="P", color="black", ls="none", ms=9,
                label="document: N x k (4e8 keys)")
        ax.plot(ks, [r["N_ours"] for r in out], "o-", label=f"model: N, Eq. 3.16 at {n:,} keys")
        ax.plot(ks, [r["NxK_ours"] for r in out], "s--", label=f"model: N x k at {n:,} keys")
        ax.set_xlabel("k")
        F.legend(ax)

    return ExperimentResult(
        rows=out, comparisons=comps, plot=plot,
        notes=f"Same runs as 001-table4.1: |S| = {n}, {na} absent trigrams ({note}). Our N is Eq. 3.16 at our |S|.",
    )
