"""Static filters beside the Bloom filters and the peers, side by side in one run (issue 23).

For each structure at fpr 2^-8 and 2^-16: build time (ns/key), peak memory of the build beyond
the input and the finished filter (tracemalloc: our numpy / numba allocations; the peers
allocate in C, which tracemalloc does not see), bits per key and its ratio to the information
bound log2(1/fpr), batch query time of stored and of absent keys (ns/key), the measured false
positive rate (false positives / absent probes) and construction attempts. ``peak_vs_target``:
(input + peak) / (2 x structure + input), the issue's memory target (<= 1), numpy keys only. Keys: distinct
random uint64 as a numpy array, and the same keys as a list of str.

Peers: pyfusefilter (Fuse8 / Fuse16: 3-wise binary fuse, xor_singleheader) and pyxorfilter
(Xor8 / Xor16). They take a list (each key hashed in Python: xxh64 of ``str(key)``) and have no
batch query: their query time is ``[f.contains(k) for k in keys]``, the way their users call them.
Their ``hash(item)`` is ``xxhash.xxh64_intdigest(str(item))``, which xxhash 4 (pinned here for
bloomkit's tests) refuses for str; :func:`bloomkit.experiments.static_map.peer_hash` gives them the same function on
``str(item).encode()`` (what xxhash 3 did inside), so they run and hash the same bytes.

    python benchmarks/bench_static.py              # 10^6 and 10^7 keys
    python benchmarks/bench_static.py --quick      # 10^6 keys
    python benchmarks/bench_static.py --sizes 200000 --repeats 1
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from bloomkit import BloomFilter, SplitBlockBloomFilter
from bloomkit._bench import markdown_table, measure, versions, write_results
from bloomkit.experiments.static_map import peer_hash
from bloomkit.static import BinaryFuseFilter, RibbonFilter

RATES = (8, 16)  # fpr = 2^-r
PEER_HASH = contextlib.ExitStack()


def peak_extra(build: Callable[[], Any]) -> tuple[Any, float]:
    """(result, peak traced bytes above the start) of one call."""
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    res = build()
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return res, peak - base


def ours(r: int) -> list[tuple[str, Callable[[Any], Any], Callable[[Any], int]]]:
    """(label, build(keys), size in bits) of bloomkit's structures at fpr 2^-r."""
    fpr = 2.0**-r

    def bloom(cls: Any) -> Callable[[Any], Any]:
        def build(keys: Any) -> Any:
            f = cls(capacity=len(keys), fpr=fpr)
            f.add_many(keys)
            return f

        return build

    return [
        (f"fuse-4 r={r}", lambda k: BinaryFuseFilter.build(k, fingerprint_bits=r, arity=4), lambda f: f.size_in_bits),
        (f"fuse-3 r={r}", lambda k: BinaryFuseFilter.build(k, fingerprint_bits=r, arity=3), lambda f: f.size_in_bits),
        (f"ribbon r={r}", lambda k: RibbonFilter.build(k, fingerprint_bits=r), lambda f: f.size_in_bits),
        (f"ribbon low-mem r={r}", lambda k: RibbonFilter.build(k, fingerprint_bits=r, low_memory=True),
         lambda f: f.size_in_bits),
        (f"ribbon-std r={r}", lambda k: RibbonFilter.build(k, fingerprint_bits=r, bumped=False),
         lambda f: f.size_in_bits),
        (f"bloom fpr=2^-{r}", bloom(BloomFilter), lambda f: f.size_in_bits),
        (f"split-block fpr=2^-{r}", bloom(SplitBlockBloomFilter), lambda f: f.size_in_bits),
    ]


def peers(r: int) -> list[tuple[str, Callable[[Any], Any], Callable[[Any], int]]]:
    out: list[tuple[str, Callable[[Any], Any], Callable[[Any], int]]] = []
    for mod in ("pyfusefilter", "pyxorfilter"):
        try:
            m = __import__(mod)
        except ImportError:
            print(f"{mod} not installed: pip install -e '.[bench]'")
            continue
        PEER_HASH.enter_context(peer_hash(m))  # for the whole run
        for name in (f"Fuse{r}", f"Xor{r}") if mod == "pyfusefilter" else (f"Xor{r}",):
            cls = getattr(m, name)
            if mod == "pyxorfilter":  # Xor8(size).populate(list)
                def build(keys: Any, cls: Any = cls) -> Any:
                    f = cls(len(keys))
                    f.populate(keys)
                    return f
            else:
                def build(keys: Any, cls: Any = cls) -> Any:
                    return cls(keys)
            out.append((f"{mod}.{name}", build, lambda f: 8 * f.size_in_bytes()))
    return out


