"""The installed ``bloomkit`` command, run in a subprocess: build / query / info of every kind,
typed keys from Parquet / CSV / text / gzip / stdin, and every error path (exit 2, one line
``bloomkit: error: ...``, never a traceback). Answers are compared with exact models."""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import bloomkit
from bloomkit.experiments.registry import all_experiments, get_experiment, select

BLOOMKIT = shutil.which("bloomkit", path=str(Path(sys.executable).parent)) or shutil.which("bloomkit")

# `make test` runs this file twice: with the C extension and on numba alone (BLOOMKIT_NO_EXTENSION=1).
# On numba alone only the command's own use of the two paths runs (a build / query / info round trip,
# key types, the one-key query and the path it reports): every kind, input format and message runs
# once, since the commands call the library paths that the library's tests run in both passes.
once = pytest.mark.skipif(os.environ.get("BLOOMKIT_NO_EXTENSION", "") not in ("", "0"),
                          reason="no compiled path involved: run in the pass with the extension only")


def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None,
        binary: bool = False) -> subprocess.CompletedProcess[str]:
    """The installed command; ``binary`` passes ``stdin`` as bytes (output still text)."""
    assert BLOOMKIT, "the bloomkit command is not installed in this environment"
    env = {k: v for k, v in os.environ.items() if k != "BLOOMKIT_DEBUG"}
    if binary:
        p = subprocess.run([BLOOMKIT, *args], input=stdin, capture_output=True, cwd=cwd, env=env, timeout=300)
        return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode(), p.stderr.decode())
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


@once
def test_gzip_and_stdin_inputs(data, tmp_path):
    ok("build", str(data / "words.txt.gz"), "-o", str(tmp_path / "g.bkf"))
    ok("build", "-", "-o", str(tmp_path / "s.bkf"), stdin=(data / "words.txt").read_bytes())
    g, s = bloomkit.load(tmp_path / "g.bkf"), bloomkit.load(tmp_path / "s.bkf")
    assert g == s and "w7" in g
    res = answers(ok("query", str(tmp_path / "s.bkf"), "--input", "-", stdin=b"w3\nw4\nzzz-absent\n"))
    assert res["w3"] == "maybe" and res["zzz-absent"] == "no"


@once
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


@once
def test_csv_columns_by_name_and_key_types(data, tmp_path):
    fails("build", str(data / "t.csv"), "-o", str(tmp_path / "x.bkf"), match="choose the keys with --column")
    fails("build", str(data / "t.csv"), "--column", "nope", "-o", str(tmp_path / "x.bkf"), match="no column 'nope'")
    ok("build", str(data / "t.csv"), "--column", "word", "-o", str(tmp_path / "w.bkf"))
    assert answers(ok("query", str(tmp_path / "w.bkf"), "w1"))["w1"] == "maybe"
    ok("build", str(data / "t.csv"), "--column", "id", "--key-type", "str", "-o", str(tmp_path / "s.bkf"))
    assert bloomkit.load(tmp_path / "s.bkf").key_types == ("str",)
    ok("build", str(data / "one.csv"), "-o", str(tmp_path / "one.bkf"))  # one column: no --column needed
    assert "ann" in bloomkit.load(tmp_path / "one.bkf")


@once
def test_overfill_warns_and_strict_fails(data, tmp_path):
    p = run("build", str(data / "words.txt"), "-o", str(tmp_path / "o.bkf"), "--capacity", "100")
    assert p.returncode == 0 and "bloomkit: warning:" in p.stderr and "capacity (100)" in p.stderr
    assert len(p.stderr.splitlines()) == 1, p.stderr  # one warning, once
    fails("build", str(data / "words.txt"), "-o", str(tmp_path / "o2.bkf"), "--capacity", "100", "--strict",
          match="--strict")
    assert not (tmp_path / "o2.bkf").exists()


