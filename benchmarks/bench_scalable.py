"""Growing filters after 1000x growth, side by side in one run (issue 12 target).

Every library starts at an initial capacity of 1000 keys with a 0.01 target and takes the
same 10^6 keys ("key:<id>" strings), then answers the same 10^5 keys never inserted.
Columns: the measured false positive rate, the bits held, the bits over those of a static
BloomFilter sized for 10^6 keys at 0.01, add and negative-query time per key (median of
repeats after a warm-up; the pure-Python peers run once), and the number of slices.

Peers (``bench`` extra): pybloom-live's ScalableBloomFilter (both growth modes: its default 4
and 2) and pyprobables' ExpandingBloomFilter. bloomkit is timed with a batch (``add_many``
of a list) and key by key (``add`` in a Python loop, as the peers are).

pyprobables' filter adds slices of the initial size (1000 slices for 10^6 keys) and tests every
slice on every add and query, so its cost grows with the square of the keys: it adds with
``force=True`` (no membership test first; the keys are distinct, so only its false positives
are inserted twice) and answers the first ``--slow-probes`` keys of the probe set.

    python benchmarks/bench_scalable.py [--keys 1000000] [--probes 100000]
"""

from __future__ import annotations

import argparse
import gc
from collections.abc import Callable
from typing import Any

import numpy as np

from bloomkit import BloomFilter, ScalableBloomFilter
from bloomkit._bench import markdown_table, measure, versions, write_results

INITIAL, FPR = 1000, 0.01


def _loop_add(add: Callable[[Any], Any]) -> Callable[[list[str]], None]:
    def run(keys: list[str]) -> None:
        for k in keys:
            add(k)

    return run


def _loop_query(has: Callable[[Any], bool]) -> Callable[[list[str]], np.ndarray]:
    def run(keys: list[str]) -> np.ndarray:
        return np.fromiter((has(k) for k in keys), dtype=bool, count=len(keys))

    return run


def libraries() -> dict[str, Callable[[], tuple[Any, Callable, Callable, Callable[[], int], Callable[[], int]]]]:
    """name -> factory of (filter, add(keys), query(keys) -> bools, bits(), slices())."""
    out: dict[str, Callable[[], tuple[Any, Callable, Callable, Callable[[], int], Callable[[], int]]]] = {}

    def ours_batch() -> tuple[Any, Callable, Callable, Callable[[], int], Callable[[], int]]:
        f = ScalableBloomFilter(INITIAL, FPR)
        return f, f.add_many, f.contains_many, lambda: f.size_in_bits, lambda: f.num_slices

    def ours_single() -> tuple[Any, Callable, Callable, Callable[[], int], Callable[[], int]]:
        f = ScalableBloomFilter(INITIAL, FPR)
        return f, _loop_add(f.add), _loop_query(f.__contains__), lambda: f.size_in_bits, lambda: f.num_slices

    out["bloomkit (add_many / contains_many)"] = ours_batch
    out["bloomkit (add / in, Python loop)"] = ours_single
    try:
        import pybloom_live

        for mode in (pybloom_live.ScalableBloomFilter.LARGE_SET_GROWTH, pybloom_live.ScalableBloomFilter.SMALL_SET_GROWTH):
            def pbl(mode: int = mode) -> tuple[Any, Callable, Callable, Callable[[], int], Callable[[], int]]:
                f = pybloom_live.ScalableBloomFilter(initial_capacity=INITIAL, error_rate=FPR, mode=mode)
                return (f, _loop_add(f.add), _loop_query(f.__contains__),
                        lambda: sum(b.num_bits for b in f.filters), lambda: len(f.filters))

            out[f"pybloom-live ScalableBloomFilter (mode {mode})"] = pbl
    except ImportError:
        pass
    try:
        import probables

        def pp() -> tuple[Any, Callable, Callable, Callable[[], int], Callable[[], int]]:
            f = probables.ExpandingBloomFilter(est_elements=INITIAL, false_positive_rate=FPR)
            return (f, _loop_add(lambda k: f.add(k, force=True)), _loop_query(f.check),
                    lambda: sum(b.number_bits for b in f._blooms), lambda: f.expansions + 1)

        out["pyprobables ExpandingBloomFilter"] = pp
    except ImportError:
        pass
    return out


def _measure(make: Callable, pos: list[str], neg: list[str], reps: int, warm: int) -> dict[str, Any]:
    """Add all of ``pos`` to a fresh filter (each repeat, after ``warm`` untimed runs), then
    query ``neg``."""
    holder: dict[str, Any] = {}

    def setup() -> None:
        holder["f"] = make()
        gc.collect()

    t_add = measure(lambda: holder["f"][1](pos), warmup=warm, repeats=reps, setup=setup)
    _f, _add, query, bits, slices = holder["f"]
    t_neg = measure(lambda: query(neg), warmup=warm, repeats=reps)
    hits = np.asarray(query(neg), dtype=bool)
    missed = int((~np.asarray(query(pos[: len(neg)]), dtype=bool)).sum())
    return {"measured fpr": float(hits.mean()), "bits": bits(), "slices": slices(),
            "add ns/key": t_add["median"] / len(pos) * 1e9, "neg query ns/key": t_neg["median"] / len(neg) * 1e9,
            "false negatives (of probes)": missed}


def run(n: int, probes: int, repeats: int, slow_probes: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(2026)
    ids = rng.choice(2**62, size=n + probes, replace=False)
    pos = [f"key:{i}" for i in ids[:n]]
    neg = [f"key:{i}" for i in ids[n:]]
    static_bits = BloomFilter.for_requirements(n, FPR).num_bits
    rows = []
    for name, make in libraries().items():
        ours = name.startswith("bloomkit")  # warmed up (JIT); the pure-Python peers run once
        reps = repeats if name.startswith("bloomkit (add_many") else 1
        probe = neg[:slow_probes] if name.startswith("pyprobables") else neg
        m = _measure(make, pos, probe, reps, warm=1 if ours else 0)
        row = {"library": name, "keys": n, "probes": len(probe), "target": FPR, **m,
               "bits / static": m["bits"] / static_bits}
        rows.append(row)
        gc.collect()
        print(markdown_table([row]).splitlines()[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--probes", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--slow-probes", type=int, default=10_000, help="probes of pyprobables (quadratic)")
    args = ap.parse_args()
    rows = run(args.keys, args.probes, args.repeats, args.slow_probes)
    meta = {"initial_capacity": INITIAL, "fpr": FPR, "probes": args.probes,
            "versions": versions(["bloomkit", "numpy", "numba", "pybloom-live", "pyprobables"])}
    write_results("bench_scalable", rows, meta)
    print(markdown_table(rows))


if __name__ == "__main__":
    main()