def bench(label: str, build: Callable[[Any], Any], size: Callable[[Any], int], keys: Any, absent: Any,
          kind: str, r: int, repeats: int, peer: bool) -> dict[str, Any]:
    n, na = len(keys), len(absent)
    f, extra = peak_extra(lambda: build(keys))
    bits = size(f)
    enc = measure(lambda: build(keys), warmup=0, repeats=repeats)
    if peer:
        def query(ks: Any) -> np.ndarray:
            test = f.contains  # pyxorfilter has no __contains__ (``in`` would iterate it)
            return np.fromiter((test(k) for k in ks), dtype=bool, count=len(ks))
    else:
        query = f.contains_many
    hits = query(keys)
    fp = int(query(absent).sum())
    pos = measure(lambda: query(keys), warmup=0, repeats=repeats)
    neg = measure(lambda: query(absent), warmup=0, repeats=repeats)
    stats = f.build_stats() if hasattr(f, "build_stats") else {}
    row = {
        "keys": kind, "structure": label, "num_keys": n, "r": r,
        "build_ns_per_key": enc["min"] / n * 1e9, "build_median_ns": enc["median"] / n * 1e9,
        "pos_ns_per_key": pos["min"] / n * 1e9, "neg_ns_per_key": neg["min"] / na * 1e9,
        "bits_per_key": bits / n, "vs_bound": bits / n / r,
        "peak_extra_bytes_per_key": None if peer else (extra - bits / 8) / n,
        # the target reads peak <= 2 x structure + input: (input + traced peak) / (2 structure + input)
        "peak_vs_target": None if peer or not isinstance(keys, np.ndarray) else
        (keys.nbytes + extra) / (2 * bits / 8 + keys.nbytes),
        "no_false_negatives": bool(hits.all()), "fp": fp, "absent": na, "fpr": fp / na,
        "predicted_fpr": 2.0**-r if "bloom" not in label else float(f.predicted_fpr()),
        "attempts": stats.get("attempts"),
    }
    print(row, flush=True)
    return row


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each structure against the peer of its rate and key kind (pyfusefilter Fuse-r), same run."""
    out = []
    for r in rows:
        base = next((p for p in rows if p["structure"] == f"pyfusefilter.Fuse{r['r']}" and p["keys"] == r["keys"]
                     and p["num_keys"] == r["num_keys"]), None)
        if base is None or r is base:
            continue
        out.append({"keys": r["keys"], "num_keys": r["num_keys"], "structure": r["structure"],
                    "vs": base["structure"], "build": r["build_ns_per_key"] / base["build_ns_per_key"],
                    "pos_query": r["pos_ns_per_key"] / base["pos_ns_per_key"],
                    "neg_query": r["neg_ns_per_key"] / base["neg_ns_per_key"],
                    "bits": r["bits_per_key"] / base["bits_per_key"]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--no-str", action="store_true", help="numpy keys only")
    args = ap.parse_args()
    warm = np.arange(5000, dtype=np.uint64)  # compile (or load) every kernel outside the measurements
    for r in RATES:
        for _label, build, _size in ours(r):
            build(warm).contains_many(warm)
            build([str(k) for k in warm[:100]])
    rows: list[dict[str, Any]] = []
    for n in args.sizes or ([1_000_000] if args.quick else [1_000_000, 10_000_000]):
        rng = np.random.default_rng(n)
        allk = np.unique(rng.integers(0, 2**63 - 1, size=int((n + min(n, 1_000_000)) * 1.01), dtype=np.int64))
        allk = rng.permutation(allk)[: n + min(n, 1_000_000)].astype(np.uint64)
        kinds: list[tuple[str, Any, Any]] = [("numpy uint64", allk[:n], allk[n:])]
        if not args.no_str:
            kinds.append(("list[str]", [f"k{k}" for k in allk[:n].tolist()], [f"k{k}" for k in allk[n:].tolist()]))
        for kind, keys, absent in kinds:
            for r in RATES:
                for label, build, size in ours(r):
                    rows.append(bench(label, build, size, keys, absent, kind, r, args.repeats, False))
                    gc.collect()
                if not args.no_peers:
                    pk = keys.tolist() if isinstance(keys, np.ndarray) else keys
                    pa_ = absent.tolist() if isinstance(absent, np.ndarray) else absent
                    for label, build, size in peers(r):
                        rows.append(bench(label, build, size, pk, pa_, kind, r, max(1, args.repeats - 1), True))
                        gc.collect()
        del kinds
        gc.collect()
    meta = {"versions": versions(["bloomkit", "numpy", "numba", "pyfusefilter", "pyxorfilter", "xxhash"]),
            "bound": "log2(1/fpr) = r bits per key",
            "targets": {"ribbon_vs_bound": 1.05, "fuse4_vs_bound": 1.10, "query_vs_pyfusefilter_numpy": 0.7,
                        "query_vs_pyfusefilter_list": 1.0, "peak_vs_structure": 2.0}}
    rat = ratios(rows)
    write_results("bench_static", rows, meta)
    write_results("bench_static_ratios", rat, meta)
    print(markdown_table(rows, ["keys", "structure", "num_keys", "build_ns_per_key", "pos_ns_per_key", "neg_ns_per_key",
                                "bits_per_key", "vs_bound", "peak_extra_bytes_per_key", "peak_vs_target", "fpr",
                                "attempts"]))
    print(markdown_table(rat))


if __name__ == "__main__":
    main()
