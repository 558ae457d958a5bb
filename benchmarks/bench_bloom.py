"""BloomFilter vs the Python peers, side by side in one run.

Peers (pinned in the ``bench`` extra): rbloom, fastbloom-rs, pybloomfiltermmap3, pybloom-live,
pyprobables. For each key count and input kind: add, positive query, negative query (ns/key,
median of repeats after a warm-up), bits/key and the measured false positive rate, then the
ratio of every peer's time to bloomkit's.

    python benchmarks/bench_bloom.py            # 1M and 10M keys
    python benchmarks/bench_bloom.py --quick    # 1M keys only
"""

from __future__ import annotations

import argparse
import gc
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from bloomkit import BloomFilter
from bloomkit._bench import markdown_table, measure, versions, write_results

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="1M keys only")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sizes = [1_000_000] if args.quick else [1_000_000, 10_000_000]
    rows = run(sizes, args.repeats)
    singles = single_key()
    meta = {"fpr": FPR, "versions": versions(["bloomkit", "numpy", "numba", "pyarrow", "rbloom", "fastbloom-rs",
                                              "pybloomfiltermmap3", "pybloom-live", "pyprobables"])}
    write_results("bench_bloom", rows, meta)
    write_results("bench_bloom_single", singles, meta)
    print(markdown_table(rows))
    print(markdown_table(singles))


if __name__ == "__main__":
    main()
