"""SplitBlockBloomFilter (native mode): sizing, protocol, folding, algebra, persistence, bad
input, and the chunked / threaded batch passes it shares with BloomFilter (item 4 of issue 13:
identical bits to the one-shot path, memory O(chunk))."""

from __future__ import annotations

import doctest
import json
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import bloomkit
from bloomkit import (
    BloomFilter,
    FormatError,
    IncompatibleFiltersError,
    InvalidParameterError,
    SplitBlockBloomFilter,
    parquet,
    splitblock,
)
from bloomkit._engine import parallel as _parallel
from bloomkit._engine.hashing import hash_many
from bloomkit._engine.lazy import kernels as K
from bloomkit._engine.lazy import splitblock_kernels as SK
from bloomkit.splitblock import split_block_fpr, split_block_num_blocks

S = SplitBlockBloomFilter


def test_doctests():
    for mod in (splitblock.model, splitblock.plain, parquet, _parallel):
        res = doctest.testmod(mod)
        assert res.failed == 0
    assert doctest.testmod(splitblock.model).attempted > 0


def test_sizing_meets_the_model():
    for n, p in ((1000, 0.01), (100_000, 0.01), (100_000, 0.001), (7, 0.5), (1, 1e-6)):
        f = S(capacity=n, fpr=p)
        B = f.num_blocks
        assert B == split_block_num_blocks(n, p)
        assert split_block_fpr(n, B) <= p
        assert B == 1 or split_block_fpr(n, B - 1) > p  # the fewest blocks that do
        assert f.size_in_bits == 512 * B and f.words.shape == (8 * B,)
    # bits per key beside the standard filter's 9.585 / 14.378
    assert 10.0 < S(capacity=10**6, fpr=0.01).size_in_bits / 1e6 < 10.2
    assert 15.6 < S(capacity=10**6, fpr=0.001).size_in_bits / 1e6 < 15.8
    assert S(num_blocks=10).num_blocks == 10 and S(100, num_blocks=10).capacity == 100


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"capacity": 10, "fpr": 1.5}, "'fpr'"),
        ({"capacity": 10, "fpr": 0}, "'fpr'"),
        ({"capacity": 10, "fpr": float("nan")}, "'fpr'"),
        ({"capacity": 0, "fpr": 0.1}, "'capacity'"),
        ({"capacity": 2.5, "fpr": 0.1}, "'capacity'"),
        ({"capacity": 10}, "capacity and fpr"),
        ({}, "capacity and fpr"),
        ({"capacity": 10, "fpr": 0.1, "num_blocks": 4}, "not both"),
        ({"num_blocks": 0}, "'num_blocks'"),
        ({"num_blocks": "4"}, "'num_blocks'"),
        ({"num_blocks": True}, "'num_blocks'"),
        ({"num_blocks": 4, "seed": -1}, "'seed'"),
        ({"capacity": 10**18, "fpr": 1e-300}, "'fpr'"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        S(**kwargs)


def test_storage_is_cache_line_aligned_everywhere():
    f = S(num_blocks=60, seed=2)
    f.add_many(np.arange(500))
    made = [f, f.copy(), f.folded(6), f | f, f & f, bloomkit.loads(f.to_bytes()), pickle.loads(pickle.dumps(f))]
    g = f.copy()
    g.fold(5)
    made.append(g)
    for x in made:
        assert x.words.ctypes.data % 64 == 0
        x._check()


def test_no_false_negatives_every_input_kind_and_single_keys_agree():
    rng = np.random.default_rng(1)
    ints = rng.integers(-(2**62), 2**62, 3000)
    strs = [f"user-{i}" for i in range(3000)]
    f = S(capacity=20_000, fpr=0.01, seed=3)
    f.add_many(ints)
    f.update(strs[:1000])
    f.add_many(pa.array(strs[1000:2000]))
    f.add_many(np.array(strs[2000:]))
    f.add_many(pd.Series(ints[:50] + 1, index=rng.permutation(50)))  # by position
    f.add_many(np.linspace(0, 1, 100))
    for k in strs[:50] + ints[:50].tolist() + [1.5, (1, "x")]:
        f.add(k)
        assert k in f
    assert f.contains_many(ints).all() and f.contains_many(strs).all()
    assert f.contains_many(pa.chunked_array([strs[:10], strs[10:]])).all()
    assert f.contains_many(pd.Series(ints[:50] + 1, index=rng.permutation(50))).all()
    probe = [f"p{i}" for i in range(500)] + strs[:20] + [1.5, (1, "x")]
    assert f.contains_many(probe).tolist() == [k in f for k in probe]
    assert set(f.key_types) == {"int", "str", "float", "tuple"}
    f._check()
    # the same keys as BloomFilter: its h1 are the native hashes
    assert f.contains_hashes(hash_many(strs, 3)).all()


def test_single_key_add_equals_batch_add():
    keys = [1, "1", 1.0, b"1", True, (1, "x"), 2**70, -0.0, np.int16(4), "é", ""]
    a, b = S(num_blocks=37, seed=5), S(num_blocks=37, seed=5)
    for k in keys:
        a.add(k)
    b.add_many(keys)
    assert a == b


def test_layout_is_the_documented_one():
    """Block h mod B, lane i's bit (splitmix64(h + golden) >> 6 i) & 63."""
    from bloomkit._engine.hashing import probe

    f = S(num_blocks=13, seed=9)
    f.add("k")
    h = hash_many(["k"], 9)[0]
    g = probe(int(h), 0)
    want = np.zeros(13 * 8, np.uint64)
    b = int(h) % 13
    for i in range(8):
        want[8 * b + i] = np.uint64(1 << ((g >> (6 * i)) & 63))
    assert np.array_equal(f.words, want)


@pytest.mark.parametrize("B", [720, 55440 // 8])
def test_fold_equals_rebuild_for_every_divisor(B):
    keys = np.arange(4000, dtype=np.int64) * 7919
    f = S(num_blocks=B, seed=1)
    f.add_many(keys)
    divisors = [d for d in range(2, B + 1) if B % d == 0][:20]
    assert len(divisors) >= 12
    for d in divisors:
        rebuilt = S(num_blocks=B // d, seed=1)
        rebuilt.add_many(keys)
        assert f.folded(d) == rebuilt, d
        assert f.folded(d).contains_many(keys).all()
    g = f.copy()
    g.fold(2)
    g.fold(3)
    assert g == f.folded(6)
    for bad in (1, 0, 13, 2.0, "2"):
        with pytest.raises(InvalidParameterError, match="'factor'"):
            f.fold(bad)


def test_set_algebra():
    a, b = S(num_blocks=64, seed=4), S(num_blocks=64, seed=4)
    a.add_many(range(300))
    b.add_many(range(200, 500))
    both = S(num_blocks=64, seed=4)
    both.add_many(range(500))
    assert a | b == both and a.union(b) == both
    inter = a & b
    assert inter.contains_many(list(range(200, 300))).all()
    assert inter <= a and inter <= b and a <= both and both >= a and a < both and both > a
    assert not (a < a) and a.issubset(a)
    c = a.copy()
    c |= b
    assert c == both and "int" in c.key_types
    c &= a
    assert c == a.intersection(both)
    c.intersection_update(b)
    d = a.copy()
    d.update(b, [1000])
    assert 1000 in d and d.issuperset(both)
    for other in (S(num_blocks=65, seed=4), S(num_blocks=64, seed=5), BloomFilter(num_bits=64 * 512, num_hashes=8)):
        with pytest.raises(IncompatibleFiltersError):
            a.union(other)
    with pytest.raises(IncompatibleFiltersError):
        a.issubset(S(num_blocks=64, seed=0))
    assert (a == BloomFilter(num_bits=100, num_hashes=1)) is False


def test_clear_copy_bool_len_info():
    f = S(capacity=5000, fpr=0.01, seed=8)
    assert not f and len(f) == 0 and f.predicted_fpr() == 0.0
    f.add_many(np.arange(4000))
    assert f and abs(len(f) - 4000) < 250
    g = f.copy()
    f.clear()
    assert not f and f.key_types == () and f.num_blocks == g.num_blocks
    assert g.contains_many(np.arange(4000)).all()
    info = g.info()
    json.dumps(info)
    assert info["structure"] == "splitblock.SplitBlockBloomFilter" and info["mode"] == "native"
    assert info["size_in_bits"] == g.size_in_bits and info["num_hashes"] == 8 and not info["overfilled"]
    assert info["predicted_fpr"] == pytest.approx(g.predicted_fpr())
    g.add_many(np.arange(10**6, 10**6 + 20_000))
    assert g.info()["overfilled"]
    assert "mode='native'" in repr(g)
    with pytest.raises(InvalidParameterError, match="'num_keys'"):
        g.predicted_fpr(-1)
    full = S(num_blocks=1)
    full.words[:] = np.uint64(2**64 - 1)
    assert full.estimated_count() == float("inf") and len(full) == full.size_in_bits


def test_estimated_count_and_exact_rate():
    f = S(num_blocks=2000, seed=2)
    f.add_many(np.arange(100_000))
    assert abs(f.estimated_count() - 100_000) < 1500
    # the rate given the bits equals the mean over blocks of the lane fill products
    lanes = np.array([[bin(int(w)).count("1") for w in f.words[8 * b: 8 * b + 8]] for b in range(2000)])
    assert f.predicted_fpr() == pytest.approx(np.prod(lanes / 64, axis=1).mean(), rel=1e-12)
    assert f.predicted_fpr(100_000) == pytest.approx(split_block_fpr(100_000, 2000))


def test_round_trip_and_loader_checks(tmp_path):
    f = S(capacity=1000, fpr=0.02, seed=77)
    f.add_many(["a", "b", 3])
    path = tmp_path / "f.bkf"
    f.save(path)
    g = bloomkit.load(path)
    assert g == f and g.key_types == f.key_types and g.capacity == 1000 and g.fpr == 0.02 and g.seed == 77
    assert S.load(path).to_bytes() == f.to_bytes()
    # a native file claiming the Parquet hash, a Parquet file with a seed: FormatError
    from conformance.forge import build, parse

    tag, _v, _h, seed, params, arrays = parse(f.to_bytes())
    with pytest.raises(FormatError, match="native mode"):
        bloomkit.loads(build(tag, json.dumps(params), arrays, hash_id=4, seed=seed))
    for change in ({"physical_type": "INT64"}, {"type_length": 4}):
        with pytest.raises(FormatError):
            bloomkit.loads(build(tag, json.dumps({**params, **change}), arrays, seed=seed))
    p = S.for_parquet(physical_type="INT64", num_bytes=64)
    _t, _v, _h, _s, pparams, parrays = parse(p.to_bytes())
    assert bloomkit.loads(p.to_bytes()) == p
    for kw in ({"seed": 5}, {"hash_id": 1}):
        with pytest.raises(FormatError, match="Parquet mode"):
            bloomkit.loads(build(tag, json.dumps(pparams), parrays, **{"hash_id": 4, "seed": 0, **kw}))
    with pytest.raises(FormatError, match="words"):
        bloomkit.loads(build(tag, json.dumps({**pparams, "num_blocks": 3}), parrays, hash_id=4))


def test_forged_parquet_mode_files(tmp_path):
    """The conformance forger over a Parquet-mode file (the registry example is native)."""
    from conformance.forge import forgeries, run_forgeries

    f = S.from_parquet_values([b"ab", b"cd"], physical_type="FIXED_LEN_BYTE_ARRAY", type_length=2, num_bytes=64)
    cases = list(forgeries(f.to_bytes()))
    problems = run_forgeries(cases, tmp_path)
    assert not problems, "\n".join(problems[:10])


def test_bad_keys_raise_with_nothing_changed():
    f = S(num_blocks=64)
    f.add_many(["x"])
    before = f.words.copy()
    for bad in ([1, None, 2], [object()], np.array([1.0, np.nan]), "abc", {"a": 1}, np.zeros((2, 2)), 5):
        with pytest.raises(InvalidParameterError):
            f.add_many(bad)
        assert np.array_equal(f.words, before)
    for bad in (None, object(), float("nan"), [1]):
        with pytest.raises(InvalidParameterError):
            f.add(bad)
    assert np.array_equal(f.words, before)
    with pytest.raises(InvalidParameterError, match="Parquet-mode"):
        f.to_parquet_bitset()
    with pytest.raises(InvalidParameterError, match="Parquet-mode"):
        f.shrink_to_fpp(0.1)


# -- the chunked / threaded batch pass (BloomFilter and SplitBlockBloomFilter) ---------------


def _batches(n):
    rng = np.random.default_rng(n)
    ints = rng.integers(-(2**62), 2**62, n)
    strs = [f"s{i}" for i in ints]
    return {
        "numpy int64": ints, "numpy int32": ints.astype(np.int32), "numpy uint64": ints.view(np.uint64),
        "numpy float": ints.astype(np.float64) / 7, "numpy U": np.array(strs), "numpy S": np.array(strs, dtype="S"),
        "pyarrow str": pa.array(strs), "pyarrow large": pa.array(strs, pa.large_string()),
        "pyarrow chunked": pa.chunked_array([strs[: n // 3], strs[n // 3:]]), "list": strs, "tuple": tuple(strs),
        "mixed list": [*strs[:100], *ints[:100].tolist(), 1.5],
    }


def _reference_words(cls, keys, **kw):
    """The one-shot path: h1 of the whole batch, then the insert kernel."""
    f = cls(**kw)
    h = hash_many(keys, f.seed)
    if cls is BloomFilter:
        K.bits_set(f.bits.words, h, f.num_hashes, np.uint64(f.num_bits))
        return f.bits.words
    SK.native_add(f.words, h, np.uint64(f.num_blocks))
    return f.words


@pytest.mark.parametrize("cls", [BloomFilter, S])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_chunked_threaded_adds_equal_the_one_shot_path(monkeypatch, cls, threads):
    monkeypatch.setattr(_parallel, "MIN_PER_THREAD", 500)
    monkeypatch.setattr(_parallel, "CHUNK", 700)
    monkeypatch.setattr(_parallel, "PRIVATE_CHUNK", 900)
    kw = {"num_bits": 1 << 14, "num_hashes": 3} if cls is BloomFilter else {"num_blocks": 37}
    words = (lambda f: f.bits.words) if cls is BloomFilter else (lambda f: f.words)
    try:
        bloomkit.set_num_threads(threads)
        for name, keys in _batches(6007).items():
            f = cls(**kw, seed=3)
            f.add_many(keys)
            assert np.array_equal(words(f), _reference_words(cls, keys, **kw, seed=3)), name
            hits = f.contains_many(keys)
            assert hits.all() and hits.shape == (len(keys),), name
            absent = f.contains_many(np.arange(6007, dtype=np.int64) + 2**40)
            g = cls(**kw, seed=3)
            h = hash_many(np.arange(6007, dtype=np.int64) + 2**40, 3)
            ref = (K.bits_test(words(f), h, f.num_hashes, np.uint64(f.num_bits)) if cls is BloomFilter
                   else f.contains_hashes(h))
            assert np.array_equal(absent, ref) and not g
    finally:
        bloomkit.set_num_threads(None)


@pytest.mark.parametrize("cls", [BloomFilter, S])
def test_threaded_add_uses_private_arrays_within_budget(monkeypatch, cls):
    """With 3 threads the calling thread writes the filter (without the GIL, holding its lock)
    and the two others private arrays, for lists too; the budget (a fifth of the batch) caps
    them."""
    monkeypatch.setattr(_parallel, "MIN_PER_THREAD", 100)
    made = []
    real = _parallel.aligned_zeros

    def spy(*a, **k):
        made.append(a)
        return real(*a, **k)

    monkeypatch.setattr(_parallel, "aligned_zeros", spy)
    keys = np.arange(30_000, dtype=np.int64)
    kw = {"num_bits": 4096, "num_hashes": 3} if cls is BloomFilter else {"num_blocks": 8}
    try:
        bloomkit.set_num_threads(3)
        cls(**kw).add_many(keys)
        assert len(made) == 2
        made.clear()
        cls(**kw).add_many(keys.tolist())  # precomputed hashes of a list: the same
        assert len(made) == 2
        made.clear()
        monkeypatch.setattr(_parallel, "PRIVATE_BYTES", 1)
        cls(**kw).add_many(keys)
        assert made == []
    finally:
        bloomkit.set_num_threads(None)


@pytest.mark.parametrize("cls", [BloomFilter, S])
def test_bad_key_late_in_a_batch_changes_nothing(monkeypatch, cls):
    monkeypatch.setattr(_parallel, "MIN_PER_THREAD", 100)
    monkeypatch.setattr(_parallel, "CHUNK", 256)
    kw = {"num_bits": 4096, "num_hashes": 3} if cls is BloomFilter else {"num_blocks": 8}
    try:
        for t in (1, 3):
            bloomkit.set_num_threads(t)
            f = cls(**kw)
            before = (f.bits.words if cls is BloomFilter else f.words).copy()
            x = np.arange(5000, dtype=np.float64)
            x[4321] = np.nan
            with pytest.raises(InvalidParameterError, match="index 4321"):
                f.add_many(x)
            with pytest.raises(InvalidParameterError, match="position 3000"):
                f.add_many([*map(str, range(3000)), None, "z"])
            with pytest.raises(InvalidParameterError, match="position 3000"):
                f.contains_many([*map(str, range(3000)), None, "z"])
            assert np.array_equal(f.bits.words if cls is BloomFilter else f.words, before)
    finally:
        bloomkit.set_num_threads(None)


@pytest.mark.parametrize("cls", ["BloomFilter", "SplitBlockBloomFilter"])
def test_add_many_memory_is_the_input_plus_the_filter_plus_a_chunk(cls):
    """A child process adds 5e6 int64 keys (40 MB): its peak RSS grows by the filter's private
    array at most and a few chunks, never by an array of all hashes (another 40 MB)."""
    code = textwrap.dedent(f"""
        import resource, numpy as np, bloomkit
        keys = np.random.default_rng(0).integers(0, 2**62, 5_000_000)
        cls = bloomkit.{cls}
        cls(capacity=1000, fpr=0.01).add_many(keys[:100_000])  # compile, warm the pool
        f = cls(capacity=len(keys), fpr=0.01)
        f.contains_many(keys[:100_000])
        nbytes = (f.bits.words if cls is bloomkit.BloomFilter else f.words).nbytes
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        f.add_many(keys)
        q = f.contains_many(keys)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(peak - base, nbytes, q.nbytes, keys.nbytes)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    grown, filter_bytes, answers, key_bytes = map(int, res.stdout.split())
    assert grown <= filter_bytes + answers + 12 * 2**20 < filter_bytes + answers + key_bytes, (grown, filter_bytes)


def test_protocols_and_a_seeded_stress_run_against_a_python_set():
    """Random operation sequences (DESIGN convention 5): the filter never misses a key of the
    exact model (a set) and its invariants hold after every step."""
    from bloomkit._protocols import MembershipFilter, Structure

    rng = np.random.default_rng(2024)
    f = S(num_blocks=360, seed=5)
    assert isinstance(f, MembershipFilter) and isinstance(f, Structure)
    model: set[int] = set()
    for _step in range(120):
        op = rng.integers(6)
        if op == 0:
            k = int(rng.integers(10**6))
            f.add(k)
            model.add(k)
        elif op == 1:
            ks = rng.integers(0, 10**6, int(rng.integers(1, 300)))
            f.add_many(ks)
            model.update(ks.tolist())
        elif op == 2:
            g = S(num_blocks=f.num_blocks, seed=5)
            ks = rng.integers(0, 10**6, 50)
            g.add_many(ks)
            f |= g
            model.update(ks.tolist())
        elif op == 3 and f.num_blocks % 2 == 0 and f.num_blocks > 45:
            f.fold(2)
        elif op == 4 and rng.random() < 0.1:
            f.clear()
            model.clear()
        else:
            f = bloomkit.loads(f.to_bytes()) if rng.random() < 0.5 else f.copy()
        f._check()
        if model:
            assert f.contains_many(np.fromiter(model, dtype=np.int64)).all()


# ---------------------------------------------------------------------------------------------
# first contact (issue 25): warnings and empty batches


def test_overfill_and_foreign_keys_warn_once():
    """Past its capacity (beyond the 3-sd line of info()['overfilled']) a split-block filter
    warns once; a key type it holds none of warns once per type; at capacity it is quiet."""
    import warnings

    f = SplitBlockBloomFilter(capacity=2000, fpr=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bloomkit.BloomkitWarning)
        for i in range(2000):
            f.add(i)
        assert 5 in f and f.contains_many(np.arange(10)).all()
    assert not f.info()["overfilled"]
    with pytest.warns(bloomkit.BloomkitWarning, match="capacity") as record:
        for i in range(2000, 6000):
            f.add(i)
        f.add_many(np.arange(6000, 9000))
    assert len(record) == 1 and f.info()["overfilled"]
    with pytest.warns(bloomkit.BloomkitWarning, match="str key '5'") as record:
        "5" in f, "6" in f  # noqa: B018 - the answer does not matter (an overfilled filter)
        f.contains_many(["7"])  # str already warned about
    assert len(record) == 1
    with pytest.warns(bloomkit.BloomkitWarning, match="bytes keys"):
        f.contains_many([b"5"])


def test_empty_batches_change_nothing():
    f = SplitBlockBloomFilter(capacity=100, fpr=0.01)
    before = f.to_bytes()
    for empty in ([], np.array([], dtype=np.int64), pa.array([], pa.string())):
        f.add_many(empty)
        assert f.contains_many(empty).shape == (0,)
    assert f.to_bytes() == before and len(f) == 0 and f.key_types == ()
