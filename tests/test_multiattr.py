"""Tests of bloomkit.multiattr (document 004): parallel Bloom filters + verification table."""

from __future__ import annotations

import hashlib
import pickle
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import bloomkit
from bloomkit._engine import hashing as _hashing
from bloomkit._engine.hashing import HASH_XXH64
from bloomkit._format import pack
from bloomkit.errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from bloomkit.multiattr import (
    ConcatenatedBloomFilter,
    ParallelBloomFilter,
    VerificationTable,
    concat_keys,
    model,
)
from bloomkit.multiattr.baselines import concat_key
from bloomkit.multiattr.hashing import (
    HASHES,
    attribute_positions,
    attribute_seed,
    material_positions,
)

HASH_NAMES = tuple(HASHES)


def _cols(rng: np.random.Generator, n: int, p: int = 3) -> list[np.ndarray]:
    return [rng.integers(0, 2**62, n) for _ in range(p)]


def _rows(cols: list[np.ndarray]) -> list[tuple[int, ...]]:
    return list(zip(*[c.tolist() for c in cols], strict=True))


# -- basic behaviour ------------------------------------------------------------------------------


@pytest.mark.parametrize("hash_name", HASH_NAMES)
@pytest.mark.parametrize("verification", ["attenuated", "basic"])
def test_add_query_single_and_batch_agree(hash_name: str, verification: str) -> None:
    rng = np.random.default_rng(1)
    cols = _cols(rng, 300)
    a = ParallelBloomFilter(3, 5, 512, verification=verification, hash=hash_name, seed=7)
    b = a.copy_empty()
    a.add_many(cols)
    for row in _rows(cols):
        b.add(row)
    assert a == b
    a._check()
    assert len(a) == 300
    assert a.contains_many(cols).all()  # no false negatives, exactly
    assert all(row in a for row in _rows(cols))
    probes = _cols(rng, 200)
    assert a.contains_many(probes).tolist() == [r in a for r in _rows(probes)]
    # verification value agrees with the document's formula
    row = _rows(cols)[0]
    pos = a.positions([row])[0]
    w = model.verification_weights(5, verification)
    assert a.verification_value(row) == int((pos * w).sum())


def test_attenuated_value_is_exact_integer_form_of_the_paper() -> None:
    f = ParallelBloomFilter(2, 4, 1000)
    item = ("a", 3)
    pos = f.positions([item])[0]
    paper = sum(pos[i, j] / 2 ** (j + 1) for i in range(2) for j in range(4))  # sum H_ij / 2^j
    assert f.verification_value(item) == paper * 2**4
    assert f.verification_value(item) == int(sum(pos[i, j] * 2 ** (4 - j - 1) for i in range(2) for j in range(4)))


def test_md5_hash_is_the_papers() -> None:
    f = ParallelBloomFilter(2, 4, 1280, hash="md5")
    pos = f.positions([("abc", b"xy")])[0]
    d = hashlib.md5(b"\x01abc").digest()
    assert pos[0].tolist() == [int.from_bytes(d[4 * w : 4 * w + 4], "big") % 1280 for w in range(4)]
    d = hashlib.md5(b"\x02xy").digest()
    assert pos[1].tolist() == [int.from_bytes(d[4 * w : 4 * w + 4], "big") % 1280 for w in range(4)]
    g = ParallelBloomFilter(1, 7, 1280, hash="md5")
    assert g.positions([("abc",)])[0, 0, :4].tolist() == pos[0].tolist()


