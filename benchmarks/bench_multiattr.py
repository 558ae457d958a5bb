"""Benchmark of bloomkit.multiattr (document 004).

1. Batch add / query of N three-attribute items (default 10^6; target >= 2M items/s) for the
   ParallelBloomFilter (p = 3, q = 7; columns of int64, and the same items as a pandas
   DataFrame read by column name), the SBF (bloomkit.BloomFilter over the concatenated
   attributes), a counting SBF and rbloom (a peer, over the same concatenated bytes) sized to
   the PBF's measured false positive rate; memory per item of each.
2. Measured FPR of the two-step check vs an SBF of equal memory over a range of loads.

Usage: ``python benchmarks/bench_multiattr.py [--items N] [--repeats R]``.
Results: benchmarks/results/bench_multiattr.{json,md}.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from bloomkit import BloomFilter, CountingBloomFilter
from bloomkit._bench import markdown_table, measure, versions, write_results
from bloomkit.multiattr import ParallelBloomFilter, concat_keys


def _cols(rng: np.random.Generator, n: int, p: int = 3) -> list[np.ndarray]:
    return [rng.integers(0, 2**62, n) for _ in range(p)]


def _recombined(cols: list[np.ndarray], rng: np.random.Generator, size: int) -> list[np.ndarray]:
    n = len(cols[0])
    idx = rng.integers(0, n, (len(cols), size))
    ok = (idx[0] != idx[1]) & (idx[0] != idx[2]) & (idx[1] != idx[2])
    return [c[idx[i, ok]] for i, c in enumerate(cols)]


def throughput(n: int, repeats: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    p, q = 3, 7
    m = 1 << max(10, int(np.ceil(np.log2(n / 2))))  # load n/m ~ 1..2 per array
    items = _cols(rng, n, p)
    fresh = _cols(rng, n, p)
    rec = _recombined(items, rng, n)
    rows: list[dict[str, Any]] = []

    holder: dict[str, Any] = {}

    def new_pbf() -> None:
        holder["f"] = ParallelBloomFilter(p, q, m, counter_bits=4)

    t_add = measure(lambda: holder["f"].add_many(items), setup=new_pbf, repeats=repeats)
    f = holder["f"]
    t_q = measure(lambda: f.contains_many(items), repeats=repeats)
    t_qf = measure(lambda: f.contains_many(fresh), repeats=repeats)
    fpr_fresh = float(f.contains_many(fresh).mean())
    fpr_rec = float(f.contains_many(rec).mean())
    fpr = max(fpr_fresh, fpr_rec, 1.0 / n)
    rows.append({
        "structure": f"PBF p={p} q={q} m={m} (4-bit)", "items": n,
        "add_Mitems_s": n / t_add["median"] / 1e6, "query_Mitems_s": n / t_q["median"] / 1e6,
        "query_absent_Mitems_s": n / t_qf["median"] / 1e6,
        "fpr_fresh": fpr_fresh, "fpr_recombined": fpr_rec,
        "bytes_per_item": f.size_in_bits / 8 / n,
        "counter_bytes_per_item": p * q * m * f.counter_bits / 8 / n,
        "table_bytes_per_item": f.info()["table_bits"] / 8 / n,
        "overflowed": f.overflowed,
    })
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        pd = None
    if pd is not None:  # the same items as a DataFrame, read by column name (reordered columns)
        names = ["a", "b", "c"]
        df = pd.DataFrame({"c": items[2], "a": items[0], "b": items[1]})
        df_fresh = pd.DataFrame({"c": fresh[2], "a": fresh[0], "b": fresh[1]})

        def new_named() -> None:
            holder["g"] = ParallelBloomFilter(p, q, m, counter_bits=4, attributes=names)

        t_add_df = measure(lambda: holder["g"].add_many(df), setup=new_named, repeats=repeats)
        g = holder["g"]
        assert np.array_equal(g.contains_many(df_fresh), f.contains_many(fresh))  # same filter
        t_q_df = measure(lambda: g.contains_many(df), repeats=repeats)
        t_qf_df = measure(lambda: g.contains_many(df_fresh), repeats=repeats)
        rows.append({**rows[0], "structure": "PBF, pandas DataFrame by column name",
                     "add_Mitems_s": n / t_add_df["median"] / 1e6, "query_Mitems_s": n / t_q_df["median"] / 1e6,
                     "query_absent_Mitems_s": n / t_qf_df["median"] / 1e6})

    keys_items = concat_keys(items, p)
    keys_fresh = concat_keys(fresh, p)
    keys_rec = concat_keys(rec, p)
    t_cat = measure(lambda: concat_keys(items, p), repeats=repeats)

    def sbf_row(name: str, make: Any) -> None:
        h: dict[str, Any] = {}
        t_a = measure(lambda: h["s"].add_many(keys_items), setup=lambda: h.update(s=make()), repeats=repeats)
        s = h["s"]
        t_qq = measure(lambda: s.contains_many(keys_items), repeats=repeats)
        t_qa = measure(lambda: s.contains_many(keys_fresh), repeats=repeats)
        nbytes = s.counters.data.nbytes if isinstance(s, CountingBloomFilter) else s.bits.words.nbytes
        rows.append({
            "structure": name, "items": n,
            "add_Mitems_s": n / (t_a["median"] + t_cat["median"]) / 1e6,
            "query_Mitems_s": n / (t_qq["median"] + t_cat["median"]) / 1e6,
            "query_absent_Mitems_s": n / (t_qa["median"] + t_cat["median"]) / 1e6,
            "fpr_fresh": float(s.contains_many(keys_fresh).mean()),
            "fpr_recombined": float(s.contains_many(keys_rec).mean()),
            "bytes_per_item": nbytes / n, "counter_bytes_per_item": None, "table_bytes_per_item": None,
            "overflowed": bool(getattr(s, "overflowed", False)),
        })

    sbf_row(f"SBF (BloomFilter, fpr={fpr:.2g})", lambda: BloomFilter(capacity=n, fpr=fpr))
    sbf_row(f"counting SBF (4-bit, fpr={fpr:.2g})", lambda: CountingBloomFilter(capacity=n, fpr=fpr, counter_bits=4))
    try:
        import rbloom
    except ImportError:  # pragma: no cover
        rbloom = None
    if rbloom is not None:
        py_items = keys_items.to_pylist()
        py_fresh = keys_fresh.to_pylist()
        h: dict[str, Any] = {}
        t_a = measure(lambda: h["b"].update(py_items), setup=lambda: h.update(b=rbloom.Bloom(n, fpr)), repeats=repeats)
        b = h["b"]
        t_qq = measure(lambda: [k in b for k in py_items], repeats=repeats)
        rows.append({
            "structure": f"rbloom {versions(['rbloom'])['rbloom']} (fpr={fpr:.2g}, Python bytes keys)", "items": n,
            "add_Mitems_s": n / t_a["median"] / 1e6, "query_Mitems_s": n / t_qq["median"] / 1e6,
            "query_absent_Mitems_s": None,
            "fpr_fresh": float(np.mean([k in b for k in py_fresh])), "fpr_recombined": None,
            "bytes_per_item": b.size_in_bits / 8 / n, "counter_bytes_per_item": None,
            "table_bytes_per_item": None, "overflowed": False,
        })
    base = rows[0]
    for r in rows:
        r["pbf_add_speed_over_this"] = base["add_Mitems_s"] / r["add_Mitems_s"]
        r["pbf_query_speed_over_this"] = base["query_Mitems_s"] / r["query_Mitems_s"]
        r["memory_ratio_vs_pbf"] = r["bytes_per_item"] / base["bytes_per_item"]
    return rows


def loads(rng: np.random.Generator, probes: int) -> list[dict[str, Any]]:
    """Measured FPR of the two-step check vs an SBF of the same total memory, over loads."""
    p, q, m = 3, 7, 1 << 14
    rows = []
    for load in (0.25, 0.5, 1.0, 2.0, 4.0):
        n = int(load * m)
        items = _cols(rng, n, p)
        f = ParallelBloomFilter(p, q, m, counter_bits=4)
        f.add_many(items)
        fresh = _cols(rng, probes, p)
        rec = _recombined(items, rng, probes)
        bits = f.size_in_bits
        k = int(min(64, max(1, round(bits / n * np.log(2)))))
        s = BloomFilter(num_bits=bits, num_hashes=k)
        s.add_many(concat_keys(items, p))
        rows.append({
            "load_n_over_m": load, "n": n, "pbf_bytes": bits // 8, "sbf_bits": bits, "sbf_k": k,
            "pbf_fpr_fresh": float(f.contains_many(fresh).mean()),
            "pbf_fpr_recombined": float(f.contains_many(rec).mean()),
            "pbf_model_fresh": f.predicted_fpr(), "pbf_model_recombined": f.predicted_fpr(query="recombined"),
            "sbf_fpr_fresh": float(s.contains_many(concat_keys(fresh, p)).mean()),
            "sbf_fpr_recombined": float(s.contains_many(concat_keys(rec, p)).mean()),
            "sbf_model": s.predicted_fpr(n), "probes_fresh": probes, "probes_recombined": len(rec[0]),
            "pbf_overflowed": f.overflowed,
        })
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--probes", type=int, default=1_000_000)
    args = ap.parse_args()
    rng = np.random.default_rng(20261122)
    t0 = time.perf_counter()
    rows = throughput(args.items, args.repeats, rng)
    print(markdown_table(rows))
    lrows = loads(rng, args.probes)
    print(markdown_table(lrows))
    write_results("bench_multiattr", rows + [{"section": "loads", **r} for r in lrows], {
        "items": args.items, "repeats": args.repeats, "probes": args.probes,
        "versions": versions(["numpy", "numba", "rbloom", "bloomkit"]),
        "seconds": time.perf_counter() - t0,
    })


if __name__ == "__main__":
    main()
