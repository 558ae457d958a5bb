"""MinHash signatures and the Jaccard family of LSBF / MLBF / MLBF* (issue 24)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

import bloomkit
from bloomkit import InvalidParameterError
from bloomkit._engine.parallel import set_num_threads
from bloomkit.errors import FormatError, IncompatibleFiltersError
from bloomkit.similarity import (
    JaccardLSBF,
    JaccardMLBF,
    JaccardMLBFStar,
    MinHasher,
    select_jaccard_parameters,
    theory,
)
from bloomkit.similarity.minhash import EMPTY

TEXTS = ["the quick brown fox jumps over the lazy dog", "The  quick brown fox jumped over the lazy dog",
         "colourless green ideas sleep furiously", "naïve café — crème brûlée", "ab", "", "   \t\n "]


def pair_sets(s: float, n: int, size: int = 60, base: int = 0) -> tuple[list[list[str]], list[list[str]], float]:
    """n disjoint pairs of token sets of exact Jaccard similarity ~s (returned exactly)."""
    x = round(2 * size * s / (1 + s))
    A, B = [], []
    for i in range(n):
        a = [f"t{base}-{i}-{j}" for j in range(size)]
        A.append(a)
        B.append(a[:x] + [f"u{base}-{i}-{j}" for j in range(size - x)])
    return A, B, x / (2 * size - x)


def band(events: int, trials: int, p: float, z: float = 5.0) -> bool:
    return float(stats.binomtest(events, trials, min(max(p, 1e-300), 1.0)).pvalue) >= 2 * stats.norm.sf(z)


# -- signatures --------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["kway", "oph"])
@pytest.mark.parametrize("shingle", ["char", "word"])
def test_signatures_are_deterministic_and_seeded(method: str, shingle: str) -> None:
    mh = MinHasher(64, shingle=shingle, method=method, seed=7)
    a = mh.signatures(TEXTS)
    assert a.shape == (len(TEXTS), 64) and a.dtype == np.uint64
    assert np.array_equal(a, MinHasher(64, shingle=shingle, method=method, seed=7).signatures(TEXTS))
    assert not np.array_equal(a[:4], MinHasher(64, shingle=shingle, method=method, seed=8).signatures(TEXTS)[:4])
    assert mh.is_empty(a).tolist() == [False] * 5 + [True, True]  # empty / whitespace: no shingle
    assert (a[5:] == EMPTY).all() and not (a[:5] == EMPTY).any()  # OPH: every bin densified
    # normalization: case and whitespace runs do not matter
    assert np.array_equal(mh.signatures(["A  b\tC"]), mh.signatures(["a b c"]))


def test_same_signatures_on_every_input_kind_and_thread_count() -> None:
    mh = MinHasher(32, seed=3)
    want = mh.signatures(TEXTS)
    many = [f"document {i} " * (i % 7 + 1) for i in range(5000)]
    ref = mh.signatures(many)
    for other in (tuple(TEXTS), np.array(TEXTS), pa.array(TEXTS), pa.array(TEXTS, pa.large_string()),
                  pa.chunked_array([TEXTS[:3], TEXTS[3:]]), pa.array([t.encode() for t in TEXTS], pa.binary()),
                  [t.encode() for t in TEXTS], pa.table({"text": TEXTS})):
        assert np.array_equal(mh.signatures(other), want), type(other)
    pd = pytest.importorskip("pandas")
    assert np.array_equal(mh.signatures(pd.Series(TEXTS, index=range(100, 100 + len(TEXTS))[::-1])), want)
    assert np.array_equal(mh.signatures(pa.array(TEXTS).slice(2, 3)), want[2:5])  # an offset array
    for threads in (1, 2, 3):
        set_num_threads(threads)
        try:
            assert np.array_equal(mh.signatures(many), ref)
        finally:
            set_num_threads(None)


def test_shingle_rules() -> None:
    ch = MinHasher(16, shingle="char", ngram=5, seed=1)
    # a text shorter than the shingle has one shingle: itself
    assert [s.size for s in ch.shingle_sets(["abc", "abcde", "abcdef", "", "é"])] == [1, 1, 2, 0, 1]
    assert ch.shingle_sets(["naïve"])[0].size == 1  # five code points, not six bytes
    wd = MinHasher(16, shingle="word", ngram=2, seed=1)
    assert [s.size for s in wd.shingle_sets(["one", "one two", "one two three", "a a a a"])] == [1, 1, 2, 1]
    assert ch.jaccard("", "") == 0.0 and ch.jaccard("abcdef", "abcdef") == 1.0
    tok = MinHasher(16, seed=1)
    assert tok.jaccard({"a", "b", "c"}, {"b", "c", "d"}) == 0.5
    assert np.array_equal(tok.signatures([{"x", "y"}])[0], tok.signatures([["y", "x", "x"]])[0])
    assert tok.is_empty(tok.signatures([set(), {"a"}])).tolist() == [True, False]


@pytest.mark.parametrize("method", ["kway", "oph"])
def test_each_value_collides_with_probability_jaccard(method: str) -> None:
    """P(h_i(A) = h_i(B)) = J for every value (k-way: independent; OPH: densified bins too)."""
    A, B, J = pair_sets(0.6, 400)
    mh = MinHasher(64, method=method, seed=11)
    eq = int((mh.signatures(A) == mh.signatures(B)).sum())
    # k-way values are independent: binomial; OPH values of one document are correlated: a wider band
    trials = 400 * 64
    assert band(eq, trials, J) if method == "kway" else abs(eq / trials - J) < 0.02


@pytest.mark.parametrize("bad, msg", [
    ([None, "a"], "must not contain nulls. Got None at position 0"),
    (pa.array(["a", None, None]), "2 null(s) (first at position 1)"),
    ([b"ok", b"\xff\xfe"], "must be valid UTF-8. Got bytes that are not at position 1"),
    (pa.array([b"ok", b"\xc3"], pa.binary()), "must be valid UTF-8. Got bytes that are not at position 1"),
    ([1, 2], "must hold str"),
    ("one text", "not a single str"),
    (np.array([1.0, 2.0]), "must hold str"),
    ([{"a"}, "text"], "all texts or all token sets"),
    ([{"a", 1}], "str or bytes tokens"),
    ([{"a"}, None], "must not contain nulls"),
])
def test_bad_texts_raise_clear_errors(bad: object, msg: str) -> None:
    with pytest.raises(InvalidParameterError) as e:
        MinHasher(8).signatures(bad)
    assert msg in str(e.value)


@pytest.mark.parametrize("kw", [{"num_perm": 0}, {"num_perm": 1.5}, {"shingle": "line"}, {"ngram": 0},
                                {"method": "bbit"}, {"normalize": 1}, {"seed": -1}])
def test_bad_hasher_parameters(kw: dict[str, object]) -> None:
    with pytest.raises(InvalidParameterError):
        MinHasher(**kw)  # type: ignore[arg-type]


# -- the filters -------------------------------------------------------------------------------------

MAKERS = {
    "lsbf": lambda: JaccardLSBF(rows=6, bands=8, verify_bits=1 << 16, verify_hashes=4, seed=5),
    "mlbf": lambda: JaccardMLBF((8, 5, 3), bands=8, num_bits=1 << 16, verify_bits=1 << 16, verify_hashes=4, seed=5),
    "star": lambda: JaccardMLBFStar((8, 5, 3), bands=8, verify_bits=1 << 16, verify_hashes=4, seed=5),
}


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_filters_find_what_they_hold_and_round_trip(kind: str) -> None:
    f = MAKERS[kind]()
    f.add_many(TEXTS[:4])
    f.add(TEXTS[4])
    f.add_many(TEXTS[5:])  # empty texts: not stored, not counted
    f._check()
    assert len(f) == 5
    for lv in range(f.num_levels):  # identical texts: no false negatives at any level
        assert f.query_many(TEXTS[:5], lv).all()
        assert not f.query_many(TEXTS[5:], lv).any()  # empty: never a duplicate
    g = bloomkit.loads(f.to_bytes())
    assert type(g) is type(f) and g == f and g.hasher == f.hasher
    assert np.array_equal(g.query_many(TEXTS, 0), f.query_many(TEXTS, 0))
    u = f | MAKERS[kind]()
    assert len(u) == 5 and u.query_many(TEXTS[:5], 0).all()
    assert f.info()["count"] == 5 and repr(f).endswith("with 5 texts")


def test_levels_nest_and_seen_many_is_stream_order() -> None:
    f = MAKERS["star"]()
    A, B, _ = pair_sets(0.5, 300)
    f.add_many(A)
    hits = np.array([f.query_many(B, lv) for lv in range(3)])
    assert (hits[0] <= hits[1]).all() and (hits[1] <= hits[2]).all()  # a finer level implies the coarser
    g = MAKERS["star"]()
    seen = g.seen_many(["a b c d e f", "x y z", "a b c d e f", "", "", "x y z"])
    assert seen.tolist() == [False, False, True, False, False, True] and len(g) == 4
    sig = g.hasher.signatures(["x y z", "new"])
    assert g.query_signatures(sig, 0).tolist() == [True, False]
    assert g.seen_signatures(sig).tolist() == [True, False]


def test_filter_errors() -> None:
    f = MAKERS["star"]()
    with pytest.raises(InvalidParameterError, match="strictly decreasing"):
        JaccardMLBFStar((5, 5))
    with pytest.raises(InvalidParameterError, match="level"):
        f.query_many(["a"], level=3)
    with pytest.raises(InvalidParameterError, match="use JaccardMLBFStar.query_many"):
        f.query(["a", "b"])
    with pytest.raises(InvalidParameterError, match=r"\(n, 64\) uint64"):
        f.add_signatures(np.zeros((2, 3), np.uint64))
    with pytest.raises(InvalidParameterError, match="Jaccard filter"):
        f.distance_for_level(0)
    with pytest.raises(IncompatibleFiltersError):
        f | JaccardMLBFStar((8, 5, 3), bands=8, verify_bits=1 << 16, verify_hashes=4, seed=6)
    with pytest.raises(IncompatibleFiltersError):
        f | JaccardMLBFStar((8, 5, 3), bands=8, verify_bits=1 << 16, verify_hashes=4, seed=5, shingle="word")
    with pytest.raises(InvalidParameterError, match="alpha"):
        MAKERS["mlbf"]().predicted_fpr(similarity=0.5, alpha=0.5)
    raw = bytearray(MAKERS["lsbf"]().to_bytes())
    with pytest.raises(FormatError):
        bloomkit.loads(bytes(raw[:-9]))


@pytest.mark.parametrize("bad", [0, 1, 1.2, -0.1, float("nan"), (0.7, 0.8), (0.8, 0.8), "0.8", ()])
def test_thresholds_outside_zero_one_are_refused(bad: object) -> None:
    with pytest.raises(InvalidParameterError, match="thresholds"):
        select_jaccard_parameters(bad, 1000)


def test_unreachable_targets_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="must be reachable with r <= max_rows = 4"):
        select_jaccard_parameters(0.8, 1000, fnr=1e-6, fpr=1e-6, max_rows=4, max_bands=8)
    with pytest.raises(InvalidParameterError, match="one threshold"):
        JaccardLSBF.for_thresholds((0.9, 0.8), 100)


def test_selected_parameters_meet_their_targets() -> None:
    p = select_jaccard_parameters((0.9, 0.8, 0.7), 10_000)
    f = JaccardMLBFStar.for_thresholds((0.9, 0.8, 0.7), 10_000)
    assert (f.rows_by_level, f.bands, f.verify_bits, f.verify_hashes) == (
        p.rows_by_level, p.bands, p.verify_bits, p.verify_hashes)
    f.add_signatures(np.random.default_rng(0).integers(0, 2**63, (10_000, p.num_perm), dtype=np.uint64))
    for lv, t in enumerate(p.thresholds):
        assert f.predicted_fnr(min(t + 0.1, (t + 1) / 2), level=lv) <= 0.05
        assert f.predicted_fpr(level=lv, similarity=t - 0.2) <= 0.05 + 0.01
        assert math.isclose(f.predicted_fpr(level=lv), p.predicted_verify_fpr[lv], rel_tol=1e-9)
        assert f.predicted_fpr(level=lv) <= 0.01
        assert 0.6 < f.similarity_for_level(lv) < 0.9


# -- the S-curve against measurement ---------------------------------------------------------------


def _s_curve_points(levels: tuple[float, ...], n: int, seed: int) -> list[tuple[float, int, int, int, float]]:
    """(s, level, hits, trials, predicted) for stored texts A_i and queries B_i at similarity s."""
    out = []
    for i, s in enumerate(levels):
        f = JaccardMLBFStar((8, 5, 3), bands=6, verify_bits=1 << 22, verify_hashes=3, seed=seed + i)
        A, B, J = pair_sets(s, n, base=1000 * seed + i)
        f.add_many(A)
        for lv in range(3):
            out.append((J, lv, int(f.query_many(B, lv).sum()), n, float(f.predicted_fpr(level=lv, similarity=J))))
    return out


def test_measured_s_curve_within_the_binomial_band() -> None:
    """Ten similarity levels, three thresholds each; a stored text per query (k-way MinHash):
    the reported fraction lies in the 5-sigma binomial band of predicted_fpr(similarity=s)."""
    pts = _s_curve_points(tuple(np.linspace(0.05, 0.95, 10)), 600, seed=1)
    bad = [p for p in pts if not band(p[2], p[3], p[4])]
    assert not bad, bad
    assert theory.s_curve(0.5, 3, 6) == pytest.approx(1 - (1 - 0.125) ** 6)


@pytest.mark.slow
def test_measured_s_curve_within_the_binomial_band_many_trials() -> None:
    pts = _s_curve_points(tuple(np.linspace(0.05, 0.95, 10)), 6000, seed=2)
    bad = [p for p in pts if not band(p[2], p[3], p[4])]
    assert not bad, bad


def test_the_s_curve_band_catches_the_plain_s_curve_at_finer_levels() -> None:
    """Without the suffix-bit term (the plain s^r_theta) level 0 at s = 0.5 is predicted too low."""
    (J, lv, hits, n, _), *_ = [p for p in _s_curve_points((0.5,), 3000, seed=3) if p[1] == 0]
    assert not band(hits, n, float(theory.s_curve(J, 8, 6)))


def test_verify_false_needs_a_bmlbf() -> None:
    f = MAKERS["mlbf"]()
    f.add_many(TEXTS[:2])
    assert f.query_many(TEXTS[:2], 0, verify=False).all()
    assert f.and_pass_many(TEXTS[:2], 1).all()
    with pytest.raises(InvalidParameterError, match="no BMLBF"):
        MAKERS["star"]().query_many(TEXTS, 0, verify=False)


# -- b-bit verification (minhash_bbit) ---------------------------------------------------------------

from bloomkit.similarity.minhash_bbit import (  # noqa: E402
    BBitIndex,
    bbit_accept_probability,
    bbit_collision_probability,
    bbit_cut,
    bbit_estimate,
    bbit_min_matches,
    select_bbit_parameters,
    verified_report_probability,
)


@pytest.mark.parametrize("bits", [1, 2, 4])
def test_bbit_fields_agree_with_probability_p_b(bits: int) -> None:
    """Li & Koenig with C = 2^-b: the lowest b bits of two texts' MinHash values agree with
    probability 2^-b + (1 - 2^-b) s (200 pairs x 128 values per similarity, 5-sigma band)."""
    mh = MinHasher(128, seed=7)
    for s in (0.3, 0.8):
        A, B, J = pair_sets(s, 200, base=700 + bits)
        low = np.uint64((1 << bits) - 1)
        eq = int(((mh.signatures(A) & low) == (mh.signatures(B) & low)).sum())
        assert band(eq, 200 * 128, float(bbit_collision_probability(J, bits))), (bits, s, eq)


def _verified_points(levels: tuple[float, ...], n: int, seed: int) -> list[tuple[float, int, int, float, float]]:
    """(s, hits, trials, predicted S(s) A(s), plain S(s)): one stored text per query, the
    stored texts pairwise disjoint, so each query has one candidate of similarity s."""
    out = []
    for i, s in enumerate(levels):
        idx = BBitIndex(0.6, rows=2, bands=4, verify_perm=64, bits=2, capacity=n, seed=seed + i)
        A, B, J = pair_sets(s, n, base=5000 + 100 * seed + i)
        idx.add_many(A)
        hits = int(idx.query_many(B).sum())
        assert len(idx) == n
        out.append((J, hits, n, float(idx.predicted_report_probability(J)), float(theory.s_curve(J, 2, 4))))
    idx._check()
    return out


def test_verified_curve_within_the_binomial_band() -> None:
    """Ten similarity levels: the reported fraction of BBitIndex.query_many lies in the 5-sigma
    binomial band of S(s) A(s); near the threshold the plain S-curve is rejected (the test can fail)."""
    pts = _verified_points(tuple(np.linspace(0.05, 0.95, 10)), 600, seed=1)
    bad = [p for p in pts if not band(p[1], p[2], p[3])]
    assert not bad, bad
    near = [p for p in pts if 0.5 < p[0] < 0.7]
    assert near and all(not band(p[1], p[2], p[4]) for p in near)


@pytest.mark.slow
def test_verified_curve_within_the_binomial_band_many_trials() -> None:
    pts = _verified_points(tuple(np.linspace(0.05, 0.95, 10)), 6000, seed=2)
    bad = [p for p in pts if not band(p[1], p[2], p[3])]
    assert not bad, bad


def test_bbit_model_functions() -> None:
    assert bbit_min_matches(128, 4, 0.8) == 104
    assert float(bbit_estimate(bbit_min_matches(64, 1, 0.5), 64, 1)) == pytest.approx(0.5)
    assert float(bbit_accept_probability(1.0, 128, 4, 0.99)) == pytest.approx(1.0)
    assert float(verified_report_probability(0.0, 2, 4, 64, 2, 0.6)) == 0.0
    r, b = select_bbit_parameters(0.8)
    m = bbit_cut(256, 2, 0.8)
    assert m >= bbit_min_matches(256, 2, 0.8) and float(bbit_accept_probability(0.75, 256, 2, 0.8, m)) <= 0.05
    assert float(bbit_accept_probability(0.75, 256, 2, 0.8, m - 1)) > 0.05 or m == bbit_min_matches(256, 2, 0.8)
    p = verified_report_probability(np.array([0.6, 0.75, 0.9]), r, b, 256, 2, 0.8, m)
    assert p[1] <= 0.05 and p[2] >= 0.95 and float(theory.s_curve(0.6, r, b)) <= 0.05
    assert BBitIndex.for_threshold(0.8, 10).min_matches == m
    for bad, match in [(lambda: bbit_collision_probability(1.5, 4), "similarity"),
                       (lambda: bbit_collision_probability(0.5, 3), "bits"),
                       (lambda: bbit_min_matches(0, 4, 0.5), "num_values"),
                       (lambda: bbit_min_matches(8, 4, 1.0), "threshold"),
                       (lambda: bbit_estimate(9, 8, 4), "matches"),
                       (lambda: select_bbit_parameters(0.8, far_gap=0.0, fpr=1e-9), "cannot reach"),
                       (lambda: bbit_cut(64, 2, 0.8, fpr=0.0), "fpr"),
                       (lambda: bbit_accept_probability(0.5, 8, 2, 0.5, 9), "min_matches"),
                       (lambda: select_bbit_parameters(float("nan")), "threshold")]:
        with pytest.raises(InvalidParameterError, match=match):
            bad()


def test_bbit_index_grows_merges_and_pickles() -> None:
    import pickle

    texts = [f"text number {i} with some words {i * 7919 % 1000}" for i in range(400)]
    idx = BBitIndex(0.8, rows=4, bands=6, capacity=2, seed=3)
    assert not idx.seen_many(texts[:200]).any()
    idx._check()
    assert idx.query_many(texts[:200]).all() and len(idx) == 200  # queries store nothing
    assert idx.seen_many(texts[:5] + ["", "   "]).tolist() == [True] * 5 + [False, False]
    other = idx.empty_like()
    other.add_many(texts[200:])
    both = idx | other
    both._check()
    assert len(both) == len(idx) + 200 and both.query_many(texts).all()
    assert not both.query_many(["nothing like the others at all here"]).any()
    back = pickle.loads(pickle.dumps(both))
    back._check()
    assert back.query_many(texts[195:205]).all()
    assert both.nbytes > 0 and "BBitIndex(threshold=0.8" in repr(both)
    with pytest.raises(InvalidParameterError, match="equal parameters"):
        idx | BBitIndex(0.8, rows=4, bands=6, seed=4)
    with pytest.raises(InvalidParameterError, match=r"\(n, 280\) uint64"):
        idx.seen_signatures(np.zeros((2, 3), np.uint64))
    for kw, match in [({"threshold": 1.0}, "threshold"), ({"rows": 0}, "rows"), ({"bits": 64}, "bits"),
                      ({"verify_perm": 0}, "verify_perm"), ({"capacity": 0}, "capacity"),
                      ({"min_matches": 300}, "min_matches")]:
        with pytest.raises(InvalidParameterError, match=match):
            BBitIndex(**kw)  # type: ignore[arg-type]
