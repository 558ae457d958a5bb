"""BloomFilter and SplitBlockBloomFilter vs the Python peers, side by side in one run.

Peers (pinned in the ``bench`` extra): rbloom, fastbloom-rs, pybloomfiltermmap3, pybloom-live,
pyprobables. Sections:

1. BloomFilter vs peers: for each key count and input kind, add, positive query, negative
   query (ns/key, median of repeats after a warm-up), bits/key and the measured false
   positive rate, then the ratio of every peer's time to bloomkit's.
2. SplitBlockBloomFilter vs BloomFilter (issue 13): numpy int64 keys at 1M, 10M and 100M, on
   one thread and on the default threads; add + query time and the ratio split / standard
   (target <= 0.5), rbloom and fastbloom-rs beside them (1M and 10M: their input is a Python
   list, 3.6 GB at 100M).
3. Rates and sizes: bits per key for 1% and 0.1% of both filters, the measured FPR of 1M
   never-inserted keys against the model and its 5-sd band.
4. Peak RSS of a 100M-key ``add_many`` (numpy int64) of both filters, each in a fresh process
   (target <= 1.2 x (keys + filter)).
5. The compiled boundary (issue 14): the same measurements in two child processes, one with
   ``bloomkit._speedups`` and one on numba alone (``BLOOMKIT_NO_EXTENSION=1``), rbloom in both:
   200k distinct str / int keys added and queried in a Python loop; 1M ``list[str]``
   ``add_many`` vs rbloom's ``update`` after a warm-up, list queries vs rbloom's ``in`` loop;
   1M numpy int64 and pyarrow str batches; ParallelBloomFilter single items; RangeBloomFilter
   point queries. Ratios are bloomkit / rbloom within one process.
6. Threads (issue 28): ``add_many`` of 10M numpy int64 keys and of 1M ``list[str]`` / pyarrow
   strings on 1 and 2 threads, both filters, repeats alternating, the ratio 2 / 1 threads
   (targets: <= 0.6 for numpy, <= 1.0 for the list).
7. Probe schemes (issue 28): BloomFilter(probes="independent" / "double") add and query of 1M
   numpy int64 keys on 1 thread against the floor loops (hashes given, k = 7, double hashing
   with Barrett / multiply-high); target: "double" <= 1.2 x the Barrett floor.

    python benchmarks/bench_bloom.py            # sections 1-4 (1M, 10M, 100M keys)
    python benchmarks/bench_bloom.py --quick    # 1M keys only (RSS at 10M)
    python benchmarks/bench_bloom.py --sections 5 --repeats 7   # the compiled boundary only
    python benchmarks/bench_bloom.py --sections 5 --before /tmp/old/src   # and the code of another checkout
    python benchmarks/bench_bloom.py --sections 6   # threads: 1 vs 2
    python benchmarks/bench_bloom.py --sections 7   # probe schemes vs the floor
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

import bloomkit
from bloomkit import BloomFilter, SplitBlockBloomFilter
from bloomkit._bench import markdown_table, measure, versions, write_results
from bloomkit.splitblock import split_block_fpr, split_block_fpr_sd

FPR = 0.01
SLOW_PEERS = {"pybloom-live", "pyprobables"}  # pure Python: about 1-3 us per key


def _contains_loop(f: Any) -> Callable[[Any], np.ndarray]:
    def run(keys: Any) -> np.ndarray:
        c = f.__contains__
        return np.fromiter((c(k) for k in keys), dtype=bool, count=len(keys))

    return run


def peers(n: int, kind: str) -> dict[str, Callable[[], tuple[Any, Callable, Callable, int]]]:
    """name -> factory returning (filter, add_batch(keys), query_batch(keys) -> bool array, bits)."""
    out: dict[str, Callable[[], tuple[Any, Callable, Callable, int]]] = {}

    def ours() -> tuple[Any, Callable, Callable, int]:
        f = BloomFilter(capacity=n, fpr=FPR)
        return f, f.add_many, f.contains_many, f.num_bits

    out["bloomkit"] = ours
    try:
        import rbloom

        def rb() -> tuple[Any, Callable, Callable, int]:
            f = rbloom.Bloom(n, FPR)
            return f, f.update, _contains_loop(f), f.size_in_bits

        out["rbloom"] = rb
    except ImportError:
        pass
    try:
        import fastbloom_rs

        def fb() -> tuple[Any, Callable, Callable, int]:
            f = fastbloom_rs.BloomFilter(n, FPR)
            if kind == "int":
                return f, f.add_int_batch, lambda k: np.asarray(f.contains_int_batch(k)), len(f.get_bytes()) * 8
            return f, f.add_str_batch, lambda k: np.asarray(f.contains_str_batch(k)), len(f.get_bytes()) * 8

        out["fastbloom-rs"] = fb
    except ImportError:
        pass
    try:
        import pybloomfilter

        def pm() -> tuple[Any, Callable, Callable, int]:
            f = pybloomfilter.BloomFilter(n, FPR)
            return f, f.update, _contains_loop(f), f.num_bits

        out["pybloomfiltermmap3"] = pm
    except ImportError:
        pass
    try:
        import pybloom_live

        def pl() -> tuple[Any, Callable, Callable, int]:
            f = pybloom_live.BloomFilter(n, FPR)
            def add(keys: Any) -> None:
                a = f.add
                for k in keys:
                    a(k)
            return f, add, _contains_loop(f), f.num_bits

        out["pybloom-live"] = pl
    except ImportError:
        pass
    try:
        import probables

        def pp() -> tuple[Any, Callable, Callable, int]:
            f = probables.BloomFilter(est_elements=n, false_positive_rate=FPR)
            def add(keys: Any) -> None:
                a = f.add
                for k in keys:
                    a(k)
            q = f.check
            return f, add, lambda keys: np.fromiter((q(k) for k in keys), bool, len(keys)), f.number_bits

        out["pyprobables"] = pp
    except ImportError:
        pass
    return out


def keysets(n: int, rng: np.random.Generator) -> dict[str, tuple[str, Any, Any, Any, Any]]:
    """kind -> (peer key kind, ours_pos, ours_neg, peer_pos, peer_neg)."""
    ids = rng.choice(2**62, size=2 * n, replace=False)
    pos_i, neg_i = ids[:n], ids[n:]
    pos_s = [f"key:{i}" for i in pos_i]
    neg_s = [f"key:{i}" for i in neg_i]
    return {
        "list[str]": ("str", pos_s, neg_s, pos_s, neg_s),
        "pyarrow str": ("str", pa.array(pos_s), pa.array(neg_s), pos_s, neg_s),
        "numpy int64": ("int", pos_i, neg_i, pos_i.tolist(), neg_i.tolist()),
    }


def _measure_lib(make: Callable, pos: Any, neg: Any, reps: int, n: int) -> dict[str, Any]:
    """Time add (on a fresh filter each repeat), positive and negative queries of one library."""
    holder: dict[str, Any] = {}

    def setup() -> None:
        holder["f"] = make()
        gc.collect()

    t_add = measure(lambda: holder["f"][1](pos), warmup=1, repeats=reps, setup=setup)
    _f, _add, query, bits = holder["f"]
    t_pos = measure(lambda: query(pos), warmup=1, repeats=reps)
    t_neg = measure(lambda: query(neg), warmup=1, repeats=reps)
    hits_pos = np.asarray(query(pos)).astype(bool)
    hits_neg = np.asarray(query(neg)).astype(bool)
    holder.clear()
    gc.collect()
    return {
        "add ns/key": t_add["median"] / n * 1e9,
        "pos query ns/key": t_pos["median"] / n * 1e9,
        "neg query ns/key": t_neg["median"] / n * 1e9,
        "bits/key": bits / n,
        "measured fpr": float(hits_neg.mean()),
        "false negatives": int((~hits_pos).sum()),
    }


def run(sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(2026)
    rows = []
    for n in sizes:
        for kind, (pkind, ours_pos, ours_neg, peer_pos, peer_neg) in keysets(n, rng).items():
            base: dict[str, float] = {}
            for name, make in peers(n, pkind).items():
                if name in SLOW_PEERS and (n > 1_000_000 or kind != "list[str]"):
                    continue
                pos, neg = (ours_pos, ours_neg) if name == "bloomkit" else (peer_pos, peer_neg)
                reps = 1 if name in SLOW_PEERS else repeats
                row = {"keys": n, "input": kind, "library": name, **_measure_lib(make, pos, neg, reps, n)}
                if name == "bloomkit":
                    base = row
                for col in ("add ns/key", "pos query ns/key", "neg query ns/key"):
                    row[f"{col.split(' ns')[0]} ratio ours/peer"] = base[col] / row[col] if base else float("nan")
                rows.append(row)
                print(markdown_table([row]).splitlines()[-1], flush=True)
    return rows


def single_key(n: int = 200_000) -> list[dict[str, Any]]:
    """Single add / `in` per key in a Python loop: bloomkit vs rbloom."""
    import rbloom

    keys = [f"key:{i}" for i in range(n)]
    rows = []
    for name, f in (("bloomkit", BloomFilter(capacity=n, fpr=FPR)), ("rbloom", rbloom.Bloom(n, FPR))):
        def adds(add: Callable = f.add) -> None:
            for k in keys:
                add(k)

        def queries(has: Callable = f.__contains__) -> None:
            for k in keys:
                has(k)

        rows.append({"library": name, "single add ns/key": measure(adds, repeats=3)["median"] / n * 1e9,
                     "single in ns/key": measure(queries, repeats=3)["median"] / n * 1e9})
    rows[0]["add ratio ours/rbloom"] = rows[0]["single add ns/key"] / rows[1]["single add ns/key"]
    rows[0]["in ratio ours/rbloom"] = rows[0]["single in ns/key"] / rows[1]["single in ns/key"]
    return rows


def _keys(n: int, seed: int) -> np.ndarray:
    """n distinct-enough random int64 keys, made in slices (no temporary of 2 x n)."""
    out = np.empty(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    for lo in range(0, n, 1 << 22):
        hi = min(n, lo + (1 << 22))
        out[lo:hi] = rng.integers(0, 2**62, hi - lo)
    return out


def _split_row(cls: Any, n: int, pos: np.ndarray, neg: np.ndarray, reps: int, threads: int) -> dict[str, Any]:
    """add (fresh filter each repeat), positive and negative queries of one filter class."""
    holder: dict[str, Any] = {}

    def setup() -> None:
        holder["f"] = cls(capacity=n, fpr=FPR)
        gc.collect()

    t_add = measure(lambda: holder["f"].add_many(pos), warmup=1, repeats=reps, setup=setup)
    f = holder.pop("f")
    t_pos = measure(lambda: f.contains_many(pos), warmup=1, repeats=reps)
    t_neg = measure(lambda: f.contains_many(neg), warmup=1, repeats=reps)
    return {"keys": n, "threads": threads, "library": cls.__name__,
            "add ns/key": t_add["median"] / n * 1e9, "pos query ns/key": t_pos["median"] / n * 1e9,
            "neg query ns/key": t_neg["median"] / n * 1e9,
            "add+query ns/key (min)": (t_add["min"] + (t_pos["min"] + t_neg["min"]) / 2) / n * 1e9,
            "bits/key": f.size_in_bits / n}


def split_vs_standard(sizes: list[int], repeats: int, peer_limit: int) -> list[dict[str, Any]]:
    """Section 2: add + positive + negative query of numpy int64 keys, both filters, 1 thread
    and the default threads; ns/key (median, and the min of add + mean query for the ratio);
    rbloom / fastbloom-rs at sizes <= peer_limit."""
    default_threads = bloomkit.get_num_threads()
    rows = []
    for n in sizes:
        pos, neg = _keys(n, 1), _keys(n, 2) + 2**62
        reps = repeats if n <= 10**7 else 2
        for threads in sorted({1, default_threads}):
            bloomkit.set_num_threads(threads)
            std = _split_row(BloomFilter, n, pos, neg, reps, threads)
            split = _split_row(SplitBlockBloomFilter, n, pos, neg, reps, threads)
            split["ratio split/standard (add+query)"] = split["add+query ns/key (min)"] / std["add+query ns/key (min)"]
            rows += [std, split]
            print(markdown_table([std, split]), flush=True)
        bloomkit.set_num_threads(None)
        if n <= peer_limit:
            for name, make in peers(n, "int").items():
                if name in ("rbloom", "fastbloom-rs"):
                    r = _measure_lib(make, pos.tolist(), neg.tolist(), repeats, n)
                    rows.append({"keys": n, "threads": 1, "library": name, "add ns/key": r["add ns/key"],
                                 "pos query ns/key": r["pos query ns/key"], "neg query ns/key": r["neg query ns/key"],
                                 "bits/key": r["bits/key"], "measured fpr": r["measured fpr"]})
                    print(markdown_table([rows[-1]]), flush=True)
                    gc.collect()
        del pos, neg
        gc.collect()
    return rows


def rates_and_sizes(n: int, probes: int) -> list[dict[str, Any]]:
    """Section 3: bits/key and measured FPR for 1% and 0.1%, the split-block model's band."""
    rows = []
    pos, neg = _keys(n, 3), _keys(probes, 4) + 2**62
    for fpr in (0.01, 0.001):
        for cls in (BloomFilter, SplitBlockBloomFilter):
            f = cls(capacity=n, fpr=fpr)
            f.add_many(pos)
            measured = float(f.contains_many(neg).mean())
            row: dict[str, Any] = {"fpr target": fpr, "library": cls.__name__, "bits/key": f.size_in_bits / n,
                                   "measured fpr": measured, "predicted fpr": f.predicted_fpr(n)}
            if cls is SplitBlockBloomFilter:
                sd = split_block_fpr_sd(n, f.num_blocks, probes)
                model = split_block_fpr(n, f.num_blocks)
                row.update({"model band (5 sd)": f"[{model - 5 * sd:.5f}, {model + 5 * sd:.5f}]",
                            "within band": abs(measured - model) <= 5 * sd})
            rows.append(row)
    return rows


