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


# ---------------------------------------------------------------------------------------------
# issues 11 / 12: bulk adds, records as arrays, the protocol, hostile files, the service's needs

import json  # noqa: E402

import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402

from bloomkit._format import pack  # noqa: E402
from bloomkit.ranges import Decimal  # noqa: E402
from bloomkit.ranges.store import RecordStore  # noqa: E402

GEO = Schema([Text("City"), Integer("Age", 0, 120), Decimal("Lat", -90, 90, 4)])
GEO_CFG = RangeConfig(8, {"Age": (1, 2), "Lat": (20, 1)})


def _geo_frame(rng: np.random.Generator, n: int) -> pd.DataFrame:
    age = rng.integers(0, 110, n)
    lat = np.round(rng.uniform(-80, 80, n), 4)
    span = rng.integers(0, 400, n) / 1e4
    df = pd.DataFrame({"Lat.hi": np.round(lat + span, 4), "City": [f"c{i}" for i in rng.integers(0, 30, n)],
                       "Age.lo": age, "Lat.lo": lat, "Age.hi": age + rng.integers(0, 10, n)})
    df.index = rng.permutation(n) + 1000  # shuffled labels
    return df


def _geo_records(df: pd.DataFrame) -> list[dict[str, object]]:
    return [{"City": c, "Age": (int(a), int(b)), "Lat": (float(x), float(y))}
            for c, a, b, x, y in zip(df["City"], df["Age.lo"], df["Age.hi"], df["Lat.lo"], df["Lat.hi"], strict=True)]


def _brute(recs: list[dict[str, object]], query: dict[str, object], mode: str, live: set[int]) -> set[int]:
    """The exact answer from the records (Lat compared scaled, as the index does)."""
    def sc(x: object) -> tuple[int, int]:
        lo, hi = x if isinstance(x, tuple) else (x, x)
        return GEO["Lat"].scale(lo), GEO["Lat"].scale(hi)  # type: ignore[attr-defined]

    out = set()
    for i, r in enumerate(recs):
        if i not in live:
            continue
        ok = True
        for name, q in query.items():
            if name == "City":
                ok &= r["City"] == q
                continue
            pa_, pb = sc(r[name]) if name == "Lat" else r[name]  # type: ignore[misc]
            qa, qb = sc(q) if name == "Lat" else (q if isinstance(q, tuple) else (q, q))  # type: ignore[misc]
            ok &= (pa_ <= qa and qb <= pb) if mode == "subset" else (pa_ <= qb and qa <= pb)
        if ok:
            out.add(i)
    return out


