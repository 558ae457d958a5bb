"""The ``build``, ``query`` and ``info`` commands of the CLI: one per structure kind, dispatching
on the protocols (:mod:`bloomkit._protocols`). ``bloomkit.cli`` parses arguments and calls these.

Output is one line per key (``key<TAB>answer``) or, with ``--json``, one JSON document.
Warnings go to standard error as ``bloomkit: warning: ...`` (bloomkit's own
:class:`~bloomkit.errors.BloomkitWarning` included); ``build --strict`` makes them errors.

``build`` reads its input in chunks (:class:`bloomkit._io.KeyInput`): a first pass counts the
distinct keys (and, for vectors, their bounding box) so that every kind sizes itself for the
data and ``--fpr``; a second pass inserts. A progress bar appears on standard error when a
build takes more than about two seconds and standard error is a terminal; a summary line ends
every build.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._io import KEY_TYPES, Chunk, DistinctCounter, InputError, KeyInput, concat_batches, parse_key
from ._registry import ENTRIES, Entry, load_class, with_capability
from .errors import BloomkitError, BloomkitWarning, InvalidParameterError

__all__ = ["KINDS", "cmd_build", "cmd_info", "cmd_query", "warn"]


class StrictError(BloomkitError):
    """A warning that ``--strict`` turns into an error."""


def warn(msg: str, args: argparse.Namespace | None = None) -> None:
    """Print ``bloomkit: warning: msg`` (or fail with it under ``--strict``)."""
    if args is not None and getattr(args, "strict", False):
        raise StrictError(f"{msg} (--strict)")
    print(f"bloomkit: warning: {msg}", file=sys.stderr)


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, bytes):
        return v.decode("utf-8", "backslashreplace")
    if isinstance(v, np.ndarray):
        return v.tolist()
    return str(v)


def _emit(args: argparse.Namespace, doc: Any, lines: list[str]) -> None:
    if getattr(args, "json", False):
        print(json.dumps(doc, default=_jsonable, indent=None if isinstance(doc, list) else 2))
    else:
        for line in lines:
            print(line)


# ---------------------------------------------------------------------------------------------
# progress


class _Progress:
    """A progress bar on standard error (rich), shown once a build has run for
    :attr:`DELAY` seconds, only when standard error is a terminal (``BLOOMKIT_PROGRESS=1``
    forces it, ``0`` turns it off). Counts the input's bytes (Parquet: rows) in each pass."""

    DELAY = 2.0

    def __init__(self, inp: KeyInput) -> None:
        self.inp = inp
        self.t0 = time.perf_counter()
        force = os.environ.get("BLOOMKIT_PROGRESS", "")
        self.enabled = force == "1" or (force != "0" and sys.stderr.isatty())
        self.delay = 0.0 if force == "1" else self.DELAY
        self.bar: Any = None
        self.task: Any = None
        self.label = ""

    def phase(self, label: str) -> None:
        self.label = label
        if self.bar is not None:
            self.bar.reset(self.task, description=label, total=self.inp.total)

    def update(self) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.perf_counter() - self.t0 < self.delay:
                return
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            console = Console(stderr=True, force_terminal=True if self.delay == 0.0 else None)
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                                TimeElapsedColumn(), console=console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.inp.total)
        self.bar.update(self.task, description=self.label, completed=self.inp.position(), total=self.inp.total)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


# ---------------------------------------------------------------------------------------------
# build: the first pass (what the data holds) and the kinds


@dataclass
class Scan:
    """What the first pass found: rows, distinct keys (or items) and, for vectors, the box."""

    rows: int = 0
    distinct: int | None = None
    exact: bool = True
    capacity: int = 1
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None


