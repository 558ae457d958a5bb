"""The reproduction report that ``bloomkit reproduce`` writes.

For every experiment: a CSV of its rows, a PNG of its figure (titled with the experiment's id
and title, here for all of them), and a section putting the document's value (paper), our
model's and our measurement side by side. A summary at the top gives each experiment's
verdict with its reason:

* **reproduced**: every comparison that can be checked agrees (see below);
* **deviates**: at least one does not; the reason names it, with both values;
* **not judged**: no comparison has a value to check against (only descriptions, or no
  paper and no model value); **failed**: the experiment raised.

A comparison agrees when ours (the measurement, else the model) is within the tolerance of
the paper's value, or, without a paper value, the measurement is within it of the model's:
:data:`TOLERANCE` relative by default, :data:`APPROX_TOLERANCE` where the paper says "about",
"~", "near" or "close to". A rate measured from ``trials`` Bernoulli trials (the comparison
says how many) also agrees within :data:`Z_TOLERANCE` binomial standard deviations, and two
rates both below :data:`RATE_FLOOR` agree (a quick run cannot tell them apart). The paper's
words "yes" / "no", bounds ("<= 0.002", "> 0"), ranges ("265-274"), lists ("511, 897") and
"all" (against "5/5") are read too; other text is not judged. An experiment that knows better
states its own verdict and reason
(:attr:`~bloomkit.experiments.registry.ExperimentResult.verdict`), a per-row tolerance or
its trials (:class:`~bloomkit.experiments.registry.Comparison`).

Tables are HTML in both files, built by ``tabulate``, whose html format escapes every cell:
a cell holding ``|``, ``<`` or ``&`` cannot break a row (it did in the markdown tables).
``report.html`` is self-contained: figures are embedded (base64), CSV files are linked
relative to it.
"""

from __future__ import annotations

import base64
import csv
import html
import math
import re
import textwrap
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import theory
from .._lazy import require
from .registry import Comparison, Experiment, ExperimentResult

__all__ = [
    "APPROX_TOLERANCE",
    "RATE_FLOOR",
    "TOLERANCE",
    "Z_TOLERANCE",
    "Judgement",
    "Run",
    "Verdict",
    "judge",
    "run_experiment",
    "verdict",
    "write_report",
]

TOLERANCE = 0.10
"""Relative difference within which ours agrees with the reference value."""
APPROX_TOLERANCE = 0.25
"""... where the paper gives an approximate value ("about 2", "~250", "close to 256")."""
Z_TOLERANCE = 3.0
"""Binomial standard deviations within which a rate measured from known trials agrees."""
RATE_FLOOR = 1e-4
"""Two rates both below this agree."""

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_APPROX = re.compile(rf"^(?:about|approximately|approx\.?|around|roughly|close to|near|~|≈)\s*({_NUM})(?:\s|$|\()", re.I)
_BOUND = re.compile(rf"^(<=|>=|<|>|≤|≥)\s*({_NUM})(?:\s|$|,|\()")
_RANGE = re.compile(rf"^({_NUM})\s*(?:-|–|\.\.)\s*({_NUM})(?:\s|$|\()")
_LIST = re.compile(rf"^{_NUM}(?:\s*,\s*{_NUM})+$")
_FRACTION = re.compile(r"^(\d+)\s*/\s*(\d+)(?:\s|$)")


# ---------------------------------------------------------------------------------------------
# verdicts


@dataclass(frozen=True)
class Judgement:
    """The check of one comparison: ``agrees`` is None when it cannot be checked."""

    agrees: bool | None
    text: str = ""


@dataclass(frozen=True)
class Verdict:
    """An experiment's verdict: status, reason, and the comparison shown as its headline."""

    status: str
    reason: str
    headline: str = ""


def _number(v: Any) -> float | None:
    """A finite float from a number or a string holding only a number; else None."""
    if isinstance(v, bool | np.bool_):
        return None
    if isinstance(v, int | float | np.integer | np.floating):
        x = float(v)
    elif isinstance(v, str) and re.fullmatch(rf"\s*{_NUM}\s*", v):
        x = float(v)
    else:
        return None
    return x if math.isfinite(x) else None


def _fmt(v: Any) -> str:
    """A value as the report prints it (4 significant digits)."""
    if v is None:
        return ""
    if isinstance(v, float | np.floating):
        x = float(v)
        if x == 0 or 1e-3 <= abs(x) < 1e6:
            return f"{x:.4g}"
        return f"{x:.3e}"
    return str(v)


