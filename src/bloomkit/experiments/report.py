"""The reproduction report that ``bloomkit reproduce`` writes.

For every experiment: a CSV of its rows, a PNG of its figure (titled with the experiment's id
and title), and a section putting the document's value (paper), our model's and our
measurement side by side, each row with its verdict and a one-line cause. At the top: an
overview (verdicts per document), the comparisons that deviate without a cause (defects of
ours), and the summary (each experiment's verdict and cause); every section links back to it.

Verdicts (:data:`~bloomkit.experiments.registry.VERDICTS`, the most severe first) are reached
on two axes that are kept apart: ours against the document's value, and our measurement
against our model. Values are compared by :func:`~bloomkit.experiments.evidence.agreement`
with their real sample sizes (rates carry their counts).

* **reproduced**: every axis agrees within the tolerance (or within the noise band, when that
  is narrower than the tolerance); in quick mode only where the sample resolves a difference
  of the tolerance's size (otherwise "consistent within noise ... cannot resolve");
* **consistent within noise**: it agrees only within the noise of the trial counts (ours, the
  spread between rebuilt filters, the document's stated sample); "cannot resolve" when the
  band is wider than +-50% of the value;
* **document erratum**: ours differs from the document and an independent derivation (the
  comparison's ``check``) agrees with ours, not with the document; listed with its explanation;
* **document model approximate**: our measurement differs from the model and an independent
  check agrees with the measurement, not with the model;
* **not comparable**: ours differs from the document and the settings differ (the comparison
  says which: scale, machine, data, unstated parameters);
* **deviates**: a difference nothing above explains -- listed at the top as a defect of ours;
* **not judged**: nothing to compare (descriptive rows).

Timings are judged only as ratios within one run (:class:`~bloomkit.experiments.evidence.Timing`),
by their direction. Tables are HTML in both files, built by ``tabulate``, whose html format
escapes every cell. ``report.html`` is self-contained: figures are embedded (base64), CSV
files are linked relative to it.
"""

from __future__ import annotations

import base64
import csv
import html
import os
import re
import tempfile
import textwrap
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._engine.lazy import require
from ..errors import BloomkitError
from .evidence import (
    APPROX_TOLERANCE,
    RESOLUTION,
    TOLERANCE,
    Z_TOLERANCE,
    Agreement,
    Check,
    Rate,
    agreement,
    fmt,
)
from .registry import VERDICTS, Comparison, Experiment, ExperimentResult

__all__ = [
    "Judgement",
    "Run",
    "Verdict",
    "judge",
    "prepare_output",
    "run_experiment",
    "verdict",
    "write_report",
]

_SEVERITY = {s: i for i, s in enumerate((*VERDICTS[:-1], "failed", VERDICTS[-1]))}


# ---------------------------------------------------------------------------------------------
# verdicts


@dataclass(frozen=True)
class Judgement:
    """The verdict of one comparison: ``status`` (one of VERDICTS), ``cause`` (one line) and
    ``detail`` (the numbers: ours against the reference)."""

    status: str
    cause: str
    detail: str = ""
    resolved: bool = True  # False: the sample cannot resolve it (such rows make poor headlines)

    @property
    def agrees(self) -> bool | None:
        """None when not judged; False only for "deviates"."""
        return None if self.status == "not judged" else self.status != "deviates"


@dataclass(frozen=True)
class Verdict:
    """An experiment's verdict: status, one-line cause, and the comparison shown as its headline."""

    status: str
    reason: str
    headline: str = ""


def _who(c: Comparison) -> tuple[str, Any]:
    """Which of ours faces the document's value: the measurement, or the model."""
    kind = c.paper_kind
    if kind == "auto":
        kind = "measurement" if c.measured is not None else "model"
    if kind == "measurement":
        return "ours", c.measured
    return "our model", c.model


def _ref(v: Any) -> str:
    return fmt(v) if not isinstance(v, Rate) else f"{fmt(v.value)} ({v.events:,} of {v.trials:,})"


