"""ScalableBloomFilter: sizing after Almeida et al., growth independent of batch boundaries, the
membership protocol, bad input, persistence, and real-data workflows against a Python set."""

from __future__ import annotations

import json
import pickle
import threading

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import bloomkit
from bloomkit import (
    BloomFilter,
    FormatError,
    IncompatibleFiltersError,
    InvalidParameterError,
    ScalableBloomFilter,
    theory,
)
from bloomkit import scalable as S
from bloomkit._protocols import MembershipFilter


def _fill(f: ScalableBloomFilter, n: int, start: int = 0) -> np.ndarray:
    keys = np.arange(start, start + n, dtype=np.int64)
    f.add_many(keys)
    return keys


# -- sizing -------------------------------------------------------------------------------------

def test_slices_follow_the_geometric_series():
    f = ScalableBloomFilter(1000, 0.01, growth=2, tightening=0.5, seed=4)
    _fill(f, 7000)
    info = f.info()
    assert f.num_slices == info["num_slices"] == 3
    for i, sl in enumerate(info["slices"]):
        n_i, p_i = 1000 * 2**i, 0.01 * 0.5 * 0.5**i  # n_0 s^i, P_0 r^i with P_0 = P (1 - r)
        assert sl["capacity"] == n_i and sl["fpr"] == pytest.approx(p_i)
        m, k = sl["num_bits"], sl["num_hashes"]
        assert (m, k) == S.slice_size(n_i, p_i)
        assert theory.false_positive_rate(n_i, m, k) <= p_i  # full, the slice is at or below P_i
        assert theory.false_positive_rate(n_i, m - 1, k) > p_i  # with the fewest bits
        assert k == round(np.log2(1 / p_i))
    assert [s["count"] for s in info["slices"]][:2] == [1000, 2000]
    assert f.capacity == 7000 and f.slice_capacities() == [1000, 2000, 4000]
    assert f.size_in_bits == sum(s["num_bits"] for s in info["slices"])


@pytest.mark.parametrize("p", [0.5, 0.3, 0.1, 0.01, 1e-3, 0.000123, 1e-9, 1e-30, 1e-300])
@pytest.mark.parametrize("n", [1, 7, 1000, 123_457])
def test_slice_size_meets_its_rate_with_the_fewest_bits(n, p):
    m, k = S.slice_size(n, p)
    assert 1 <= k <= 1024 and theory.false_positive_rate(n, m, k) <= p * (1 + 1e-12)
    if m > 1:
        assert theory.false_positive_rate(n, m - 1, k) > p * (1 - 1e-12)
    assert m <= 1.01 * theory.num_bits_for(n, p) + 2  # within 1% of the real optimum


def test_doctests():
    import doctest

    assert doctest.testmod(S).failed == 0


def test_model_functions():
    assert S.slice_capacity(10, 4, 3) == 640
    assert S.slice_error(0.02, 0.8, 0) == pytest.approx(0.004)
    rates = [S.slice_error(0.01, 0.9, i) for i in range(200)]
    assert sum(rates) < 0.01 and S.compound_fpr(rates) < sum(rates)
    assert S.compound_fpr([]) == 0.0 and S.compound_fpr([1.0, 0.5]) == 1.0


def test_predicted_fpr_is_the_compound_rate_of_the_current_fills():
    f = ScalableBloomFilter(500, 0.01, seed=1)
    assert f.predicted_fpr() == 0.0
    for n in (100, 500, 501, 3000, 20_000):
        _fill(f, n - len(f) if n > len(f) else 0, start=len(f) * 7 + 10**6)
        fills = [(s["fill_ratio"], s["num_hashes"]) for s in f.info()["slices"]]
        want = 1 - np.prod([1 - x**k for x, k in fills])
        assert f.predicted_fpr() == pytest.approx(want)
        assert f.predicted_fpr() < f.fpr


def test_default_tightening_meets_the_space_target_at_1000x_growth():
    f = ScalableBloomFilter(1000, 0.01)
    _fill(f, 1_000_000)
    static = BloomFilter.for_requirements(1_000_000, 0.01)
    assert f.num_slices == 10 and f.size_in_bits <= 1.8 * static.num_bits


# -- growth, duplicates, batch boundaries ---------------------------------------------------------

