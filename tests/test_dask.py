"""bloomkit.dask on a real distributed.LocalCluster of worker *processes* (issue 15).

One cluster (2 worker processes, 1 thread each) serves the whole module (a session fixture);
data are small so the module stays well under a minute on 2 cores. Every distributed result is
compared with the structure built in one process from the same keys (``==`` and the bytes),
or with an exact model (Python sets) for joins.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import dask.bag as db  # noqa: E402

import bloomkit  # noqa: E402
from bloomkit import BloomFilter, CountingBloomFilter, ScalableBloomFilter  # noqa: E402
from bloomkit._format import registered_structures  # noqa: E402
from bloomkit.dask import (  # noqa: E402
    ShardedLookupTable,
    bloom_filter,
    capacity_for,
    contains,
    distinct_count,
    hll_estimate,
    lookup_table,
    semi_join,
)
from bloomkit.errors import FormatError, IncompatibleFiltersError, InvalidParameterError  # noqa: E402
from bloomkit.folding import FoldableBloomFilter  # noqa: E402
from bloomkit.multiattr import ParallelBloomFilter  # noqa: E402
from bloomkit.similarity import MLBF  # noqa: E402

RNG = np.random.default_rng(15)
KEYS = [f"key-{i}" for i in RNG.integers(0, 4000, 6000)]  # about 3,100 distinct, with repeats
DISTINCT = len(set(KEYS))
CAP = 4000
KIND_CLASSES = {"bloom": BloomFilter, "counting": CountingBloomFilter, "foldable": FoldableBloomFilter,
                "scalable": ScalableBloomFilter}


@pytest.fixture(scope="session")
def client():
    """A LocalCluster of two worker processes, started once for the whole run."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _local(kind: str, keys, capacity: int = CAP, fpr: float = 0.01, seed: int = 0):
    f = KIND_CLASSES[kind].for_requirements(capacity, fpr, seed=seed)
    f.add_many(keys)
    return f


def _series_partitionings(keys: list[str]) -> dict[str, object]:
    """The same keys cut in several ways: one partition, several, empty ones, shuffled indexes."""
    n = len(keys)
    s = pd.Series(keys, index=RNG.permutation(n) * 3 + 7, dtype=object)
    cuts = [0, 0, 100, 100, 2500, n, n]  # empty first, middle and last partitions
    pieces = [pd.Series(keys[a:b], index=np.arange(a, b)[::-1], dtype="string") for a, b in zip(cuts, cuts[1:], strict=False)]
    return {
        "one partition": dd.from_pandas(s, npartitions=1, sort=False),
        "seven partitions, shuffled index": dd.from_pandas(s, npartitions=7, sort=False),
        "empty partitions, reversed indexes": dd.from_delayed([dask.delayed(p) for p in pieces],
                                                              meta=pd.Series(dtype="string")),
    }


def test_the_workers_are_processes(client):
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids


@pytest.mark.parametrize("kind", sorted(KIND_CLASSES))
def test_filter_equals_the_one_process_build_for_any_partitioning(client, kind):
    want = _local(kind, KEYS)
    for name, column in _series_partitionings(KEYS).items():
        got = bloom_filter(column, CAP, 0.01, kind=kind)
        assert got == want, name
        assert got.to_bytes() == want.to_bytes(), name


@pytest.mark.parametrize("kind", ["bloom", "counting"])
def test_the_merged_filter_written_into_a_mapped_file(client, kind, tmp_path, monkeypatch):
    """output= (issue 22): the last level of the tree OR-ed into a file made by create, one
    partial filter at a time; the file holds the one-process filter, sealed and mapped back."""
    import bloomkit.dask._build as build

    want = _local(kind, KEYS)
    columns = dict(list(_series_partitionings(KEYS).items())[:2])  # every partitioning: the test above
    for i, (name, column) in enumerate(columns.items()):
        out = tmp_path / f"{i}.bkf"
        with bloom_filter(column, CAP, 0.01, kind=kind, output=out, split_every=2) as got:
            assert got == want and got.to_bytes() == want.to_bytes(), name
        assert bloomkit.verify(out)["structure"] == want._STRUCTURE
        if i == 0:  # dask's own scheduler (no distributed client): the partials one at a time
            monkeypatch.setattr(build, "_client", lambda: None)
            with bloom_filter(column, CAP, 0.01, kind=kind, output=out) as again:
                assert again == want
            monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{i}.bkf" for i in range(len(columns))]
    column = next(iter(columns.values()))
    for bad in ({"kind": "scalable"}, {"like": bloomkit.BloomFilter(100, 0.01)}):
        with pytest.raises(InvalidParameterError, match="'output' parameter"):
            bloom_filter(column, **bad, output=tmp_path / "x.bkf")
    with pytest.raises(InvalidParameterError, match="must name a file"):
        bloom_filter(column, CAP, output=tmp_path)
    assert not (tmp_path / "x.bkf").exists()


