"""The deduplication front end (issue 24): dedup over lists, pyarrow and Parquet, and the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bloomkit import InvalidParameterError
from bloomkit.similarity import JaccardMLBFStar, MinHasher
from bloomkit.similarity.dedup import dedup, dedup_parquet, make_filter, make_index

_RNG = np.random.default_rng(24)
_VOCAB = [f"{a}{b}" for a in ("ka", "lo", "mi", "nu", "pe", "ro", "su", "ti") for b in ("ban", "dor", "fel", "gim", "hut")]
BASE = [" ".join(_RNG.choice(_VOCAB, 16)) + f" {i}" for i in range(300)]


def stream() -> tuple[list[str], np.ndarray]:
    """300 texts, then a near copy (one word changed) of every third one, interleaved."""
    texts, truth = [], []
    for i, t in enumerate(BASE):
        texts.append(t)
        truth.append(False)
        if i % 3 == 0:
            texts.append(t + " end" if i % 2 else t + ".")
            truth.append(True)
    return texts, np.array(truth)


def test_dedup_finds_the_near_copies_in_stream_order() -> None:
    texts, truth = stream()
    mh = MinHasher()
    sims = [mh.jaccard(texts[i - 1], texts[i]) for i in np.flatnonzero(truth)]
    assert min(sims) > 0.9
    seen = dedup(texts, threshold=0.8, seed=3)
    assert seen[truth].all() and not seen[~truth].any()  # J > 0.9 (a miss: < 4e-3) vs J < 0.3
    # every input kind and batch size gives the same answer
    for kind in (pa.array(texts), pa.chunked_array([texts[:50], texts[50:]]), np.array(texts), tuple(texts)):
        assert np.array_equal(dedup(kind, threshold=0.8, seed=3), seen)
    assert np.array_equal(dedup(texts, threshold=0.8, seed=3, batch_size=7), seen)
    # an exact repeat is always found; empty texts never
    assert dedup(["same text here", "", "same text here", "", "   "]).tolist() == [False, False, True, False, False]


def test_dedup_with_a_given_filter_and_levels() -> None:
    f = JaccardMLBFStar.for_thresholds((0.9, 0.7), 1000, seed=2)
    f.add_many(BASE[:10])
    assert dedup(BASE[:12], filter=f, level=1).tolist() == [True] * 10 + [False, False]
    assert len(f) == 22
    with pytest.raises(InvalidParameterError, match="size a new filter"):
        dedup(BASE, filter=f, fnr=0.1)
    with pytest.raises(InvalidParameterError, match="BBitIndex, JaccardLSBF, JaccardMLBF or JaccardMLBFStar"):
        dedup(BASE, filter=object())  # type: ignore[arg-type]
    idx = make_index(0.8, 100, seed=4)
    with pytest.raises(InvalidParameterError, match="must be 0 for a BBitIndex"):
        dedup(BASE, filter=idx, level=1)
    g = make_filter(0.8, 1000, seed=4)
    assert (g.rows_by_level, g.bands) == ((10,), 7)


@pytest.mark.parametrize("bad, match", [
    ({"threshold": 1.0}, "threshold"), ({"threshold": 0}, "threshold"), ({"threshold": float("nan")}, "threshold"),
    ({"threshold": 1.0, "verify": False}, "thresholds"), ({"nulls": "skip"}, "nulls"), ({"batch_size": 0}, "batch_size"),
    ({"verify": 1}, "verify"), ({"method": "oph"}, "pass verify=False"), ({"verify_perm": 8, "verify": False}, "verify_perm"),
    ({"far_gap": 0.0, "fpr": 1e-9}, "cannot reach"), ({"bits": 3}, "bits"),
])
def test_dedup_parameters(bad: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        dedup(BASE, **bad)  # type: ignore[arg-type]


def test_nulls_error_or_empty() -> None:
    with pytest.raises(InvalidParameterError, match="first at position 1"):
        dedup(pa.array(["a text", None, "a text"]))
    assert dedup(pa.array(["a text", None, "a text"]), nulls="empty").tolist() == [False, False, True]
    assert dedup(["a text", None, "a text"], nulls="empty").tolist() == [False, False, True]
    with pytest.raises(InvalidParameterError, match="valid UTF-8"):
        dedup([b"ok", b"\xff"])


def test_dedup_parquet_reads_the_column_in_batches(tmp_path: Path) -> None:
    texts, truth = stream()
    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"id": np.arange(len(texts)), "text": texts}), path, row_group_size=64)
    seen = dedup_parquet(path, "text", seed=3, batch_size=50)
    assert np.array_equal(seen, dedup(texts, seed=3))
    with pytest.raises(InvalidParameterError, match="must name a column"):
        dedup_parquet(path, "body")
    pq.write_table(pa.table({"text": ["x y z", None]}), tmp_path / "n.parquet")
    with pytest.raises(InvalidParameterError, match=r"first at row 1\).*nulls='empty'"):
        dedup_parquet(tmp_path / "n.parquet", "text")


def test_cli_writes_the_kept_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One run of the installed command on a Parquet file (a subprocess); the text-file form and
    the errors through the same entry point in this process."""
    from bloomkit.cli import main

    texts, truth = stream()
    pq.write_table(pa.table({"id": np.arange(len(texts)), "text": texts}), tmp_path / "in.parquet")
    (tmp_path / "in.txt").write_text("\n".join(texts[:20]) + "\n")
    bloomkit = str(Path(sys.executable).parent / "bloomkit")
    p = subprocess.run([bloomkit, "dedup", "in.parquet", "--column", "text", "--threshold", "0.8", "--seed", "3",
                        "-o", "kept.parquet"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    kept = pq.read_table(tmp_path / "kept.parquet")["id"].to_numpy()
    assert np.array_equal(kept, np.flatnonzero(~dedup(texts, seed=3)))
    assert f"{len(texts)} rows" in p.stdout
    assert main(["dedup", str(tmp_path / "in.txt"), "-o", str(tmp_path / "kept.txt")]) == 0
    assert (tmp_path / "kept.txt").read_text().splitlines() == [t for t, d in zip(texts[:20], dedup(texts[:20]),
                                                                                   strict=True) if not d]
    assert main(["dedup", str(tmp_path / "in.txt"), "--no-verify", "-o", str(tmp_path / "lsbf.txt")]) == 0
    assert (tmp_path / "lsbf.txt").read_text().splitlines() == [
        t for t, d in zip(texts[:20], dedup(texts[:20], verify=False), strict=True) if not d]
    assert main(["dedup", str(tmp_path / "in.parquet")]) == 2
    assert "--column" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["dedup", str(tmp_path / "in.parquet"), "--column", "text", "--threshold", "1.5"])
    assert e.value.code == 2 and "threshold" in capsys.readouterr().err


def test_verified_dedup_rejects_candidates_below_the_threshold() -> None:
    """Texts at Jaccard ~0.7 of a stored one: the LSBF of the same stream reports some of them,
    the verified default (S(s) A(s) ~ 0.002 at 0.7) almost none; copies at ~0.95 are found by both."""
    def near(i: int, keep: int) -> set[str]:  # 80 tokens, ``keep`` of them shared with stored text i
        return {f"t{i}-{j}" for j in range(keep)} | {f"u{i}-{keep}-{j}" for j in range(80 - keep)}

    sets = [near(i, 80) for i in range(300)] + [near(i, 66) for i in range(300)] + [near(i, 78) for i in range(300)]
    # J = 66 / 94 = 0.702 and 78 / 82 = 0.951
    verified = dedup(sets, seed=2)
    plain = dedup(sets, seed=2, verify=False)
    assert not verified[:300].any() and plain[:300].mean() < 0.05  # the LSBF: its Bloom verification rate
    assert verified[600:].mean() > 0.95 and plain[600:].mean() > 0.95
    assert verified[300:600].sum() <= 5 < plain[300:600].sum()  # model: S A(0.7) 0.002 vs S(0.7) ~0.1