@once
def test_output_mmap_builds_into_the_file(data, tmp_path):
    """--output-mmap (issue 22): the filter is built in a mapped file beside the output and
    renamed onto it once sealed; the same filter as the in-memory build; on failure (here
    --strict) nothing is left, neither the output nor the partial file."""
    kind = "split-block"
    ok("build", str(data / "words.txt"), "-o", str(tmp_path / f"{kind}.bkf"), "--kind", kind)
    ok("build", str(data / "words.txt"), "-o", str(tmp_path / f"{kind}-m.bkf"), "--kind", kind, "--output-mmap")
    assert bloomkit.load(tmp_path / f"{kind}-m.bkf") == bloomkit.load(tmp_path / f"{kind}.bkf")
    assert bloomkit.verify(tmp_path / f"{kind}-m.bkf")["structure"] == "splitblock.SplitBlockBloomFilter"
    fails("build", str(data / "words.txt"), "-o", str(tmp_path / "s.bkf"), "--capacity", "100", "--strict",
          "--output-mmap", match="--strict")
    fails("build", str(data / "words.txt"), "-o", str(tmp_path / "f.bkf"), "--kind", "fuse", "--output-mmap",
          match="--output-mmap builds bloom")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["split-block-m.bkf", "split-block.bkf"]


@once
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
    fails("build", str(data / "words.txt"), "-o", str(tmp_path / "x.bkf"), "--fpr", "2", match="--fpr")
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


@once
def test_format_1_files_are_refused(tmp_path):
    raw = bytearray((Path(__file__).parent / "golden" / "v2" / "bloom.BloomFilter.bkf").read_bytes())
    raw[8:10] = (1).to_bytes(2, "little")  # the format version; then a valid checksum
    raw[-4:] = zlib.crc32(raw[:-4]).to_bytes(4, "little")
    (tmp_path / "v1.bkf").write_bytes(bytes(raw))
    fails("query", str(tmp_path / "v1.bkf"), "alpha", match="format version 1 is not read")


@once
def test_reproduce_one_experiment(tmp_path):
    ok("reproduce", "--quick", "--only", "base-fpr-grid", "--out", str(tmp_path))
    assert "base-fpr-grid" in (tmp_path / "report.md").read_text()
    assert (tmp_path / "base-fpr-grid.csv").read_text().startswith("n_over_m,k,")
    assert (tmp_path / "base-fpr-grid.png").stat().st_size > 1000
    fails("reproduce", "--only", "no-such-experiment", "--out", str(tmp_path), match="no-such-experiment")


@once
def test_registry():
    exps = all_experiments()
    ids = [e.id for e in exps]
    assert len(ids) == len(set(ids)) and "base-fpr-grid" in ids
    assert all(e.title and e.source for e in exps)
    assert select(["base"])[0].id == "base-fpr-grid"
    assert get_experiment("base-fpr-grid").run(quick=True).rows
    assert "base-fpr-grid" in ok("reproduce", "--list")


@once
def test_bench_command():
    out = ok("bench", "--keys", "2000")
    assert "numpy int64" in out and "list[str]" in out and "add ns/key" in out


def test_version_names_the_hash_path():
    out = ok("--version")
    assert out.startswith(f"bloomkit {bloomkit.__version__} (") and ("c-extension" in out or "numba" in out)


# ---------------------------------------------------------------------------------------------
# first contact (issue 25): input that is streamed, checked and typed; a fast start; messages


@once
def test_bad_numbers_are_errors(data, tmp_path):
    """--capacity 0 used to mean "the default"; every number is checked where it is parsed."""
    from bloomkit.cli import _parse

    for opt, value in (("--capacity", "0"), ("--fpr", "nan")):
        fails("build", str(data / "words.txt"), "-o", str(tmp_path / "x.bkf"), opt, value, match=f"argument {opt}")
    for opt, value in (("--capacity", "-5"), ("--fpr", "0"), ("--w", "-1"), ("--levels", "0"), ("--capacity", "1.5")):
        with pytest.raises(SystemExit):  # the same parser, in process
            _parse(["build", "x.txt", "-o", "x.bkf", opt, value])
    fails("bench", "--keys", "0", match="--keys")
    assert not (tmp_path / "x.bkf").exists()