@pytest.mark.parametrize("kind", ["bloom", "counting"])
def test_persisted_partitions_are_added_in_chains_per_worker(client, kind):
    """Persisted data: each worker thread adds its partitions one after the other (chains), and
    the result is still the one-process filter."""
    from bloomkit.dask._build import _chains

    column = dd.from_pandas(pd.Series(KEYS, index=RNG.permutation(len(KEYS))), npartitions=9, sort=False).persist()
    distributed.wait(column)
    chains = _chains(column)
    assert chains is not None and sorted(i for c in chains for i in c) == list(range(9))
    assert bloom_filter(column, CAP, 0.01, kind=kind).to_bytes() == _local(kind, KEYS).to_bytes()
    assert _chains(dd.from_pandas(pd.Series(KEYS), npartitions=3)) is None  # not in memory: the tree


def test_arrays_bags_and_seeds(client):
    want = _local("bloom", KEYS, seed=9)
    arr = da.from_array(np.array(KEYS), chunks=1000)
    assert bloom_filter(arr, CAP, seed=9).to_bytes() == want.to_bytes()
    bag = db.from_sequence(KEYS, npartitions=4)
    assert bloom_filter(bag, CAP, seed=9).to_bytes() == want.to_bytes()
    ints = da.arange(0, 5000, chunks=700)  # int keys: their own key type
    f = bloom_filter(ints, 5000, kind="counting", split_every=2)
    local = CountingBloomFilter.for_requirements(5000, 0.01)
    local.add_many(np.arange(5000))
    assert f.to_bytes() == local.to_bytes() and f.key_types == ("int",)


def test_capacity_none_estimates_the_distinct_keys(client):
    cols = list(_series_partitionings(KEYS).values())
    estimates = {distinct_count(c) for c in cols}
    assert len(estimates) == 1, "the merged registers do not depend on the partitioning"
    est = estimates.pop()
    assert abs(est - DISTINCT) <= 5 * 0.0081 * DISTINCT
    f = bloom_filter(cols[1])
    assert f.capacity == capacity_for(est) and f == _local("bloom", KEYS, capacity=f.capacity)


def test_hll_estimate_of_many_keys_lies_within_its_standard_error():
    from bloomkit.dask._build import _hll_part  # the partition kernel, without a cluster

    n = 200_000
    reg = _hll_part(np.arange(n), 3, 12, 0, "test")
    est = hll_estimate(reg)
    assert abs(est - n) <= 5 * 1.04 / 64 * n
    assert hll_estimate(np.zeros(4096, dtype=np.uint8)) == 0.0


def test_build_straight_from_read_parquet(client, tmp_path):
    ids = RNG.integers(-(1 << 40), 1 << 40, 5000)
    words = [f"w{i % 2900}" for i in range(5000)]
    table = pa.table({"id": ids, "word": words, "other": np.arange(5000)})
    for i in range(3):  # a dataset of three files, several row groups each
        pq.write_table(table.slice(i * 1700, 1700), tmp_path / f"part-{i}.parquet", row_group_size=400)
    frame = dd.read_parquet(tmp_path)
    f = bloom_filter(frame["word"], 3000)
    local = BloomFilter.for_requirements(3000, 0.01)
    local.add_many(pq.read_table(tmp_path).column("word"))
    assert f.to_bytes() == local.to_bytes()
    g = bloom_filter(frame["id"], 5000, kind="counting")
    local = CountingBloomFilter.for_requirements(5000, 0.01)
    local.add_many(ids)
    assert g.to_bytes() == local.to_bytes()