def _queries(rng: np.random.Generator, recs: list[dict[str, object]], count: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for _ in range(count):
        r = recs[int(rng.integers(len(recs)))]
        a, b = r["Age"]  # type: ignore[misc]
        x, y = r["Lat"]  # type: ignore[misc]
        q: dict[str, object] = {"Age": int(rng.integers(a, b + 1))}
        if rng.random() < 0.5:
            q["City"] = r["City"]
        if rng.random() < 0.7:
            q["Lat"] = (x, round(min(y, x + 0.002), 4))
        if rng.random() < 0.3:
            q["Age"] = (max(0, a - 3), min(120, b + 3))
        out.append(q)
    return out


def test_add_many_from_records_frames_and_tables_equals_add_and_a_brute_force_model() -> None:
    """Real-data workflow: a shuffled-index DataFrame with reordered columns, its pyarrow table and
    the list of records give the same index as one add per profile; every search answer equals the
    brute-force scan of the records (no false negative; no false positive with verify)."""
    rng = np.random.default_rng(20)
    df = _geo_frame(rng, 700)
    recs = _geo_records(df)
    ref = ProfileIndex(GEO, 256, GEO_CFG, store_records=True, capacity=10)
    for i in range(3):  # the batch then starts in the middle of a column word
        assert ref.add(recs[i]) == i
    assert ref.add_many(recs[3:]).tolist() == list(range(3, 700))
    for data in (df, df[df.columns[::-1]], pa.Table.from_pandas(df, preserve_index=False), recs):
        idx = ProfileIndex(GEO, 256, GEO_CFG, store_records=True)
        ids = idx.add_many(data)
        idx._check()
        assert ids.tolist() == list(range(700)) and len(idx) == 700
        assert np.array_equal(idx._st.slices[:, :11], ref._st.slices[:, :11])
        assert idx.record(5) == ref.record(5) == {"City": recs[5]["City"], "Age": recs[5]["Age"], "Lat": recs[5]["Lat"]}
        assert idx.predicted_fpr() == pytest.approx(ref.predicted_fpr(), rel=1e-9)
    live = set(range(700))
    for mode in ("subset", "intersect"):
        for q in _queries(rng, recs, 60):
            truth = _brute(recs, q, mode, live)
            assert truth <= set(ref.search(q, mode=mode).tolist()), (q, mode)
            assert set(ref.search(q, mode=mode, verify=True).tolist()) == truth, (q, mode)


def test_remove_save_load_keep_ids_and_answers(tmp_path) -> None:
    rng = np.random.default_rng(21)
    recs = _geo_records(_geo_frame(rng, 300))
    idx = ProfileIndex(GEO, 256, GEO_CFG, store_records=True)
    idx.add_many(recs)
    gone = [int(i) for i in rng.choice(300, 40, replace=False)]
    for i in gone:
        idx.remove(i)
    idx._check()
    live = set(range(300)) - set(gone)
    path = tmp_path / "idx.bkf"
    idx.save(path)
    back = bloomkit.load(path)
    back._check()
    assert len(back) == 260 and back.next_id == 300 and back.add(recs[0]) == 300  # ids never reused
    params, arrays = idx._to_state()
    assert "records" not in params and len(json.dumps(params)) < 2000  # records are arrays, not JSON
    assert arrays["rec_rows"].shape == (300, 1 + 2 * 1 + 2 * 3 + idx._st.records.code_width)  # layout 3: bytes per row
    raw = idx.to_bytes()
    for i in gone:  # a removed profile's text is gone from the saved bytes
        if not any(recs[j]["City"] == recs[i]["City"] for j in live):
            assert recs[i]["City"].encode() not in raw  # type: ignore[union-attr]
    for q in _queries(rng, recs, 40):
        for mode in ("subset", "intersect"):
            want = _brute(recs, q, mode, live)
            assert set(idx.search(q, mode=mode, verify=True).tolist()) == want
            assert set(back.search(q, mode=mode, verify=True).tolist()) == want | ({300} & _brute(recs[:1] * 301, q, mode, {300}))
    with pytest.raises(InvalidParameterError):
        back.record(gone[0])
    assert back.record(int(sorted(live)[0])) == idx.record(int(sorted(live)[0]))


def test_protocol_copy_clear_info() -> None:
    from bloomkit._protocols import Structure

    idx = ProfileIndex(GEO, 128, GEO_CFG, store_records=True)
    assert idx.predicted_fpr() == pytest.approx(0.0) and idx.fill_ratio() == 0.0
    idx.add_many(_geo_records(_geo_frame(np.random.default_rng(22), 100)))
    assert isinstance(idx, Structure) and ProfileIndex.exact_len is True
    assert idx.size_in_bits == 128 * idx.capacity
    info = idx.info()
    json.dumps(info)
    assert info["count"] == 100 and info["predicted_fpr"] == pytest.approx(idx.predicted_fpr())
    assert 0 < idx.predicted_fpr(attributes=["Age"]) < idx.predicted_fpr() <= 1.0
    assert set(idx.attribute_fprs(fill="expected")) == {"City", "Age", "Lat"}
    assert idx.fill_ratio() == pytest.approx(float(np.mean([idx.get_filter(i).fill_ratio() for i in range(100)])))
    c = idx.copy()
    c.remove(0)
    assert len(c) == 99 and len(idx) == 100 and idx.record(0)
    c.clear()
    c._check()
    assert len(c) == 0 and c.next_id == 0 and c.add({"City": "x"}) == 0
    with pytest.raises(InvalidParameterError):
        idx.predicted_fpr(attributes=["Nope"])
    with pytest.raises(InvalidParameterError):
        idx.attribute_fprs(fill="bogus")


def test_large_batches_are_hashed_in_parts(monkeypatch) -> None:
    import bloomkit.ranges.index as I

    recs = _geo_records(_geo_frame(np.random.default_rng(23), 500))
    whole = ProfileIndex(GEO, 256, GEO_CFG, store_records=True)
    whole.add_many(recs)
    monkeypatch.setattr(I, "CHUNK", 37)
    parts = ProfileIndex(GEO, 256, GEO_CFG, store_records=True)
    parts.add(recs[0])
    parts.add_many(recs[1:])
    parts._check()
    _same_state(parts, whole)


def test_sha512_index_add_many_equals_add() -> None:
    recs = _geo_records(_geo_frame(np.random.default_rng(24), 120))
    a = ProfileIndex(GEO, 256, GEO_CFG, hash="sha512", store_records=True)
    b = ProfileIndex(GEO, 256, GEO_CFG, hash="sha512", store_records=True)
    for r in recs:
        a.add(r)
    b.add_many(recs)
    _same_state(a, b)


def _same_state(a: ProfileIndex, b: ProfileIndex) -> None:
    """Equal arrays and parameters (the float statistics up to rounding: summed in another order)."""
    (pa_, aa), (pb, ab) = a._to_state(), b._to_state()
    assert set(aa) == set(ab) and all(np.array_equal(aa[k], ab[k]) for k in aa)
    ia, ib = pa_.pop("inserted"), pb.pop("inserted")
    assert pa_ == pb and ia.keys() == ib.keys()
    for k in ia:
        assert ia[k] == pytest.approx(ib[k], rel=1e-12)


def test_index_bad_input_is_refused_with_nothing_added() -> None:
    idx = ProfileIndex(GEO, 128, GEO_CFG, store_records=True)
    df = _geo_frame(np.random.default_rng(25), 50)
    bad: list[tuple[object, str]] = [
        ([{"City": "a"}, {"City": "b", "Age": 500}], "record 1 of ProfileIndex.add_many"),
        (df.drop(columns=["City"]), "no column 'City'"),
        (df.assign(Lot=1.0), "column 'Lot'"),
        (df.assign(**{"Lat.lo": df["Lat.hi"] + 0.1}), "not reversed|lo <= hi"),
        ([{"City": "a", "Age": (5, 1)}], "reversed"),
        ("City", "records"),
    ]
    for data, msg in bad:
        with pytest.raises(InvalidParameterError, match=msg):
            idx.add_many(data)
        assert len(idx) == 0 and idx.next_id == 0 and not idx._st.slices.any()
    for kw in ({"mode": "bogus"}, {"verify": "yes"}, {"mode": 1}):
        with pytest.raises(InvalidParameterError):
            idx.search({"Age": 3}, **kw)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError):
        idx.search({"Nope": 3})
    plain = ProfileIndex(GEO, 128, GEO_CFG)
    with pytest.raises(InvalidParameterError):
        plain.record(0)
    for kw2 in ({"store_records": "x"}, {"store_records": 1}, {"capacity": 0}, {"capacity": 2**40}, {"hash": "md5"}):
        with pytest.raises(InvalidParameterError):
            ProfileIndex(GEO, 128, GEO_CFG, **kw2)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError):
        idx.search(RangeBloomFilter(GEO, 128, GEO_CFG), verify=True)