@dataclass
class Built:
    """A structure and what went into it."""

    obj: Any
    rows: int
    scan: Scan | None = None


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One 64-bit hash of the pairs (a_i, b_i) (SplitMix64's finaliser of a * golden ^ b)."""
    x: np.ndarray = (a * _GOLDEN) ^ b
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _chunks(inp: KeyInput, prog: _Progress, label: str, column: str | None, extra: list[str],
            key_type: str | None) -> Iterator[Chunk]:
    prog.phase(label)
    for chunk in inp.chunks(column, extra, key_type):
        yield chunk
        prog.update()


def _scan_keys(inp: KeyInput, prog: _Progress, args: argparse.Namespace, column: str | None,
               items: list[str] | None = None) -> Scan:
    """First pass: rows and distinct keys (``items``: distinct tuples of those columns)."""
    from ._engine.hashing import hash_keys

    counter = DistinctCounter()
    rows = 0
    extra = (items or [])[1:]
    for ch in _chunks(inp, prog, f"counting the keys of {inp.source}", column, extra, args.key_type):
        h = hash_keys(ch.keys, 0)[0]
        for c in extra:
            h = _mix(h, hash_keys(ch.columns[c], 0)[0])
        counter.add(h)
        rows += ch.rows
    n, exact = counter.count()
    return Scan(rows, n, exact, counter.capacity())


MAPPED_KINDS = tuple(str(e.cli) for e in with_capability("mapped"))
"""The kinds ``--output-mmap`` builds straight into their file (:mod:`bloomkit._mapped`)."""


@dataclass(frozen=True)
class Kind:
    """A structure the CLI can build: its family (for the options it needs), its builder and
    how many times it reads its input."""

    family: str  # "membership", "lookup", "similarity", "items", "records"
    build: Callable[[argparse.Namespace, KeyInput, _Progress], Built] | None  # None: "records"
    help: str
    passes: Callable[[argparse.Namespace], int] = lambda args: 1 if args.capacity is not None else 2


Factory = Callable[[argparse.Namespace, int], tuple[Any, dict[str, Any]]]
"""(class, constructor keyword arguments) of a membership kind at a capacity."""


def _membership(factory: Factory) -> Callable[[argparse.Namespace, KeyInput, _Progress], Built]:
    def build(args: argparse.Namespace, inp: KeyInput, prog: _Progress) -> Built:
        scan = None
        cap = args.capacity
        if cap is None:
            scan = _scan_keys(inp, prog, args, args.column)
            cap = scan.capacity
        cls, kw = factory(args, cap)
        if args.output_mmap:  # built in a file beside the output, renamed onto it once complete
            import tempfile

            fd, args.mmap_partial = tempfile.mkstemp(prefix=".bloomkit-build-", suffix=".partial",
                                                     dir=os.path.dirname(os.path.abspath(args.output)))
            os.close(fd)
            f = cls.create(args.mmap_partial, kw.pop("capacity"), kw.pop("fpr"), overwrite=True, **kw)
            args.mmap_built = f
        else:
            f = cls.for_requirements(kw.pop("capacity"), kw.pop("fpr"), **kw)
        rows = 0
        for ch in _chunks(inp, prog, f"building a {type(f).__name__}", args.column, [], args.key_type):
            f.add_many(ch.keys)
            rows += ch.rows
        return Built(f, rows, scan)

    return build


def _for_requirements(entry: Entry) -> Factory:
    """A growing membership filter of ``cap`` keys at ``--fpr``: its class and the arguments of
    its ``for_requirements`` (which for every membership kind is its constructor's)."""
    def factory(args: argparse.Namespace, cap: int) -> tuple[Any, dict[str, Any]]:
        kw = {"counter_bits": args.counter_bits} if "counters" in entry.capabilities else {}
        return load_class(entry), {"capacity": cap, "fpr": args.fpr, "seed": args.seed, **kw}

    return factory


def _lookup(entry: Entry) -> Callable[[argparse.Namespace, KeyInput, _Progress], Built]:
    def build(args: argparse.Namespace, inp: KeyInput, prog: _Progress) -> Built:
        """A static table: every key and value in memory (the table is that large anyway)."""
        if not args.values:
            raise InvalidParameterError(f"--kind {args.kind} needs --values COLUMN (a CSV / Parquet column of "
                                        "values beside the --column of keys)")
        keys, values = [], []
        for ch in _chunks(inp, prog, f"reading {inp.source}", args.column, [args.values], args.key_type):
            keys.append(ch.keys)
            values.append(ch.columns[args.values])
        cls = load_class(entry)
        kw: dict[str, Any] = {"seed": args.seed, "on_duplicate": args.on_duplicate}
        if args.value_bits is not None:
            kw["value_bits"] = args.value_bits
        if args.lookup_fpr is not None:
            kw["fpr"] = args.lookup_fpr
        obj = cls.build(concat_batches(keys), concat_batches(values), **kw)
        return Built(obj, sum(len(k) for k in keys))

    return build


def _static(entry: Entry) -> Callable[[argparse.Namespace, KeyInput, _Progress], Built]:
    def build(args: argparse.Namespace, inp: KeyInput, prog: _Progress) -> Built:
        """A static filter: every key in memory, then one build at --fpr (repeated keys kept once)."""
        keys = [ch.keys for ch in _chunks(inp, prog, f"reading {inp.source}", args.column, [], args.key_type)]
        obj = load_class(entry).build(concat_batches(keys), fpr=args.fpr, seed=args.seed)
        rows = sum(len(k) for k in keys)
        return Built(obj, rows, Scan(rows=rows, distinct=len(obj), capacity=len(obj)))  # len: exact distinct keys

    return build


def _vectors(args: argparse.Namespace, ch: Chunk) -> np.ndarray:
    from ._engine.columns import as_values

    names = args.vector_columns
    cols = [ch.keys, *(ch.columns[c] for c in names[1:])]
    return np.column_stack([as_values(c, f"column {n!r}", dtype=float) for c, n in zip(cols, names, strict=True)])


_DOMAIN_MARGIN = 0.1  # the similarity filters' default domain_margin: the box of the data, widened


def _similarity(entry: Entry) -> Callable[[argparse.Namespace, KeyInput, _Progress], Built]:
    def build(args: argparse.Namespace, inp: KeyInput, prog: _Progress) -> Built:
        """First pass: n and the data's box (the domain, widened as the filters fit it); then
        the filter: ``for_requirements`` of document 002's Section 6.4 unless k / L are given."""
        if args.w is None:
            raise InvalidParameterError(f"--kind {args.kind} needs --w WIDTH (the LSH bucket width w of document 002)")
        names = args.vector_columns
        scan = Scan()
        for ch in _chunks(inp, prog, f"counting the vectors of {inp.source}", names[0], names[1:], None):
            pts = _vectors(args, ch)
            if not np.isfinite(pts).all():
                r = int(np.argwhere(~np.isfinite(pts))[0][0])
                raise InputError(f"{inp.source}: row {ch.first_row + r + 1} holds NaN or an infinite value")
            lo, hi = pts.min(axis=0), pts.max(axis=0)
            scan.lower = lo if scan.lower is None else np.minimum(scan.lower, lo)
            scan.upper = hi if scan.upper is None else np.maximum(scan.upper, hi)
            scan.rows += ch.rows
        assert scan.lower is not None and scan.upper is not None
        scan.distinct, scan.capacity = scan.rows, scan.rows
        span = np.where(scan.upper > scan.lower, scan.upper - scan.lower, 1.0)
        domain = (scan.lower - _DOMAIN_MARGIN * span, scan.upper + _DOMAIN_MARGIN * span)
        f = _similarity_filter(args, load_class(entry), len(names), scan.rows, domain)
        rows = 0
        for ch in _chunks(inp, prog, f"building an {entry.name}", names[0], names[1:], None):
            f.add_many(_vectors(args, ch))
            rows += ch.rows
        return Built(f, rows, scan)

    return build


def _similarity_filter(args: argparse.Namespace, cls: Any, dim: int, n: int, domain: tuple[Any, Any]) -> Any:
    """The filter for n vectors: sized by its ``for_requirements`` (near distance r1 =
    ``--near``, default w / 4, where P1 = p(r1, w) = 0.80 as in the paper's Section 6.4
    example; far distance r2 = ``--far``, default 10 r1, the example's ratio; false negatives
    at r1 at most ``--fnr``; LSH and verification false positives at most ``--fpr`` at every
    level), or built from the given ``--and-width`` / ``--or-count`` / bit counts."""
    levels = 1 if cls.__name__ == "LSBF" else args.levels
    explicit = args.and_width is not None or args.or_count is not None
    if not explicit and hasattr(cls, "for_requirements"):
        r1 = args.near if args.near is not None else args.w / 4
        r2 = args.far if args.far is not None else 10 * r1
        kw: dict[str, Any] = {"w": args.w, "seed": args.seed, "domain": domain}
        if cls.__name__ != "LSBF":
            kw["levels"] = tuple(range(levels))
        if args.num_bits is not None and cls.__name__ != "MLBFStar":
            kw["num_bits"] = args.num_bits
        return cls.for_requirements(dim, r1, r2, args.fnr, args.fpr, args.fpr, n, **kw)
    kw = {"seed": args.seed, "and_width": args.and_width or 5, "domain": domain}
    if cls.__name__ != "LSBF":
        kw.update(num_levels=levels, or_count=args.or_count or 6)
    if cls.__name__ != "MLBFStar" and args.num_bits is not None:
        kw["num_bits"] = args.num_bits
    if args.verify_bits is not None:
        kw["verify_bits"] = args.verify_bits
    else:  # the verification filter sized for n at --fpr (Theorem 8, alpha = 1), the headline rate
        kw["verify_bits"], kw["verify_hashes"] = _verify_size(n, 1 if cls.__name__ == "LSBF" else kw["or_count"],
                                                              levels, args.fpr)
    return cls(dim, args.w, **kw)


def _verify_size(n: int, or_count: int, levels: int, fpr: float) -> tuple[int, int]:
    """(m', k'): the smallest power of two m' >= 2^levels (and its best k' <= 64) whose
    Theorem 8 rate at the coarsest level, ``1 - (1 - phi)^L`` with alpha = 1, is at most
    ``fpr`` for n objects (:func:`bloomkit.similarity.theory.mlbf_fpr`)."""
    from .similarity.theory import mlbf_fpr

    for b in range(max(levels, 4), 63):
        rates = [float(mlbf_fpr(1.0, n, or_count, 1 << b, kp, levels - 1)) for kp in range(1, 65)]
        best = int(np.argmin(rates))
        if rates[best] <= fpr:
            return 1 << b, best + 1
    raise InvalidParameterError(f"no verification filter of at most 2^62 bits holds {n} vectors at --fpr {fpr}")


def _items(args: argparse.Namespace, inp: KeyInput, prog: _Progress) -> Built:
    from .multiattr import ParallelBloomFilter

    names = args.item_columns
    scan = None
    cap = args.capacity
    if cap is None:
        scan = _scan_keys(inp, prog, args, names[0], names)
        cap = scan.capacity
    f = ParallelBloomFilter.for_requirements(len(names), cap, args.fpr, seed=args.seed, attributes=names)
    rows = 0
    for ch in _chunks(inp, prog, "building a ParallelBloomFilter", names[0], names[1:], args.key_type):
        f.add_many({names[0]: ch.keys, **{n: ch.columns[n] for n in names[1:]}})
        rows += ch.rows
    return Built(f, rows, scan)


def _one_pass(args: argparse.Namespace) -> int:
    return 1


def _kind(entry: Entry) -> Kind:
    """The CLI's builder of a registered structure, chosen by its family and capabilities."""
    static = "static" in entry.capabilities
    if entry.family == "membership":
        return Kind("membership", _static(entry) if static else _membership(_for_requirements(entry)), entry.help,
                    *([_one_pass] if static else []))
    if entry.family == "lookup":
        return Kind("lookup", _lookup(entry), entry.help, _one_pass)
    if entry.family == "similarity":
        return Kind("similarity", _similarity(entry), entry.help, lambda a: 2)
    if entry.family == "items":
        return Kind("items", _items, entry.help)
    if entry.family == "records":
        return Kind("records", None, entry.help, _one_pass)
    raise LookupError(f"the CLI has no builder for the family {entry.family!r} of {entry.tag} (--kind {entry.cli})")


def kinds(entries: Iterable[Entry] = ENTRIES) -> dict[str, Kind]:
    """``--kind`` name -> :class:`Kind` of every registered structure with a CLI name."""
    return {e.cli: _kind(e) for e in entries if e.cli is not None}


KINDS: dict[str, Kind] = kinds()


def _build_records(args: argparse.Namespace, inp: KeyInput, prog: _Progress) -> Built:
    """``--kind range | profile-index``: the schema file's optimizer choice (k, (d, s) per
    attribute), then every row of the table (a numeric range as two columns ``Name.lo`` /
    ``Name.hi``, or one column of points) inserted by column name, a chunk at a time. A range
    filter whose predicted rate passes ``--fpr`` is refused (it holds one profile's records;
    a table of profiles is a profile index)."""
    import pyarrow as pa

    from .ranges import ProfileIndex, RangeBloomFilter, schema_from_file

    if not args.schema:
        raise InvalidParameterError(f"--kind {args.kind} needs --schema FILE (the attributes, m and typical "
                                    "range sizes; see docs/serve.md)")
    for opt in ("column", "columns", "values", "key_type"):
        if getattr(args, opt) is not None:
            raise InvalidParameterError(f"--{opt.replace('_', '-')} is not for --kind {args.kind}: the table's "
                                        "columns are the schema's attributes (a range as Name.lo and Name.hi)")
    sf = schema_from_file(args.schema)
    d = sf.design()
    obj: Any = (RangeBloomFilter(sf.schema, d.num_bits, d.config, seed=args.seed) if args.kind == "range" else
                ProfileIndex(sf.schema, d.num_bits, d.config, seed=args.seed, store_records=True))
    rows = 0
    present: list[str] | None = None
    prog.phase(f"building a {type(obj).__name__}")
    for batch in inp.batches():
        if present is None:
            cols = set(batch.schema.names)
            present = [n for n in sf.schema.names if n in cols or f"{n}.lo" in cols or f"{n}.hi" in cols]
        table = pa.Table.from_batches([batch])
        if args.kind == "range":
            obj.insert_many(table, attributes=present)
        else:
            obj.add_many(table, attributes=present)
        rows += batch.num_rows
        prog.update()
        if args.kind == "range" and obj.predicted_fpr() > args.fpr:
            raise InvalidParameterError(
                f"{inp.source}: {rows:,} rows give a range filter of {d.num_bits} bits a predicted false positive "
                f"rate of {obj.predicted_fpr():.3g}, above --fpr {args.fpr}: a range filter holds the records of "
                "one profile (document 000: one filter per profile); for a table with one profile per row use "
                "--kind profile-index (searched by attributes), or give the schema more bits (num_bits)")
    return Built(obj, rows)


def _split_columns(text: str | None) -> list[str]:
    names = [c.strip() for c in (text or "").split(",") if c.strip()]
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"--columns names a column twice: {text!r}")
    return names