@once
def test_key_type_of_a_one_column_csv(tmp_path):
    """--key-type is honoured without --column (was: the column's inferred type, silently)."""
    (tmp_path / "i.csv").write_text("k\n1\n2\n007\n")
    ok("build", str(tmp_path / "i.csv"), "-o", str(tmp_path / "s.bkf"), "--key-type", "str")
    f = bloomkit.load(tmp_path / "s.bkf")
    assert f.key_types == ("str",) and all(k in f for k in ("1", "2", "007"))
    (tmp_path / "mixed.csv").write_text("k\n1\n2\nabc\n")
    fails("build", str(tmp_path / "mixed.csv"), "-o", str(tmp_path / "m.bkf"), "--key-type", "int",
          match="invalid value 'abc'")
    assert not (tmp_path / "m.bkf").exists()


@once
def test_damaged_compressed_input_builds_nothing(data, tmp_path):
    """A truncated gzip file used to build from the part that decompressed and exit 0."""
    whole = gzip.compress((data / "words.txt").read_bytes())
    (tmp_path / "cut.txt.gz").write_bytes(whole[: len(whole) // 2])
    fails("build", str(tmp_path / "cut.txt.gz"), "-o", str(tmp_path / "x.bkf"), match="cut.txt.gz: the gzip data is truncated")
    flipped = bytearray(whole)
    flipped[len(whole) // 2] ^= 0xFF
    (tmp_path / "bad.txt.gz").write_bytes(bytes(flipped))
    fails("build", str(tmp_path / "bad.txt.gz"), "-o", str(tmp_path / "x.bkf"), match="bad.txt.gz: ")
    assert not (tmp_path / "x.bkf").exists()


@once
@pytest.mark.parametrize("codec", ["bz2", "xz"])
def test_damaged_bz2_xz_in_process(data, tmp_path, codec):
    import bz2
    import lzma

    from bloomkit._io import InputError, KeyInput

    whole = (bz2 if codec == "bz2" else lzma).compress((data / "words.txt").read_bytes())
    (tmp_path / f"w.txt.{codec}").write_bytes(whole)
    keys = [k for ch in KeyInput(str(tmp_path / f"w.txt.{codec}")).chunks() for k in ch.keys.to_pylist()]
    assert set(keys) == set((data / "words.txt").read_text(encoding="utf-8").split())
    (tmp_path / f"cut.txt.{codec}").write_bytes(whole[:-20])
    with pytest.raises(InputError, match=f"cut.txt.{codec}: .*(truncated|damaged)"):
        list(KeyInput(str(tmp_path / f"cut.txt.{codec}")).chunks())


@once
def test_fifos_and_devices_are_refused_stdin_is_not(tmp_path):
    """A FIFO with no writer used to wait forever; /dev/zero to grow until MemoryError."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    fails("build", str(fifo), "-o", str(tmp_path / "x.bkf"), match="is a FIFO (named pipe), not a regular file")
    fails("build", "/dev/urandom", "-o", str(tmp_path / "x.bkf"), match="is a device, not a regular file")
    fails("build", "/dev/urandom", "-o", str(tmp_path / "x.bkf"), match="- < /dev/urandom")
    fails("query", str(tmp_path / "x.bkf"), "--input", str(fifo), match="no such file")  # the filter first
    assert "FIFOs and devices are refused as INPUT" in " ".join(run("build", "--help").stdout.split())


# A launcher that forks and execs the command and reports its peak RSS: subprocess starts children
# with vfork, whose RSS high-water mark starts at the parent's (the test process's); a fork of
# this small launcher starts at the launcher's.
_LAUNCHER = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\n"
             "_, status, usage = os.wait4(pid, 0)\nsys.stderr.write(f'\\nPEAK-RSS-KB {usage.ru_maxrss}\\n')\n"
             "sys.exit(os.waitstatus_to_exitcode(status))\n")


def _peak_rss_mib(args: list[str], stdin: Any) -> tuple[int, str, float]:
    """(exit status, stderr, peak RSS of the bloomkit process in MiB)."""
    p = subprocess.run([sys.executable, "-c", _LAUNCHER, BLOOMKIT, *args], stdin=stdin, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=300)
    err, _, peak = p.stderr.decode().rstrip().rpartition("PEAK-RSS-KB ")
    return p.returncode, err.strip() + "\n", int(peak) / 1024


class _Zeros:
    """An endless stream of zero bytes (what /dev/zero gives) through a pipe."""

    def __enter__(self) -> Any:
        r, self.w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the writer: zeros until the reader goes away
            os.close(r)
            try:
                block = b"\0" * (1 << 16)
                while True:
                    os.write(self.w, block)
            finally:
                os._exit(0)
        os.close(self.w)
        self.r = os.fdopen(r, "rb")
        return self.r

    def __exit__(self, *exc: Any) -> None:
        self.r.close()
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)


@once
def test_endless_and_hostile_input_stays_small(tmp_path):
    """Endless zeros, /dev/urandom, an endless line and a gzip bomb as standard input: one
    error line each, a few seconds, peak RSS far below 300 MB (they grew to 2-3.3 GB)."""
    with _Zeros() as zeros:
        code, err, peak = _peak_rss_mib(["build", "-", "-o", str(tmp_path / "x.bkf")], zeros)
    assert code == 2 and "NUL byte" in err and peak < 300, (err, peak)
    bomb = tmp_path / "bomb.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        block = b"\0" * (1 << 20)
        for _ in range(256):  # 256 MiB of zeros in ~250 KB
            fh.write(block)
    cases = [("/dev/urandom", "(NUL byte|not valid UTF-8)"), (str(bomb), "NUL byte")]
    for src, match in cases:
        with open(src, "rb") as fh:
            code, err, peak = _peak_rss_mib(["build", "-", "-o", str(tmp_path / "x.bkf")], fh)
        assert code == 2 and re.search(match, err) and err.count("\n") == 1, (src, err)
        assert peak < 300, (src, peak)
    gen = subprocess.Popen(["sh", "-c", "yes same-key | head -n 1000000"], stdout=subprocess.PIPE)
    code, err, peak = _peak_rss_mib(["build", "-", "-o", str(tmp_path / "y.bkf")], gen.stdout)
    gen.wait()
    assert code == 0 and peak < 300, (err, peak)  # 9 MB of keys through a pipe, read twice (spooled)
    assert bloomkit.load(tmp_path / "y.bkf").capacity == 1
    line = tmp_path / "one-line.txt"
    line.write_bytes(b"a" * (17 << 20))  # no newline: one 17 MiB "key"
    code, err, peak = _peak_rss_mib(["build", str(line), "-o", str(tmp_path / "x.bkf")], subprocess.DEVNULL)
    assert code == 2 and "longer than 16 MiB" in err and peak < 300, (err, peak)


@once
def test_streamed_keys_match_an_exact_model(tmp_path):
    """Keys crossing chunk boundaries (more than CHUNK_BYTES of text, CRLF, empty lines, a BOM)
    through a pipe (spooled, read twice): every key of the exact model (a Python set) is in, the
    distinct count is exact, empty lines are counted; the same keys from xz'd TSV (read once,
    --capacity) give the same filter."""
    import lzma

    from bloomkit._io import CHUNK_BYTES

    rng = np.random.default_rng(7)
    keys = [f"key-{int(x)}-é" for x in rng.integers(0, 120_000, 180_000)]
    truth = set(keys)
    body = "\r\n".join(k if i % 1000 else k + "\r\n" for i, k in enumerate(keys)) + "\r\n"
    raw = b"\xef\xbb\xbf" + body.encode("utf-8")
    assert len(raw) > CHUNK_BYTES
    p = run("build", "-", "-o", str(tmp_path / "s.bkf"), "--json", stdin=raw, binary=True)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["rows"] == len(keys) and doc["distinct"] == len(truth) and doc["distinct_exact"]
    assert "skipped 180 empty line(s)" in p.stderr
    f = bloomkit.load(tmp_path / "s.bkf")
    assert f.contains_many(list(truth)).all() and f.key_types == ("str",)
    (tmp_path / "k.tsv.xz").write_bytes(lzma.compress(("k\tv\n" + "".join(f"{k}\t1\n" for k in keys)).encode()))
    ok("build", str(tmp_path / "k.tsv.xz"), "--column", "k", "-o", str(tmp_path / "t.bkf"), "--capacity",
       str(len(truth)))  # the same capacity: read once; the same filter
    assert bloomkit.load(tmp_path / "t.bkf") == f


@once
def test_inputs_in_process_against_an_exact_model(tmp_path):
    """KeyInput (the CLI's reader) on text, CSV, TSV, gzip and Parquet, in chunks smaller than
    the input: exactly the keys of the model, typed as asked, rows numbered across chunks."""
    import bloomkit._io as bio

    rng = np.random.default_rng(1)
    ints = rng.integers(-(2**62), 2**62, 5000)
    words = [f"w{i}" for i in range(5000)]
    (tmp_path / "i.txt").write_text("\n".join(map(str, ints)) + "\n")
    pacsv.write_csv(pa.table({"k": ints, "w": words}), tmp_path / "t.csv")
    (tmp_path / "t.tsv.gz").write_bytes(gzip.compress((tmp_path / "t.csv").read_text().replace(",", "\t").encode()))
    pq.write_table(pa.table({"k": ints, "w": words}), tmp_path / "t.parquet", row_group_size=700)
    old = bio.CHUNK_BYTES, bio.CHUNK_ROWS, bio.CSV_BLOCK_BYTES
    bio.CHUNK_BYTES, bio.CHUNK_ROWS, bio.CSV_BLOCK_BYTES = 4096, 999, 4096
    try:
        for path, column, kt in (("i.txt", None, "int"), ("t.csv", "k", None), ("t.tsv.gz", "k", None),
                                 ("t.parquet", "k", None), ("t.csv", "w", None), ("t.parquet", "k", "str")):
            with bio.KeyInput(str(tmp_path / path), passes=1) as inp:  # removes its temporary copy
                chunks = list(inp.chunks(column, [], kt))
            assert len(chunks) > 3 and [c.first_row for c in chunks] == list(np.cumsum([0] + [c.rows for c in chunks])[:-1])
            got = [k for c in chunks for k in (c.keys.tolist() if isinstance(c.keys, np.ndarray) else
                                               c.keys.to_pylist() if hasattr(c.keys, "to_pylist") else c.keys)]
            want = words if column == "w" else [str(x) for x in ints] if kt == "str" else ints.tolist()
            assert got == want, path
    finally:
        bio.CHUNK_BYTES, bio.CHUNK_ROWS, bio.CSV_BLOCK_BYTES = old


@once
def test_distinct_counter_exact_then_estimated():
    from bloomkit._io import DistinctCounter

    seen: set[int] = set()
    rng = np.random.default_rng(0)
    c = DistinctCounter(exact_limit=10_000)
    for _ in range(5):
        part = rng.integers(0, 8000, 3000).astype(np.uint64)
        seen |= set(part.tolist())
        c.add(part)
    assert c.count() == (len(seen), True) and c.capacity() == len(seen)
    big = DistinctCounter(exact_limit=1000)
    h = rng.integers(0, 2**64, 300_000, dtype=np.uint64)
    for part in np.array_split(np.concatenate([h, h[:100_000]]), 7):
        big.add(part)
    n, exact = big.count()
    assert not exact and abs(n - 300_000) < 4 * 0.0041 * 300_000  # 4 standard errors
    assert big.capacity() >= n


def test_query_of_one_key_starts_fast(tmp_path):
    """A one-key query of a Bloom, split-block or counting file imports neither numba, scipy
    nor pyarrow (the C extension answers); `import bloomkit` not even numpy."""
    if bloomkit.info()["hash_path"] != "c-extension":
        pytest.skip("the numba path loads numba for single keys too")
    for cls in (bloomkit.BloomFilter, bloomkit.SplitBlockBloomFilter, bloomkit.CountingBloomFilter):
        f = cls(capacity=1000, fpr=0.01)
        f.add_many(["alpha", "beta"])
        f.save(tmp_path / f"{cls.__name__}.bkf")
        p = subprocess.run([sys.executable, "-X", "importtime", "-m", "bloomkit", "query",
                            str(tmp_path / f"{cls.__name__}.bkf"), "alpha", "gamma"], capture_output=True, text=True)
        assert p.returncode == 0 and answers(p.stdout)["alpha"] == "maybe", p.stderr
        loaded = {ln.split("|")[-1].strip() for ln in p.stderr.splitlines() if ln.startswith("import time:")}
        assert not loaded & {"numba", "scipy", "pyarrow"}, (cls, sorted(loaded & {"numba", "scipy", "pyarrow"}))
    timing = json.loads(ok("info", str(tmp_path / "BloomFilter.bkf"), "--timing", "--json"))["timing"]
    assert timing["kernels_import_s"] > 0 and timing["first_batch_s"] >= timing["second_batch_s"]


@once
def test_progress_bar_on_a_terminal_and_a_summary(data, tmp_path):
    """Standard error a terminal (a pty here; BLOOMKIT_PROGRESS=1 skips the 2 s wait): a bar;
    a summary line on standard output in every case."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "BLOOMKIT_PROGRESS": "1"}
    p = subprocess.Popen([BLOOMKIT, "build", str(data / "words.txt"), "-o", str(tmp_path / "w.bkf")],
                         stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    out = p.communicate()[0].decode()
    os.close(master)
    assert p.returncode == 0
    assert b"building a BloomFilter" in err or b"counting the keys" in err, err[:500]
    assert out.startswith("BloomFilter: 3,100 rows (3,000 distinct) from ") and "predicted FPR" in out


@once
def test_messages_name_the_users_things(data, tmp_path):
    """Saving to a missing directory names the user's path (not `.f.bkf.<hex>.tmp`); `info`
    on a Parquet file points to `bloomkit parquet info`; --help explains every argument."""
    line = fails("build", str(data / "words.txt"), "-o", str(tmp_path / "no" / "dir" / "f.bkf"),
                 match="directory does not exist")
    assert str(tmp_path / "no" / "dir" / "f.bkf") in line and ".tmp" not in line
    fails("info", str(data / "t.parquet"), match=f"bloomkit parquet info {data / 't.parquet'}")
    from bloomkit.cli import _parser

    subs = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    helps = {cmd: " ".join(subs[cmd].format_help().split()) for cmd in ("query", "info", "bench", "serve")}
    helps["build"] = " ".join(run("build", "--help").stdout.split())  # and the command itself
    assert "a file written by bloomkit build" in helps["query"] and "Parquet files: bloomkit parquet info" in helps["info"]
    assert "hash seed" in helps["build"] and "keys added and queried" in helps["bench"]
    assert "the address to listen on" in helps["serve"] and "the TCP port" in helps["serve"]


@once
def test_reproduce_names_the_missing_extra(tmp_path):
    """Without the experiments extra (tabulate hidden here), reproduce says which extra to
    install, at once (it used to run 10 s and fail with "No module named 'tabulate'")."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\nclass _Hide:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'tabulate':\n            raise ModuleNotFoundError(\"No module named 'tabulate'\")\n"
        "sys.meta_path.insert(0, _Hide())\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    p = subprocess.run([BLOOMKIT, "reproduce", "--quick", "--only", "base-fpr-grid", "--out", str(tmp_path / "r")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 2 and "pip install -e '.[experiments]'" in p.stderr and "tabulate" in p.stderr, p.stderr
