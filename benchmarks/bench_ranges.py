"""Benchmarks of bloomkit.ranges (document 000).

1. Optimizer time: two-phase optimizer (Figures 6-7) on Table 1 and on random 10-attribute
   sets (unit steps and accelerated), the Figure 5 single-range search, and the reference grid
   search, side by side.
2. Insert / query throughput of RangeBloomFilter on Table 1 records, and the peer way of
   putting a range into a plain Bloom filter (rbloom: one key per value) for comparison.
3. Bulk input: ``ProfileIndex.add_many`` (a DataFrame with ``Age.lo`` / ``Age.hi`` columns, and
   a list of records) against a loop of ``add``; ``RangeBloomFilter.insert_many`` against a loop
   of ``insert`` (Table 1 profiles).
4. The index of the matching service (issue 16): N = 1,000,000 Table 1 profiles with their
   records: ``add_many`` time, 4-attribute search with ``verify=True`` (p50 / p99 over many
   queries; target p99 <= 20 ms), 10-attribute and intersect searches, save / load time and
   file size, memory.
5. ``add_filters`` of 20,000 real filters replicated to N, and a numpy row-major scan of every
   profile filter as the baseline of the search.
6. The peer of the matching search (issue 28): SQLite's R*Tree (the standard library's
   ``sqlite3``, an ``rtree_i32`` virtual table holding the same profiles' five numeric ranges,
   scaled to integers) against ``ProfileIndex.search(verify=True)`` on the same 4-attribute
   queries (a point and three small ranges), at N = 10^5 and 10^6: time per query (median of
   the repeats; both give exact answers, compared id for id), and memory (the index's arrays:
   bit slices, records, interval index; SQLite's database pages). The bit-sliced scan (the
   interval index off) and the unverified search are timed beside them.

    python benchmarks/bench_ranges.py            # N = 1,000,000, add loop over 100,000
    python benchmarks/bench_ranges.py --quick    # N = 200,000, add loop over 20,000
    python benchmarks/bench_ranges.py --only rtree --rtree-sizes 100000,1000000

Timings are wall-clock (``time.perf_counter``); on a shared machine they are noisy, so the
bulk rows also give the CPU time of the process (``time.process_time``).
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import tempfile
import time
from typing import Any

import numpy as np
import pandas as pd

import bloomkit
from bloomkit._bench import markdown_table, measure, versions, write_results
from bloomkit.experiments.ranges import TABLE1, random_attribute_set  # doc 000, Tables 1 and 4
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
from bloomkit.ranges import index as ranges_index

TEXTS = [n for n, *_ in TABLE1[:5]]
SCHEMA = Schema([Text(n) for n in TEXTS] + [
    Integer("Age", 1, 120), Integer("Year", 1900, 2100), Integer("Income", 0, 5000),
    Decimal("Longitude", -180, 180, 4), Decimal("Latitude", -90, 90, 4),
])


def table1_frame(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """n random profiles of Table 1's attributes as a DataFrame: a text column per text
    attribute, two columns ``<name>.lo`` / ``<name>.hi`` per range (Table 1's range sizes:
    Age 10, Year 20, Income 500, Longitude and Latitude 100 at four places)."""
    cols: dict[str, Any] = {t: np.char.add(t[:3], rng.integers(0, 500, n).astype(str)) for t in TEXTS}
    age, year, inc = rng.integers(1, 112, n), rng.integers(1900, 2082, n), rng.integers(0, 4501, n)
    lon, lat = rng.integers(-1_800_000, 1_799_901, n), rng.integers(-900_000, 899_901, n)
    for name, lo, width, scale in (("Age", age, 9, 1), ("Year", year, 19, 1), ("Income", inc, 499, 1),
                                   ("Longitude", lon, 99, 1e4), ("Latitude", lat, 99, 1e4)):
        cols[f"{name}.lo"] = lo / scale if scale != 1 else lo
        cols[f"{name}.hi"] = (lo + width) / scale if scale != 1 else lo + width
    return pd.DataFrame(cols)


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The profiles of a :func:`table1_frame` as records (ranges as (lo, hi) tuples)."""
    cols = {c: df[c].tolist() for c in df.columns}
    out = []
    for i in range(len(df)):
        rec: dict[str, Any] = {t: cols[t][i] for t in TEXTS}
        for name in ("Age", "Year", "Income", "Longitude", "Latitude"):
            rec[name] = (cols[f"{name}.lo"][i], cols[f"{name}.hi"][i])
        out.append(rec)
    return out