def _check_options(args: argparse.Namespace, kind: Kind) -> None:
    """The options a kind needs and refuses, before anything is read."""
    if kind.family == "records":
        return
    if args.schema is not None:
        raise InvalidParameterError(f"--schema is for --kind range / profile-index, not {args.kind}")
    if kind.family in ("similarity", "items"):
        names = _split_columns(args.columns)
        if not names:
            raise InvalidParameterError(f"--kind {args.kind} needs --columns A,B,... (the "
                                        f"{'dimensions' if kind.family == 'similarity' else 'attributes'}, by name)")
        if args.column is not None:
            raise InvalidParameterError(f"--kind {args.kind} takes --columns, not --column")
        args.vector_columns = args.item_columns = names
    else:
        if args.columns is not None:
            raise InvalidParameterError("--columns is for --kind pbf and the similarity kinds; use --column")
        if args.values and args.values == args.column:
            raise InvalidParameterError("--values and --column name the same column")
    if kind.family != "lookup" and args.values:
        raise InvalidParameterError(f"--values is for --kind geometric / bloomier, not {args.kind}")
    if kind.family == "similarity" and args.key_type is not None:
        raise InvalidParameterError(f"--key-type is not for --kind {args.kind}: vectors are numbers")
    if args.output_mmap and args.kind not in MAPPED_KINDS:
        raise InvalidParameterError(f"--output-mmap builds {', '.join(MAPPED_KINDS)} filters into their file, "
                                    f"not --kind {args.kind}")


