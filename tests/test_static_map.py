"""The space / speed map of the report (experiment base-static-map, issue 23), at a size the
default run affords: every structure measured, every model row judged without "deviates", the
peers optional."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from bloomkit.experiments import static_map as M
from bloomkit.experiments.registry import Measure, Rate, Timing, get_experiment
from bloomkit.experiments.report import judge

OURS = {"Bloom", "split-block", "fuse-3", "fuse-4", "ribbon (bumped)", "ribbon (standard)", "Geometric", "Bloomier",
        "ribbon retrieval"}


@pytest.fixture(scope="module")
def small_map():
    return M.measure_map((3_000,), (8,), 1, np.random.default_rng(5))


def test_every_structure_is_measured_exactly(small_map):
    rows, missing = small_map
    got = {r["structure"] for r in rows}
    assert OURS <= got
    for r in rows:
        assert r["false_negatives_or_wrong_values"] == 0, r
        assert r["bits_per_key"] >= r["bound_bits_per_key"] - 1e-9 or r["structure"] == "fastconstmap"
        assert r["build_ns_per_key"] > 0 and r["stored_ns_per_key"] > 0
    peers = {r["structure"] for r in rows if r["peer"]}
    for name in ("pyfusefilter", "pyxorfilter"):  # in the run when installed, named as missing when not
        assert any(p.startswith(name) for p in peers) != (name in missing)


def test_the_rows_are_judged_and_none_deviates(small_map):
    rows, _ = small_map
    comps = M.comparisons(rows)
    kinds = {type(c.measured) for c in comps}
    assert {Measure, Rate, Timing, int} <= kinds
    for c in comps:
        status = judge(c, quick=True).status
        assert status != "deviates", (c.quantity, c.paper, c.model, c.measured)
        if isinstance(c.measured, Timing):
            assert status == "not judged" and math.isfinite(c.measured.ratio)
    fuse4 = next(c for c in comps if c.quantity.startswith("bits per key / bound, fuse-4"))
    assert fuse4.model == pytest.approx(fuse4.measured.value)  # the model is the size, exactly


def test_a_missing_peer_is_named_not_fatal(monkeypatch):
    for name in ("pyfusefilter", "pyxorfilter", "fastconstmap"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    rows, missing = M.measure_map((2_000,), (8,), 1, np.random.default_rng(6))
    assert missing == ["fastconstmap", "pyfusefilter", "pyxorfilter"]
    assert not any(r["peer"] for r in rows) and OURS <= {r["structure"] for r in rows}


def test_the_peer_hash_patch_is_undone():
    mod = pytest.importorskip("pyfusefilter")
    inner = mod.pyfusefilter
    before = inner.hash
    with M.peer_hash(mod):
        assert inner.hash is not before and inner.hash("x") == inner.hash("x")
    assert inner.hash is before


def test_the_map_is_registered_and_plots(small_map):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    exp = get_experiment("base-static-map")
    assert "Graf & Lemire" in exp.source
    fig = Figure()
    M._plot(small_map[0])(fig)
    assert len(fig.axes) == 2 and all(ax.lines for ax in fig.axes)


def test_build_failures_are_counted_per_attempt():
    rows = M.build_failures({600: 6}, np.random.default_rng(3))
    assert {r["structure"] for r in rows} == {"fuse-3", "fuse-4", "ribbon (bumped)", "ribbon (standard)"}
    for r in rows:
        assert r["builds"] == 6 and 0 <= r["failed_attempts"] < r["attempts"]
        assert r["attempts"] >= r["builds"]
    exp = get_experiment("base-static-failures")
    assert exp.title.startswith("Static builds")
