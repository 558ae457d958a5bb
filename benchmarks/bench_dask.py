"""Scale-out on Dask (issue 15 targets), every ratio measured in one run.

1. ``bloom_filter`` over ``--keys`` str keys ("key:<i>") in ``--partitions`` partitions held
   by the workers (persisted first): build time on a LocalCluster of 1 worker process and of 2,
   the speed-up, and the overhead at 1 worker over the single-process build of the same keys
   (``BloomFilter.for_requirements(n, 0.01).add_many``); the results are checked equal. Also the
   cost of ``capacity=None`` (:func:`bloomkit.dask.distinct_count`, one more pass).
2. Memory per worker while building (2 workers): peak RSS above the idle worker, against the
   bytes of its partitions plus its filter (target <= 1.3x).
3. ``semi_join`` of a ``--left-rows`` left (int64 id + float payload, 10% of the rows match)
   against ``--right-keys`` keys, against dask's merge-based semi-join
   (``left.merge(right[["id"]].drop_duplicates(), on="id")``): time, rows of ``left`` moved, bytes
   moved between workers (task transfers + p2p shuffle comms, from distributed's metrics).
4. The sharded lookup table of ``--table-keys`` keys (``bloomkit.dask.lookup_table``, 2 workers)
   against ``GeometricFilter.build`` of the same keys in one process: bits per key, and
   ``get_many`` of every key exact.

Workers run one dask thread each and ``BLOOMKIT_NUM_THREADS=1`` (the parallelism is dask's);
the single-process baselines also run on one thread. A speed-up is only meaningful on a quiet
machine: the script prints the load average it started and ended with.

    python benchmarks/bench_dask.py [--keys 20000000] [--partitions 32] [--left-rows 20000000]
        [--right-keys 1000000] [--table-keys 20000000] [--repeats 3] [--only bloom,memory,semi,lookup]
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from typing import Any

os.environ.setdefault("BLOOMKIT_NUM_THREADS", "1")  # before bloomkit is imported, here and in the workers

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from bloomkit import BloomFilter, set_num_threads  # noqa: E402
from bloomkit._bench import markdown_table, measure, versions, write_results  # noqa: E402

FPR = 0.01


def _keys(bounds: tuple[int, int]) -> pd.Series:
    lo, hi = bounds
    return pd.Series(np.char.add("key:", np.arange(lo, hi).astype(str)), dtype="string[pyarrow]")


def _bounds(n: int, parts: int) -> list[tuple[int, int]]:
    cuts = np.linspace(0, n, parts + 1).astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def _cluster(workers: int) -> tuple[Any, Any]:
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=40)
    return cluster, Client(cluster)


def _placed(client: Any, fn: Any, bounds: list[tuple[int, int]], **kwargs: Any) -> Any:
    """A dask DataFrame whose partition i is computed on worker i mod W and kept there (as a
    dataset read by all the workers would be, evenly: the placement the measurements assume)."""
    import dask.dataframe as dd
    from distributed import wait

    workers = sorted(client.scheduler_info()["workers"])
    name = f"bench-{fn.__name__.strip('_')}-{os.urandom(4).hex()}"
    futures = [client.submit(fn, b, key=(name, i), workers=[workers[i % len(workers)]], **kwargs)
               for i, b in enumerate(bounds)]
    wait(futures)
    frame = dd.from_delayed(futures, meta=fn((0, 0), **kwargs), verify_meta=False).persist()
    wait(frame)  # persisted where the futures are: bloom_filter sees where each partition lives
    return frame


# -- memory sampling inside the workers (functions sent by value) ------------------------------

def _start_sampler(dask_worker: Any) -> int:
    """Sample this worker's RSS every 5 ms (the state lives on the worker object: functions
    sent with client.run are copies)."""
    import psutil

    proc = psutil.Process()
    state = {"peak": proc.memory_info().rss, "run": True}

    def loop() -> None:
        while state["run"]:
            state["peak"] = max(state["peak"], proc.memory_info().rss)
            time.sleep(0.005)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    dask_worker.bloomkit_sampler = (state, t)
    return int(state["peak"])


def _stop_sampler(dask_worker: Any) -> int:
    state, t = dask_worker.bloomkit_sampler
    state["run"] = False
    t.join()
    return int(state["peak"])


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def _managed(dask_worker: Any) -> int:
    return int(dask_worker.state.nbytes)


# -- 1 and 2: the build ------------------------------------------------------------------------

def bench_build(n: int, parts: int, repeats: int, rows: list[dict[str, Any]], memory: bool) -> None:

    from bloomkit.dask import bloom_filter, distinct_count

    bounds = _bounds(n, parts)
    local_keys = pd.concat([_keys(b) for b in bounds], ignore_index=True)
    set_num_threads(1)

    def local_build() -> BloomFilter:
        f = BloomFilter.for_requirements(n, FPR)
        f.add_many(local_keys)
        return f

    want = local_build()
    t_local = measure(local_build, repeats=repeats)
    rows.append({"case": f"single process, 1 thread ({n:.0e} keys)", "median_s": t_local["median"],
                 "min_s": t_local["min"]})
    set_num_threads(2)
    t_local2 = measure(local_build, repeats=repeats)
    rows.append({"case": "single process, 2 threads", "median_s": t_local2["median"], "min_s": t_local2["min"]})
    set_num_threads(1)
    times = {}
    for workers in (1, 2):
        cluster, client = _cluster(workers)
        try:
            keys = _placed(client, _keys, bounds)
            assert bloom_filter(keys, n, FPR).to_bytes() == want.to_bytes(), "distributed != local"
            t = measure(lambda keys=keys: bloom_filter(keys, n, FPR), repeats=repeats, warmup=0)
            times[workers] = t
            rows.append({"case": f"bloom_filter, {workers} worker(s), {parts} partitions", "median_s": t["median"],
                         "min_s": t["min"]})
            if workers == 2:
                t_hll = measure(lambda keys=keys: distinct_count(keys), repeats=repeats)
                rows.append({"case": "distinct_count (capacity=None's extra pass), 2 workers",
                             "median_s": t_hll["median"], "min_s": t_hll["min"]})
                if memory:
                    bench_memory(client, keys, n, rows)
        finally:
            client.close()
            cluster.close()
    rows.append({"case": "speed-up 2 workers vs 1 (target >= 1.6)", "ratio": times[1]["median"] / times[2]["median"]})
    rows.append({"case": "overhead 1 worker vs single process (target <= 1.3)",
                 "ratio": times[1]["median"] / t_local["median"]})


def bench_memory(client: Any, keys: Any, n: int, rows: list[dict[str, Any]]) -> None:
    from bloomkit.dask import bloom_filter

    filter_bytes = BloomFilter.for_requirements(n, FPR).num_bits // 8
    managed = client.run(_managed)
    before = client.run(_rss)
    for every in (2, 8):
        client.run(_start_sampler)
        bloom_filter(keys, n, FPR, split_every=every)
        peaks = client.run(_stop_sampler)
        for w in sorted(peaks):
            above = peaks[w] - before[w]
            rows.append({"case": f"memory while building (split_every={every}), worker {w.rsplit(':', 1)[-1]}",
                         "partitions_MB": managed[w] / 1e6, "filter_MB": filter_bytes / 1e6,
                         "peak_above_resident_MB": above / 1e6,
                         "ratio": (managed[w] + above) / (managed[w] + filter_bytes)})


# -- 3: semi-join ------------------------------------------------------------------------------

def _left(bounds: tuple[int, int], right_keys: int) -> pd.DataFrame:
    lo, hi = bounds
    i = np.arange(lo, hi, dtype=np.int64)
    return pd.DataFrame({"id": (i * 7919) % (10 * right_keys), "payload": i * 0.5})


def _right(bounds: tuple[int, int]) -> pd.DataFrame:
    lo, hi = bounds
    return pd.DataFrame({"id": np.arange(lo, hi, dtype=np.int64) * 10})


def _moved(client: Any, cluster: Any) -> int:
    """Bytes sent between workers so far: task data transfers + p2p shuffle comms."""
    task = sum(client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total).values())
    metrics = cluster.scheduler.cumulative_worker_metrics
    p2p = metrics.get(("p2p", "background-comms", "process", "bytes"), 0)
    return int(task + p2p)


def _incoming(dask_worker: Any) -> list[tuple[str, int]]:
    """(key name, bytes) of every task output this worker fetched from another one."""
    return [(str(k[0] if isinstance(k, tuple) else k), int(b)) for e in dask_worker.transfer_incoming_log
            for k, b in e["keys"].items()]


def _fetched(client: Any) -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = client.run(_incoming)
    return out


def _fetched_since(client: Any, before: dict[str, list[tuple[str, int]]]) -> list[tuple[str, int]]:
    return [kb for w, log in _fetched(client).items() for kb in log[len(before.get(w, [])):]]


def bench_semi(left_rows: int, right_keys: int, parts: int, repeats: int, rows: list[dict[str, Any]],
               stealing: bool = True) -> None:
    import dask
    from distributed import futures_of, wait

    from bloomkit.dask import semi_join

    with dask.config.set({"distributed.scheduler.work-stealing": stealing}):
        cluster, client = _cluster(2)
    try:
        left = _placed(client, _left, _bounds(left_rows, parts), right_keys=right_keys)
        right = _placed(client, _right, _bounds(right_keys, max(1, parts // 8)))
        ways = {
            "semi_join (Bloom, fpr 0.01)": lambda: semi_join(left, right, "id"),
            "semi_join exact=True (Bloom + merge of the pruned rows)": lambda: semi_join(left, right, "id", exact=True),
            "dask merge-based semi-join": lambda: left.merge(right[["id"]].drop_duplicates(), on="id", how="inner"),
        }
        if not stealing:  # the Bloom path again, on a scheduler that never moves a task's inputs to balance load
            ways = {f"{name}, work stealing off": way for name, way in list(ways.items())[:1]}
        truth = None
        left_names = {str(f.key[0]) for f in futures_of(left)}
        left_bytes = left.memory_usage(deep=True).sum().compute()
        for name, make in ways.items():
            out = make().persist()  # warm-up (compiles, imports)
            wait(out)
            count = len(out)
            del out
            time.sleep(1.0)  # let the metrics of the warm-up reach the scheduler
            moved0 = _moved(client, cluster)
            fetched0 = _fetched(client)
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                out = make().persist()
                wait(out)
                times.append(time.perf_counter() - t0)
                del out
            time.sleep(1.0)
            moved = (_moved(client, cluster) - moved0) / repeats
            left_moved = sum(b for k, b in _fetched_since(client, fetched0) if k in left_names) / repeats
            truth = count if name.startswith("dask") else truth
            shuffled = "every row (p2p)" if name.startswith("dask") else "the pruned rows (p2p)"
            rows.append({"case": name, "median_s": float(np.median(times)), "min_s": min(times),
                         "result_rows": count,
                         "left_rows_moved": round(left_rows * left_moved / left_bytes) if "0.01)" in name
                         else shuffled,
                         "MB_moved_between_workers": moved / 1e6})
        if stealing:
            rows.append({"case": f"left {left_rows:.0e} rows ({left_bytes / 1e6:.0f} MB), "
                                 f"right {right_keys:.0e} keys", "result_rows": truth})
    finally:
        client.close()
        cluster.close()


# -- 4: sharded lookup table -------------------------------------------------------------------

def _pairs(bounds: tuple[int, int]) -> pd.DataFrame:
    lo, hi = bounds
    i = np.arange(lo, hi, dtype=np.int64)
    return pd.DataFrame({"key": pd.Series(np.char.add("key:", i.astype(str)), dtype="string[pyarrow]"),
                         "value": (i * 2654435761) % 65535 + 1})


def bench_lookup(n: int, parts: int, rows: list[dict[str, Any]]) -> None:

    from bloomkit.dask import lookup_table
    from bloomkit.lookup import GeometricFilter

    bounds = _bounds(n, parts)
    local = pd.concat([_pairs(b) for b in bounds], ignore_index=True)
    t0 = time.perf_counter()
    one = GeometricFilter.build(local["key"], local["value"], value_bits=16, fpr=2.0**-16)
    t_local = time.perf_counter() - t0
    cluster, client = _cluster(2)
    try:
        frame = _placed(client, _pairs, bounds)
        t0 = time.perf_counter()
        table = lookup_table(frame["key"], frame["value"], 16, 2.0**-16)
        t_dist = time.perf_counter() - t0
    finally:
        client.close()
        cluster.close()
    got = table.get_many(local["key"])
    exact = bool(np.array_equal(np.asarray(got, dtype=np.int64), local["value"].to_numpy()))
    rows.append({"case": f"GeometricFilter.build, one process ({n:.0e} keys)", "median_s": t_local,
                 "bits_per_key": one.size_in_bits / n})
    rows.append({"case": f"lookup_table, 2 workers, {table.num_shards} shards", "median_s": t_dist,
                 "bits_per_key": table.size_in_bits / n, "get_many_exact": exact,
                 "ratio": table.size_in_bits / one.size_in_bits,
                 "bits_vs_local_pct": 100 * (table.size_in_bits / one.size_in_bits - 1)})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=float, default=2e7)
    ap.add_argument("--partitions", type=int, default=32)
    ap.add_argument("--left-rows", type=float, default=2e7)
    ap.add_argument("--right-keys", type=float, default=1e6)
    ap.add_argument("--table-keys", type=float, default=2e7)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="bloom,memory,semi,lookup")
    ap.add_argument("--out", default="benchmarks/results")
    args = ap.parse_args()
    only = set(args.only.split(","))
    load0 = os.getloadavg()
    rows: list[dict[str, Any]] = []
    if "bloom" in only or "memory" in only:
        bench_build(int(args.keys), args.partitions, args.repeats, rows, "memory" in only)
    if "semi" in only:
        bench_semi(int(args.left_rows), int(args.right_keys), args.partitions, args.repeats, rows)
        bench_semi(int(args.left_rows), int(args.right_keys), args.partitions, args.repeats, rows, stealing=False)
    if "lookup" in only:
        bench_lookup(int(args.table_keys), args.partitions, rows)
    meta = {"args": vars(args), "load_average_start": load0, "load_average_end": os.getloadavg(),
            "versions": versions(["bloomkit", "numpy", "pandas", "pyarrow", "dask", "distributed", "numba"])}
    write_results("bench_dask", rows, meta, args.out)
    print(f"load average at start {load0}, at end {os.getloadavg()}")
    print(markdown_table(rows))


if __name__ == "__main__":
    main()
