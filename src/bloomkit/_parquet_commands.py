"""``bloomkit parquet probe`` / ``bloomkit parquet info``: the command line's side of
:mod:`bloomkit.parquet` (parsing values given as text, printing tables and JSON). The library
module reads and answers; it prints nothing.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

import numpy as np

from .errors import InvalidParameterError
from .parquet import _files, _filter_report, _filters, _probe
from .splitblock.plain import _DEFAULT_TYPES, _kind, _pa

__all__ = ["cli_info", "cli_probe", "parse_cli_values"]


def parse_cli_values(texts: list[str], col_physical_type: str, arrow_type: Any, *, hex_bytes: bool = False) -> Any:
    """Command-line strings as values of a column: parsed by its arrow type (ints, floats,
    dates, timestamps, decimals), UTF-8 for str columns, hex with ``hex_bytes`` for binary."""
    pa = _pa()
    t = arrow_type if arrow_type is not None else _DEFAULT_TYPES[col_physical_type](pa, None)
    kind = _kind(t)
    if kind in ("bytes", "fixed"):
        if hex_bytes:
            try:
                return [bytes.fromhex(v) for v in texts]
            except ValueError as e:
                raise InvalidParameterError(f"bloomkit parquet probe: a value is not hex ({e}).") from None
        return [v.encode("utf-8") for v in texts] if not pa.types.is_string(t) and not pa.types.is_large_string(t) \
            else list(texts)
    try:
        return pa.array(list(texts), pa.string()).cast(t)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise InvalidParameterError(f"bloomkit parquet probe: the values are not {t} ({e}).") from None


def cli_probe(source: str, column: str, values: list[str], *, as_json: bool = False, hex_bytes: bool = False,
              out: IO[str] | None = None) -> int:
    """``bloomkit parquet probe FILE|DIR --column C VALUE...``: the row groups of each file
    that may hold each value. Returns the exit status (0)."""
    out = out or sys.stdout
    result: dict[str, dict[str, list[int]]] = {}
    untested: dict[str, list[int]] = {}
    files = _files(source)
    if not files:
        raise InvalidParameterError(f"bloomkit parquet probe: {source} holds no Parquet files (*.parquet, *.parq)")
    for path in files:
        col, filters = _filters(path, column, "bloomkit parquet probe")
        parsed = parse_cli_values(values, col.physical_type, col.arrow_type, hex_bytes=hex_bytes)
        hits = _probe(col, filters, parsed, {}, "bloomkit parquet probe")
        result[path] = {v: np.flatnonzero(hits[:, j]).tolist() for j, v in enumerate(values)}
        untested[path] = [rg for rg, f in enumerate(filters) if f is None]
        if len(untested[path]) == len(filters):
            print(f"bloomkit: warning: {path}: column {column!r} has no Bloom filter in any of its {len(filters)} row "
                  "groups: nothing was tested, every row group may hold every value", file=sys.stderr)
        elif untested[path]:
            print(f"bloomkit: warning: {path}: column {column!r} has no Bloom filter in row group(s) "
                  f"{_ranges(untested[path])}: they were not tested (they may hold any value)", file=sys.stderr)
    if as_json:
        print(json.dumps(result, indent=2), file=out)
        return 0
    for path, per_value in result.items():
        note = f" (not tested: {_ranges(untested[path])}: no Bloom filter)" if untested[path] else ""
        for v, rgs in per_value.items():
            where = ", ".join(map(str, rgs)) if rgs else "none"
            print(f"{path}\t{v}\trow groups: {where}{note}", file=out)
    return 0


def _ranges(items: list[int]) -> str:
    """``[0, 1, 2, 5]`` as ``"0-2, 5"``."""
    parts: list[str] = []
    for i in items:
        if parts and parts[-1].split("-")[-1] == str(i - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{i}"
        else:
            parts.append(str(i))
    return ", ".join(parts)


def cli_info(source: str, *, as_json: bool = False, out: IO[str] | None = None) -> int:
    """``bloomkit parquet info FILE``: every column chunk's Bloom filter (bytes, fill,
    estimated distinct values, predicted rate). Returns the exit status (0)."""
    out = out or sys.stdout
    report = _filter_report(source, "bloomkit parquet info")
    if as_json:
        print(json.dumps(report, indent=2), file=out)
        return 0
    print(f"{report['file']}: {report['row_groups']} row groups", file=out)
    if not report["columns"]:
        print("no Bloom filters", file=out)
    for name, c in report["columns"].items():
        print(f"column {name} ({c['physical_type']}):", file=out)
        for rg, r in enumerate(c["filters"]):
            if r is None:
                print(f"  row group {rg}: no filter", file=out)
            else:
                print(f"  row group {rg}: {r['num_bytes']} bytes, fill {r['fill_ratio']:.4f}, ~{r['estimated_ndv']:.0f} "
                      f"distinct of {r['rows']} rows, predicted fpr {r['predicted_fpr']:.3g}", file=out)
    return 0