def test_default_hash_is_the_foundations_positions() -> None:
    """hash="xxh64" = hash id 1: attribute i's positions are exactly
    ``bloomkit._engine.hashing.positions(h1_i, q, m)`` of its h1 (seeded with ``attribute_seed``), in
    every path: single item, batch, per-attribute query and the fused add / probe kernels."""
    assert HASHES["xxh64"] == HASH_XXH64 == 1
    assert set(HASHES) == {"xxh64", "md5"}
    rng = np.random.default_rng(21)
    p, q, n, seed = 3, 5, 400, 123
    cols = [rng.integers(0, 2**62, n), [f"v{x}" for x in rng.integers(0, 10**9, n)], rng.random(n)]
    rows = list(zip(*[list(c) for c in cols], strict=True))
    h1 = np.stack([_hashing.hash_many(c, attribute_seed(seed, i)) for i, c in enumerate(cols)])
    assert h1[1, 0] == _hashing.hash64(rows[0][1], attribute_seed(seed, 1))
    # any m, including non-powers of two and the largest allowed m = 2**32
    for m in (1, 7, 1000, 1280, 2**20 + 3, 2**32 - 5, 2**32):
        expected = np.stack([_hashing.positions(h1[i], q, m) for i in range(p)], axis=1)  # (n, p, q)
        assert expected.min() >= 0 and expected.max() < m
        assert np.array_equal(material_positions(h1, "xxh64", q, m), expected)
        assert np.array_equal(attribute_positions(cols[1], 1, "xxh64", seed, q, m), expected[:, 1, :])
        r = rows[7]
        one = [_hashing.positions_one(_hashing.hash64(v, attribute_seed(seed, i)), q, m) for i, v in enumerate(r)]
        assert expected[7].tolist() == one  # pure-Python reference (probe(h1, j) % m)
    m = 1280
    expected = np.stack([_hashing.positions(h1[i], q, m) for i in range(p)], axis=1)
    f = ParallelBloomFilter(p, q, m, counter_bits=8, seed=seed)
    assert f.positions([rows[3]]).tolist() == expected[3:4].tolist()
    f.add_many(cols)  # fused kernel: array (i, j) holds the histogram of the positions
    counters = f._counters.values().reshape(p, q, m)
    for i in range(p):
        for j in range(q):
            assert np.array_equal(counters[i, j], np.bincount(expected[:, i, j], minlength=m))
    w = model.verification_weights(q, "attenuated")
    values = (expected * w.reshape(1, 1, q)).sum(axis=(1, 2))
    stored, counts = f._table.items()
    u, c = np.unique(values, return_counts=True)
    assert np.array_equal(stored, u) and np.array_equal(counts, c)
    # fused probe = the two-step check on the foundation's positions (recombined + fresh items)
    idx = rng.integers(0, n, (p, 2000))
    probe = [cols[0][idx[0]], [cols[1][k] for k in idx[1]], cols[2][idx[2]]]
    ph1 = np.stack([_hashing.hash_many(c, attribute_seed(seed, i)) for i, c in enumerate(probe)])
    ppos = np.stack([_hashing.positions(ph1[i], q, m) for i in range(p)], axis=1)
    assert f.pbf_stage_many(probe).all() and f.pbf_stage_positions(ppos).all()
    hits = f.contains_many(probe)
    assert np.array_equal(hits, f.contains_positions(ppos))
    assert hits[(idx[0] == idx[1]) & (idx[1] == idx[2])].all()  # stored items among the probes
    assert hits.mean() < 0.05  # recombinations are rejected by the table


@pytest.mark.parametrize("hash_name", HASH_NAMES)
def test_contains_attribute(hash_name: str) -> None:
    rng = np.random.default_rng(3)
    cols = _cols(rng, 200)
    f = ParallelBloomFilter(3, 6, 4096, hash=hash_name)
    f.add_many(cols)
    for i in range(3):
        assert f.contains_attribute_many(i, cols[i]).all()
        assert f.contains_attribute(i, int(cols[i][5]))
    # a value stored only as attribute 0 is (almost surely) not seen in submatrix 1
    fresh = rng.integers(0, 2**62, 2000)
    g = ParallelBloomFilter(2, 6, 4096, hash=hash_name)
    g.add_many([fresh, rng.integers(0, 2**62, 2000)])
    assert g.contains_attribute_many(0, fresh).all()
    assert g.contains_attribute_many(1, fresh).mean() < 0.01


def test_recombined_items_are_rejected_by_the_table() -> None:
    """The PBF stage alone accepts attribute combinations of different items (Section 3.2)."""
    f = ParallelBloomFilter(2, 4, 2048)
    f.add(("alice", "paris"))
    f.add(("bob", "rome"))
    g = f.copy_empty()
    g.add_many([("alice", "paris"), ("bob", "rome")])
    assert g == f
    assert f.pbf_stage_many([("alice", "rome")]).all()
    assert ("alice", "rome") not in f  # V differs (collision probability ~1e-5 for this config)
    assert ("alice", "paris") in f


# -- removal, multiset, overflow ------------------------------------------------------------------


def test_remove_and_duplicates() -> None:
    f = ParallelBloomFilter(3, 4, 512)
    item = ("x", 1, 2.5)
    f.add(item)
    f.add(item)
    f.remove(item)
    f._check()
    assert item in f and len(f) == 1
    f.remove(item)
    f._check()
    assert item not in f and len(f) == 0
    assert np.all(f._counters.values() == 0)
    with pytest.raises(InvalidParameterError, match="not stored"):
        f.remove(item)
    f._check()


def test_remove_absent_leaves_filter_unchanged() -> None:
    rng = np.random.default_rng(4)
    cols = _cols(rng, 100)
    f = ParallelBloomFilter(3, 4, 512)
    f.add_many(cols)
    before = f.copy()
    with pytest.raises(InvalidParameterError):
        f.remove((1, 2, 3))
    bad = [np.append(c[:5], 7) for c in cols]
    with pytest.raises(InvalidParameterError):
        f.remove_many(bad)  # the last item is absent: nothing removed
    assert f == before
    f.remove_many([c[:50] for c in cols])
    f._check()
    assert len(f) == 50
    assert f.contains_many([c[50:] for c in cols]).all()


