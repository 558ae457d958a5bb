"""Folding benchmarks (doc 003): fold speed, smooth-number sieve speed, planner latency.

Targets of the issue: a fold of a 10^8-bit filter by any factor in <= 50 ms; the y-smooth
numbers of an interval of 10^6 in <= 1 s. The filter-level rows (``folded``, ``unfold``,
``add_many`` into ``B_t`` and ``B_1``, ``to_wire`` / ``from_wire``) time the public methods,
locks and checks included. Peers, side by side in the same run:

* fold: numpy on the packed words (``bitwise_or.reduce`` of a reshape; only possible when
  the folded size is a multiple of 64), numpy on an unpacked bool array (``reshape.any``),
  and rebuilding the filter at the folded size from the keys (what folding avoids);
* counter fold: numpy ``reshape(f, -1).sum(axis=0)`` on the unpacked counters;
* smooth numbers: a numpy division sieve (divide out every prime <= y) and, on a small
  interval, trial factorisation.

    python benchmarks/bench_folding.py           # full
    python benchmarks/bench_folding.py --quick   # fewer factors / repeats
"""

from __future__ import annotations

import argparse
import gc
from typing import Any

import numpy as np

from bloomkit import BloomFilter
from bloomkit._bench import markdown_table, measure, versions, write_results
from bloomkit._engine.storage import CounterArray
from bloomkit.folding import (
    FoldableBloomFilter,
    FoldableCountingBloomFilter,
    choose_initial_size,
    divisor_count,
    from_wire,
    is_smooth,
    next_size,
    primes_up_to,
    smooth_numbers,
)


def _numpy_smooth(x: int, z: int, y: int) -> np.ndarray:
    """Peer: divide every prime <= y out of the whole interval with numpy."""
    vals = np.arange(x, x + z + 1, dtype=np.int64)
    rem = vals.copy()
    for p in primes_up_to(y).tolist():
        start = (-x) % p
        idx = np.arange(start, z + 1, p)
        while idx.size:
            sub = rem[idx]
            div = sub % p == 0
            idx = idx[div]
            rem[idx] //= p
    return vals[rem == 1]


