"""The ``bloomkit`` command's structure kinds: every membership, lookup, similarity, PBF,
range and profile-index kind built from a table and queried (the installed command in a
subprocess). Split out of tests/test_cli.py, whose helpers it uses, so that ``--dist loadfile``
runs the two halves on both workers (CI time)."""
# ruff: noqa: F811  (the tests take test_cli's module fixture `data` by its name)

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from test_cli import answers, data, fails, ok, once  # noqa: F401  (data: the module's table fixture)

import bloomkit


@once
@pytest.mark.parametrize("kind", ["bloom", "counting", "scalable", "foldable", "foldable-counting", "split-block", "fuse"])
def test_every_membership_kind(data, tmp_path, kind):
    if kind == "split-block" and not hasattr(bloomkit, "SplitBlockBloomFilter"):
        pytest.skip("split-block filter not in this build")
    out = tmp_path / f"{kind}.bkf"
    summary = json.loads(ok("build", str(data / "t.parquet"), "--column", "word", "--kind", kind, "-o", str(out),
                            "--strict", "--json"))  # the defaults meet --fpr: --strict passes
    assert summary["distinct"] == 3000 and summary["distinct_exact"] and summary["predicted_fpr"] <= 0.01
    f = bloomkit.load(out)
    words = pq.read_table(data / "t.parquet").column("word").to_pylist()
    assert f.contains_many(words).all()
    res = answers(ok("query", str(out), words[0], "absent-word-1"))
    assert res[words[0]] == "maybe"
    info = json.loads(ok("info", str(out), "--json"))
    assert info["size_in_bits"] > 0 and "predicted_fpr" in info
    table = ok("info", str(out))  # a table for people; --json for programs
    assert table.splitlines()[0].split() == ["file", str(out)] and "predicted_fpr" in table and "{" not in table


@once
@pytest.mark.parametrize("kind", ["geometric", "bloomier", "ribbon-retrieval"])
def test_lookup_kinds_print_values(data, tmp_path, kind):
    out = tmp_path / f"{kind}.bkf"
    fails("build", str(data / "t.parquet"), "--column", "word", "--kind", kind, "-o", str(out), match="--values")
    ok("build", str(data / "t.parquet"), "--column", "word", "--values", "count", "--kind", kind, "-o", str(out))
    t = pq.read_table(data / "t.parquet")
    truth = dict(zip(t.column("word").to_pylist(), t.column("count").to_pylist(), strict=True))
    keys = list(truth)[:200]
    res = answers(ok("query", str(out), *keys))
    assert all(res[k] == str(truth[k]) for k in keys), "every stored key gives its exact value"
    assert answers(ok("query", str(out), "absent-key"))["absent-key"] == "-"
    doc = json.loads(ok("query", str(out), keys[0], "--json"))
    assert doc == [{"key": keys[0], "value": truth[keys[0]]}]


@once
def test_similarity_kinds_take_vectors(data, tmp_path):
    out = tmp_path / "m.bkf"
    fails("build", str(data / "t.parquet"), "--kind", "mlbf", "--columns", "x,y", "-o", str(out), match="--w")
    doc = json.loads(ok("build", str(data / "t.parquet"), "--kind", "mlbf", "--columns", "x,y", "--w", "2", "-o",
                        str(out), "--strict", "--json"))  # sized for the 3000 rows and --fpr (for_requirements)
    assert doc["info"]["count"] == 3000 and doc["predicted_fpr"] <= 0.01
    fails("build", str(data / "t.parquet"), "--kind", "mlbf-star", "--columns", "x,y", "--w", "2", "--and-width", "2",
          "--or-count", "3", "--verify-bits", "256", "-o", str(tmp_path / "bad.bkf"), "--strict", match="above --fpr")
    assert not (tmp_path / "bad.bkf").exists()
    t = pq.read_table(data / "t.parquet")
    x, y = t.column("x").to_numpy(), t.column("y").to_numpy()
    pts = [f"{a},{b}" for a, b in zip(x[:20], y[:20], strict=True)]
    assert set(answers(ok("query", str(out), *pts)).values()) == {"near"}
    fails("query", str(out), "1,2,3", match="2 columns")
    fails("query", str(out), "a,b", match="not a vector")
    ok("build", str(data / "t.parquet"), "--kind", "lsbf", "--columns", "x,y", "--w", "2", "-o", str(tmp_path / "l.bkf"),
       "--strict")
    fails("query", str(tmp_path / "l.bkf"), "1,2", "--level", "1", match="level")


