"""Filters mapped from files (issue 22) vs loading them, and vs the file-backed peers.

Peers (pinned in the ``bench`` extra and constraints.txt): pybloomfiltermmap3 (mmap-backed
file) and pyprobables' ``BloomFilterOnDisk``. Every timed step of sections 1, 2 and 5 runs in a
fresh child process, which reports its time and memory (VmRSS / VmHWM of /proc/self/status).

1. ``open`` vs ``load`` vs ``save`` of BloomFilter files of several sizes (1M keys in each):
   seconds and RSS growth (peak for load / save), with the file's pages dropped from the page
   cache first (``posix_fadvise DONTNEED``: cold) and resident (warm). ``--before SRC`` runs
   load / save with the code of another checkout too (e.g. ``/work/main/src``).
2. Queries and adds: the same filter in memory, created in a file (``create``), mapped read-only
   with its pages resident, pybloomfiltermmap3 and pyprobables ``BloomFilterOnDisk`` on files of
   the same capacity and rate; ``list[str]`` keys, batch and single-key loop; ns/key and the ratio
   of each to bloomkit in memory / mapped.
3. Page-cache misses: random single-key queries of a mapped file whose pages were dropped,
   against the same queries once resident.
4. Processes sharing a read-only mapping: P children map one file and query keys spread over
   all of it; the Rss and Pss of the file's mapping in each (/proc/PID/smaps): Pss sums to one file, not P.
5. ``--big CAPACITY``: ``create(capacity, fpr=0.01)`` in ``--dir``, ``--big-keys`` numpy int64
   keys added in batches of ``--big-batch``, closed, opened (time, RSS growth), all queried back
   (false negatives counted), ``--big-absent`` never-added keys queried (false positives against
   the model's binomial band); each step's wall time, user / system CPU, minor / major faults,
   RSS, RssAnon, RssFile and peak RSS. ``--big-path plain`` runs the plain kernels on the
   mapping instead of the page-ordered batches (the comparison of docs/mapped.md).

    python benchmarks/bench_mmap.py --quick
    python benchmarks/bench_mmap.py --sizes 64M,1G --before /work/main/src
    python benchmarks/bench_mmap.py --sections 5 --big 1e9 --big-keys 2e7 --big-batch 2e7 --big-path plain
    python benchmarks/bench_mmap.py --sections 5 --big 2e10 --big-keys 1e8 --big-batch 1e8 --dir /work/tmp
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

from bloomkit._bench import markdown_table, measure, versions, write_results

FPR = 0.01
PEERS = ["bloomkit", "pybloomfiltermmap3", "pyprobables"]


def _size(text: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * mult[text[-1].upper()]) if text[-1].upper() in mult else int(text)


def _status() -> dict[str, int]:
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile")):
                k, v = line.split(":")
                out[k] = int(v.split()[0]) * 1024
    return out


def _drop_cache(path: str | Path) -> None:
    """Drop the file's clean pages from the page cache (this file only: others' caches stay)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


CHILD = textwrap.dedent("""
    import json, os, sys, time
    if sys.argv[3]:
        sys.path.insert(0, sys.argv[3])
    import numpy as np
    import bloomkit
    def status():
        out = {}
        for line in open("/proc/self/status"):
            if line.startswith(("VmRSS", "VmHWM")):
                k, v = line.split(":"); out[k] = int(v.split()[0]) * 1024
        return out
    what, path = sys.argv[1], sys.argv[2]
    probe = np.arange(1000)
    if what == "save":
        f = bloomkit.load(path)
    bloomkit.BloomFilter(capacity=10, fpr=0.1).contains_many(probe)  # numba's start-up, outside the timing
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # VmHWM := VmRSS: the peak of this step only
    before = status()
    t0 = time.perf_counter()
    if what == "open":
        f = bloomkit.open(path)
    elif what == "load":
        f = bloomkit.load(path)
    else:
        f.save(path + ".saved")
    secs = time.perf_counter() - t0
    after = status()
    if what != "save":
        assert f.contains_many(probe).all()
    else:
        os.unlink(path + ".saved")
    print(json.dumps({"seconds": secs, "rss_growth": after["VmRSS"] - before["VmRSS"],
                      "peak_growth": after["VmHWM"] - before["VmRSS"]}))
""")