def _close(ours: float, ref: float, tol: float, trials: int | None = None) -> tuple[bool, str]:
    diff = ours - ref
    if diff == 0:
        return True, "equal"
    rates = 0 <= ours <= 1 and 0 <= ref <= 1
    if rates and max(ours, ref) < RATE_FLOOR:
        return True, f"both below {RATE_FLOOR:g}"
    if rates and trials:
        sd = theory.binomial_sd(ref, trials)
        if abs(diff) <= Z_TOLERANCE * sd + 1.0 / trials:
            return True, f"{diff / sd if sd else 0.0:+.1f} sd"
    if ref == 0:
        return abs(diff) <= 1e-12, f"{_fmt(ours)} vs 0"
    rel = diff / abs(ref)
    return abs(rel) <= tol * (1 + 1e-9), f"{rel:+.1%}"


def judge(c: Comparison) -> Judgement:
    """Check one comparison (module docstring): ours against the paper's value, or the
    measurement against the model's when the paper gives none.

    >>> judge(Comparison("n", paper=22, measured=30)).agrees
    False
    >>> judge(Comparison("ratio", paper="about 2", measured=1.9)).text
    'ours 1.9 vs paper about 2: -5.0%'
    >>> judge(Comparison("bound", paper="<= 0.002", measured=0.0066)).agrees
    False
    >>> judge(Comparison("note only", paper="consistent", measured=1.46)).agrees is None
    True
    """
    if c.paper is None:
        model, meas = _number(c.model), _number(c.measured)
        if model is None or meas is None:
            return Judgement(None)
        tol = TOLERANCE if c.tolerance is None else c.tolerance
        ok, how = _close(meas, model, tol, c.trials)
        return Judgement(ok, f"measured {_fmt(c.measured)} vs model {_fmt(c.model)}: {how}")
    ours_raw = c.measured if c.measured is not None else c.model
    if ours_raw is None:
        return Judgement(None)
    who = "ours" if c.measured is not None else "our model"
    ours = _number(ours_raw)
    label = f"{who} {_fmt(ours_raw)} vs paper {_fmt(c.paper)}"
    ref = _number(c.paper)
    if ref is not None:
        if ours is None:
            return Judgement(None)
        ok, how = _close(ours, ref, TOLERANCE if c.tolerance is None else c.tolerance,
                         c.trials if c.measured is not None else None)
        return Judgement(ok, f"{label}: {how}")
    text = str(c.paper).strip()
    low = text.lower()
    ours_text = str(ours_raw).strip().lower()
    if low in ("yes", "no"):
        return Judgement(ours_text == low, label)
    m = _APPROX.match(text)
    if m and ours is not None:
        ok, how = _close(ours, float(m.group(1)), APPROX_TOLERANCE if c.tolerance is None else c.tolerance)
        return Judgement(ok, f"{label}: {how}")
    m = _BOUND.match(text)
    if m and ours is not None:
        op, bound = m.group(1), float(m.group(2))
        ok = {"<=": ours <= bound, "≤": ours <= bound, "<": ours < bound,
              ">=": ours >= bound, "≥": ours >= bound, ">": ours > bound}[op]
        return Judgement(ok, label)
    m = _RANGE.match(text)
    if m and ours is not None:
        lo, hi = sorted((float(m.group(1)), float(m.group(2))))
        return Judgement(lo <= ours <= hi, label)
    if _LIST.match(text) and isinstance(ours_raw, str) and _LIST.match(ours_raw.strip()):
        want = [float(x) for x in text.split(",")]
        got = [float(x) for x in ours_raw.split(",")]
        if len(want) == len(got):
            tol = TOLERANCE if c.tolerance is None else c.tolerance
            return Judgement(all(_close(g, w, tol)[0] for g, w in zip(got, want, strict=True)), label)
        return Judgement(False, f"{label}: {len(got)} values, not {len(want)}")
    m = _FRACTION.match(ours_text)
    if low.startswith("all") and m:
        return Judgement(m.group(1) == m.group(2), label)
    return Judgement(None)


def verdict(result: ExperimentResult) -> Verdict:
    """The experiment's verdict: its own if it states one, else read from its comparisons."""
    checks = [(c, judge(c)) for c in result.comparisons]
    judged = [(c, j) for c, j in checks if j.agrees is not None]
    off = [(c, j) for c, j in judged if not j.agrees]
    shown = off[0] if off else (judged[0] if judged else None)
    headline = f"{shown[0].quantity}: {shown[1].text}" if shown else ""
    if result.verdict is not None:
        return Verdict(result.verdict, result.verdict_reason or "stated by the experiment", headline)
    if off:
        n = len(off)
        names = "; ".join(c.quantity for c, _ in off[:3]) + ("; ..." if n > 3 else "")
        return Verdict("deviates", f"{n} of {len(judged)} checked comparisons outside tolerance: {names}", headline)
    if judged:
        rest = len(checks) - len(judged)
        extra = f"; {rest} descriptive, not checked" if rest else ""
        return Verdict("reproduced", f"{len(judged)} of {len(judged)} checked comparisons agree{extra}", headline)
    why = "no comparison" if not checks else "no comparison has a paper or model value to check against"
    return Verdict("not judged", why, "")


