"""The ``build``, ``query`` and ``info`` commands of the CLI: one per structure kind, dispatching
on the protocols (:mod:`bloomkit._protocols`). ``bloomkit.cli`` parses arguments and calls these.

Output is one line per key (``key<TAB>answer``) or, with ``--json``, one JSON document.
Warnings go to standard error as ``bloomkit: warning: ...``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._io import KEY_TYPES, KeyFile, open_bytes, parse_key, read_keys, read_table, read_text_keys
from .errors import BloomkitError, InvalidParameterError

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
# build


@dataclass(frozen=True)
class Kind:
    """A structure the CLI can build: its family (for the options it needs) and its builder."""

    family: str  # "membership", "lookup", "similarity", "items", "records"
    build: Callable[[argparse.Namespace, KeyFile], Any] | None  # None: "records" (_build_records)
    help: str


def _capacity(args: argparse.Namespace, kf: KeyFile) -> tuple[int, int]:
    """(capacity to size for, distinct keys): duplicates count once; --capacity below the
    distinct count is an overfill (warning, or an error under --strict)."""
    distinct = kf.distinct()
    cap = args.capacity or distinct
    if distinct > cap:
        warn(f"{kf.source} holds {distinct} distinct keys, more than --capacity {cap}: the filter will "
             f"be overfilled and miss its --fpr {args.fpr}", args)
    return max(cap, 1), distinct


def _membership(factory: Callable[[argparse.Namespace, int], Any]) -> Callable[[argparse.Namespace, KeyFile], Any]:
    def build(args: argparse.Namespace, kf: KeyFile) -> Any:
        cap, _distinct = _capacity(args, kf)
        f = factory(args, cap)
        f.add_many(kf.keys)
        return f

    return build


def _bloom(args: argparse.Namespace, cap: int) -> Any:
    from .bloom import BloomFilter

    return BloomFilter(capacity=cap, fpr=args.fpr, seed=args.seed)


def _counting(args: argparse.Namespace, cap: int) -> Any:
    from .bloom import CountingBloomFilter

    return CountingBloomFilter(capacity=cap, fpr=args.fpr, seed=args.seed, counter_bits=args.counter_bits)


def _scalable(args: argparse.Namespace, cap: int) -> Any:
    from .scalable import ScalableBloomFilter

    return ScalableBloomFilter(cap, args.fpr, seed=args.seed)


def _foldable(args: argparse.Namespace, cap: int) -> Any:
    from .folding import FoldableBloomFilter

    return FoldableBloomFilter(capacity=cap, fpr=args.fpr, seed=args.seed)


def _foldable_counting(args: argparse.Namespace, cap: int) -> Any:
    from .folding import FoldableCountingBloomFilter

    return FoldableCountingBloomFilter(capacity=cap, fpr=args.fpr, seed=args.seed, counter_bits=args.counter_bits)


def _splitblock(args: argparse.Namespace, cap: int) -> Any:
    from .splitblock import SplitBlockBloomFilter

    return SplitBlockBloomFilter(capacity=cap, fpr=args.fpr, seed=args.seed)


def _lookup(cls_name: str) -> Callable[[argparse.Namespace, KeyFile], Any]:
    def build(args: argparse.Namespace, kf: KeyFile) -> Any:
        from . import lookup

        if not args.values:
            raise InvalidParameterError(f"--kind {args.kind} needs --values COLUMN (a CSV / Parquet column of "
                                        "values beside the --column of keys)")
        values = kf.columns[args.values]
        cls = getattr(lookup, cls_name)
        kw: dict[str, Any] = {"seed": args.seed, "on_duplicate": args.on_duplicate}
        if args.value_bits is not None:
            kw["value_bits"] = args.value_bits
        if args.lookup_fpr is not None:
            kw["fpr"] = args.lookup_fpr
        return cls.build(kf.keys, values, **kw)

    return build


def _vectors(args: argparse.Namespace, kf: KeyFile) -> np.ndarray:
    from ._columns import as_values

    cols = [kf.keys, *(kf.columns[c] for c in args.vector_columns[1:])]
    return np.column_stack([as_values(c, f"column {n!r}", dtype=float) for c, n in zip(cols, args.vector_columns, strict=True)])


def _similarity(cls_name: str) -> Callable[[argparse.Namespace, KeyFile], Any]:
    def build(args: argparse.Namespace, kf: KeyFile) -> Any:
        from . import similarity

        if args.w is None:
            raise InvalidParameterError(f"--kind {args.kind} needs --w WIDTH (the LSH bucket width w of document 002)")
        pts = _vectors(args, kf)
        cls = getattr(similarity, cls_name)
        kw: dict[str, Any] = {"seed": args.seed, "and_width": args.and_width}
        if cls_name != "LSBF":
            kw.update(num_levels=args.levels, or_count=args.or_count)
        if cls_name != "MLBFStar" and args.num_bits is not None:
            kw["num_bits"] = args.num_bits
        if args.verify_bits is not None:
            kw["verify_bits"] = args.verify_bits
        f = cls(pts.shape[1], args.w, **kw)
        f.add_many(pts)
        return f

    return build


def _items(args: argparse.Namespace, kf: KeyFile) -> Any:
    from .multiattr import ParallelBloomFilter

    names = args.item_columns
    cap, _ = _capacity(args, kf)
    f = ParallelBloomFilter.for_requirements(len(names), cap, args.fpr, seed=args.seed, attributes=names)
    f.add_many({names[0]: kf.keys, **{n: kf.columns[n] for n in names[1:]}})
    return f


KINDS: dict[str, Kind] = {
    "bloom": Kind("membership", _membership(_bloom), "Bloom filter (default)"),
    "counting": Kind("membership", _membership(_counting), "counting Bloom filter (keys can be removed)"),
    "scalable": Kind("membership", _membership(_scalable), "scalable Bloom filter (grows; --capacity is the first slice)"),
    "foldable": Kind("membership", _membership(_foldable), "foldable Bloom filter (document 003)"),
    "foldable-counting": Kind("membership", _membership(_foldable_counting),
                              "foldable counting Bloom filter (document 003; keys can be removed)"),
    "split-block": Kind("membership", _membership(_splitblock),
                        "split-block Bloom filter (512-bit blocks: one cache line per key)"),
    "geometric": Kind("lookup", _lookup("GeometricFilter"), "Geometric filter: key -> value (document 001; --values)"),
    "bloomier": Kind("lookup", _lookup("BloomierFilter"), "Bloomier filter: key -> value (--values)"),
    "mlbf": Kind("similarity", _similarity("MLBF"), "MLBF: near-membership of vectors (document 002; --w)"),
    "mlbf-star": Kind("similarity", _similarity("MLBFStar"), "MLBF*: the virtual multi-level filter (--w)"),
    "lsbf": Kind("similarity", _similarity("LSBF"), "LSBF: one-width locality-sensitive filter (--w)"),
    "pbf": Kind("items", _items, "parallel Bloom filter of multi-attribute items (document 004; --columns)"),
    "range": Kind("records", None,
                  "range Bloom filter of a table's records (document 000; --schema, columns by attribute name)"),
    "profile-index": Kind("records", None,
                          "profile index: one profile per row, searched by attributes and ranges (--schema)"),
}


def _build_records(args: argparse.Namespace) -> tuple[Any, str, int]:
    """``--kind range | profile-index``: the schema file's optimizer choice (k, (d, s) per
    attribute), then every row of the table (a numeric range as two columns ``Name.lo`` /
    ``Name.hi``, or one column of points) inserted by column name."""
    from .ranges import ProfileIndex, RangeBloomFilter, schema_from_file

    if not args.schema:
        raise InvalidParameterError(f"--kind {args.kind} needs --schema FILE (the attributes, m and typical "
                                    "range sizes; see docs/serve.md)")
    for opt in ("column", "columns", "values", "key_type"):
        if getattr(args, opt) is not None:
            raise InvalidParameterError(f"--{opt.replace('_', '-')} is not for --kind {args.kind}: the table's "
                                        "columns are the schema's attributes (a range as Name.lo and Name.hi)")
    sf = schema_from_file(args.schema)
    table, source = read_table(args.input, args.format)
    cols = set(table.column_names)
    present = [n for n in sf.schema.names if n in cols or f"{n}.lo" in cols or f"{n}.hi" in cols]
    d = sf.design()
    obj: Any
    if args.kind == "range":
        obj = RangeBloomFilter(sf.schema, d.num_bits, d.config, seed=args.seed)
        obj.insert_many(table, attributes=present)
    else:
        obj = ProfileIndex(sf.schema, d.num_bits, d.config, seed=args.seed, capacity=table.num_rows,
                           store_records=True)
        obj.add_many(table, attributes=present)
    return obj, source, table.num_rows


def _split_columns(text: str | None) -> list[str]:
    names = [c.strip() for c in (text or "").split(",") if c.strip()]
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"--columns names a column twice: {text!r}")
    return names


def cmd_build(args: argparse.Namespace) -> int:
    kind = KINDS[args.kind]
    if kind.build is None:
        obj, source, rows = _build_records(args)
        return _saved(args, obj, source, rows)
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
        column, extra = names[0], names[1:]
    else:
        if args.columns is not None:
            raise InvalidParameterError("--columns is for --kind pbf and the similarity kinds; use --column")
        column, extra = args.column, ([args.values] if args.values else [])
        if args.values and args.values == args.column:
            raise InvalidParameterError("--values and --column name the same column")
    if kind.family != "lookup" and args.values:
        raise InvalidParameterError(f"--values is for --kind geometric / bloomier, not {args.kind}")
    kf = read_keys(args.input, column=column, extra=extra, key_type=args.key_type, fmt=args.format)
    if kf.skipped_empty:
        warn(f"{kf.source}: skipped {kf.skipped_empty} empty line(s)")
    return _saved(args, kind.build(args, kf), kf.source, kf.rows)


def _saved(args: argparse.Namespace, obj: Any, source: str, rows: int) -> int:
    obj.save(args.output)
    info = obj.info()
    doc = {"output": args.output, "kind": args.kind, "source": source, "rows": rows, "info": info}
    _emit(args, doc, [
        f"{type(obj).__name__}: {rows} rows from {source}, {info.get('size_in_bits')} bits, "
        f"predicted FPR {info.get('predicted_fpr'):.3g} -> {args.output}"])
    return 0


# ---------------------------------------------------------------------------------------------
# query


def _key_type(types: tuple[str, ...], override: str | None, what: str) -> str:
    """How to parse query arguments: --key-type, else the one kind of key ``what`` holds
    (format-1 files record none: str, with a note)."""
    if override is not None:
        return override
    if types in ((), ("str",)):
        return "str"
    if types == ("unknown",):
        warn("this file (format 1) does not record its key types: reading the keys as str "
             "(say --key-type int|float|bytes if they are not)")
        return "str"
    if len(types) == 1 and types[0] in KEY_TYPES:
        return str(types[0])
    raise InvalidParameterError(
        f"{what} holds keys of several types ({', '.join(types)}): say which the query keys are "
        f"with --key-type ({', '.join(KEY_TYPES)})")


def _query_texts(args: argparse.Namespace) -> list[str]:
    texts = list(args.keys)
    if args.input:
        kf = read_text_keys(_read_input(args.input), args.input)
        texts += [str(k) for k in kf.keys]
    if not texts:
        raise InvalidParameterError("give query keys as arguments or with --input FILE (- for stdin)")
    return texts


def _read_input(path: str) -> bytes:
    return open_bytes(path)[0]


def cmd_query(args: argparse.Namespace) -> int:
    from . import load
    from ._protocols import LookupTable, MembershipFilter, SimilarityFilter

    obj = load(args.filter)
    texts = _query_texts(args)
    if isinstance(obj, SimilarityFilter):
        return _query_similarity(args, obj, texts)
    if hasattr(obj, "search") or hasattr(obj, "matches"):
        return _query_records(args, obj, texts)
    if hasattr(obj, "attribute_key_types"):
        return _query_items(args, obj, texts)
    kt = _key_type(tuple(getattr(obj, "key_types", ())), args.key_type, f"this {type(obj).__name__}")
    keys = [parse_key(t, kt, f"query key {i + 1}: ") for i, t in enumerate(texts)]
    if isinstance(obj, LookupTable):
        vals = obj.get_many(keys)
        present = [k in obj for k in keys]
        out = [{"key": t, "value": (v.item() if isinstance(v, np.generic) else v) if p else None}
               for t, v, p in zip(texts, vals, present, strict=True)]
        _emit(args, out, [f"{r['key']}\t{r['value'] if r['value'] is not None else '-'}" for r in out])
        return 0
    if isinstance(obj, MembershipFilter) or hasattr(obj, "contains_many"):
        hits = obj.contains_many(keys)
        out = [{"key": t, "maybe": bool(h)} for t, h in zip(texts, hits, strict=True)]
        _emit(args, out, [f"{r['key']}\t{'maybe' if r['maybe'] else 'no'}" for r in out])
        return 0
    raise InvalidParameterError(f"{args.filter} holds a {type(obj).__name__}, which `bloomkit query` cannot ask")


def _query_similarity(args: argparse.Namespace, obj: Any, texts: list[str]) -> int:
    rows = []
    for i, t in enumerate(texts):
        try:
            rows.append([float(x) for x in t.replace(";", ",").split(",")])
        except ValueError:
            raise InvalidParameterError(f"query {i + 1} ({t!r}) is not a vector of numbers separated by commas") from None
    pts = np.asarray(rows, dtype=float) if len({len(r) for r in rows}) == 1 else None
    if pts is None:
        raise InvalidParameterError("the query vectors have different lengths")
    hits = obj.query_many(pts, args.level)
    out = [{"point": t, "level": args.level, "near": bool(h)} for t, h in zip(texts, hits, strict=True)]
    _emit(args, out, [f"{r['point']}\t{'near' if r['near'] else 'no'}" for r in out])
    return 0


def _query_items(args: argparse.Namespace, obj: Any, texts: list[str]) -> int:
    """Multi-attribute items ``a,b,c``: attribute i parsed as the type attribute i holds."""
    p = obj.num_attributes
    kinds = [_key_type(tuple(t), args.key_type, f"attribute {i}") for i, t in enumerate(obj.attribute_key_types)]
    rows = []
    for j, t in enumerate(texts):
        parts = t.split(args.sep)
        if len(parts) != p:
            raise InvalidParameterError(f"query {j + 1} ({t!r}) has {len(parts)} attributes separated by "
                                        f"{args.sep!r}; this filter's items have {p}")
        rows.append(tuple(parse_key(x, k, f"query {j + 1}, attribute {i}: ") for i, (x, k) in enumerate(zip(parts, kinds, strict=True))))
    hits = obj.contains_many(rows)
    out = [{"item": t, "maybe": bool(h)} for t, h in zip(texts, hits, strict=True)]
    _emit(args, out, [f"{r['item']}\t{'maybe' if r['maybe'] else 'no'}" for r in out])
    return 0


def _query_records(args: argparse.Namespace, obj: Any, texts: list[str]) -> int:
    """Range filters and profile indexes: each argument ``Name=value`` or ``Name=lo:hi``; all
    arguments together are one query (several queries: one per line of --input)."""
    lines = [texts] if not args.input else [t.split() for t in texts]
    out: list[dict[str, Any]] = []
    for j, words in enumerate(lines):
        query: dict[str, Any] = {}
        for w in words:
            name, eq, value = w.partition("=")
            if not eq or not name:
                raise InvalidParameterError(f"query {j + 1}: {w!r} is not Name=value or Name=lo:hi")
            query[name] = _record_value(obj, name, value)
        if hasattr(obj, "search"):
            ids = obj.search(query, mode=args.mode, verify=getattr(obj, "store_records", False))
            out.append({"query": " ".join(words), "ids": [int(i) for i in ids]})
        else:
            out.append({"query": " ".join(words), "maybe": bool(obj.matches(query))})
    _emit(args, out, [f"{r['query']}\t" + (" ".join(map(str, r["ids"])) if "ids" in r else
                                            ("maybe" if r["maybe"] else "no")) for r in out])
    return 0


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
    from . import load
    from ._format import unpack
    from ._hashing import hash_name

    raw = Path(args.filter).read_bytes()
    c = unpack(raw)
    obj = load(args.filter)
    info = {"file": args.filter, "bytes": len(raw), "format_version": c.version, "hash": hash_name(c.hash_id)}
    info.update(obj.info())
    print(json.dumps(info, indent=2, default=_jsonable))
    return 0
