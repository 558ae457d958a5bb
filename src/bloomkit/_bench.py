"""Benchmark harness shared by the scripts in benchmarks/ (and ``bloomkit bench``).

Each measurement: ``warmup`` untimed calls, then ``repeats`` timed calls with
``time.perf_counter``; min / median / max are reported. Results go to JSON and a markdown
table, with the machine and package versions they were measured on.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["machine_info", "markdown_table", "measure", "versions", "write_results"]


def measure(
    fn: Callable[[], Any],
    *,
    warmup: int = 1,
    repeats: int = 5,
    setup: Callable[[], Any] | None = None,
) -> dict[str, float]:
    """Time ``fn()``: ``warmup`` untimed runs, then ``repeats`` timed runs.

    ``setup()``, if given, runs untimed before every call (e.g. to build a fresh empty filter).
    Returns seconds: ``{"min", "median", "max", "repeats"}``.
    """
    for _ in range(warmup):
        if setup is not None:
            setup()
        fn()
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {
        "min": min(times),
        "median": statistics.median(times),
        "max": max(times),
        "repeats": repeats,
    }


def versions(packages: Iterable[str]) -> dict[str, str]:
    """Installed versions of ``packages`` ("missing" when not installed)."""
    out = {}
    for p in packages:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "missing"
    return out


def machine_info() -> dict[str, Any]:
    """CPU, core count, OS and Python of this machine."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
    }


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if v == 0 or 1e-3 <= abs(v) < 1e6:
            return f"{v:.4g}"
        return f"{v:.3e}"
    return str(v)


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    """A markdown table of ``rows`` (dicts), columns in first-seen order unless given."""
    if not rows:
        return "(no rows)\n"
    cols = list(columns) if columns else list(dict.fromkeys(k for r in rows for k in r))
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(c, "")) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def write_results(
    name: str,
    rows: Sequence[dict[str, Any]],
    meta: dict[str, Any] | None = None,
    out_dir: str | os.PathLike[str] = "benchmarks/results",
) -> Path:
    """Write ``<out_dir>/<name>.json`` and ``<name>.md``; returns the JSON path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    info = {"machine": machine_info(), **(meta or {})}
    path = out / f"{name}.json"
    path.write_text(json.dumps({"meta": info, "rows": list(rows)}, indent=2, default=str))
    md = [f"# {name}", "", "```", json.dumps(info, indent=2, default=str), "```", "", markdown_table(rows)]
    (out / f"{name}.md").write_text("\n".join(md))
    return path