def cmd_build(args: argparse.Namespace) -> int:
    kind = KINDS[args.kind]
    args.output_mmap = getattr(args, "output_mmap", False)
    _check_options(args, kind)
    args.mmap_partial, args.mmap_built = None, None
    try:
        return _build(args, kind)
    finally:
        if args.mmap_partial is not None:  # --output-mmap that did not complete: nothing is written
            if args.mmap_built is not None and not args.mmap_built.closed:
                args.mmap_built.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(args.mmap_partial)


def _build(args: argparse.Namespace, kind: Kind) -> int:
    t0 = time.perf_counter()
    with KeyInput(args.input, args.format, passes=kind.passes(args)) as inp, warnings.catch_warnings():
        if args.strict:
            warnings.simplefilter("error", BloomkitWarning)
        prog = _Progress(inp)
        try:
            built = (kind.build or _build_records)(args, inp, prog)
        except BloomkitWarning as w:  # --strict
            raise StrictError(f"{w} (--strict)") from None
        finally:
            prog.stop()
        if inp.skipped_empty:
            warn(f"{inp.source}: skipped {inp.skipped_empty} empty line(s)", args)
        rate = _check_rate(args, kind, built)
        return _saved(args, built, inp.source, time.perf_counter() - t0, rate)


def _model_rate(obj: Any, keys: int | None) -> float:
    """The model's false positive rate of a built structure: at ``keys`` distinct keys when
    known and its model takes a count (Bloom, counting, split-block, foldable), else of its
    contents (``predicted_fpr()``)."""
    from .bloom import BloomFilter
    from .splitblock import SplitBlockBloomFilter

    if keys is not None and isinstance(obj, BloomFilter | SplitBlockBloomFilter):
        return float(obj.predicted_fpr(keys))
    return float(obj.predicted_fpr())


