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

from ._io import Chunk, DistinctCounter, InputError, KeyInput, concat_batches
from ._registry import ENTRIES, Entry, load_class, with_capability
from .errors import BloomkitError, BloomkitWarning, InvalidParameterError

__all__ = ["KINDS", "cmd_build", "warn"]


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


class _Output:
    """Where a build goes: ``args.output``, saved once built; with ``--output-mmap``, a file
    the filter is built in (:func:`bloomkit._mapped.create_beside`: renamed onto the output by
    :meth:`write`, removed if the build fails before)."""

    def __init__(self, path: str, mapped: bool, stack: contextlib.ExitStack[Any]) -> None:
        self.path, self.mapped, self.stack = path, mapped, stack

    def new(self, cls: Any, capacity: int, fpr: float, **kw: Any) -> Any:
        """An empty ``cls`` filter: in memory, or mapped from the file it is built in."""
        if not self.mapped:
            return cls.for_requirements(capacity, fpr, **kw)
        from ._mapped import create_beside

        return self.stack.enter_context(create_beside(cls, self.path, capacity, fpr, **kw))

    def write(self, obj: Any) -> None:
        """Save ``obj`` to the output, or seal and rename the file it was built in."""
        if self.mapped:
            self.stack.close()
        else:
            obj.save(self.path)


Builder = Callable[[argparse.Namespace, KeyInput, _Progress, _Output], Built]
"""A kind's build: the structure of the input's keys (added to ``out.new(...)`` for the kinds
that may be built into their file)."""


@dataclass(frozen=True)
class Kind:
    """A structure the CLI can build: its family (for the options it needs), its builder and
    how many times it reads its input."""

    family: str  # "membership", "lookup", "similarity", "items", "records"
    build: Builder | None  # None: "records"
    help: str
    passes: Callable[[argparse.Namespace], int] = lambda args: 1 if args.capacity is not None else 2


Factory = Callable[[argparse.Namespace, int], tuple[Any, dict[str, Any]]]
"""(class, constructor keyword arguments) of a membership kind at a capacity."""


def _membership(factory: Factory) -> Builder:
    def build(args: argparse.Namespace, inp: KeyInput, prog: _Progress, out: _Output) -> Built:
        scan = None
        cap = args.capacity
        if cap is None:
            scan = _scan_keys(inp, prog, args, args.column)
            cap = scan.capacity
        cls, kw = factory(args, cap)
        f = out.new(cls, kw.pop("capacity"), kw.pop("fpr"), **kw)
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


def _lookup(entry: Entry) -> Builder:
    def build(args: argparse.Namespace, inp: KeyInput, prog: _Progress, out: _Output) -> Built:
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


def _static(entry: Entry) -> Builder:
    def build(args: argparse.Namespace, inp: KeyInput, prog: _Progress, out: _Output) -> Built:
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


def _similarity(entry: Entry) -> Builder:
    def build(args: argparse.Namespace, inp: KeyInput, prog: _Progress, out: _Output) -> Built:
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
        f = _similarity_filter(args, load_class(entry), len(names), scan.rows, domain, entry.capabilities)
        rows = 0
        for ch in _chunks(inp, prog, f"building an {entry.name}", names[0], names[1:], None):
            f.add_many(_vectors(args, ch))
            rows += ch.rows
        return Built(f, rows, scan)

    return build


def _similarity_filter(args: argparse.Namespace, cls: Any, dim: int, n: int, domain: tuple[Any, Any],
                       caps: frozenset[str]) -> Any:
    """The filter for n vectors: sized by its ``for_requirements`` (near distance r1 =
    ``--near``, default w / 4, where P1 = p(r1, w) = 0.80 as in the paper's Section 6.4
    example; far distance r2 = ``--far``, default 10 r1, the example's ratio; false negatives
    at r1 at most ``--fnr``; LSH and verification false positives at most ``--fpr`` at every
    level), or built from the given ``--and-width`` / ``--or-count`` / bit counts."""
    one_width, virtual = "one-width" in caps, "virtual-bits" in caps  # LSBF; MLBF* (registry capabilities)
    levels = 1 if one_width else args.levels
    explicit = args.and_width is not None or args.or_count is not None
    if not explicit and hasattr(cls, "for_requirements"):
        r1 = args.near if args.near is not None else args.w / 4
        r2 = args.far if args.far is not None else 10 * r1
        kw: dict[str, Any] = {"w": args.w, "seed": args.seed, "domain": domain}
        if not one_width:
            kw["levels"] = tuple(range(levels))
        if args.num_bits is not None and not virtual:
            kw["num_bits"] = args.num_bits
        return cls.for_requirements(dim, r1, r2, args.fnr, args.fpr, args.fpr, n, **kw)
    kw = {"seed": args.seed, "and_width": args.and_width or 5, "domain": domain}
    if not one_width:
        kw.update(num_levels=levels, or_count=args.or_count or 6)
    if not virtual and args.num_bits is not None:
        kw["num_bits"] = args.num_bits
    if args.verify_bits is not None:
        kw["verify_bits"] = args.verify_bits
    else:  # the verification filter sized for n at --fpr (Theorem 8, alpha = 1), the headline rate
        kw["verify_bits"], kw["verify_hashes"] = _verify_size(n, 1 if one_width else kw["or_count"],
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


def _items(args: argparse.Namespace, inp: KeyInput, prog: _Progress, out: _Output) -> Built:
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


def _build_records(args: argparse.Namespace, inp: KeyInput, prog: _Progress, out: _Output) -> Built:
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
    t0 = time.perf_counter()
    with KeyInput(args.input, args.format, passes=kind.passes(args)) as inp, warnings.catch_warnings(), \
            contextlib.ExitStack() as stack:
        if args.strict:
            warnings.simplefilter("error", BloomkitWarning)
        prog = _Progress(inp)
        out = _Output(args.output, args.output_mmap, stack)
        try:
            built = (kind.build or _build_records)(args, inp, prog, out)
        except BloomkitWarning as w:  # --strict
            raise StrictError(f"{w} (--strict)") from None
        finally:
            prog.stop()
        if inp.skipped_empty:
            warn(f"{inp.source}: skipped {inp.skipped_empty} empty line(s)", args)
        rate = _check_rate(args, kind, built)
        return _saved(args, out, built, inp.source, time.perf_counter() - t0, rate)


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


def _saved(args: argparse.Namespace, out: _Output, built: Built, source: str, seconds: float,
           rate: float | None) -> int:
    obj = built.obj
    info = obj.info()
    out.write(obj)
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
