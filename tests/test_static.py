"""Static filters (bloomkit.static: binary fuse, ribbon) and ribbon retrieval (bloomkit.lookup):
exact answers for stored keys, sizes equal to the models, the bad input of issue 23 (duplicates,
values wider than V, NaN, empty input, builds that cannot succeed), no changes after the build.
False positive rates are checked against their models in tests/test_calibration.py."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from bloomkit import BloomkitError, InvalidParameterError, UpdateNotSupportedError, load
from bloomkit.lookup import GeometricFilter, RibbonRetrieval
from bloomkit.lookup.ribbon import default_overhead
from bloomkit.static import (
    BinaryFuseFilter,
    RibbonFilter,
    fuse_bits_per_key,
    fuse_layout,
    ribbon_slots,
)

RNG = np.random.default_rng(23)
KEYS = RNG.choice(2**62, 30_000, replace=False).astype(np.int64)
ABSENT = np.arange(-200_000, 0, dtype=np.int64)


# -- binary fuse -----------------------------------------------------------------------------------


@pytest.mark.parametrize("arity", [3, 4])
@pytest.mark.parametrize("bits", [8, 16, 32])
def test_fuse_holds_every_key_at_the_modelled_size(arity, bits):
    f = BinaryFuseFilter.build(KEYS, fingerprint_bits=bits, arity=arity, seed=3)
    f._check()
    assert f.contains_many(KEYS).all() and all(int(k) in f for k in KEYS[:50])
    assert len(f) == len(KEYS) and f.size_in_bits == bits * fuse_layout(len(KEYS), arity)[2]
    assert f.bits_per_key() == pytest.approx(fuse_bits_per_key(len(KEYS), arity, bits))
    assert f.predicted_fpr() == 2.0**-bits
    hits = int(f.contains_many(ABSENT).sum())  # 8 bits: 781 expected, 16 / 32: about 0
    assert hits <= 200_000 * 2.0**-bits * 1.5 + 5
    assert f.info()["overhead"] == pytest.approx(f.bits_per_key() / bits)


def test_fuse_space_model_matches_the_reference_sizes():
    """xor_singleheader's Fuse8 (3-wise) measures 9.04 bits per key at 10^6 keys (issue 23)."""
    assert fuse_bits_per_key(10**6, 3, 8) == pytest.approx(9.044, abs=1e-3)
    assert fuse_bits_per_key(10**7, 4, 8) / 8 < 1.08


def test_fuse_input_kinds_and_fpr_parameter():
    words = [f"w{i}" for i in range(5000)]
    for batch in (words, np.array(words), pa.array(words)):
        f = BinaryFuseFilter.build(batch, fpr=1e-3)
        assert f.fingerprint_bits == 16 and f.contains_many(batch).all() and f.key_types == ("str",)
    assert "w1" in f and f.contains_many(["w2", "nope"]).tolist()[0]


def test_fuse_duplicates_are_kept_once_and_counted():
    keys = np.concatenate([KEYS[:5000], KEYS[:5000], KEYS[:100]])
    f = BinaryFuseFilter.build(keys, seed=1)
    assert len(f) == 5000 and f.build_stats()["duplicates"] == 5100
    assert f.contains_many(KEYS[:5000]).all()
    assert len(BinaryFuseFilter.build(["a"] * 1000)) == 1


def test_fuse_tiny_sets():
    for n in (1, 2, 3, 5, 17):
        f = BinaryFuseFilter.build([f"k{i}" for i in range(n)], arity=3)
        f._check()
        assert f.contains_many([f"k{i}" for i in range(n)]).all()


def test_fuse_build_that_cannot_succeed_names_the_cause(monkeypatch):
    from bloomkit.static import fuse

    monkeypatch.setattr(fuse, "fuse_layout", lambda n, a: (64, 1, 64 * a))  # far too few cells
    with pytest.raises(BloomkitError, match=r"no peelable layout found in 3 attempts for 30000 keys"):
        BinaryFuseFilter.build(KEYS, max_attempts=3)