def _forge(idx: ProfileIndex, params: dict[str, object] | None = None, **arrays: np.ndarray) -> bytes:
    p, a = idx._to_state()
    return pack(idx._STRUCTURE, {**p, **(params or {})}, {**a, **arrays}, hash_id=1, seed=idx.seed)


def _layout2(idx: ProfileIndex) -> dict[str, np.ndarray]:
    """The records of ``idx`` as records layout 2 wrote them (a bool per attribute, int64 ends,
    int64 text start and length, the texts of each profile appended)."""
    st, schema, n = idx._st.records, idx.schema, idx.next_id
    num = [j for j, a in enumerate(schema) if a.is_numeric]
    txt = [j for j, a in enumerate(schema) if not a.is_numeric]
    out = {"rec_present": np.zeros((n, len(schema)), bool), "rec_lo": np.zeros((n, len(num)), np.int64),
           "rec_hi": np.zeros((n, len(num)), np.int64), "rec_tstart": np.zeros((n, len(txt)), np.int64),
           "rec_tlen": np.zeros((n, len(txt)), np.int64)}
    text = bytearray()
    for slot in range(n):
        for j, attr in enumerate(schema):
            if not st.present(slot, j):
                continue
            out["rec_present"][slot, j] = True
            if attr.is_numeric:
                lo, hi = st.bounds(slot, j)
                out["rec_lo"][slot, num.index(j)], out["rec_hi"][slot, num.index(j)] = lo[0], hi[0]
            else:
                b = st.record(slot)[attr.name].encode()
                out["rec_tstart"][slot, txt.index(j)], out["rec_tlen"][slot, txt.index(j)] = len(text), len(b)
                text += b
    out["rec_text"] = np.frombuffer(bytes(text), np.uint8)
    return out


