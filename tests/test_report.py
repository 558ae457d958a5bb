"""The reproduction report (bloomkit.experiments.report): verdicts read from comparisons, tables
that cannot break (every row has every cell, whatever the cells hold), titled figures,
report.html self-contained, timings without the JIT."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from bloomkit.cli import main
from bloomkit.experiments.registry import Comparison, Experiment, ExperimentResult
from bloomkit.experiments.report import Run, judge, run_experiment, verdict, write_report

# -- verdicts -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("c", "agrees"), [
    (Comparison("exact", paper=61, model=61), True),
    (Comparison("close", paper=510, measured=519), True),
    (Comparison("off", paper=22, measured=30), False),
    (Comparison("off but tolerated", paper=22, measured=30, tolerance=0.5), True),
    (Comparison("model vs measured", model=0.09185, measured=0.09402), True),
    (Comparison("model vs measured, off", model=0.3, measured=0.2), False),
    (Comparison("two tiny rates", model=1.2e-7, measured=0.0), True),  # below what a quick run resolves
    (Comparison("tiny rates", model=8.9e-5, measured=7.0e-5), True),
    (Comparison("small rates, 2.7x", paper=1.03e-4, measured=2.82e-4), False),
    (Comparison("a rate off by 43%", model=0.00475, measured=0.0027), False),
    (Comparison("... within 3 sd of 10^4 trials", model=0.00475, measured=0.0027, trials=10_000), True),
    (Comparison("... not of 10^6 trials", model=0.00475, measured=0.0027, trials=10**6), False),
    (Comparison("a share of 100 sets", paper=0.002, measured=0.0, trials=100), True),
    (Comparison("zero", paper=0, measured=0), True),
    (Comparison("zero, counts", paper=0, measured=12), False),
    (Comparison("measured wins over model", paper=0.9697, model=0.5, measured=0.9698), True),
    (Comparison("numeric string", paper="0.5", measured=0.52), True),
    (Comparison("yes", paper="yes", measured="yes"), True),
    (Comparison("no", paper="yes", measured="no"), False),
    (Comparison("about", paper="about 2", measured=1.906), True),
    (Comparison("about, off", paper="about 2 (Section 5.1)", measured=4.913), False),
    (Comparison("tilde", paper="~250", measured=240), True),
    (Comparison("near", paper="near 52 (Age below model)", measured=56), True),
    (Comparison("bound", paper="<= 1.1", model=1.091), True),
    (Comparison("bound, off", paper="<= 0.002", measured=0.0066), False),
    (Comparison("positive", paper="> 0, growing with the set size", measured=0.69), True),
    (Comparison("range", paper="265-274 (mode)", measured=268.6), True),
    (Comparison("range, off", paper="265-274", measured=280), False),
    (Comparison("list", paper="511, 897", measured="520, 910"), True),
    (Comparison("list, off", paper="511, 897", measured="600, 910"), False),
    (Comparison("all", paper="all n", measured="5/5", model="5/5"), True),
    (Comparison("all, off", paper="all n (claimed at equal space)", measured="0/5"), False),
    (Comparison("words", paper="consistent for all n", measured=1.46), None),
    (Comparison("no value of ours", paper=3.6), None),
    (Comparison("no reference", measured=0.5), None),
    (Comparison("string measured", paper=70, measured="3 of 4 seeds"), None),
    (Comparison("bracketed pair", paper="[1097, 696] (printed Eq. 14)", model="[471, 602]"), None),
])
def test_judge(c, agrees):
    j = judge(c)
    assert j.agrees is agrees
    if agrees is not None:
        assert j.text


def test_verdicts():
    ok = ExperimentResult([], [Comparison("a", paper=1.0, measured=1.01), Comparison("b", paper="words")])
    v = verdict(ok)
    assert v.status == "reproduced" and "1 of 1" in v.reason and "1 descriptive" in v.reason
    bad = ExperimentResult([], [Comparison("a", paper=1.0, measured=1.01), Comparison("grouping starts at n", paper=22,
                                                                                       measured=30)])
    v = verdict(bad)
    assert v.status == "deviates" and "grouping starts at n" in v.reason and "+36.4%" in v.headline
    assert verdict(ExperimentResult([], [Comparison("x", paper="words")])).status == "not judged"
    assert verdict(ExperimentResult([])).status == "not judged"
    own = ExperimentResult([], bad.comparisons, verdict="reproduced", verdict_reason="n is on a grid of step 10")
    v = verdict(own)
    assert (v.status, v.reason) == ("reproduced", "n is on a grid of step 10")


# -- the files ------------------------------------------------------------------------------------

NASTY = "max |x - y| <script>alert(1)</script> & \"q\"\n\nsecond | line"


def _plot(fig):
    ax = fig.add_subplot(111)
    ax.plot([1, 2, 3], [1, 4, 9])


def _nasty(quick, rng):
    rows = [{"n": i, "label": "a|b", "value": float(rng.random())} for i in range(5)]
    comps = [Comparison(NASTY, paper="a|b", model=np.float64(0.5), measured=0.51, note=NASTY),
             Comparison("|S_5| / |S|", model=0.2727, measured=0.2727),
             Comparison("n", paper=22, measured=30, note="|")]
    return ExperimentResult(rows, comps, plot=_plot, notes="Notes with | and <b>html</b> and `code|x`.")


def _broken(quick, rng):
    raise RuntimeError("this experiment is broken | on purpose")


EXPS = [Experiment("t-nasty", "Cells with | and <tags>", "test", _nasty, 1),
        Experiment("t-broken", "A failing experiment", "test", _broken, 1)]


class _Tables(HTMLParser):
    """Every table's rows as lists of cell texts; text outside tables is collected too."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.imgs: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.imgs.append(dict(attrs)["src"])

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _parse(html: str) -> _Tables:
    p = _Tables()
    p.feed(html)
    return p


