"""Parquet row-group pruning: which of 10 row groups may hold each of 1M keys?

bloomkit reads only the footer and the column's Bloom filters
(:func:`bloomkit.parquet.row_groups_may_contain`); the baselines read the column with pyarrow
and test membership in Python (a ``set`` per row group) or with ``pyarrow.compute.is_in``. For each:
wall time, bytes read from the file (counted by a file wrapper), and how many (row group, key)
pairs it rules out; bloomkit's false positive rate against the exact answer.

    python benchmarks/bench_parquet.py            # 10 row groups x 200k rows, 1M probes
    python benchmarks/bench_parquet.py --quick    # 10 x 20k rows, 100k probes
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bloomkit import parquet
from bloomkit._bench import markdown_table, versions, write_results

ROW_GROUPS = 10
FPP = 0.01


class CountingFile(io.RawIOBase):
    """A read-only binary file that counts the bytes read through it."""

    def __init__(self, path: str) -> None:
        self._fh = open(path, "rb")  # noqa: SIM115 - closed by close()
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        data = self._fh.read(n)
        self.bytes_read += len(data)
        return data

    def readinto(self, b: Any) -> int:
        n = self._fh.readinto(b)
        self.bytes_read += n or 0
        return n or 0

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._fh.seek(pos, whence)

    def tell(self) -> int:
        return self._fh.tell()

    def close(self) -> None:
        self._fh.close()
        super().close()


def make_file(path: str, rows_per_group: int, kind: str, rng: np.random.Generator) -> np.ndarray:
    """A file of ROW_GROUPS row groups: an id column (int64 or str) with a Bloom filter, and a
    payload column; returns the ids."""
    n = rows_per_group * ROW_GROUPS
    ids = rng.choice(2**62, size=n, replace=False).astype(np.int64)
    col = pa.array(ids) if kind == "int64" else pa.array([f"user-{i}" for i in ids])
    table = pa.table({"id": col, "payload": pa.array(rng.standard_normal(n))})
    pq.write_table(table, path, row_group_size=rows_per_group,
                   bloom_filter_options={"id": {"ndv": rows_per_group, "fpp": FPP}})
    return ids


def _probe_keys(ids: np.ndarray, n: int, kind: str, rng: np.random.Generator) -> Any:
    present = rng.choice(ids, size=n // 2, replace=False)
    absent = rng.choice(2**62, size=n - n // 2) + 2**62  # outside the ids' range: never stored
    keys = rng.permutation(np.concatenate([present, absent]).astype(np.int64))
    return keys if kind == "int64" else [f"user-{i}" for i in keys]


def bloomkit_probe(path: str, keys: Any) -> tuple[np.ndarray, int]:
    fh = CountingFile(path)
    try:
        return parquet.row_groups_may_contain(fh, "id", keys), fh.bytes_read
    finally:
        fh.close()


def pyarrow_probe(path: str, keys: Any, test: Callable[[Any, Any], np.ndarray]) -> tuple[np.ndarray, int]:
    fh = CountingFile(path)
    try:
        pf = pq.ParquetFile(fh)
        out = np.zeros((pf.num_row_groups, len(keys)), dtype=bool)
        for rg in range(pf.num_row_groups):
            column = pf.read_row_group(rg, columns=["id"]).column("id")
            out[rg] = test(column, keys)
        return out, fh.bytes_read
    finally:
        fh.close()


def _python_set(column: Any, keys: Any) -> np.ndarray:
    s = set(column.to_pylist())
    items = keys.tolist() if isinstance(keys, np.ndarray) else keys
    return np.fromiter((k in s for k in items), dtype=bool, count=len(items))


def _arrow_is_in(column: Any, keys: Any) -> np.ndarray:
    import pyarrow.compute as pc

    return pc.is_in(pa.array(keys), value_set=column.combine_chunks()).to_numpy(zero_copy_only=False)


def run(rows_per_group: int, probes: int, repeats: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(13)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("int64", "str"):
            path = os.path.join(tmp, f"{kind}.parquet")
            ids = make_file(path, rows_per_group, kind, rng)
            keys = _probe_keys(ids, probes, kind, rng)
            size = os.path.getsize(path)
            md = pq.ParquetFile(path).metadata
            column_bytes = sum(md.row_group(r).column(0).total_compressed_size for r in range(md.num_row_groups))
            filter_bytes = sum(md.row_group(r).column(0).bloom_filter_length for r in range(md.num_row_groups))
            methods: dict[str, Callable[[], tuple[np.ndarray, int]]] = {
                "bloomkit (Bloom filters)": lambda path=path, keys=keys: bloomkit_probe(path, keys),
                "pyarrow column + Python set": lambda path=path, keys=keys: pyarrow_probe(path, keys, _python_set),
                "pyarrow column + pyarrow.compute.is_in": lambda path=path, keys=keys: pyarrow_probe(
                    path, keys, _arrow_is_in),
            }
            truth = None
            for name, fn in methods.items():
                fn()  # warm-up (JIT, page cache)
                times = []
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    hits, nbytes = fn()
                    times.append(time.perf_counter() - t0)
                if truth is None and name != "bloomkit (Bloom filters)":
                    truth = hits
                rows.append({"key type": kind, "probes": probes, "row groups": ROW_GROUPS,
                             "method": name, "seconds (median)": float(np.median(times)),
                             "seconds (min)": min(times), "ns per probe": float(np.median(times)) / probes * 1e9,
                             "bytes read": nbytes, "file bytes": size, "column bytes": column_bytes,
                             "filter bytes": filter_bytes, "pairs ruled out": float(1 - hits.mean()),
                             "_hits": hits})
                print(f"{kind} {name}: {np.median(times):.3f} s, {nbytes} bytes read", flush=True)
            for r in rows[-len(methods):]:
                hits = r.pop("_hits")
                assert truth is not None and not (truth & ~hits).any(), "a false negative"
                absent = ~truth
                r["false positive rate"] = float((hits & absent).sum() / max(1, absent.sum()))
            rows[-len(methods)]["time ratio pyarrow+set / bloomkit"] = (
                rows[-len(methods) + 1]["seconds (median)"] / rows[-len(methods)]["seconds (median)"])
            rows[-len(methods)]["bytes ratio pyarrow / bloomkit"] = (
                rows[-len(methods) + 1]["bytes read"] / rows[-len(methods)]["bytes read"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10 x 20k rows, 100k probes")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows_per_group, probes = (20_000, 100_000) if args.quick else (200_000, 1_000_000)
    rows = run(rows_per_group, probes, args.repeats)
    meta = {"fpp": FPP, "rows per group": rows_per_group, "load average": os.getloadavg(),
            "versions": versions(["bloomkit", "numpy", "numba", "pyarrow"])}
    write_results("bench_parquet", rows, meta)
    print(markdown_table(rows))


if __name__ == "__main__":
    main()