def _forge2(idx: ProfileIndex, **arrays: np.ndarray) -> bytes:
    """A file of ``idx`` with its records in layout 2 (``arrays`` replacing some)."""
    p, a = idx._to_state()
    a = {k: v for k, v in a.items() if not k.startswith("rec_")}
    return pack(idx._STRUCTURE, p, {**a, **_layout2(idx), **arrays}, hash_id=1, seed=idx.seed)


def test_hostile_record_arrays_give_format_error() -> None:
    idx = ProfileIndex(GEO, 128, GEO_CFG, store_records=True, capacity=64)
    idx.add_many([{"City": "Hsinchu", "Age": (20, 29), "Lat": 24.8}, {"City": "台北", "Age": 35}, {}])
    idx.remove(2)
    _, arrays = idx._to_state()
    ok = ProfileIndex.from_bytes(_forge(idx))
    assert ok.record(1) == {"City": "台北", "Age": 35}
    rows, toff = arrays["rec_rows"], arrays["rec_toff"]
    taken = RecordStore.from_state(GEO, arrays, 3, np.array([True, True, False]))
    assert all(a is b for a, b in zip(taken.view[::2], (rows, toff), strict=True))  # layout 3: taken over, no copy
    old = _layout2(idx)
    text = old["rec_text"]

    def bump(name: str, row: int, col: int, delta: int) -> np.ndarray:
        a = old[name].copy()
        a[row, col] += delta
        return a

    def byte(row: int, col: int, value: int) -> np.ndarray:
        a = rows.copy()
        a[row, col] = value
        return a

    # layout 3: row = presence (1 byte), Age lo, hi (1 byte each), Lat lo, hi (3 each), City's code
    cases3 = [  # (the message, the arrays replaced)
        ("outside the 'rec_toff' dictionary", {"rec_rows": byte(0, 9, 7)}),
        ("not UTF-8", {"rec_text": np.full_like(arrays["rec_text"], 0xFF)}),
        ("split", {"rec_toff": np.array([0, 8, 10, len(arrays["rec_text"])])}),  # inside "台"
        ("divide", {"rec_toff": toff[::-1].copy()}),
        ("divide", {"rec_toff": toff[:-1]}),
        ("scope", {"rec_rows": byte(0, 2, 200)}),  # Age hi = 200 > 120
        ("scope or reversed", {"rec_rows": byte(0, 1, 100)}),  # Age lo 100 > hi 29
        ("scope or reversed", {"rec_rows": byte(1, 6, 0xFF)}),  # a Lat end where the record gives none
        ("not active", {"rec_rows": byte(2, 0, 1)}),
        ("presence bits of no attribute", {"rec_rows": byte(0, 0, 0xFF)}),
        ("shape", {"rec_rows": rows[:2]}),
        ("shape", {"rec_rows": np.zeros((3, 9 + 3), np.uint8)}),
        ("mixes", {"rec_lo": old["rec_lo"]}),
    ]
    assert rows.shape[1] == 10  # one byte of City's code (two entries)
    for msg, bad in cases3:
        with pytest.raises(FormatError, match=msg):
            ProfileIndex.from_bytes(_forge(idx, **bad))
    back = ProfileIndex.from_bytes(_forge2(idx))  # layout 2 still loads, converted, and answers alike
    back._check()
    assert [back.record(i) for i in (0, 1)] == [idx.record(i) for i in (0, 1)]
    assert back.to_bytes() == idx.to_bytes()
    cases2 = {
        "outside": {"rec_tlen": bump("rec_tlen", 0, 0, 100)},
        "outside ": {"rec_tstart": bump("rec_tstart", 1, 0, 2**40)},
        "UTF-8": {"rec_text": np.full_like(text, 0xFF)},
        "split": {"rec_tstart": bump("rec_tstart", 1, 0, 1), "rec_tlen": bump("rec_tlen", 1, 0, -1)},  # inside "台"
        "scope": {"rec_hi": bump("rec_hi", 0, 0, 10**6)},
        "reversed": {"rec_lo": bump("rec_lo", 0, 0, 50)},
        "not active": {"rec_present": np.ones_like(old["rec_present"])},
        "not active ": {"rec_lo": bump("rec_lo", 2, 0, 1)},
        "shape": {"rec_lo": old["rec_lo"][:2]},
        "mixes": {"rec_toff": toff},
    }
    for msg, bad in cases2.items():
        with pytest.raises(FormatError, match=msg.strip() if msg.strip() != "reversed" else "scope or reversed"):
            ProfileIndex.from_bytes(_forge2(idx, **bad))
    with pytest.raises(FormatError, match="holds record arrays"):
        ProfileIndex.from_bytes(_forge(idx, {"store_records": False}))
    p, a = idx._to_state()
    del a["rec_text"]
    with pytest.raises(FormatError, match="rec_text"):
        ProfileIndex.from_bytes(pack(idx._STRUCTURE, p, a, hash_id=1, seed=0))
    for params in ({"store_records": "yes"}, {"records": []}, {"inserted": {"City": [1, 2]}}, {"next": 10**9},
                   {"count": 3}, {"num_bits": 2**40}, {"schema": [{"type": "text", "name": "City"}]}):
        with pytest.raises(FormatError):
            ProfileIndex.from_bytes(_forge(idx, params))


