"""Tests of bloomkit.ranges.ProfileIndex (bit-sliced profile filters, the MFPGC use case)."""

from __future__ import annotations

import numpy as np
import pytest
from _damage import assert_damage_detected

import bloomkit
from bloomkit.errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from bloomkit.ranges import Integer, ProfileIndex, RangeBloomFilter, RangeConfig, Schema, Text

SCHEMA = Schema([Text("City"), Integer("Age", 0, 120), Integer("X", 0, 9999)])
CFG = RangeConfig(8, {"Age": (1, 2), "X": (4, 1)})


def _profiles(rng: np.random.Generator, n: int) -> list[dict[str, object]]:
    out = []
    for _ in range(n):
        a = int(rng.integers(0, 110))
        x = int(rng.integers(0, 9900))
        out.append({"City": f"c{int(rng.integers(0, 20))}", "Age": (a, a + 9), "X": (x, x + 99)})
    return out


def _truth(profiles: list[dict[str, object]], query: dict[str, object]) -> set[int]:
    hits = set()
    for i, p in enumerate(profiles):
        ok = p["City"] == query["City"]
        lo, hi = p["Age"]  # type: ignore[misc]
        ok = ok and lo <= query["Age"] <= hi  # type: ignore[operator]
        xl, xh = p["X"]  # type: ignore[misc]
        ql, qh = query["X"]  # type: ignore[misc]
        ok = ok and xl <= ql and qh <= xh
        if ok:
            hits.add(i)
    return hits


def test_search_equals_per_filter_matches_and_verify_is_exact() -> None:
    rng = np.random.default_rng(0)
    profiles = _profiles(rng, 400)
    idx = ProfileIndex(SCHEMA, 256, CFG, capacity=10, store_records=True)  # forces growth
    filters = []
    for p in profiles:
        idx.add(p)
        bf = RangeBloomFilter(SCHEMA, 256, CFG)
        bf.insert(p)
        filters.append(bf)
    idx._check()
    assert len(idx) == 400 and idx.capacity >= 400
    for i in rng.integers(0, 400, 25):
        p = profiles[int(i)]
        q = {"City": p["City"], "Age": p["Age"][0] + 4, "X": (p["X"][0] + 10, p["X"][0] + 30)}  # type: ignore[index]
        got = set(idx.search(q).tolist())
        want_bloom = {j for j, bf in enumerate(filters) if bf.matches(q)}
        assert got == want_bloom  # the index is exactly the per-filter subset test
        truth = _truth(profiles, q)
        assert truth <= got  # no false negatives
        assert set(idx.search(q, verify=True).tolist()) == truth


def test_remove_add_filters_get_filter() -> None:
    rng = np.random.default_rng(1)
    profiles = _profiles(rng, 100)
    idx = ProfileIndex(SCHEMA, 256, CFG)
    ids = [idx.add(p) for p in profiles]
    p0 = profiles[0]
    q = {"City": p0["City"], "Age": p0["Age"][0], "X": p0["X"]}  # type: ignore[index]
    assert 0 in idx.search(q)
    idx.remove(ids[0])
    idx._check()
    assert 0 not in idx.search(q) and len(idx) == 99
    with pytest.raises(InvalidParameterError):
        idx.remove(ids[0])
    with pytest.raises(InvalidParameterError):
        idx.get_filter(ids[0])
    bf = idx.get_filter(ids[1])
    ref = RangeBloomFilter(SCHEMA, 256, CFG)
    ref.insert(profiles[1])
    assert bf == ref
    # bulk add of filter words
    words = np.stack([ref.bits.words, ref.bits.words])
    new = idx.add_filters(words)
    idx._check()
    assert new.tolist() == [100, 101]
    q1 = {"City": profiles[1]["City"], "Age": profiles[1]["Age"][0], "X": profiles[1]["X"]}  # type: ignore[index]
    assert {1, 100, 101} <= set(idx.search(q1).tolist())
    assert idx.add(ref) == 102  # a filter of the same configuration
    with pytest.raises(InvalidParameterError):
        idx.add_filters(np.zeros((2, 3), np.uint64))