def random_record(rng: np.random.Generator) -> dict[str, Any]:
    return records(table1_frame(rng, 1))[0]


def query_for(rec: dict[str, Any]) -> dict[str, Any]:
    """A 10-attribute query that the profile ``rec`` satisfies (points inside its ranges)."""
    q = {n: rec[n] for n in TEXTS}
    q.update({"Age": rec["Age"][0] + 3, "Year": rec["Year"][0] + 5, "Income": (rec["Income"][0] + 10, rec["Income"][0] + 20),
              "Longitude": rec["Longitude"][0] + 0.0005, "Latitude": rec["Latitude"][0] + 0.0007})
    return q


def query4_for(rec: dict[str, Any]) -> dict[str, Any]:
    """A 4-attribute query of the matching service (a point and three small ranges) that ``rec`` satisfies."""
    return {"Age": rec["Age"][0] + 4, "Income": (rec["Income"][0] + 100, rec["Income"][0] + 150),
            "Longitude": (rec["Longitude"][0] + 0.001, rec["Longitude"][0] + 0.003),
            "Latitude": (rec["Latitude"][0] + 0.002, rec["Latitude"][0] + 0.004)}


def _timed(fn: Any) -> tuple[Any, float, float]:
    """(result, wall seconds, process CPU seconds) of one call."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def bench_optimizers(repeats: int) -> list[dict[str, Any]]:
    rows = []
    rng = np.random.default_rng(1)
    sets = [random_attribute_set(rng) for _ in range(5)]
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


def bench_bulk(n_loop: int, cfg: RangeConfig) -> list[dict[str, Any]]:
    """add_many / insert_many against a loop of add / insert, on the same profiles."""
    df = table1_frame(np.random.default_rng(4), n_loop)
    recs = records(df)
    warm = ProfileIndex(SCHEMA, 512, cfg, store_records=True)
    warm.add_many(df.iloc[:200])  # JIT warm-up of every kernel
    warm.add_many(recs[:200])
    for r in recs[:50]:
        warm.add(r)
    RangeBloomFilter(SCHEMA, 1 << 20, cfg).insert_many(df.iloc[:200])
    rows = []
    loop_idx = ProfileIndex(SCHEMA, 512, cfg, capacity=n_loop, store_records=True)
    _, t_loop, c_loop = _timed(lambda: [loop_idx.add(r) for r in recs])
    bulk_df = ProfileIndex(SCHEMA, 512, cfg, capacity=n_loop, store_records=True)
    _, t_df, c_df = _timed(lambda: bulk_df.add_many(df))
    bulk_rec = ProfileIndex(SCHEMA, 512, cfg, capacity=n_loop, store_records=True)
    _, t_rec, c_rec = _timed(lambda: bulk_rec.add_many(recs))
    assert bulk_df.search(query4_for(recs[7]), verify=True).tolist() == loop_idx.search(query4_for(recs[7]), verify=True).tolist()
    for case, t, c in ((f"ProfileIndex: loop of add, {n_loop} Table 1 profiles", t_loop, c_loop),
                       (f"ProfileIndex.add_many(DataFrame), {n_loop} profiles", t_df, c_df),
                       (f"ProfileIndex.add_many(list of records), {n_loop} profiles", t_rec, c_rec)):
        rows.append({"benchmark": "bulk", "case": case, "seconds": t, "cpu_seconds": c, "us_per_profile": 1e6 * t / n_loop,
                     "speedup_vs_loop": t_loop / t})
    m = 1 << 24
    loop_bf = RangeBloomFilter(SCHEMA, m, cfg)
    _, t_ins, c_ins = _timed(lambda: [loop_bf.insert(r) for r in recs])
    bulk_bf = RangeBloomFilter(SCHEMA, m, cfg)
    _, t_many, c_many = _timed(lambda: bulk_bf.insert_many(df))
    assert bulk_bf == loop_bf
    for case, t, c in ((f"RangeBloomFilter: loop of insert, {n_loop} records, m = 2^24", t_ins, c_ins),
                       (f"RangeBloomFilter.insert_many(DataFrame), {n_loop} records", t_many, c_many)):
        rows.append({"benchmark": "bulk", "case": case, "seconds": t, "cpu_seconds": c, "us_per_profile": 1e6 * t / n_loop,
                     "speedup_vs_loop": t_ins / t})
    return rows


def bench_service(n_profiles: int, cfg: RangeConfig, n_queries: int) -> list[dict[str, Any]]:
    """The in-memory index of the matching service: N profiles with records."""
    rng = np.random.default_rng(3)
    df = table1_frame(rng, n_profiles)
    rss0 = _rss_mb()
    idx = ProfileIndex(SCHEMA, 512, cfg, capacity=n_profiles, store_records=True)
    _, t_add, c_add = _timed(lambda: idx.add_many(df))
    rss1 = _rss_mb()
    info = idx.info()
    picks = rng.integers(0, n_profiles, n_queries)
    sample = records(df.iloc[np.sort(picks)])
    rng.shuffle(sample)  # type: ignore[arg-type]
    q4 = [query4_for(r) for r in sample]
    q10 = [query_for(r) for r in sample[:50]]
    idx.search(q4[0], verify=True)  # warm-up
    lat, cpu, hits = [], [], []
    for q in q4:
        t0, c0 = time.perf_counter(), time.thread_time()
        ids = idx.search(q, verify=True)
        lat.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
        hits.append(ids.size)
    lat_ms, cpu_ms = 1e3 * np.array(lat), 1e3 * np.array(cpu)
    unverified = [idx.search(q).size for q in q4[:50]]
    t10 = measure(lambda: [idx.search(q) for q in q10], repeats=3)
    iq = [{"Age": (20, 29), "Longitude": (lo / 1e4, (lo + 999) / 1e4), "Latitude": (la / 1e4, (la + 999) / 1e4)}
          for lo, la in zip(rng.integers(-1_800_000, 1_799_000, 5), rng.integers(-900_000, 899_000, 5), strict=True)]
    ti = measure(lambda: [idx.search(q, mode="intersect") for q in iq], repeats=3)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "index.bkf")
        _, t_save, _ = _timed(lambda: idx.save(path))
        size = os.path.getsize(path)
        back, t_load, c_load = _timed(lambda: bloomkit.load(path))
    assert back.search(q4[0], verify=True).tolist() == idx.search(q4[0], verify=True).tolist()
    return [
        {"benchmark": "service", "case": f"add_many(DataFrame), N={n_profiles} Table 1 profiles with records",
         "seconds": t_add, "cpu_seconds": c_add, "profiles_per_s": n_profiles / t_add},
        {"benchmark": "service", "case": f"search 4 attributes, verify=True, {len(q4)} queries (p50 / p99 / max)",
         "ms_p50": float(np.percentile(lat_ms, 50)), "ms_p99": float(np.percentile(lat_ms, 99)),
         "ms_max": float(lat_ms.max()), "cpu_ms_p50": float(np.percentile(cpu_ms, 50)),
         "cpu_ms_p99": float(np.percentile(cpu_ms, 99)), "target_ms_p99": 20.0, "hits_mean": float(np.mean(hits)),
         "candidates_mean_without_verify": float(np.mean(unverified))},
        {"benchmark": "service", "case": "search 10 attributes (no verify)", "ms_per_query": 1e3 * t10["median"] / len(q10)},
        {"benchmark": "service", "case": "search mode='intersect': Age 20-29, 1000-value Longitude and Latitude ranges",
         "ms_per_query": 1e3 * ti["median"] / len(iq)},
        {"benchmark": "service", "case": "save (durable) / load", "seconds_save": t_save, "seconds_load": t_load,
         "cpu_seconds_load": c_load, "file_mb": size / 2**20},
        {"benchmark": "service", "case": "memory: filters / records (arrays), RSS growth while adding",
         "filters_mb": info["nbytes"]["filters"] / 2**20, "records_mb": info["nbytes"]["records"] / 2**20,
         "rss_growth_mb": rss1 - rss0, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
         "predicted_fpr": info["predicted_fpr"], "fill_ratio": info["fill_ratio"]},
    ]


def bench_scan_baseline(n_profiles: int, cfg: RangeConfig, repeats: int) -> list[dict[str, Any]]:
    """add_filters of 20,000 real filters replicated to N, and the row-major numpy scan."""
    rng = np.random.default_rng(5)
    n_real = min(20_000, n_profiles)
    recs = records(table1_frame(rng, n_real))
    real = np.empty((n_real, 8), dtype=np.uint64)
    for i, r in enumerate(recs):
        bf = RangeBloomFilter(SCHEMA, 512, cfg)
        bf.insert(r)
        real[i] = bf.bits.words
    words = real[np.concatenate([np.arange(n_real), rng.integers(0, n_real, n_profiles - n_real)])]
    idx = ProfileIndex(SCHEMA, 512, cfg, capacity=n_profiles)
    _, t_add, _ = _timed(lambda: idx.add_filters(words))
    queries = [query_for(recs[int(i)]) for i in rng.integers(0, n_real, 20)]
    idx.search(queries[0])
    t = measure(lambda: [idx.search(q) for q in queries], repeats=repeats)
    per_query = t["median"] / len(queries)
    qwords = [RangeBloomFilter.from_layout(idx.layout).query_filter(q).bits.words for q in queries[:5]]

    def row_major() -> None:
        for qw in qwords:
            np.flatnonzero(np.all((words & qw) == qw, axis=1))

    tr = measure(row_major, repeats=max(1, repeats // 2))
    assert np.array_equal(np.flatnonzero(np.all((words & qwords[0]) == qwords[0], axis=1)), idx.search(queries[0]))
    return [
        {"benchmark": "index", "case": f"add_filters N={n_profiles} (bit-slice transpose)", "seconds": t_add},
        {"benchmark": "index", "case": f"search 10-attribute query, N={n_profiles}, m=512 (incl. BF(query))",
         "ms_per_query": 1e3 * per_query, "target_ms": 20.0},
        {"benchmark": "index", "case": "numpy row-major scan of every profile filter", "ms_per_query": 1e3 * tr["median"] / 5,
         "ratio_to_index": (tr["median"] / 5) / per_query},
    ]


NUMERIC = (("Age", 1), ("Year", 1), ("Income", 1), ("Longitude", 10_000), ("Latitude", 10_000))
RTREE_SQL = ("SELECT id FROM profiles WHERE age_lo <= ? AND age_hi >= ? AND income_lo <= ? AND income_hi >= ? "
             "AND longitude_lo <= ? AND longitude_hi >= ? AND latitude_lo <= ? AND latitude_hi >= ?")


def _scaled(v: float, scale: int) -> int:
    return int(round(v * scale))


def rtree_params(q: dict[str, Any]) -> tuple[int, ...]:
    """The R*Tree query of a :func:`query4_for` query: each scaled query range [a, b] inside the
    profile's [lo, hi] (lo <= a and hi >= b), as the subset search asks."""
    out: list[int] = []
    for name, scale in NUMERIC:
        if name in q:
            v = q[name]
            a, b = (v, v) if not isinstance(v, tuple) else v
            out += [_scaled(a, scale), _scaled(b, scale)]
    return tuple(out)