def test_counter_overflow_saturates_and_flags() -> None:
    f = ParallelBloomFilter(2, 3, 64, counter_bits=4)
    item = ("hot", 80)
    for _ in range(20):
        f.add(item)
    assert f.overflowed and len(f) == 20
    f._check()
    for _ in range(20):
        f.remove(item)  # saturated counters stay saturated; the table entry goes
    f._check()
    assert item not in f and len(f) == 0
    assert f.pbf_stage_many([("hot", 80)]).all()  # cannot be cleared: documented
    with pytest.raises(InvalidParameterError):
        f.remove(item)
    g = ParallelBloomFilter(2, 3, 64, counter_bits=8)
    for _ in range(20):
        g.add(item)
    assert not g.overflowed


def test_random_operation_sequence_against_a_reference() -> None:
    rng = np.random.default_rng(5)
    pool = [(int(a), f"s{b}", bool(c)) for a, b, c in zip(rng.integers(0, 40, 60), rng.integers(0, 40, 60),
                                                         rng.integers(0, 2, 60), strict=True)]
    f = ParallelBloomFilter(3, 3, 128, counter_bits=8, seed=3)
    ref: Counter[tuple[int, str, bool]] = Counter()
    for step in range(600):
        item = pool[int(rng.integers(len(pool)))]
        op = rng.random()
        if op < 0.55:
            f.add(item)
            ref[item] += 1
        elif ref[item]:
            f.remove(item)
            ref[item] -= 1
        elif item not in f:  # an absent item the filter knows is absent cannot be removed
            with pytest.raises(InvalidParameterError):
                f.remove(item)
        if step % 50 == 0:
            f._check()
            present = [it for it, c in ref.items() if c]
            assert all(it in f for it in present)
    f._check()
    assert len(f) == sum(ref.values())


# -- algebra --------------------------------------------------------------------------------------


def test_union_and_intersection() -> None:
    rng = np.random.default_rng(6)
    cols = _cols(rng, 300)
    a = ParallelBloomFilter(3, 4, 1024)
    b = a.copy_empty()
    a.add_many([c[:200] for c in cols])
    b.add_many([c[100:] for c in cols])
    u = a | b
    i = a & b
    u._check()
    i._check()
    assert u.contains_many(cols).all()
    assert len(u) == 300 and len(i) == 100
    assert i.contains_many([c[100:200] for c in cols]).all()
    assert np.array_equal(u._counters.values(), np.maximum(a._counters.values(), b._counters.values()))
    assert np.array_equal(i._counters.values(), np.minimum(a._counters.values(), b._counters.values()))
    # members of only one side are rejected by the intersected table
    assert i.contains_many([c[:100] for c in cols]).mean() < 0.05
    # removal: refused after a union, allowed after an intersection
    with pytest.raises(InvalidParameterError, match="union"):
        u.remove(_rows(cols)[0])
    i.remove(_rows(cols)[150])
    i._check()
    assert u.counter_state == "union" and i.counter_state == "upper"


@pytest.mark.parametrize(
    "other",
    [
        dict(num_attributes=2),
        dict(num_hashes=5),
        dict(num_counters=1000),
        dict(counter_bits=8),
        dict(verification="basic"),
        dict(hash="md5"),
        dict(attributes=["a", "b", "c"]),
        dict(seed=1),
    ],
)
def test_incompatible_algebra(other: dict[str, object]) -> None:
    base = dict(num_attributes=3, num_hashes=4, num_counters=1024, counter_bits=4,
                verification="attenuated", hash="xxh64", seed=0)
    a = ParallelBloomFilter(**base)  # type: ignore[arg-type]
    b = ParallelBloomFilter(**{**base, **other})  # type: ignore[arg-type]
    with pytest.raises(IncompatibleFiltersError):
        a | b
    with pytest.raises(IncompatibleFiltersError):
        a.intersection(b)


def test_algebra_with_foreign_object() -> None:
    a = ParallelBloomFilter(3, 4, 1024)
    with pytest.raises(IncompatibleFiltersError):
        a.union(bloomkit.BloomFilter(num_bits=100, num_hashes=2))  # type: ignore[arg-type]


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(num_attributes=0, num_hashes=3, num_counters=10),
        dict(num_attributes=True, num_hashes=3, num_counters=10),
        dict(num_attributes=2, num_hashes=0, num_counters=10),
        dict(num_attributes=2, num_hashes=3.0, num_counters=10),
        dict(num_attributes=2, num_hashes=3, num_counters=0),
        dict(num_attributes=2, num_hashes=3, num_counters=10, counter_bits=5),
        dict(num_attributes=2, num_hashes=3, num_counters=10, verification="float"),
        dict(num_attributes=2, num_hashes=3, num_counters=10, hash="sha1"),
        dict(num_attributes=2, num_hashes=3, num_counters=10, seed=-1),
        dict(num_attributes=64, num_hashes=60, num_counters=2**20),  # V_a would overflow int64
    ],
)
def test_bad_parameters(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidParameterError, match="parameter of ParallelBloomFilter"):
        ParallelBloomFilter(**kwargs)  # type: ignore[arg-type]