def _child(what: str, path: str, before: str = "") -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", CHILD, what, path, before], capture_output=True, text=True,
                         check=False, env={**os.environ, "BLOOMKIT_NUM_THREADS": "1"})
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def section_open_load(folder: Path, sizes: list[int], before: str | None, repeats: int) -> list[dict[str, Any]]:
    import bloomkit

    rows = []
    for size in sizes:
        path = folder / f"open{size}.bkf"
        with bloomkit.BloomFilter.create(path, num_bits=size * 8, num_hashes=7) as f:
            f.add_many(np.arange(1_000_000))
        for code, label in [("", "this branch"), *([(before, "before")] if before else [])]:
            steps = ["open", "load", "save"] if code == "" else ["load", "save"]
            for what in steps:
                for cache in ("cold", "warm"):
                    if what == "save" and cache == "warm":
                        continue
                    runs = []
                    for _ in range(repeats):
                        if cache == "cold":
                            _drop_cache(path)
                        runs.append(_child(what, str(path), code))
                    secs = sorted(r["seconds"] for r in runs)
                    rows.append({"file_MiB": round(os.path.getsize(path) / 2**20, 1), "code": label, "step": what,
                                 "cache": cache, "median_s": secs[len(secs) // 2], "min_s": secs[0],
                                 "rss_growth_MiB": round(min(r["rss_growth"] for r in runs) / 2**20, 1),
                                 "peak_growth_MiB": round(min(r["peak_growth"] for r in runs) / 2**20, 1)})
                    print(rows[-1], flush=True)
        path.unlink()
    return rows


def _peer_files(folder: Path, n: int) -> dict[str, Any]:
    """name -> (make() -> (add_batch, contains_batch, add_one, contains_one, cleanup))."""
    import bloomkit

    out: dict[str, Any] = {}

    def mem() -> Any:
        f = bloomkit.BloomFilter(capacity=n, fpr=FPR)
        return f.add_many, f.contains_many, f.add, f.__contains__, lambda: None

    def created() -> Any:
        p = folder / "created.bkf"
        f = bloomkit.BloomFilter.create(p, capacity=n, fpr=FPR, overwrite=True)
        return f.add_many, f.contains_many, f.add, f.__contains__, lambda: (f.close(), p.unlink())

    out["bloomkit in memory"] = mem
    out["bloomkit create (file, r+)"] = created
    try:
        import pybloomfilter

        def pm() -> Any:
            p = folder / "pm.bloom"
            f = pybloomfilter.BloomFilter(n, FPR, str(p))
            return (f.update, lambda keys: np.fromiter((k in f for k in keys), bool, len(keys)), f.add,
                    f.__contains__, lambda: (f.close(), p.unlink()))

        out["pybloomfiltermmap3 (file)"] = pm
    except ImportError:
        pass
    try:
        from probables import BloomFilterOnDisk

        def pp() -> Any:
            p = folder / "pp.bloom"
            f = BloomFilterOnDisk(str(p), est_elements=n, false_positive_rate=FPR)

            def add(keys: Any) -> None:
                a = f.add
                for k in keys:
                    a(k)

            def close() -> None:
                f.close()
                p.unlink()

            return add, lambda keys: np.fromiter((f.check(k) for k in keys), bool, len(keys)), f.add, f.check, close

        out["pyprobables BloomFilterOnDisk (file)"] = pp
    except ImportError:
        pass
    return out


def section_ops(folder: Path, n: int, repeats: int) -> list[dict[str, Any]]:
    import bloomkit

    keys = [f"key-{i}" for i in range(n)]
    absent = [f"absent-{i}" for i in range(n)]
    rows: list[dict[str, Any]] = []
    all_keys, all_absent = keys, absent
    for name, make in _peer_files(folder, n).items():
        slow = "pyprobables" in name  # about 3 ms per add (it writes the file each time): 2,000 keys
        reps = 1 if slow else repeats
        keys, absent = (all_keys[:2000], all_absent[:2000]) if slow else (all_keys, all_absent)
        m = len(keys)
        state: dict[str, Any] = {}

        def fresh(make: Any = make, state: dict[str, Any] = state) -> None:
            if "close" in state:
                state["close"]()
            state["add"], state["has"], state["add1"], state["has1"], state["close"] = make()

        add = measure(lambda s=state, ks=keys: s["add"](ks), setup=fresh, warmup=0 if slow else 1, repeats=reps)
        hit = measure(lambda s=state, ks=keys: s["has"](ks), warmup=0 if slow else 1, repeats=reps)
        miss = measure(lambda s=state, ks=absent: s["has"](ks), warmup=0, repeats=reps)

        def loop(s: dict[str, Any] = state, ks: list[str] = keys) -> None:
            h = s["has1"]
            for k in ks:
                h(k)

        one = measure(loop, warmup=0 if slow else 1, repeats=reps)
        assert state["has"](keys).all()
        rows.append({"filter": name, "keys": m, "add_many_ns": add["median"] / m * 1e9,
                     "query_hit_ns": hit["median"] / m * 1e9, "query_miss_ns": miss["median"] / m * 1e9,
                     "in_loop_ns": one["median"] / m * 1e9, "fpr": float(state["has"](absent).mean())})
        state["close"]()
        print(rows[-1], flush=True)
    keys, absent = all_keys, all_absent
    # the created file, closed and mapped read-only with its pages resident
    p = folder / "ro.bkf"
    with bloomkit.BloomFilter.create(p, capacity=n, fpr=FPR) as f:
        f.add_many(keys)
    with bloomkit.open(p) as g:
        g.contains_many(keys)  # resident
        hit = measure(lambda: g.contains_many(keys), repeats=repeats)
        miss = measure(lambda: g.contains_many(absent), repeats=repeats)

        def loop() -> None:
            for k in keys:
                k in g  # noqa: B015

        one = measure(loop, repeats=repeats)
        rows.append({"filter": "bloomkit open (file, r, resident)", "keys": n, "add_many_ns": None,
                     "query_hit_ns": hit["median"] / n * 1e9, "query_miss_ns": miss["median"] / n * 1e9,
                     "in_loop_ns": one["median"] / n * 1e9, "fpr": float(g.contains_many(absent).mean())})
    p.unlink()
    base = rows[0]
    for r in rows:
        for col in ("add_many_ns", "query_hit_ns", "query_miss_ns", "in_loop_ns"):
            if r.get(col) is not None and base.get(col):
                r[col.replace("_ns", "_vs_memory")] = r[col] / base[col]
    return rows


def section_cold(folder: Path, size: int, queries: int) -> list[dict[str, Any]]:
    import bloomkit

    path = folder / "cold.bkf"
    with bloomkit.BloomFilter.create(path, num_bits=size * 8, num_hashes=7) as f:
        f.add_many(np.arange(1_000_000))
    rows = []
    probe = np.random.default_rng(1).integers(0, 1 << 62, queries)
    for cache in ("cold", "warm"):
        if cache == "cold":
            _drop_cache(path)
        with bloomkit.open(path) as g:
            if cache == "warm":
                g.contains_many(np.arange(2_000_000))  # bring pages in
                np.bitwise_or.reduce(g.bits.words)
            t0 = time.perf_counter()
            for k in probe.tolist():
                k in g  # noqa: B015
            secs = time.perf_counter() - t0
        rows.append({"file_MiB": round(os.path.getsize(path) / 2**20), "pages": cache, "queries": queries,
                     "us_per_query": secs / queries * 1e6})
        print(rows[-1], flush=True)
    path.unlink()
    return rows


SHARE = textwrap.dedent("""
    import sys, numpy as np, bloomkit
    f = bloomkit.open(sys.argv[1])
    f.contains_many(np.random.default_rng(int(sys.argv[2])).integers(0, 1 << 62, 2_000_000))
    np.bitwise_or.reduce(f.bits.words)  # every page of the file
    sys.stdout.write("ready\\n"); sys.stdout.flush()
    sys.stdin.readline()
""")


def section_share(folder: Path, size: int, procs: int) -> list[dict[str, Any]]:
    import bloomkit

    path = folder / "share.bkf"
    with bloomkit.BloomFilter.create(path, num_bits=size * 8, num_hashes=7) as f:
        f.add_many(np.arange(1_000_000))
    children = [subprocess.Popen([sys.executable, "-c", SHARE, str(path), str(i)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True) for i in range(procs)]
    rows = []
    for c in children:
        assert c.stdout is not None and c.stdout.readline().strip() == "ready"
    for c in children:  # the mapping of the file in each child's /proc/PID/smaps
        vals = dict.fromkeys(("Rss", "Pss", "Shared_Clean", "Private_Clean", "Private_Dirty"), 0)
        inside = False
        with open(f"/proc/{c.pid}/smaps") as fh:
            for line in fh:
                head = line.split()
                if head and "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
                    inside = line.rstrip().endswith(str(path))
                elif inside and head and head[0].rstrip(":") in vals:
                    vals[head[0].rstrip(":")] += int(head[1]) * 1024
        rows.append({"file_MiB": round(os.path.getsize(path) / 2**20), "process": c.pid,
                     **{f"{k}_MiB": round(v / 2**20, 1) for k, v in vals.items()}})
    for c in children:
        c.communicate("\n", timeout=60)
    total = {"file_MiB": rows[0]["file_MiB"], "process": f"sum of {procs}",
             **{k: round(sum(r[k] for r in rows), 1) for k in rows[0] if k.endswith("_MiB") and k != "file_MiB"}}
    rows.append(total)
    for r in rows:
        print(r, flush=True)
    path.unlink()
    return rows


def _usage() -> dict[str, float]:
    import resource

    u = resource.getrusage(resource.RUSAGE_SELF)
    return {"user_s": u.ru_utime, "sys_s": u.ru_stime, "minor_faults": u.ru_minflt, "major_faults": u.ru_majflt}


def section_big(folder: Path, capacity: int, nkeys: int, absent: int, batch: int, path_kind: str) -> list[dict[str, Any]]:
    """Section 5: a BloomFilter of ``capacity`` at 1% built into a file with ``add_many`` (batches
    of ``batch`` numpy int64 keys), closed, opened, every key queried back, ``absent`` others
    queried; ``path_kind`` "ordered" (the default: page-ordered batches from ORDERED_MIN_BYTES)
    or "plain" (ORDERED_MIN_BYTES raised past the file: the in-memory kernels on the mapping)."""
    import bloomkit
    import bloomkit._mapped as mapped
    from bloomkit import theory

    if path_kind == "plain":
        mapped.ORDERED_MIN_BYTES = 1 << 62
    path = folder / "big.bkf"
    rows: list[dict[str, Any]] = []
    last = _usage()

    def row(step: str, secs: float, **extra: Any) -> None:
        nonlocal last
        st, now = _status(), _usage()
        rows.append({"path": path_kind, "step": step, "seconds": round(secs, 2),
                     **{k: round(now[k] - last[k], 2) for k in now},
                     "rss_GiB": round(st["VmRSS"] / 2**30, 3), "rss_anon_GiB": round(st["RssAnon"] / 2**30, 3),
                     "rss_file_GiB": round(st["RssFile"] / 2**30, 3), "peak_rss_GiB": round(st["VmHWM"] / 2**30, 3),
                     "load": round(os.getloadavg()[0], 1), **extra})
        last = now
        print(rows[-1], flush=True)

    bloomkit.BloomFilter(capacity=10, fpr=0.1).contains_many(np.arange(10))  # numba's start-up
    t0 = time.perf_counter()
    f = bloomkit.BloomFilter.create(path, capacity=capacity, fpr=FPR)
    row("create", time.perf_counter() - t0, file_GiB=round(os.path.getsize(path) / 2**30, 2),
        num_bits=f.num_bits, num_hashes=f.num_hashes)
    t0 = time.perf_counter()
    for lo in range(0, nkeys, batch):
        f.add_many(np.arange(lo, min(nkeys, lo + batch), dtype=np.int64))
    row("add_many", time.perf_counter() - t0, keys=nkeys, batch=batch)
    t0 = time.perf_counter()
    f.flush()
    row("flush", time.perf_counter() - t0)
    t0 = time.perf_counter()
    f.close()
    row("close (CRC)", time.perf_counter() - t0)
    before = _status()["VmRSS"]
    t0 = time.perf_counter()
    g = bloomkit.open(path)
    row("open", time.perf_counter() - t0, rss_growth_MiB=round((_status()["VmRSS"] - before) / 2**20, 2))
    t0 = time.perf_counter()
    missing = 0
    for lo in range(0, nkeys, batch):
        missing += int((~g.contains_many(np.arange(lo, min(nkeys, lo + batch), dtype=np.int64))).sum())
    row("query added", time.perf_counter() - t0, keys=nkeys, false_negatives=missing)
    t0 = time.perf_counter()
    fp = 0
    for lo in range(0, absent, batch):
        fp += int(g.contains_many(np.arange((1 << 62) + lo, (1 << 62) + min(absent, lo + batch), dtype=np.int64)).sum())
    pred = float(theory.false_positive_rate(nkeys, g.num_bits, g.num_hashes))
    sd = (absent * pred * (1 - pred)) ** 0.5
    row("query absent", time.perf_counter() - t0, absent=absent, false_positives=fp,
        predicted=round(pred * absent, 1), band_4sd=[round(pred * absent - 4 * sd, 1), round(pred * absent + 4 * sd, 1)],
        in_band=bool(abs(fp - pred * absent) <= 4 * sd))
    g.close()
    path.unlink()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="64 MiB files, 200k keys")
    ap.add_argument("--sections", default="1,2,3,4")
    ap.add_argument("--sizes", default="64M,1G", help="file sizes of sections 1, 3, 4")
    ap.add_argument("--keys", type=float, default=1e6, help="keys of section 2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--before", default=None, help="src folder of another checkout for section 1")
    ap.add_argument("--big", type=float, default=1e9, help="capacity of section 5")
    ap.add_argument("--big-keys", type=float, default=1e8)
    ap.add_argument("--big-absent", type=float, default=1e7)
    ap.add_argument("--big-batch", type=float, default=5e7, help="keys per add_many / contains_many call of section 5")
    ap.add_argument("--big-path", choices=["ordered", "plain"], default="ordered",
                    help="section 5: page-ordered batches (default) or the plain kernels on the mapping")
    ap.add_argument("--dir", default=None, help="folder of the files (default: a temporary one)")
    ap.add_argument("--out", default="benchmarks/results")
    args = ap.parse_args()
    sizes = [_size(s) for s in args.sizes.split(",")]
    if args.quick:
        sizes, args.keys, args.repeats = [64 << 20], 2e5, 2
    folder = Path(tempfile.mkdtemp(prefix="bench_mmap.", dir=args.dir))
    sections = {int(s) for s in args.sections.split(",")}
    rows: list[dict[str, Any]] = []
    load = os.getloadavg()
    vmstat = subprocess.run(["vmstat", "1", "2"], capture_output=True, text=True, check=False).stdout
    try:
        if 1 in sections:
            rows += [{"section": "1 open / load / save", **r} for r in section_open_load(folder, sizes, args.before, args.repeats)]
        if 2 in sections:
            rows += [{"section": "2 queries and adds", **r} for r in section_ops(folder, int(args.keys), args.repeats)]
        if 3 in sections:
            rows += [{"section": "3 page-cache misses", **r} for r in section_cold(folder, sizes[-1], 20_000)]
        if 4 in sections:
            rows += [{"section": "4 shared mapping", **r} for r in section_share(folder, sizes[-1], args.procs)]
        if 5 in sections:
            rows += [{"section": "5 big", **r} for r in section_big(folder, int(args.big), int(args.big_keys), int(args.big_absent),
                                                                  int(args.big_batch), args.big_path)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    meta = {"load_before": load, "load_after": os.getloadavg(), "args": vars(args), "vmstat_before": vmstat,
            "vmstat_after": subprocess.run(["vmstat", "1", "2"], capture_output=True, text=True, check=False).stdout,
            "versions": versions(["numpy", "numba", "pybloomfiltermmap3", "pyprobables"])}
    for sec in dict.fromkeys(r["section"] for r in rows):
        print(f"\n## {sec}\n" + markdown_table([{k: v for k, v in r.items() if k != "section"} for r in rows if r["section"] == sec]))
    print(write_results("bench_mmap", rows, meta, args.out))


if __name__ == "__main__":
    main()
