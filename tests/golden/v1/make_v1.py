"""Wrote the format-1 golden files in this folder, run once with bloomkit at commit 1a99af3
(format version 1, before the parameter specs of issue 11). Kept as the record of how each
file was made; today's code must still load every one of them (tests/test_conformance.py).
"""
# ruff: noqa
import numpy as np, bloomkit
from pathlib import Path
from bloomkit import BloomFilter, CountingBloomFilter
from bloomkit.ranges import RangeBloomFilter, RangeConfig, Schema, Text, Integer, Decimal, ProfileIndex
from bloomkit.lookup import GeometricFilter, BloomierFilter
from bloomkit.similarity import MLBF, MLBFStar, LSBF
from bloomkit.folding import FoldableBloomFilter, FoldableCountingBloomFilter
from bloomkit.multiattr import ParallelBloomFilter

STR = ["alpha", "beta", "gamma", "delta"]
def schema():
    return Schema([Text("Name"), Integer("Age", 1, 120), Decimal("Lat", -90, 90, 2)])
cfg = RangeConfig(5, {"Age": (3, 2), "Lat": (10, 2)})
def ex():
    out = {}
    bf = BloomFilter(num_bits=200, num_hashes=3, seed=11); bf.add_many(STR); out["bloom.BloomFilter"] = bf
    c = CountingBloomFilter(num_bits=101, num_hashes=3, seed=11, counter_bits=4); c.add_many(STR + ["alpha"]); out["bloom.CountingBloomFilter"] = c
    r = RangeBloomFilter(schema(), 256, cfg, seed=3); r.insert({"Name": "ming", "Age": (20, 29), "Lat": (25.0, 25.5)}); out["ranges.RangeBloomFilter"] = r
    p = ProfileIndex(schema(), 128, cfg, seed=3, capacity=64, store_records=True)
    p.add({"Name": "ming", "Age": (20, 29), "Lat": (25.0, 25.5)}); p.add({"Name": "li", "Age": (30, 39), "Lat": (-10.0, 0.0)})
    out["ranges.ProfileIndex"] = p
    keys = np.arange(1, 301, dtype=np.int64) * 7919; vals = (np.arange(300) % 250) + 1
    out["lookup.GeometricFilter"] = GeometricFilter.build(keys, vals, value_bits=8, fpr=2**-8, seed=5)
    out["lookup.BloomierFilter"] = BloomierFilter.build(keys, vals, value_bits=8, fpr=2**-8, seed=5)
    rng = np.random.default_rng(0); X = rng.uniform(0, 100, (20, 4))
    m = MLBF(dim=4, w=4.0, num_levels=2, and_width=3, or_count=2, num_bits=2**10, verify_bits=2**9, verify_hashes=3, seed=1, domain=(0, 100)); m.add_many(X); out["similarity.MLBF"] = m
    ms = MLBFStar(dim=4, w=4.0, num_levels=2, and_width=3, or_count=2, verify_bits=2**9, verify_hashes=3, seed=1, domain=(0, 100)); ms.add_many(X); out["similarity.MLBFStar"] = ms
    l = LSBF(dim=4, w=4.0, and_width=3, num_bits=2**10, verify_bits=2**9, verify_hashes=3, seed=1, domain=(0, 100)); l.add_many(X); out["similarity.LSBF"] = l
    f = FoldableBloomFilter(num_bits=720, num_hashes=3, seed=42); f.add_many(STR); f.fold(3); out["folding.FoldableBloomFilter"] = f
    fc = FoldableCountingBloomFilter(num_bits=360, num_hashes=3, seed=42); fc.add_many(STR); fc.fold(2); out["folding.FoldableCounting"] = fc
    pb = ParallelBloomFilter(num_attributes=3, num_hashes=3, num_counters=64, seed=9)
    pb.add(("10.0.0.1", "10.0.0.2", 80)); pb.add(("10.0.0.3", "10.0.0.4", 443)); out["multiattr.ParallelBloomFilter"] = pb
    return out
d = Path("tests/golden/v1"); d.mkdir(parents=True, exist_ok=True)
from bloomkit._format import _STRUCTURES, _import_all
_import_all()
objs = ex()
assert set(objs) == set(_STRUCTURES), set(_STRUCTURES) ^ set(objs)
for tag, o in objs.items():
    raw = o.to_bytes()
    (d / f"{tag}.bkf").write_bytes(raw)
    assert bloomkit.loads(raw).to_bytes() == raw
    print(tag, len(raw))
fw = objs["folding.FoldableBloomFilter"].to_wire(set_version=3)
(d / "folding.wire_bits.bin").write_bytes(fw)
fcw = objs["folding.FoldableCounting"].to_wire(set_version=4)
(d / "folding.wire_counters.bin").write_bytes(fcw)
print(len(fw), len(fcw))