def test_bad_items() -> None:
    f = ParallelBloomFilter(3, 3, 64)
    for bad in [(1, 2), (1, 2, 3, 4), "abc", 5, None]:
        with pytest.raises(InvalidParameterError, match="3 attribute values"):
            f.add(bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidParameterError):
            bad in f  # noqa: B015
        with pytest.raises(InvalidParameterError):
            f.remove(bad)  # type: ignore[arg-type]
    for bad_value in [object(), None, float("nan"), [1]]:
        with pytest.raises(InvalidParameterError):
            f.add((1, 2, bad_value))
    for batch, match in [([np.array([1, 2]), [3, 4]], "3 attribute columns"),
                         ([np.array([1, 2]), [3, 4], [5]], "equal length"),
                         ([[1, 2], [3, 4], [5, 6]], "rows or columns"), ([(1, 2, 3), (1, 2)], "row 1"),
                         ([np.array([1]), [2], [object()]], None), (np.zeros(5), "shape"), ("abc", None),
                         ([np.array([1.0]), np.array([2.0]), np.array([np.nan])], None), (["ab", "cd", "ef"], None)]:
        with pytest.raises(InvalidParameterError, match=match):
            f.add_many(batch)
    with pytest.raises(InvalidParameterError):
        f.contains_attribute(3, 1)
    assert len(f) == 0 and not f._counters.values().any()  # nothing was half-added
    f._check()


# -- persistence ----------------------------------------------------------------------------------


@pytest.mark.parametrize("hash_name", HASH_NAMES)
def test_round_trip(tmp_path: object, hash_name: str) -> None:
    rng = np.random.default_rng(8)
    cols = _cols(rng, 100)
    f = ParallelBloomFilter(3, 5, 300, counter_bits=8, verification="basic", hash=hash_name, seed=99)
    f.add_many(cols)
    f.add(_rows(cols)[0])
    g = ParallelBloomFilter.from_bytes(f.to_bytes())
    assert g == f
    g._check()
    assert g.contains_many(cols).all()
    path = tmp_path / "pbf.bk"  # type: ignore[operator]
    f.save(path)
    assert bloomkit.load(path) == f
    assert pickle.loads(pickle.dumps(f)) == f
    u = f | f.copy_empty()
    assert ParallelBloomFilter.from_bytes(u.to_bytes()).counter_state == "union"


def test_inconsistent_state_raises_format_error() -> None:
    f = ParallelBloomFilter(2, 3, 16)
    f.add(("a", 1))
    params, arrays = f._to_state()

    def load(p: dict[str, object], a: dict[str, np.ndarray], hash_id: int = HASH_XXH64) -> None:
        ParallelBloomFilter.from_bytes(pack(f._STRUCTURE, p, a, hash_id=hash_id, seed=0))

    load(params, arrays)  # the untouched state loads
    cases = [
        ({**params, "num_items": 2}, arrays),
        ({**params, "num_hashes": 0}, arrays),
        ({**params, "state": "weird"}, arrays),
        ({**params, "extra": 1}, arrays),
        ({**params, "overflowed": "x"}, arrays),
        ({**params, "overflowed": 1}, arrays),
        ({**params, "key_types": [["str"]]}, arrays),
        ({**params, "attributes": ["a"]}, arrays),
        ({**params, "attributes": ["a", "a"]}, arrays),
        (params, {**arrays, "values": np.array([10**9], np.int64)}),
        (params, {**arrays, "values": np.array([5, 3], np.int64), "counts": np.array([1, 1], np.int64)}),
        (params, {**arrays, "counts": np.array([0], np.int64)}),
        (params, {**arrays, "counters": arrays["counters"][:-1]}),
        (params, {**arrays, "counters": np.zeros_like(arrays["counters"])}),
    ]
    for p, a in cases:
        with pytest.raises(FormatError):
            load(p, a)
    for other_id in (0, 2, 4, 99):  # the filter implements ids 1 (xxh64) and 3 (md5) only
        with pytest.raises(FormatError, match="hash id"):
            load(params, arrays, hash_id=other_id)


# -- verification table ---------------------------------------------------------------------------


