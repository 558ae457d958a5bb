"""One small, populated example of every persistable structure, and how to probe and stress it.

The conformance suite (tests/test_conformance.py, tests/test_threads.py) is parametrized over
``bloomkit._format.registered_structures()``: registering a new structure (its line in
``bloomkit._registry``) makes the suite fail until it has an entry here. Each entry gives

* ``make()``: the example (its bytes are pinned in tests/golden/v2);
* ``probe(obj)``: the answers that must survive a round trip (a tuple of arrays / values);
* ``writers``: optional ``(make_empty, write(obj, worker, n), verify(obj, workers, n))`` for
  the multi-writer thread test (``write`` runs in 4+ threads at once; ``verify`` asserts zero
  false negatives / exact values afterwards).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

STR = ["alpha", "beta", "gamma", "delta"]
ABSENT = [f"absent-{i}" for i in range(200)]


@dataclass(frozen=True)
class Example:
    make: Callable[[], Any]
    probe: Callable[[Any], tuple[Any, ...]]
    writers: tuple[Callable[[], Any], Callable[[Any, int, int], None], Callable[[Any, int, int], None]] | None = None


# -- bloom ---------------------------------------------------------------------------------------

def _bloom() -> Any:
    from bloomkit import BloomFilter

    bf = BloomFilter(num_bits=200, num_hashes=3, seed=11)
    bf.add_many(STR)
    return bf


def _counting() -> Any:
    from bloomkit import CountingBloomFilter

    c = CountingBloomFilter(num_bits=101, num_hashes=3, seed=11, counter_bits=4)
    c.add_many([*STR, "alpha"])
    return c


def _splitblock() -> Any:
    from bloomkit import SplitBlockBloomFilter

    f = SplitBlockBloomFilter(num_blocks=6, seed=11)
    f.add_many(STR)
    return f


def _members(obj: Any) -> tuple[Any, ...]:
    return (obj.contains_many(STR + ABSENT),)


def _keys_of(worker: int, n: int) -> list[str]:
    return [f"w{worker}-k{i}" for i in range(n)]


def _write_members(obj: Any, worker: int, n: int) -> None:
    keys = _keys_of(worker, n)
    half = n // 2
    for k in keys[:half]:  # single keys and batches interleave with the other threads
        obj.add(k)
    obj.add_many(keys[half:])
    obj.add_many(np.arange(worker * n, (worker + 1) * n, dtype=np.int64))


def _verify_members(obj: Any, workers: int, n: int) -> None:
    for w in range(workers):
        assert obj.contains_many(_keys_of(w, n)).all(), f"worker {w}: a str key was lost"
    assert obj.contains_many(np.arange(workers * n, dtype=np.int64)).all(), "an int key was lost"


def _counting_verify(obj: Any, workers: int, n: int) -> None:
    _verify_members(obj, workers, n)
    if not obj.overflowed:  # every key added once: counters sum to k per key
        assert int(obj.counters.values().sum()) == obj.num_hashes * workers * n * 2


# -- scalable ------------------------------------------------------------------------------------

def _scalable() -> Any:
    from bloomkit import ScalableBloomFilter

    f = ScalableBloomFilter(2, 0.01, seed=11)
    f.add_many([*STR, "epsilon", "zeta", "eta"])  # slices of 2, 4 and 8 keys
    return f


def _scalable_probe(f: Any) -> tuple[Any, ...]:
    return (*_members(f), len(f), f.num_slices)


def _scalable_empty() -> Any:
    from bloomkit import ScalableBloomFilter

    return ScalableBloomFilter(100, 0.01, seed=3)  # grows while the writers add


def _scalable_verify(f: Any, workers: int, n: int) -> None:
    _verify_members(f, workers, n)
    keys = workers * n * 2  # distinct: str and int keys of every worker
    # only keys the filter already reported (false positives) go uncounted
    assert keys * (1 - 2 * f.fpr) <= len(f) <= keys, (len(f), keys)
    caps = f.slice_capacities()
    assert sum(caps[:-1]) < len(f) <= sum(caps)  # it grew exactly when its slices filled


# -- ranges --------------------------------------------------------------------------------------

def _schema() -> Any:
    from bloomkit.ranges import Decimal, Integer, Schema, Text

    return Schema([Text("Name"), Integer("Age", 1, 120), Decimal("Lat", -90, 90, 2)])


def _range_config() -> Any:
    from bloomkit.ranges import RangeConfig

    return RangeConfig(5, {"Age": (3, 2), "Lat": (10, 2)})


PROFILES = [{"Name": "ming", "Age": (20, 29), "Lat": (25.0, 25.5)},
            {"Name": "li", "Age": (30, 39), "Lat": (-10.0, 0.0)}]
RANGE_QUERIES = [{"Age": 22}, {"Age": 35}, {"Name": "ming"}, {"Name": "wang"}, {"Lat": (25.1, 25.2)},
                 {"Age": 80, "Lat": (-5.0, -4.0)}]


def _range_filter() -> Any:
    from bloomkit.ranges import RangeBloomFilter

    r = RangeBloomFilter(_schema(), 256, _range_config(), seed=3)
    r.insert(PROFILES[0])
    return r


def _range_probe(r: Any) -> tuple[Any, ...]:
    return tuple(r.matches(q) for q in RANGE_QUERIES)


def _profile_index() -> Any:
    from bloomkit.ranges import ProfileIndex

    p = ProfileIndex(_schema(), 128, _range_config(), seed=3, capacity=64, store_records=True)
    for prof in PROFILES:
        p.add(prof)
    return p


def _index_probe(p: Any) -> tuple[Any, ...]:
    return tuple(tuple(p.search(q).tolist()) for q in RANGE_QUERIES) + (len(p),)


def _profile(worker: int, i: int) -> dict[str, Any]:
    age = 1 + (worker * 37 + i) % 110
    return {"Name": f"w{worker}-{i}", "Age": (age, age + 5), "Lat": (float(i % 80), float(i % 80) + 0.5)}


def _index_write(p: Any, worker: int, n: int) -> None:
    half = n // 2
    ids = [p.add(_profile(worker, i)) for i in range(half)]  # single adds and batches interleave
    ids += p.add_many([_profile(worker, i) for i in range(half, n)]).tolist()
    assert len(set(ids)) == n


def _index_verify(p: Any, workers: int, n: int) -> None:
    assert len(p) == workers * n and p.next_id == workers * n
    for w in range(workers):
        for i in range(0, n, max(1, n // 10)):
            ids = p.search({"Name": f"w{w}-{i}"}, verify=True)
            assert len(ids) == 1 and p.record(int(ids[0]))["Name"] == f"w{w}-{i}"


def _range_write(r: Any, worker: int, n: int) -> None:
    half = n // 2
    for i in range(half):
        r.insert(_profile(worker, i))
    r.insert_many([_profile(worker, i) for i in range(half, n)])


def _range_verify(r: Any, workers: int, n: int) -> None:
    assert len(r) == workers * n
    for w in range(workers):
        for i in range(n):
            prof = _profile(w, i)
            assert r.might_contain("Name", prof["Name"]) and r.might_cover("Age", *prof["Age"])


# -- lookup --------------------------------------------------------------------------------------

LOOKUP_KEYS = np.arange(1, 301, dtype=np.int64) * 7919
LOOKUP_VALUES = (np.arange(300) % 250) + 1


def _geometric() -> Any:
    from bloomkit.lookup import GeometricFilter

    return GeometricFilter.build(LOOKUP_KEYS, LOOKUP_VALUES, value_bits=8, fpr=2**-8, seed=5)


def _bloomier() -> Any:
    from bloomkit.lookup import BloomierFilter

    return BloomierFilter.build(LOOKUP_KEYS, LOOKUP_VALUES, value_bits=8, fpr=2**-8, seed=5)


def _lookup_probe(t: Any) -> tuple[Any, ...]:
    absent = np.arange(10**9, 10**9 + 500, dtype=np.int64)
    return (t.get_many(LOOKUP_KEYS), t.get_many(absent))


def _geometric_empty() -> Any:
    from bloomkit.lookup import GeometricFilter

    return GeometricFilter(4 * 2000, value_bits=16, fpr=2**-32, seed=2)  # set() of a new key: no false positive to overwrite


def _geometric_value(worker: int, i: int) -> int:
    return (worker * 1000 + i) % 65535 + 1


def _geometric_write(g: Any, worker: int, n: int) -> None:
    third = n // 3
    for i in range(third):  # insert, set and update (dict meaning) interleave with the other threads
        g.insert(f"w{worker}-{i}", _geometric_value(worker, i))
    for i in range(third, 2 * third):
        g.set(f"w{worker}-{i}", 1)
        g.set(f"w{worker}-{i}", _geometric_value(worker, i))  # overwrite
    g.update({f"w{worker}-{i}": _geometric_value(worker, i) for i in range(2 * third, n)})


def _geometric_verify(g: Any, workers: int, n: int) -> None:
    for w in range(workers):
        keys = [f"w{w}-{i}" for i in range(n)]
        want = np.array([_geometric_value(w, i) for i in range(n)])
        assert (g.get_many(keys) == want).all(), f"worker {w}: a value was lost"
    assert len(g) == workers * n


def _ribbon_retrieval() -> Any:
    from bloomkit.lookup import RibbonRetrieval

    return RibbonRetrieval.build(LOOKUP_KEYS, LOOKUP_VALUES, value_bits=8, fpr=2**-8, seed=5)


def _sharded() -> Any:
    from bloomkit.dask import ShardedLookupTable

    return ShardedLookupTable.build(LOOKUP_KEYS, LOOKUP_VALUES, num_shards=3, value_bits=8, fpr=2**-8, seed=5)


def _sharded_empty() -> Any:
    from bloomkit.dask import ShardedLookupTable
    from bloomkit.lookup import GeometricFilter

    return ShardedLookupTable([GeometricFilter(2 * 2000, value_bits=16, fpr=2**-32, seed=2) for _ in range(3)], seed=2)


def _sharded_write(t: Any, worker: int, n: int) -> None:
    half = n // 2
    for i in range(half):  # set (routed to a shard) and update (grouped by shard) interleave
        t.set(f"w{worker}-{i}", 1)
        t.set(f"w{worker}-{i}", _geometric_value(worker, i))
    t.update({f"w{worker}-{i}": _geometric_value(worker, i) for i in range(half, n)})


# -- static filters ------------------------------------------------------------------------------

STATIC_KEYS = [*STR, *(f"key-{i}" for i in range(300))]


def _fuse() -> Any:
    from bloomkit.static import BinaryFuseFilter

    return BinaryFuseFilter.build(STATIC_KEYS, fingerprint_bits=16, arity=3, seed=5)


def _ribbon_filter() -> Any:
    from bloomkit.static import RibbonFilter

    return RibbonFilter.build(STATIC_KEYS, fingerprint_bits=9, seed=5)


# -- similarity ----------------------------------------------------------------------------------

POINTS = np.random.default_rng(0).uniform(0, 100, (20, 4))


def _mlbf() -> Any:
    from bloomkit.similarity import MLBF

    m = MLBF(dim=4, w=4.0, num_levels=2, and_width=3, or_count=2, num_bits=2**10, verify_bits=2**9,
             verify_hashes=3, seed=1, domain=(0, 100))
    m.add_many(POINTS)
    return m


def _mlbf_star() -> Any:
    from bloomkit.similarity import MLBFStar

    m = MLBFStar(dim=4, w=4.0, num_levels=2, and_width=3, or_count=2, verify_bits=2**9, verify_hashes=3,
                 seed=1, domain=(0, 100))
    m.add_many(POINTS)
    return m


def _lsbf() -> Any:
    from bloomkit.similarity import LSBF

    m = LSBF(dim=4, w=4.0, and_width=3, num_bits=2**10, verify_bits=2**9, verify_hashes=3, seed=1,
             domain=(0, 100))
    m.add_many(POINTS)
    return m


# near points (clipped into the filters' domain [0, 100]: a point outside it is refused) and far ones
QUERY_POINTS = np.vstack([np.clip(POINTS + 0.3, 0, 100), np.random.default_rng(1).uniform(0, 100, (50, 4))])


def _sim_probe(m: Any) -> tuple[Any, ...]:
    return tuple(m.query_many(QUERY_POINTS, lv) for lv in range(m.num_levels))  # the LSBF has level 0 only


def _sim_empty(cls_name: str) -> Callable[[], Any]:
    def make() -> Any:
        from bloomkit import similarity

        cls = getattr(similarity, cls_name)
        kw: dict[str, Any] = dict(dim=4, w=4.0, and_width=3, verify_bits=2**14, verify_hashes=3, seed=1,
                                  domain=(0, 100))
        if cls_name != "LSBF":
            kw.update(num_levels=2, or_count=2)
        if cls_name != "MLBFStar":
            kw.update(num_bits=2**16)
        return cls(**kw)

    return make


def _sim_points(worker: int, n: int) -> np.ndarray:
    return np.random.default_rng(100 + worker).uniform(1, 99, (n, 4))


def _sim_write(m: Any, worker: int, n: int) -> None:
    pts = _sim_points(worker, n)
    for p in pts[: n // 2]:
        m.add(p)
    m.add_many(pts[n // 2 :])


def _sim_verify(m: Any, workers: int, n: int) -> None:
    for w in range(workers):
        pts = _sim_points(w, n)
        hits = m.query_many(pts, 0)
        assert hits.all(), f"worker {w}: a point was lost"


# the Jaccard family (issue 24): the same structures over MinHash signatures of texts
TEXTS = ["the quick brown fox jumps over the lazy dog", "a stitch in time saves nine",
         "to be or not to be, that is the question", ""]
TEXT_QUERIES = [*TEXTS, "the quick brown fox jumped over the lazy dog", "an unrelated sentence"]


def _jaccard(cls_name: str, empty: bool = False) -> Callable[[], Any]:
    def make() -> Any:
        from bloomkit import similarity

        kw: dict[str, Any] = dict(bands=4, verify_bits=2**14 if empty else 2**10, verify_hashes=3, seed=1)
        if cls_name == "JaccardLSBF":
            kw["rows"] = 4
        else:
            kw["rows_by_level"] = (4, 2)
        if cls_name == "JaccardMLBF":
            kw["num_bits"] = 2**16 if empty else 2**10
        f = getattr(similarity, cls_name)(**kw)
        if not empty:
            f.add_many(TEXTS)
        return f

    return make


def _jaccard_probe(f: Any) -> tuple[Any, ...]:
    return (*(f.query_many(TEXT_QUERIES, lv) for lv in range(f.num_levels)), len(f))


def _jaccard_texts(worker: int, n: int) -> list[str]:
    return [f"worker {worker} writes text number {i} of {n}" for i in range(n)]


def _jaccard_write(f: Any, worker: int, n: int) -> None:
    texts = _jaccard_texts(worker, n)
    for t in texts[: n // 4]:
        f.add(t)
    f.add_many(texts[n // 4 :])


def _jaccard_verify(f: Any, workers: int, n: int) -> None:
    assert len(f) == workers * n, (len(f), workers * n)
    for w in range(workers):
        assert f.query_many(_jaccard_texts(w, n), 0).all(), f"worker {w}: a text was lost"


# -- folding -------------------------------------------------------------------------------------

def _foldable() -> Any:
    from bloomkit.folding import FoldableBloomFilter

    f = FoldableBloomFilter(num_bits=720, num_hashes=3, seed=42)
    f.add_many(STR)
    f.fold(3)
    return f


def _foldable_counting() -> Any:
    from bloomkit.folding import FoldableCountingBloomFilter

    f = FoldableCountingBloomFilter(num_bits=360, num_hashes=3, seed=42)
    f.add_many(STR)
    f.fold(2)
    return f


def _foldable_empty() -> Any:
    from bloomkit.folding import FoldableBloomFilter

    return FoldableBloomFilter(num_bits=2**16 * 9, num_hashes=3, seed=4)


def _foldable_counting_empty() -> Any:
    from bloomkit.folding import FoldableCountingBloomFilter

    return FoldableCountingBloomFilter(num_bits=2**14 * 9, num_hashes=3, seed=4)


# -- multiattr -----------------------------------------------------------------------------------

ITEMS = [("10.0.0.1", "10.0.0.2", 80), ("10.0.0.3", "10.0.0.4", 443)]
ITEM_QUERIES = [*ITEMS, ("10.0.0.1", "10.0.0.4", 443), ("1.1.1.1", "2.2.2.2", 53)]


def _pbf() -> Any:
    from bloomkit.multiattr import ParallelBloomFilter

    pb = ParallelBloomFilter(num_attributes=3, num_hashes=3, num_counters=64, seed=9)
    for item in ITEMS:
        pb.add(item)
    return pb


def _pbf_probe(pb: Any) -> tuple[Any, ...]:
    return (tuple(q in pb for q in ITEM_QUERIES), len(pb))


def _pbf_empty() -> Any:
    from bloomkit.multiattr import ParallelBloomFilter

    return ParallelBloomFilter(num_attributes=3, num_hashes=4, num_counters=1 << 16, counter_bits=8, seed=9)


def _pbf_items(worker: int, n: int) -> list[tuple[Any, ...]]:
    return [(f"10.{worker}.{i // 256}.{i % 256}", f"dst-{worker}-{i}", i % 1000) for i in range(n)]


def _pbf_write(pb: Any, worker: int, n: int) -> None:
    items = _pbf_items(worker, n)
    for it in items[: n // 4]:
        pb.add(it)
    pb.add_many(items[n // 4 :])


def _pbf_verify(pb: Any, workers: int, n: int) -> None:
    assert len(pb) == workers * n, (len(pb), workers * n)
    for w in range(workers):
        assert all(it in pb for it in _pbf_items(w, n)), f"worker {w}: an item was lost"


def _bloom_empty(cls_name: str) -> Callable[[], Any]:
    def make() -> Any:
        import bloomkit

        return getattr(bloomkit, cls_name)(capacity=100_000, fpr=0.01, seed=3)

    return make


EXAMPLES: dict[str, Example] = {
    "bloom.BloomFilter": Example(_bloom, _members, (_bloom_empty("BloomFilter"), _write_members, _verify_members)),
    "bloom.CountingBloomFilter": Example(
        _counting, _members, (_bloom_empty("CountingBloomFilter"), _write_members, _counting_verify)),
    "splitblock.SplitBlockBloomFilter": Example(
        _splitblock, _members, (_bloom_empty("SplitBlockBloomFilter"), _write_members, _verify_members)),
    "scalable.ScalableBloomFilter": Example(
        _scalable, _scalable_probe, (_scalable_empty, _write_members, _scalable_verify)),
    "ranges.RangeBloomFilter": Example(
        _range_filter, _range_probe,
        (lambda: __import__("bloomkit.ranges", fromlist=["x"]).RangeBloomFilter(_schema(), 4096, _range_config(), seed=3),
         _range_write, _range_verify)),
    "ranges.ProfileIndex": Example(
        _profile_index, _index_probe,
        (lambda: __import__("bloomkit.ranges", fromlist=["x"]).ProfileIndex(
            _schema(), 128, _range_config(), seed=3, store_records=True), _index_write, _index_verify)),
    "lookup.GeometricFilter": Example(_geometric, _lookup_probe, (_geometric_empty, _geometric_write, _geometric_verify)),
    "lookup.BloomierFilter": Example(_bloomier, _lookup_probe),  # immutable after encoding
    "lookup.RibbonRetrieval": Example(_ribbon_retrieval, _lookup_probe),  # static
    "static.BinaryFuseFilter": Example(_fuse, _members),  # static: no writers
    "static.RibbonFilter": Example(_ribbon_filter, _members),
    "dask.ShardedLookupTable": Example(_sharded, _lookup_probe, (_sharded_empty, _sharded_write, _geometric_verify)),
    "similarity.MLBF": Example(_mlbf, _sim_probe, (_sim_empty("MLBF"), _sim_write, _sim_verify)),
    "similarity.MLBFStar": Example(_mlbf_star, _sim_probe, (_sim_empty("MLBFStar"), _sim_write, _sim_verify)),
    "similarity.LSBF": Example(_lsbf, _sim_probe, (_sim_empty("LSBF"), _sim_write, _sim_verify)),
    **{f"similarity.{c}": Example(_jaccard(c), _jaccard_probe, (_jaccard(c, True), _jaccard_write, _jaccard_verify))
       for c in ("JaccardLSBF", "JaccardMLBF", "JaccardMLBFStar")},
    "folding.FoldableBloomFilter": Example(_foldable, _members, (_foldable_empty, _write_members, _verify_members)),
    "folding.FoldableCounting": Example(
        _foldable_counting, _members, (_foldable_counting_empty, _write_members, _verify_members)),
    "multiattr.ParallelBloomFilter": Example(_pbf, _pbf_probe, (_pbf_empty, _pbf_write, _pbf_verify)),
}
