"""The bloomkit command: build / query / info / reproduce / errors."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import bloomkit
from bloomkit.cli import main
from bloomkit.experiments.registry import all_experiments, get_experiment, select


def test_build_query_info_text(tmp_path, capsys):
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(f"user{i}" for i in range(500)), encoding="utf-8")
    out = tmp_path / "f.bkf"
    assert main(["build", str(keys), "-o", str(out), "--fpr", "0.001"]) == 0
    bf = bloomkit.load(out)
    assert isinstance(bf, bloomkit.BloomFilter) and bf.contains_many([f"user{i}" for i in range(500)]).all()
    capsys.readouterr()
    assert main(["query", str(out), "user1", "nobody-xyz"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "user1\tmaybe"
    assert main(["info", str(out)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["structure"] == "bloom.BloomFilter" and info["params"]["num_bits"] == bf.num_bits
    assert 0 < info["predicted_fpr"] < 0.01


def test_build_from_csv_and_parquet(tmp_path):
    csv = tmp_path / "k.csv"
    csv.write_text("id,name\n1,ann\n2,bob\n", encoding="utf-8")
    assert main(["build", str(csv), "-o", str(tmp_path / "a.bkf"), "--column", "name", "--counting"]) == 0
    f = bloomkit.load(tmp_path / "a.bkf")
    assert isinstance(f, bloomkit.CountingBloomFilter) and "ann" in f and "bob" in f
    pq.write_table(pa.table({"k": ["x", "y"]}), tmp_path / "k.parquet")
    assert main(["build", str(tmp_path / "k.parquet"), "-o", str(tmp_path / "b.bkf")]) == 0
    assert "x" in bloomkit.load(tmp_path / "b.bkf")


def test_cli_errors_are_clear(tmp_path, capsys):
    bad = tmp_path / "bad.bkf"
    bad.write_bytes(b"garbage")
    assert main(["info", str(bad)]) == 2
    assert "bloomkit container" in capsys.readouterr().err
    assert main(["query", str(tmp_path / "missing.bkf"), "x"]) == 2
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["build", str(empty), "-o", str(tmp_path / "e.bkf")]) == 2
    keys = tmp_path / "k.txt"
    keys.write_text("a\nb\n")
    assert main(["build", str(keys), "-o", str(tmp_path / "e.bkf"), "--fpr", "2"]) == 2
    assert "'fpr'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "--quick", "--full"])


def test_reproduce_one_experiment(tmp_path, capsys):
    assert main(["reproduce", "--quick", "--only", "base-fpr-grid", "--out", str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text()
    assert "base-fpr-grid" in report and "<th>quantity</th><th>paper</th><th>model</th><th>measured</th>" in report
    assert (tmp_path / "base-fpr-grid.csv").read_text().startswith("n_over_m,k,")
    assert (tmp_path / "base-fpr-grid.png").stat().st_size > 1000
    assert main(["reproduce", "--only", "no-such-experiment", "--out", str(tmp_path)]) == 2


def test_registry():
    exps = all_experiments()
    ids = [e.id for e in exps]
    assert len(ids) == len(set(ids)) and "base-fpr-grid" in ids
    assert all(e.title and e.source for e in exps)
    assert select(["base"])[0].id == "base-fpr-grid"
    assert get_experiment("base-fpr-grid").run(quick=True).rows
    assert main(["reproduce", "--list"]) == 0


def test_bench_command(capsys):
    assert main(["bench", "--keys", "2000"]) == 0
    out = capsys.readouterr().out
    assert "numpy int64" in out and "list[str]" in out and "add ns/key" in out