# ---------------------------------------------------------------------------------------------
# running


@dataclass
class Run:
    """One experiment's outcome: its result (None if it failed), the files written for it."""

    experiment: Experiment
    result: ExperimentResult | None
    error: str = ""
    files: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        if self.result is None:
            last = self.error.strip().splitlines()[-1] if self.error.strip() else "error"
            return Verdict("failed", last)
        return verdict(self.result)


def run_experiment(exp: Experiment, out: Path, *, quick: bool, seed: int | None = None) -> Run:
    """Run one experiment and write its CSV and PNG into ``out``; an exception is recorded
    (the report shows the traceback), not raised."""
    try:
        result = exp.run(quick=quick, seed=seed)
    except Exception as e:  # report it and go on with the others
        return Run(exp, None, "".join(traceback.format_exception(e)).rstrip())
    run = Run(exp, result)
    if result.rows:
        _write_csv(out / f"{exp.id}.csv", result.rows)
        run.files.append(f"{exp.id}.csv")
    if result.plot is not None and _write_png(out / f"{exp.id}.png", result.plot, exp):
        run.files.append(f"{exp.id}.png")
    return run


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    cols = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: (float(v) if isinstance(v, np.floating) else v) for k, v in r.items()})


def figure_title(exp: Experiment) -> str:
    """The title every figure gets: the experiment's id and title."""
    return f"{exp.id}: {exp.title}"


