"""The installed ``bloomkit`` command, run in a subprocess: build / query / info of every kind,
typed keys from Parquet / CSV / text / gzip / stdin, and every error path (exit 2, one line
``bloomkit: error: ...``, never a traceback). Answers are compared with exact models."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import bloomkit
from bloomkit.experiments.registry import all_experiments, get_experiment, select

BLOOMKIT = shutil.which("bloomkit", path=str(Path(sys.executable).parent)) or shutil.which("bloomkit")


def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert BLOOMKIT, "the bloomkit command is not installed in this environment"
    env = {k: v for k, v in os.environ.items() if k != "BLOOMKIT_DEBUG"}
    return subprocess.run([BLOOMKIT, *args], input=stdin.decode() if stdin is not None else None,
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def ok(*args: str, **kw) -> str:
    p = run(*args, **kw)
    assert p.returncode == 0, p.stderr
    return p.stdout


def fails(*args: str, match: str, **kw) -> str:
    """The command fails with exit 2 and exactly one line on stderr, without a traceback."""
    p = run(*args, **kw)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if not ln.startswith("bloomkit: warning:")]
    assert len(lines) == 1 and lines[0].startswith("bloomkit: error: "), p.stderr
    assert "Traceback" not in p.stderr
    assert match.lower() in lines[0].lower(), (match, lines[0])
    return lines[0]


def answers(out: str) -> dict[str, str]:
    return dict(line.split("\t", 1) for line in out.splitlines())


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    ids = rng.choice(10**12, 3000, replace=False).astype(np.int64)
    words = [f"w{i}-é" if i % 5 == 0 else f"w{i}" for i in range(3000)]
    counts = (np.arange(3000) % 400 + 1).astype(np.int64)
    pq.write_table(pa.table({"id": ids, "word": words, "count": counts,
                             "x": rng.uniform(0, 100, 3000), "y": rng.uniform(0, 100, 3000),
                             "src": [f"10.0.{i // 256}.{i % 256}" for i in range(3000)],
                             "port": (np.arange(3000) % 1000).astype(np.int64)}), d / "t.parquet")
    pacsv.write_csv(pa.table({"id": ids[:500], "word": words[:500]}), d / "t.csv")
    (d / "words.txt").write_text("\n".join(words + words[:100]) + "\n", encoding="utf-8")  # 100 duplicates
    (d / "words.txt.gz").write_bytes(gzip.compress((d / "words.txt").read_bytes()))
    (d / "one.csv").write_text("name\nann\nbob\n", encoding="utf-8")
    return d


def test_text_build_query_info(data, tmp_path):
    out = tmp_path / "w.bkf"
    summary = json.loads(ok("build", str(data / "words.txt"), "-o", str(out), "--fpr", "0.001", "--json"))
    info = summary["info"]
    assert info["capacity"] == 3000, "duplicates count once toward the capacity"
    assert info["key_types"] == ["str"] and info["overfilled"] is False
    bf = bloomkit.load(out)
    assert bf.contains_many([f"w{i}-é" if i % 5 == 0 else f"w{i}" for i in range(3000)]).all()
    res = answers(ok("query", str(out), "w1", "w5-é", "nobody-xyz"))
    assert res == {"w1": "maybe", "w5-é": "maybe", "nobody-xyz": "no"}
    info = json.loads(ok("info", str(out), "--json"))
    assert info["structure"] == "bloom.BloomFilter" and 0 < info["predicted_fpr"] < 0.002


def test_gzip_and_stdin_inputs(data, tmp_path):
    ok("build", str(data / "words.txt.gz"), "-o", str(tmp_path / "g.bkf"))
    ok("build", "-", "-o", str(tmp_path / "s.bkf"), stdin=(data / "words.txt").read_bytes())
    g, s = bloomkit.load(tmp_path / "g.bkf"), bloomkit.load(tmp_path / "s.bkf")
    assert g == s and "w7" in g
    res = answers(ok("query", str(tmp_path / "s.bkf"), "--input", "-", stdin=b"w3\nw4\nzzz-absent\n"))
    assert res["w3"] == "maybe" and res["zzz-absent"] == "no"


def test_parquet_int_keys_answer_yes_for_stored_keys(data, tmp_path):
    """An int64 column gives int keys; query parses its arguments the same way."""
    out = tmp_path / "i.bkf"
    ok("build", str(data / "t.parquet"), "--column", "id", "-o", str(out))
    ids = pq.read_table(data / "t.parquet").column("id").to_pylist()
    assert bloomkit.load(out).key_types == ("int",)
    res = answers(ok("query", str(out), *map(str, ids[:50])))
    assert set(res.values()) == {"maybe"}
    absent = [str(v) for v in range(1, 200) if v not in set(ids)]
    assert list(answers(ok("query", str(out), *absent)).values()).count("maybe") <= 8
    fails("query", str(out), "abc", match="not an int key")
    res = answers(ok("query", str(out), "--key-type", "str", str(ids[0])))  # the str "123" is another key
    assert res[str(ids[0])] == "no"


def test_csv_columns_by_name_and_key_types(data, tmp_path):
    fails("build", str(data / "t.csv"), "-o", str(tmp_path / "x.bkf"), match="choose the keys with --column")
    fails("build", str(data / "t.csv"), "--column", "nope", "-o", str(tmp_path / "x.bkf"), match="no column 'nope'")
    ok("build", str(data / "t.csv"), "--column", "word", "-o", str(tmp_path / "w.bkf"))
    assert answers(ok("query", str(tmp_path / "w.bkf"), "w1"))["w1"] == "maybe"
    ok("build", str(data / "t.csv"), "--column", "id", "--key-type", "str", "-o", str(tmp_path / "s.bkf"))
    assert bloomkit.load(tmp_path / "s.bkf").key_types == ("str",)
    ok("build", str(data / "one.csv"), "-o", str(tmp_path / "one.bkf"))  # one column: no --column needed
    assert "ann" in bloomkit.load(tmp_path / "one.bkf")


@pytest.mark.parametrize("kind", ["bloom", "counting", "scalable", "foldable", "foldable-counting", "split-block"])
def test_every_membership_kind(data, tmp_path, kind):
    if kind == "split-block" and not hasattr(bloomkit, "SplitBlockBloomFilter"):
        pytest.skip("split-block filter not in this build")
    out = tmp_path / f"{kind}.bkf"
    ok("build", str(data / "t.parquet"), "--column", "word", "--kind", kind, "-o", str(out))
    f = bloomkit.load(out)
    words = pq.read_table(data / "t.parquet").column("word").to_pylist()
    assert f.contains_many(words).all()
    res = answers(ok("query", str(out), words[0], "absent-word-1"))
    assert res[words[0]] == "maybe"
    info = json.loads(ok("info", str(out), "--json"))
    assert info["size_in_bits"] > 0 and "predicted_fpr" in info


@pytest.mark.parametrize("kind", ["geometric", "bloomier"])
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


def test_similarity_kinds_take_vectors(data, tmp_path):
    out = tmp_path / "m.bkf"
    fails("build", str(data / "t.parquet"), "--kind", "mlbf", "--columns", "x,y", "-o", str(out), match="--w")
    ok("build", str(data / "t.parquet"), "--kind", "mlbf", "--columns", "x,y", "--w", "2", "-o", str(out))
    t = pq.read_table(data / "t.parquet")
    x, y = t.column("x").to_numpy(), t.column("y").to_numpy()
    pts = [f"{a},{b}" for a, b in zip(x[:20], y[:20], strict=True)]
    assert set(answers(ok("query", str(out), *pts)).values()) == {"near"}
    fails("query", str(out), "1,2,3", match="2 columns")
    fails("query", str(out), "a,b", match="not a vector")
    ok("build", str(data / "t.parquet"), "--kind", "lsbf", "--columns", "x,y", "--w", "2", "-o", str(tmp_path / "l.bkf"))
    fails("query", str(tmp_path / "l.bkf"), "1,2", "--level", "1", match="level")


def test_pbf_items_by_column_name(data, tmp_path):
    out = tmp_path / "p.bkf"
    ok("build", str(data / "t.parquet"), "--kind", "pbf", "--columns", "src,port", "-o", str(out))
    res = answers(ok("query", str(out), "10.0.0.1,1", "10.0.0.1,2"))
    assert res == {"10.0.0.1,1": "maybe", "10.0.0.1,2": "no"}
    fails("query", str(out), "10.0.0.1", match="attributes")
    fails("query", str(out), "10.0.0.1,x", match="not an int key")


def test_overfill_warns_and_strict_fails(data, tmp_path):
    p = run("build", str(data / "words.txt"), "-o", str(tmp_path / "o.bkf"), "--capacity", "100")
    assert p.returncode == 0 and "bloomkit: warning:" in p.stderr and "3000 distinct keys" in p.stderr
    fails("build", str(data / "words.txt"), "-o", str(tmp_path / "o2.bkf"), "--capacity", "100", "--strict",
          match="--strict")
    assert not (tmp_path / "o2.bkf").exists()


def test_every_error_is_one_line(data, tmp_path):
    garbage = tmp_path / "bad.bkf"
    garbage.write_bytes(b"garbage")
    fails("info", str(garbage), match="bloomkit container")
    fails("query", str(garbage), "x", match="bloomkit container")
    fails("query", str(tmp_path / "missing.bkf"), "x", match="no such file")
    fails("build", str(tmp_path / "missing.txt"), "-o", str(tmp_path / "x.bkf"), match="no such file")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    fails("build", str(empty), "-o", str(tmp_path / "x.bkf"), match="no keys")
    (tmp_path / "empty.csv").write_text("a,b\n")
    fails("build", str(tmp_path / "empty.csv"), "--column", "a", "-o", str(tmp_path / "x.bkf"), match="no keys")
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"abc\x00\x01\x02")
    fails("build", str(binary), "-o", str(tmp_path / "x.bkf"), match="binary")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("café\n".encode("latin-1"))
    fails("build", str(latin), "-o", str(tmp_path / "x.bkf"), match="UTF-8")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes((data / "t.parquet").read_bytes()[:300])
    fails("build", str(broken), "--column", "id", "-o", str(tmp_path / "x.bkf"), match="parquet")
    badgz = tmp_path / "bad.txt.gz"
    badgz.write_bytes(gzip.compress(b"a\nb\n")[:-8])
    fails("build", str(badgz), "-o", str(tmp_path / "x.bkf"), match="gzip")
    fails("build", str(data / "words.txt"), "-o", str(tmp_path / "x.bkf"), "--fpr", "2", match="'fpr'")
    fails("build", str(data / "words.txt"), "-o", str(tmp_path / "x.bkf"), "--kind", "nope", match="invalid choice")
    fails("build", str(data / "words.txt"), "-o", str(tmp_path), match="directory")
    fails("build", str(data / "words.txt"), "-o", str(tmp_path / "x.bkf"), "--key-type", "int", match="line 1")
    fails("query", str(tmp_path / "missing.bkf"), match="no such file")
    ok("build", str(data / "words.txt"), "-o", str(tmp_path / "w.bkf"))
    fails("query", str(tmp_path / "w.bkf"), match="give query keys")
    fails("reproduce", "--quick", "--full", match="not allowed with")


def test_mixed_key_types_need_key_type(tmp_path):
    bf = bloomkit.BloomFilter(capacity=100, fpr=0.01)
    bf.add_many(["a", 1])
    bf.save(tmp_path / "m.bkf")
    fails("query", str(tmp_path / "m.bkf"), "1", match="--key-type")
    assert answers(ok("query", str(tmp_path / "m.bkf"), "--key-type", "int", "1"))["1"] == "maybe"


def test_format_1_files_query_as_str_with_a_note(tmp_path):
    golden = Path(__file__).parent / "golden" / "v1" / "bloom.BloomFilter.bkf"
    p = run("query", str(golden), "alpha")
    assert p.returncode == 0 and answers(p.stdout)["alpha"] == "maybe" and "format 1" in p.stderr


def test_reproduce_one_experiment(tmp_path):
    ok("reproduce", "--quick", "--only", "base-fpr-grid", "--out", str(tmp_path))
    assert "base-fpr-grid" in (tmp_path / "report.md").read_text()
    assert (tmp_path / "base-fpr-grid.csv").read_text().startswith("n_over_m,k,")
    assert (tmp_path / "base-fpr-grid.png").stat().st_size > 1000
    fails("reproduce", "--only", "no-such-experiment", "--out", str(tmp_path), match="no-such-experiment")


def test_registry():
    exps = all_experiments()
    ids = [e.id for e in exps]
    assert len(ids) == len(set(ids)) and "base-fpr-grid" in ids
    assert all(e.title and e.source for e in exps)
    assert select(["base"])[0].id == "base-fpr-grid"
    assert get_experiment("base-fpr-grid").run(quick=True).rows
    assert "base-fpr-grid" in ok("reproduce", "--list")


def test_bench_command():
    out = ok("bench", "--keys", "2000")
    assert "numpy int64" in out and "list[str]" in out and "add ns/key" in out


def test_version_names_the_hash_path():
    out = ok("--version")
    assert out.startswith(f"bloomkit {bloomkit.__version__} (") and ("c-extension" in out or "numba" in out)


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
    ok("build", str(tmp_path / "people.csv"), "--kind", "range", "--schema", str(tmp_path / "schema.json"), "-o", str(rf))
    assert answers(ok("query", str(rf), "Name=n3", "Age=50"))["Name=n3 Age=50"] == "maybe"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"num_bits": 512, "attributes": [{"name": "Age", "type": "integer", "min": 5, "max": 1}]}))
    fails("build", str(tmp_path / "people.csv"), "--kind", "range", "--schema", str(bad), "-o", str(rf),
          match="attributes[0]")
    fails("build", str(tmp_path / "people.csv"), "--kind", "range", "--schema", str(tmp_path / "schema.json"),
          "--column", "Name", "-o", str(rf), match="--column is not for")
