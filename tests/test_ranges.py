"""Unit tests of bloomkit.ranges (document 000): schema, filter, models, optimizers, persistence."""

from __future__ import annotations

import math
import pickle
from typing import Any

import numpy as np
import pytest
from _damage import assert_damage_detected

import bloomkit
from bloomkit.errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from bloomkit.experiments.ranges import TABLE1, random_attribute_set  # doc 000, Tables 1 and 4
from bloomkit.ranges import (
    Decimal,
    Integer,
    RangeBloomFilter,
    RangeConfig,
    Schema,
    Text,
    optimize_multi,
    optimize_multi_grid,
    optimize_single,
    optimize_single_bruteforce,
    phase1_config,
    phase1_k_ini,
)
from bloomkit.ranges import model as M
from bloomkit.ranges._keys import sha512_positions
from bloomkit.ranges.records import record_batch
from bloomkit.ranges.simulate import simulate

TABLE2_FT = {11: 5.818e-3, 12: 5.652e-3, 13: 5.602e-3, 14: 5.549e-3, 15: 5.496e-3, 16: 5.503e-3, 17: 5.589e-3, 18: 5.727e-3}
TABLE2_A1 = {11: 214, 12: 232, 13: 237, 14: 261, 15: 270, 16: 275, 17: 280, 18: 284}


def schema() -> Schema:
    return Schema([
        Text("Name"), Integer("Age", 0, 120), Integer("Year", 1900, 2100), Decimal("Latitude", -90, 90, 4),
    ])


def _pos(bf: RangeBloomFilter, name: str, value: object) -> np.ndarray:
    """Every position inserting ``{name: value}`` sets (repeats kept)."""
    return bf.layout.positions(record_batch(bf.schema, [{name: value}], "test"))[0]


def make(config: RangeConfig | None = None, m: int = 1024, **kw: object) -> RangeBloomFilter:
    cfg = config or RangeConfig(10, {"Age": (1, 2), "Year": (2, 1), "Latitude": (50, 1)})
    return RangeBloomFilter(schema(), m, cfg, **kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# schema


def test_decimal_scaling_and_scope() -> None:
    lat = Decimal("Latitude", -90, 90, 4)
    assert lat.scale(25.0999) == 250999
    assert lat.scale(23.2621448) == 232621
    assert lat.scope_size == 1_800_001
    assert lat.to_interval((25.0, 25.0999)) == (250000, 250999)
    assert Integer("Age", 1, 120).scope_size == 120


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Age", 121),  # outside scope
        ("Age", -1),
        ("Age", (30, 20)),  # reversed
        ("Age", range(5, 5)),  # empty
        ("Age", range(0, 10, 2)),  # step
        ("Age", 3.5),  # non-integer
        ("Age", True),
        ("Age", "20"),  # text for numeric
        ("Age", (1, 2, 3)),
        ("Latitude", float("nan")),
        ("Latitude", float("inf")),
        ("Latitude", "north"),
        ("Latitude", 91.0),
        ("Name", 5),  # number for text
        ("Unknown", 1),  # unknown attribute
    ],
)
def test_bad_record_values(name: str, value: object) -> None:
    bf = make()
    with pytest.raises(InvalidParameterError):
        bf.insert({name: value})
    assert bf.bits.popcount() == 0  # nothing inserted
    bf._check()


def test_bad_schema_and_config() -> None:
    with pytest.raises(InvalidParameterError):
        Schema([Text("a"), Text("a")])
    with pytest.raises(InvalidParameterError):
        Schema([])
    with pytest.raises(InvalidParameterError):
        Text("a:b")
    with pytest.raises(InvalidParameterError):
        Integer("x", 5, 1)
    with pytest.raises(InvalidParameterError):
        Decimal("x", 0, float("nan"), 2)
    with pytest.raises(InvalidParameterError):
        RangeConfig(0)
    with pytest.raises(InvalidParameterError):
        RangeConfig(5, {"Age": (1, 6)})  # s > k
    with pytest.raises(InvalidParameterError):
        make(RangeConfig(5, {"Nope": (1, 2)}))  # unknown attribute in config
    with pytest.raises(InvalidParameterError):
        make(RangeConfig(5, {"Name": (2, 1)}))  # grouping a text attribute
    with pytest.raises(InvalidParameterError):
        make(RangeConfig(5, {"Age": (500, 1)}))  # group larger than the scope
    with pytest.raises(InvalidParameterError):
        make(RangeConfig(40), hash="sha512")  # more than 32 positions per SHA-512 key
    with pytest.raises(InvalidParameterError):
        make(hash="sha512", seed=3)
    with pytest.raises(InvalidParameterError):
        make(hash="md5")
    with pytest.raises(InvalidParameterError):
        RangeBloomFilter(schema(), 0, 5)


# ---------------------------------------------------------------------------------------------
# positions follow Figures 2-4


@pytest.mark.parametrize(("k", "d", "s"), [(5, 5, 5), (5, 1, 2), (5, 5, 2), (7, 3, 3), (4, 1, 4)])
def test_positions_follow_figures(k: int, d: int, s: int) -> None:
    sch = Schema([Integer("Age", 0, 120)])
    bf = RangeBloomFilter(sch, 4096, RangeConfig(k, {"Age": (d, s)}), hash="sha512")
    x = 7
    got = set(_pos(bf, "Age", x).tolist())
    # Figure 3/4: s positions of group g, then of g+1, ... until k positions
    g = x // d
    want: list[int] = []
    j = 0
    while len(want) < k:
        words = sha512_positions([f"Age:{(g + j) * d}"], s, 4096)[0].tolist()
        want.extend(words[: k - len(want)])
        j += 1
    assert got == set(want)
    # a range sets the union of its values' positions
    rng_pos = set(_pos(bf, "Age", (3, 17)).tolist())
    union: set[int] = set()
    for v in range(3, 18):
        union |= set(_pos(bf, "Age", v).tolist())
    assert rng_pos == union
    # hashed positions of a range covering G groups: (G - 1) s + k (Eq. 11 for aligned ranges)
    ngroups = 4
    count = len(_pos(bf, "Age", (0, ngroups * d - 1)))
    assert count == (ngroups - 1) * s + k
    if d == 1:
        assert count == M.go(ngroups, d, s, k)


def test_figure2_grouping_same_key() -> None:
    sch = Schema([Integer("Age", 0, 120)])
    bf = RangeBloomFilter(sch, 512, RangeConfig(5, {"Age": (5, 5)}), hash="sha512")
    p0 = _pos(bf, "Age", 0)
    for v in range(1, 5):
        assert np.array_equal(np.sort(_pos(bf, "Age", v)), np.sort(p0))
    assert not np.array_equal(np.sort(_pos(bf, "Age", 5)), np.sort(p0))


