"""The compiled search of ProfileIndex (issue 28): one kernel call per query (hashing, the AND of
bit slices, verification) and the interval index for selective verified searches, against a
brute-force model over random profiles and queries, both paths, both modes, with edge cases."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from bloomkit.errors import InvalidParameterError
from bloomkit.ranges import (
    Decimal,
    Integer,
    ProfileIndex,
    RangeBloomFilter,
    RangeConfig,
    Schema,
    Text,
    _index_query,
)
from bloomkit.ranges import index as ranges_index

SCHEMA = Schema([Text("City"), Integer("Age", 0, 120), Integer("X", -5000, 4999), Decimal("Lon", -180, 180, 2)])
CFG = RangeConfig(8, {"Age": (1, 2), "X": (4, 1), "Lon": (10, 3)})
CITIES = ["Hsinchu", "Taipei", "Zürich", "c3"]


def _interval(rng: np.random.Generator, lo: int, hi: int, widths: tuple[int, ...]) -> Any:
    w = int(rng.choice(widths))
    a = int(rng.integers(lo, hi - w + 1))
    return a if w == 0 and rng.random() < 0.5 else (a, a + w)


def _profile(rng: np.random.Generator) -> dict[str, Any]:
    p: dict[str, Any] = {}
    if rng.random() < 0.9:
        p["City"] = CITIES[int(rng.integers(0, len(CITIES)))]
    if rng.random() < 0.9:
        p["Age"] = _interval(rng, 0, 120, (0, 3, 9, 40))
    if rng.random() < 0.9:
        p["X"] = _interval(rng, -5000, 4999, (0, 1, 50, 700, 9999))
    if rng.random() < 0.8:
        a = int(rng.integers(-18000, 17000))
        p["Lon"] = (a / 100, (a + int(rng.choice((0, 5, 300)))) / 100)
    return p


def _query(rng: np.random.Generator, profiles: list[dict[str, Any]]) -> dict[str, Any]:
    """A random query: most of them near a stored profile (so some match), over a random subset
    of the attributes, points and ranges."""
    base = profiles[int(rng.integers(0, len(profiles)))] if profiles and rng.random() < 0.8 else _profile(rng)
    q: dict[str, Any] = {}
    for name in rng.permutation(["City", "Age", "X", "Lon"]).tolist():
        if name not in base or rng.random() < 0.35:
            continue
        v = base[name]
        if name == "City":
            q[name] = v
            continue
        lo, hi = v if isinstance(v, tuple) else (v, v)
        if name == "Lon":
            a, b = round(lo * 100), round(hi * 100)
            x = int(rng.integers(a, b + 1))
            q[name] = x / 100 if rng.random() < 0.5 else (x / 100, min(b + int(rng.integers(0, 3)), 18000) / 100)
            continue
        x = int(rng.integers(lo, hi + 1))
        top = 120 if name == "Age" else 4999
        q[name] = x if rng.random() < 0.5 else (x, min(top, x + int(rng.integers(0, 3 + (hi - lo) // 2))))
    return q


def _matches(p: dict[str, Any], q: dict[str, Any], mode: str) -> bool:
    """The brute-force model: texts equal; numeric query inside (subset) or overlapping
    (intersect) the profile's value, compared as scaled integers."""
    for name, v in q.items():
        if name not in p:
            return False
        if name == "City":
            if p[name] != v:
                return False
            continue
        scale = 100 if name == "Lon" else 1
        pa, pb = p[name] if isinstance(p[name], tuple) else (p[name], p[name])
        qa, qb = v if isinstance(v, tuple) else (v, v)
        pa, pb, qa, qb = (round(t * scale) for t in (pa, pb, qa, qb))
        if not ((pa <= qa and qb <= pb) if mode == "subset" else (pa <= qb and qa <= pb)):
            return False
    return True


def _record_path(idx: ProfileIndex, q: dict[str, Any], mode: str, verify: bool) -> list[int]:
    """The search of the record path (before the compiled one; kept for other queries)."""
    st = idx._st
    batch = idx._query_batch(q, "test")
    ids = idx._candidates(st, batch, mode)
    if verify and ids.size:
        ids = ids[st.records.matches(ids, batch, mode)]
    return ids.tolist()