def test_a_batch_fills_the_slice_exactly_and_continues():
    f = ScalableBloomFilter(100, 1e-9, seed=2)  # tiny error: no key is a false positive here
    _fill(f, 99)
    assert f.num_slices == 1
    _fill(f, 2, start=99)  # one key to fill slice 0, one for slice 1
    assert [s["count"] for s in f.info()["slices"]] == [100, 1]
    _fill(f, 199, start=101)  # slice 1 full: no empty slice is opened in advance
    assert [s["count"] for s in f.info()["slices"]] == [100, 200]
    f._check()


def _stream(seed: int, n: int) -> list:
    """Keys with repeats (duplicates within and across batches), str and int."""
    rng = np.random.default_rng(seed)
    base = [f"k{i}" for i in range(n // 2)] + list(range(n // 2))
    return [base[i] for i in rng.integers(0, len(base), n)]


@pytest.mark.parametrize("seed", range(4))
def test_result_does_not_depend_on_batch_boundaries(seed):
    keys = _stream(seed, 3000)
    kw = dict(initial_capacity=16, fpr=0.05, seed=seed, tightening=0.7)
    one = ScalableBloomFilter(**kw)
    one.add_many(keys)
    single = ScalableBloomFilter(**kw)
    for k in keys:
        single.add(k)
    rng = np.random.default_rng(100 + seed)
    cuts = np.sort(rng.choice(np.arange(1, len(keys)), 40, replace=False))
    split = ScalableBloomFilter(**kw)
    for part in np.split(np.array(keys, dtype=object), cuts):
        split.add_many(part.tolist())
    assert one.num_slices >= 6
    assert one.to_bytes() == single.to_bytes() == split.to_bytes()
    assert one == single == split
    for f in (one, single, split):
        f._check()
    assert len(one) <= len(set(keys))  # duplicates are not counted


def test_batch_boundaries_at_capacity_and_numpy_input():
    keys = np.random.default_rng(7).integers(0, 5000, 20_000)
    a, b = ScalableBloomFilter(64, 0.01, seed=3), ScalableBloomFilter(64, 0.01, seed=3)
    a.add_many(keys)
    lo = 0
    for cap in [64, 128, 256, 1, 1, 512, 3000]:  # cuts right where slices fill, and single keys
        b.add_many(keys[lo:lo + cap])
        lo += cap
    b.add_many(keys[lo:])
    assert a == b and a.to_bytes() == b.to_bytes()


def test_duplicates_do_not_spend_capacity():
    f = ScalableBloomFilter(100, 0.01, seed=5)
    for _ in range(50):
        f.add_many(["same", "same", 1, 1.0, b"same"])
        f.add("same")
    assert f.num_slices == 1 and len(f) == 4  # "same", 1, 1.0, b"same": four distinct keys
    assert f.key_types == ("bytes", "float", "int", "str")


def test_len_counts_new_keys_and_is_documented_as_an_estimate():
    assert ScalableBloomFilter.exact_len is False
    f = ScalableBloomFilter(1000, 0.01, seed=9)
    keys = _fill(f, 50_000)
    assert 50_000 * (1 - f.fpr) <= len(f) <= 50_000  # only false positives at insertion are not counted
    assert f.contains_many(keys).all()


# -- the protocol ---------------------------------------------------------------------------------

def test_protocol_and_info():
    f = ScalableBloomFilter(100, 0.02, seed=1)
    f.add_many([f"x{i}" for i in range(500)])
    assert isinstance(f, MembershipFilter)
    info = f.info()
    json.dumps(info)
    assert info["structure"] == "scalable.ScalableBloomFilter" and info["count"] == len(f)
    assert info["predicted_fpr"] == pytest.approx(f.predicted_fpr())
    assert isinstance(f.size_in_bits, int) and "ScalableBloomFilter(" in repr(f)
    g = ScalableBloomFilter.for_requirements(100, 0.02, seed=1)
    g.add_many([f"x{i}" for i in range(500)])
    assert g == f


def test_single_keys_and_batches_agree():
    f = ScalableBloomFilter(50, 0.01, seed=8)
    words = [f"w{i}" for i in range(400)]
    for w in words[:200]:
        f.add(w)
    f.add_many(words[200:])
    probe = words + [f"absent{i}" for i in range(2000)] + [("t", 1), 2.5, b"b", -(2**70)]
    assert f.contains_many(probe).tolist() == [k in f for k in probe]
    assert all(w in f for w in words)


def test_clear_copy_and_equality():
    f = ScalableBloomFilter(10, 0.01, seed=3)
    _fill(f, 100)
    c = f.copy()
    assert c == f and c is not f
    c.add("more")
    assert c != f and "more" not in f
    f.clear()
    assert len(f) == 0 and f.num_slices == 1 and f.key_types == () and f.predicted_fpr() == 0.0
    assert not f.contains_many(np.arange(100)).any()
    f._check()
    assert c.contains_many(np.arange(100)).all()
    assert (f == 3) is False


def test_union_of_filters_of_the_same_parameters():
    a, b = ScalableBloomFilter(20, 0.01, seed=1), ScalableBloomFilter(20, 0.01, seed=1)
    ka, kb = _fill(a, 300), _fill(b, 50, start=10_000)
    u = a | b
    assert u.contains_many(ka).all() and u.contains_many(kb).all()
    assert u.num_slices == a.num_slices and len(u) == len(a) + len(b)
    u._check()
    # slices 0 and 1 now hold the keys of both: past their capacity, the bound is lost, and said
    info = u.info()
    assert info["overfilled"] and [s["count"] for s in info["slices"]][:2] == [40, 70]
    fills = [(s["fill_ratio"], s["num_hashes"]) for s in info["slices"]]
    assert u.predicted_fpr() == pytest.approx(1 - np.prod([1 - x**k for x, k in fills]))
    assert u.predicted_fpr() > u.fpr
    assert not a.info()["overfilled"]
    assert a.contains_many(kb).sum() < 5  # the operands are unchanged
    a |= b
    assert a == u
    c = ScalableBloomFilter(20, 0.01, seed=1)
    c.update(b, ["k1", "k2"])
    assert c.contains_many(kb).all() and "k1" in c
    before = u.num_slices
    _fill(u, 2000, start=50_000)  # a union keeps growing: new keys go to new slices
    u._check()
    assert u.num_slices > before and [s["count"] for s in u.info()["slices"]][:2] == [40, 70]


@pytest.mark.parametrize("other", [
    lambda: ScalableBloomFilter(20, 0.02, seed=1),
    lambda: ScalableBloomFilter(20, 0.01, seed=2),
    lambda: ScalableBloomFilter(21, 0.01, seed=1),
    lambda: ScalableBloomFilter(20, 0.01, seed=1, growth=4),
    lambda: ScalableBloomFilter(20, 0.01, seed=1, tightening=0.5),
    lambda: BloomFilter(20, 0.01, seed=1),
])
def test_union_refuses_other_parameters(other):
    f = ScalableBloomFilter(20, 0.01, seed=1)
    with pytest.raises(IncompatibleFiltersError):
        f.union(other())
    with pytest.raises(IncompatibleFiltersError):
        f |= other()
    with pytest.raises(IncompatibleFiltersError):
        f.update(other())


# -- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "match"), [
    ({"initial_capacity": 0, "fpr": 0.01}, "'initial_capacity'"),
    ({"initial_capacity": -5, "fpr": 0.01}, "'initial_capacity'"),
    ({"initial_capacity": 2.5, "fpr": 0.01}, "'initial_capacity'"),
    ({"initial_capacity": True, "fpr": 0.01}, "'initial_capacity'"),
    ({"initial_capacity": 2**60, "fpr": 0.01}, "'initial_capacity'"),
    ({"initial_capacity": 10, "fpr": 0}, "'fpr'"),
    ({"initial_capacity": 10, "fpr": 1}, "'fpr'"),
    ({"initial_capacity": 10, "fpr": float("nan")}, "'fpr'"),
    ({"initial_capacity": 10, "fpr": "0.1"}, "'fpr'"),
    ({"initial_capacity": 10, "fpr": 0.01, "growth": 1}, "'growth'"),
    ({"initial_capacity": 10, "fpr": 0.01, "growth": 2.5}, "'growth'"),
    ({"initial_capacity": 10, "fpr": 0.01, "growth": 2000}, "'growth'"),
    ({"initial_capacity": 10, "fpr": 0.01, "tightening": 0}, "'tightening'"),
    ({"initial_capacity": 10, "fpr": 0.01, "tightening": 1}, "'tightening'"),
    ({"initial_capacity": 10, "fpr": 0.01, "tightening": float("inf")}, "'tightening'"),
    ({"initial_capacity": 10, "fpr": 0.01, "tightening": 1e-9}, "'tightening'.*needs at most 1024 probes"),
    ({"initial_capacity": 10, "fpr": 1e-300, "tightening": 0.5}, "'tightening'.*needs at most 1024 probes"),
    ({"initial_capacity": 10, "fpr": 0.01, "seed": -1}, "'seed'"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        ScalableBloomFilter(**kwargs)


def test_optional_parameters_are_keyword_only():
    with pytest.raises(TypeError):
        ScalableBloomFilter(10, 0.01, 3)  # type: ignore[misc]


def test_bad_keys_change_nothing():
    f = ScalableBloomFilter(4, 0.01, seed=1)
    f.add_many(["a", "b", "c"])
    before = f.to_bytes()
    for bad in (None, float("nan"), object(), [1, 2]):
        with pytest.raises(InvalidParameterError):
            f.add(bad)
        with pytest.raises(InvalidParameterError):
            f.add_many(["d", "e", bad, "f"])
        with pytest.raises(InvalidParameterError):
            bad in f  # noqa: B015
    with pytest.raises(InvalidParameterError, match="null"):
        f.add_many(pd.Series(["x", None, "y"]))
    assert f.to_bytes() == before


def test_growth_stops_with_a_clear_error_at_the_slice_limit(monkeypatch):
    monkeypatch.setattr(S, "MAX_SLICES", 2)
    f = ScalableBloomFilter(2, 1e-6, seed=1)
    f.add_many(["a", "b", "c", "d", "e", "f"])  # slices of 2 and 4 keys: full
    with pytest.raises(InvalidParameterError, match="cannot grow beyond 2 slices"):
        f.add("g")
    with pytest.raises(InvalidParameterError, match="cannot grow"):
        f.add_many(["h"])
    assert len(f) == 6 and f.contains_many(list("abcdef")).all()
    f.add("a")  # a present key needs no room
    f._check()


# -- persistence ----------------------------------------------------------------------------------

def test_save_load_round_trip(tmp_path):
    f = ScalableBloomFilter(30, 0.005, seed=77, growth=4, tightening=0.6)
    f.add_many([f"s{i}" for i in range(1000)])
    f.add_many(np.arange(500))
    path = tmp_path / "f.bkf"
    f.save(path)
    for g in (bloomkit.load(path), ScalableBloomFilter.load(path), pickle.loads(pickle.dumps(f))):
        assert g == f and g.to_bytes() == f.to_bytes() and g.key_types == ("int", "str")
        assert len(g) == len(f) and g.info() == f.info()
        g.add_many(np.arange(10**6, 10**6 + 5000))  # a loaded filter keeps growing
        g._check()


def _forge(f: ScalableBloomFilter, params=None, arrays=None, drop=()) -> bytes:
    from bloomkit._format import pack

    p, a = f._to_state()
    p.update(params or {})
    a = {k: v for k, v in {**a, **(arrays or {})}.items() if k not in drop}
    return pack(f._STRUCTURE, p, a, seed=f.seed)


@pytest.mark.parametrize(("change", "match"), [
    (dict(arrays={"counts": np.array([2, 3, 1])}), "slice 1 holds 3 keys, below its capacity"),
    (dict(arrays={"counts": np.array([2, 4])}), "slices with one num_bits"),
    (dict(arrays={"num_bits": np.array([30, 59, 120, 5])}), "slices with one num_bits"),
    (dict(arrays={"num_bits": np.array([30, 59, 1000])}), "slice 2 has 2 words; num_bits = 1000 needs 16"),
    (dict(drop=("words_1",)), "slice 1 has no words"),
    (dict(arrays={"words_3": np.zeros(2, np.uint64)}), "has 3 slices but an array 'words_3'"),
    (dict(arrays={"words_0": np.array([2**63], np.uint64)}), "slice 0 has bits set beyond num_bits"),
    (dict(params={"tightening": 1e-12}), "needs at most 1024 probes"),
    (dict(params={"initial_capacity": 2**60}), "initial_capacity"),
    (dict(arrays={"num_bits": np.array([], np.int64), "num_hashes": np.array([], np.int64),
                  "counts": np.array([], np.int64)}, drop=("words_0", "words_1", "words_2")), "needs 1 to"),
    (dict(arrays={"counts": np.array([2, 4, 2**62])}), "counts"),
])
def test_forged_files_are_refused_by_name(change, match):
    f = ScalableBloomFilter(2, 0.01, seed=11)
    f.add_many(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"])
    assert f.num_slices == 3
    with pytest.raises(FormatError, match=match):
        bloomkit.loads(_forge(f, **change))


# -- real data: answers against a Python set --------------------------------------------------------

WORDS = [f"word-{i}-é" if i % 7 == 0 else f"word-{i}" for i in range(6000)]


def _shuffled_series(values, seed: int = 0, dtype=None) -> pd.Series:
    order = np.random.default_rng(seed).permutation(len(values))
    return pd.Series(np.asarray(values, dtype=object)[order], index=order[::-1], dtype=dtype)


@pytest.mark.parametrize("kind", [
    "pandas string shuffled", "pandas categorical", "pyarrow chunked", "polars", "numpy U", "parquet column",
])
def test_real_data_workflows_have_zero_wrong_answers(kind, tmp_path):
    stored, absent = WORDS[:4000], WORDS[4000:]
    if kind == "pandas string shuffled":
        data = _shuffled_series(stored, 3, "string")
    elif kind == "pandas categorical":
        data = _shuffled_series(stored, 4, "category")
    elif kind == "pyarrow chunked":
        data = pa.chunked_array([pa.array(stored[:1500]).dictionary_encode(),
                                 pa.array(stored[1500:]).dictionary_encode()])
    elif kind == "polars":
        data = pl.Series(stored)
    elif kind == "numpy U":
        data = np.array(stored)
    else:
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"id": np.arange(4000), "word": stored}), tmp_path / "t.parquet")
        data = pq.read_table(tmp_path / "t.parquet").column("word")
    f = ScalableBloomFilter(100, 0.01, seed=21)  # grows 6 times on the way
    f.add_many(data)
    truth = set(stored)
    got = f.contains_many(WORDS)
    assert all(got[i] for i, w in enumerate(WORDS) if w in truth)  # no false negatives, exactly
    assert got[4000:].mean() < 0.01 + 5 * theory.binomial_sd(0.01, len(absent))
    assert [w in f for w in stored[:200]] == [True] * 200
    ref = ScalableBloomFilter(100, 0.01, seed=21)
    ref.add_many(list(data.to_pylist() if isinstance(data, pa.ChunkedArray) else data.to_list()
                      if isinstance(data, pl.Series) else data.tolist()))
    assert ref == f  # by position, whatever the index: the same filter as the list of values
    assert f.key_types == ("str",)


def test_int_column_from_a_dataframe_by_position():
    ids = np.random.default_rng(5).choice(10**12, 5000, replace=False)
    df = pd.DataFrame({"id": ids}, index=np.random.default_rng(6).permutation(5000))
    f = ScalableBloomFilter(64, 0.01, seed=2)
    f.add_many(df["id"])
    assert f.contains_many(ids).all() and all(int(i) in f for i in ids[:100])
    assert f.key_types == ("int",)


# -- threads ----------------------------------------------------------------------------------------

def test_queries_during_growth_never_miss_a_key():
    f = ScalableBloomFilter(32, 0.01, seed=6)
    first = _fill(f, 1000)
    stop, misses = threading.Event(), []

    def reader() -> None:
        while not stop.is_set():
            if not f.contains_many(first).all() or not all(int(k) in f for k in first[:20]):
                misses.append(1)

    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in readers:
        t.start()
    for lo in range(1000, 60_000, 997):  # every batch opens or fills slices
        _fill(f, 997, start=lo)
    stop.set()
    for t in readers:
        t.join()
    assert not misses
    f._check()


def test_foreign_key_types_warn_growth_does_not():
    """A scalable filter grows instead of overfilling (no warning for many keys); a query of a
    key type it holds none of warns once per type; empty batches change nothing."""
    import warnings

    f = ScalableBloomFilter(100, 0.01)
    f.add_many([])
    assert f.contains_many([]).shape == (0,) and len(f) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", bloomkit.BloomkitWarning)
        f.add_many(np.arange(10_000))
        for i in range(10_000, 10_500):
            f.add(i)
        assert 5 in f and f.contains_many(np.arange(5)).all()
    with pytest.warns(bloomkit.BloomkitWarning, match="str key '5'") as record:
        "5" in f, "6" in f  # noqa: B018 - (never asserting one absent key absent)
    assert len(record) == 1
    with pytest.warns(bloomkit.BloomkitWarning, match="float keys"):
        f.contains_many([5.0])