def test_contains_keeps_the_shape_and_index(client):
    f = _local("bloom", KEYS[:3000])
    probe = KEYS + [f"absent-{i}" for i in range(2000)]
    s = pd.Series(probe, index=RNG.permutation(len(probe)))
    got = contains(dd.from_pandas(s, npartitions=5, sort=False), f).compute()
    assert got.index.equals(s.index) and got.dtype == bool
    assert np.array_equal(got.to_numpy(), f.contains_many(probe))
    assert np.array_equal(contains(da.from_array(np.array(probe), chunks=900), f).compute(), f.contains_many(probe))
    assert contains(db.from_sequence(probe, npartitions=3), f).compute() == f.contains_many(probe).tolist()


def _frames():
    n = 12_000
    left = pd.DataFrame({"id": [f"u{i % 9000}" for i in range(n)], "x": np.arange(n)},
                        index=RNG.permutation(n) + 1_000_000)
    left.loc[left.index[::997], "id"] = None  # null keys never match
    right = pd.DataFrame({"id": [f"u{i}" for i in range(0, 6000, 3)] + [None, "u0"], "y": np.arange(2002)})
    return left, right


def test_semi_join_against_a_python_set(client):
    left, right = _frames()
    wanted = set(right["id"].dropna())
    truth = {int(x) for k, x in zip(left["id"], left["x"], strict=True) if k is not None and k in wanted}
    L, R = dd.from_pandas(left, npartitions=6, sort=False), dd.from_pandas(right, npartitions=2, sort=False)
    got = semi_join(L, R, "id").compute()
    kept = set(got["x"].tolist())
    assert truth <= kept, "a Bloom semi-join never drops a matching row"
    assert got["id"].notna().all() and list(got.columns) == ["id", "x"]
    assert got.index.isin(left.index).all() and (left.loc[got.index, "x"] == got["x"]).all()
    extra = len(kept - truth)
    assert extra <= 0.05 * (len(left) - len(truth))  # 1% expected
    exact = semi_join(L, R, "id", exact=True).compute()
    assert sorted(exact["x"].tolist()) == sorted(truth)


def test_pbf_answers_like_the_one_process_filter(client):
    n = 3000
    frame = pd.DataFrame({"src": [f"h{i % 50}" for i in range(n)], "dst": [f"h{i % 71}" for i in range(n)],
                          "port": RNG.integers(0, 100, n)}, index=RNG.permutation(n))
    f = bloom_filter(dd.from_pandas(frame, npartitions=4, sort=False), kind="pbf", fpr=0.01)
    local = ParallelBloomFilter.for_requirements(3, n, 0.01, attributes=["src", "dst", "port"])
    local.add_many(frame)
    probes = pd.DataFrame({"src": [f"h{i % 60}" for i in range(4000)], "dst": [f"h{i % 80}" for i in range(4000)],
                           "port": RNG.integers(0, 120, 4000)})
    assert f.capacity == n
    assert np.array_equal(f.contains_many(probes), local.contains_many(probes))
    assert np.array_equal(f.contains_many(frame), np.ones(n, dtype=bool))
    assert f.counter_state == "union"  # counter maxima (the document's union): no remove


def test_a_template_builds_any_mergeable_structure(client):
    X = RNG.uniform(1, 100, (3000, 8))
    like = MLBF(8, w=1.0, num_levels=3, and_width=4, or_count=5, num_bits=1 << 16, verify_bits=1 << 14,
                verify_hashes=3, seed=4, domain=(0, 101))
    got = bloom_filter(da.from_array(X, chunks=(700, 4)), like=like)
    local = like.copy()
    local.add_many(X)
    assert got.to_bytes() == local.to_bytes()
    sized = BloomFilter(num_bits=1 << 15, num_hashes=5, seed=2)
    got = bloom_filter(db.from_sequence(KEYS, npartitions=3), like=sized)
    assert got.to_bytes() == _local_keys(KEYS, sized).to_bytes() and len(sized) == 0
    growing = ScalableBloomFilter(500, 0.01, seed=3)  # sequential: partitions added in order
    got = bloom_filter(db.from_sequence(KEYS, npartitions=4), like=growing)
    assert got.to_bytes() == _local_keys(KEYS, growing).to_bytes() and got.num_slices > 1
    unfitted = MLBF(8, w=1.0, num_bits=1 << 16, verify_bits=1 << 14, seed=4)  # fitted per partition
    with pytest.raises(IncompatibleFiltersError):
        bloom_filter(da.from_array(X, chunks=(700, 8)), like=unfitted)