def judge(c: Comparison, quick: bool = False) -> Judgement:
    """Judge one comparison (module docstring).

    >>> judge(Comparison("n", paper=22, model=27)).status
    'deviates'
    >>> from bloomkit.experiments.evidence import Check
    >>> judge(Comparison("n", paper=22, model=27, check=Check(27, "brute force"), erratum="E")).status
    'document erratum'
    >>> judge(Comparison("rate", model=7.12e-6, measured=Rate(9, 10**6))).status
    'consistent within noise'
    """
    who, ours = _who(c)
    a = agreement(ours, c.paper, c.tolerance) if c.paper is not None else None
    b = agreement(c.measured, c.model, c.tolerance) if c.model is not None else None
    found: list[Judgement] = []
    a_text = f"{who} {_ref(ours)} vs the document's {_ref(c.paper)}: {a.how}" if a else ""
    b_text = f"measured {_ref(c.measured)} vs model {_ref(c.model)}: {b.how}" if b else ""
    if a is not None and not a.agrees:
        found.append(_paper_off(c, ours, a_text, b))
    if b is not None and not b.agrees:
        found.append(_model_off(c, b, b_text, quick))
    if found:
        return min(found, key=lambda j: _SEVERITY[j.status])
    if a is None and b is None:
        if c.differs and c.paper is not None:
            return Judgement("not comparable", f"not comparable: {c.differs}", "")
        return Judgement("not judged", "descriptive: no value to check against", "")
    detail = "; ".join(t for t in (a_text, b_text) if t)
    judged = [x for x in (a, b) if x is not None]
    coarse = quick and any(x.coarse for x in judged)
    if coarse or any(x.noise or x.unresolved for x in judged):
        cannot = any(x.unresolved for x in judged)
        if quick:  # the full run decides what the quick sample leaves open
            tail = "; the quick run's sample cannot resolve " + ("it" if cannot else "a difference of this size")
        else:
            tail = "; the sample cannot resolve it" if cannot else ""
        return Judgement("consistent within noise", f"within the noise of the trial counts ({detail}){tail}", detail,
                         resolved=not (cannot or coarse))
    return Judgement("reproduced", f"agrees ({detail})", detail)


def _paper_off(c: Comparison, ours: Any, text: str, b: Agreement | None) -> Judgement:
    """Ours differs from the document: not comparable, a document erratum, or a defect."""
    if c.differs:
        evidence = ""
        if b is not None and b.agrees:
            evidence = f"; at our setting the measurement agrees with our model ({b.how})"
        if c.check is not None:
            evidence += f"; {_check_text(c.check)}"
        return Judgement("not comparable", f"not comparable: {c.differs}{evidence}", text)
    if c.check is not None:
        with_ours = agreement(ours, c.check.value, c.tolerance)
        with_paper = agreement(c.check.value, c.paper, c.tolerance)
        if with_ours is not None and with_ours.agrees and with_paper is not None and not with_paper.agrees:
            return Judgement("document erratum",
                             f"document erratum: {_check_text(c.check)}, as ours; {c.erratum or 'the document is wrong'}",
                             text)
        side = "the document's" if with_paper is not None and with_paper.agrees else "neither"
        return Judgement("deviates", f"DEFECT of ours? {text}; the independent check ({_check_text(c.check)}) "
                                     f"agrees with {side} value", text)
    return Judgement("deviates", f"DEFECT of ours? {text}; no cause found", text)


def _model_off(c: Comparison, b: Agreement, text: str, quick: bool) -> Judgement:
    """Our measurement differs from the model: the model approximate, or a defect."""
    off = f"{b.rel:+.0%}" if b.rel is not None else "off"
    if c.check is not None:
        with_meas = agreement(c.measured, c.check.value, c.tolerance)
        with_model = agreement(c.check.value, c.model, c.tolerance)
        if with_meas is not None and with_meas.agrees:
            both = c.check.value
            if isinstance(c.measured, Rate) and isinstance(both, Rate):
                both = c.measured.combine(both)  # two independent implementations: pool them
            pooled = agreement(both, c.model, c.tolerance) if both is not c.check.value else with_model
            if with_model is None or not with_model.agrees or (pooled is not None and not pooled.agrees):
                how = with_meas.how if with_model is None or not with_model.agrees else \
                    f"pooled with the measurement, {_ref(both)} vs the model: {pooled.how if pooled else ''}"
                return Judgement("document model approximate",
                                 f"document model approximate: the measurement is {off} from the model ({text}); an "
                                 f"independent check agrees with the measurement ({_check_text(c.check)}: {how})",
                                 text)
            return Judgement("consistent within noise",
                             f"within the noise of the trial counts: the measurement alone differs from the model "
                             f"({text}), but pooled with the independent check ({_check_text(c.check)}) it does not "
                             f"({pooled.how if pooled else ''})" + ("; the quick run's sample cannot resolve it" if quick else ""),
                             text)
        return Judgement("deviates", f"DEFECT of ours? {text}; the independent check ({_check_text(c.check)}) "
                                     "does not side with the measurement", text)
    # a setting that differs from the document's (c.differs) does not explain our measurement
    # differing from our own model: that needs evidence or it is ours
    return Judgement("deviates", f"DEFECT of ours? {text}; no cause found", text)