@pytest.mark.parametrize("key_bits", [32, 64])
def test_verification_table(key_bits: int) -> None:
    rng = np.random.default_rng(9)
    t = VerificationTable(key_bits=key_bits)
    vals = rng.integers(0, 10**6, 5000)
    t.add_many(vals)
    t._check()
    ref = Counter(vals.tolist())
    assert t.count_many(np.array(list(ref))).tolist() == list(ref.values())
    assert t.total == 5000 and t.distinct == len(ref)
    t.remove_many(vals[:4000])
    t._check()
    ref.subtract(vals[:4000].tolist())
    keys = np.array(list(ref))
    assert t.count_many(keys).tolist() == [ref[k] for k in keys.tolist()]
    with pytest.raises(InvalidParameterError):
        t.remove_many(np.array([int(vals[4500]), 10**7]))
    t._check()
    assert t.total == 1000
    k, c = t.items()
    assert VerificationTable.from_items(k, c, key_bits) == t
    with pytest.raises(InvalidParameterError):
        t.add_many([-1])
    if key_bits == 32:
        with pytest.raises(InvalidParameterError):
            t.add_many([2**32 - 1])
    with pytest.raises(InvalidParameterError):
        VerificationTable(key_bits=16)


def test_wide_verification_values_use_64_bit_keys() -> None:
    rng = np.random.default_rng(19)
    f = ParallelBloomFilter(2, 30, 1000)
    assert f._table.key_bits == 64 and f._vmax > 2**32
    cols = _cols(rng, 200, 2)
    f.add_many(cols)
    f._check()
    assert f.contains_many(cols).all()
    assert ParallelBloomFilter.from_bytes(f.to_bytes()) == f
    f.remove(_rows(cols)[0])
    f._check()
    assert 0 <= f.predicted_fpr() < 1e-6  # local normal approximation of the V distribution
    assert ParallelBloomFilter(3, 7, 1280)._table.key_bits == 32


# -- SBF baseline ---------------------------------------------------------------------------------


def test_concatenated_bloom_filter() -> None:
    rng = np.random.default_rng(10)
    cols = [rng.integers(0, 100, 500), rng.random(500), rng.integers(0, 2, 500).astype(bool)]
    rows = _rows(cols)
    keys = concat_keys(cols, 3)
    assert keys.to_pylist() == [concat_key(r) for r in rows]
    assert concat_keys(rows, 3).equals(keys)
    with pytest.raises(InvalidParameterError, match="named columns"):
        concat_keys(pa.table({"a": cols[0], "b": cols[1], "c": cols[2]}), 3)
    assert concat_key(("ab", "c")) != concat_key(("a", "bc"))
    s = ConcatenatedBloomFilter(3, num_bits=8192, num_hashes=4)
    assert s.size_in_bits == 8192
    assert not hasattr(s, "nbytes")
    s.add_many(cols)
    assert s.contains_many(cols).all() and all(r in s for r in rows)
    c = ConcatenatedBloomFilter(3, capacity=500, fpr=0.01, counting=True)
    c.add(rows[0])
    c.remove(rows[0])
    with pytest.raises(InvalidParameterError):
        s.remove(rows[0])
    with pytest.raises(InvalidParameterError):
        s.add((1, 2))


# A format-1 file of the paper's hash, written by the format-1 code: refused (format 1 predates
# release 0.1.0; today's files are pinned by tests/golden/v2/)
V1_FILES = {
    "md5": (
        "424c4f4f4d4b4954010000006d756c7469617474722e506172616c6c656c426c6f6f6d46696c746572000000"
        "030000000500000000000000f900000030000000000000007b225f5f6172726179735f5f223a5b5b22636f75"
        "6e74657273222c227c7531222c5b31365d5d2c5b2276616c756573222c223c6938222c5b325d5d2c5b22636f"
        "756e7473222c223c6938222c5b325d5d5d2c22636f756e7465725f62697473223a342c22686173685f66756e"
        "6374696f6e223a226d6435222c226e756d5f61747472696275746573223a322c226e756d5f636f756e746572"
        "73223a382c226e756d5f686173686573223a322c226e756d5f6974656d73223a332c226f766572666c6f7765"
        "64223a66616c73652c227374617465223a226578616374222c22766572696669636174696f6e223a22617474"
        "656e7561746564227d000000002001000210000020001000000100020e000000000000001700000000000000"
        "0200000000000000010000000000000041f07620"
    ),
}
GOLDEN_MD5 = Path(__file__).parent / "golden" / "v2" / "multiattr.ParallelBloomFilter.md5.bkf"


def _golden_example(hash_name: str) -> ParallelBloomFilter:
    f = ParallelBloomFilter(2, 2, 8, hash=hash_name, seed=5)
    f.add(("a", 1))
    f.add(("b", 2.5))
    f.add(("a", 1))
    return f


@pytest.mark.parametrize("hash_name", ["md5"])
def test_format_1_files_of_the_md5_hash_are_refused(hash_name: str) -> None:
    with pytest.raises(FormatError, match="format version 1"):
        ParallelBloomFilter.from_bytes(bytes.fromhex(V1_FILES[hash_name]))


