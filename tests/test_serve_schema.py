"""Schema files (``bloomkit.ranges.schema_from_file``), ``ProfileIndex.search_candidates``, the record
validation of the service, and ``bloomkit serve`` refusing bad start-up input with one line
and exit status 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bloomkit.errors import InvalidParameterError
from bloomkit.ranges import (
    Decimal,
    Integer,
    ProfileIndex,
    RangeConfig,
    Schema,
    SchemaFile,
    Text,
    design,
    schema_from_file,
    schema_from_json,
)
from bloomkit.serve.demo import table1_profiles, table1_schema
from bloomkit.serve.records import FieldError, canonical_record

GOOD = {"num_bits": 512, "attributes": [
    {"name": "Name", "type": "text"},
    {"name": "Age", "type": "integer", "min": 1, "max": 120, "typical_range": 10},
    {"name": "Latitude", "type": "decimal", "min": -90, "max": 90, "places": 4, "typical_range": 1000}]}


def test_schema_file_round_trip_and_design(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text(json.dumps(GOOD))
    f = schema_from_file(p)
    assert f.schema == Schema([Text("Name"), Integer("Age", 1, 120), Decimal("Latitude", -90, 90, 4)])
    assert f.num_bits == 512 and f.range_sizes == {"Age": 10, "Latitude": 1000}
    assert f.to_json() == GOOD and schema_from_json(f.to_json()) == f
    d = f.design()
    ref = design(f.schema, f.range_sizes, num_bits=512)
    assert d.config == ref.config and d.predicted_fpr == ref.predicted_fpr and d.num_bits == 512
    # defaults: m = 512, typical_range 1 (points)
    g = schema_from_json({"attributes": [{"name": "Age", "type": "integer", "min": 1, "max": 120}]})
    assert g.num_bits == 512 and g.range_sizes == {"Age": 1}


def test_table1_schema_gives_the_reports_configuration() -> None:
    """Table 1 at m = 512: k = 15 and Table 3's (d, s) (Income (5, 1), Age (1, 6))."""
    f = table1_schema()
    d = f.design()
    assert d.num_bits == 512 and d.config.num_hashes == 15
    assert (d.config["Income"].group_size, d.config["Income"].positions) == (5, 1)
    assert (d.config["Age"].group_size, d.config["Age"].positions) == (1, 6)
    profiles = table1_profiles(50, seed=3)
    assert profiles == table1_profiles(50, seed=3) and len(profiles) == 50
    for p in profiles:
        assert canonical_record(f.schema, p, "attributes") == p  # generated profiles are canonical


def _with(attr: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"num_bits": 512, "attributes": [attr], **top}


BAD = [
    ([], "schema"),
    ({"attributes": []}, "attributes"),
    ({"attributes": "Age"}, "attributes"),
    ({"num_bits": 512}, "attributes"),
    (_with({"name": "A", "type": "text"}, extra=1), "extra"),
    (_with({"name": "A", "type": "text"}, num_bits=1), "num_bits"),
    (_with({"name": "A", "type": "text"}, num_bits="512"), "num_bits"),
    (_with({"name": "A", "type": "date"}), "attributes[0].type"),
    (_with({"name": "A"}), "attributes[0].type"),
    (_with({"name": "A", "type": "text", "min": 1}), "'min'"),
    (_with({"name": "A", "type": "integer", "min": 1}), "attributes[0].max"),
    (_with({"name": "A", "type": "integer", "min": 5, "max": 1}), "'max'"),
    (_with({"name": "A", "type": "integer", "min": 1.5, "max": 9}), "'min'"),
    (_with({"name": "A", "type": "integer", "min": 1, "max": 9, "typical_range": 9}), "typical_range"),
    (_with({"name": "A", "type": "integer", "min": 1, "max": 9, "typical_range": 0}), "typical_range"),
    (_with({"name": "A", "type": "integer", "min": 1, "max": 9, "typical_range": "3"}), "typical_range"),
    (_with({"name": "A", "type": "decimal", "min": -9, "max": 9}), "attributes[0].places"),
    (_with({"name": "A", "type": "decimal", "min": -9, "max": 9, "places": 13}), "places"),
    (_with({"name": "A:b", "type": "text"}), "name"),
    (_with({"name": "", "type": "text"}), "name"),
    (_with({"name": 5, "type": "text"}), "name"),
    ({"attributes": [{"name": "A", "type": "text"}, {"name": "A", "type": "text"}]}, "unique"),
]