def _local_keys(keys, like):
    out = like.copy()
    out.add_many(keys)
    return out


def test_bad_inputs_are_named(client):
    s = dd.from_pandas(pd.Series(KEYS[:100]), npartitions=2)
    cases = [
        (lambda: bloom_filter(KEYS), "dask Series"),
        (lambda: bloom_filter(s, kind="nope"), "'kind'"),
        (lambda: bloom_filter(s, capacity=0), "'capacity'"),
        (lambda: bloom_filter(s, fpr=1.5), "'fpr'"),
        (lambda: bloom_filter(s, 100, split_every=1), "'split_every'"),
        (lambda: bloom_filter(s, kind="pbf"), "DataFrame"),
        (lambda: bloom_filter(s, like=_local("bloom", ["x"])), "must be empty"),
        (lambda: bloom_filter(s, 10, like=BloomFilter(10, 0.1)), "leave capacity"),
        (lambda: bloom_filter(da.zeros((2, 2, 2)), 10), "dimensions"),
        (lambda: contains(s, object()), "'filter'"),
        (lambda: semi_join(s, s, "id"), "'left'"),
        (lambda: distinct_count(s, precision=40), "'precision'"),
    ]
    for call, words in cases:
        with pytest.raises(InvalidParameterError, match=words):
            call()
    frame = dd.from_pandas(pd.DataFrame({"id": ["a"], "v": [1]}), npartitions=1)
    with pytest.raises(InvalidParameterError, match="'on'"):
        semi_join(frame, frame, "nope")
    nulls = dd.from_pandas(pd.Series(["a", "b", None, "c"], dtype=object), npartitions=2)
    with pytest.raises(InvalidParameterError, match=r"null.*partition 1"):
        bloom_filter(nulls, 10)


# -- filters between processes: container bytes, arrays out of band, damage detected --------------

def _receive(header, frames):
    from distributed.protocol import deserialize

    return deserialize(header, frames)


def test_a_worker_that_receives_a_damaged_filter_raises_format_error(client):
    from distributed.protocol import serialize

    f = _local("counting", KEYS)
    header, frames = serialize(f)
    assert header["serializer"] == "pickle" and len(frames) >= 2  # the counters travel as their own frame
    assert client.submit(_receive, header, frames).result().to_bytes() == f.to_bytes()
    for i in range(len(frames)):
        bad = [bytearray(memoryview(x).cast("B")) for x in frames]
        bad[i][len(bad[i]) // 2] ^= 0x04
        with pytest.raises(FormatError):
            client.submit(_receive, header, bad, pure=False).result()


@pytest.mark.parametrize("tag", ["bloom.BloomFilter", "bloom.CountingBloomFilter", "scalable.ScalableBloomFilter",
                                 "folding.FoldableBloomFilter", "multiattr.ParallelBloomFilter"])
def test_pickle_5_sends_the_container_with_arrays_out_of_band(tag):
    """(tests/test_conformance.py pickles every structure with protocols 4 and 5.)"""
    from conformance.examples import EXAMPLES

    assert tag in registered_structures()
    obj = EXAMPLES[tag].make()
    raw = obj.to_bytes()
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    out_of_band = sum(memoryview(b).nbytes for b in buffers)
    assert len(data) < len(raw) - out_of_band + 128  # the arrays are not in the pickle stream
    assert b"__dict__" not in data and bloomkit.loads(raw).to_bytes() == raw
    back = pickle.loads(data, buffers=buffers)
    assert type(back) is type(obj) and back.to_bytes() == raw
    assert pickle.loads(pickle.dumps(obj, protocol=5)).to_bytes() == raw  # in band
    if buffers:
        damaged = [bytearray(memoryview(b).cast("B")) for b in buffers]
        damaged[-1][-1] ^= 0x80
        with pytest.raises(FormatError):
            pickle.loads(data, buffers=damaged)


# -- sharded lookup tables -----------------------------------------------------------------------

def _pairs_frame(n: int = 5000, distinct: int = 3000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"k": [f"k{i}" for i in rng.integers(0, distinct, n)], "v": rng.integers(1, 20, n)},
                        index=rng.permutation(n) * 2)


