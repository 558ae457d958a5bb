"""Parquet mode and bloomkit.parquet, proven against pyarrow itself: files written with
``bloom_filter_options`` for every physical type pyarrow writes filters for, several row groups,
with and without compression; bloomkit's bitset of a row group's values equals Arrow's byte for
byte. Plus the header reader on hostile bytes, wrong-typed values, datasets and the CLI."""

from __future__ import annotations

import datetime
import decimal
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import bloomkit
from bloomkit import (
    FormatError,
    IncompatibleFiltersError,
    InvalidParameterError,
    SplitBlockBloomFilter,
)
from bloomkit import parquet as P
from bloomkit.cli import main

S = SplitBlockBloomFilter
N, RG = 6000, 2000


def _table(n: int = N, seed: int = 5) -> pa.Table:
    rng = np.random.default_rng(seed)
    ints = rng.integers(-(2**62), 2**62, n)
    return pa.table({
        "i64": pa.array(ints), "i32": pa.array(ints.astype(np.int32)), "i8": pa.array(ints.astype(np.int8)),
        "u8": pa.array(ints.astype(np.uint8)), "u32": pa.array(ints.astype(np.uint32)),
        "u64": pa.array(ints.view(np.uint64)), "f32": pa.array(rng.standard_normal(n).astype(np.float32)),
        "f64": pa.array(rng.standard_normal(n)), "f16": pa.array(rng.standard_normal(n).astype(np.float16)),
        "str": pa.array([f"k{i}" for i in ints]), "large": pa.array([f"L{i}" for i in ints], pa.large_string()),
        "view": pa.array([f"v{i}" for i in ints], pa.string_view()),
        "bin": pa.array([bytes(rng.integers(0, 256, int(x), dtype=np.uint8)) for x in rng.integers(0, 12, n)]),
        "fixed": pa.array([int(i).to_bytes(8, "little", signed=True) for i in ints], pa.binary(8)),
        "dict": pa.array([f"d{i % 300}" for i in range(n)]).dictionary_encode(),
        "date": pa.array(rng.integers(0, 30000, n, dtype=np.int32), pa.date32()),
        "date64": pa.array(rng.integers(0, 30000, n) * 86_400_000, pa.date64()),
        "ts_ns": pa.array(ints, pa.timestamp("ns")), "ts_us": pa.array(ints >> 10, pa.timestamp("us", tz="UTC")),
        "time": pa.array(rng.integers(0, 86_400_000, n, dtype=np.int32), pa.time32("ms")),
        "dur": pa.array(ints, pa.duration("us")),
        "dec": pa.array([decimal.Decimal(int(i % 10**11)) / 100 for i in ints], pa.decimal128(12, 2)),
        "dec38": pa.array([decimal.Decimal(int(i)) for i in ints], pa.decimal128(38, 0)),
    })


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    out = {}
    t = _table()
    base = tmp_path_factory.mktemp("pq")
    for comp in ("snappy", "none"):
        for ndv, fpp in ((1000, 0.01), (100_000, 0.05)):
            path = base / f"t-{comp}-{ndv}.parquet"
            pq.write_table(t, path, row_group_size=RG, compression=comp,
                           bloom_filter_options={c: {"ndv": ndv, "fpp": fpp} for c in t.column_names})
            out[(comp, ndv, fpp)] = path
    return t, out