def _write_png(path: Path, plot: Callable[[Any], None], exp: Experiment) -> bool:
    """Draw the figure, titled with the experiment's id and title (also saved as PNG
    metadata); False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig = plt.figure(figsize=(7, 4.8))
    try:
        plot(fig)
        fig.suptitle(textwrap.fill(figure_title(exp), 80), fontsize=10, fontweight="bold")
        fig.tight_layout()
        fig.savefig(path, dpi=110, metadata={"Title": figure_title(exp), "Description": f"bloomkit experiment {exp.id}; {exp.source}"})
    finally:
        plt.close(fig)
    return True


# ---------------------------------------------------------------------------------------------
# writing: one list of blocks, rendered as markdown and as html


@dataclass(frozen=True)
class _Block:
    kind: str  # "h1" | "h2" | "text" | "table" | "image" | "code"
    text: str = ""
    rows: tuple[tuple[Any, ...], ...] = ()
    headers: tuple[str, ...] = ()
    anchor: str = ""


def _cell(v: Any) -> str:
    """One table cell: the value as printed, on one line (a blank line would end an HTML
    block in markdown)."""
    return " ".join(_fmt(v).split())


def _table_html(headers: Sequence[str], rows: Sequence[Sequence[Any]], links: Sequence[str] | None = None) -> str:
    tabulate = require("tabulate", "experiments", "the report's tables").tabulate

    body = [[_cell(v) for v in row] for row in rows]
    out: str = tabulate(body, headers=list(headers), tablefmt="html", disable_numparse=True, missingval="")
    out = re.sub(r" +</t([dh])>", r"</t\1>", out)  # tabulate pads cells to align the source
    if links:  # the first column links to the sections (anchors are [A-Za-z0-9.-] only: see _anchor)
        wanted = set(links)
        out = re.sub(r"<tr><td>([A-Za-z0-9.-]+)(\s*)</td>",
                     lambda m: f'<tr><td><a href="#{m[1]}">{m[1]}</a>{m[2]}</td>' if m[1] in wanted else m[0], out)
    return out


def _anchor(exp_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "-", exp_id)


def _summary(runs: Sequence[Run]) -> list[_Block]:
    counts: dict[str, int] = {}
    rows, links = [], []
    for r in runs:
        v = r.verdict
        counts[v.status] = counts.get(v.status, 0) + 1
        rows.append((_anchor(r.experiment.id), r.experiment.title, v.headline, v.status, v.reason))
        links.append(_anchor(r.experiment.id))
    order = ("reproduced", "deviates", "not judged", "failed")
    tally = ", ".join(f"{counts[s]} {s}" for s in order if s in counts)
    rule = (f"A comparison agrees when ours is within {TOLERANCE:.0%} of the paper's value "
            f"({APPROX_TOLERANCE:.0%} where the paper says 'about'), or without one the measurement within "
            f"{TOLERANCE:.0%} of our model's; a rate measured from a stated number of trials also within "
            f"{Z_TOLERANCE:g} binomial sd, and rates both below {RATE_FLOOR:g} agree. Bounds, ranges, lists and "
            "yes / no are read; other text is not judged. An experiment may state its own tolerance or verdict. "
            "Quick mode measures with fewer trials than the documents: small deviations of rates can be noise.")
    table = _table_html(("experiment", "title", "paper vs ours", "verdict", "why"), rows, links)
    return [_Block("h2", "Summary", anchor="summary"), _Block("text", f"{len(runs)} experiments: {tally}."),
            _Block("table", table), _Block("text", rule)]


def _section(run: Run) -> list[_Block]:
    exp, res = run.experiment, run.result
    blocks = [_Block("h2", f"{exp.id}: {exp.title}", anchor=_anchor(exp.id))]
    v = run.verdict
    if res is None:
        return [*blocks, _Block("text", f"Source: {exp.source}. **Failed:**"), _Block("code", run.error)]
    timing = f"Run time: {res.seconds:.2f} s"
    if res.jit_seconds >= 0.005:
        timing += f" (not counted: {res.jit_seconds:.2f} s compiling or loading JIT kernels)"
    blocks.append(_Block("text", f"Source: {exp.source}. {timing}. Verdict: **{v.status}** ({v.reason})."))
    if res.comparisons:
        rows = []
        for c in res.comparisons:
            j = judge(c)
            check = "" if j.agrees is None else ("yes" if j.agrees else "no") + (f" ({j.text.rsplit(': ', 1)[-1]})" if ": " in j.text else "")
            rows.append((c.quantity, c.paper, c.model, c.measured, check, c.note))
        blocks.append(_Block("table", _table_html(("quantity", "paper", "model", "measured", "agrees", "note"), rows)))
    if res.notes:
        blocks.append(_Block("text", res.notes))
    for f in run.files:
        blocks.append(_Block("image", f) if f.endswith(".png") else _Block("text", f"Data: [{f}]({f})"))
    return blocks


def _document(runs: Sequence[Run], quick: bool) -> list[_Block]:
    from .. import __version__

    head = [
        _Block("h1", "bloomkit reproduction report"),
        _Block("text", f"bloomkit {__version__}. Mode: {'quick' if quick else 'full'}. Each section puts the "
                       "document's value (paper), our model's and our measurement side by side. Run times "
                       "leave out JIT compilation and kernel loading (given apart); they were measured on "
                       "whatever else the machine was running."),
    ]
    return head + _summary(runs) + [b for r in runs for b in _section(r)]


def _markdown(blocks: Sequence[_Block]) -> str:
    out = []
    for b in blocks:
        if b.kind == "h1":
            out.append(f"# {b.text}")
        elif b.kind == "h2":
            out.append((f'<a id="{b.anchor}"></a>\n\n' if b.anchor else "") + f"## {b.text}")
        elif b.kind in ("text", "table"):
            out.append(b.text)
        elif b.kind == "image":
            out.append(f"![{b.text}]({b.text})")
        elif b.kind == "code":
            out.append("```\n" + b.text.replace("```", "'''") + "\n```")
    return "\n\n".join(out) + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.85rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.4rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
img { max-width: 100%; }
pre { background: #f6f6f6; padding: 0.5rem; overflow-x: auto; }
"""


def _html(blocks: Sequence[_Block], folder: Path) -> str:
    MarkdownIt = require("markdown_it", "experiments", "the HTML report").MarkdownIt  # noqa: N806

    md = MarkdownIt("commonmark", {"html": False})  # raw HTML in notes is shown, escaped
    title = next((b.text for b in blocks if b.kind == "h1"), "report")
    body = []
    for b in blocks:
        if b.kind in ("h1", "h2"):
            ident = f' id="{html.escape(b.anchor)}"' if b.anchor else ""
            body.append(f"<{b.kind}{ident}>{html.escape(b.text)}</{b.kind}>")
        elif b.kind == "text":
            body.append(md.render(b.text))
        elif b.kind == "table":
            body.append(b.text)
        elif b.kind == "image":
            data = base64.b64encode((folder / b.text).read_bytes()).decode("ascii")
            body.append(f'<p><img alt="{html.escape(b.text)}" src="data:image/png;base64,{data}"></p>')
        elif b.kind == "code":
            body.append(f"<pre>{html.escape(b.text)}</pre>")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{html.escape(title)}</title>\n'
            f"<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n")


def write_report(out: Path, runs: Sequence[Run], *, quick: bool) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` (figures embedded) into ``out``; the CSV and
    PNG files are already there (:func:`run_experiment`). Returns both paths."""
    blocks = _document(runs, quick)
    md_path, html_path = out / "report.md", out / "report.html"
    md_path.write_text(_markdown(blocks), encoding="utf-8")
    html_path.write_text(_html(blocks, out), encoding="utf-8")
    return md_path, html_path
