"""Tests of bloomkit.multiattr (document 004): parallel Bloom filters + verification table."""

from __future__ import annotations

import hashlib
import pickle
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
from _damage import assert_damage_detected

import bloomkit
from bloomkit import _hashing
from bloomkit._format import pack
from bloomkit._hashing import HASH_XXH64
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


@pytest.mark.parametrize("hash_function", HASH_NAMES)
@pytest.mark.parametrize("verification", ["attenuated", "basic"])
def test_add_query_single_and_batch_agree(hash_function: str, verification: str) -> None:
    rng = np.random.default_rng(1)
    cols = _cols(rng, 300)
    a = ParallelBloomFilter(3, 5, 512, verification=verification, hash_function=hash_function, seed=7)
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
    pos = a._item_positions(row)[0]
    w = model.verification_weights(5, verification)
    assert a.verification_value(row) == int((pos * w).sum())


def test_attenuated_value_is_exact_integer_form_of_the_paper() -> None:
    f = ParallelBloomFilter(2, 4, 1000)
    item = ("a", 3)
    pos = f._item_positions(item)[0]
    paper = sum(pos[i, j] / 2 ** (j + 1) for i in range(2) for j in range(4))  # sum H_ij / 2^j
    assert f.verification_value(item) == paper * 2**4
    assert f.verification_value(item) == int(sum(pos[i, j] * 2 ** (4 - j - 1) for i in range(2) for j in range(4)))


def test_md5_hash_is_the_papers() -> None:
    f = ParallelBloomFilter(2, 4, 1280, hash_function="md5")
    pos = f._item_positions(("abc", b"xy"))[0]
    d = hashlib.md5(b"\x01abc").digest()
    assert pos[0].tolist() == [int.from_bytes(d[4 * w : 4 * w + 4], "big") % 1280 for w in range(4)]
    d = hashlib.md5(b"\x02xy").digest()
    assert pos[1].tolist() == [int.from_bytes(d[4 * w : 4 * w + 4], "big") % 1280 for w in range(4)]
    g = ParallelBloomFilter(1, 7, 1280, hash_function="md5")
    assert g._item_positions(("abc",))[0, 0, :4].tolist() == pos[0].tolist()