def test_bitsets_equal_arrows_byte_for_byte(files):
    t, paths = files
    checked = set()
    for (_comp, ndv, fpp), path in paths.items():
        md = pq.ParquetFile(path).metadata
        assert md.num_row_groups == N // RG
        for c in t.column_names:
            filters = P.read_bloom_filters(path, c)
            assert len(filters) == md.num_row_groups and all(f is not None for f in filters)
            col = P._column(pq.ParquetFile(path), c, path, "test")
            for rg, arrow in enumerate(filters):
                vals = t.column(c).slice(rg * RG, RG)
                # the same values hashed by their type, at Arrow's size; and sized as Arrow sizes
                ours = S.from_parquet_values(vals, physical_type=col.physical_type, type_length=col.type_length,
                                             num_bytes=arrow.size_in_bits // 8)
                sized = S.from_parquet_values(vals, physical_type=col.physical_type, type_length=col.type_length,
                                              ndv=ndv, fpp=fpp)
                assert ours.to_parquet_bitset() == arrow.to_parquet_bitset(), (c, rg)
                assert sized.to_parquet_bitset() == arrow.to_parquet_bitset(), (c, rg, ndv)
                assert ours == arrow and arrow.physical_type == col.physical_type
            checked.add(col.physical_type)
            hits = P.row_groups_may_contain(path, c, t.column(c))
            assert hits.shape == (N // RG, N) and hits[np.arange(N) // RG, np.arange(N)].all()
    assert checked == set(P.PHYSICAL_TYPES)


def test_header_bytes_and_sizes_are_arrows(files):
    _t, paths = files
    path = paths[("none", 1000, 0.01)]
    md = pq.ParquetFile(path).metadata
    raw = path.read_bytes()
    cc = md.row_group(1).column(0)
    blob = raw[cc.bloom_filter_offset: cc.bloom_filter_offset + cc.bloom_filter_length]
    f = P.parse_bloom_filter(blob, physical_type="INT64")
    assert P.serialize_bloom_filter(f) == blob
    assert blob.startswith(P.bloom_filter_header(f.size_in_bits // 8))
    assert P.optimal_num_bytes(1000, 0.01) == 2048 and P.optimal_num_bytes(0, 0.5) == 32
    assert P.optimal_num_bytes(2**32 - 1, 1e-9) == P.MAX_BLOOM_FILTER_BYTES


def test_absent_values_are_mostly_pruned(files):
    t, paths = files
    path = paths[("snappy", 100_000, 0.05)]
    absent = np.arange(10**6, 10**6 + 5000, dtype=np.int64)
    hits = P.row_groups_may_contain(path, "i64", absent)
    rates = np.array([f.predicted_fpr() for f in P.read_bloom_filters(path, "i64")])
    assert rates.max() <= 0.05  # Arrow folds to the fpp asked for, no further
    sd = np.sqrt((rates * (1 - rates)).sum()) / hits.size ** 0.5 * np.sqrt(len(rates))
    assert abs(hits.mean(axis=1) - rates).max() <= 5 * np.sqrt(rates.max() / absent.size) + 1e-3 and sd > 0
    assert P.row_groups_may_contain(path, "str", ["nope", "k0"]).shape == (3, 2)
    present = t.column("i64").to_numpy()[[5, RG + 5, 2 * RG + 5]]
    hits = P.row_groups_may_contain(path, "i64", present.tolist())
    assert hits[0, 0] and hits[1, 1] and hits[2, 2]


def test_values_are_converted_by_the_columns_type(files):
    t, paths = files
    path = paths[("snappy", 1000, 0.01)]
    row = {c: t.column(c)[RG + 3].as_py() for c in t.column_names}  # row group 1
    for c, v in row.items():
        assert P.row_groups_may_contain(path, c, [v])[1, 0], c
    # numpy, pandas (shuffled index: by position), pyarrow, polars-free plain ints
    i64 = t.column("i64").to_numpy()[RG: RG + 10]
    assert P.row_groups_may_contain(path, "i64", pd.Series(i64, index=np.arange(10)[::-1]))[1].all()
    assert P.row_groups_may_contain(path, "u8", np.array([row["u8"]], dtype=np.int64))[1, 0]
    assert P.row_groups_may_contain(path, "u32", [row["u32"]])[1, 0] and row["u32"] >= 0
    assert P.row_groups_may_contain(path, "f32", [float(row["f32"])])[1, 0]  # rounded to float32
    assert P.row_groups_may_contain(path, "date", [row["date"]])[1, 0]
    assert isinstance(row["date"], datetime.date)
    assert P.row_groups_may_contain(path, "dec", [row["dec"]])[1, 0]
    assert P.row_groups_may_contain(path, "fixed", [row["fixed"]])[1, 0]
    assert P.row_groups_may_contain(path, "dict", ["d5"])[0, 0]
    ts = t.column("ts_ns").to_pandas().iloc[RG: RG + 5]  # pandas timestamps, numpy datetime64
    assert P.row_groups_may_contain(path, "ts_ns", ts.set_axis(np.arange(5)[::-1]))[1].all()
    assert P.row_groups_may_contain(path, "ts_ns", ts.to_numpy())[1].all()
    with pytest.raises(InvalidParameterError, match="null"):
        P.row_groups_may_contain(path, "ts_ns", np.array(["NaT"], dtype="datetime64[ns]"))


@pytest.mark.parametrize(
    ("column", "values", "match"),
    [
        ("i64", ["12"], "i64|type"), ("i64", [1.5], "type"), ("i64", [True], "type"), ("i64", [None], "null"),
        ("i64", np.array(["a"]), "type"), ("str", [5], "type"), ("str", pa.array([1, 2]), "type"),
        ("u8", [300], "range|convert"), ("i32", [2**40], "range|convert"), ("fixed", [b"short"], "8 bytes|convert"),
        ("f64", ["x"], "type"), ("i64", pa.array([1, None]), "null"), ("nope", [1], "'column'"),
        ("i64", "abc", "single"),
    ],
)
def test_wrong_values_get_clear_errors(files, column, values, match):
    _t, paths = files
    with pytest.raises(InvalidParameterError, match=match):
        P.row_groups_may_contain(paths[("snappy", 1000, 0.01)], column, values)


def test_row_groups_without_filters_and_files_without(tmp_path):
    t = pa.table({"a": pa.array(np.arange(3000)), "b": pa.array(np.arange(3000) * 2)})
    path = tmp_path / "x.parquet"
    pq.write_table(t, path, row_group_size=1000, bloom_filter_options={"a": True})
    assert P.read_bloom_filters(path, "b") == [None, None, None]
    assert P.row_groups_may_contain(path, "b", [1, 2]).all()  # no filter: may contain
    assert [f.size_in_bits for f in P.read_bloom_filters(path, "a")] == [P.read_bloom_filters(path, "a")[0].size_in_bits] * 3
    with open(path, "rb") as fh:  # a file object works too
        hits = P.row_groups_may_contain(fh, "a", [5, 1500])
        assert not fh.closed  # the caller's file stays open
    assert hits[0, 0] and hits[1, 1]
    (tmp_path / "bad.parquet").write_bytes(b"PAR1junk")
    with pytest.raises(FormatError, match="not a readable Parquet"):
        P.read_bloom_filters(tmp_path / "bad.parquet", "a")
    raw = path.read_bytes()
    (tmp_path / "cut.parquet").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(FormatError):
        P.read_bloom_filters(tmp_path / "cut.parquet", "a")


def test_damaged_filter_bytes_in_a_file(tmp_path):
    t = pa.table({"a": pa.array(np.arange(4000))})
    path = tmp_path / "x.parquet"
    pq.write_table(t, path, row_group_size=2000, bloom_filter_options={"a": {"ndv": 2000, "fpp": 0.01}})
    cc = pq.ParquetFile(path).metadata.row_group(1).column(0)
    raw = bytearray(path.read_bytes())
    for pos, byte in ((cc.bloom_filter_offset, 0x00), (cc.bloom_filter_offset + 1, 0xFF),
                      (cc.bloom_filter_offset + 4, 0x0C)):
        bad = bytearray(raw)
        bad[pos] = byte
        (tmp_path / "bad.parquet").write_bytes(bytes(bad))
        with pytest.raises(FormatError, match="row group 1"):
            P.read_bloom_filters(tmp_path / "bad.parquet", "a")


def test_filter_locations_outside_the_file_are_refused():
    class CC:
        def __init__(self, off, length):
            self.bloom_filter_offset, self.bloom_filter_length = off, length

    class MD:
        def __init__(self, cc):
            self.cc = cc

        def row_group(self, i):
            return self

        def column(self, i):
            return self.cc

    import io

    blob = P.bloom_filter_header(32) + bytes(32)
    fh = io.BytesIO(b"x" * 10 + blob)
    for off, length, match in ((-1, 47, "outside"), (10**9, 47, "outside"), (10, 10**6, "runs past"),
                               (10, 0, "runs past"), (10, 40, "follow"), (30, None, "truncated|Thrift|numBytes|twice|past")):
        col = P._Column("a", MD(CC(off, length)), 0, "INT64", None, None)
        with pytest.raises(FormatError, match=match):
            P._FilterReader(fh, len(fh.getvalue())).read(col, 0)
    col = P._Column("a", MD(CC(10, None)), 0, "INT64", None, None)  # no length: header, then the bitset
    got = P._FilterReader(fh, len(fh.getvalue())).read(col, 0)
    assert got == S.for_parquet(physical_type="INT64", num_bytes=32)


def test_every_truncation_and_header_flip_is_refused():
    f = S.from_parquet_values([1, 2, 3], physical_type="INT64", num_bytes=64)
    blob = P.serialize_bloom_filter(f)
    header = len(blob) - 64
    for cut in range(len(blob)):
        with pytest.raises(FormatError):
            P.parse_bloom_filter(blob[:cut], physical_type="INT64")
    for i in range(header):
        for mask in (0xFF, 0x01, 0x80, 0x10):
            bad = bytearray(blob)
            bad[i] ^= mask
            with pytest.raises(FormatError):
                P.parse_bloom_filter(bytes(bad), physical_type="INT64")
    with pytest.raises(FormatError, match="follow"):
        P.parse_bloom_filter(blob + b"\0", physical_type="INT64")
    assert P.parse_bloom_filter(blob, physical_type="INT64") == f


@pytest.mark.parametrize(
    ("blob", "match"),
    [
        (b"\x15" + b"\x80" * 11, "varint"),
        (b"\x15\x40" + b"\x1c" * 5000, "deeper"),
        (b"\x19\xf0\xff\xff\xff\x0f", "past the end"),
        (b"\x18\xff\xff\xff\xff\x0f", "past the end"),
        (b"\x1b\xff\xff\xff\x0f", "past the end"),
        (b"\x1d\x00", "unknown Thrift type"),
        (b"\x15\x40\x05\x02\x40\x00", "twice"),
        (b"\x15\x02\x1c\x1c\x00\x00\x1c\x1c\x00\x00\x1c\x1c\x00\x00\x00" + bytes(32), "32-byte"),
        (b"\x15\x41\x1c\x1c\x00\x00\x1c\x1c\x00\x00\x1c\x1c\x00\x00\x00", "positive"),
        (b"\x15\x40\x1c\x2c\x00\x00\x1c\x1c\x00\x00\x1c\x1c\x00\x00\x00" + bytes(32), "algorithm"),
        (b"\x15\x40\x1c\x1c\x00\x00\x1c\x1c\x15\x02\x00\x00\x1c\x1c\x00\x00\x00" + bytes(32), "hash"),
        (b"\x15\x40\x1c\x1c\x00\x00\x1c\x1c\x00\x00\x00" + bytes(32), "compression"),
        (b"\x16\x40" + bytes(32), "numBytes"),
        (b"\x15\xff\xff\xff\xff\x1f", "32 bits"),
        (b"\x05\x80\xf1\x04\x00", "does not fit 16 bits"),
    ],
)
def test_hostile_headers(blob, match):
    with pytest.raises(FormatError, match=match):
        P.parse_bloom_filter(blob, physical_type="INT64")


def test_parquet_mode_filters():
    f = S.for_parquet(physical_type="BYTE_ARRAY", num_bytes=1024)
    f.add("alice")
    f.add_many([b"bob", "carol"])
    assert "alice" in f and b"alice" in f and f.contains_many(["bob", "carol", "dave"]).tolist()[:2] == [True, True]
    assert set(f.key_types) == {"str", "bytes"} and f.mode == "parquet" and f.seed == 0 and f.block_bits == 256
    g = bloomkit.loads(f.to_bytes())
    assert g == f and g.physical_type == "BYTE_ARRAY"
    assert S.from_parquet_bitset(f.to_parquet_bitset(), physical_type="BYTE_ARRAY") == f
    # folding merges adjacent blocks: equals the filter built at the smaller size
    vals = np.arange(3000, dtype=np.int64)
    big = S.from_parquet_values(vals, physical_type="INT64", num_bytes=32 * 96)
    for d in (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96):
        assert big.folded(d) == S.from_parquet_values(vals, physical_type="INT64", num_bytes=32 * 96 // d)
    # a filter shrinks to Arrow's size; an empty one to one block
    empty = S.for_parquet(physical_type="INT32", ndv=1000, fpp=0.01)
    empty.shrink_to_fpp(0.01)
    assert empty.num_blocks == 1 and empty.to_parquet_bitset() == bytes(32)
    with pytest.raises(IncompatibleFiltersError):
        _ = big | S.from_parquet_values(vals, physical_type="DOUBLE", num_bytes=32 * 96)
    with pytest.raises(IncompatibleFiltersError):
        _ = big | S(num_blocks=48)
    assert big.predicted_fpr(3000) == pytest.approx(bloomkit.splitblock.split_block_fpr(3000, 96, lane_bits=32))
    info = big.info()
    json.dumps(info)
    assert info["physical_type"] == "INT64" and info["mode"] == "parquet"
    assert "physical_type='INT64'" in repr(big)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"physical_type": "INT96", "num_bytes": 32}, "'physical_type'"),
        ({"physical_type": "BOOLEAN", "num_bytes": 32}, "'physical_type'"),
        ({"physical_type": "INT64", "num_bytes": 33}, "multiple of 32"),
        ({"physical_type": "INT64", "num_bytes": 0}, "'num_bytes'"),
        ({"physical_type": "INT64", "num_bytes": 64, "ndv": 5}, "not both"),
        ({"physical_type": "INT64", "ndv": -1}, "'ndv'"),
        ({"physical_type": "INT64", "fpp": 1.0}, "'fpp'"),
        ({"physical_type": "FIXED_LEN_BYTE_ARRAY", "num_bytes": 32}, "'type_length'"),
        ({"physical_type": "INT64", "num_bytes": 32, "type_length": 4}, "'type_length'"),
        ({"physical_type": "FIXED_LEN_BYTE_ARRAY", "num_bytes": 32, "type_length": 0}, "'type_length'"),
    ],
)
def test_bad_parquet_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        S.for_parquet(**kwargs)


def test_from_parquet_bitset_refuses_bad_lengths():
    for bad in (b"", bytes(31), bytes(33)):
        with pytest.raises(FormatError):
            S.from_parquet_bitset(bad, physical_type="INT64")


def test_plain_hashes_are_xxh64_of_the_plain_encoding():
    import struct

    import xxhash

    cases = [("INT32", [-7, 2**31 - 1], lambda v: struct.pack("<i", v)),
             ("INT64", [-(2**63), 42], lambda v: struct.pack("<q", v)),
             ("FLOAT", [1.5, -0.0], lambda v: struct.pack("<f", v)),
             ("DOUBLE", [0.1, float("inf")], lambda v: struct.pack("<d", v)),
             ("BYTE_ARRAY", ["é", b"", b"xyz"], lambda v: v.encode() if isinstance(v, str) else v)]
    for ptype, vals, enc in cases:
        h, _tags = P.plain_hashes(vals, ptype)
        assert h.tolist() == [xxhash.xxh64_intdigest(enc(v), 0) for v in vals], ptype
    h, _ = P.plain_hashes([b"abcd"], "FIXED_LEN_BYTE_ARRAY", 4)
    assert h[0] == xxhash.xxh64_intdigest(b"abcd", 0)


def test_datasets_and_files_to_read(tmp_path):
    for i in range(3):
        t = pa.table({"id": pa.array(np.arange(i * 3000, (i + 1) * 3000)), "s": [f"x{j}" for j in range(3000)]})
        pq.write_table(t, tmp_path / f"part-{i}.parquet", row_group_size=1000,
                       bloom_filter_options={"id": {"ndv": 1000, "fpp": 0.001}})
    (tmp_path / "_SUCCESS").write_bytes(b"")
    got = P.dataset_may_contain(tmp_path, "id", [10, 4500, 10**9])
    assert list(got) == sorted(str(p) for p in tmp_path.glob("*.parquet"))
    assert all(v.shape == (3, 3) for v in got.values())
    want = {str(tmp_path / "part-0.parquet"): [0], str(tmp_path / "part-1.parquet"): [1]}
    assert P.files_to_read(tmp_path, "id", [10, 4500]) == want
    assert P.files_to_read(ds.dataset(tmp_path, format="parquet"), "id", [10, 4500]) == want
    assert P.files_to_read([tmp_path / "part-2.parquet"], "id", [10]) == {}
    assert P.files_to_read(tmp_path, "id", []) == {}
    with pytest.raises(InvalidParameterError, match="'source'"):
        P.files_to_read(5, "id", [1])


def test_cli_probe_and_info(files, tmp_path, capsys):
    t, paths = files
    path = str(paths[("snappy", 1000, 0.01)])
    i64 = t.column("i64")[RG + 1].as_py()
    assert main(["parquet", "probe", path, "--column", "i64", str(i64), "123"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(f"{i64}\trow groups: 1") and lines[1].endswith("123\trow groups: none")
    day = t.column("date")[5].as_py().isoformat()
    assert main(["parquet", "probe", path, "--column", "date", day, "--json"]) == 0
    assert 0 in json.loads(capsys.readouterr().out)[path][day]
    fixed = t.column("fixed")[0].as_py().hex()
    assert main(["parquet", "probe", path, "--column", "fixed", "--hex", fixed]) == 0
    assert capsys.readouterr().out.strip().endswith("row groups: 0")
    assert main(["parquet", "info", path]) == 0
    out = capsys.readouterr().out
    assert "column i64 (INT64)" in out and "row group 2" in out
    assert main(["parquet", "info", path, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["row_groups"] == 3 and info["columns"]["str"]["filters"][0]["num_bytes"] > 0
    for argv, match in ((["parquet", "probe", path, "--column", "nope", "1"], "nope"),
                        (["parquet", "probe", path, "--column", "i64", "abc"], "int64"),
                        (["parquet", "probe", path, "--column", "fixed", "--hex", "zz"], "hex"),
                        (["parquet", "info", str(tmp_path / "missing.parquet")], "missing"),
                        (["parquet", "probe", __file__, "--column", "a", "1"], "Parquet")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("bloomkit: error:") and match in err and "Traceback" not in err



def test_the_library_module_prints_nothing():
    """The command line's printing lives in bloomkit._parquet_commands (issue 21): bloomkit.parquet
    reads and answers, and neither prints nor names sys.stdout / sys.stderr."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(P))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert "print" not in names and not {"stdout", "stderr"} & attrs
    assert not [n for n in dir(P) if n.startswith("cli_") or n == "parse_cli_values"]

def test_pandas_workflow_against_an_exact_model(tmp_path):
    """A DataFrame with a shuffled index, written with Bloom filters; every stored key's row
    group may contain it (zero false negatives), against a Python dict of key -> row group."""
    rng = np.random.default_rng(11)
    keys = rng.choice(10**9, 9000, replace=False)
    df = pd.DataFrame({"user": keys, "name": [f"u{k}" for k in keys]}, index=rng.permutation(9000))
    path = tmp_path / "users.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=3000,
                   bloom_filter_options={"user": {"ndv": 3000, "fpp": 0.01}, "name": True})
    truth = {int(k): i // 3000 for i, k in enumerate(keys)}
    probe = df["user"].sample(500, random_state=1)  # a Series with a shuffled index
    hits = P.row_groups_may_contain(path, "user", probe)
    for j, k in enumerate(probe.to_numpy()):
        assert hits[truth[int(k)], j]
    names = P.row_groups_may_contain(path, "name", df["name"].iloc[:100])
    assert names[0].all()
    wrong = hits.sum() - len(probe)
    assert wrong <= 0.05 * 2 * len(probe)


# ---------------------------------------------------------------------------------------------
# hostile footers (issue 25): shared and overlapping filter offsets; what probe did not test


def _patched(src, dst, offset_of) -> None:
    """A copy of the pyarrow-written file ``src`` whose row group i's bloom_filter_offset
    (Thrift compact i64: zigzag varint) says ``offset_of(i, old)`` (same varint length)."""
    import struct

    raw = bytearray(src.read_bytes())
    flen = struct.unpack("<I", raw[-8:-4])[0]
    start = len(raw) - 8 - flen
    md = pq.ParquetFile(src).metadata
    for i in range(md.num_row_groups):
        old = md.row_group(i).column(0).bloom_filter_offset
        a, b = P._varint(old << 1), P._varint(offset_of(i, old) << 1)  # zigzag of a non-negative i64
        assert len(a) == len(b) and bytes(raw[start:]).count(a) == 1
        at = start + bytes(raw[start:]).index(a)
        raw[at : at + len(a)] = b
    dst.write_bytes(bytes(raw))


class _Counting:
    """A binary file that counts the bytes read through it."""

    def __init__(self, path) -> None:
        self.fh, self.bytes_read = open(path, "rb"), 0  # noqa: SIM115

    def read(self, n=-1):
        data = self.fh.read(n)
        self.bytes_read += len(data)
        return data

    def __getattr__(self, name):
        return getattr(self.fh, name)


def test_a_filter_shared_by_every_row_group_is_read_once(tmp_path):
    """128 row groups whose metadata all point at one Bloom filter (the issue's case, at 1 KiB
    instead of 8 MiB): read and parsed once (one object), the bytes read bounded by one filter
    plus the footer (not 128 copies), probes answer as that filter does."""
    t = pa.table({"a": np.arange(128 * 500, dtype=np.int32)})  # small pages: every offset below 1 MiB
    pq.write_table(t, tmp_path / "rg.parquet", row_group_size=500, bloom_filter_options={"a": {"ndv": 500, "fpp": 0.01}})
    first = pq.ParquetFile(tmp_path / "rg.parquet").metadata.row_group(0).column(0).bloom_filter_offset
    _patched(tmp_path / "rg.parquet", tmp_path / "shared.parquet", lambda i, old: first)
    size = (tmp_path / "shared.parquet").stat().st_size
    fh = _Counting(tmp_path / "shared.parquet")
    filters = P.read_bloom_filters(fh, "a")
    one = filters[0].size_in_bits // 8
    assert len(filters) == 128 and len({id(f) for f in filters}) == 1 and one >= 512
    footer = pq.ParquetFile(tmp_path / "shared.parquet").metadata.serialized_size
    assert size > 128 * one and fh.bytes_read < one + 2 * footer + 64 * 1024 < 128 * one, (fh.bytes_read, footer)
    hits = P.row_groups_may_contain(tmp_path / "shared.parquet", "a", [0, 499, 10**9])
    assert hits[:, 0].all() and hits[:, 1].all()  # row group 0's values, answered by every row group
    assert len(set(hits[:, 2].tolist())) == 1  # one filter: one answer for all


def test_overlapping_filter_offsets_are_refused(tmp_path):
    """Offsets that make distinct filters overlap (so that reading each would read the same
    bytes again and again) raise FormatError naming the column and row group."""
    t = pa.table({"a": np.arange(8 * 50, dtype=np.int64)})
    pq.write_table(t, tmp_path / "rg.parquet", row_group_size=50, bloom_filter_options={"a": {"ndv": 50, "fpp": 0.01}})
    first = pq.ParquetFile(tmp_path / "rg.parquet").metadata.row_group(0).column(0).bloom_filter_offset
    _patched(tmp_path / "rg.parquet", tmp_path / "overlap.parquet", lambda i, old: first + 32 * (i % 2))
    with pytest.raises(FormatError, match="row group 1: .* overlap another Bloom filter"):
        P.read_bloom_filters(tmp_path / "overlap.parquet", "a")
    assert main(["parquet", "probe", str(tmp_path / "overlap.parquet"), "--column", "a", "1"]) == 2


def test_probe_says_what_it_did_not_test(tmp_path, capsys):
    """A column without Bloom filters: probe still answers "every row group" but says that
    nothing was tested; a directory mixing files with and without filters says which."""
    t = pa.table({"a": np.arange(300, dtype=np.int64), "b": np.arange(300, dtype=np.int64)})
    (tmp_path / "d").mkdir()
    pq.write_table(t, tmp_path / "d" / "with.parquet", row_group_size=100, bloom_filter_options={"a": True, "b": True})
    pq.write_table(t, tmp_path / "d" / "without.parquet", row_group_size=100)
    assert main(["parquet", "probe", str(tmp_path / "d" / "without.parquet"), "--column", "a", "5"]) == 0
    cap = capsys.readouterr()
    assert "row groups: 0, 1, 2 (not tested: 0-2: no Bloom filter)" in cap.out
    assert "bloomkit: warning:" in cap.err and "nothing was tested" in cap.err
    assert main(["parquet", "probe", str(tmp_path / "d"), "--column", "a", "5", "--json"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc[str(tmp_path / "d" / "with.parquet")]["5"] == [0] and len(doc) == 2
    assert cap.err.count("bloomkit: warning:") == 1 and "without.parquet" in cap.err
    (tmp_path / "empty").mkdir()
    assert main(["parquet", "probe", str(tmp_path / "empty"), "--column", "a", "5"]) == 2
    assert "holds no Parquet files" in capsys.readouterr().err