# ---------------------------------------------------------------------------------------------
# filter operations


def test_insert_and_queries_no_false_negatives() -> None:
    bf = make()
    bf.insert({"Name": "Ada", "Age": (20, 29), "Year": range(1990, 2000), "Latitude": (25.0, 25.0999)})
    bf._check()
    assert bf.might_contain("Name", "Ada")
    for a in range(20, 30):
        assert bf.might_contain("Age", a)
    assert bf.might_cover("Age", 20, 29)
    assert bf.might_cover("Age", 22, 25)
    assert bf.might_intersect("Age", 0, 20)
    assert bf.might_intersect("Age", 29, 120)
    assert bf.might_cover("Latitude", 25.05, 25.0999)
    assert bf.might_contain("Latitude", 25.0123)
    assert bf.matches({"Name": "Ada", "Age": (21, 28), "Latitude": 25.01})
    assert bf.matches(bf.query_filter({"Year": 1995}))
    # far outside values are (almost surely) absent; predicted rates are tiny here
    assert bf.predicted_fpr() < 0.05
    with pytest.raises(InvalidParameterError):
        bf.might_contain("Age", (1, 2))
    with pytest.raises(InvalidParameterError):
        bf.might_cover("Name", 1, 2)
    with pytest.raises(InvalidParameterError):
        bf.might_intersect("Age", 30, 20)
    with pytest.raises(InvalidParameterError):
        bf.might_contain("Nope", 1)


def test_might_intersect_matches_pointwise() -> None:
    rng = np.random.default_rng(1)
    sch = Schema([Integer("Age", 0, 300)])
    for d, s, k in [(1, 2, 7), (3, 1, 5), (4, 2, 6), (1, 6, 6), (5, 5, 5)]:
        bf = RangeBloomFilter(sch, 256, RangeConfig(k, {"Age": (d, s)}), seed=int(rng.integers(100)))
        bf.insert({"Age": (100, 140)})
        point = np.array([bf.might_contain("Age", v) for v in range(301)])
        for _ in range(30):
            lo = int(rng.integers(0, 290))
            hi = int(rng.integers(lo, 301))
            assert bf.might_intersect("Age", lo, hi) == bool(point[lo : hi + 1].any())
            assert bf.might_cover("Age", lo, hi) == bool(point[lo : hi + 1].all())


def test_simulation_kernel_agrees_with_filter() -> None:
    """The simulation kernel and the filter implement the same positions (Figures 2-4)."""
    for d, s, k in [(1, 2, 10), (3, 1, 6), (2, 3, 7)]:
        R, n, m = 121, 15, 256
        res = simulate(R, n, m, k, d, s, name="Age", hash="xxh64", skip_edges=False)
        sch = Schema([Integer("Age", 0, R - 1)])
        total = 0.0
        for a in range(0, R - n + 1):
            bf = RangeBloomFilter(sch, m, RangeConfig(k, {"Age": (d, s)}))
            bf.insert({"Age": (a, a + n - 1)})
            fp = sum(bf.might_contain("Age", v) for v in range(R) if not a <= v < a + n)
            total += fp / (R - n)
        assert total / (R - n + 1) == pytest.approx(res.fpr, rel=1e-12, abs=1e-15)


def test_union_copy_equality_and_incompatible() -> None:
    a, b = make(), make()
    a.insert({"Age": 30, "Name": "x"})
    b.insert({"Age": (50, 60)})
    u = a | b
    u._check()
    assert u.might_contain("Age", 30) and u.might_cover("Age", 50, 60) and u.might_contain("Name", "x")
    assert u.expected_hashed_positions == pytest.approx(a.expected_hashed_positions + b.expected_hashed_positions)
    c = a.copy()
    assert c == a and c is not a
    c.insert({"Age": 99})
    assert c != a
    with pytest.raises(IncompatibleFiltersError):
        a.union(make(m=2048))
    with pytest.raises(IncompatibleFiltersError):
        a.union(make(RangeConfig(9, {"Age": (1, 2)})))
    with pytest.raises(IncompatibleFiltersError):
        a.union(make(seed=5))
    other_schema = RangeBloomFilter(Schema([Text("Name"), Integer("Age", 0, 100)]), 1024, 10)
    with pytest.raises(IncompatibleFiltersError):
        a.union(other_schema)
    with pytest.raises(IncompatibleFiltersError):
        a.matches(other_schema)
    with pytest.raises(IncompatibleFiltersError):
        a.matches(make(RangeConfig(9)).query_filter({"Age": 3}))


def test_predicted_fpr_uses_eq14() -> None:
    bf = RangeBloomFilter(Schema([Integer("Age", 0, 120), Text("Name")]), 512, RangeConfig(10, {"Age": (1, 2)}))
    bf.insert({"Age": (30, 49)})
    pred = bf.attribute_fprs(fill="expected")
    assert pred["Age"] == pytest.approx(M.f_go(121, 20, 1, 2, 10, 512), rel=1e-12)
    assert set(pred) == {"Age", "Name"}
    total = bf.predicted_fpr(fill="expected")
    assert type(total) is not dict and isinstance(total, float)
    assert total == pytest.approx(pred["Age"] + pred["Name"])
    assert bf.predicted_fpr(fill="expected", attributes=["Age"]) == pytest.approx(pred["Age"])
    obs = bf.attribute_fprs()
    assert obs["Age"] == pytest.approx(M.f_go_fill(121, 20, 1, 2, 10, bf.fill_ratio()))
    assert bf.predicted_fpr() == pytest.approx(sum(obs.values()))
    for bad in ({"fill": "bogus"}, {"attributes": ["Nope"]}):
        with pytest.raises(InvalidParameterError):
            bf.predicted_fpr(**bad)
    with pytest.raises(InvalidParameterError):
        bf.attribute_fprs(fill="bogus")


def test_predicted_fpr_is_a_float_with_keyword_options() -> None:
    """predicted_fpr() is the total (a plain float); the rates per attribute are
    attribute_fprs(); its options are keyword-only."""
    bf = RangeBloomFilter(Schema([Integer("Age", 0, 120)]), 512, RangeConfig(10, {"Age": (1, 2)}))
    bf.insert({"Age": (30, 49)})
    rates = bf.predicted_fpr()
    assert type(rates) is float and rates == pytest.approx(bf.attribute_fprs()["Age"])
    with pytest.raises(TypeError):
        bf.predicted_fpr("expected")