def bench_fold(quick: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    m1 = 100_000_000  # 2^8 * 5^8
    m1b = 2**6 * 3**3 * 5**2 * 7 * 11 * 13  # 43,243,200: divisible by 3, 7, 11, 13
    n_keys = 1_000_000
    keys = np.arange(n_keys, dtype=np.int64)
    repeats = 3 if quick else 7
    for m, factors in ((m1, [2, 5, 10, 64, 1000, 390625] if not quick else [2, 10, 1000]),
                       (m1b, [3, 7, 11, 13 * 7, 2 * 3 * 5 * 7 * 11] if not quick else [3, 77])):
        f = FoldableBloomFilter(m, 7, seed=1, retain_original=False)
        f.add_many(keys)
        words = f.bits.words
        bools = np.unpackbits(words.view(np.uint8), bitorder="little")[:m].astype(bool)
        for fac in factors:
            assert m % fac == 0
            out = m // fac
            t_ours = measure(lambda f=f, fac=fac: f.bits.fold(fac), warmup=1, repeats=repeats)
            row: dict[str, Any] = {
                "op": "fold bits", "m": m, "factor": fac, "m_t": out,
                "bloomkit_ms": round(t_ours["median"] * 1e3, 3), "bloomkit_min_ms": round(t_ours["min"] * 1e3, 3),
            }
            if out % 64 == 0:
                t_np = measure(lambda words=words, fac=fac: np.bitwise_or.reduce(words.reshape(fac, -1), axis=0), warmup=1, repeats=repeats)
                row["numpy_words_ms"] = round(t_np["median"] * 1e3, 3)
                row["ratio_numpy_words"] = round(t_np["median"] / t_ours["median"], 2)
            else:
                row["numpy_words_ms"] = "n/a (m_t % 64 != 0)"
            t_b = measure(lambda bools=bools, fac=fac: bools.reshape(fac, -1).any(axis=0), warmup=1, repeats=max(2, repeats // 2))
            row["numpy_bool_ms"] = round(t_b["median"] * 1e3, 3)
            row["ratio_numpy_bool"] = round(t_b["median"] / t_ours["median"], 2)
            if fac in (10, 77, 1000):

                def rebuild(out: int = out) -> None:
                    r = BloomFilter(num_bits=out, num_hashes=7, seed=1)
                    r.add_many(keys)

                t_r = measure(rebuild, warmup=1, repeats=3)
                row["rebuild_1e6_keys_ms"] = round(t_r["median"] * 1e3, 3)
                row["ratio_rebuild"] = round(t_r["median"] / t_ours["median"], 2)
            rows.append(row)
            print(row, flush=True)
        gc.collect()
    # counters: 10^7 counters of 8 bits (the int64 sums of 10^8 would need 400+ MB)
    mc = 10_000_000
    c = CounterArray.from_values(np.random.default_rng(1).integers(0, 3, mc), width=8)
    vals = c.values()
    for fac in ([2, 10, 1000] if quick else [2, 5, 10, 64, 1000, 390625 // 625]):
        t_c = measure(lambda fac=fac: c.fold(fac), warmup=1, repeats=repeats)
        t_n = measure(lambda fac=fac: np.minimum(vals.reshape(fac, -1).sum(axis=0), 255), warmup=1, repeats=repeats)
        row = {"op": "fold counters (8 bit)", "m": mc, "factor": fac, "m_t": mc // fac,
               "bloomkit_ms": round(t_c["median"] * 1e3, 3), "bloomkit_min_ms": round(t_c["min"] * 1e3, 3),
               "numpy_sum_ms": round(t_n["median"] * 1e3, 3), "ratio_numpy_sum": round(t_n["median"] / t_c["median"], 2)}
        rows.append(row)
        print(row, flush=True)
    return rows


def bench_filter(quick: bool) -> list[dict[str, Any]]:
    """The public methods of the filters (what a sender calls), on 43,243,200 cells."""
    rows: list[dict[str, Any]] = []
    m = 2**6 * 3**3 * 5**2 * 7 * 11 * 13
    keys = np.arange(1_000_000, dtype=np.int64)
    repeats = 3 if quick else 7
    for cls in (FoldableBloomFilter, FoldableCountingBloomFilter):
        f = cls(m, 7, seed=1)
        f.add_many(keys)
        name = cls.__name__
        t_add = measure(lambda f=f: f.add_many(keys), warmup=1, repeats=repeats)
        t_fold = measure(lambda f=f: f.folded(77), warmup=1, repeats=repeats)
        g = f.folded(77)
        t_unfold = measure(lambda g=g: (g.unfold(), g.fold(77)), warmup=1, repeats=repeats)
        wire = g.to_wire()
        t_wire = measure(lambda g=g: g.to_wire(), warmup=1, repeats=repeats)
        t_from = measure(lambda wire=wire: from_wire(wire), warmup=1, repeats=repeats)
        for op, t in (("add_many 1e6 int keys (B_t and B_1)", t_add), ("folded(77), B_1 copied", t_fold),
                      ("unfold() + fold(77)", t_unfold), ("to_wire at m_1 / 77", t_wire),
                      ("from_wire at m_1 / 77", t_from)):
            rows.append({"op": f"{name}.{op}", "m": m, "bloomkit_ms": round(t["median"] * 1e3, 3),
                         "bloomkit_min_ms": round(t["min"] * 1e3, 3)})
            print(rows[-1], flush=True)
        del f, g
        gc.collect()
    return rows


def bench_smooth(quick: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    z = 1_000_000
    repeats = 3 if quick else 5
    for x in (10**9, 10**12):
        for y in (7, 100, 10_000):
            got = smooth_numbers(x, z, y)
            t = measure(lambda x=x, y=y: smooth_numbers(x, z, y), warmup=1, repeats=repeats)
            t_np = measure(lambda x=x, y=y: _numpy_smooth(x, z, y), warmup=0, repeats=1 if quick else 2)
            assert np.array_equal(got, _numpy_smooth(x, z, y))
            row = {"op": "smooth_numbers", "x": x, "z": z, "y": y, "found": int(got.size),
                   "bloomkit_ms": round(t["median"] * 1e3, 2), "numpy_division_ms": round(t_np["median"] * 1e3, 2),
                   "ratio_numpy": round(t_np["median"] / t["median"], 2)}
            rows.append(row)
            print(row, flush=True)
    # trial factorisation on a small interval, extrapolated per number
    x, zz, y = 10**9, 2_000, 100
    t_tr = measure(lambda: [v for v in range(x, x + zz + 1) if is_smooth(v, y)], warmup=0, repeats=1)
    t = measure(lambda: smooth_numbers(x, z, y), warmup=1, repeats=repeats)
    rows.append({"op": "trial factorisation (per 10^6, extrapolated)", "x": x, "z": z, "y": y,
                 "bloomkit_ms": round(t["median"] * 1e3, 2),
                 "trial_ms": round(t_tr["median"] * 1e3 * z / zz, 1),
                 "ratio_trial": round(t_tr["median"] * z / zz / t["median"], 1)})
    print(rows[-1], flush=True)
    return rows


def bench_planner(quick: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    m1 = 1_663_200
    t = measure(lambda: next_size(m1, 5000, 3, 0.05, 0.01), warmup=1, repeats=20)
    rows.append({"op": "next_size (independent)", "m1": m1, "divisors": divisor_count(m1),
                 "bloomkit_ms": round(t["median"] * 1e3, 3)})
    t = measure(lambda: choose_initial_size(200, 20_000, 3, 0.05, 0.01, y=7), warmup=1, repeats=3)
    rows.append({"op": "choose_initial_size (n 200..20000, y=7)", "bloomkit_ms": round(t["median"] * 1e3, 1)})
    for r in rows:
        print(r, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rows = bench_fold(args.quick) + bench_filter(args.quick) + bench_smooth(args.quick) + bench_planner(args.quick)
    meta = {"versions": versions(["numpy", "numba"]), "quick": args.quick,
            "targets": {"fold 1e8 bits": "<= 50 ms", "smooth numbers, z = 1e6": "<= 1 s"}}
    path = write_results("bench_folding", rows, meta)
    print(markdown_table(rows))
    print(f"written: {path}")


if __name__ == "__main__":
    main()