def test_golden_file_of_the_md5_hash() -> None:
    """The paper's hash in today's format (the conformance suite pins the default hash)."""
    raw = _golden_example("md5").to_bytes()
    assert raw == GOLDEN_MD5.read_bytes()
    g = bloomkit.load(GOLDEN_MD5)
    assert g == _golden_example("md5") and g.hash == "md5" and g.key_types == ("float", "int", "str")


# -- the data front door: every batch form against a multiset model --------------------------------

NAMES = ["src", "dst", "port"]
FORMS = ["rows", "rows_view", "rows_2d", "columns_numpy", "columns_mixed", "columns_arrow",
         "columns_series_shuffled", "pandas_shuffled", "arrow_table_reordered", "record_batch",
         "mapping_reordered", "structured", "polars"]


def _pool(rng: np.random.Generator, n: int, offset: int = 0) -> list[tuple[str, str, int]]:
    return [(f"10.{offset}.{i // 256}.{i % 256}", f"dst-{int(d)}", int(port))
            for i, d, port in zip(range(n), rng.integers(0, 50, n), rng.integers(1, 1024, n), strict=True)]


def _as_form(form: str, items: list[tuple[str, str, int]], rng: np.random.Generator) -> object:
    """``items`` in one of the accepted batch forms (tables with shuffled index / reordered columns)."""
    src, dst, port = (list(c) for c in zip(*items, strict=True))
    named = {"src": src, "dst": dst, "port": port}
    order = ["port", "src", "dst"]  # never the attribute order
    if form == "rows":
        return items
    if form == "rows_view":  # a sized collection that is not a list (a generator is refused: no length)
        return dict(enumerate(items)).values()
    if form == "columns_mixed":  # one array, the other columns lists
        return (src, np.array(dst), port)
    if form == "rows_2d":
        return np.array(items, dtype=object)
    if form == "columns_numpy":
        return [np.array(src), np.array(dst), np.array(port)]
    if form == "columns_arrow":
        return [pa.array(src), pa.chunked_array([dst[:3], dst[3:]]), pa.array(port)]
    if form == "mapping_reordered":
        return {k: named[k] for k in order}
    if form == "structured":
        return np.array(items, dtype=[("src", "U20"), ("dst", "U20"), ("port", "i8")])
    if form in ("arrow_table_reordered", "record_batch"):
        t = pa.table({k: named[k] for k in order})
        return t if form == "arrow_table_reordered" else t.to_batches()[0]
    if form == "polars":
        pl = pytest.importorskip("polars")
        return pl.DataFrame({k: named[k] for k in order})
    pd = pytest.importorskip("pandas")
    index = rng.permutation(len(items)) + 1000
    if form == "columns_series_shuffled":  # each Series with its own shuffled index: read by position
        return [pd.Series(c, index=rng.permutation(len(items))) for c in (src, dst, port)]
    df = pd.DataFrame({k: named[k] for k in order}, index=index)
    df["src"] = df["src"].astype("category")
    df["port"] = df["port"].astype("Int64")
    return df


@pytest.mark.parametrize("form", FORMS)
def test_batches_against_a_multiset_model(form: str) -> None:
    """add_many / remove_many / contains_many in every accepted form give exactly what adding,
    removing and querying item by item gives (a brute-force multiset of items), with no false
    negative, for tables with shuffled indices and reordered columns."""
    rng = np.random.default_rng(31)
    pool = _pool(rng, 300)
    absent = _pool(rng, 200, offset=1)
    f = ParallelBloomFilter(3, 6, 4096, counter_bits=8, seed=4, attributes=NAMES)
    single = f.copy_empty()
    model: Counter[tuple[str, str, int]] = Counter()
    for _step in range(4):
        batch = [pool[i] for i in rng.integers(0, len(pool), 80)]  # repeats included
        f.add_many(_as_form(form, batch, rng))
        model.update(batch)
        for it in batch:
            single.add(it)
        stored = list(model.elements())
        gone = [stored[i] for i in rng.choice(len(stored), 25, replace=False)]
        f.remove_many(_as_form(form, gone, rng))
        model.subtract(gone)
        for it in gone:
            single.remove(it)
        f._check()
        assert f == single and len(f) == sum(model.values())
        probe = pool + absent
        hits = f.contains_many(_as_form(form, probe, rng))
        assert hits.tolist() == [it in single for it in probe]
        assert all(hits[i] for i, it in enumerate(probe) if model[it] > 0), "a false negative"
    assert f.attribute_key_types == (("str",), ("str",), ("int",))


