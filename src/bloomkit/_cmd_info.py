"""The ``info`` command of the CLI: what a saved file holds, from its header and the structure
(``--verify``: its CRC-32 too, streamed). ``bloomkit.cli`` parses the arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ._commands import _jsonable
from ._io import KEY_TYPES, InputError
from .errors import BloomkitWarning

__all__ = ["cmd_info"]


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