def _check_rate(args: argparse.Namespace, kind: Kind, built: Built) -> float | None:
    """The structure's predicted false positive rate (the model at the distinct keys read,
    when known); ``--strict``: exit 2 (nothing written) when it exceeds the one asked for
    (``--fpr``; lookup tables: their design e_o), else a warning."""
    obj = built.obj
    if kind.family == "lookup":
        want = float(obj.info()["fpr"])
        rate = float(obj.predicted_fpr())
        what = f"its design rate e_o = {want:.3g}"
    elif kind.family == "membership" and built.scan is None:
        return None  # --capacity: the filter warns itself past it (BloomkitWarning; --strict: an error)
    else:
        keys = built.scan.distinct if built.scan is not None else None
        rate, want = _model_rate(obj, keys), args.fpr
        what = f"--fpr {want}"
    if rate > want * (1 + 1e-9):
        warn(f"the {type(obj).__name__} built from {built.rows:,} rows predicts a false positive rate of "
             f"{rate:.3g}, above {what}", args)
    return rate


def _saved(args: argparse.Namespace, built: Built, source: str, seconds: float, rate: float | None) -> int:
    obj = built.obj
    info = obj.info()
    if args.mmap_partial is not None:  # sealed (CRC-32), then renamed onto the output: atomic
        obj.close()
        os.replace(args.mmap_partial, args.output)
        args.mmap_partial = None
    else:
        obj.save(args.output)
    scan = built.scan
    doc: dict[str, Any] = {"output": args.output, "kind": args.kind, "source": source, "rows": built.rows,
                           "seconds": round(seconds, 3), "info": info}
    distinct = ""
    if scan is not None and scan.distinct is not None and KINDS[args.kind].family != "similarity":
        doc["distinct"], doc["distinct_exact"] = scan.distinct, scan.exact
        distinct = f" ({'' if scan.exact else '~'}{scan.distinct:,} distinct)"
    if rate is None:
        rate = info.get("predicted_fpr")
    rate_text = f"predicted FPR {rate:.3g}" if isinstance(rate, int | float) else "no predicted FPR"
    doc["predicted_fpr"] = rate
    _emit(args, doc, [
        f"{type(obj).__name__}: {built.rows:,} rows{distinct} from {source} in {seconds:.1f} s, "
        f"{info.get('size_in_bits'):,} bits, {rate_text} -> {args.output}"])
    return 0