@once
def test_pbf_items_by_column_name(data, tmp_path):
    from bloomkit.multiattr import ParallelBloomFilter

    for n in (1, 2, 5):  # raised ZeroDivisionError for every n <= 5
        f = ParallelBloomFilter.for_requirements(3, n, 0.01)
        f.add_many([(i, f"b{i}", 3.5) for i in range(n)])
        assert f.capacity == n and all((i, f"b{i}", 3.5) in f for i in range(n))
    # the README's example on a small file: PBF for any number of items (was ZeroDivisionError for n <= 5)
    pq.write_table(pa.table({"src": ["10.0.0.1", "10.0.0.2"], "dst": ["10.0.0.9", "10.0.0.9"], "port": [80, 443]}),
                   tmp_path / "flows.parquet")
    ok("build", str(tmp_path / "flows.parquet"), "--columns", "src,dst,port", "--kind", "pbf", "-o",
       str(tmp_path / "flows.bkf"), "--strict")
    assert answers(ok("query", str(tmp_path / "flows.bkf"), "10.0.0.2,10.0.0.9,443")) == {"10.0.0.2,10.0.0.9,443": "maybe"}
    out = tmp_path / "p.bkf"
    ok("build", str(data / "t.parquet"), "--kind", "pbf", "--columns", "src,port", "-o", str(out))
    res = answers(ok("query", str(out), "10.0.0.1,1", "10.0.0.1,2"))
    assert res == {"10.0.0.1,1": "maybe", "10.0.0.1,2": "no"}
    fails("query", str(out), "10.0.0.1", match="attributes")
    fails("query", str(out), "10.0.0.1,x", match="not an int key")



@once
def test_range_and_profile_index_from_a_table(tmp_path):
    """--kind range / profile-index: the schema file's design, a CSV whose columns are the
    attributes (a range as Name.lo / Name.hi); query answers equal a scan of the table."""
    schema = {"num_bits": 512, "attributes": [
        {"name": "Name", "type": "text"},
        {"name": "Age", "type": "integer", "min": 1, "max": 120, "typical_range": 10}]}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    rng = np.random.default_rng(3)
    lo = rng.integers(1, 100, 300)
    rows = {"Name": [f"n{i % 40}" for i in range(300)], "Age.lo": lo, "Age.hi": lo + rng.integers(0, 20, 300)}
    pacsv.write_csv(pa.table(rows), tmp_path / "people.csv")
    idx = tmp_path / "people.bkf"
    fails("build", str(tmp_path / "people.csv"), "--kind", "profile-index", "-o", str(idx), match="--schema")
    fails("build", str(tmp_path / "people.csv"), "--kind", "bloom", "--schema", str(tmp_path / "schema.json"),
          "-o", str(idx), match="--schema is for")
    ok("build", str(tmp_path / "people.csv"), "--kind", "profile-index", "--schema", str(tmp_path / "schema.json"),
       "-o", str(idx))
    for age in (5, 30, 77, 118):
        want = [i for i in range(300) if rows["Age.lo"][i] <= age <= rows["Age.hi"][i]]
        doc = json.loads(ok("query", str(idx), f"Age={age}", "--json"))
        assert doc[0]["ids"] == want, age
    doc = json.loads(ok("query", str(idx), "Name=n7", "Age=30:35", "--mode", "intersect", "--json"))
    want = [i for i in range(300) if rows["Name"][i] == "n7" and rows["Age.lo"][i] <= 35 and 30 <= rows["Age.hi"][i]]
    assert doc[0]["ids"] == want
    fails("query", str(idx), "Height=3", match="no attribute 'Height'")
    rf = tmp_path / "r.bkf"
    # 300 profiles in one 512-bit range filter: predicted FPR 1.0; refused, pointing to profile-index
    fails("build", str(tmp_path / "people.csv"), "--kind", "range", "--schema", str(tmp_path / "schema.json"),
          "-o", str(rf), match="--kind profile-index")
    assert not rf.exists()
    pacsv.write_csv(pa.table({"Name": ["n3"], "Age.lo": [45], "Age.hi": [55]}), tmp_path / "one.csv")
    ok("build", str(tmp_path / "one.csv"), "--kind", "range", "--schema", str(tmp_path / "schema.json"), "-o", str(rf))
    assert answers(ok("query", str(rf), "Name=n3", "Age=50"))["Name=n3 Age=50"] == "maybe"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"num_bits": 512, "attributes": [{"name": "Age", "type": "integer", "min": 5, "max": 1}]}))
    fails("build", str(tmp_path / "people.csv"), "--kind", "range", "--schema", str(bad), "-o", str(rf),
          match="attributes[0]")
    fails("build", str(tmp_path / "people.csv"), "--kind", "range", "--schema", str(tmp_path / "schema.json"),
          "--column", "Name", "-o", str(rf), match="--column is not for")
