"""Foundation experiment: measured vs predicted false positive rate of BloomFilter."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from ..bloom import BloomFilter
from ..theory import false_positive_rate, fpr_sd, wilson_interval
from . import figures as F
from .registry import Comparison, ExperimentResult, Rate, experiment


@experiment(
    "base-fpr-grid",
    title="BloomFilter: measured vs predicted false positive rate over (n/m, k)",
    source="doc 000, Eqs. (1)-(2)",
)
def fpr_grid(quick: bool, rng: np.random.Generator) -> ExperimentResult:
    m = 1 << (16 if quick else 20)
    probes = 100_000 if quick else 1_000_000
    loads = (0.05, 0.1, 0.2)
    ks = range(1, 11)
    rows: list[dict[str, Any]] = []
    comparisons = []
    for load in loads:
        n = int(load * m)
        keys = rng.choice(2**62, size=n + probes, replace=False).astype(np.int64)
        inserted, absent = keys[:n], keys[n:]
        for k in ks:
            bf = BloomFilter(num_bits=m, num_hashes=k, seed=int(rng.integers(2**63)))
            bf.add_many(inserted)
            fn = int((~bf.contains_many(inserted)).sum())
            fp = int(bf.contains_many(absent).sum())
            pred = bf.predicted_fpr(num_keys=n)
            lo, hi = wilson_interval(fp, probes)
            sd = fpr_sd(n, m, k, probes)
            fill = bf.fill_ratio()
            pval = float(stats.binomtest(fp, probes, fill**k).pvalue) if 0 < fill < 1 else 1.0
            rows.append({
                "n_over_m": load, "k": k, "n": n, "m": m, "probes": probes,
                "predicted_fpr": pred,
                "predicted_fpr_approx": float(false_positive_rate(n, m, k, exact=False)),
                "measured_fpr": fp / probes, "false_positives": fp, "ci3_low": lo, "ci3_high": hi,
                "model_sd": sd, "z": (fp / probes - pred) / sd,
                "fill_ratio": fill, "conditional_fpr": fill**k,
                "conditional_pvalue": pval, "false_negatives": fn,
            })
        best = min((r for r in rows if r["n_over_m"] == load), key=lambda r: r["predicted_fpr"])
        comparisons.append(Comparison(
            quantity=f"FPR at n/m={load}, optimal k={best['k']}", model=best["predicted_fpr"],
            measured=Rate(best["false_positives"], probes, se=best["model_sd"]),
            note="one filter: binomial sd combined with the filter-to-filter spread of the fill ratio",
        ))
    inside = sum(abs(r["z"]) <= 3 for r in rows)
    comparisons.append(Comparison(
        quantity="grid points with |measured - model| <= 3 sd", model="all",
        measured=f"{inside}/{len(rows)}",
        note="sd = binomial sd of the probes combined with the spread of the fill ratio between filters",
    ))
    comparisons.append(Comparison(quantity="false negatives", paper=0, model=0,
                                  measured=sum(r["false_negatives"] for r in rows)))

    def plot(fig: Any) -> None:
        ax = fig.add_subplot(1, 1, 1)
        for load in loads:
            sub = [r for r in rows if r["n_over_m"] == load]
            kk = [r["k"] for r in sub]
            line = ax.plot(kk, [r["predicted_fpr"] for r in sub], "-", label=f"model: Eq. 2, n/m = {load}")[0]
            ax.errorbar(kk, [r["measured_fpr"] for r in sub],
                        yerr=[[r["measured_fpr"] - r["ci3_low"] for r in sub],
                              [r["ci3_high"] - r["measured_fpr"] for r in sub]],
                        fmt="o", ms=3, capsize=2, color=line.get_color(), label=f"measured: n/m = {load} (3 sd)")
        F.no_document_values(ax, "document: the formula only (no measured values)")
        ax.set_yscale("log")
        ax.set_xlabel("k (hash functions)")
        ax.set_ylabel("false positive rate")
        F.legend(ax, outside=True, ncol=2)

    return ExperimentResult(
        rows=rows, comparisons=comparisons, plot=plot,
        notes=(f"m = {m} bits, {probes} absent keys probed per point; prediction is Eq. (2) with the "
               "exact p = (1 - 1/m)^(nk) of Eq. (1). The measured rate of one filter varies with "
               "that filter's fill ratio (FPR = fill^k given the filter), so the sd combines the "
               "binomial sd with that spread; conditional_pvalue tests measured vs fill^k alone."),
    )