# ---------------------------------------------------------------------------------------------
# query


def _key_type(types: tuple[str, ...], override: str | None, what: str) -> str:
    """How to parse query arguments: --key-type, else the one kind of key ``what`` holds
    ("unknown", a filter received over the folding wire format: str, with a note)."""
    if override is not None:
        return override
    if types in ((), ("str",)):
        return "str"
    if types == ("unknown",):
        warn("this file does not record its key types (a filter received over the wire): reading the keys as str "
             "(say --key-type int|float|bytes if they are not)")
        return "str"
    if len(types) == 1 and types[0] in KEY_TYPES:
        return str(types[0])
    raise InvalidParameterError(
        f"{what} holds keys of several types ({', '.join(types)}): say which the query keys are "
        f"with --key-type ({', '.join(KEY_TYPES)})")


_QUERY_CHUNK = 1 << 16  # query lines answered at a time


def _query_texts(args: argparse.Namespace) -> Iterator[tuple[list[str], bool]]:
    """(texts, from the arguments?): the arguments, then the lines of --input, a list at a
    time (the input is read in chunks)."""
    if not args.keys and not args.input:
        raise InvalidParameterError("give query keys as arguments or with --input FILE (- for stdin)")
    if args.keys:
        yield list(args.keys), True
    if args.input:
        with KeyInput(args.input, "text", passes=1) as inp:
            for ch in inp.chunks(key_type="str"):
                lines = ch.keys.to_pylist()
                for lo in range(0, len(lines), _QUERY_CHUNK):
                    yield lines[lo : lo + _QUERY_CHUNK], False


def cmd_query(args: argparse.Namespace) -> int:
    from ._mapped import map_or_load

    obj = map_or_load(args.filter)  # the protocols by their methods (_protocols imports inspect: ~10 ms)
    answer: Callable[[list[str], int, bool], list[dict[str, Any]]]
    if hasattr(obj, "query_many"):
        answer = lambda t, j, a: _query_similarity(args, obj, t, j)  # noqa: E731
    elif hasattr(obj, "search") or hasattr(obj, "matches"):
        answer = lambda t, j, a: _query_records(args, obj, [t] if a else [x.split() for x in t], j)  # noqa: E731
    elif hasattr(obj, "attribute_key_types"):
        answer = lambda t, j, a: _query_items(args, obj, t, j)  # noqa: E731
    elif hasattr(obj, "get_many") or hasattr(obj, "contains_many"):
        kt = _key_type(tuple(getattr(obj, "key_types", ())), args.key_type, f"this {type(obj).__name__}")
        lookup = hasattr(obj, "get_many")
        answer = lambda t, j, a: _query_keys(obj, t, j, kt, lookup)  # noqa: E731
    else:
        raise InvalidParameterError(f"{args.filter} holds a {type(obj).__name__}, which `bloomkit query` cannot ask")
    out: list[dict[str, Any]] = []
    done = 0
    for texts, from_args in _query_texts(args):
        rows = answer(texts, done, from_args)
        done += len(texts)
        if args.json:
            out.extend(rows)
        else:
            sys.stdout.write("".join(_answer_line(r) + "\n" for r in rows))
    if args.json:
        print(json.dumps(out, default=_jsonable))
    return 0


def _answer_line(r: dict[str, Any]) -> str:
    if "value" in r:
        return f"{r['key']}\t{r['value'] if r['value'] is not None else '-'}"
    if "near" in r:
        return f"{r['point']}\t{'near' if r['near'] else 'no'}"
    if "ids" in r:
        return f"{r['query']}\t" + " ".join(map(str, r["ids"]))
    text = r.get("key", r.get("item", r.get("query")))
    return f"{text}\t{'maybe' if r['maybe'] else 'no'}"


_ONE_BY_ONE = 100_000
"""Keys up to which a query asks the compiled single-key ``in`` instead of the batch kernels:
the first batch call loads numba (about 1.5 s), ``in`` through the C extension costs ~0.2 us."""