def _check_text(ch: Check) -> str:
    return f"{_ref(ch.value)} by {ch.how}"


def verdict(result: ExperimentResult, quick: bool = False) -> Verdict:
    """The experiment's verdict: its most severe comparison's, with that comparison's cause."""
    judged = [(c, judge(c, quick)) for c in result.comparisons]
    if not judged:
        return Verdict("not judged", "no comparison", "")
    worst_c, worst = min(judged, key=lambda cj: (_SEVERITY[cj[1].status], not cj[1].resolved))
    others: dict[str, int] = {}
    for _c, j in judged:
        if j.status not in (worst.status, "not judged"):
            others[j.status] = others.get(j.status, 0) + 1
    n_same = sum(j.status == worst.status for _c, j in judged)
    rows = "row" if n_same == 1 else "rows"
    more = f" [{n_same} {rows} {worst.status}" + "".join(f", {n} {s}" for s, n in others.items()) + "]" if len(judged) > 1 else ""
    headline = f"{worst_c.quantity}: {worst.detail}" if worst.detail else ""
    return Verdict(worst.status, f"{worst_c.quantity}: {worst.cause}{more}", headline)


# ---------------------------------------------------------------------------------------------
# running


@dataclass
class Run:
    """One experiment's outcome: its result (None if it failed), the files written for it."""

    experiment: Experiment
    result: ExperimentResult | None
    error: str = ""
    files: list[str] = field(default_factory=list)
    quick: bool = False

    @property
    def verdict(self) -> Verdict:
        if self.result is None:
            last = self.error.strip().splitlines()[-1] if self.error.strip() else "error"
            return Verdict("failed", last)
        return verdict(self.result, self.quick)


def prepare_output(out: Path) -> Path:
    """Create the report directory and make sure files can be written into it, before any
    experiment runs; a directory that cannot be written raises one clear
    :class:`~bloomkit.errors.BloomkitError`.

    Complexity: O(1) file operations.
    """
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".bloomkit-write-test-", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        why = e.strerror or type(e).__name__
        raise BloomkitError(f"cannot write the report into {str(out)!r}: {why}") from None
    return out


def run_experiment(exp: Experiment, out: Path, *, quick: bool, seed: int | None = None) -> Run:
    """Run one experiment and write its CSV and PNG into ``out``; an exception is recorded
    (the report shows the traceback), not raised."""
    try:
        result = exp.run(quick=quick, seed=seed)
    except Exception as e:  # report it and go on with the others
        return Run(exp, None, "".join(traceback.format_exception(e)).rstrip(), quick=quick)
    run = Run(exp, result, quick=quick)
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
    fig = plt.figure(figsize=(8, 5.4))
    try:
        plot(fig)
        fig.suptitle(textwrap.fill(figure_title(exp), 90), fontsize=10, fontweight="bold")
        _legible(fig)
        if fig.get_layout_engine() is None:  # a figure-level legend brings the constrained layout
            fig.tight_layout()
        fig.savefig(path, dpi=110, bbox_inches="tight",  # nothing cut at the edges (long legends)
                    metadata={"Title": figure_title(exp), "Description": f"bloomkit experiment {exp.id}; {exp.source}"})
    finally:
        plt.close(fig)
    return True




MIN_FONT = 7.5
"""Points: no text of a figure is smaller (legends of 5 pt were unreadable)."""


def _legible(fig: Any) -> None:
    """Raise every text of the figure (legends, ticks, labels) to at least :data:`MIN_FONT`."""
    for text in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "set_fontsize")):
        if text.get_fontsize() < MIN_FONT:
            text.set_fontsize(MIN_FONT)


