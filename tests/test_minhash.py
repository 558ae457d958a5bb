"""MinHash signatures and the Jaccard family of LSBF / MLBF / MLBF* (issue 24)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

import bloomkit
from bloomkit import InvalidParameterError
from bloomkit._parallel import set_num_threads
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