def _query_keys(obj: Any, texts: list[str], first: int, kt: str, lookup: bool) -> list[dict[str, Any]]:
    keys = [parse_key(t, kt, f"query key {first + i + 1}: ") for i, t in enumerate(texts)]
    if lookup:
        vals = obj.get_many(keys)
        present = [k in obj for k in keys]
        return [{"key": t, "value": (v.item() if isinstance(v, np.generic) else v) if p else None}
                for t, v, p in zip(texts, vals, present, strict=True)]
    from ._engine.boundary import COMPILED, FilterCore

    if COMPILED and isinstance(obj, FilterCore) and len(keys) <= _ONE_BY_ONE:
        hits: Any = [k in obj for k in keys]
    else:
        hits = obj.contains_many(keys)
    return [{"key": t, "maybe": bool(h)} for t, h in zip(texts, hits, strict=True)]


def _query_similarity(args: argparse.Namespace, obj: Any, texts: list[str], first: int) -> list[dict[str, Any]]:
    rows = []
    for i, t in enumerate(texts, first + 1):
        try:
            rows.append([float(x) for x in t.replace(";", ",").split(",")])
        except ValueError:
            raise InvalidParameterError(f"query {i} ({t!r}) is not a vector of numbers separated by commas") from None
    if len({len(r) for r in rows}) != 1:
        raise InvalidParameterError("the query vectors have different lengths")
    hits = obj.query_many(np.asarray(rows, dtype=float), args.level)
    return [{"point": t, "level": args.level, "near": bool(h)} for t, h in zip(texts, hits, strict=True)]


def _query_items(args: argparse.Namespace, obj: Any, texts: list[str], first: int) -> list[dict[str, Any]]:
    """Multi-attribute items ``a,b,c``: attribute i parsed as the type attribute i holds."""
    p = obj.num_attributes
    kinds = [_key_type(tuple(t), args.key_type, f"attribute {i}") for i, t in enumerate(obj.attribute_key_types)]
    rows = []
    for j, t in enumerate(texts, first + 1):
        parts = t.split(args.sep)
        if len(parts) != p:
            raise InvalidParameterError(f"query {j} ({t!r}) has {len(parts)} attributes separated by "
                                        f"{args.sep!r}; this filter's items have {p}")
        rows.append(tuple(parse_key(x, k, f"query {j}, attribute {i}: ") for i, (x, k) in enumerate(zip(parts, kinds, strict=True))))
    hits = obj.contains_many(rows)
    return [{"item": t, "maybe": bool(h)} for t, h in zip(texts, hits, strict=True)]


def _query_records(args: argparse.Namespace, obj: Any, lines: list[list[str]], first: int) -> list[dict[str, Any]]:
    """Range filters and profile indexes: each argument ``Name=value`` or ``Name=lo:hi``; all
    arguments together are one query (several queries: one per line of --input)."""
    out: list[dict[str, Any]] = []
    for j, words in enumerate(lines, first + 1):
        query: dict[str, Any] = {}
        for w in words:
            name, eq, value = w.partition("=")
            if not eq or not name:
                raise InvalidParameterError(f"query {j}: {w!r} is not Name=value or Name=lo:hi")
            query[name] = _record_value(obj, name, value)
        if hasattr(obj, "search"):
            ids = obj.search(query, mode=args.mode, verify=getattr(obj, "store_records", False))
            out.append({"query": " ".join(words), "ids": [int(i) for i in ids]})
        else:
            out.append({"query": " ".join(words), "maybe": bool(obj.matches(query))})
    return out


def _record_value(obj: Any, name: str, text: str) -> Any:
    schema = obj.schema
    if name not in schema:
        raise InvalidParameterError(f"no attribute {name!r} (attributes: {', '.join(schema.names)})")
    attr = schema[name]
    if type(attr).__name__ == "Text":
        return text
    lo, sep, hi = text.partition(":")
    try:
        conv = int if type(attr).__name__ == "Integer" else float
        return (conv(lo), conv(hi)) if sep else conv(lo)
    except ValueError:
        raise InvalidParameterError(f"{name}={text!r}: not a number or a range lo:hi") from None


# ---------------------------------------------------------------------------------------------
# info


