"""The ``bloomkit`` command: build, query and inspect every structure; reproduce experiments; bench.

::

    bloomkit build INPUT -o FILE [--kind KIND] [--column C | --columns A,B,..] [--values V] ...
    bloomkit query FILE [KEY ...] [--input FILE|-] [--key-type T] [--level L] [--json]
    bloomkit info FILE [--json] [--timing]
    bloomkit reproduce [--quick | --full] [--only ID ...] [--out DIR]
    bloomkit bench [--keys N]
    bloomkit serve --db PATH --schema SCHEMA.json [--host H] [--port P] | --demo
    bloomkit --version
    bloomkit parquet probe FILE|DIR --column C VALUE... [--json] [--hex]
    bloomkit parquet info FILE [--json]

Argument parsing and dispatch only: the commands live in :mod:`bloomkit._commands`, the
report in :mod:`bloomkit.experiments.report`. Every error is one line
``bloomkit: error: ...`` with exit status 2 (``BLOOMKIT_DEBUG=1`` adds the traceback); every
warning one line ``bloomkit: warning: ...`` (bloomkit's :class:`~bloomkit.BloomkitWarning`
included). Starting is cheap: parsing imports no numba, scipy or pyarrow, and a query of a few
keys of a Bloom, counting or split-block file never does (with the C extension).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

from ._search_mode import DEFAULT_MODE, SEARCH_MODES
from .errors import BloomkitError, BloomkitWarning, InvalidParameterError

__all__ = ["main"]


def _console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


# ---------------------------------------------------------------------------------------------
# reproduce


_EXPERIMENTS_EXTRA = "pip install -e '.[experiments]' (from a checkout; pip install 'bloomkit[experiments]' from an index)"


def _needs_experiments_extra() -> None:
    """InvalidParameterError naming the ``experiments`` extra when a package of it is missing
    (found before ten seconds of experiments fail on it)."""
    import importlib.util

    missing = []
    for m in ("matplotlib", "sklearn", "pybloom_live", "tabulate", "markdown_it"):
        try:
            found = importlib.util.find_spec(m) is not None
        except ImportError:
            found = False
        if not found:
            missing.append(m)
    if missing:
        raise InvalidParameterError(f"bloomkit reproduce needs the 'experiments' extra ({', '.join(missing)} "
                                    f"missing): {_EXPERIMENTS_EXTRA}")


def cmd_reproduce(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    _needs_experiments_extra()
    from .experiments.registry import select
    from .experiments.report import prepare_output, run_experiment, write_report

    out = prepare_output(Path(args.out))  # an unwritable directory: one error line, before any run
    exps = select(args.only)
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


def cmd_bench(args: argparse.Namespace) -> int:
    import numpy as np

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


def _checked(convert: Any, ok: Any, noun: str, rule: str) -> Any:
    """An argparse type: ``convert(text)``, refused unless ``ok`` (``--capacity 0`` is an
    error, never "the default")."""

    def parse(text: str) -> Any:
        try:
            v = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"must be {rule}, got {text}")
        return v

    return parse


_positive_int = _checked(lambda t: int(t, 10), lambda v: v >= 1, "an integer", "at least 1")
_rate = _checked(float, lambda v: 0.0 < v < 1.0, "a number", "in (0, 1)")
_positive = _checked(float, lambda v: 0.0 < v < float("inf"), "a number", "a finite number > 0")


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's one-line errors (``bloomkit: error: ...``, exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"bloomkit: error: {message} (see {self.prog} --help)\n")


class _Version(argparse.Action):
    """``--version``: the version and the path single keys and lists take (C or numba)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and the hash path, then exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from . import info

        about = info()
        print(f"bloomkit {about['version']} ({about['hash_path']})")
        parser.exit(0)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="bloomkit", description=__doc__.split("\n")[0])
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    r = sub.add_parser("reproduce", help="run registered experiments and write a report")
    mode = r.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="scaled-down repetitions (default)")
    mode.add_argument("--full", action="store_true", help="the documents' repetition counts")
    r.add_argument("--only", nargs="+", metavar="ID", help="experiment ids or prefixes (e.g. 000-fig8 001)")
    r.add_argument("--out", default="results", help="output directory (default: results)")
    r.add_argument("--seed", type=int, default=None, help="override every experiment's seed (default: each its own)")
    r.add_argument("--list", action="store_true", help="list experiment ids and exit")
    from ._commands import KINDS
    from ._io import KEY_TYPES

    b = sub.add_parser(
        "build", help="build a structure from a file of keys (text, CSV, TSV, Parquet; gzip; - for stdin)",
        description="Kinds: " + "; ".join(f"{k}: {v.help}" for k, v in KINDS.items()) + ". The structure is sized "
                    "for the data (its distinct keys, read first) and --fpr; --strict fails (exit 2, nothing "
                    "written) when the result predicts a higher rate.",
        epilog="INPUT is read in chunks (memory does not grow with it) and twice when the structure sizes "
               "itself (to count, then to insert): a regular file, or - for standard input (copied to a "
               "temporary file when it is a pipe). FIFOs and devices are refused as INPUT: redirect them "
               "to - instead. A truncated or damaged gzip / bzip2 / xz file is an error; nothing is written.")
    b.add_argument("input", help="text (one key per line), .csv, .tsv or .parquet, optionally gzip / bzip2 / xz; "
                   "- reads stdin")
    b.add_argument("-o", "--output", required=True, help="the file to write (bloomkit container)")
    b.add_argument("--output-mmap", action="store_true",
                   help="bloom / counting / split-block: build straight into the output file through a memory "
                        "map (the filter may be larger than memory; the pages are the file's), renamed onto "
                        "--output once complete")
    b.add_argument("--kind", choices=list(KINDS), default="bloom", help="what to build (default: bloom)")
    b.add_argument("--format", choices=["text", "csv", "tsv", "parquet"], default=None,
                   help="input format (default: from the file name; stdin: text)")
    b.add_argument("--column", default=None, help="the column of keys (required when a table has several)")
    b.add_argument("--columns", default=None, help="pbf / similarity kinds: the attribute / dimension columns, A,B,...")
    b.add_argument("--values", default=None, help="geometric / bloomier: the column of values")
    b.add_argument("--key-type", choices=KEY_TYPES, default=None,
                   help="parse text keys as this type / read the key column as it (default: str for text, "
                        "the column's own type for tables)")
    b.add_argument("--capacity", type=_positive_int, default=None,
                   help="keys (pbf: items) to size for (default: the distinct keys of INPUT; given, INPUT is read once)")
    b.add_argument("--fpr", type=_rate, default=0.01, help="target false positive rate (default 0.01)")
    b.add_argument("--seed", type=int, default=0,
                   help="hash seed (default 0); filters combine (union, ...) only with filters of the same seed")
    b.add_argument("--counter-bits", type=int, default=4, choices=[4, 8, 16, 32], help="counting: bits per counter")
    b.add_argument("--value-bits", type=int, default=None, help="lookup: V, bits per value (default 16)")
    b.add_argument("--lookup-fpr", type=float, default=None, help="lookup: e_o, the rate of absent keys "
                   "answered with a value (default 2^-16)")
    b.add_argument("--on-duplicate", choices=["error", "last", "sum", "max", "min"], default="error",
                   help="lookup: what a repeated key means (default: error)")
    b.add_argument("--w", type=_positive, default=None, help="similarity: the bucket width w (level 0 answers "
                   "'within about w', level 1 'within 2w', ...)")
    b.add_argument("--levels", type=_positive_int, default=3, help="mlbf: distance levels w, 2w, 4w, ... (default 3)")
    b.add_argument("--near", type=_positive, default=None, help="similarity: r1, the distance that must be found "
                   "near (default w/4, where a bucket of width w collides with probability 0.8)")
    b.add_argument("--far", type=_positive, default=None, help="similarity: r2, the distance that must be found far "
                   "(default 10 r1, document 002's Section 6.4)")
    b.add_argument("--fnr", type=_rate, default=0.1, help="similarity: false negative rate at r1 (default 0.1)")
    b.add_argument("--and-width", type=_positive_int, default=None, help="similarity: k, the AND width (default: "
                   "chosen with L for --near/--far/--fnr/--fpr by document 002's Section 6.4)")
    b.add_argument("--or-count", type=_positive_int, default=None, help="mlbf: L, the OR count (default: chosen with k)")
    b.add_argument("--num-bits", type=_positive_int, default=None, help="similarity: m, bits of the main filter")
    b.add_argument("--verify-bits", type=_positive_int, default=None,
                   help="similarity: m', bits of the verification filter (default: sized for --fpr)")
    b.add_argument("--schema", default=None, help="range / profile-index: the schema file (JSON: attributes, "
                   "num_bits, typical range sizes; see docs/serve.md)")
    b.add_argument("--strict", action="store_true", help="warnings are errors (exit 2, nothing written): a predicted "
                   "false positive rate above --fpr, overfill, skipped lines")
    b.add_argument("--json", action="store_true", help="print a JSON summary")
    q = sub.add_parser("query", help="ask a saved structure about keys, items, vectors or records")
    q.add_argument("filter", help="a file written by bloomkit build (or any bloomkit structure's save)")
    q.add_argument("keys", nargs="*", help="keys; pbf items as a,b,c; vectors as 1.5,2,3; ranges as Age=22 or Lat=25:26")
    q.add_argument("--input", help="a text file of queries, one per line (- for stdin; read in chunks)")
    q.add_argument("--key-type", choices=KEY_TYPES, default=None,
                   help="parse the keys as this type (default: the type of key the structure holds)")
    q.add_argument("--level", type=int, default=0, help="similarity: the distance level (0: w, 1: 2w, ...)")
    q.add_argument("--sep", default=",", help="pbf: the separator of an item's attributes (default ,)")
    q.add_argument("--mode", choices=SEARCH_MODES, default=DEFAULT_MODE, help="profile index: search mode")
    q.add_argument("--json", action="store_true", help="print JSON")
    i = sub.add_parser("info", help="parameters, sizes, fill and predicted rates of a saved structure")
    i.add_argument("filter", help="a file written by bloomkit build (Parquet files: bloomkit parquet info)")
    i.add_argument("--json", action="store_true", help="print JSON instead of a table")
    i.add_argument("--verify", action="store_true", help="first check the CRC-32 of the whole file, streaming "
                   "(bloomkit.verify): what opening a mapped filter does not do")
    i.add_argument("--timing", action="store_true", help="also time loading the file, importing the numba kernels and "
                   "the first and second batch query (the first pays numba's start-up)")
    be = sub.add_parser("bench", help="quick throughput check of this machine")
    be.add_argument("--keys", type=_positive_int, default=1_000_000,
                    help="keys added and queried per input kind (default 1000000)")
    # --- bloomkit parquet: bloomkit._parquet_commands (cli_probe / cli_info) ------------------
    pqp = sub.add_parser("parquet", help="query the Bloom filters stored in Parquet files")
    pqs = pqp.add_subparsers(dest="parquet_cmd", required=True, parser_class=_Parser)
    pr = pqs.add_parser("probe", help="which row groups may hold each value")
    pr.add_argument("file", help="a Parquet file or a directory of them")
    pr.add_argument("--column", required=True, help="the column's path (a.b for a nested field)")
    pr.add_argument("values", nargs="+", help="values, parsed by the column's type")
    pr.add_argument("--json", action="store_true", help="JSON output")
    pr.add_argument("--hex", action="store_true", help="binary values are given in hex")
    pin = pqs.add_parser("info", help="the Bloom filter of every column chunk")
    pin.add_argument("file", help="a Parquet file")
    pin.add_argument("--json", action="store_true", help="JSON output")
    dd = sub.add_parser("dedup", help="drop near-duplicate texts (MinHash bands + b-bit verification)")
    dd.add_argument("input", help="a Parquet file (with --column) or a text file, one text per line")
    dd.add_argument("--column", default=None, help="the text column of a Parquet file")
    dd.add_argument("--threshold", type=_rate, default=0.8, help="Jaccard threshold in (0, 1) (default 0.8)")
    dd.add_argument("-o", "--output", default=None, help="write the kept rows here (the input's format)")
    dd.add_argument("--shingle", choices=["char", "word"], default="char", help="shingles (default: char)")
    dd.add_argument("--ngram", type=_positive_int, default=None, help="shingle size (default: 5 chars, 3 words)")
    dd.add_argument("--fnr", type=_rate, default=0.05, help="missed rate at threshold + 0.1 (default 0.05)")
    dd.add_argument("--fpr", type=_rate, default=0.05,
                    help="reported rate at threshold - 0.05 (--no-verify: - 0.2) (default 0.05)")
    dd.add_argument("--no-verify", action="store_true",
                    help="the Bloom filter alone (JaccardLSBF): smaller, more false duplicates near the threshold")
    dd.add_argument("--nulls", choices=["error", "empty"], default="error", help="null texts: error or empty")
    dd.add_argument("--seed", type=int, default=0, help="hash seed (default 0)")
    # argparse only: FastAPI and uvicorn load when `serve` runs
    from .serve.cli import add_arguments as serve_arguments

    serve_arguments(sub.add_parser("serve", help="the matching service of document 000 (HTTP; extra 'serve')"))
    return p


