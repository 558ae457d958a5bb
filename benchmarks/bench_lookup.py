"""GeometricFilter vs BloomierFilter vs RibbonRetrieval vs a Python dict vs fastconstmap, side by
side in one run (document 001; ribbon and fastconstmap: issue 23).

For each structure: encode time, peak memory during encoding beyond the input and the
finished structure, size (bits/key), positive and negative batch lookup (ns/key), exactness
on the stored keys and the measured false positive rate; then ratios to the Geometric
filter (k = 1), from builds and queries timed in interleaved rounds (every structure once per
round, so that a busy machine's changing load hits all alike). fastconstmap (a static str -> uint64 map, no absent-key detection: its answer
for an absent key is undefined, so its FPR is not measured) is built from a dict of str keys
and queried with ``get_many_into`` (its fastest batch call). Keys are seeded Zipf tables (distinct uint64 keys, Zipf counts, V = 16,
e_o = 2^-16) and, when /usr/share/dictd/gcide.dict.dz exists, the GCIDE trigram table
(strings) with 10^6 absent trigrams.

    python benchmarks/bench_lookup.py            # 10^6 and 10^7 keys + GCIDE
    python benchmarks/bench_lookup.py --quick    # 10^6 keys + GCIDE
    python benchmarks/bench_lookup.py --sizes 1000000 --no-dict --no-gcide   # one size, filters only

Peak memory: tracemalloc's peak during the build (it sees numpy's and numba's allocations)
minus the memory traced before it, minus the finished structure's own size. The build's
timing is taken separately, without tracemalloc.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from typing import Any

import numpy as np
import pyarrow as pa

from bloomkit._bench import markdown_table, measure, versions, write_results
from bloomkit.lookup import BloomierFilter, GeometricFilter, RibbonRetrieval
from bloomkit.lookup.data import gcide_available, trigram_table, zipf_table

V = 16
EO = 2.0**-16


def peak_extra(build: Any) -> tuple[Any, float, float]:
    """(result, seconds, peak traced bytes above the start) of one call, by tracemalloc
    (which also sees numba's NRT allocations)."""
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    res = build()
    dt = time.perf_counter() - t0
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return res, dt, peak - base


def dict_bytes(d: dict) -> int:
    """Container + key objects + value objects not shared with the small-int cache."""
    total = sys.getsizeof(d)
    for k, v in d.items():
        total += sys.getsizeof(k)
        if not -5 <= v <= 256:
            total += sys.getsizeof(v)
    return total


def interleaved(calls: dict[str, Any], repeats: int) -> dict[str, dict[str, float]]:
    """Seconds of every call, timed in rounds (one run of each call per round, after one
    untimed round): a change of the machine's load during the run hits every structure alike,
    so the ratios stay meaningful on a busy machine. {label: {"min", "median"}}."""
    times: dict[str, list[float]] = {k: [] for k in calls}
    for rnd in range(repeats + 1):
        for label, fn in calls.items():
            t0 = time.perf_counter()
            fn()
            if rnd:
                times[label].append(time.perf_counter() - t0)
    return {k: {"min": min(v), "median": float(np.median(v))} for k, v in times.items()}


def bench_filters(name: str, keys: Any, values: np.ndarray, absent: Any, repeats: int) -> list[dict[str, Any]]:
    """Every structure built once under tracemalloc (peak memory), then builds, positive and
    negative queries timed in interleaved rounds (:func:`interleaved`)."""
    n = len(values)
    na = len(absent)
    rows = []
    structs = {
        "geometric k=1": lambda: GeometricFilter.build(keys, values, value_bits=V, fpr=EO, num_hashes=1),
        "geometric k=3": lambda: GeometricFilter.build(keys, values, value_bits=V, fpr=EO, num_hashes=3),
        "bloomier": lambda: BloomierFilter.build(keys, values, value_bits=V, fpr=EO),
        "ribbon w=64": lambda: RibbonRetrieval.build(keys, values, value_bits=V, fpr=EO),
        # the same table built in passes over the input (issue 23, item 4: peak memory)
        "ribbon w=64 low-mem": lambda: RibbonRetrieval.build(keys, values, value_bits=V, fpr=EO, low_memory=True),
    }
    inb = values.nbytes + (keys.nbytes if isinstance(keys, np.ndarray) else 0)
    built: dict[str, Any] = {}
    extras: dict[str, float] = {}
    for label, build in structs.items():
        built[label], _s, extras[label] = peak_extra(build)
        gc.collect()
    enc = interleaved(structs, max(1, repeats - 1))
    pos = interleaved({k: (lambda f=f: f.get_many(keys)) for k, f in built.items()}, repeats)
    neg = interleaved({k: (lambda f=f: f.get_many(absent)) for k, f in built.items()}, repeats)
    for label, f in built.items():
        size_bytes = f.size_in_bits / 8
        extra = extras[label]
        exact = bool((f.get_many(keys) == values).all())
        fp = int((f.get_many(absent) != 0).sum())
        rows.append({
            "data": name, "structure": label, "num_keys": n,
            "encode_ns_per_key": enc[label]["min"] / n * 1e9, "encode_median_ns": enc[label]["median"] / n * 1e9,
            "pos_ns_per_key": pos[label]["min"] / n * 1e9, "pos_median_ns": pos[label]["median"] / n * 1e9,
            "neg_ns_per_key": neg[label]["min"] / na * 1e9, "neg_median_ns": neg[label]["median"] / na * 1e9,
            "bits_per_key": f.size_in_bits / n,
            "peak_extra_MB": extra / 2**20 - size_bytes / 2**20,
            "peak_extra_pct_of_filter": 100 * (extra - size_bytes) / size_bytes,
            "peak_extra_bytes_per_key": (extra - size_bytes) / n,
            # issue 23's target, peak <= 2 x structure + input (keys and values): <= 1 when met
            "peak_vs_target": (inb + extra) / (2 * size_bytes + inb),
            "exact": exact, "fpr": fp / na, "fp": fp, "absent": na,
            "overflow": getattr(f, "overflow_size", 0),
        })
        print(rows[-1], flush=True)
    del built
    gc.collect()
    return rows


def bench_dict(name: str, keys: Any, values: np.ndarray, absent: Any, repeats: int) -> dict[str, Any]:
    n = len(values)
    klist = keys.to_pylist() if hasattr(keys, "to_pylist") else keys.tolist()
    alist = absent.to_pylist() if hasattr(absent, "to_pylist") else absent.tolist()
    vlist = values.tolist()
    d, _s, extra = peak_extra(lambda: dict(zip(klist, vlist, strict=True)))
    enc_s = measure(lambda: dict(zip(klist, vlist, strict=True)), warmup=0, repeats=repeats)["min"]
    pos = measure(lambda: [d.get(k, 0) for k in klist], warmup=1, repeats=repeats)
    neg = measure(lambda: [d.get(k, 0) for k in alist], warmup=1, repeats=repeats)
    nbytes = dict_bytes(d)
    row = {
        "data": name, "structure": "python dict", "num_keys": n,
        "encode_ns_per_key": enc_s / n * 1e9, "pos_ns_per_key": pos["min"] / n * 1e9,
        "neg_ns_per_key": neg["min"] / len(alist) * 1e9, "bits_per_key": 8 * nbytes / n,
        "exact": True, "fpr": 0.0,
        "note": "keys are Python objects (input lists built beforehand); bits include key and value objects",
    }
    print(row, flush=True)
    return row


def bench_constmap(name: str, keys: Any, values: np.ndarray, repeats: int) -> dict[str, Any] | None:
    """fastconstmap.ConstMap (peer, str keys only): build from a dict, ``get_many_into``."""
    try:
        import fastconstmap
    except ImportError:
        print("fastconstmap not installed: pip install -e '.[bench]'")
        return None
    n = len(values)
    klist = keys.to_pylist() if hasattr(keys, "to_pylist") else [str(k) for k in keys.tolist()]
    d = dict(zip(klist, values.tolist(), strict=True))
    enc = measure(lambda: fastconstmap.ConstMap(d), warmup=0, repeats=max(1, repeats - 1))
    m = fastconstmap.ConstMap(d)
    out = np.empty(n, dtype=np.uint64)
    pos = measure(lambda: m.get_many_into(klist, out), warmup=1, repeats=repeats)
    row = {
        "data": name, "structure": "fastconstmap", "num_keys": n, "encode_ns_per_key": enc["min"] / n * 1e9,
        "pos_ns_per_key": pos["min"] / n * 1e9, "neg_ns_per_key": float("nan"), "bits_per_key": 8 * m.nbytes() / n,
        "exact": bool((out == values).all()), "fpr": float("nan"),
        "note": "str keys (uint64 keys as decimal str); no absent detection; the dict it is built from not timed",
    }
    print(row, flush=True)
    return row


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for data in dict.fromkeys(r["data"] for r in rows):
        for n in dict.fromkeys(r["num_keys"] for r in rows if r["data"] == data):
            sub = {r["structure"]: r for r in rows if r["data"] == data and r["num_keys"] == n}
            g = sub.get("geometric k=1")
            if g is None:
                continue
            for s, r in sub.items():
                out.append({
                    "data": data, "num_keys": n, "structure": s,
                    "encode_vs_geometric": r["encode_ns_per_key"] / g["encode_ns_per_key"],
                    "pos_vs_geometric": r["pos_ns_per_key"] / g["pos_ns_per_key"],
                    "neg_vs_geometric": r["neg_ns_per_key"] / g["neg_ns_per_key"],  # nan: fastconstmap
                    "size_vs_geometric": r["bits_per_key"] / g["bits_per_key"],
                    "bits_vs_bound": r["bits_per_key"] / (V + 16),  # the bound V + log2(1/e) = 32 bits
                    "encode_median_vs_geometric": r.get("encode_median_ns", np.nan) / g["encode_median_ns"],
                    "pos_median_vs_geometric": r.get("pos_median_ns", np.nan) / g["pos_median_ns"],
                    "neg_median_vs_geometric": r.get("neg_median_ns", np.nan) / g["neg_median_ns"],
                })
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-dict", action="store_true")
    ap.add_argument("--no-gcide", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="+", help="numbers of Zipf keys (default 1e6 1e7; --quick: 1e6)")
    args = ap.parse_args()
    # warm the JIT (compile, or load the cache) outside every measurement: uint64, str and
    # pyarrow keys, and a 5-bit fingerprint so that invalidations, the targeted rescan and the
    # overflow table are exercised too (a compile inside a build shows up as its peak memory)
    z = zipf_table(20_000, num_absent=100)
    strs = [f"w{k}" for k in z.keys.tolist()]
    for keys in (z.keys, strs, pa.array(strs)):
        for cls in (GeometricFilter, BloomierFilter, RibbonRetrieval):
            cls.build(keys, z.values).get_many(keys[:100])
        RibbonRetrieval.build(keys, z.values, low_memory=True)
        GeometricFilter.build(keys, z.values, num_hashes=3).get_many(keys[:100])
        GeometricFilter.build(keys, z.values % 255 + 1, value_bits=8, error_bits=5, fpr=2.0**-5).get_many(keys)
    rows: list[dict[str, Any]] = []
    sizes = args.sizes or ([1_000_000] if args.quick else [1_000_000, 10_000_000])
    for n in sizes:
        z = zipf_table(n, seed=1, num_absent=min(n, 2_000_000))
        rows += bench_filters("zipf uint64", z.keys, z.values, z.absent, args.repeats)
        if not args.no_dict:
            rows.append(bench_dict("zipf uint64", z.keys, z.values, z.absent, args.repeats))
        cm = bench_constmap("zipf uint64", z.keys, z.values, args.repeats)
        rows += [cm] if cm else []
        del z
        gc.collect()
    if gcide_available() and not args.no_gcide:
        t = trigram_table(num_absent=1_000_000, seed=5)
        rows += bench_filters("gcide trigrams", t.keys, t.values, t.absent, args.repeats)
        if not args.no_dict:
            rows.append(bench_dict("gcide trigrams", t.keys, t.values, t.absent, args.repeats))
        cm = bench_constmap("gcide trigrams", t.keys, t.values, args.repeats)
        rows += [cm] if cm else []
    meta = {"versions": versions(["bloomkit", "numpy", "numba", "pyarrow", "fastconstmap"]), "V": V, "fpr": EO,
            "targets": {"bits_per_key_max": 1.2 * (V + 16), "encode_ns": 150, "pos_ns": 100, "neg_ns": 200}}
    rat = ratios(rows)
    write_results("bench_lookup", rows, meta)
    write_results("bench_lookup_ratios", rat, meta)
    print(markdown_table(rows, ["data", "structure", "num_keys", "encode_ns_per_key", "pos_ns_per_key", "neg_ns_per_key",
                                "bits_per_key", "peak_extra_pct_of_filter", "peak_extra_bytes_per_key", "peak_vs_target",
                                "exact", "fpr"]))
    print(markdown_table(rat))


if __name__ == "__main__":
    main()
