"""The reproduction report (bloomkit.experiments.report, .evidence): rates that carry their counts,
verdicts with causes drawn from evidence, tables that cannot break (every row has every cell,
whatever the cells hold), titled and legible figures, report.html self-contained with its overview
and ways back to the summary, timings without the JIT, an unwritable report directory as one
error line."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from bloomkit.cli import main
from bloomkit.experiments.registry import (
    Check,
    Comparison,
    Experiment,
    ExperimentResult,
    Measure,
    Rate,
    Timing,
)
from bloomkit.experiments.report import Run, judge, run_experiment, verdict, write_report

# -- values carry their counts ------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0.0027, np.float64(0.5), np.float32(1.0), True])
def test_a_measured_value_without_counts_is_a_type_error(bad):
    with pytest.raises(TypeError, match="Rate|bare"):
        Comparison("a rate", model=0.00475, measured=bad)


@pytest.mark.parametrize("kw", [dict(model=Rate(1, 10)), dict(model=Measure(1.0, 0.1)), dict(paper=Timing(2.0)),
                                dict(check=0.5), dict(paper_kind="other"), dict(measured=[1, 2])])
def test_comparison_fields_are_typed(kw):
    with pytest.raises((TypeError, ValueError)):
        Comparison("q", **kw)


def test_an_erratum_needs_its_evidence():
    with pytest.raises(TypeError, match="check"):
        Comparison("n", paper=22, model=27, erratum="ERRATA: 27, not 22")


def test_rates():
    assert Rate(7, 10**6).value == 7e-6 and str(Rate(7, 10**6)) == "7.000e-06 (7 / 1,000,000)"
    assert Rate(np.int64(3), np.int64(10)).events == 3
    for bad in ((3, 2), (-1, 5), (1, 0)):
        with pytest.raises(ValueError):
            Rate(*bad)
    with pytest.raises(TypeError):
        Rate(1.5, 10)  # type: ignore[arg-type]
    r = Rate.pooled([10, 30, 20], [1000, 1000, 1000])
    assert (r.events, r.trials, r.groups) == (60, 3000, 3) and r.se == pytest.approx(0.01 / np.sqrt(3))
    assert Rate.pooled([4], [10]) == Rate(4, 10)
    assert Rate.reported(6.6e-4, 10**5) == Rate(66, 10**5)
    both = Rate.pooled([10, 30], [1000, 1000]).combine(Rate.pooled([15, 25], [1000, 1000]))
    assert (both.events, both.trials, both.groups) == (80, 4000, 4) and both.se is not None
    with pytest.raises(ValueError):
        Measure(float("nan"), 0.0)
    with pytest.raises(ValueError):
        Timing(0.0)


# -- verdicts -------------------------------------------------------------------------------------

E = "the explanation (ERRATA.md)"


@pytest.mark.parametrize(("c", "status"), [
    (Comparison("exact", paper=61, model=61), "reproduced"),
    (Comparison("close", paper=510, model=519), "reproduced"),
    (Comparison("off, no cause", paper=22, model=30), "deviates"),
    (Comparison("off but tolerated", paper=22, model=30, tolerance=0.5), "reproduced"),
    (Comparison("model vs measured", model=0.09185, measured=Rate(9402, 100_000)), "reproduced"),
    (Comparison("37% off in 10^4 trials", model=0.00475, measured=Rate(30, 10_000)), "consistent within noise"),
    (Comparison("... in 10^6", model=0.00475, measured=Rate(2700, 10**6)), "deviates"),
    (Comparison("6-11 in 10^6 vs 7.12e-6", model=7.12e-6, measured=Rate(11, 10**6)), "consistent within noise"),
    (Comparison("0 where 0.5 expected", model=5e-7, measured=Rate(0, 10**6)), "consistent within noise"),
    (Comparison("a share of 100 sets vs 1000", paper=Rate(216, 1000), measured=Rate(25, 100)), "consistent within noise"),
    (Comparison("none in both samples", paper=Rate(0, 1000), measured=Rate(0, 100)), "reproduced"),
    (Comparison("two samples apart", paper=Rate(216, 1000), measured=Rate(60, 100)), "deviates"),
    (Comparison("zero", paper=0, measured=0), "reproduced"),
    (Comparison("zero, counts", paper=0, measured=12), "deviates"),
    (Comparison("an exact zero rate", paper=0.0, measured=Rate(0, 5000)), "reproduced"),
    (Comparison("measure within 3 se", model=3.6, measured=Measure(3.7, 0.05)), "reproduced"),
    (Comparison("measure beyond", model=3.6, measured=Measure(4.5, 0.05)), "deviates"),
    (Comparison("yes", paper="yes", model="yes"), "reproduced"),
    (Comparison("no", paper="yes", measured="no"), "deviates"),
    (Comparison("about", paper="about 2", model=1.906), "reproduced"),
    (Comparison("about, off", paper="about 2", model=4.913), "deviates"),
    (Comparison("bound", paper="<= 1.1", model=1.091), "reproduced"),
    (Comparison("bound, off", paper="<= 0.002", measured=Rate(66, 10_000)), "deviates"),
    (Comparison("bound, within noise", paper="<= 0.002", measured=Rate(3, 1000)), "consistent within noise"),
    (Comparison("range", paper="265-274 (mode)", measured=Measure(268.6, 0.4)), "reproduced"),
    (Comparison("list", paper="511, 897", model="520, 910"), "reproduced"),
    (Comparison("all", paper="all n", measured="5/5"), "reproduced"),
    (Comparison("all, off", paper="all n", measured="4/5"), "deviates"),
    (Comparison("timing, same direction", paper="about 2", measured=Timing(5.1)), "reproduced"),
    (Comparison("timing, other direction", paper=1.21, measured=Timing(0.6)), "deviates"),
    (Comparison("timing, other implementation", paper=1.21, measured=Timing(0.6), differs="a pipelined query"),
     "not comparable"),
    (Comparison("words", paper="consistent for all n", measured=Measure(1.46, 0.0)), "not judged"),
    (Comparison("no value of ours", paper=3.6), "not judged"),
    (Comparison("no reference", measured=Rate(5, 10)), "not judged"),
    # a document erratum needs an independent value that sides with ours
    (Comparison("erratum", paper=22, model=27, check=Check(27, "brute force"), erratum=E), "document erratum"),
    (Comparison("check sides with the paper", paper=22, model=27, check=Check(22, "brute force"), erratum=E),
     "deviates"),
    (Comparison("check sides with neither", paper=22, model=27, check=Check(40, "brute force"), erratum=E),
     "deviates"),
    # an approximate model: an independent measurement agrees with ours, not with the model
    (Comparison("approximate", model=0.1511, measured=Rate(5480, 50_000),
                check=Check(Rate(5400, 50_000), "independent")), "document model approximate"),
    (Comparison("the check agrees with the model", model=0.1511, measured=Rate(5480, 50_000),
                check=Check(Rate(7555, 50_000), "independent")), "deviates"),
    (Comparison("the check alone undecided, pooled decides", model=0.00724, measured=Rate(101, 20_000),
                check=Check(Rate(118, 20_000), "independent")), "document model approximate"),
    (Comparison("not comparable", paper=70, model=38, differs="scale: 2e5 keys vs 4e8"), "not comparable"),
])
def test_judge(c, status):
    j = judge(c)
    assert j.status == status, j
    assert j.cause and (status == "not judged" or j.detail or status == "not comparable")
    assert j.agrees is (None if status == "not judged" else status != "deviates")


def test_causes_name_their_evidence():
    c = Comparison("n", paper=22, model=27, check=Check(27, "brute force of Eq. 6"), erratum="ERRATA.md, 000: 27")
    assert "brute force of Eq. 6" in judge(c).cause and "ERRATA.md, 000: 27" in judge(c).cause
    c = Comparison("fpr", model=0.1511, measured=Rate(5480, 50_000), check=Check(Rate(5400, 50_000), "an independent MLBF"))
    cause = judge(c).cause
    assert "-27%" in cause and "an independent MLBF" in cause
    c = Comparison("N", paper=70, model=38, differs="scale: 2e5 keys vs 4e8")
    assert judge(c).cause == "not comparable: scale: 2e5 keys vs 4e8"
    assert "DEFECT" in judge(Comparison("n", paper=22, model=30)).cause


def test_quick_rows_the_sample_cannot_resolve_say_so():
    c = Comparison("rate", model=0.00475, measured=Rate(30, 10_000))
    assert "quick run's sample cannot resolve" in judge(c, quick=True).cause
    assert "quick" not in judge(c, quick=False).cause
    tiny = Comparison("tiny", model=4.5e-7, measured=Rate(0, 50_000))
    assert "cannot resolve it" in judge(tiny, quick=True).cause and "cannot resolve it" in judge(tiny).cause


def test_verdicts():
    ok = ExperimentResult([], [Comparison("a", paper=1.0, model=1.01), Comparison("b", paper="words")])
    v = verdict(ok)
    assert v.status == "reproduced" and v.reason.startswith("a: agrees")
    bad = ExperimentResult([], [Comparison("a", paper=1.0, model=1.01),
                                Comparison("grouping starts at n", paper=22, model=30),
                                Comparison("N", paper=70, model=38, differs="scale")])
    v = verdict(bad)
    assert v.status == "deviates" and v.reason.startswith("grouping starts at n: DEFECT") and "+36.4%" in v.headline
    assert "1 not comparable" in v.reason and "1 reproduced" in v.reason
    assert verdict(ExperimentResult([], [Comparison("x", paper="words")])).status == "not judged"
    assert verdict(ExperimentResult([])).status == "not judged"


# -- the files ------------------------------------------------------------------------------------

NASTY = "max |x - y| <script>alert(1)</script> & \"q\"\n\nsecond | line"


def _plot(fig):
    ax = fig.add_subplot(111)
    ax.plot([1, 2, 3], [1, 4, 9])


def _nasty(quick, rng):
    rows = [{"n": i, "label": "a|b", "value": float(rng.random())} for i in range(5)]
    comps = [Comparison(NASTY, paper="a|b", model=np.float64(0.5), measured=Rate(51, 100), note=NASTY),
             Comparison("|S_5| / |S|", model=0.2727, measured=Rate(2727, 10_000)),
             Comparison("n", paper=22, model=30, note="|"),
             Comparison("onset", paper=22, model=27, check=Check(27, "brute force"), erratum="E: 27, not 22 <b>")]
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
    overview, defects, summary = p.tables[:3]
    assert overview[0][:2] == ["document", "experiments"] and overview[-1][0] == "all"
    assert [r[1] for r in defects[1:]] == ["n"]  # the one comparison that deviates without a cause
    assert summary[0] == ["experiment", "title", "verdict", "cause", "headline: ours vs reference"]
    assert [r[2] for r in summary[1:]] == ["deviates", "failed"]
    assert summary[1][3].startswith("n: DEFECT of ours?")
    cells = [c for t in p.tables for row in t for c in row]
    assert " ".join(NASTY.split()) in cells  # the cell text survives whole, on one line
    assert "<script>" not in rendered and "&lt;script&gt;" in rendered
    assert p.imgs == ["t-nasty.png"]


def test_the_top_of_the_report_and_the_ways_back(report):
    md = (report / "report.md").read_text()
    assert md.index("## Overview") < md.index("## Defects of ours") < md.index("## Summary") < md.index("## t-nasty")
    sections = md.split("\n## ")[4:]
    assert sections and all("[Back to the summary](#summary)" in sec for sec in sections)
    assert "## Document errata cited" in md
    page = (report / "report.html").read_text()
    assert page.count('href="#summary"') >= 1 + len(sections)  # the navigation bar and every section
    assert 'id="overview"' in page and 'id="defects"' in page and 'id="errata"' in page
    assert "E: 27, not 22 &lt;b&gt;" in page and "[E1]" in page


def test_html_report_is_self_contained(report):
    page = (report / "report.html").read_text()
    p = _parse(page)
    _check_tables(p)
    assert len(p.imgs) == 1 and p.imgs[0].startswith("data:image/png;base64,")
    assert "<script>" not in page and "&lt;b&gt;html&lt;/b&gt;" in page  # notes escaped too
    assert 'href="t-nasty.csv"' in page and 'id="t-nasty"' in page and 'href="#t-nasty"' in page
    assert "this experiment is broken | on purpose" in page  # the traceback of the failure


def test_figure_text_is_legible():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bloomkit.experiments.report import MIN_FONT, _legible

    fig = plt.figure()
    ax = fig.add_subplot(111)
    ax.plot([1, 2], [3, 4], label="a curve")
    ax.legend(fontsize=5)
    ax.tick_params(labelsize=4)
    fig.canvas.draw()
    _legible(fig)
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]
    plt.close(fig)
    assert sizes and min(sizes) >= MIN_FONT


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


def _fails(*args: str, match: str) -> str:
    """The installed command fails with exit 2 and one line ``bloomkit: error: ...``."""
    exe = shutil.which("bloomkit", path=os.path.dirname(sys.executable)) or shutil.which("bloomkit")
    assert exe, "the bloomkit command is not installed in this environment"
    env = {k: v for k, v in os.environ.items() if k != "BLOOMKIT_DEBUG"}
    p = subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=300)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("bloomkit: error: "), p.stderr
    assert match.lower() in lines[0].lower(), lines[0]
    return lines[0]


def test_an_unwritable_report_directory_is_one_error_line(tmp_path):
    fails = _fails
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    line = fails("reproduce", "--quick", "--only", "base-fpr-grid", "--out", str(blocker / "report"),
                 match="cannot write the report into")
    assert str(blocker / "report") in line
    if os.geteuid() != 0:  # root writes into read-only directories
        ro = tmp_path / "read-only"
        ro.mkdir()
        ro.chmod(0o500)
        fails("reproduce", "--quick", "--only", "base-fpr-grid", "--out", str(ro), match="permission denied")


@pytest.mark.parametrize(("exp_id", "quantity", "status", "evidence"), [
    ("000-fig13", "traditional: largest n with fpr <= 2^-10", "document erratum", "closed form"),
    ("002-fig7", "panel b (n'=2000, k'=1): VVBF 0 FPR", "consistent within noise", "suffix bits"),
    pytest.param("003-table3", "highly composite numbers < 831600 (excluding 1)", "document erratum",
                 "trial-division", marks=pytest.mark.slow),
    pytest.param("001-table4.1", "N (k=1)", "not comparable", "scale", marks=pytest.mark.slow),
])
def test_experiments_name_the_evidence_of_their_causes(exp_id, quantity, status, evidence):
    """Causes come from an independent computation in the experiment (issue 27), not a label."""
    from bloomkit.experiments.registry import get_experiment

    res = get_experiment(exp_id).run(quick=True)
    c = next(c for c in res.comparisons if c.quantity == quantity)
    j = judge(c, quick=True)
    assert j.status == status and evidence in j.cause, j
    assert verdict(res, quick=True).status != "deviates"


def test_quick_and_full_judge_a_rate_alike():
    """Issue 27, quick vs full: a rate within the tolerance is reproduced however many sd a large
    sample puts it off (as for other measures), and a quick sample whose band is wider than the
    tolerance says it cannot resolve such a difference instead of "reproduced"."""
    big = Comparison("rate", model=0.1986, measured=Rate(186_696, 1_000_000))  # -6.0 %, about -15 sd
    assert judge(big).status == "reproduced" and "sd" in judge(big).cause
    assert judge(big, quick=True).status == "reproduced"  # its band is far narrower than 10 %
    small = Comparison("rate", paper=0.08, measured=Rate(144, 1_780))  # +1.1 %, band about +-24 %
    assert judge(small).status == "reproduced"
    j = judge(small, quick=True)
    assert j.status == "consistent within noise" and "cannot resolve a difference of this size" in j.cause
    assert not j.resolved
    off = Comparison("rate", model=0.1986, measured=Rate(150_000, 1_000_000))  # -24 %: still a difference
    assert judge(off).status == "deviates"
