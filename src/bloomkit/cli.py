"""The ``bloomkit`` command: reproduce experiments, build / query / inspect saved filters, bench.

::

    bloomkit reproduce [--quick | --full] [--only ID ...] [--out DIR]
    bloomkit build KEYS_FILE -o FILTER [--fpr F] [--capacity N] [--column NAME] [--counting]
    bloomkit query FILTER [KEY ...] [--input FILE]
    bloomkit info FILTER
    bloomkit bench [--keys N]
    bloomkit serve --db PATH --schema SCHEMA.json [--host H] [--port P] | --demo
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from .errors import BloomkitError

__all__ = ["main"]


def _console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


# ---------------------------------------------------------------------------------------------
# reproduce


def cmd_reproduce(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from .experiments.registry import select
    from .experiments.report import run_experiment, write_report

    exps = select(args.only)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    quick = not args.full
    runs = []
    console = _console()
    with Progress(
        TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(), console=console, disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("reproduce", total=len(exps))
        for exp in exps:
            progress.update(task, description=f"{exp.id}")
            run = run_experiment(exp, out, quick=quick, seed=args.seed)
            runs.append(run)
            if run.result is None:
                console.print(f"[red]{exp.id} failed: {run.verdict.reason}")
            elif not console.is_terminal:
                console.print(f"{exp.id} done in {run.result.seconds:.1f} s (+{run.result.jit_seconds:.1f} s JIT)")
            progress.advance(task)
    md, page = write_report(out, runs, quick=quick)
    print(f"report: {md.resolve()} and {page.name}")
    failures = [r.experiment.id for r in runs if r.result is None]
    if failures:
        print(f"failed experiments: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------------------------
# build / query / info


def _read_keys(path: str, column: str | None) -> Any:
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(p)
        col = column or table.column_names[0]
        return table.column(col).combine_chunks()
    if suffix == ".csv":
        import pyarrow.csv as pacsv

        table = pacsv.read_csv(p, convert_options=pacsv.ConvertOptions(strings_can_be_null=False))
        col = column or table.column_names[0]
        arr = table.column(col)
        import pyarrow as pa

        return arr.cast(pa.string()).combine_chunks()
    return p.read_text(encoding="utf-8").splitlines()


def cmd_build(args: argparse.Namespace) -> int:
    from .bloom import BloomFilter, CountingBloomFilter

    keys = _read_keys(args.keys, args.column)
    n = len(keys)
    if n == 0:
        raise BloomkitError(f"no keys in {args.keys}")
    cls = CountingBloomFilter if args.counting else BloomFilter
    bf = cls(capacity=args.capacity or n, fpr=args.fpr, seed=args.seed)
    bf.add_many(keys)
    bf.save(args.output)
    print(f"{cls.__name__}: {n} keys, {bf.num_bits} bits, k={bf.num_hashes} -> {args.output}")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    from . import load

    f = load(args.filter)
    keys: list[Any] = list(args.keys)
    if args.input:
        keys += Path(args.input).read_text(encoding="utf-8").splitlines()
    if not keys:
        raise BloomkitError("give keys as arguments or with --input")
    hits = f.contains_many(keys)
    for k, h in zip(keys, hits, strict=True):
        print(f"{k}\t{'maybe' if h else 'no'}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from . import load
    from ._format import unpack
    from ._hashing import hash_name

    raw = Path(args.filter).read_bytes()
    c = unpack(raw)
    f = load(args.filter)
    info: dict[str, Any] = {
        "structure": c.structure,
        "format_version": c.version,
        "hash": hash_name(c.hash_id),
        "seed": c.seed,
        "bytes": len(raw),
        "params": c.params,
    }
    for name in ("fill_ratio", "estimated_count", "predicted_fpr"):
        fn = getattr(f, name, None)
        if callable(fn):
            try:
                info[name] = fn()
            except TypeError:
                pass
    print(json.dumps(info, indent=2, default=str))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from ._bench import markdown_table, measure
    from .bloom import BloomFilter

    n = args.keys
    rng = np.random.default_rng(1)
    arr = rng.integers(0, 2**62, n)
    strs = [f"key-{i}" for i in range(n)]
    rows = []
    for label, keys in (("numpy int64", arr), ("list[str]", strs)):
        bf = BloomFilter(capacity=n, fpr=0.01)
        t_add = measure(partial(bf.add_many, keys), warmup=1, repeats=3)
        t_q = measure(partial(bf.contains_many, keys), warmup=1, repeats=3)
        rows.append({"input": label, "keys": n, "add ns/key": t_add["median"] / n * 1e9,
                     "query ns/key": t_q["median"] / n * 1e9})
    print(markdown_table(rows))
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bloomkit", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("reproduce", help="run registered experiments and write a report")
    mode = r.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="scaled-down repetitions (default)")
    mode.add_argument("--full", action="store_true", help="the documents' repetition counts")
    r.add_argument("--only", nargs="+", metavar="ID", help="experiment ids or prefixes (e.g. 000-fig8 001)")
    r.add_argument("--out", default="results", help="output directory (default: results)")
    r.add_argument("--seed", type=int, default=None, help="override every experiment's seed")
    r.add_argument("--list", action="store_true", help="list experiment ids and exit")
    b = sub.add_parser("build", help="build a Bloom filter from a text/CSV/parquet file of keys")
    b.add_argument("keys", help="keys: text (one per line), .csv or .parquet")
    b.add_argument("-o", "--output", required=True)
    b.add_argument("--fpr", type=float, default=0.01)
    b.add_argument("--capacity", type=int, default=None, help="default: number of keys")
    b.add_argument("--column", default=None, help="column of a CSV/parquet file")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--counting", action="store_true", help="counting Bloom filter")
    q = sub.add_parser("query", help="query a saved filter")
    q.add_argument("filter")
    q.add_argument("keys", nargs="*")
    q.add_argument("--input", help="file of keys, one per line")
    i = sub.add_parser("info", help="parameters, fill and predicted FPR of a saved structure")
    i.add_argument("filter")
    be = sub.add_parser("bench", help="quick throughput check of this machine")
    be.add_argument("--keys", type=int, default=1_000_000)
    # argparse only: FastAPI and uvicorn load when `serve` runs
    from .serve.cli import add_arguments as serve_arguments

    serve_arguments(sub.add_parser("serve", help="the matching service of document 000 (HTTP; extra 'serve')"))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.cmd == "reproduce":
            if args.list:
                from .experiments.registry import all_experiments

                for e in all_experiments():
                    print(f"{e.id}\t{e.title}\t({e.source})")
                return 0
            return cmd_reproduce(args)
        if args.cmd == "serve":
            from .serve.cli import run as cmd_serve

            return cmd_serve(args)
        return {"build": cmd_build, "query": cmd_query, "info": cmd_info, "bench": cmd_bench}[args.cmd](args)
    except (BloomkitError, OSError) as e:
        print(f"bloomkit: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