# ---------------------------------------------------------------------------------------------
# writing: one list of blocks, rendered as markdown and as html


@dataclass(frozen=True)
class _Block:
    kind: str  # "h1" | "h2" | "text" | "table" | "image" | "code"
    text: str = ""
    anchor: str = ""


def _cell(v: Any) -> str:
    """One table cell: the value as printed, on one line (a blank line would end an HTML
    block in markdown)."""
    return " ".join(fmt(v).split())


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


_BACK = "[Back to the summary](#summary) · [overview](#overview)"


def _document_of(exp: Experiment) -> str:
    """The id's prefix: the source document ("000".."004"), or the family ("base")."""
    return exp.id.split("-", 1)[0]


def _overview(runs: Sequence[Run]) -> list[_Block]:
    """Verdicts per source document, and the comparisons that deviate without a cause."""
    order = [*VERDICTS[:-1], "not judged", "failed"]
    per_doc: dict[str, dict[str, int]] = {}
    rows_by: dict[str, int] = {}
    for r in runs:
        doc = _document_of(r.experiment)
        per_doc.setdefault(doc, {})
        st = r.verdict.status
        per_doc[doc][st] = per_doc[doc].get(st, 0) + 1
        if r.result is not None:
            for c in r.result.comparisons:
                j = judge(c, r.quick)
                rows_by[j.status] = rows_by.get(j.status, 0) + 1
    used = [s for s in order if any(s in d for d in per_doc.values())]
    table = [(doc, sum(d.values()), *[d.get(s, 0) or "" for s in used]) for doc, d in sorted(per_doc.items())]
    totals = {s: sum(d.get(s, 0) for d in per_doc.values()) for s in used}
    table.append(("all", len(runs), *[totals[s] for s in used]))
    tally = ", ".join(f"{totals[s]} {s}" for s in used)
    row_tally = ", ".join(f"{rows_by[s]} {s}" for s in order if rows_by.get(s))
    defects = []
    for r in runs:
        if r.result is None:
            continue
        for c in r.result.comparisons:
            j = judge(c, r.quick)
            if j.status == "deviates":
                defects.append((_anchor(r.experiment.id), c.quantity, j.detail, j.cause))
    blocks = [
        _Block("h2", "Overview", anchor="overview"),
        _Block("text", f"{len(runs)} experiments: {tally}. Their comparisons: {row_tally}."),
        _Block("table", _table_html(("document", "experiments", *used), table)),
        _Block("h2", "Defects of ours", anchor="defects"),
    ]
    if defects:
        blocks += [_Block("text", f"{len(defects)} comparisons deviate and nothing explains them: each is a "
                                  "defect of ours until shown otherwise."),
                   _Block("table", _table_html(("experiment", "quantity", "ours vs reference", "cause"), defects,
                                               [d[0] for d in defects]))]
    else:
        blocks.append(_Block("text", "None: no comparison deviates without a cause (every difference from the "
                                     "document is explained below by noise, a document erratum, an approximate "
                                     "document model or a setting that differs, each with its evidence)."))
    return blocks


def _rules() -> str:
    return (f"How a row is judged: ours against the document's value, and our measurement against our model, "
            f"apart. Numbers without sampling noise agree within {TOLERANCE:.0%} ({APPROX_TOLERANCE:.0%} where "
            f"the document says 'about'); rates are compared with their counts (exact binomial tests at "
            f"{Z_TOLERANCE:g} sd, two-sample tests when the document states its sample size, t tests on the "
            f"spread when filters are rebuilt), other measurements within {Z_TOLERANCE:g} standard errors; any "
            f"value within {TOLERANCE:.0%} agrees (a large sample's significant few percent included: its sd is "
            f"in the cause). A band wider than +-{RESOLUTION:.0%} of the value cannot resolve it; in quick mode a "
            f"band wider than {TOLERANCE:.0%} says it cannot resolve a difference of that size. Timings are judged only as "
            "ratios of one run, by their direction. A difference is a document erratum or an approximate "
            "document model only when an independent derivation (check) agrees with ours and not with the "
            "document; not comparable when the settings differ (said which); otherwise it deviates.")