def cmd_parquet(args: argparse.Namespace) -> int:
    """``bloomkit parquet probe|info``: see :func:`bloomkit._parquet_commands.cli_probe` / ``cli_info``."""
    from . import _parquet_commands as PC

    if args.parquet_cmd == "probe":
        return PC.cli_probe(args.file, args.column, args.values, as_json=args.json, hex_bytes=args.hex)
    return PC.cli_info(args.file, as_json=args.json)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; query keys may follow options (``query F --key-type int 42``): argparse
    stops a ``*`` positional at the first option, so the keys after it are collected here."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        if args.cmd != "query" or any(e.startswith("-") and not _is_number(e) for e in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.keys = [*args.keys, *extra]
    return args


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """Warnings as one line each: ``bloomkit: warning: ...`` for bloomkit's own."""
    if issubclass(category, BloomkitWarning):
        print(f"bloomkit: warning: {message}", file=sys.stderr)
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line).rstrip(), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    warnings.showwarning = _show_warning
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
        if args.cmd == "dedup":
            from .similarity.dedup import cli_run as cmd_dedup

            return cmd_dedup(args)
        from ._cmd_info import cmd_info
        from ._cmd_query import cmd_query
        from ._commands import cmd_build

        return {"build": cmd_build, "query": cmd_query, "info": cmd_info, "bench": cmd_bench,
                "parquet": cmd_parquet}[args.cmd](args)
    except KeyboardInterrupt:
        print("bloomkit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `bloomkit query ... | head`: the reader left; not an error
        sys.stderr.close()
        return 0
    except Exception as e:  # one line, never a traceback (BLOOMKIT_DEBUG=1 shows it)
        if os.environ.get("BLOOMKIT_DEBUG"):
            traceback.print_exc()
        print(f"bloomkit: error: {_describe(e)}", file=sys.stderr)
        return 2


def _describe(e: BaseException) -> str:
    """The error as one line: bloomkit's own messages as they are, others with their type."""
    text = " ".join(str(e).split()) or type(e).__name__
    if isinstance(e, BloomkitError):
        return text
    if isinstance(e, OSError) and e.filename is not None:
        return f"{e.filename}: {e.strerror or text}"
    return f"{text} ({type(e).__name__})"


if __name__ == "__main__":
    sys.exit(main())