def test_named_tables_need_names_and_exact_columns() -> None:
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(32)
    items = _pool(rng, 10)
    unnamed = ParallelBloomFilter(3, 4, 256)
    for form in ("pandas_shuffled", "arrow_table_reordered", "record_batch", "mapping_reordered", "structured"):
        with pytest.raises(InvalidParameterError, match="no attribute names"):
            unnamed.add_many(_as_form(form, items, rng))
        with pytest.raises(InvalidParameterError, match="no attribute names"):
            unnamed.contains_many(_as_form(form, items, rng))
    named = ParallelBloomFilter(3, 4, 256, attributes=NAMES)
    df = pd.DataFrame(_as_form("mapping_reordered", items, rng))
    with pytest.raises(InvalidParameterError, match="no column 'dst'"):
        named.add_many(df.drop(columns=["dst"]))
    with pytest.raises(InvalidParameterError, match="column 'extra'"):
        named.add_many(df.assign(extra=1))
    with pytest.raises(InvalidParameterError, match=r"\['src'\].*position 3"):
        named.add_many(df.assign(src=[None if i == 3 else s for i, s in enumerate(df["src"])]))
    with pytest.raises(InvalidParameterError, match="no column 'src'"):
        named.remove_many({"dst": [], "port": []})
    for bad in (np.zeros(5), np.zeros((4, 2)), "abc", 5, [1, 2, 3]):
        with pytest.raises(InvalidParameterError):
            named.add_many(bad)
    assert len(unnamed) == len(named) == 0 and not named._counters.values().any()


def test_mapping_items_and_attribute_names() -> None:
    f = ParallelBloomFilter(3, 4, 256, attributes=NAMES)
    f.add({"port": 80, "dst": "b", "src": "a"})
    assert ("a", "b", 80) in f and {"src": "a", "dst": "b", "port": 80} in f
    assert f.contains_attribute("port", 80) and f.contains_attribute(2, 80)
    assert f.contains_attribute_many("dst", ["b", "zz"]).tolist()[0]
    for bad in ({"src": "a", "dst": "b"}, {"src": "a", "dst": "b", "port": 80, "x": 1}):
        with pytest.raises(InvalidParameterError, match="mapping of the attributes"):
            f.add(bad)
    with pytest.raises(InvalidParameterError, match="one of 'src'"):
        f.contains_attribute("nope", 1)
    g = ParallelBloomFilter(3, 4, 256)
    with pytest.raises(InvalidParameterError, match="needs attribute names"):
        g.add({"src": "a", "dst": "b", "port": 80})
    with pytest.raises(InvalidParameterError, match="no attribute names"):
        g.contains_attribute("src", "a")
    assert ParallelBloomFilter(2, 3, 64, attributes=("a", "b")).attributes == ("a", "b")
    for names in (["a", "b"], ["a", "a", "b"], ["a", "b", 3], "abc", ["a", "", "b"]):
        with pytest.raises(InvalidParameterError, match="'attributes'"):
            ParallelBloomFilter(3, 4, 256, attributes=names)  # type: ignore[arg-type]
    assert len(f) == 1


# -- protocol, surface, deprecations ------------------------------------------------------------------


def test_shared_protocol_surface() -> None:
    import json

    from bloomkit._protocols import MembershipFilter, Structure

    f = ParallelBloomFilter(3, 4, 999, counter_bits=8, attributes=NAMES)
    assert isinstance(f, Structure) and isinstance(f, MembershipFilter) and ParallelBloomFilter.exact_len
    f.add_many(_pool(np.random.default_rng(33), 100))
    assert isinstance(f.size_in_bits, int)
    assert f.size_in_bits == 3 * 4 * 999 * 8 + f._table.capacity * (32 + 32)
    rate = f.predicted_fpr()
    assert isinstance(rate, float) and isinstance(f.predicted_fpr(query="recombined"), float)
    info = f.info()
    json.dumps(info)
    assert info["count"] == len(f) == 100 and info["size_in_bits"] == f.size_in_bits
    assert info["predicted_fpr"] == rate and info["attributes"] == NAMES and not info["overfilled"]
    c = f.copy()
    assert c == f and c._counters.data is not f._counters.data
    c.add(("x", "y", 1))
    assert len(c) == 101 and len(f) == 100
    c.clear()
    c._check()
    assert len(c) == 0 and not c._counters.values().any() and c.key_types == () and c.counter_state == "exact"
    assert c.copy_empty() == c
    c.update(_pool(np.random.default_rng(33), 100))
    assert c == f
    d = f.copy_empty()
    d.add(("x", "y", 1))
    d.update(f)  # a filter: in-place union
    assert len(d) == 101 and d.counter_state == "union" and ("x", "y", 1) in d
    d |= f
    assert d == f | d


def test_the_drafts_names_are_refused() -> None:
    """0.1.0 is the first release: hash_function=, nbytes and options by position are gone."""
    for call in (lambda: ParallelBloomFilter(2, 3, 64, hash_function="md5"),
                 lambda: ParallelBloomFilter(2, 3, 64, 8, "basic"),
                 lambda: ParallelBloomFilter(2, 3, 64).predicted_fpr("recombined")):
        with pytest.raises(TypeError):
            call()
    a = ParallelBloomFilter(2, 3, 64, hash="md5")
    assert a.hash == "md5" and not hasattr(a, "hash_function") and not hasattr(a, "nbytes")