def _summary(runs: Sequence[Run]) -> list[_Block]:
    rows, links = [], []
    for r in runs:
        v = r.verdict
        rows.append((_anchor(r.experiment.id), r.experiment.title, v.status, v.reason, v.headline))
        links.append(_anchor(r.experiment.id))
    table = _table_html(("experiment", "title", "verdict", "cause", "headline: ours vs reference"), rows, links)
    return [_Block("h2", "Summary", anchor="summary"), _Block("table", table), _Block("text", _rules())]


def _section(run: Run, errata: dict[str, int]) -> list[_Block]:
    exp, res = run.experiment, run.result
    blocks = [_Block("h2", f"{exp.id}: {exp.title}", anchor=_anchor(exp.id)), _Block("text", _BACK)]
    v = run.verdict
    if res is None:
        return [*blocks, _Block("text", f"Source: {exp.source}. **Failed:**"), _Block("code", run.error)]
    timing = f"Run time: {res.seconds:.2f} s"
    if res.jit_seconds >= 0.005:
        timing += f" (not counted: {res.jit_seconds:.2f} s compiling or loading JIT kernels)"
    blocks.append(_Block("text", f"Source: {exp.source}. {timing}. Verdict: **{v.status}**."))
    if res.comparisons:
        rows = []
        for c in res.comparisons:
            j = judge(c, run.quick)
            cause = j.cause
            if j.status == "document erratum" and c.erratum:
                cause += f" [E{errata.setdefault(c.erratum, len(errata) + 1)}]"
            check = "" if c.check is None else f"{_ref(c.check.value)} ({c.check.how})"
            rows.append((c.quantity, _ref(c.paper), c.model, c.measured, check, j.status,
                         cause + (f". Note: {c.note}" if c.note else "")))
        blocks.append(_Block("table", _table_html(
            ("quantity", "paper", "model", "measured", "independent check", "verdict", "cause"), rows)))
    if res.notes:
        blocks.append(_Block("text", res.notes))
    for f in run.files:
        blocks.append(_Block("image", f) if f.endswith(".png") else _Block("text", f"Data: [{f}]({f})"))
    return blocks


def _errata(errata: dict[str, int]) -> list[_Block]:
    if not errata:
        return []
    rows = [(f"E{i}", text) for text, i in sorted(errata.items(), key=lambda t: t[1])]
    return [_Block("h2", "Document errata cited", anchor="errata"), _Block("text", _BACK),
            _Block("text", "Each erratum is backed by the independent derivation in its row; the full entries are in "
                           "the source documents' ERRATA.md and the docs pages named."),
            _Block("table", _table_html(("erratum", "explanation"), rows))]


def _document(runs: Sequence[Run], quick: bool) -> list[_Block]:
    from .. import __version__

    head = [
        _Block("h1", "bloomkit reproduction report"),
        _Block("text", f"bloomkit {__version__}. Mode: {'quick' if quick else 'full'}"
                       + (" (fewer trials than the documents: rows the sample cannot resolve say so)" if quick else "")
                       + ". Each section puts the document's value (paper), our model's and our measurement side "
                         "by side, every row with its verdict and cause. Run times leave out JIT compilation and "
                         "kernel loading (given apart); they were measured on whatever else the machine was running."),
    ]
    errata: dict[str, int] = {}
    sections = [b for r in runs for b in _section(r, errata)]
    return head + _overview(runs) + _summary(runs) + sections + _errata(errata)


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
body { font-family: system-ui, sans-serif; max-width: 80rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.85rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.4rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
img { max-width: 100%; }
pre { background: #f6f6f6; padding: 0.5rem; overflow-x: auto; }
nav.top { position: sticky; top: 0; background: #fff; padding: 0.3rem 0; border-bottom: 1px solid #ddd; }
h1, h2 { scroll-margin-top: 2.5rem; }
"""


def _html(blocks: Sequence[_Block], folder: Path) -> str:
    MarkdownIt = require("markdown_it", "experiments", "the HTML report").MarkdownIt  # noqa: N806

    md = MarkdownIt("commonmark", {"html": False})  # raw HTML in notes is shown, escaped
    title = next((b.text for b in blocks if b.kind == "h1"), "report")
    body = ['<nav class="top"><a href="#overview">overview</a> · <a href="#defects">defects of ours</a> · '
            '<a href="#summary">summary</a></nav>']
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