def _check_tables(p: _Tables) -> None:
    assert p.tables
    for t in p.tables:
        assert all(len(row) == len(t[0]) for row in t), "a table row does not have one cell per column"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    runs = [run_experiment(e, out, quick=True) for e in EXPS]
    write_report(out, runs, quick=True)
    return out


def test_markdown_tables_never_break(report):
    from markdown_it import MarkdownIt

    text = (report / "report.md").read_text()
    rendered = MarkdownIt("commonmark").enable("table").render(text)  # as a markdown viewer shows it
    p = _parse(rendered)
    _check_tables(p)
    summary = p.tables[0]
    assert summary[0] == ["experiment", "title", "paper vs ours", "verdict", "why"]
    assert [r[3] for r in summary[1:]] == ["deviates", "failed"]
    cells = [c for t in p.tables for row in t for c in row]
    assert " ".join(NASTY.split()) in cells  # the cell text survives whole, on one line
    assert "<script>" not in rendered and "&lt;script&gt;" in rendered
    assert p.imgs == ["t-nasty.png"]


def test_html_report_is_self_contained(report):
    page = (report / "report.html").read_text()
    p = _parse(page)
    _check_tables(p)
    assert len(p.imgs) == 1 and p.imgs[0].startswith("data:image/png;base64,")
    assert "<script>" not in page and "&lt;b&gt;html&lt;/b&gt;" in page  # notes escaped too
    assert 'href="t-nasty.csv"' in page and 'id="t-nasty"' in page and 'href="#t-nasty"' in page
    assert "this experiment is broken | on purpose" in page  # the traceback of the failure


def test_figures_carry_title_and_id(report):
    from PIL import Image

    meta = Image.open(report / "t-nasty.png").info
    assert meta["Title"] == "t-nasty: Cells with | and <tags>" and "t-nasty" in meta["Description"]


def test_csv_as_before(report):
    assert (report / "t-nasty.csv").read_text().splitlines()[0] == "n,label,value"
    assert not (report / "t-broken.csv").exists()


def test_failed_run_is_reported_not_raised(tmp_path):
    run = run_experiment(EXPS[1], tmp_path, quick=True)
    assert run.result is None and "RuntimeError" in run.error and run.verdict.status == "failed"


def test_run_time_leaves_out_the_jit(tmp_path):
    import numba

    @numba.njit(cache=False)
    def fresh(x):  # compiled on the first call, inside the experiment
        s = 0.0
        for i in range(x.shape[0]):
            s += np.sqrt(x[i]) * np.sin(x[i])
        return s

    def jitted(quick, rng):
        fresh(rng.random(10))
        return ExperimentResult([{"x": 1}])

    res = Experiment("t-jit", "JIT", "test", jitted, 1).run()
    assert res.jit_seconds > 0.05 and res.seconds < res.jit_seconds  # the compile is counted apart
    md = write_report(tmp_path, [Run(Experiment("t-jit", "JIT", "test", jitted, 1), res)], quick=True)[0]
    assert re.search(r"Run time: \d+\.\d\d s \(not counted: \d+\.\d\d s compiling", md.read_text())


def test_reproduce_command_writes_both_reports(tmp_path):
    assert main(["reproduce", "--quick", "--only", "base-fpr-grid", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "report.md").read_text()
    assert md.index("## Summary") < md.index("## base-fpr-grid")
    assert "reproduced" in md and (tmp_path / "report.html").exists()


def test_an_experiment_verdict_must_be_known():
    def odd(quick, rng):
        return ExperimentResult([], verdict="maybe")

    with pytest.raises(ValueError, match="verdict"):
        Experiment("t-odd", "odd", "test", odd, 1).run()