def _rss_child(cls_name: str, n: int, threads: int) -> None:
    """Run in a fresh process: peak RSS of one add_many of n int64 keys (printed as JSON)."""
    bloomkit.set_num_threads(threads)
    cls = getattr(bloomkit, cls_name)
    cls(capacity=1000, fpr=FPR).add_many(_keys(200_000, 9))  # compile outside the measurement
    gc.collect()
    base = _rss()
    keys = _keys(n, 5)
    f = cls(capacity=n, fpr=FPR)
    filter_bytes = (f.bits.words if isinstance(f, BloomFilter) else f.words).nbytes
    before = _rss()
    try:  # reset the high-water mark so that making the keys does not count
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    f.add_many(keys)
    peak = _peak_rss()
    print(json.dumps({"library": cls_name, "keys": n, "threads": threads, "interpreter MB": base / 2**20,
                      "keys MB": keys.nbytes / 2**20, "filter MB": filter_bytes / 2**20,
                      "RSS before add MB": before / 2**20, "peak RSS MB": peak / 2**20,
                      "peak / (keys + filter)": peak / (keys.nbytes + filter_bytes),
                      "(peak - interpreter) / (keys + filter)": (peak - base) / (keys.nbytes + filter_bytes)}))


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def peak_rss(n: int) -> list[dict[str, Any]]:
    """Section 4: each filter's add_many of n keys in a fresh process, 1 and default threads."""
    rows = []
    for name in ("BloomFilter", "SplitBlockBloomFilter"):
        for threads in sorted({1, bloomkit.get_num_threads()}):
            out = subprocess.run([sys.executable, __file__, "--rss-child", name, str(n), str(threads)],
                                 capture_output=True, text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(markdown_table([rows[-1]]), flush=True)
    return rows


def _loop_ops(make: Callable[[], Any], keys: list[Any], repeats: int) -> tuple[float, float]:
    """ns per key of add and of `in`, one key (item) per call in a Python loop (a fresh filter
    for every timed run of the adds)."""
    holder = {"f": make()}

    def adds() -> None:
        add = holder["f"].add
        for k in keys:
            add(k)

    def queries() -> None:
        f = holder["f"]
        for k in keys:
            _ = k in f

    t_add = measure(adds, repeats=repeats, setup=lambda: holder.update(f=make()))["median"]
    holder["f"] = make()
    adds()
    return t_add / len(keys) * 1e9, measure(queries, repeats=repeats)["median"] / len(keys) * 1e9


def _boundary_child(repeats: int) -> None:
    """Section 5 in this process (its path fixed at import): one JSON row per measurement."""
    import rbloom

    from bloomkit.multiattr import ParallelBloomFilter
    from bloomkit.ranges import Decimal, Integer, RangeBloomFilter, RangeConfig, Schema, Text

    rows: list[dict[str, Any]] = []
    path = bloomkit.info()["hash_path"]

    def row(what: str, ours: float, peer: float | None, unit: str, target: str) -> None:
        rows.append({"path": path, "measurement": what, "unit": unit, "bloomkit": ours, "rbloom": peer,
                     "ratio ours/rbloom": None if peer is None else ours / peer, "target": target,
                     "load average (1 min)": os.getloadavg()[0]})

    def per_key(fn: Callable[[], Any], n: int, setup: Callable[[], Any] | None = None) -> float:
        return measure(fn, warmup=1, repeats=repeats, setup=setup)["median"] / n * 1e9

    n = 200_000
    single = {"str": [f"key:{i}" for i in range(n)], "int": [i * 7919 + 10**12 for i in range(n)]}
    for kind, keys in single.items():
        res = {"bloomkit": _loop_ops(lambda: BloomFilter(capacity=n, fpr=FPR), keys, repeats),
               "rbloom": _loop_ops(lambda: rbloom.Bloom(n, FPR), keys, repeats)}
        row(f"200k {kind} keys: add in a Python loop", res["bloomkit"][0], res["rbloom"][0], "ns/key", "<= 1.0x")
        row(f"200k {kind} keys: `in` in a Python loop", res["bloomkit"][1], res["rbloom"][1], "ns/key", "<= 1.3x")

    n = 1_000_000
    rng = np.random.default_rng(2026)
    ids = rng.choice(2**62, size=2 * n, replace=False)
    pos, neg = [f"key:{i}" for i in ids[:n]], [f"key:{i}" for i in ids[n:]]
    h: dict[str, Any] = {}
    t_ours = per_key(lambda: h["b"].add_many(pos), n, setup=lambda: h.update(b=BloomFilter(capacity=n, fpr=FPR)))
    t_rb = per_key(lambda: h["r"].update(pos), n, setup=lambda: h.update(r=rbloom.Bloom(n, FPR)))  # warm: hashes cached
    row("1M list[str]: add_many vs rbloom update (warm)", t_ours, t_rb, "ns/key", "<= 1.0x")
    q_ours = per_key(lambda: h["b"].contains_many(neg), n)
    q_rb = per_key(lambda: _contains_loop(h["r"])(neg), n)
    row("1M list[str]: contains_many vs rbloom `in` loop (negatives)", q_ours, q_rb, "ns/key", "<= 0.5x")
    q_ours = per_key(lambda: h["b"].contains_many(pos), n)
    q_rb = per_key(lambda: _contains_loop(h["r"])(pos), n)
    row("1M list[str]: contains_many vs rbloom `in` loop (positives)", q_ours, q_rb, "ns/key", "<= 0.5x")
    h.clear()
    for kind, keys_pos in (("numpy int64", ids[:n]), ("pyarrow str", pa.array(pos))):
        t_add = per_key(lambda: h["b"].add_many(keys_pos), n, setup=lambda: h.update(b=BloomFilter(capacity=n, fpr=FPR)))  # noqa: B023
        row(f"1M {kind}: add_many", t_add, None, "ns/key", "no slower than numba")
        row(f"1M {kind}: contains_many", per_key(lambda: h["b"].contains_many(keys_pos), n), None, "ns/key",  # noqa: B023
            "no slower than numba")
    h.clear()

    items = [(f"10.0.{i % 256}.{i // 256}", f"host{i}", i % 65536) for i in range(20_000)]
    t_add, t_in = _loop_ops(lambda: ParallelBloomFilter(3, 7, 1 << 16), items, repeats)
    row("ParallelBloomFilter (p=3, q=7): single add", t_add / 1e3, None, "us", "<= 1 us")
    row("ParallelBloomFilter (p=3, q=7): single `in`", t_in / 1e3, None, "us", "<= 1 us")

    rbf = RangeBloomFilter(Schema([Integer("Age", 0, 1000), Text("Name")]), 1 << 16, RangeConfig(7, {"Age": (4, 2)}))
    rbf.insert_many([{"Age": i % 1000, "Name": f"n{i}"} for i in range(2000)])
    lat = RangeBloomFilter(Schema([Decimal("Lat", -90, 90, 4)]), 1 << 16, RangeConfig(7, {"Lat": (100, 2)}))
    lat.insert_many([{"Lat": round(i / 10 - 90, 4)} for i in range(1800)])
    for name, f, attr, values in (
            ("Age", rbf, "Age", list(range(0, 1000, 2)) * 4), ("Name", rbf, "Name", [f"n{i}" for i in range(0, 4000, 2)]),
            ("Lat, Decimal float", lat, "Lat", [round(i / 20 - 90, 5) for i in range(3600)] * 2),
            ("Age, numpy int64 scalars", rbf, "Age", [np.int64(v) for v in range(0, 1000, 2)] * 4),
            # a value the point path does not take: the record path (every point query before issue 14)
            ("Lat, numpy float32: the record path", lat, "Lat", [np.float32(i / 20 - 90) for i in range(0, 3600, 9)])):
        def points(f: Any = f, attr: str = attr, values: list[Any] = values) -> None:
            for v in values:
                f.might_contain(attr, v)

        row(f"RangeBloomFilter: point query ({name})", measure(points, repeats=repeats)["median"] / len(values) * 1e6,
            None, "us", "<= 3 us")
    records = [{"Age": (i % 990, i % 990 + 9), "Name": f"n{i}"} for i in range(2000)]

    def inserts() -> None:
        g = RangeBloomFilter(Schema([Integer("Age", 0, 1000), Text("Name")]), 1 << 16, RangeConfig(7, {"Age": (4, 2)}))
        for r in records:
            g.insert(r)

    row("RangeBloomFilter: insert of one record (Age range of 10, Name)", measure(inserts, repeats=repeats)["median"]
        / len(records) * 1e6, None, "us", "(no target; ~420 us through the record path)")
    for op in ("might_intersect", "might_cover"):
        def ranges(op: str = op) -> None:
            fn = getattr(rbf, op)
            for a in range(0, 990, 2):
                fn("Age", a, a + 10)

        row(f"RangeBloomFilter: {op} (Age, 11 values)", measure(ranges, repeats=repeats)["median"] / 495 * 1e6,
            None, "us", "(no target; 91-97 us before)")
    print(json.dumps(rows))


def boundary(repeats: int, before: str | None = None) -> list[dict[str, Any]]:
    """Section 5: the compiled boundary and numba alone, each in a child process; with
    ``before`` (the ``src`` directory of another checkout, e.g. ``git archive <commit> src``
    with the built extension copied in), the same children on that code too, interleaved, so
    that before / after come from one run under the same machine load."""
    rows: list[dict[str, Any]] = []
    trees: list[tuple[str, str | None]] = [("this tree", None)] + ([("before", before)] if before else [])
    for env in ({}, {"BLOOMKIT_NO_EXTENSION": "1"}):
        for label, src in trees:
            e = {k: v for k, v in os.environ.items() if k != "BLOOMKIT_NO_EXTENSION"} | env
            if src is not None:
                e["PYTHONPATH"] = os.pathsep.join([src] + ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
            out = subprocess.run([sys.executable, __file__, "--boundary-child", "--repeats", str(repeats)], env=e,
                                 capture_output=True, text=True, check=True)
            part = [{"code": label, **r} for r in json.loads(out.stdout.strip().splitlines()[-1])]
            for r in part:
                print(markdown_table([r]).splitlines()[-1], flush=True)
            rows += part
    return rows


def _timed_adds(cls: Any, n: int, keys: Any, threads: int) -> float:
    """Seconds of one ``add_many`` into a fresh filter on ``threads`` threads."""
    f = cls(capacity=n, fpr=FPR)
    gc.collect()
    bloomkit.set_num_threads(threads)
    try:
        t0 = time.perf_counter()
        f.add_many(keys)
        return time.perf_counter() - t0
    finally:
        bloomkit.set_num_threads(None)


def threads_section(big: int, small: int, repeats: int) -> list[dict[str, Any]]:
    """Section 6 (issue 28 item 1): ``add_many`` on 1 and 2 threads, same run, both filters:
    ``big`` numpy int64 keys (target: 2 threads <= 0.6 x 1 thread), ``small`` list[str] keys
    (target: no slower on 2) and ``small`` pyarrow strings. Repeats alternate 1 and 2 threads
    (after one warm-up of each), medians; the ratio is median(2) / median(1), and min(2) /
    min(1) beside it (on a loaded machine the fastest repeat is the one least disturbed)."""
    inputs = {f"numpy int64 {big:,}": (big, _keys(big, 1))}
    strs = [f"key-{i}" for i in _keys(small, 3).tolist()]
    inputs[f"list[str] {small:,}"] = (small, strs)
    inputs[f"pyarrow str {small:,}"] = (small, pa.array(strs, type=pa.string()))
    rows = []
    for what, (n, keys) in inputs.items():
        for cls in (BloomFilter, SplitBlockBloomFilter):
            times: dict[int, list[float]] = {1: [], 2: []}
            for rep in range(repeats + 1):
                for threads in (1, 2):
                    t = _timed_adds(cls, n, keys, threads)
                    if rep:
                        times[threads].append(t)
            one, two = (float(np.median(times[t])) for t in (1, 2))
            best1, best2 = min(times[1]), min(times[2])
            rows.append({"input": what, "library": cls.__name__, "1 thread ns/key": one / n * 1e9,
                         "2 threads ns/key": two / n * 1e9, "ratio 2/1": two / one,
                         "ratio 2/1 (min)": best2 / best1, "target": "<= 0.6" if "numpy" in what else "<= 1.0"})
            print(markdown_table([rows[-1]]), flush=True)
    return rows


def _floor_kernels() -> dict[str, tuple[Callable, Callable]]:
    """The floor of issue 28: plain loops with the hashes given, k = 7 (a constant), no
    prefetch, double hashing with the exact Barrett reduction (what BloomFilter(probes="double")
    computes) and with multiply-high (Lemire's reduction: not exact under folding)."""
    import numba

    from bloomkit._engine.jit import GOLDEN, U64, mulhi64, splitmix64
    from bloomkit._engine.kernels import fastmod, reducer

    def make(barrett: bool) -> tuple[Callable, Callable]:
        @numba.njit(nogil=True)
        def add(words: np.ndarray, h1: np.ndarray, m: np.uint64) -> None:
            M = reducer(m)
            for r in range(h1.shape[0]):
                x = h1[r]
                y = splitmix64(x + GOLDEN)
                for i in range(7):
                    p = fastmod(x, m, M) if barrett else mulhi64(x, m)
                    words[p >> U64(6)] |= U64(1) << (p & U64(63))
                    x += y
                    y += U64(i + 1)

        @numba.njit(nogil=True)
        def test(words: np.ndarray, h1: np.ndarray, m: np.uint64) -> np.ndarray:
            M = reducer(m)
            out = np.empty(h1.shape[0], dtype=np.bool_)
            for r in range(h1.shape[0]):
                x = h1[r]
                y = splitmix64(x + GOLDEN)
                acc = U64(1)
                for i in range(7):
                    p = fastmod(x, m, M) if barrett else mulhi64(x, m)
                    acc &= words[p >> U64(6)] >> (p & U64(63))
                    x += y
                    y += U64(i + 1)
                out[r] = acc != U64(0)
            return out

        return add, test

    return {"floor: double hashing + Barrett": make(True), "floor: double hashing + multiply-high": make(False)}


def probes_section(n: int, repeats: int) -> list[dict[str, Any]]:
    """Section 7 (issue 28 item 2): 1 thread, n numpy int64 keys, fpr 1 % (k = 7): add (fresh
    filter) and query (half present) of BloomFilter with each probe scheme against the floor
    loops (hashes given, :func:`_floor_kernels`); ratios to the Barrett floor (target <= 1.2 for
    probes="double"). Repeats interleaved; the process's CPU time (one thread: not inflated when
    other processes take the cores), medians (and the ratio of the fastest repeats)."""
    from bloomkit._engine.hashing import hash_keys

    keys = _keys(n, 1)
    query = np.concatenate([keys[: n // 2], _keys(n - n // 2, 2) + 2**62])
    ref = BloomFilter(capacity=n, fpr=FPR)
    m, k = ref.num_bits, ref.num_hashes
    assert k == 7
    h_add, h_query = hash_keys(keys, 0)[0], hash_keys(query, 0)[0]
    cases: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {}
    for name, (add, test) in _floor_kernels().items():
        words = np.zeros((m + 63) // 64, dtype=np.uint64)
        cases[name] = (lambda add=add, words=words: (words.fill(0), add(words, h_add, np.uint64(m))),
                       lambda test=test, words=words: test(words, h_query, np.uint64(m)))
    for probes in ("independent", "double"):
        holder = {"f": BloomFilter(capacity=n, fpr=FPR, probes=probes)}

        def adds(holder: dict[str, Any] = holder, probes: str = probes) -> None:
            holder["f"] = BloomFilter(capacity=n, fpr=FPR, probes=probes)
            holder["f"].add_many(keys)

        cases[f"BloomFilter(probes={probes!r})"] = (adds, lambda holder=holder: holder["f"].contains_many(query))
    bloomkit.set_num_threads(1)
    try:
        times: dict[str, dict[str, list[float]]] = {c: {"add": [], "query": []} for c in cases}
        for rep in range(repeats + 1):
            for c, (add, test) in cases.items():
                for what, fn in (("add", add), ("query", test)):
                    gc.collect()
                    t0 = time.process_time()  # one thread: its CPU time, robust to other processes' load
                    fn()
                    if rep:
                        times[c][what].append(time.process_time() - t0)
    finally:
        bloomkit.set_num_threads(None)
    base = times["floor: double hashing + Barrett"]
    floor = {w: float(np.median(base[w])) for w in ("add", "query")}
    best = {w: min(base[w]) for w in ("add", "query")}
    rows = []
    for c in cases:
        add_t, q_t = (float(np.median(times[c][w])) for w in ("add", "query"))
        rows.append({"keys": n, "k": k, "case": c, "add ns/key": add_t / n * 1e9, "query ns/key": q_t / n * 1e9,
                     "add / floor": add_t / floor["add"], "query / floor": q_t / floor["query"],
                     "add / floor (min)": min(times[c]["add"]) / best["add"],
                     "query / floor (min)": min(times[c]["query"]) / best["query"]})
    print(markdown_table(rows), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="1M keys only (RSS at 10M)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sections", default="1,2,3,4,5,6,7", help="which sections to run (comma-separated)")
    ap.add_argument("--rss-child", nargs=3, metavar=("CLASS", "N", "THREADS"), help=argparse.SUPPRESS)
    ap.add_argument("--boundary-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--before", metavar="SRC", help="section 5: also time the code of this src directory (before / after)")
    args = ap.parse_args()
    if args.boundary_child:
        _boundary_child(args.repeats)
        return
    if args.rss_child:
        _rss_child(args.rss_child[0], int(args.rss_child[1]), int(args.rss_child[2]))
        return
    sections = {int(x) for x in args.sections.split(",")}
    meta = {"fpr": FPR, "threads (default)": bloomkit.get_num_threads(), "load average": os.getloadavg(),
            "versions": versions(["bloomkit", "numpy", "numba", "pyarrow", "rbloom", "fastbloom-rs",
                                  "pybloomfiltermmap3", "pybloom-live", "pyprobables"])}
    if 1 in sections:
        sizes = [1_000_000] if args.quick else [1_000_000, 10_000_000]
        rows = run(sizes, args.repeats)
        singles = single_key()
        write_results("bench_bloom", rows, meta)
        write_results("bench_bloom_single", singles, meta)
        print(markdown_table(rows))
        print(markdown_table(singles))
    if 2 in sections:
        sizes = [1_000_000] if args.quick else [1_000_000, 10_000_000, 100_000_000]
        rows = split_vs_standard(sizes, args.repeats, peer_limit=10_000_000)
        write_results("bench_splitblock", rows, meta)
        print(markdown_table(rows))
    if 3 in sections:
        rows = rates_and_sizes(1_000_000, 1_000_000)
        write_results("bench_splitblock_rates", rows, meta)
        print(markdown_table(rows))
    if 4 in sections:
        rows = peak_rss(10_000_000 if args.quick else 100_000_000)
        write_results("bench_splitblock_rss", rows, meta)
        print(markdown_table(rows))
    if 5 in sections:
        rows = boundary(args.repeats, args.before)
        write_results("bench_boundary", rows, meta)
        print(markdown_table(rows))
    if 7 in sections:
        rows = probes_section(1_000_000, max(args.repeats, 7))
        write_results("bench_probes", rows, meta)
    if 6 in sections:
        rows = threads_section(10_000_000, 1_000_000, max(args.repeats, 5))
        write_results("bench_threads", rows, meta)
        print(markdown_table(rows))


if __name__ == "__main__":
    main()