def test_concurrent_add_many_remove_and_search() -> None:
    """Writers (single adds, batches, removes) and searchers at once: no crash, unique ids, and
    afterwards every live profile is found with verify."""
    import threading

    idx = ProfileIndex(GEO, 128, GEO_CFG, store_records=True, capacity=64)
    frames = [_geo_records(_geo_frame(np.random.default_rng(30 + w), 200)) for w in range(3)]
    got: list[list[int]] = [[] for _ in range(3)]
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            got[w] += [idx.add(r) for r in frames[w][:50]]
            got[w] += idx.add_many(frames[w][50:]).tolist()
            for i in got[w][:20]:
                idx.remove(i)
        except BaseException as e:  # reported below
            errors.append(e)

    def searcher() -> None:
        try:
            for _ in range(60):
                idx.search({"Age": 40}, verify=True)
                idx.search({"Age": (30, 50), "Lat": (0.0, 10.0)}, mode="intersect")
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)] + [threading.Thread(target=searcher) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[0]
    idx._check()
    ids = [i for g in got for i in g]
    assert len(set(ids)) == 600 and len(idx) == 540
    for w in range(3):
        for i, pid in enumerate(got[w][20:], start=20):
            r = frames[w][i]
            assert pid in idx.search({"City": r["City"], "Age": r["Age"][0]}, verify=True)  # type: ignore[index]


def test_a_roomy_index_with_many_attributes_loads_within_the_load_budget() -> None:
    """A file holds the records of its profiles only; the loader must not allocate record rows
    for every free slot (64,000 slots x 40 attributes would exceed the load budget)."""
    sch = Schema([Integer(f"a{i}", 0, 100) for i in range(40)])
    idx = ProfileIndex(sch, 64, 3, capacity=64_000, store_records=True)
    idx.add_many([{f"a{i}": (i, i + 5) for i in range(40)}] * 3)
    back = ProfileIndex.from_bytes(idx.to_bytes())
    back._check()
    assert back.record(2) == idx.record(2) and back.add({"a0": 1}) == 3 and back.record(3) == {"a0": 1}
    back._check()


# -- compaction and the per-query model (issues 26 and 27) ------------------------------------------


def test_compacted_keeps_live_profiles_answers_and_records() -> None:
    rng = np.random.default_rng(26)
    idx = ProfileIndex(SCHEMA, 128, CFG, capacity=64, store_records=True)
    profiles = _profiles(rng, 500)
    idx.add_many(profiles)
    gone = set(rng.choice(500, 350, replace=False).tolist())
    for pid in sorted(gone):
        idx.remove(pid)
    idx.add({"City": "late", "Age": 30})  # id 500
    before = idx.to_bytes()
    new, old_ids = idx.compacted()
    new._check()
    assert idx.to_bytes() == before  # the source index is left as it was
    assert old_ids.tolist() == sorted(set(range(501)) - gone)
    assert len(new) == new.next_id == 151 and new.capacity == 192  # 3 words of 64 slots
    assert new.fill_ratio() == idx.fill_ratio() and new.attribute_fprs() == idx.attribute_fprs()
    for j, old in enumerate(old_ids.tolist()):
        assert new.record(j) == idx.record(old)
    assert new.info()["nbytes"]["records"] < idx.info()["nbytes"]["records"]
    assert new._st.records.entries <= idx._st.records.entries and new._st.records.used <= idx._st.records.used
    for _ in range(60):
        p = profiles[int(rng.integers(500))]
        q = {"City": p["City"], "Age": int(rng.integers(0, 121)), "X": (p["X"][0], p["X"][0] + int(rng.integers(0, 50)))}
        for mode in ("subset", "intersect"):
            for verify in (False, True):
                a = idx.search(q, mode=mode, verify=verify)
                b = new.search(q, mode=mode, verify=verify)
                assert old_ids[b].tolist() == a.tolist(), (q, mode, verify)
            assert idx.expected_false_candidates(q, mode=mode) == new.expected_false_candidates(q, mode=mode)
    back = ProfileIndex.from_bytes(new.to_bytes())
    back._check()
    assert back.add({"City": "x"}) == 151
    empty, ids = ProfileIndex(SCHEMA, 128, CFG, store_records=True).compacted(capacity=10)
    assert len(empty) == 0 and ids.size == 0 and empty.capacity == 64
    with pytest.raises(InvalidParameterError, match="capacity"):
        idx.compacted(capacity=-1)


def _model_by_hand(idx: ProfileIndex, query: dict[str, object], mode: str) -> tuple[float, int]:
    """The per-query model computed profile by profile from the model functions of
    bloomkit.ranges.model (no kernel): sum over non-matching profiles of q^J times the
    intersect-range pass probabilities."""
    from bloomkit.ranges import model as M

    lay, st = idx.layout, idx._st
    m = idx.num_bits
    total, nonmatch = 0.0, 0
    live = np.flatnonzero(np.unpackbits(st.active.view(np.uint8), bitorder="little")[: idx.next_id])
    for slot in live.tolist():
        rec = idx.record(slot)
        q = st.fills[slot] / m
        J, mult, match = 0, 1.0, True
        for name, v in query.items():
            plan = lay.plans[name]
            attr = idx.schema[name]
            if isinstance(v, str):
                if rec.get(name) != v:
                    match, J = False, J + plan.k
                continue
            qa, qb = attr.to_interval(v)
            ga, gb = lay.groups(plan, qa, qb)
            pv = rec.get(name)
            ranged = mode == "intersect" and qb > qa
            if pv is None:
                match = False
                if ranged:
                    mult *= M.intersect_pass_probability(gb - ga + 1, plan.s, plan.k, q, 0)
                else:
                    J += M.query_words(ga, gb, plan.s, plan.r, plan.last)
                continue
            pa, pb = attr.to_interval(pv)
            g0, g1 = lay.groups(plan, pa, pb)
            if not ranged:
                match = match and pa <= qa and qb <= pb
                J += M.uncovered_words(ga, gb, g0, g1, plan.s, plan.r, plan.last)
                continue
            if pa <= qb and qa <= pb:
                continue
            match = False
            if g1 >= ga and g0 <= gb:
                continue
            off = ga - g1 if g1 < ga else g0 - gb
            mult *= M.intersect_pass_probability(gb - ga + 1, plan.s, plan.k, q, off if off <= plan.r else 0)
        if not match:
            nonmatch += 1
            total += mult * M.pass_probability(q, J)
    return total, nonmatch


@pytest.mark.parametrize("mode", ["subset", "intersect"])
def test_expected_false_candidates_is_the_model_profile_by_profile(mode: str) -> None:
    """The kernel computes exactly what the model functions give profile by profile: texts,
    points, ranges, profiles without the attribute, grouping and overlapping neighbours."""
    rng = np.random.default_rng(27)
    idx = ProfileIndex(SCHEMA, 128, CFG, capacity=64, store_records=True)
    profiles = _profiles(rng, 300)
    for p in profiles[::7]:
        del p["X"]  # some profiles do not give X
    idx.add_many(profiles[:200])
    for p in profiles[200:]:
        idx.add(p)
    for pid in range(0, 300, 11):
        idx.remove(pid)
    for i in range(40):
        p = profiles[int(rng.integers(300))]
        a = int(rng.integers(0, 121))
        x0 = int(rng.integers(0, 9900)) if i % 3 else p.get("X", (5000, 0))[0] + int(rng.integers(-30, 30))
        x0 = min(max(x0, 0), 9900)
        q: dict[str, object] = {"Age": a if i % 2 else (a, min(120, a + int(rng.integers(0, 12)))),
                                "X": (x0, x0 + int(rng.integers(0, 90)))}
        if i % 4 == 0:
            q["City"] = p["City"]
        fc = idx.expected_false_candidates(q, mode=mode)
        want, nonmatch = _model_by_hand(idx, q, mode)
        assert fc.nonmatching == nonmatch and fc.priced == len(idx) and fc.reason is None
        assert fc.expected == pytest.approx(want, rel=1e-9, abs=len(idx) * 1e-12), (q, mode)  # (< 1e-12 each: left out)
        assert fc.fpr == pytest.approx(want / nonmatch) and 0 <= fc.variance <= fc.expected + 1e-12
        cand, match = idx.search_candidates(q, mode=mode)
        assert len(idx) - match.size == nonmatch


def test_expected_false_candidates_bad_input_and_unpriced_queries() -> None:
    idx = ProfileIndex(SCHEMA, 128, CFG, capacity=64, store_records=True)
    fc = idx.expected_false_candidates({"Age": 5})
    assert fc.expected == fc.fpr == 0.0 and fc.nonmatching == 0 and fc.reason == "no profile is stored"
    idx.add({"City": "a", "Age": (0, 120)})
    fc = idx.expected_false_candidates({"Age": 5}, mode="intersect")
    assert fc.expected == fc.fpr == 0.0 and fc.reason == "every profile stored matches the query"
    fc = idx.expected_false_candidates({"X": 5})  # an attribute no profile gives: priced, finite
    assert fc.nonmatching == 1 and 0 < fc.expected < 1 and np.isfinite(fc.fpr) and fc.reason is None
    with pytest.raises(InvalidParameterError, match="store_records"):
        ProfileIndex(SCHEMA, 128, CFG).expected_false_candidates({"Age": 5})
    with pytest.raises(InvalidParameterError, match="mode"):
        idx.expected_false_candidates({"Age": 5}, mode="superset")
    with pytest.raises(InvalidParameterError, match="Age"):
        idx.expected_false_candidates({"Age": 500})
    with pytest.raises(InvalidParameterError, match="max_profiles"):
        idx.expected_false_candidates({"Age": 5}, max_profiles=0)


def test_expected_false_candidates_of_a_sample_estimates_the_whole() -> None:
    rng = np.random.default_rng(5)
    idx = ProfileIndex(SCHEMA, 128, CFG, capacity=64, store_records=True)
    idx.add_many(_profiles(rng, 6400))
    for mode in ("subset", "intersect"):
        q = {"Age": 40, "X": (3000, 3050)}
        full = idx.expected_false_candidates(q, mode=mode)
        part = idx.expected_false_candidates(q, mode=mode, max_profiles=1600)
        assert full.priced == 6400 and 1500 <= part.priced <= 1700
        assert abs(part.expected - full.expected) < 5 * part.variance**0.5
        assert abs(part.nonmatching - full.nonmatching) < 200


def test_intersect_pass_probability_equals_enumeration() -> None:
    """Model of an intersect range (an OR of the range's keys, which share words): every set
    of words enumerated, for profiles sharing no word with the query and for the r offsets."""
    import itertools

    from bloomkit.ranges import model as M

    def enumerate_(groups: int, s: int, k: int, q: float, covered: set[int]) -> float:
        length = (groups - 1) * s + k
        free = [x for x in range(length) if x not in covered]
        total = 0.0
        for bits in itertools.product((0, 1), repeat=len(free)):
            on = covered | {x for x, b in zip(free, bits, strict=True) if b}
            if any(all(g * s + t in on for t in range(k)) for g in range(groups)):
                total += float(np.prod([q if b else 1 - q for b in bits]))
        return total

    for groups, s, k in [(3, 1, 3), (4, 2, 5), (2, 3, 7), (5, 1, 2), (3, 4, 4), (1, 2, 3)]:
        r = int(M.r(k, s))
        for q in (0.0, 0.3, 0.7, 1.0):
            assert M.intersect_pass_probability(groups, s, k, q) == pytest.approx(enumerate_(groups, s, k, q, set()))
            for j in range(1, r + 1):
                tail = set(range((groups - 1 + j) * s, (groups - 1) * s + k))
                want = enumerate_(groups, s, k, q, tail)
                assert M.intersect_pass_probability(groups, s, k, q, j) == pytest.approx(want, abs=1e-12)
                head = set(range(k - j * s))  # a range just below the query's: symmetric
                assert enumerate_(groups, s, k, q, head) == pytest.approx(want, abs=1e-12)
    many = M.intersect_pass_probability(2000, 1, 6, np.array([0.3, 0.5]), np.array([[0], [3]]))
    assert many.shape == (2, 2) and np.all((0 < many) & (many < 1))
    with pytest.raises(ValueError, match="offset"):
        M.intersect_pass_probability(3, 1, 4, 0.5, 4)


def test_records_layout_2_golden_file_loads_and_answers_as_before(tmp_path) -> None:
    """The ProfileIndex golden file of records layout 2 (int64 ends, int64 text start / length,
    a bool per attribute; written before issue 28) still loads, mapped or read, with the same
    records and answers, and is written again in layout 3: the bytes of today's golden file."""
    from pathlib import Path

    from conformance.examples import EXAMPLES, PROFILES, RANGE_QUERIES

    golden = Path(__file__).parent / "golden" / "v2"
    ex = EXAMPLES["ranges.ProfileIndex"]
    raw2 = (golden / "ranges.ProfileIndex.records2.bkf").read_bytes()
    assert b"rec_tstart" in raw2 and b"rec_rows" not in raw2
    fresh = ex.make()
    for old in (bloomkit.loads(raw2), bloomkit.load(golden / "ranges.ProfileIndex.records2.bkf")):
        old._check()
        assert ex.probe(old) == ex.probe(fresh)
        assert [old.record(i) for i in range(len(PROFILES))] == PROFILES
        for q in RANGE_QUERIES:
            for mode in ("subset", "intersect"):
                assert old.search(q, mode=mode, verify=True).tolist() == fresh.search(q, mode=mode, verify=True).tolist()
        assert old.to_bytes() == (golden / "ranges.ProfileIndex.bkf").read_bytes() == fresh.to_bytes()


def test_text_dictionary_widens_its_codes_and_caps_what_it_remembers(monkeypatch) -> None:
    """Records layout 3: text codes grow from 1 to 2 bytes past 256 distinct texts (the rows
    rewritten once); past DICT_MAX remembered texts new ones get entries of their own. Records,
    verified answers and a save / load round trip stay exact either way."""
    from bloomkit.ranges import store

    monkeypatch.setattr(store, "DICT_MAX", 200)
    idx = ProfileIndex(GEO, 128, GEO_CFG, store_records=True, capacity=64)
    recs = [{"City": f"c{i % 300}", "Age": i % 100} for i in range(700)]
    idx.add_many(recs[:250])
    assert idx._st.records.code_width == 1
    idx.add_many(pd.DataFrame({"City": [r["City"] for r in recs[250:600]], "Age": [r["Age"] for r in recs[250:600]]}),
                 attributes=["City", "Age"])
    for r in recs[600:]:
        idx.add(r)
    rec = idx._st.records
    assert rec.code_width == 2 and len(rec._dictionary()) == 200 and rec.entries > 300  # the cap: some texts twice
    idx.remove(5)
    back = ProfileIndex.from_bytes(idx.to_bytes())
    back._check()
    for pid in (0, 299, 300, 650, 699):
        assert back.record(pid) == idx.record(pid) == recs[pid]
        want = [i for i, r in enumerate(recs) if r == recs[pid] and i != 5]
        assert idx.search(recs[pid], verify=True).tolist() == back.search(recs[pid], verify=True).tolist() == want
    assert back._st.records.entries <= rec.entries
    none = ProfileIndex(GEO, 128, GEO_CFG, store_records=True)
    none.add_many([{"Age": 3}, {"Age": 4}])
    none = ProfileIndex.from_bytes(none.to_bytes())  # a dictionary of no entry
    assert none.search_candidates({"City": "x"})[1].tolist() == none.search({"City": "x"}, verify=True).tolist() == []
    assert none.add({"City": "x", "Age": 5}) == 2 and none.search({"City": "x"}, verify=True).tolist() == [2]
