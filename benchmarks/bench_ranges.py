"""Benchmarks of bloomkit.ranges (document 000).

1. Optimizer time: two-phase optimizer (Figures 6-7) on Table 1 and on random 10-attribute
   sets (unit steps and accelerated), the Figure 5 single-range search, and the reference grid
   search, side by side.
2. Insert / query throughput of RangeBloomFilter on Table 1 records, and the peer way of
   putting a range into a plain Bloom filter (rbloom: one key per value) for comparison.
3. ProfileIndex search: N = 1,000,000 profiles of 512 bits (Table 1 configuration), a
   10-attribute query; target <= 20 ms. Baselines: the same AND without early exit (numpy),
   and a row-major scan testing every profile filter (numpy).

    python benchmarks/bench_ranges.py            # N = 1,000,000
    python benchmarks/bench_ranges.py --quick    # N = 200,000, fewer repeats
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from bloomkit._bench import markdown_table, measure, versions, write_results
from bloomkit.experiments.ranges import TABLE1  # doc 000, Table 1
from bloomkit.experiments.ranges import _random_set as random_set
from bloomkit.ranges import (
    Decimal,
    Integer,
    ProfileIndex,
    RangeBloomFilter,
    RangeConfig,
    Schema,
    Text,
    optimize_multi,
    optimize_multi_grid,
    optimize_single,
)
from bloomkit.ranges import _kernels as K
from bloomkit.ranges.index import _unpack_ids

SCHEMA = Schema([Text(n) for n, *_ in TABLE1[:5]] + [
    Integer("Age", 1, 120), Integer("Year", 1900, 2100), Integer("Income", 0, 5000),
    Decimal("Longitude", -180, 180, 4), Decimal("Latitude", -90, 90, 4),
])


def random_record(rng: np.random.Generator) -> dict[str, Any]:
    age = int(rng.integers(1, 112))
    year = int(rng.integers(1900, 2082))
    inc = int(rng.integers(0, 4501))
    lon = int(rng.integers(-1_800_000, 1_799_901))
    lat = int(rng.integers(-900_000, 899_901))
    rec: dict[str, Any] = {n: f"{n[:3]}{int(rng.integers(0, 500))}" for n, *_ in TABLE1[:5]}
    rec.update({"Age": (age, age + 9), "Year": (year, year + 19), "Income": (inc, inc + 499),
                "Longitude": (lon / 1e4, (lon + 99) / 1e4), "Latitude": (lat / 1e4, (lat + 99) / 1e4)})
    return rec


def query_for(rec: dict[str, Any]) -> dict[str, Any]:
    """A 10-attribute query that the profile ``rec`` satisfies (points inside its ranges)."""
    q = {n: rec[n] for n, *_ in TABLE1[:5]}
    q.update({"Age": rec["Age"][0] + 3, "Year": rec["Year"][0] + 5, "Income": (rec["Income"][0] + 10, rec["Income"][0] + 20),
              "Longitude": rec["Longitude"][0] + 0.0005, "Latitude": rec["Latitude"][0] + 0.0007})
    return q


def bench_optimizers(repeats: int) -> list[dict[str, Any]]:
    rows = []
    rng = np.random.default_rng(1)
    sets = [random_set(rng) for _ in range(5)]
    optimize_multi(TABLE1, 512)  # JIT warm-up
    cases = {
        "two-phase, Table 1 (unit steps)": lambda: optimize_multi(TABLE1, 512),
        "two-phase, Table 1 (accelerated)": lambda: optimize_multi(TABLE1, 512, accelerate=True),
        "two-phase + per-attribute k, Table 1": lambda: optimize_multi(TABLE1, 512, per_attribute_k=True),
        "two-phase, 5 random sets (unit steps)": lambda: [optimize_multi(s, 512) for s in sets],
        "two-phase, 5 random sets (accelerated)": lambda: [optimize_multi(s, 512, accelerate=True) for s in sets],
        "reference grid search, Table 1": lambda: optimize_multi_grid(TABLE1, 512),
        "Figure 5 single range, 4 schemes, n = 700": lambda: [optimize_single(10_000, 700, 512, s) for s in
                                                              ("traditional", "grouping", "overlapping", "grouping-overlapping")],
    }
    base = None
    for name, fn in cases.items():
        t = measure(fn, warmup=1, repeats=repeats)
        per = t["median"] / (5 if "5 random" in name else 1)
        base = base or per
        rows.append({"benchmark": "optimizer", "case": name, "median_ms": 1e3 * t["median"], "min_ms": 1e3 * t["min"],
                     "per_set_ms": 1e3 * per, "ratio_to_table1_unit": per / base})
    return rows


def bench_filter(repeats: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(2)
    res = optimize_multi(TABLE1, 512)
    cfg = RangeConfig.from_result(res)
    recs = [random_record(rng) for _ in range(200)]
    rows = []

    def insert_all() -> None:
        for r in recs:
            RangeBloomFilter(SCHEMA, 512, cfg).insert(r)

    t = measure(insert_all, repeats=repeats)
    rows.append({"benchmark": "filter", "case": "insert Table 1 record (new filter each)", "us_per_op": 1e6 * t["median"] / len(recs)})
    bf = RangeBloomFilter(SCHEMA, 512, cfg)
    bf.insert(recs[0])
    q = query_for(recs[0])
    for name, fn in {
        "might_contain Age (point)": lambda: bf.might_contain("Age", q["Age"]),
        "might_cover Income (11 values)": lambda: bf.might_cover("Income", *q["Income"]),
        "might_intersect Income (500 values)": lambda: bf.might_intersect("Income", 0, 499),
        "matches 10-attribute query": lambda: bf.matches(q),
    }.items():
        tt = measure(lambda fn=fn: [fn() for _ in range(200)], repeats=repeats)
        rows.append({"benchmark": "filter", "case": name, "us_per_op": 1e6 * tt["median"] / 200})
    # peer: a plain Bloom filter holding one key per value of the Income range (500 keys)
    try:
        import rbloom

        def peer_insert() -> None:
            for r in recs:
                f = rbloom.Bloom(500, 0.01)  # sized for the 500 keys: ~4.8 kbit
                lo, hi = r["Income"]
                f.update(f"Income:{v}" for v in range(lo, hi + 1))

        def ours_insert() -> None:
            for r in recs:
                RangeBloomFilter(SCHEMA, 512, cfg).insert({"Income": r["Income"]})

        tp = measure(peer_insert, repeats=repeats)
        to = measure(ours_insert, repeats=repeats)
        rows.append({"benchmark": "filter", "case": "insert Income range of 500: rbloom, one key per value (~4.8 kbit)",
                     "us_per_op": 1e6 * tp["median"] / len(recs)})
        rows.append({"benchmark": "filter", "case": "insert Income range of 500: ours, (d, s) = (5, 1) in 512 bit",
                     "us_per_op": 1e6 * to["median"] / len(recs), "ratio_peer_over_ours": tp["median"] / to["median"]})
    except ImportError:
        pass
    return rows


def bench_index(n_profiles: int, repeats: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(3)
    res = optimize_multi(TABLE1, 512)
    cfg = RangeConfig.from_result(res)
    n_real = min(20_000, n_profiles)
    t0 = time.perf_counter()
    recs = [random_record(rng) for _ in range(n_real)]
    real = np.empty((n_real, 8), dtype=np.uint64)
    for i, r in enumerate(recs):
        bf = RangeBloomFilter(SCHEMA, 512, cfg)
        bf.insert(r)
        real[i] = bf.bits.words
    t_build = time.perf_counter() - t0
    # profile i < n_real is real; the rest are copies of random real profiles (same fill structure)
    pick = np.concatenate([np.arange(n_real), rng.integers(0, n_real, n_profiles - n_real)])
    words = real[pick]
    idx = ProfileIndex(SCHEMA, 512, cfg, capacity=n_profiles)
    t0 = time.perf_counter()
    idx.add_filters(words)
    t_add = time.perf_counter() - t0
    fill = float(np.mean([bin(int(w)).count("1") for w in real[:2000].ravel()])) / 64
    queries = [query_for(recs[int(i)]) for i in rng.integers(0, n_real, 20)]
    qrows = [idx.query_rows(q) for q in queries]
    idx.search(queries[0])  # warm-up / JIT

    def run_all() -> None:
        for q in queries:
            idx.search(q)

    t = measure(run_all, warmup=1, repeats=repeats)
    per_query = t["median"] / len(queries)
    tk = measure(lambda: [K.sliced_and_blocks(idx._slices, r, idx._active, 8) for r in qrows], repeats=repeats)
    hits = [idx.search(q).size for q in queries[:5]]
    # baselines on the same data
    sl = idx._slices

    def numpy_and() -> None:
        for r in qrows[:5]:
            np.bitwise_and.reduce(sl[r], axis=0)

    tn = measure(numpy_and, warmup=1, repeats=max(1, repeats // 2))
    # "callees aged 20-29 within this square" (1000 x 1000 values at 4 places, as in the report)
    iq = [{"Age": (20, 29), "Longitude": (lo / 1e4, (lo + 999) / 1e4), "Latitude": (la / 1e4, (la + 999) / 1e4)}
          for lo, la in zip(rng.integers(-1_800_000, 1_799_000, 5), rng.integers(-900_000, 899_000, 5), strict=True)]
    idx.search(iq[0], mode="intersect")
    ti = measure(lambda: [idx.search(q, mode="intersect") for q in iq], warmup=1, repeats=max(1, repeats // 2))
    qwords = []
    for q in queries[:5]:
        qf = idx._proto.query_filter(q)
        qwords.append(qf.bits.words)

    def row_major() -> None:
        for qw in qwords:
            np.flatnonzero(np.all((words & qw) == qw, axis=1))

    tr = measure(row_major, warmup=1, repeats=max(1, repeats // 2))
    # correctness of the baseline equals the index answer
    assert np.array_equal(np.flatnonzero(np.all((words & qwords[0]) == qwords[0], axis=1)), idx.search(queries[0]))
    assert np.array_equal(_unpack_ids(np.bitwise_and.reduce(sl[qrows[0]], axis=0) & idx._active), idx.search(queries[0]))
    return [
        {"benchmark": "index", "case": f"build {n_real} real profile filters (Python insert)", "seconds": t_build},
        {"benchmark": "index", "case": f"add_filters N={n_profiles} (bit-slice transpose)", "seconds": t_add},
        {"benchmark": "index", "case": f"search 10-attribute query, N={n_profiles}, m=512 (incl. BF(query))",
         "ms_per_query": 1e3 * per_query, "query_bits_mean": float(np.mean([r.size for r in qrows])),
         "profile_fill": fill, "hits_first5": str(hits), "target_ms": 20.0},
        {"benchmark": "index", "case": "kernel only (AND with early exit)", "ms_per_query": 1e3 * tk["median"] / len(qrows)},
        {"benchmark": "index", "case": "search mode='intersect': Age 20-29, 1000-value Longitude and Latitude ranges",
         "ms_per_query": 1e3 * ti["median"] / len(iq)},
        {"benchmark": "index", "case": "numpy AND of all query rows (no early exit)", "ms_per_query": 1e3 * tn["median"] / 5,
         "ratio_to_index": (tn["median"] / 5) / per_query},
        {"benchmark": "index", "case": "numpy row-major scan of every profile filter", "ms_per_query": 1e3 * tr["median"] / 5,
         "ratio_to_index": (tr["median"] / 5) / per_query},
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 200_000 if args.quick else 1_000_000
    reps = 3 if args.quick else 7
    rows = bench_optimizers(reps) + bench_filter(reps) + bench_index(n, reps)
    meta = {"quick": args.quick, "profiles": n, "versions": versions(["numpy", "numba", "rbloom"])}
    write_results("bench_ranges", rows, meta)
    print(markdown_table(rows))


if __name__ == "__main__":
    main()