@pytest.mark.parametrize("on_duplicate", ["sum", "last", "min"])
def test_lookup_table_equals_the_one_process_sharded_build(client, on_duplicate):
    frame = _pairs_frame()
    want = ShardedLookupTable.build(frame["k"], frame["v"], num_shards=4, value_bits=16, fpr=2**-16,
                                    on_duplicate=on_duplicate, seed=7)
    cuts = [0, 0, 1200, 1200, 5000]  # empty partitions between the others
    pieces = [frame.iloc[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
    layouts = [dd.from_pandas(frame, npartitions=5, sort=False),
               dd.from_delayed([dask.delayed(p) for p in pieces], meta=frame.iloc[:0])]
    for d in layouts:
        got = lookup_table(d["k"], d["v"], 16, 2**-16, num_shards=4, on_duplicate=on_duplicate, seed=7)
        assert got.to_bytes() == want.to_bytes()
    model: dict[str, int] = {}
    for k, v in zip(frame["k"], frame["v"], strict=True):
        v = int(v)
        model[k] = {"sum": model.get(k, 0) + v, "last": v, "min": min(model.get(k, v), v)}[on_duplicate]
    assert len(got) == len(model)
    assert np.array_equal(got.get_many(list(model)), np.array(list(model.values())))
    assert all(got.get(k) == v for k, v in list(model.items())[:50])
    absent = got.get_many([f"absent-{i}" for i in range(5000)])
    assert (absent != 0).mean() <= 0.01


def test_lookup_table_routes_by_hash_and_keeps_the_protocol(client):
    from bloomkit._protocols import LookupTable

    frame = _pairs_frame(seed=4).drop_duplicates("k")
    d = dd.from_pandas(frame, npartitions=3, sort=False)
    t = lookup_table(d["k"], d["v"], 8, 2**-12)  # default: one shard per partition
    assert isinstance(t, LookupTable) and t.num_shards == 3 and t.key_types == ("str",)
    ids = t.shard_ids(frame["k"])
    for i, shard in enumerate(t.shards):  # each shard holds exactly the keys routed to it
        assert len(shard) == int((ids == i).sum())
        assert np.array_equal(shard.get_many(frame["k"][ids == i]), frame["v"][ids == i].to_numpy())
    assert t.shard_of(frame["k"].iloc[0]) == ids[0]
    labels = lookup_table(d["k"], d["v"].astype(str), 8, 2**-12, kind="bloomier", num_shards=2)
    assert list(labels.get_many(frame["k"][:20])) == frame["v"][:20].astype(str).tolist()
    assert labels.get("absent-key-zzz") in (None, *frame["v"].astype(str))
    info = t.info()
    assert info["count"] == len(frame) and info["num_shards"] == 3 and sum(info["shard_counts"]) == len(frame)
    t.set("new-key", 9)
    t.update({"k-upd-1": 3, "k-upd-2": 4})
    assert (t["new-key"], t.get("k-upd-1"), t.get("k-upd-2")) == (9, 3, 4) and len(t) == len(frame) + 3


def test_mixed_type_keys_need_dask_to_keep_them(client):
    """dask turns object columns into strings unless told not to (docs/scale-out.md, Limits);
    kept as objects, a column of ints and strs gives the local table, through the tasks shuffle."""
    keys = pd.Series([i if i % 2 else f"s{i}" for i in range(600)], dtype=object)
    vals = pd.Series(np.arange(600) % 100 + 1)
    want = ShardedLookupTable.build(keys, vals, num_shards=3, value_bits=8, fpr=2**-10)
    with dask.config.set({"dataframe.convert-string": False, "dataframe.shuffle.method": "tasks"}):
        d = dd.from_pandas(pd.DataFrame({"k": keys, "v": vals}), npartitions=4)
        got = lookup_table(d["k"], d["v"], 8, 2**-10, num_shards=3)
        assert bloom_filter(d["k"], 600).to_bytes() == _local_keys(keys, BloomFilter.for_requirements(600, 0.01)).to_bytes()
    assert got.to_bytes() == want.to_bytes() and got.key_types == ("int", "str")


def test_semi_join_straight_from_parquet(client, tmp_path):
    left, right = _frames()
    pq.write_table(pa.Table.from_pandas(left.reset_index(drop=True)), tmp_path / "left.parquet", row_group_size=2500)
    pq.write_table(pa.Table.from_pandas(right), tmp_path / "right.parquet")
    L, R = dd.read_parquet(tmp_path / "left.parquet"), dd.read_parquet(tmp_path / "right.parquet")
    got = semi_join(L, R, "id", exact=True).compute()
    wanted = set(right["id"].dropna())
    assert sorted(got["x"]) == sorted(int(x) for k, x in zip(left["id"], left["x"], strict=True) if k in wanted)


def test_sharded_files_one_container_or_a_directory(tmp_path):
    t = ShardedLookupTable.build([f"x{i}" for i in range(800)], np.arange(800) % 100 + 1, num_shards=5,
                                 value_bits=8, fpr=2**-10, seed=2)
    t.save(tmp_path / "one.bkf")
    assert bloomkit.load(tmp_path / "one.bkf").to_bytes() == t.to_bytes()
    paths = t.save_shards(tmp_path / "dir")
    assert [p.name for p in paths][:2] == ["shard-00000-of-00005.bkf", "shard-00001-of-00005.bkf"]
    back = ShardedLookupTable.load(tmp_path / "dir")
    assert back.to_bytes() == t.to_bytes()
    small = ShardedLookupTable.build(["a", "b", "c"], [1, 2, 3], num_shards=1, value_bits=8, fpr=2**-8, seed=2)
    small.save_shards(tmp_path / "dir")  # replaces the 5-shard files
    assert sorted(p.name for p in (tmp_path / "dir").iterdir()) == ["shard-00000-of-00001.bkf"]
    t.save_shards(tmp_path / "dir")
    (tmp_path / "dir" / "shard-00003-of-00005.bkf").unlink()
    with pytest.raises(FormatError, match="shard 3 of 5 is missing"):
        ShardedLookupTable.load(tmp_path / "dir")
    t.save_shards(tmp_path / "dir")
    raw = bytearray(paths[2].read_bytes())
    raw[len(raw) // 2] ^= 1
    paths[2].write_bytes(bytes(raw))
    with pytest.raises(FormatError):
        ShardedLookupTable.load(tmp_path / "dir")
    other = ShardedLookupTable.build(["a", "b", "c"], [1, 2, 3], num_shards=5 if False else 1, value_bits=8,
                                     fpr=2**-8, seed=3)
    t.save_shards(tmp_path / "mixed")
    other.shards[0].save(tmp_path / "mixed" / "shard-00001-of-00005.bkf")  # another table's shard
    with pytest.raises(FormatError, match="seed"):
        ShardedLookupTable.load(tmp_path / "mixed")


def test_a_damaged_or_foreign_shard_inside_the_container_is_a_format_error():
    from conformance.forge import build, parse

    t = ShardedLookupTable.build([f"x{i}" for i in range(300)], np.arange(300) % 50 + 1, num_shards=3,
                                 value_bits=8, fpr=2**-10, seed=2)
    tag, _v, hash_id, seed, params, arrays = parse(t.to_bytes())
    import json

    (_, _, oshape, off), (_, _, bshape, blob) = arrays
    offsets = np.frombuffer(off, dtype="<i8")

    def forged(blob_bytes: bytes, offs: np.ndarray = offsets, p: dict = params) -> bytes:
        return build(tag, json.dumps(p), [("offsets", "<i8", [len(offs)], offs.astype("<i8").tobytes()),
                                          ("shards", "|u1", [len(blob_bytes)], blob_bytes)], hash_id=hash_id, seed=seed)

    assert bloomkit.loads(forged(blob)).to_bytes() == t.to_bytes()  # the forger rebuilds the file exactly
    inner = bytearray(blob)
    inner[int(offsets[1]) + 100] ^= 0x01  # one byte of shard 1 (its own CRC no longer matches)
    bloom = BloomFilter(100, 0.1, seed=2).to_bytes()
    geo_other_seed = ShardedLookupTable.build(["a"], [1], num_shards=1, value_bits=8, fpr=2**-10, seed=9).shards[0]
    swapped = geo_other_seed.to_bytes() + blob[int(offsets[1]):]
    cases = {
        "a flipped byte in a shard": forged(bytes(inner)),
        "a shard of another class": forged(bloom + blob[int(offsets[1]):],
                                           np.array([0, len(bloom), *(offsets[2:] - offsets[1] + len(bloom))])),
        "a shard of another seed": forged(swapped, np.array([0, len(geo_other_seed.to_bytes()),
                                                             *(offsets[2:] - offsets[1] + len(geo_other_seed.to_bytes()))])),
        "offsets past the data": forged(blob, offsets + np.array([0, 0, 0, 8])),
        "offsets that do not increase": forged(blob, np.array([0, 0, offsets[2], offsets[3]])),
        "too few offsets": forged(blob, offsets[:3]),
        "another shard structure": forged(blob, offsets, {**params, "shard_structure": "lookup.BloomierFilter"}),
    }
    for name, data in cases.items():
        with pytest.raises(FormatError):
            bloomkit.loads(data)
        assert name


def test_nested_loads_spend_their_parents_budget():
    from bloomkit._engine.storage import load_budget, reserve

    with load_budget(1000), pytest.raises(FormatError, match="would allocate"):
        with load_budget(10**9):  # an inner file cannot grant more than the outer has left
            reserve(9 * 1000 + (1 << 20), "x")
    with load_budget(1000):
        with load_budget(1000):
            reserve(8000, "x")  # charged to the parent too
        with pytest.raises(FormatError):
            reserve((1 << 20) + 1, "y")  # 8 x 1000 + 1 MiB, less the 8000 of the inner load, is 1 MiB


def test_lookup_table_bad_inputs(client):
    frame = _pairs_frame(n=200, distinct=150)
    d = dd.from_pandas(frame, npartitions=2)
    e = dd.from_pandas(frame, npartitions=3)
    cases = [
        (lambda: lookup_table(frame["k"], frame["v"]), "dask Series"),
        (lambda: lookup_table(d["k"], e["v"]), "partitions"),
        (lambda: lookup_table(d["k"], d["v"], kind="cuckoo"), "'kind'"),
        (lambda: lookup_table(d["k"], d["v"], on_duplicate="first"), "'on_duplicate'"),
        (lambda: lookup_table(d["k"], d["v"], num_shards=0), "'num_shards'"),
        (lambda: lookup_table(d["k"], d["v"], num_shards=400, on_duplicate="sum"), "without keys"),
        (lambda: lookup_table(d["k"], d["v"], num_shards=2), "must not repeat a key"),
        (lambda: ShardedLookupTable([BloomFilter(10, 0.1)]), "GeometricFilter or BloomierFilter"),
        (lambda: ShardedLookupTable([]), "'num_shards'"),
    ]
    for call, words in cases:
        with pytest.raises(InvalidParameterError, match=words):
            call()
    a = ShardedLookupTable.build(["a"], [1], num_shards=1, value_bits=8, fpr=2**-8, seed=1).shards[0]
    b = ShardedLookupTable.build(["b"], [1], num_shards=1, value_bits=8, fpr=2**-8, seed=2).shards[0]
    with pytest.raises(InvalidParameterError, match="seed"):
        ShardedLookupTable([a, b], seed=1)


def test_dedup_dask_matches_the_stream_over_the_partitions(client):
    """issue 24: near-duplicate texts across and within partitions, in partition order, equal to
    dedup over the concatenated texts (a Series of 4 partitions and a Bag of 3)."""
    from bloomkit.similarity.dedup import dedup, dedup_dask

    rng = np.random.default_rng(24)
    base = [" ".join(rng.choice([f"w{j}" for j in range(300)], 14)) for _ in range(200)]
    texts = []
    for i, t in enumerate(base):
        texts.append(t)
        if i % 4 == 0:  # a near copy a little later: sometimes in the next partition
            texts.insert(min(len(texts), len(texts) - int(rng.integers(0, 30))), t + " !")
    want = dedup(texts, seed=5)
    assert want.sum() >= 40
    got = dedup_dask(dd.from_pandas(pd.Series(texts, dtype=object), npartitions=4, sort=False), seed=5)
    assert np.array_equal(got, want)
    assert np.array_equal(dedup_dask(db.from_sequence(texts, npartitions=3), seed=5), want)
    with pytest.raises(InvalidParameterError, match="in partition 1"):
        dedup_dask(db.from_sequence(["a b c", "d e f", None, "g"], npartitions=2))