def test_fuse_construction_rarely_retries():
    """Construction failure is rare: 40 builds of 2,000 keys need at most a few retries in all."""
    attempts = [BinaryFuseFilter.build(KEYS[:2000], seed=s).build_stats()["attempts"] for s in range(40)]
    assert sum(attempts) <= 40 + 4, attempts


# -- bad input shared by the three ------------------------------------------------------------------

BUILDERS = {
    "fuse": lambda keys: BinaryFuseFilter.build(keys),
    "ribbon-filter": lambda keys: RibbonFilter.build(keys),
    "ribbon-retrieval": lambda keys: RibbonRetrieval.build(keys, [1] * len(keys)),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_empty_input_and_nan_keys_are_refused(name):
    with pytest.raises(InvalidParameterError, match="must not be empty"):
        BUILDERS[name]([])
    with pytest.raises(InvalidParameterError, match="NaN"):
        BUILDERS[name](np.array([1.0, np.nan, 2.0]))
    with pytest.raises(InvalidParameterError, match="position 1"):
        BUILDERS[name](["a", None])


@pytest.mark.parametrize("cls", [BinaryFuseFilter, RibbonFilter])
def test_static_filters_refuse_changes(cls):
    f = cls.build(["a", "b"])
    for call in (lambda: f.add("c"), lambda: f.add_many(["c"]), lambda: f.update(["c"]), lambda: f | f,
                 lambda: f.union(f)):
        with pytest.raises(UpdateNotSupportedError, match="cannot be changed"):
            call()
    g = f.copy()
    g.clear()
    assert len(g) == 0 and "a" in f


def test_bad_parameters():
    for kw in ({"arity": 5}, {"fingerprint_bits": 12}, {"fpr": 0.0}, {"fpr": 1e-12}, {"fpr": 0.01, "fingerprint_bits": 8},
               {"max_attempts": 0}, {"seed": -1}):
        with pytest.raises(InvalidParameterError):
            BinaryFuseFilter.build(["a"], **kw)
    for kw in ({"fingerprint_bits": 0}, {"fingerprint_bits": 65}, {"overhead": -0.1}, {"fpr": float("nan")}):
        with pytest.raises(InvalidParameterError):
            RibbonFilter.build(["a"], **kw)


def test_thread_batches_equal_one_thread():
    import bloomkit

    big = np.arange(300_000, dtype=np.int64)
    f = BinaryFuseFilter.build(big[::2])
    r = RibbonFilter.build(big[::2])
    many = (f.contains_many(big), r.contains_many(big))
    bloomkit.set_num_threads(1)
    try:
        assert all((a == b.contains_many(big)).all() for a, b in zip(many, (f, r), strict=True))
    finally:
        bloomkit.set_num_threads(None)


# -- ribbon filter ---------------------------------------------------------------------------------


def test_ribbon_filter_any_width_and_duplicates():
    for r in (1, 5, 13, 64):
        for bumped in (True, False):
            f = RibbonFilter.build(KEYS[:3000], fingerprint_bits=r, bumped=bumped)
            f._check()
            assert f.contains_many(KEYS[:3000]).all()
            assert f.size_in_bits == r * f.num_slots + 8 * (f.num_slots - f.build_stats()["layer_slots"][-1]) // 64 \
                if f.build_stats()["bumped_layers"] < f.build_stats()["layers"] else True
    f = RibbonFilter.build(np.concatenate([KEYS[:3000], KEYS[:10]]), bumped=False)
    assert len(f) == 3000
    assert f.num_slots == ribbon_slots(3000, default_overhead(3000)) and f.size_in_bits == 8 * f.num_slots


def test_bumped_ribbon_near_the_bound_and_its_layers_persist():
    f = RibbonFilter.build(KEYS, fingerprint_bits=16)
    st = f.build_stats()
    assert st["layers"] >= 2 and st["bumped_layers"] >= 1 and f.contains_many(KEYS).all()
    assert f.bits_per_key() / 16 < 1.03  # standard ribbon needs about 1.09 here
    g = load_roundtrip(f)
    g._check()
    assert g.build_stats()["layer_slots"] == st["layer_slots"] and g.contains_many(KEYS).all()
    assert (g.contains_many(ABSENT) == f.contains_many(ABSENT)).all()
    t = RibbonRetrieval.build(KEYS, VALUES, value_bits=16, fpr=2**-16)
    assert t.bits_per_key() / 32 < 1.02 and (load_roundtrip(t).get_many(KEYS) == VALUES).all()
    s = RibbonRetrieval.build(KEYS, VALUES, value_bits=16, fpr=2**-16, bumped=False)
    assert s.build_stats()["layers"] == 1 and s.bits_per_key() > t.bits_per_key()


@pytest.mark.parametrize("bumped", [True, False])
def test_rows_implied_by_others_are_solved_without_a_restart(bumped):
    """Few check bits make rows that reduce to 0 = 0 common (a quarter of the dependent rows at
    c = 2): each is solved as it is, the build never starts again, and every stored key reads
    its exact value (or is found by the filter)."""
    keys = KEYS[:6000]
    for r in (1, 2):
        f = RibbonFilter.build(keys, fingerprint_bits=r, bumped=bumped)
        st = f.build_stats()
        assert st["attempts"] == st["layers"] and f.contains_many(keys).all() and len(f) == len(keys)
    for v, e in ((1, 1), (2, 1), (3, 2)):
        vals = RNG.integers(1, 2**v, len(keys))
        t = RibbonRetrieval.build(keys, vals, value_bits=v, error_bits=e, bumped=bumped)
        t._check()
        st = t.build_stats()
        assert st["attempts"] <= st["layers"] + (0 if bumped else 2) and st["duplicates"] == 0
        assert (t.get_many(keys) == vals).all()


def test_repeated_keys_in_a_bumped_build():
    keys = np.concatenate([KEYS[:4000], KEYS[100:110], KEYS[:1]])
    vals = np.concatenate([VALUES[:4000], VALUES[100:110], VALUES[:1]])
    t = RibbonRetrieval.build(keys, vals, value_bits=16, on_duplicate="last")
    assert len(t) == 4000 and t.build_stats()["duplicates"] == 11 and t.build_stats()["bumped_layers"] >= 1
    assert (t.get_many(KEYS[:4000]) == VALUES[:4000]).all()
    with pytest.raises(InvalidParameterError, match="must not repeat a key"):
        RibbonRetrieval.build(keys, vals, value_bits=16)
    f = RibbonFilter.build(keys, fingerprint_bits=7)
    assert len(f) == 4000 and f.contains_many(keys).all()


def test_ribbon_that_cannot_be_solved_names_the_slack():
    with pytest.raises(BloomkitError, match=r"no solution in 2 attempts; raise overhead"):
        RibbonFilter.build(KEYS, overhead=0.0, max_attempts=2, bumped=False)
    with pytest.raises(BloomkitError, match=r"eps = 0"):
        RibbonRetrieval.build(KEYS, np.ones(len(KEYS), np.int64), overhead=0.0, max_attempts=1, bumped=False)


# -- ribbon retrieval ------------------------------------------------------------------------------

VALUES = RNG.integers(1, 2**16, len(KEYS))


def test_ribbon_retrieval_exact_values_and_size():
    t = RibbonRetrieval.build(KEYS, VALUES, value_bits=16, fpr=2**-16, seed=9, bumped=False)
    t._check()
    assert (t.get_many(KEYS) == VALUES).all() and t.get(int(KEYS[7])) == VALUES[7] and t[int(KEYS[8])] == VALUES[8]
    assert t.size_in_bits == 32 * t.num_slots and t.info()["bound_bits_per_key"] == 32
    assert t.predicted_fpr() == (2**16 - 1) / 2**32
    assert t.get_many(ABSENT[:1000], default=-1).min() == -1
    u = load_roundtrip(t)
    assert (u.get_many(KEYS) == VALUES).all()


def load_roundtrip(obj, tmp=None):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.bkf"
        obj.save(p)
        return load(p)


def test_ribbon_retrieval_labels_and_duplicate_policies():
    t = RibbonRetrieval.build(["a", "b", "c", "a"], ["x", "y", "z", "x"], on_duplicate="last", value_bits=8)
    assert t.get_many(["a", "b", "c"]).tolist() == ["x", "y", "z"] and len(t) == 3
    assert t.build_stats()["duplicates"] == 1
    for policy, want in (("last", 5), ("sum", 8), ("max", 5), ("min", 3)):
        t = RibbonRetrieval.build(["k", "j", "k"], [3, 1, 5], on_duplicate=policy)
        assert t.get("k") == want and t.get("j") == 1
    with pytest.raises(InvalidParameterError, match="must not repeat a key"):
        RibbonRetrieval.build(["k", "j", "k"], [3, 1, 3])  # same value twice: still an error
    with pytest.raises(InvalidParameterError, match="more than 2\\^V - 1"):
        RibbonRetrieval.build(["k", "k"], [200, 100], value_bits=8, on_duplicate="sum")


def test_ribbon_retrieval_bad_values_and_widths():
    with pytest.raises(InvalidParameterError, match=r"integers in \[1, 255\]"):
        RibbonRetrieval.build(["a", "b"], [1, 256], value_bits=8)
    with pytest.raises(InvalidParameterError, match="index 1"):
        RibbonRetrieval.build(["a", "b"], [1, 0])
    with pytest.raises(InvalidParameterError, match="value_bits \\+ error_bits <= 64"):
        RibbonRetrieval.build(["a"], [1], value_bits=40, fpr=2**-30)
    with pytest.raises(InvalidParameterError, match="as many entries"):
        RibbonRetrieval.build(["a", "b"], [1])
    t = RibbonRetrieval.build(["a"], [1])
    for call in (lambda: t.set("a", 2), lambda: t.update({"b": 1}), lambda: t.insert("b", 1), lambda: t.remove("a")):
        with pytest.raises(UpdateNotSupportedError):
            call()


def test_freeze_a_geometric_filter():
    g = GeometricFilter.build(KEYS[:5000], VALUES[:5000], value_bits=16, fpr=2**-16, seed=4)
    r = g.to_static(KEYS[:5000])
    assert (r.get_many(KEYS[:5000]) == VALUES[:5000]).all() and r.seed == g.seed and r.fpr == g.fpr
    assert r.size_in_bits < g.size_in_bits
    labels = GeometricFilter.build(["a", "b", "c"], ["red", "green", "red"], value_bits=4)
    frozen = RibbonRetrieval.from_table(labels, ["a", "b", "c"], fpr=2**-20)
    assert frozen.get_many(["a", "b", "c"]).tolist() == ["red", "green", "red"] and frozen.error_bits == 20
    with pytest.raises(InvalidParameterError, match="'zzz' \\(index 1\\), which it finds absent"):
        labels.to_static(["a", "zzz"])
    with pytest.raises(InvalidParameterError, match="'table'"):
        RibbonRetrieval.from_table("not a table", ["a"])


def test_ribbon_retrieval_rows_layout_answers_like_columns(monkeypatch):
    """c = 8 / 16 / 32 / 64 is stored by rows, other c by columns: both layouts hold the same
    solution (same pivots, free slots 0), so a rows table and a columns table of the same keys
    give the same answer for every key, stored or absent; a saved file says its layout, and a
    rows file of another c is refused."""
    import bloomkit.lookup.ribbon as rb
    from bloomkit import FormatError

    keys, absent = KEYS[:5000], ABSENT[:20_000]
    for v, e in ((4, 4), (16, 16), (32, 32), (5, 13)):
        vals = RNG.integers(1, 2**v, len(keys))
        t = RibbonRetrieval.build(keys, vals, value_bits=v, error_bits=e)
        assert t.info()["layout"] == ("rows" if v + e in rb.ROW_WIDTHS else "columns")
        with monkeypatch.context() as mp:
            mp.setattr(rb, "row_width", lambda c: 0)
            cols = RibbonRetrieval.build(keys, vals, value_bits=v, error_bits=e)
        assert cols.info()["layout"] == "columns" and cols.size_in_bits == t.size_in_bits
        assert (t.get_many(keys) == vals).all() and (cols.get_many(keys) == vals).all()
        assert (t.get_many(absent) == cols.get_many(absent)).all()
        back = load_roundtrip(t)
        back._check()
        assert (back.get_many(absent) == t.get_many(absent)).all()
    params, arrays = RibbonRetrieval.build(keys, vals, value_bits=5, error_bits=13)._to_state()
    with pytest.raises(FormatError, match="stored by rows"):
        RibbonRetrieval._from_state({**params, "layout": "rows"}, arrays, 0, 0)


def test_sixty_four_check_bits_still_find_absent_keys():
    """c = 64 (V + E = 64, or a filter's 64-bit fingerprint): the check fp(x) is the whole
    64-bit product (a shift by 64 - c = 0), so absent keys are found absent."""
    keys = KEYS[:3000]
    f = RibbonFilter.build(keys, fingerprint_bits=64)
    assert f.contains_many(keys).all() and not f.contains_many(ABSENT[:50_000]).any()
    vals = RNG.integers(1, 2**32, len(keys))
    for v, e in ((32, 32), (60, 4)):
        t = RibbonRetrieval.build(keys, vals % 2**v + (vals % 2**v == 0), value_bits=v, error_bits=e)
        hits = int((t.get_many(ABSENT[:50_000]) != 0).sum())
        assert hits <= 50_000 * 2.0**-e * 1.5 + 10, (v, e, hits)


def test_bumped_layer_parts_are_independent_of_the_thread_count(monkeypatch):
    """A bumped layer is cut into parts (a function of its size only) whose last bucket bumps
    every key, so the parts are solved on several threads: the same bytes on 1 and 2 threads,
    threshold 64 at the end of every part but the last, exact values, the layout's answers."""
    import bloomkit
    from bloomkit.lookup import _ribbon_kernels as RK

    monkeypatch.setattr(RK, "PART_BUCKETS", 16)  # parts of 1,024 slots: several at a few thousand keys
    keys = KEYS[:12_000]
    vals = RNG.integers(1, 2**16, len(keys))
    built = {}
    for threads in (1, 2):
        bloomkit.set_num_threads(threads)
        try:
            built[threads] = (RibbonRetrieval.build(keys, vals, value_bits=16, fpr=2**-16),
                              RibbonFilter.build(keys, fingerprint_bits=5))
        finally:
            bloomkit.set_num_threads(None)
    for one, two in zip(built[1], built[2], strict=True):
        assert one.to_bytes() == two.to_bytes()
    t, f = built[2]
    t._check()
    assert (t.get_many(keys) == vals).all() and f.contains_many(keys).all()
    m0 = t.build_stats()["layer_slots"][0]
    parts = RK.num_parts(m0)
    assert parts > 4
    nb = m0 // 64
    thr = t._layers.thr[:nb]
    for p in range(1, parts):
        assert thr[p * nb // parts - 1] == 64
    assert (t.get_many(ABSENT[:50_000]) != 0).sum() <= 50_000 * 2.0**-16 * 4 + 5