def test_random_operation_sequence_keeps_invariants() -> None:
    rng = np.random.default_rng(7)
    bf = make(m=2048)
    inserted: list[tuple[int, int]] = []
    for _ in range(40):
        lo = int(rng.integers(0, 110))
        hi = int(rng.integers(lo, min(lo + 10, 120) + 1))
        bf.insert({"Age": (lo, hi), "Name": f"n{lo}"})
        inserted.append((lo, hi))
        bf._check()
        for a, b in inserted:
            assert bf.might_cover("Age", a, b)
    assert bf.expected_hashed_positions > 0


# ---------------------------------------------------------------------------------------------
# persistence


def test_round_trip_and_pickle(tmp_path: object) -> None:
    for kw in ({}, {"hash": "sha512"}, {"seed": 99}):
        bf = make(**kw)  # type: ignore[arg-type]
        bf.insert({"Name": "Ada", "Age": (20, 29), "Latitude": 25.5})
        blob = bf.to_bytes()
        back = RangeBloomFilter.from_bytes(blob)
        back._check()
        assert back == bf and back.hash == bf.hash and back.seed == bf.seed
        assert back.predicted_fpr() == bf.predicted_fpr()
        assert back.might_cover("Age", 20, 29)
        assert bloomkit.loads(blob) == bf
        assert pickle.loads(pickle.dumps(bf)) == bf
    import pathlib

    p = pathlib.Path(str(tmp_path)) / "f.bk"
    bf.save(p)
    assert bloomkit.load(p) == bf


def test_damaged_input_raises_format_error() -> None:
    bf = RangeBloomFilter(Schema([Integer("Age", 0, 9)]), 64, RangeConfig(3, {"Age": (1, 2)}))
    bf.insert({"Age": (2, 4)})
    assert_damage_detected(bf.to_bytes(), RangeBloomFilter.from_bytes)
    with pytest.raises(FormatError):
        RangeBloomFilter.from_bytes(b"not a filter at all")


def test_inconsistent_state_raises_format_error() -> None:
    from bloomkit._format import pack

    bf = make()
    params, arrays = bf._to_state()
    bad_params = dict(params, inserted={"Age": [1, 2]})
    with pytest.raises(FormatError):
        RangeBloomFilter.from_bytes(pack(bf._STRUCTURE, bad_params, arrays, hash_id=1, seed=0))
    with pytest.raises(FormatError):
        RangeBloomFilter.from_bytes(pack(bf._STRUCTURE, params, {"words": np.zeros(3, np.uint64)}, hash_id=1, seed=0))
    with pytest.raises(FormatError):
        RangeBloomFilter.from_bytes(pack(bf._STRUCTURE, params, arrays, hash_id=77, seed=0))
    bad_cfg = dict(params, config={"num_hashes": 10, "attributes": {"Age": [1, 20, None]}})
    with pytest.raises(FormatError):
        RangeBloomFilter.from_bytes(pack(bf._STRUCTURE, bad_cfg, arrays, hash_id=1, seed=0))


# ---------------------------------------------------------------------------------------------
# models


def test_special_cases_of_eq14() -> None:
    R, n, m = 10_000, np.arange(1, 400, 7), 512
    for k in (3, 7, 12):
        for d in (1, 2, 9):
            assert np.allclose(M.f_g(R, n, d, k, m), M.f_go(R, n, d, k, k, m), rtol=1e-12)
            assert np.allclose(M.g(n, d, k), M.go(n, d, k, k))
        for s in range(1, k + 1):
            assert np.allclose(M.f_o(R, n, s, k, m), M.f_go(R, n, 1, s, k, m), rtol=1e-12)
            assert np.allclose(M.o(n, s, k), M.go(n, 1, s, k))
        trad = (1 - M.p_go(n, 1, k, k, m)) ** k
        assert np.allclose(M.f_go(R, n, 1, k, k, m), trad, rtol=1e-12)


def test_eq3_average_over_alignments() -> None:
    # Eq. (3): k * sum_i ceil((n+i)/d)/d = ((n-1)/d + 1) k
    for n in (1, 7, 20, 33):
        for d in (1, 2, 5, 8):
            k = 4
            lhs = k * sum(math.ceil((n + i) / d) for i in range(d)) / d
            assert lhs == pytest.approx(M.g(n, d, k))


def test_model_scalar_and_array_agree() -> None:
    ns = np.array([10, 50, 200])
    arr = M.f_go(5000, ns, 2, 1, 9, 512)
    for i, n in enumerate(ns):
        assert M.f_go(5000, int(n), 2, 1, 9, 512) == pytest.approx(arr[i])
    assert M.r(15, 6) == 2 and M.r(5, 5) == 0
    assert M.a1(384, 512) == pytest.approx(512 * (1 - (1 - 1 / 512) ** 384))
    assert M.f_go(100, 100, 1, 1, 5, 512) == 0.0  # nothing outside the range
    assert 0.0 <= M.f_go(20, 5, 20, 1, 5, 64) <= 1.0  # degenerate group as large as the scope


def test_table3_b_i_consistency() -> None:
    """ERRATA 000: b_i = (n_i - 1) s_i / d_i + k and a_1 = m (1 - (1 - 1/m)^b) give Table 2's 270."""
    b = 5 * 15 + M.go(10, 1, 6, 15) + M.go(20, 1, 4, 15) + M.go(500, 5, 1, 15) + M.go(100, 65, 1, 15) + M.go(100, 46, 1, 15)
    assert M.go(10, 1, 6, 15) == 69 and M.go(500, 5, 1, 15) == pytest.approx(114.8)
    assert round(M.a1(b, 512)) == 270


# ---------------------------------------------------------------------------------------------
# optimizers


def test_phase1_and_table2() -> None:
    assert phase1_k_ini(TABLE1, 512) == 15
    assert phase1_config(120, 10, 15) == (1, 6)
    res = optimize_multi(TABLE1, 512)
    assert res.k_ini == 15 and res.k == 15
    assert sorted(res.by_k) == list(range(11, 19))
    for k, ft in TABLE2_FT.items():
        assert res.by_k[k].total_fpr == pytest.approx(ft, rel=0.03)  # acceptance: 3 %
        assert res.by_k[k].total_fpr == pytest.approx(ft, abs=6e-7)  # in fact every printed digit
        assert round(res.by_k[k].expected_set_bits) == TABLE2_A1[k]
    exact = optimize_multi(TABLE1, 512, exact=True)
    for k, ft in TABLE2_FT.items():
        assert exact.by_k[k].total_fpr == pytest.approx(ft, rel=0.004)
    assert res.config()["Income"] == (5, 1) and res.config()["First Name"] is None