def _db_bytes(con: sqlite3.Connection) -> int:
    """The pages of an (in-memory) SQLite database."""
    return int(con.execute("PRAGMA page_count").fetchone()[0] * con.execute("PRAGMA page_size").fetchone()[0])


def build_rtree(df: pd.DataFrame) -> sqlite3.Connection:
    """An in-memory SQLite database with an ``rtree_i32`` table of the profiles' numeric ranges
    (id = the profile's row, as the index's ids)."""
    con = sqlite3.connect(":memory:")
    cols = ", ".join(f"{n.lower()}_lo, {n.lower()}_hi" for n, _ in NUMERIC)
    con.execute(f"CREATE VIRTUAL TABLE profiles USING rtree_i32(id, {cols})")
    arrays = [np.arange(len(df), dtype=np.int64)]
    for name, scale in NUMERIC:
        for end in ("lo", "hi"):
            arrays.append(np.round(df[f"{name}.{end}"].to_numpy() * scale).astype(np.int64))
    rows = zip(*(a.tolist() for a in arrays), strict=True)
    with con:
        con.executemany(f"INSERT INTO profiles VALUES ({', '.join('?' * 11)})", rows)
    return con


def bench_rtree(n_profiles: int, cfg: RangeConfig, n_queries: int, repeats: int) -> list[dict[str, Any]]:
    """``ProfileIndex.search(verify=True)`` against SQLite's R*Tree on the same profiles and
    4-attribute queries (issue 28): time per query and memory, as ratios; answers compared."""
    rng = np.random.default_rng(28)
    df = table1_frame(rng, n_profiles)
    rss0 = _rss_mb()
    idx = ProfileIndex(SCHEMA, 512, cfg, capacity=n_profiles, store_records=True)
    _, t_add, _ = _timed(lambda: idx.add_many(df))
    rss1 = _rss_mb()
    con, t_rtree, _ = _timed(lambda: build_rtree(df))
    rss2 = _rss_mb()
    picks = np.sort(rng.integers(0, n_profiles, n_queries))
    queries = [query4_for(r) for r in records(df.iloc[picks])]
    params = [rtree_params(q) for q in queries]

    def ours() -> list[np.ndarray]:
        return [idx.search(q, verify=True) for q in queries]

    def rtree() -> list[list[int]]:
        return [sorted(r for (r,) in con.execute(RTREE_SQL, p)) for p in params]

    def scan() -> list[np.ndarray]:
        keep = ranges_index._INTERVAL_MIN
        ranges_index._INTERVAL_MIN = 1 << 62  # the bit-sliced AND with verification in the kernel
        try:
            return [idx.search(q, verify=True) for q in queries]
        finally:
            ranges_index._INTERVAL_MIN = keep

    got, want, scanned = ours(), rtree(), scan()  # warm-up (the interval index is built here), answers compared
    assert all(g.tolist() == w for g, w in zip(got, want, strict=True)), "ProfileIndex and the R*Tree disagree"
    assert all(np.array_equal(g, s) for g, s in zip(got, scanned, strict=True))
    t_rt = measure(rtree, warmup=0, repeats=repeats)["median"] / n_queries
    t_ours = measure(ours, warmup=0, repeats=repeats)["median"] / n_queries
    t_scan = measure(scan, warmup=0, repeats=max(1, repeats // 2))["median"] / n_queries
    t_nover = measure(lambda: [idx.search(q) for q in queries], warmup=1, repeats=max(1, repeats // 2))["median"] / n_queries
    info = idx.info()["nbytes"]
    iv = idx._intervals
    iv_bytes = 0 if iv is None else iv.nbytes
    ours_bytes = info["filters"] + info["records"] + iv_bytes
    rt_bytes = _db_bytes(con)
    with con:  # the same data as the index's records: the profiles' texts too, in a table beside the R*Tree
        con.execute(f"CREATE TABLE texts (id INTEGER PRIMARY KEY, {', '.join(t.lower() for t in TEXTS)})")
        con.executemany(f"INSERT INTO texts VALUES ({', '.join('?' * (len(TEXTS) + 1))})",
                        zip(range(n_profiles), *(df[t].tolist() for t in TEXTS), strict=True))
    full_bytes = _db_bytes(con)
    hits = float(np.mean([g.size for g in got]))
    case = f"N={n_profiles}, 4-attribute query (point + 3 ranges), {n_queries} queries"
    return [
        {"benchmark": "rtree", "case": f"SQLite R*Tree (rtree_i32, 5 numeric ranges), {case}", "us_per_query": 1e6 * t_rt,
         "ratio_to_rtree": 1.0, "memory_mb": rt_bytes / 2**20, "memory_ratio_to_rtree": 1.0, "build_s": t_rtree,
         "memory_mb_with_texts_table": full_bytes / 2**20,
         "rss_growth_mb": rss2 - rss1, "hits_mean": hits},
        {"benchmark": "rtree", "case": f"ProfileIndex.search(verify=True), {case}", "us_per_query": 1e6 * t_ours,
         "ratio_to_rtree": t_ours / t_rt, "target_ratio": 2.0, "memory_mb": ours_bytes / 2**20,
         "memory_ratio_to_rtree": ours_bytes / rt_bytes, "target_memory_ratio": 0.6, "build_s": t_add,
         "memory_ratio_to_rtree_with_texts_table": ours_bytes / full_bytes,
         "rss_growth_mb": rss1 - rss0, "filters_mb": info["filters"] / 2**20, "records_mb": info["records"] / 2**20,
         "records_bytes_per_profile": info["records"] / n_profiles, "interval_index_mb": iv_bytes / 2**20,
         "interval_index_columns": 0 if iv is None else len(iv.columns)},
        {"benchmark": "rtree", "case": "ProfileIndex.search(verify=True), bit-sliced AND only (interval index off)",
         "us_per_query": 1e6 * t_scan, "ratio_to_rtree": t_scan / t_rt},
        {"benchmark": "rtree", "case": "ProfileIndex.search(verify=False) (Bloom candidates, no records read)",
         "us_per_query": 1e6 * t_nover, "ratio_to_rtree": t_nover / t_rt},
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=("optimizers", "filter", "bulk", "service", "index", "rtree"), action="append")
    ap.add_argument("--rtree-sizes", default=None, help="profile counts of the R*Tree comparison (default 100000,1000000;"
                                                           " --quick: 100000)")
    args = ap.parse_args()
    n = 200_000 if args.quick else 1_000_000
    n_loop = 20_000 if args.quick else 100_000
    reps = 3 if args.quick else 7
    cfg = RangeConfig.from_result(optimize_multi(TABLE1, 512))
    sizes = [int(x) for x in (args.rtree_sizes or ("100000" if args.quick else "100000,1000000")).split(",")]
    parts = {
        "optimizers": lambda: bench_optimizers(reps), "filter": lambda: bench_filter(reps),
        "bulk": lambda: bench_bulk(n_loop, cfg), "service": lambda: bench_service(n, cfg, 200 if args.quick else 1000),
        "index": lambda: bench_scan_baseline(n, cfg, reps),
        "rtree": lambda: [row for size in sizes for row in bench_rtree(size, cfg, 200 if args.quick else 1000, reps)],
    }
    rows = [row for name, run in parts.items() if not args.only or name in args.only for row in run()]
    meta = {"quick": args.quick, "profiles": n, "add_loop_profiles": n_loop, "load_average": os.getloadavg(),
            "sqlite": sqlite3.sqlite_version, "versions": versions(["numpy", "numba", "pandas", "pyarrow", "rbloom"])}
    write_results("bench_ranges", rows, meta)
    print(markdown_table(rows))


if __name__ == "__main__":
    main()