def test_index_bad_input() -> None:
    idx = ProfileIndex(SCHEMA, 256, CFG)
    with pytest.raises(InvalidParameterError):
        idx.add({"Nope": 1})
    with pytest.raises(InvalidParameterError):
        idx.add({"Age": 500})
    with pytest.raises(InvalidParameterError):
        idx.search({"Age": (9, 3)})
    with pytest.raises(InvalidParameterError):
        idx.search({"Age": 3}, verify=True)  # no stored records
    with pytest.raises(IncompatibleFiltersError):
        idx.add(RangeBloomFilter(SCHEMA, 512, CFG))
    with pytest.raises(IncompatibleFiltersError):
        idx.search(RangeBloomFilter(SCHEMA, 256, RangeConfig(8)))
    rec_idx = ProfileIndex(SCHEMA, 256, CFG, store_records=True)
    with pytest.raises(InvalidParameterError):
        rec_idx.add_filters(np.zeros((1, 4), np.uint64))
    with pytest.raises(InvalidParameterError):
        ProfileIndex(SCHEMA, 256, CFG, capacity=0)


def test_index_persistence_and_damage() -> None:
    rng = np.random.default_rng(2)
    profiles = _profiles(rng, 30)
    idx = ProfileIndex(SCHEMA, 128, CFG, capacity=64, store_records=True)
    for p in profiles:
        idx.add(p)
    idx.remove(3)
    blob = idx.to_bytes()
    back = ProfileIndex.from_bytes(blob)
    back._check()
    assert isinstance(bloomkit.loads(blob), ProfileIndex)
    p = profiles[5]
    q = {"City": p["City"], "Age": p["Age"][0], "X": p["X"]}  # type: ignore[index]
    assert back.search(q).tolist() == idx.search(q).tolist()
    assert back.search(q, verify=True).tolist() == idx.search(q, verify=True).tolist()
    assert_damage_detected(blob, ProfileIndex.from_bytes, 0x5A, cut_step=7)


def test_intersect_mode_points_in_query_ranges() -> None:
    """Profiles publish points; a query with ranges finds every profile whose point is inside."""
    rng = np.random.default_rng(4)
    sch = Schema([Text("City"), Integer("Age", 0, 120), Integer("X", 0, 9999)])
    for cfg in (RangeConfig(8, {"Age": (1, 2), "X": (4, 1)}), RangeConfig(6, {"Age": (3, 3), "X": (1, 6)})):
        idx = ProfileIndex(sch, 256, cfg, store_records=True)
        filters = []
        pts = []
        for _ in range(300):
            p = {"City": f"c{int(rng.integers(0, 3))}", "Age": int(rng.integers(0, 121)), "X": int(rng.integers(0, 10000))}
            idx.add(p)
            bf = RangeBloomFilter(sch, 256, cfg)
            bf.insert(p)
            filters.append(bf)
            pts.append(p)
        for _ in range(10):
            lo = int(rng.integers(0, 100))
            xl = int(rng.integers(0, 9000))
            q = {"City": "c1", "Age": (lo, lo + 20), "X": (xl, xl + 800)}
            got = set(idx.search(q, mode="intersect").tolist())
            want = {i for i, bf in enumerate(filters) if bf.might_contain("City", "c1")
                    and bf.might_intersect("Age", lo, lo + 20) and bf.might_intersect("X", xl, xl + 800)}
            assert got == want
            truth = {i for i, p in enumerate(pts) if p["City"] == "c1" and lo <= p["Age"] <= lo + 20 and xl <= p["X"] <= xl + 800}
            assert truth <= got
            assert set(idx.search(q, mode="intersect", verify=True).tolist()) == truth
        with pytest.raises(InvalidParameterError):
            idx.search({"Age": 3}, mode="bogus")
        with pytest.raises(InvalidParameterError):
            idx.search(filters[0], mode="intersect")


def test_inconsistent_index_state_raises_format_error() -> None:
    from bloomkit._format import pack

    idx = ProfileIndex(SCHEMA, 128, CFG, capacity=64, store_records=True)
    idx.add({"City": "a", "Age": 3})
    params, arrays = idx._to_state()
    tag = ProfileIndex._STRUCTURE
    for bad_params, bad_arrays in [
        (dict(params, count=5), arrays),
        (dict(params, next=1000), arrays),
        (dict(params, records=[]), arrays),
        (dict(params, records="x"), arrays),
        (params, {"slices": arrays["slices"][:, :0], "active": arrays["active"]}),
        (params, {"slices": arrays["slices"], "active": np.zeros(1, np.uint64)}),
    ]:
        with pytest.raises(FormatError):
            ProfileIndex.from_bytes(pack(tag, bad_params, bad_arrays, hash_id=1, seed=0))
    sl = arrays["slices"].copy()
    sl[0, 0] |= np.uint64(1) << np.uint64(40)  # a bit for an inactive slot
    with pytest.raises(FormatError):
        ProfileIndex.from_bytes(pack(tag, params, {"slices": sl, "active": arrays["active"]}, hash_id=1, seed=0))