def cmd_info(args: argparse.Namespace) -> int:
    """What a saved file holds, from its header and the structure: a filter that maps
    (:data:`bloomkit._mapped.MAPPABLE`) is mapped read-only, never read whole (a 12 GB filter
    answers ``info`` at once; its CRC is checked by ``--verify``), the others are loaded."""
    from ._engine.hashing import hash_name
    from ._format import open_regular
    from ._mapped import MAPPABLE, _read_layout, map_or_load

    t0 = time.perf_counter()
    p, fd = open_regular(args.filter, "bloomkit info")
    try:
        if os.pread(fd, 4, 0) == b"PAR1":
            raise InputError(f"{p} is a Parquet file, not a bloomkit structure: bloomkit parquet info {p} "
                             "shows the Bloom filters it holds")
        size = os.fstat(fd).st_size
        lay = _read_layout(fd, size, 0)
    finally:
        os.close(fd)
    verified = None
    if getattr(args, "verify", False):
        from ._mapped import verify

        verified = verify(p)["crc32"]
    obj = map_or_load(p)
    try:
        t_load = time.perf_counter() - t0
        timing = _timing(obj, t_load) if args.timing else None  # before info(), which may load numba itself
        info: dict[str, Any] = {"file": args.filter, "bytes": size, "format_version": lay.version,
                                "hash": hash_name(lay.hash_id)}
        if lay.structure in MAPPABLE and verified is None:
            info["crc32_verified"] = "not checked (mapped, not read: --verify reads it all)"
        elif verified is not None:
            info["crc32_verified"] = verified
        info.update(obj.info())
        if timing is not None:
            info["timing"] = timing
    finally:
        close = getattr(obj, "close", None)
        if callable(close):
            close()
    if args.json:
        print(json.dumps(info, indent=2, default=_jsonable))
    else:
        print("\n".join(_table(info)))
    return 0


def _timing(obj: Any, t_load: float) -> dict[str, Any]:
    """Seconds to load the file, to import the numba kernels and to run the first and the
    second batch query of 1,000 keys: the first pays numba's start-up (its kernels come
    compiled from the cache in ``__pycache__`` after the first run on a machine)."""
    import importlib

    out: dict[str, Any] = {"load_s": t_load}
    t = time.perf_counter()
    importlib.import_module("bloomkit._engine.kernels")
    out["kernels_import_s"] = time.perf_counter() - t
    probe = _probe_keys(obj)
    if probe is not None:
        for label in ("first_batch_s", "second_batch_s"):
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BloomkitWarning)
                probe()
            out[label] = time.perf_counter() - t
    from ._engine.boundary import hash_path

    out["hash_path"] = hash_path()
    return out


def _probe_keys(obj: Any) -> Callable[[], Any] | None:
    """A batch query of 1,000 keys of the type the structure holds, or None."""
    types = tuple(getattr(obj, "key_types", ()))
    if not hasattr(obj, "contains_many") and not hasattr(obj, "get_many"):
        return None
    kt = types[0] if len(types) == 1 and types[0] in KEY_TYPES else "str"
    keys: Any = {"int": np.arange(1000, dtype=np.int64), "float": np.arange(1000, dtype=np.float64) + 0.5,
                 "bytes": [b"k%d" % i for i in range(1000)]}.get(kt, [f"k{i}" for i in range(1000)])
    if hasattr(obj, "contains_many") and not hasattr(obj, "attribute_key_types"):
        return lambda: obj.contains_many(keys)
    if hasattr(obj, "get_many"):
        return lambda: obj.get_many(keys)
    return None


def _fmt(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v).lower() if isinstance(v, bool) else "-"
    if isinstance(v, int | np.integer):
        return f"{int(v):,}"
    if isinstance(v, float | np.floating):
        x = float(v)
        if 1e4 <= abs(x) < 1e15:
            return f"{x:,.0f}"
        return f"{x:.4g}" if x == 0 or 1e-3 <= abs(x) < 1e4 else f"{x:.3e}"
    if isinstance(v, list | tuple) and all(not isinstance(x, dict | list) for x in v):
        items = [_fmt(x) for x in v[:8]]
        return ", ".join(items) + (f", ... ({len(v)} in all)" if len(v) > 8 else "") if v else "-"
    return str(v)


def _table(info: dict[str, Any], indent: str = "") -> list[str]:
    """``info()`` as aligned "name  value" lines; nested dicts indented, lists of dicts as a
    table (at most 20 rows)."""
    width = max((len(k) for k in info), default=0)
    lines = []
    for k, v in info.items():
        if isinstance(v, dict):
            lines.append(f"{indent}{k}")
            lines.extend(_table(v, indent + "  "))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            lines.append(f"{indent}{k} ({len(v)})")
            cols = list(dict.fromkeys(c for x in v for c in x if not isinstance(x[c], dict | list)))
            cells = [[_fmt(x.get(c)) for c in cols] for x in v[:20]]
            widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(cols)]
            lines.append(indent + "  " + "  ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True)))
            lines.extend(indent + "  " + "  ".join(x.rjust(w) for x, w in zip(r, widths, strict=True)) for r in cells)
            if len(v) > 20:
                lines.append(f"{indent}  ... {len(v) - 20} more (--json shows all)")
        else:
            lines.append(f"{indent}{k.ljust(width)}  {_fmt(v)}")
    return lines