def _brute_force_run(monkeypatch, interval_min: int, n: int, steps: int, seed: int) -> None:
    monkeypatch.setattr(ranges_index, "_INTERVAL_MIN", interval_min)
    monkeypatch.setattr(ranges_index, "_INTERVAL_PRUNE", 1)  # the interval index answers whenever it can
    rng = np.random.default_rng(seed)
    profiles = [_profile(rng) for _ in range(n)]
    idx = ProfileIndex(SCHEMA, 192, CFG, store_records=True, capacity=64)
    idx.add_many(profiles[: n * 4 // 5])
    live = dict(enumerate(profiles[: n * 4 // 5]))
    for step in range(steps):
        if step == steps * 3 // 8:  # adds after the interval index was built: checked one by one, then rebuilt
            for p in profiles[n * 4 // 5 :]:
                live[idx.add(p)] = p
        if step == steps * 5 // 8:
            for pid in rng.choice(sorted(live), n // 8, replace=False).tolist():
                idx.remove(pid)
                del live[pid]
        q = _query(rng, profiles)
        for mode in ("subset", "intersect"):
            want = sorted(i for i, p in live.items() if _matches(p, q, mode))
            got = idx.search(q, mode=mode, verify=True)
            assert got.dtype == np.int64 and got.tolist() == want, (q, mode)
            assert got.tolist() == _record_path(idx, q, mode, True)
        cand = idx.search(q)
        assert cand.tolist() == _record_path(idx, q, "subset", False)
        assert {i for i, p in live.items() if _matches(p, q, "subset")} <= set(cand.tolist())  # no false negative
    idx._check()


@pytest.mark.parametrize("interval_min", [0, 1 << 62], ids=["interval-index", "bit-slices"])
def test_search_equals_the_brute_force_model_and_the_record_path(monkeypatch, interval_min: int) -> None:
    _brute_force_run(monkeypatch, interval_min, 300, 80, 28)


@pytest.mark.slow
@pytest.mark.parametrize("interval_min", [0, 1 << 62], ids=["interval-index", "bit-slices"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_search_equals_the_brute_force_model_at_scale(monkeypatch, interval_min: int, seed: int) -> None:
    _brute_force_run(monkeypatch, interval_min, 3000, 600, seed)


def test_the_candidates_are_the_filters_that_contain_the_query() -> None:
    rng = np.random.default_rng(5)
    profiles = [_profile(rng) for _ in range(150)]
    idx = ProfileIndex(SCHEMA, 128, CFG)  # small m: many Bloom false positives
    idx.add_many(profiles)
    filters = []
    for p in profiles:
        bf = RangeBloomFilter(SCHEMA, 128, CFG)
        bf.insert(p)
        filters.append(bf)
    for _ in range(40):
        q = _query(rng, profiles)
        assert idx.search(q).tolist() == [i for i, bf in enumerate(filters) if bf.matches(q)]


@pytest.mark.parametrize("interval_min", [0, 1 << 62], ids=["interval-index", "bit-slices"])
def test_edge_cases(monkeypatch, interval_min: int) -> None:
    monkeypatch.setattr(ranges_index, "_INTERVAL_MIN", interval_min)
    empty = ProfileIndex(SCHEMA, 128, CFG, store_records=True)
    for verify in (False, True):
        assert empty.search({"Age": 3}, verify=verify).tolist() == []
        assert empty.search({}, verify=verify).tolist() == []
    idx = ProfileIndex(SCHEMA, 128, CFG, store_records=True)
    idx.add_many([{"City": "Zürich", "Age": (0, 120), "X": (-5000, 4999), "Lon": (-180.0, 180.0)}] * 70)
    assert idx.search({}, verify=True).tolist() == list(range(70))  # no attribute: every profile
    assert idx.search({"Age": 7, "X": (-5000, 4999), "Lon": 0.01}, verify=True).tolist() == list(range(70))
    assert idx.search({"City": "Zürich", "Age": (0, 120)}, verify=True).tolist() == list(range(70))
    assert idx.search({"City": "Zurich"}, verify=True).tolist() == []
    idx.add({"City": "Zürich", "Age": 5})
    assert idx.search({"Age": 5, "X": 3}, verify=True).tolist() == list(range(70))  # 70 gives no X
    assert idx.search({"Age": (4, 6)}, mode="intersect", verify=True).tolist() == list(range(71))
    assert idx.search({"Age": (6, 9)}, verify=True).tolist() == list(range(70))
    for pid in range(70):
        idx.remove(pid)
    assert idx.search({"Age": 5}, verify=True).tolist() == [70]
    assert idx.search({"X": 3}, verify=True).tolist() == []


@pytest.mark.parametrize("verify", [False, True])
def test_bad_queries_get_clear_errors(monkeypatch, verify: bool) -> None:
    monkeypatch.setattr(ranges_index, "_INTERVAL_MIN", 0)
    idx = ProfileIndex(SCHEMA, 128, CFG, store_records=True)
    idx.add_many([_profile(np.random.default_rng(i)) for i in range(20)])
    for q, word in (({"Age": math.nan}, "Age"), ({"Lon": math.nan}, "Lon"), ({"Age": "3"}, "Age"),
                    ({"City": 3}, "City"), ({"Nope": 1}, "Nope"), ({"Age": (9, 3)}, "Age"), ({"Age": 121}, "Age"),
                    ({"X": (1, 2, 3)}, "X"), ({"Lon": (0.0, math.inf)}, "Lon"), ({"City": "a\ud800"}, "City")):
        with pytest.raises(InvalidParameterError, match=word):
            idx.search(q, verify=verify)
    with pytest.raises(InvalidParameterError):
        idx.search({"Age": 3}, verify="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError):
        idx.search({"Age": 3}, mode="within")
    with pytest.raises(InvalidParameterError, match="store_records"):
        ProfileIndex(SCHEMA, 128, CFG).search({"Age": 3}, verify=True)


def test_compiled_queries_are_cached_per_attribute_set(monkeypatch) -> None:
    monkeypatch.setattr(_index_query, "_MAX_COMPILED", 3)
    idx = ProfileIndex(SCHEMA, 128, CFG, store_records=True)
    idx.add({"City": "Taipei", "Age": 30, "X": (0, 10)})
    assert idx.search({"Age": 30, "City": "Taipei"}, verify=True).tolist() == [0]
    assert idx.search({"Age": 31, "City": "Taipei"}, verify=True).tolist() == []
    assert list(idx._queries) == [("Age", "City")]  # one compiled form for both queries
    for q in ({"City": "Taipei", "Age": 30}, {"X": 5}, {"X": (0, 10)}, {"Age": 30}):
        assert idx.search(q, verify=True).tolist() == [0]
    assert len(idx._queries) <= 3