def test_table3_configurations() -> None:
    want = {
        13: [(1, 5), (1, 3), (6, 1), (70, 1), (49, 1)],
        14: [(1, 5), (1, 4), (5, 1), (70, 1), (50, 1)],
        15: [(1, 6), (1, 4), (5, 1), (65, 1), (46, 1)],
        16: [(1, 6), (1, 4), (5, 1), (61, 1), (43, 1)],
    }
    res = optimize_multi(TABLE1, 512)
    for k, ds in want.items():
        assert [(a.d, a.s) for a in res.by_k[k].attributes[5:]] == ds


def test_accelerated_phase2_agrees_on_table1() -> None:
    a = optimize_multi(TABLE1, 512)
    b = optimize_multi(TABLE1, 512, accelerate=True)
    assert b.total_fpr == pytest.approx(a.total_fpr, rel=1e-9)


def test_per_attribute_k_never_worse() -> None:
    rng = np.random.default_rng(3)
    for _ in range(3):
        attrs = [("t", None, 1)] + [(f"a{i}", int(r), int(max(1, r // 50))) for i, r in enumerate(rng.integers(200, 50_000, 4))]
        shared = optimize_multi(attrs, 512)
        per = optimize_multi(attrs, 512, per_attribute_k=True)
        assert per.total_fpr <= shared.total_fpr * (1 + 1e-12)
        cfg = RangeConfig.from_result(per)
        assert cfg.num_hashes == per.k


def test_two_phase_close_to_reference_small() -> None:
    rng = np.random.default_rng(11)
    for _ in range(2):
        R = rng.integers(100, 100_000, 5)
        attrs = [(f"a{i}", int(r), int(max(1, round(r * rng.uniform(0.001, 0.1))))) for i, r in enumerate(R)]
        h = optimize_multi(attrs, 512)
        g = optimize_multi_grid(attrs, 512)
        assert g.total_fpr <= h.total_fpr * (1 + 1e-12)
        assert h.total_fpr <= g.total_fpr * 1.02


def test_reference_equals_exhaustive_enumeration_on_two_attributes() -> None:
    import itertools

    from bloomkit.ranges import _kernels as K

    attrs = [("a", 5000, 300), ("b", 800, 20)]
    g = optimize_multi_grid(attrs, 256, ks=[8], d_cap=40)
    R = np.array([5000.0, 800.0])
    n = np.array([300.0, 20.0])
    text = np.zeros(2, dtype=np.bool_)
    opts = [(1, s) for s in range(1, 9)] + [(d, 1) for d in range(2, 41)]
    best = math.inf
    for (d1, s1), (d2, s2) in itertools.product(opts, opts):
        f, _ = K.total_fpr(R, n, text, np.array([d1, d2], float), np.array([s1, s2], float), np.array([8.0, 8.0]), 256.0, False)
        best = min(best, f)
    assert g.total_fpr == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("scheme", ["traditional", "grouping", "overlapping", "grouping-overlapping"])
def test_single_search_matches_bruteforce(scheme: str) -> None:
    for n in (10, 60, 300, 700, 1200):
        fast = optimize_single(10_000, n, 512, scheme)
        brute = optimize_single_bruteforce(10_000, n, 512, scheme)
        assert fast.fpr == pytest.approx(brute.fpr, rel=1e-9), (scheme, n, fast, brute)
        assert fast.evaluations < brute.evaluations


def test_single_optimum_has_d_or_s_equal_one() -> None:
    for n in (50, 400, 900):
        b = optimize_single_bruteforce(10_000, n, 512, general=True, d_max=40)
        assert b.d == 1 or b.s == 1


def test_optimizer_bad_input() -> None:
    with pytest.raises(InvalidParameterError):
        optimize_single(10_000, 0, 512)
    with pytest.raises(InvalidParameterError):
        optimize_single(10_000, 10_000, 512)
    with pytest.raises(InvalidParameterError):
        optimize_single(10_000, 10, 512, "bogus")
    with pytest.raises(InvalidParameterError):
        optimize_multi([], 512)
    with pytest.raises(InvalidParameterError):
        optimize_multi([("a", 10, 20)], 512)  # range larger than the scope
    with pytest.raises(InvalidParameterError):
        optimize_multi([("a", None, 1), ("a", None, 1)], 512)
    with pytest.raises(InvalidParameterError):
        optimize_multi(TABLE1, 512, ks=[0])
    with pytest.raises(InvalidParameterError):
        optimize_multi("abc", 512)


def test_filter_from_optimizer_end_to_end() -> None:
    res = optimize_multi(TABLE1, 512)
    sch = Schema([Text(n) for n, *_ in TABLE1[:5]] + [
        Integer("Age", 1, 120), Integer("Year", 1900, 2100), Integer("Income", 0, 5000),
        Decimal("Longitude", -180, 180, 4), Decimal("Latitude", -90, 90, 4),
    ])
    assert [a.scope_size for a in sch.attributes[5:]] == [120, 201, 5001, 3_600_001, 1_800_001]
    bf = RangeBloomFilter(sch, 512, RangeConfig.from_result(res))
    bf.insert({"First Name": "Ming", "Last Name": "Chang", "University": "NCTU", "Hobby": "go", "Vocation": "prof",
               "Age": (40, 49), "Year": (1990, 2009), "Income": (1000, 1499), "Longitude": (121.0, 121.0099),
               "Latitude": (24.78, 24.7899)})
    bf._check()
    assert bf.expected_hashed_positions == pytest.approx(res.by_k[15].attributes[0].bits * 5 + sum(a.bits for a in res.attributes[5:]), rel=0.05)
    assert 200 < bf.bits.popcount() < 330
    assert bf.matches({"Age": 45, "Longitude": 121.005, "University": "NCTU"})


def test_phase1_rules() -> None:
    from bloomkit.ranges import PHASE1_RULES

    assert PHASE1_RULES == ("errata", "report")
    assert phase1_k_ini(TABLE1, 512, "report") == 15
    a = optimize_multi(TABLE1, 512)
    b = optimize_multi(TABLE1, 512, phase1="report")
    for k in a.by_k:
        assert b.by_k[k].total_fpr == pytest.approx(a.by_k[k].total_fpr, rel=1e-12)
    # on a large-range set the report's rule (1/2)^k gives a larger d and a k_ini one higher
    big = [(f"a{i}", 500_000, 20_000) for i in range(10)]
    assert phase1_k_ini(big, 512, "report") == phase1_k_ini(big, 512, "errata") + 1
    assert phase1_config(500_000, 20_000, 12, "report")[0] > phase1_config(500_000, 20_000, 12, "errata")[0]
    with pytest.raises(InvalidParameterError):
        optimize_multi(TABLE1, 512, phase1="bogus")


def test_experiments_tables_2_3_and_fig13() -> None:
    from bloomkit.experiments.registry import get_experiment

    t2 = get_experiment("000-table2").run(quick=True)
    assert len(t2.rows) == 8 and all(r["rel_diff"] < 0.03 for r in t2.rows)
    t3 = get_experiment("000-table3").run(quick=True)
    assert t3.comparisons[0].measured == 0  # every (d, s) and rounded b_i as in the report
    f13 = get_experiment("000-fig13").run(quick=True)
    by = {c.quantity: c for c in f13.comparisons}
    assert by["grouping: largest n with fpr <= 2^-10"].model == 240  # the optimizer's (model) value


@pytest.mark.slow
def test_two_phase_within_2_percent_of_reference_on_random_10_attribute_sets() -> None:
    rng = np.random.default_rng(2026)
    gaps = []
    for _ in range(15):
        attrs = random_attribute_set(rng)
        h = optimize_multi(attrs, 512)  # unit steps, as in Figure 7
        g = optimize_multi_grid(attrs, 512)
        gaps.append(h.total_fpr / g.total_fpr - 1)
    assert max(gaps) <= 0.02, gaps


@pytest.mark.slow
def test_table4_shape() -> None:
    from collections import Counter

    rng = np.random.default_rng(99)
    sets = [random_attribute_set(rng) for _ in range(150)]
    report = Counter()
    errata = Counter()
    for attrs in sets:
        r = optimize_multi(attrs, 512, accelerate=True, phase1="report")
        e = optimize_multi(attrs, 512, accelerate=True)
        report[r.k - r.k_ini] += 1
        errata[e.k - e.k_ini] += 1
    n = len(sets)
    # report: 781 at k_ini, 216 at k_ini - 1, 3 elsewhere (Table 4)
    assert report[0] / n > 0.6 and report[-1] / n > 0.1
    assert (n - report[0] - report[-1]) / n < 0.05
    # the ERRATA rule's k_ini is one lower: the optimum sits at k_ini or k_ini + 1
    assert errata[1] / n > 0.4 and errata[-1] == 0


def test_golden_positions() -> None:
    """Pin the hashed positions (XXH64 double hashing and the report's SHA-512 words)."""
    import hashlib

    golden = {"xxh64": [1, 4, 18, 32, 33, 50, 55, 57], "sha512": [23, 34, 35, 44, 47, 50, 53, 54, 58]}
    for h, want in golden.items():
        bf = RangeBloomFilter(Schema([Text("N"), Integer("Age", 0, 9)]), 64, RangeConfig(3, {"Age": (1, 2)}), hash=h)
        bf.insert({"Age": (2, 4), "N": "x"})
        assert np.flatnonzero(bf.bits.test_many(np.arange(64))).tolist() == want
    # the SHA-512 positions from first principles: keys Age:2..Age:5 (2 words each, Age:5 only
    # its first k - r s = 1), N:x (3 words); 16-bit big-endian words mod 64
    expect: set[int] = set()
    for key, count in [("Age:2", 2), ("Age:3", 2), ("Age:4", 2), ("Age:5", 1), ("N:x", 3)]:
        dig = hashlib.sha512(key.encode()).digest()
        expect |= {int.from_bytes(dig[2 * i : 2 * i + 2], "big") % 64 for i in range(count)}
    assert sorted(expect) == golden["sha512"]


# ---------------------------------------------------------------------------------------------
# issue 11: one contract (strict nested parameters, the same constraints for files and constructors)


def _schema_list() -> list[dict[str, object]]:
    return schema().to_list()


@pytest.mark.parametrize(("where", "value"), [
    (None, "not a list"),
    (None, []),
    (None, [{"type": "text", "name": "a"}] * 1025),  # too many attributes
    (0, "text"),  # not a dict
    (0, {"type": "text"}),  # missing name
    (0, {"type": "text", "name": "x", "extra": 1}),  # unknown key
    (0, {"type": "blob", "name": "x"}),
    (0, {"type": 5, "name": "x"}),
    (0, {"type": "text", "name": "a:b"}),
    (0, {"type": "text", "name": ""}),
    (0, {"type": "text", "name": "y" * 300}),
    (0, {"type": "text", "name": 7}),
    (1, {"type": "integer", "name": "Age", "lo": "0", "hi": 120}),  # wrong type
    (1, {"type": "integer", "name": "Age", "lo": 0.5, "hi": 120}),
    (1, {"type": "integer", "name": "Age", "lo": True, "hi": 120}),
    (1, {"type": "integer", "name": "Age", "lo": 0, "hi": 2**60}),  # huge
    (1, {"type": "integer", "name": "Age", "lo": 50, "hi": 10}),  # reversed bounds
    (1, {"type": "integer", "name": "Age", "lo": 0}),  # missing hi
    (3, {"type": "decimal", "name": "Latitude", "lo": float("nan"), "hi": 90, "places": 4}),
    (3, {"type": "decimal", "name": "Latitude", "lo": -90, "hi": float("inf"), "places": 4}),
    (3, {"type": "decimal", "name": "Latitude", "lo": -90, "hi": 90, "places": 13}),
    (3, {"type": "decimal", "name": "Latitude", "lo": -90, "hi": 90, "places": None}),
    (3, {"type": "decimal", "name": "Latitude", "lo": -9e12, "hi": 90, "places": 4}),  # scaled beyond 2**52
    (3, {"type": "decimal", "name": "Latitude", "lo": 90, "hi": -90, "places": 4}),
    (3, {"type": "decimal", "name": "Latitude", "lo": -90, "hi": 90}),  # missing places
    (2, {"type": "integer", "name": "Age", "lo": 0, "hi": 9}),  # duplicate name
])
def test_schema_from_list_is_strict(where, value) -> None:
    items = value if where is None else [*_schema_list()[:where], value, *_schema_list()[where + 1:]]
    with pytest.raises(InvalidParameterError, match="schema|Schema|Integer|Decimal|Text"):
        Schema.from_list(items)
    with pytest.raises(InvalidParameterError):  # the constructor takes the same description
        RangeBloomFilter(items, 256, 4)  # type: ignore[arg-type]


def test_schema_round_trips_and_constructors_take_descriptions() -> None:
    assert Schema.from_list(_schema_list()) == schema()
    assert Schema.coerce(schema()) is not None
    bf = RangeBloomFilter(_schema_list(), 256, {"num_hashes": 4, "attributes": {"Age": [1, 2, None]}})  # type: ignore[arg-type]
    assert bf.schema == schema() and bf.config == RangeConfig(4, {"Age": (1, 2)})


@pytest.mark.parametrize("value", [
    "x", 5.5, None, {"num_hashes": 4}, {"attributes": {}}, {"num_hashes": 4, "attributes": {}, "x": 1},
    {"num_hashes": True, "attributes": {}}, {"num_hashes": 2000, "attributes": {}},
    {"num_hashes": float("nan"), "attributes": {}}, {"num_hashes": 4, "attributes": []},
    {"num_hashes": 4, "attributes": {"Age": [1, 2]}}, {"num_hashes": 4, "attributes": {"Age": [0, 2, None]}},
    {"num_hashes": 4, "attributes": {"Age": [1, 5, None]}}, {"num_hashes": 4, "attributes": {"Age": [1, 2, 0]}},
    {"num_hashes": 4, "attributes": {"Age": [2**60, 1, None]}}, {"num_hashes": 4, "attributes": {"Age": "x"}},
    {"num_hashes": 4, "attributes": {"Age": [1, "2", None]}},
])
def test_config_from_dict_is_strict(value) -> None:
    with pytest.raises(InvalidParameterError):
        RangeConfig.coerce(value)
    with pytest.raises(InvalidParameterError):
        RangeBloomFilter(schema(), 256, value)  # type: ignore[arg-type]


@pytest.mark.parametrize("kw", [
    {"num_bits": True}, {"num_bits": 0}, {"num_bits": 2**41}, {"num_bits": 1.5}, {"hash": "md5"},
    {"seed": -1}, {"seed": 2**64}, {"seed": "1"}, {"config": True}, {"config": 0}, {"config": RangeConfig(4, {"Nope": (1, 1)})},
])
def test_constructor_uses_the_file_constraints(kw) -> None:
    args = {"num_bits": 256, "config": 4, **kw}
    with pytest.raises(InvalidParameterError):
        RangeBloomFilter(schema(), args.pop("num_bits"), args.pop("config"), **args)


def test_declared_specs_and_hash_ids() -> None:
    from bloomkit.ranges import ProfileIndex
    from bloomkit.ranges._keys import HASH_NAMES

    for cls in (RangeBloomFilter, ProfileIndex):
        assert cls._HASH_IDS == tuple(HASH_NAMES) == (1, 2)
        assert {"schema", "config", "num_bits", "inserted"} <= set(cls._PARAMS)


def test_forged_file_with_valid_crc_and_huge_declared_size_is_refused_before_allocating() -> None:
    from bloomkit._format import pack

    bf = make()
    params, arrays = bf._to_state()
    for m in (2**40, 2**33):
        with pytest.raises(FormatError, match="words"):
            RangeBloomFilter.from_bytes(pack(bf._STRUCTURE, dict(params, num_bits=m), arrays, hash_id=1, seed=0))
    with pytest.raises(FormatError):  # sha512 with a seed: the constructor's rule, in the file
        RangeBloomFilter.from_bytes(pack(bf._STRUCTURE, params, arrays, hash_id=2, seed=5))
    with pytest.raises(FormatError, match="inserted"):
        RangeBloomFilter.from_bytes(pack(bf._STRUCTURE, dict(params, inserted={"Age": [1.0, 1e300]}), arrays,
                                         hash_id=1, seed=0))
    with pytest.raises(FormatError):
        RangeBloomFilter.from_bytes(pack(bf._STRUCTURE, dict(params, count=-1), arrays, hash_id=1, seed=0))


# ---------------------------------------------------------------------------------------------
# issue 12: the protocol, sizing, bulk input


def test_protocol_surface() -> None:
    import json

    from bloomkit._protocols import Structure

    bf = make()
    bf.insert_many([{"Name": "a", "Age": (1, 5)}, {"Name": "b", "Latitude": 25.5}, {}])
    assert isinstance(bf, Structure) and RangeBloomFilter.exact_len is True
    assert len(bf) == 3 and bf.size_in_bits == 1024 and isinstance(bf.size_in_bits, int)
    info = bf.info()
    json.dumps(info)
    assert info["structure"] == "ranges.RangeBloomFilter" and info["count"] == 3
    assert info["predicted_fpr"] == pytest.approx(bf.predicted_fpr())
    assert info["attribute_fprs"] == bf.attribute_fprs() and info["schema"] == bf.schema.to_list()
    c = bf.copy()
    c.insert({"Name": "zz"})
    assert len(c) == 4 and len(bf) == 3 and c.to_bytes() != bf.to_bytes()
    c.clear()
    c._check()
    assert len(c) == 0 and c.bits.popcount() == 0 and c.predicted_fpr() == 0.0 and c == make()
    u = bf | bf.copy()
    assert len(u) == 6
    with pytest.raises(TypeError):
        RangeBloomFilter(schema(), 256, 4, "xxh64")  # type: ignore[misc]  # hash and seed are keyword-only


def test_for_requirements_runs_the_two_phase_optimizer(monkeypatch) -> None:
    sch = Schema([Text(n) for n, *_ in TABLE1[:5]] + [
        Integer("Age", 1, 120), Integer("Year", 1900, 2100), Integer("Income", 0, 5000),
        Decimal("Longitude", -180, 180, 4), Decimal("Latitude", -90, 90, 4)])
    sizes = {n: size for n, scope, size in TABLE1 if scope is not None}
    bf = RangeBloomFilter.for_requirements(sch, sizes, num_bits=512)
    assert bf.num_bits == 512 and bf.config.num_hashes == 15  # Table 2's optimum
    assert (bf.config["Income"].group_size, bf.config["Income"].positions) == (5, 1)
    d = bloomkit.ranges.design(sch, sizes, num_bits=512)
    assert d.predicted_fpr == pytest.approx(5.496e-3, abs=6e-7) and d.config == bf.config
    small = bloomkit.ranges.design(Schema([Text("Name"), Integer("Age", 1, 120)]), {"Age": 10}, fpr=0.01)
    below = bloomkit.ranges.design(Schema([Text("Name"), Integer("Age", 1, 120)]), {"Age": 10}, num_bits=small.num_bits - 1)
    assert small.predicted_fpr <= 0.01 < below.predicted_fpr
    idx = bloomkit.ranges.ProfileIndex.for_requirements(sch, sizes, fpr=0.01, store_records=True)
    assert idx.store_records and bloomkit.ranges.design(sch, sizes, num_bits=idx.num_bits).predicted_fpr <= 0.01
    for kw in ({}, {"num_bits": 512, "fpr": 0.01}, {"num_bits": 1}, {"fpr": 0.0}, {"fpr": "0.1"}):
        with pytest.raises(InvalidParameterError):
            bloomkit.ranges.design(sch, sizes, **kw)  # type: ignore[arg-type]
    monkeypatch.setattr(bloomkit.ranges.config, "MAX_DESIGN_BITS", 256)
    with pytest.raises(InvalidParameterError, match="reachable"):
        bloomkit.ranges.design(sch, sizes, fpr=1e-6)
    for bad in ({"Nope": 3}, {"First Name": 3}, {"Age": 120}, {"Age": 0}, {"Age": 2.5}, [("Age", 3)]):
        with pytest.raises(InvalidParameterError):
            RangeBloomFilter.for_requirements(sch, bad, num_bits=512)  # type: ignore[arg-type]


def _ages(rng: np.random.Generator, n: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(n):
        a = int(rng.integers(0, 100))
        rec: dict[str, object] = {"Name": f"n{i % 37}", "Age": (a, a + int(rng.integers(0, 15))),
                                  "Latitude": round(float(rng.uniform(-80, 80)), 4)}
        if i % 5 == 0:
            del rec["Name"]
        out.append(rec)
    return out


def test_insert_many_equals_a_loop_of_insert_and_loses_nothing() -> None:
    recs = _ages(np.random.default_rng(4), 500)
    a, b = make(m=8192), make(m=8192)
    for r in recs:
        a.insert(r)
    b.insert_many(recs)
    b._check()
    assert a == b and len(a) == len(b) == 500
    assert b.predicted_fpr() == pytest.approx(a.predicted_fpr(), rel=1e-9)
    assert b.expected_hashed_positions == pytest.approx(a.expected_hashed_positions, rel=1e-12)
    for r in recs:  # no false negatives
        assert b.matches(r) and b.might_cover("Age", *r["Age"])  # type: ignore[misc]


def test_insert_many_large_batch_is_hashed_in_parts(monkeypatch) -> None:
    import bloomkit.ranges.filter as F

    recs = _ages(np.random.default_rng(5), 300)
    whole = make(m=4096)
    whole.insert_many(recs)
    monkeypatch.setattr(F, "CHUNK", 7)
    parts = make(m=4096)
    parts.insert_many(recs)
    assert parts == whole and len(parts) == 300


def test_sha512_insert_many_equals_insert() -> None:
    recs = _ages(np.random.default_rng(6), 60)
    a, b = make(m=2048, hash="sha512"), make(m=2048, hash="sha512")
    for r in recs:
        a.insert(r)
    b.insert_many(recs)
    assert a == b


def test_numeric_keys_hash_like_their_strings() -> None:
    """The string-free key hashing equals hashing the str keys "name:value"."""
    from bloomkit._engine.hashing import TAG_STR, hash_many, tag_seed
    from bloomkit.ranges import _kernels as K

    vals = np.array([0, 1, -1, 9, 10, 99, 100, -100, 4503599627370496, -4503599627370496, 123456789], dtype=np.int64)
    for name, seed in (("Age", 0), ("Längengrad", 12345), ("x y", 2**64 - 1)):
        prefix = np.frombuffer((name + ":").encode(), np.uint8)
        got = K.int_key_hashes(prefix, vals, np.uint64(tag_seed(seed, TAG_STR)), K.DIGIT_PAIRS)
        assert np.array_equal(got, hash_many([f"{name}:{v}" for v in vals.tolist()], seed))


def test_vectorised_decimal_scaling_equals_the_one_value_rule() -> None:
    rng = np.random.default_rng(8)
    lat = Decimal("L", -1000, 1000, 4)
    x = np.concatenate([rng.uniform(-999, 999, 20000), np.round(rng.uniform(-999, 999, 20000), 4) + 0.00005,
                        np.round(rng.uniform(-999, 999, 20000), 5), np.arange(-50, 50) / 2e4, [1.0005, -1.0005, 2.5e-5]])
    a, b = lat.intervals(x, lambda i: f"row {i}")
    want = np.array([lat.scale(float(v)) for v in x])
    assert np.array_equal(a, want) and np.array_equal(b, want)
    ints = Integer("I", -10, 10)
    assert ints.intervals([(-10, 3)] * 20, lambda i: "x")[1].tolist() == [3] * 20


DF_ROWS = 600


def _frame(rng: np.random.Generator) -> tuple[object, list[dict[str, object]]]:
    import pandas as pd

    names = np.array([f"n{i % 41}é" if i % 3 else f"n{i % 41}" for i in range(DF_ROWS)])
    age = rng.integers(0, 100, DF_ROWS)
    span = rng.integers(0, 12, DF_ROWS)
    lat = np.round(rng.uniform(-80, 80, DF_ROWS), 4)
    year = rng.integers(1900, 2100, DF_ROWS)
    df = pd.DataFrame({"Latitude": lat, "Year.hi": year, "Name": names, "Age.hi": age + span, "Year.lo": year,
                       "Age.lo": age})
    df.index = rng.permutation(DF_ROWS) * 3  # shuffled labels: read by position, never by label
    recs = [{"Name": str(names[i]), "Age": (int(age[i]), int(age[i] + span[i])), "Year": (int(year[i]), int(year[i])),
             "Latitude": float(lat[i])} for i in range(DF_ROWS)]
    return df, recs


def test_dataframe_pyarrow_and_mapping_give_the_answers_of_the_records() -> None:
    """Real-data workflow: a shuffled-index DataFrame with reordered columns, its pyarrow
    table, a polars frame and a mapping of columns insert exactly the records (same bits), and
    every record is found; absent values are answered like the filter of the records."""
    import polars as pl
    import pyarrow as pa

    df, recs = _frame(np.random.default_rng(9))
    ref = make(m=16384)
    ref.insert_many(recs)
    inputs = {
        "pandas": df, "pandas reordered": df[list(reversed(df.columns))],
        "pyarrow": pa.Table.from_pandas(df, preserve_index=False),
        "polars": pl.from_pandas(df.reset_index(drop=True)),
        "mapping": {c: df[c].to_numpy() for c in df.columns},
        "numpy structured": df.reset_index(drop=True).to_records(index=False),
    }
    for kind, data in inputs.items():
        bf = make(m=16384)
        bf.insert_many(data)
        assert bf == ref and len(bf) == DF_ROWS, kind
    for r in recs:
        assert ref.matches(r)
    # a column of (lo, hi) pairs (Python objects) is the same as the two columns
    import pandas as pd

    pairs = pd.DataFrame({"Name": df["Name"], "Age": list(zip(df["Age.lo"], df["Age.hi"], strict=True)),
                          "Year": df["Year.lo"], "Latitude": df["Latitude"]})
    bf = make(m=16384)
    bf.insert_many(pairs)
    assert bf == ref


def test_table_attributes_subset_and_bad_tables() -> None:
    import pandas as pd

    df, recs = _frame(np.random.default_rng(10))
    sub = make(m=16384)
    sub.insert_many(df[["Age.lo", "Age.hi", "Name"]], attributes=["Name", "Age"])
    ref = make(m=16384)
    ref.insert_many([{"Name": r["Name"], "Age": r["Age"]} for r in recs])
    assert sub == ref
    bf = make()
    bad = {
        "has no column 'Year'": df.drop(columns=["Year.lo", "Year.hi"]),  # missing attribute, by name
        "has no column 'Age.hi'": df.drop(columns=["Age.hi"]),
        "no column 'Latitude'": df.rename(columns={"Latitude": "age"}),  # extra / misspelt column
        "has a column 'Extra'": df.assign(Extra=1),
        "null": df.assign(Latitude=df["Latitude"].where(df.index != df.index[7])),
        "record 3 of RangeBloomFilter.insert_many": df.assign(**{"Age.hi": np.where(np.arange(DF_ROWS) == 3, -1, df["Age.hi"])}),
        "within the scope": df.assign(**{"Age.hi": df["Age.hi"] + 200}),
        "an integer": df.assign(**{"Year.lo": df["Year.lo"].astype(float)}),
        "Text attribute": df.assign(Name=np.arange(DF_ROWS)),
        "finite": df.assign(Latitude=np.where(np.arange(DF_ROWS) == 5, np.inf, df["Latitude"])),
    }
    for msg, table in bad.items():
        with pytest.raises(InvalidParameterError, match=msg.replace("(", r"\(")):
            bf.insert_many(table)
        assert bf.bits.popcount() == 0 and len(bf) == 0  # nothing inserted
    with pytest.raises(InvalidParameterError, match="applies to tables"):
        bf.insert_many(recs, attributes=["Age"])
    with pytest.raises(InvalidParameterError):
        bf.insert_many(df, attributes=["Nope"])
    with pytest.raises(InvalidParameterError):
        bf.insert_many(df, attributes="Name")
    with pytest.raises(InvalidParameterError, match="one record"):
        bf.insert_many({"Name": "x", "Age": 3})  # one record given where a table was expected
    with pytest.raises(InvalidParameterError, match="record 2"):
        bf.insert_many([{"Age": 1}, {"Age": 2}, {"Age": "3"}])
    with pytest.raises(InvalidParameterError, match="record 1"):
        bf.insert_many([{"Age": 1}, {"Nope": 2}])
    with pytest.raises(InvalidParameterError, match="mappings"):
        bf.insert_many([{"Age": 1}, ("Age", 2)])
    with pytest.raises(InvalidParameterError):
        bf.insert_many("Age")
    with pytest.raises(InvalidParameterError, match="surrogate"):
        bf.insert_many([{"Name": "ok"}] * 20 + [{"Name": "bad\ud800"}])
    with pytest.raises(InvalidParameterError, match="two columns of numbers"):
        bf.insert_many(pd.DataFrame({"Age.lo": [(1, 2)], "Age.hi": [(3, 4)]}), attributes=["Age"])
    bf.insert_many([])
    bf.insert_many(df.iloc[:0])
    assert len(bf) == 0 and bf.bits.popcount() == 0


def test_doctests_of_the_ranges_modules() -> None:
    import doctest
    import importlib

    for name in ("config", "filter", "index", "layout", "model", "optimize", "schema", "_keys"):
        mod = importlib.import_module(f"bloomkit.ranges.{name}")
        res = doctest.testmod(mod)
        assert res.failed == 0, name


def test_docs_worked_example_runs() -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "ranges.md").read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    exec(compile(code, "docs/ranges.md", "exec"), {"__name__": "__docs__"})


def test_keys_of_huge_scopes_fit_64_bits() -> None:
    wide = Schema([Integer("X", -(2**52), 2**52)])
    with pytest.raises(InvalidParameterError, match="64 bits"):
        RangeBloomFilter(wide, 256, RangeConfig(1024, {"X": (2**53, 1)}))
    bf = RangeBloomFilter(wide, 256, RangeConfig(8, {"X": (2**40, 1)}))
    bf.insert_many([{"X": (-(2**52), 2**52)}, {"X": 2**52}])
    assert bf.might_contain("X", 0) and bf.might_cover("X", -(2**52), 2**52)


def test_optimizer_results_compare_and_print():
    """by_k holds the chosen result itself: == and repr must not recurse through it."""
    from bloomkit.ranges import optimize_multi

    attrs = [("Name", None, 1), ("Age", 120, 10)]
    a, b = optimize_multi(attrs, 256), optimize_multi(attrs, 256)
    assert a == b and a.by_k[a.k] is a and "by_k" not in repr(a)
    assert a != optimize_multi(attrs, 512)


def test_filters_of_one_design_share_their_layout() -> None:
    """Equal constructor arguments give one (immutable) Layout: a new filter of a known design
    builds no plans; arguments the constructor refuses are still refused (a bool seed is not
    the seed 1), and unhashable ones (a configuration mapping) build their own, equal, layout."""
    from bloomkit.ranges import Integer, RangeBloomFilter, RangeConfig, Schema

    def make(**kw: Any) -> RangeBloomFilter:
        args = {"schema": Schema([Integer("Age", 0, 100)]), "num_bits": 512,
                "config": RangeConfig(7, {"Age": (2, 2)}), "seed": 1, **kw}
        return RangeBloomFilter(args.pop("schema"), args.pop("num_bits"), args.pop("config"), **args)

    a, b = make(), make()
    assert a.layout is b.layout and make(seed=2).layout is not a.layout
    assert hash(RangeConfig(7, {"Age": (2, 2)})) == hash(RangeConfig(7, {"Age": [2, 2]}))
    for bad in ({"seed": True}, {"seed": 1.0}, {"num_bits": 512.0}, {"num_bits": True}):
        with pytest.raises(InvalidParameterError):
            make(**bad)
    c = make(config={"num_hashes": 7, "attributes": {"Age": [2, 2, None]}})
    assert c.layout is not a.layout and not c.layout.differences(a.layout)
    a.insert({"Age": 5})
    c |= a
    assert c.might_contain("Age", 5) and not b.might_contain("Age", 5)  # contents stay per filter