def test_key_types_per_attribute() -> None:
    f = ParallelBloomFilter(3, 4, 256)
    assert f.key_types == () and f.attribute_key_types == ((), (), ())
    f.add(("a", 1, 2.5))
    f.add_many([np.array([b"x"]), np.array([True]), ["s"]])
    assert f.attribute_key_types == (("bytes", "str"), ("bool", "int"), ("float", "str"))
    assert f.key_types == ("bool", "bytes", "float", "int", "str")
    assert ParallelBloomFilter.from_bytes(f.to_bytes()).attribute_key_types == f.attribute_key_types
    g = f.copy_empty()
    g.add_positions(f.positions([("a", 1, 2.5)]))
    assert g.key_types == ("unknown",)
    with pytest.raises(InvalidParameterError):
        f.add((1, 2, None))
    assert len(f) == 2


def test_positions_api_equals_the_batch_api() -> None:
    rng = np.random.default_rng(35)
    items = _pool(rng, 200)
    for hash_name in HASH_NAMES:
        f = ParallelBloomFilter(3, 5, 700, counter_bits=8, hash=hash_name, seed=2)
        g = f.copy_empty()
        f.add_many(items)
        pos = f.positions(items)
        assert pos.shape == (200, 3, 5) and pos.dtype == np.int64 and 0 <= pos.min() and pos.max() < 700
        g.add_positions(pos)
        assert g == f
        probe = _pool(rng, 100, offset=2) + items[:50]
        ppos = g.positions(probe)
        assert np.array_equal(g.contains_positions(ppos), f.contains_many(probe))
        assert np.array_equal(g.pbf_stage_positions(ppos), f.pbf_stage_many(probe))
        for bad in (pos[:, :2], pos.astype(float), pos + 700, -pos - 1, pos[0]):
            with pytest.raises(InvalidParameterError, match="'positions'"):
                g.add_positions(bad)
        assert g == f


# -- contract: hostile files, threads -------------------------------------------------------------


@pytest.mark.parametrize("log2_counters", [30, 34, 40])
def test_files_declaring_huge_sizes_are_refused_before_allocating(log2_counters: int) -> None:
    """A valid-CRC file declaring 2^30..2^40 counters (128 MiB .. 512 GiB) with a small array:
    FormatError, and nothing of the declared size is allocated."""
    import tracemalloc

    f = ParallelBloomFilter(2, 2, 16)
    f.add(("a", 1))
    params, arrays = f._to_state()
    forged = {**params, "num_attributes": 16, "num_hashes": 16, "num_counters": 1 << (log2_counters - 8),
              "verification": "basic", "key_types": [["str"]] * 16}
    raw = pack(f._STRUCTURE, forged, arrays, hash_id=HASH_XXH64, seed=0)
    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match="'counters' array"):
            ParallelBloomFilter.from_bytes(raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 22


def test_concurrent_writers_removers_and_readers() -> None:
    """4 threads add, remove and re-add while 2 threads query: an item added before a query
    started is always found, and the final count is exact; two filters merged into each other
    from two threads at once (``a |= b`` and ``b |= a``) do not deadlock."""
    import threading

    f = ParallelBloomFilter(3, 4, 1 << 12, counter_bits=16, seed=6)
    base = [_pool(np.random.default_rng(40 + w), 300, offset=w) for w in range(4)]
    churn = [_pool(np.random.default_rng(50 + w), 100, offset=10 + w) for w in range(4)]
    for items in base:
        f.add_many(items)
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for _ in range(15):
                f.add_many(churn[w])
                for it in churn[w][:10]:
                    f.remove(it)
                f.remove_many(churn[w][10:])
        except BaseException as e:  # reported below
            errors.append(e)

    def reader() -> None:
        try:
            while not stop.is_set():
                for items in base:
                    assert f.contains_many(items).all(), "a stored item was not found"
        except BaseException as e:
            errors.append(e)

    readers = [threading.Thread(target=reader, daemon=True) for _ in range(2)]
    writers = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(4)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join(60)
    stop.set()
    for t in readers:
        t.join(60)
    assert not any(t.is_alive() for t in readers + writers), "a thread hangs"
    assert not errors, errors[0]
    f._check()
    assert len(f) == 1200
    a, b = f.copy(), f.copy_empty()
    b.add(("x", "y", 1))

    def merge(x: ParallelBloomFilter, y: ParallelBloomFilter) -> None:
        for _ in range(20):
            x |= y

    ts = [threading.Thread(target=merge, args=pair, daemon=True) for pair in ((a, b), (b, a))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not any(t.is_alive() for t in ts), "a |= b and b |= a deadlock"
    assert ("x", "y", 1) in a and all(a.contains_many(items).all() for items in base)
