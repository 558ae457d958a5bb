"""The ``query`` command of the CLI: the keys given (arguments or standard input) looked up in a
saved structure, one line per key (``key<TAB>answer``) or one JSON document (``--json``). A
filter that maps is mapped read-only (:func:`bloomkit._mapped.map_or_load`), never read whole.
``bloomkit.cli`` parses the arguments; the shared output helpers are :mod:`bloomkit._commands`'.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._commands import _jsonable, warn
from ._io import KEY_TYPES, KeyInput, parse_key
from .errors import InvalidParameterError

__all__ = ["cmd_query"]


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