def test_default_hash_is_the_foundations_positions() -> None:
    """hash_function="xxh64" = hash id 1: attribute i's positions are exactly
    ``bloomkit._hashing.positions(h1_i, q, m)`` of its h1 (seeded with ``attribute_seed``), in
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
    assert f._item_positions(rows[3]).tolist() == expected[3:4].tolist()
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
    assert f.pbf_stage_many(probe).all() and f._pbf_stage_positions(ppos).all()
    hits = f.contains_many(probe)
    assert np.array_equal(hits, f._query_positions(ppos))
    assert hits[(idx[0] == idx[1]) & (idx[1] == idx[2])].all()  # stored items among the probes
    assert hits.mean() < 0.05  # recombinations are rejected by the table


@pytest.mark.parametrize("kind", ["arrow_table", "record_batch", "structured", "2d", "lists", "strings"])
def test_input_forms(kind: str) -> None:
    rng = np.random.default_rng(2)
    ints = rng.integers(0, 1000, 50)
    floats = rng.random(50)
    words = [f"w{i}" for i in rng.integers(0, 10**6, 50)]
    rows = list(zip(ints.tolist(), floats.tolist(), words, strict=True))
    if kind == "arrow_table":
        data = pa.table({"a": ints, "b": floats, "c": words})
    elif kind == "record_batch":
        data = pa.record_batch([pa.array(ints), pa.array(floats), pa.array(words)], names=["a", "b", "c"])
    elif kind == "structured":
        data = np.array(rows, dtype=[("a", "i8"), ("b", "f8"), ("c", "U12")])
    elif kind == "2d":
        rows = [(int(a), int(b), int(c)) for a, b, c in rng.integers(0, 100, (50, 3))]
        data = np.array(rows)
    elif kind == "lists":
        data = [ints.tolist(), floats.tolist(), words]
    else:
        data = (np.array(ints), np.array(floats), np.array(words))
    f = ParallelBloomFilter(3, 4, 256)
    f.add_many(data)
    f._check()
    assert f.contains_many(data).all()
    g = f.copy_empty()
    for r in rows:
        g.add(r)
    assert f == g


def test_pandas_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    f = ParallelBloomFilter(2, 3, 64)
    f.add_many(df)
    assert (1, "x") in f and (3, "z") in f


@pytest.mark.parametrize("hash_function", HASH_NAMES)
def test_contains_attribute(hash_function: str) -> None:
    rng = np.random.default_rng(3)
    cols = _cols(rng, 200)
    f = ParallelBloomFilter(3, 6, 4096, hash_function=hash_function)
    f.add_many(cols)
    for i in range(3):
        assert f.contains_attribute_many(i, cols[i]).all()
        assert f.contains_attribute(i, int(cols[i][5]))
    # a value stored only as attribute 0 is (almost surely) not seen in submatrix 1
    fresh = rng.integers(0, 2**62, 2000)
    g = ParallelBloomFilter(2, 6, 4096, hash_function=hash_function)
    g.add_many([fresh, rng.integers(0, 2**62, 2000)])
    assert g.contains_attribute_many(0, fresh).all()
    assert g.contains_attribute_many(1, fresh).mean() < 0.01


def test_recombined_items_are_rejected_by_the_table() -> None:
    """The PBF stage alone accepts attribute combinations of different items (Section 3.2)."""
    f = ParallelBloomFilter(2, 4, 2048)
    f.add(("alice", "paris"))
    f.add(("bob", "rome"))
    g = f.copy_empty()
    g.add_many([["alice", "bob"], ["paris", "rome"]])
    assert g == f
    assert f.pbf_stage_many([["alice"], ["rome"]]).all()
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
    assert f.pbf_stage_many([["hot"], [80]]).all()  # cannot be cleared: documented
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
        dict(hash_function="md5"),
        dict(seed=1),
    ],
)
def test_incompatible_algebra(other: dict[str, object]) -> None:
    base = dict(num_attributes=3, num_hashes=4, num_counters=1024, counter_bits=4,
                verification="attenuated", hash_function="xxh64", seed=0)
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
        dict(num_attributes=2, num_hashes=3, num_counters=10, hash_function="sha1"),
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
    with pytest.raises(InvalidParameterError, match="3 attribute columns"):
        f.add_many([[1, 2], [3, 4]])
    with pytest.raises(InvalidParameterError, match="equal length"):
        f.add_many([[1, 2], [3, 4], [5]])
    with pytest.raises(InvalidParameterError):
        f.add_many([[1], [2], [object()]])
    with pytest.raises(InvalidParameterError):
        f.add_many([np.array([1.0]), np.array([2.0]), np.array([np.nan])])
    with pytest.raises(InvalidParameterError):
        f.add_many(np.zeros(5))
    with pytest.raises(InvalidParameterError):
        f.add_many("abc")
    with pytest.raises(InvalidParameterError):
        f.add_many(["ab", "cd", "ef"])
    with pytest.raises(InvalidParameterError):
        f.contains_attribute(3, 1)
    assert len(f) == 0 and not f._counters.values().any()  # nothing was half-added
    f._check()


# -- persistence ----------------------------------------------------------------------------------


@pytest.mark.parametrize("hash_function", HASH_NAMES)
def test_round_trip(tmp_path: object, hash_function: str) -> None:
    rng = np.random.default_rng(8)
    cols = _cols(rng, 100)
    f = ParallelBloomFilter(3, 5, 300, counter_bits=8, verification="basic", hash_function=hash_function, seed=99)
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


def test_damaged_files() -> None:
    f = ParallelBloomFilter(2, 2, 8)
    f.add(("a", 1))
    f.add(("b", 2))
    assert_damage_detected(f.to_bytes(), ParallelBloomFilter.from_bytes, 0x5A)
    with pytest.raises(FormatError):
        ParallelBloomFilter.from_bytes(bloomkit.BloomFilter(num_bits=64, num_hashes=2).to_bytes())


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
        (params, {**arrays, "values": np.array([10**9], np.int64)}),
        (params, {**arrays, "values": np.array([5, 3], np.int64), "counts": np.array([1, 1], np.int64)}),
        (params, {**arrays, "counts": np.array([0], np.int64)}),
        (params, {**arrays, "counters": arrays["counters"][:-1]}),
        (params, {**arrays, "counters": np.zeros_like(arrays["counters"])}),
    ]
    for p, a in cases:
        with pytest.raises(FormatError):
            load(p, a)
    for other_id in (0, 2, 3, 4, 99):  # only id 1 (the foundation's XXH64 + probes) is "xxh64"
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
    assert concat_keys([c.tolist() for c in cols], 3).equals(keys)
    assert concat_key(("ab", "c")) != concat_key(("a", "bc"))
    s = ConcatenatedBloomFilter(3, num_bits=8192, num_hashes=4)
    s.add_many(cols)
    assert s.contains_many(cols).all() and all(r in s for r in rows)
    c = ConcatenatedBloomFilter(3, capacity=500, fpr=0.01, counting=True)
    c.add(rows[0])
    c.remove(rows[0])
    with pytest.raises(InvalidParameterError):
        s.remove(rows[0])
    with pytest.raises(InvalidParameterError):
        s.add((1, 2))


# -- model ----------------------------------------------------------------------------------------


def test_pmf_matches_enumeration() -> None:
    import itertools

    for ver in ("basic", "attenuated"):
        p, q, m = 2, 2, 5
        w = model.verification_weights(q, ver)
        counts = Counter(
            int(sum(w[j] * h[i * q + j] for i in range(p) for j in range(q)))
            for h in itertools.product(range(m), repeat=p * q)
        )
        pmf = model.verification_pmf(p, q, m, ver)
        exact = np.zeros(model.max_verification_value(p, q, m, ver) + 1)
        for v, c in counts.items():
            exact[v] = c / m ** (p * q)
        assert np.allclose(pmf, exact, atol=1e-12)
        assert model.collision_probability(p, q, m, ver) == pytest.approx(float((exact**2).sum()), rel=1e-9)


def test_model_functions() -> None:
    # local limit approximation close to the exact value
    for ver in ("basic", "attenuated"):
        exact = model.collision_probability(3, 7, 1280, ver)
        approx = model.collision_probability(3, 7, 1280, ver, exact=False)
        assert approx == pytest.approx(exact, rel=0.03)
    # attenuation reduces collisions by about sqrt((4^q - 1) / (3 q))
    ratio = model.collision_probability(4, 6, 1280, "basic") / model.collision_probability(4, 6, 1280)
    assert ratio == pytest.approx(np.sqrt((4**6 - 1) / 18), rel=0.05)
    a, b, u = model.theorem1_union_fprs(100, 150, 200, 1280, 6)
    assert u >= max(a, b)
    # Theorem 2: AND of filters is at least as full as the filter of the intersection
    assert model.bf_intersection_fpr(300, 300, 100, 1280, 6) >= model.sbf_fpr(100, 1280, 6)
    assert model.bf_union_fpr(300, 300, 100, 1280, 6) == pytest.approx(model.sbf_fpr(500, 1280, 6))
    assert 0 < model.theorem2_probability(300, 300, 100, 1280, 6) < 1
    assert model.pbf_union_fpr(300, 300, 100, 3, 6, 1280) < model.bf_union_fpr(300, 300, 100, 1280, 6)
    with pytest.raises(InvalidParameterError):
        model.two_step_fpr(10, 1, 3, 100, query="recombined")
    with pytest.raises(InvalidParameterError):
        model.two_step_fpr(10, 2, 3, 100, query="other")
    with pytest.raises(InvalidParameterError):
        model.verification_pmf(10, 30, 2**20)
    f = ParallelBloomFilter(2, 3, 64)
    assert f.predicted_fpr() == 0.0


# golden bytes: pin the container layout and both the paper's and the default hash (the default
# "xxh64" is hash id 1: the foundation's XXH64 + probe positions)
GOLDEN = {
    "xxh64": (
        "424c4f4f4d4b4954010000006d756c7469617474722e506172616c6c656c426c6f6f6d46696c746572000000"
        "010000000500000000000000fb00000030000000000000007b225f5f6172726179735f5f223a5b5b22636f75"
        "6e74657273222c227c7531222c5b31365d5d2c5b2276616c756573222c223c6938222c5b325d5d2c5b22636f"
        "756e7473222c223c6938222c5b325d5d5d2c22636f756e7465725f62697473223a342c22686173685f66756e"
        "6374696f6e223a227878683634222c226e756d5f61747472696275746573223a322c226e756d5f636f756e74"
        "657273223a382c226e756d5f686173686573223a322c226e756d5f6974656d73223a332c226f766572666c6f"
        "776564223a66616c73652c227374617465223a226578616374222c22766572696669636174696f6e223a2261"
        "7474656e7561746564227d000000300000021000002010000300000012000000000000001900000000000000"
        "020000000000000001000000000000000a2381ec"
    ),
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


@pytest.mark.parametrize("hash_function", ["xxh64", "md5"])
def test_golden_bytes(hash_function: str) -> None:
    f = ParallelBloomFilter(2, 2, 8, hash_function=hash_function, seed=5)
    f.add(("a", 1))
    f.add(("b", 2.5))
    f.add(("a", 1))
    golden = bytes.fromhex(GOLDEN[hash_function])
    assert f.to_bytes() == golden
    g = ParallelBloomFilter.from_bytes(golden)
    assert g == f and ("a", 1) in g and ("b", 2.5) in g
    g.remove(("a", 1))
    assert ("a", 1) in g  # stored twice