@pytest.mark.parametrize("data, needle", BAD)
def test_bad_schema_names_the_field(data: Any, needle: str) -> None:
    with pytest.raises(InvalidParameterError, match="schema file") as e:
        schema_from_json(data)
    assert needle in str(e.value)


def test_bad_schema_files(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text("{not json")
    with pytest.raises(InvalidParameterError, match="not valid JSON"):
        schema_from_file(p)
    p.write_bytes(b"\xff\xfe")
    with pytest.raises(InvalidParameterError, match="not valid JSON"):
        schema_from_file(p)
    p.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InvalidParameterError):
        schema_from_file(p)
    p.write_text(" " * (1 << 20) + "{}")
    with pytest.raises(InvalidParameterError, match="larger"):
        schema_from_file(p)
    with pytest.raises(OSError):
        schema_from_file(tmp_path / "missing.json")


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    from _serve import bloomkit_command

    return subprocess.run([*bloomkit_command(), "serve", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("content", [
    "{not json", json.dumps({"attributes": []}), json.dumps(BAD[11][0]), json.dumps(BAD[13][0])])
def test_serve_bad_schema_exits_2_with_one_line(tmp_path: Path, content: str) -> None:
    pytest.importorskip("fastapi")
    p = tmp_path / "s.json"
    p.write_text(content)
    r = _serve("--db", str(tmp_path / "db.sqlite"), "--schema", str(p), "--port", "1")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bloomkit: error: schema file"), r.stderr
    assert not (tmp_path / "db.sqlite").exists()  # nothing created


@pytest.mark.parametrize("args, needle", [
    (["--db", "x.sqlite"], "--schema"),
    (["--schema", "s.json"], "--db"),
    (["--db", "x.sqlite", "--schema", "missing.json"], "missing.json"),
    (["--db", "x.sqlite", "--schema", "s.json", "--demo"], "exactly one"),
])
def test_serve_bad_arguments_exit_2(tmp_path: Path, args: list[str], needle: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastapi")
    (tmp_path / "s.json").write_text(json.dumps(GOOD))
    monkeypatch.chdir(tmp_path)
    r = _serve(*args)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


# -- ProfileIndex.search_candidates (public addition for the service) -------------------------

def _index() -> ProfileIndex:
    idx = ProfileIndex(Schema([Text("City"), Integer("Age", 0, 120)]), 64, RangeConfig(4, {"Age": (1, 2)}),
                       store_records=True)
    idx.add_many([{"City": "a", "Age": (20, 29)}, {"City": "b", "Age": (30, 39)}, {"City": "a", "Age": 25}])
    return idx


def test_search_candidates_equals_search_both_ways() -> None:
    idx = _index()
    rng = np.random.default_rng(0)
    for _ in range(60):
        lo = int(rng.integers(0, 110))
        q: dict[str, Any] = {"Age": (lo, lo + int(rng.integers(0, 10)))}
        if rng.random() < 0.5:
            q["City"] = str(rng.choice(["a", "b", "c"]))
        for mode in ("subset", "intersect"):
            cand, match = idx.search_candidates(q, mode=mode)
            assert cand.tolist() == idx.search(q, mode=mode).tolist()
            assert match.tolist() == idx.search(q, mode=mode, verify=True).tolist()
            assert set(match.tolist()) <= set(cand.tolist())
    idx.remove(1)
    assert [a.tolist() for a in idx.search_candidates({})] == [[0, 2], [0, 2]]  # {}: every live profile
    assert idx.search({}).tolist() == [0, 2]
    idx._check()


def test_search_ands_rows_sparsest_first_with_the_same_answers() -> None:
    """ProfileIndex ANDs a query's rows sparsest first (row densities recounted as profiles come
    and go): through adds and removes, every search equals the profiles whose stored filter
    holds every row of BF(query)."""
    sf = schema_from_json(GOOD)
    d = sf.design()
    idx = ProfileIndex(sf.schema, d.num_bits, d.config, store_records=True)
    recs = _mixed_records(3000, 11)
    rng = np.random.default_rng(12)
    queries = [{k: (v if not isinstance(v, list) else v[0]) for k, v in r.items()} for r in _mixed_records(40, 13)]
    live: list[int] = []
    for step in range(6):
        live += idx.add_many(recs[step * 500:(step + 1) * 500]).tolist()
        for pid in rng.choice(live, 120, replace=False).tolist():
            idx.remove(pid)
            live.remove(pid)
        filters = {pid: set(np.flatnonzero(np.unpackbits(idx.get_filter(pid).bits.words.astype("<u8").view(np.uint8),
                                                         bitorder="little")).tolist()) for pid in live}
        for q in queries:
            rows = set(idx.query_rows(q).tolist())
            assert idx.search(q).tolist() == sorted(p for p, f in filters.items() if rows <= f), (step, q)


def test_search_candidates_refusals() -> None:
    idx = ProfileIndex(Schema([Integer("Age", 0, 120)]), 64, 4)
    idx.add({"Age": 3})
    with pytest.raises(InvalidParameterError, match="store_records"):
        idx.search_candidates({"Age": 3})
    with pytest.raises(InvalidParameterError, match="Age"):
        _index().search_candidates({"Age": 300})
    with pytest.raises(InvalidParameterError, match="Nope"):
        _index().search_candidates({"Nope": 3})
    with pytest.raises(InvalidParameterError, match="mode"):
        _index().search_candidates({"Age": 3}, mode="x")


# -- the service's validation -----------------------------------------------------------------

def test_canonical_record() -> None:
    s = schema_from_json(GOOD).schema
    assert canonical_record(s, {"Name": "x", "Age": 3, "Latitude": [25.01234, 25.1]}, "q") == \
        {"Name": "x", "Age": [3, 3], "Latitude": [25.0123, 25.1]}
    assert canonical_record(s, {}, "q", allow_empty=True) == {}
    for bad, loc in (({"Age": 1.0}, ("q", "Age")), ({"Nope": 1}, ("q", "Nope")), ([], ("q",)), ({}, ("q",)),
                     ({"Latitude": {"lo": 1}}, ("q", "Latitude")), ({"Age": [None, 3]}, ("q", "Age"))):
        with pytest.raises(FieldError) as e:
            canonical_record(s, bad, "q")
        assert e.value.loc == loc and e.value.detail()[0]["loc"] == ["body", *loc]


def _reference(schema: Schema, name: str, value: Any) -> Any:
    """What the attribute's own validation makes of ``value`` (the general path), or the
    error message."""
    attr = schema[name]
    try:
        if isinstance(attr, Text):
            return attr.check_text(value)
        if isinstance(value, list) and not all(type(v) in (int, float) for v in value):
            return "error"
        if type(value) not in (int, float, list):
            return "error"
        a, b = attr.to_interval(value)
        return [attr.unscale(a), attr.unscale(b)]
    except InvalidParameterError:
        return "error"


def test_canonical_record_fast_path_equals_the_attributes_validation() -> None:
    """The fast path of canonical_record (plain ints / floats / ASCII texts) answers as the
    attribute's ``to_interval`` / ``check_text`` for random values, ties at the 5th decimal,
    the scope's ends and just beyond, huge numbers, bools, NaN and inf, reversed and odd pairs."""
    s = schema_from_json(GOOD).schema
    rng = np.random.default_rng(5)
    lat = [float(x) for x in rng.uniform(-91, 91, 400)] + [round(float(x), 4) + 0.00005 for x in rng.uniform(-90, 90, 200)]
    lat += [90.0, -90.0, 90.00004, 90.00005, -90.00005, 89.99995, 0.00005, -0.00005, 1e300, -1e-300, 5e-5,
            float("nan"), float("inf"), 90, -90, 91, 0, True, 2**70]
    age = [int(x) for x in rng.integers(-5, 130, 200)] + [1, 120, 0, 121, 3.0, 3.5, False, True, 2**80, -(2**80)]
    values: list[tuple[str, Any]] = [("Latitude", v) for v in lat] + [("Age", v) for v in age]
    values += [("Latitude", sorted([float(a), float(b)])) for a, b in rng.uniform(-90.5, 90.5, (300, 2))]
    values += [("Age", [int(a), int(b)]) for a, b in rng.integers(-2, 125, (300, 2))]  # some reversed
    values += [("Age", [1, 2, 3]), ("Age", [1]), ("Age", []), ("Age", [1, True]), ("Latitude", [1, 2.5]),
               ("Name", "ming"), ("Name", "Zoë"), ("Name", ""), ("Name", 5), ("Name", "\ud800")]
    for name, v in values:
        want = _reference(s, name, v)
        try:
            got = canonical_record(s, {name: v}, "q")[name]
        except FieldError as e:
            assert e.loc == ("q", name)
            got = "error"
        assert got == want or (got != got and want != want), (name, v, got, want)


def test_schema_file_is_a_dataclass() -> None:
    f = schema_from_json(GOOD)
    assert isinstance(f, SchemaFile) and f == schema_from_json(json.loads(json.dumps(f.to_json())))


# -- rebuilding the index from the database ------------------------------------------------------

def _mixed_records(n: int, seed: int, names: tuple[str, str, str] = ("Name", "Age", "Latitude")) -> list[dict[str, Any]]:
    """Records leaving attributes out (several attribute sets), points and ranges, unicode texts."""
    rng = np.random.default_rng(seed)
    text, age, lat = names
    out = []
    for i in range(n):
        r: dict[str, Any] = {}
        if rng.random() < 0.8:
            r[text] = str(rng.choice(["ming", "wei", "Zoë", "hua"]))
        if rng.random() < 0.8:
            a = int(rng.integers(1, 110))
            r[age] = a if rng.random() < 0.3 else [a, a + int(rng.integers(0, 10))]
        if rng.random() < 0.7 or not r:
            la = int(rng.integers(249_000, 252_000))
            r[lat] = [la / 1e4, (la + int(rng.integers(0, 100))) / 1e4]
        out.append(dict(reversed(list(r.items()))) if i % 5 == 0 else r)  # key order varies too
    return out


@pytest.mark.parametrize("names", [("Name", "Age", "Latitude"), ("Name.lo", "Age", "Latitude.hi")])
def test_rebuild_from_the_database_answers_as_the_live_index(tmp_path: Path, names: tuple[str, str, str]) -> None:
    """Profiles published in batches (tables per attribute set) and one by one, some deleted;
    the index rebuilt from the database (no snapshot) answers every query as the live one did,
    also for a schema whose names end in ".lo" / ".hi" (not given as tables)."""
    from bloomkit.serve import MatchingService

    spec = json.loads(json.dumps(GOOD))
    for a, n in zip(spec["attributes"], names, strict=True):
        a["name"] = n
    sf = schema_from_json(spec)
    recs = _mixed_records(700, 3, names)
    svc = MatchingService(tmp_path / "p.sqlite", sf, snapshot_interval=0)
    got = [f.result() for f in [svc.publish(r) for r in recs[:600]]]  # queued together: large batches
    got += [svc.publish(r).result() for r in recs[600:]]
    for pid, token in got[::7]:
        svc.delete(pid, token).result()
    rng = np.random.default_rng(4)
    queries = [{k: v for k, v in r.items() if rng.random() < 0.7} or r for r in _mixed_records(150, 9, names)]
    before = [(svc.search(q, mode=m, verify=v).ids, svc.search(q, mode=m, verify=v).candidates)
              for q in queries for m in ("subset", "intersect") for v in (True, False)]
    svc.close(snapshot=False)
    again = MatchingService(tmp_path / "p.sqlite", sf, snapshot_interval=0)
    try:
        assert again.stats()["startup"]["source"] == "database" and len(again.index) == 700 - len(got[::7])
        after = [(again.search(q, mode=m, verify=v).ids, again.search(q, mode=m, verify=v).candidates)
                 for q in queries for m in ("subset", "intersect") for v in (True, False)]
        assert after == before
        assert sum(bool(ids) for ids, _ in before) > 100
    finally:
        again.close(snapshot=False)


def test_rebuild_refuses_a_record_that_is_not_canonical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record edited in the database behind the service's back: start-up names what is wrong."""
    import sqlite3

    from bloomkit.serve import MatchingService

    sf = schema_from_json(GOOD)
    svc = MatchingService(tmp_path / "p.sqlite", sf, snapshot_interval=0)
    for f in [svc.publish({"Name": "x", "Age": [20, 29]}) for _ in range(100)]:
        f.result()
    svc.close(snapshot=False)
    con = sqlite3.connect(str(tmp_path / "p.sqlite"))
    con.execute("UPDATE profiles SET record = ? WHERE id = 50", (json.dumps({"Name": "x", "Age": [20, 29, 30]}),))
    con.commit()
    con.close()
    from bloomkit.serve.db import ProfileDB

    closed: list[ProfileDB] = []
    real_close = ProfileDB.close

    def close(db: ProfileDB) -> None:
        closed.append(db)
        real_close(db)

    monkeypatch.setattr(ProfileDB, "close", close)
    from bloomkit.serve.service import RecordError

    with pytest.raises(RecordError, match=r"p.sqlite', table profiles, row id 50, column record, attribute 'Age': "
                                          r".*\[20, 29, 30\].*fix the row .*WHERE id = 50") as e:
        MatchingService(tmp_path / "p.sqlite", sf, snapshot_interval=0)
    assert (e.value.pid, e.value.field) == (50, "Age")
    assert len(closed) == 1  # the failed start-up left no connection open
