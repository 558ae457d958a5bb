"""BloomFilter and CountingBloomFilter: API, algebra, bad input, stress with _check()."""

from __future__ import annotations

import functools
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pyarrow as pa
import pytest

import bloomkit
from bloomkit import (
    BloomFilter,
    BloomkitWarning,
    CountingBloomFilter,
    FormatError,
    IncompatibleFiltersError,
    InvalidParameterError,
    theory,
)


def test_sizing_from_capacity_and_fpr():
    bf = BloomFilter(capacity=1000, fpr=0.01)
    # Eq. 1's m (9586) with k rounded to 7 predicts 0.01004 > fpr: m is raised until Eq. 2 meets it
    assert theory.num_bits_for(1000, 0.01) == 9586 and bf.num_bits == 9594
    assert bf.num_hashes == 7 and bf.predicted_fpr(1000) <= 0.01 < theory.false_positive_rate(1000, 9586, 7)
    assert bf.bits.words.nbytes == 8 * ((9594 + 63) // 64)  # memory: m bits rounded up to a word
    bf2 = BloomFilter(num_bits=1000, num_hashes=3, seed=7)
    assert (bf2.num_bits, bf2.num_hashes, bf2.seed) == (1000, 3, 7)
    assert BloomFilter(num_bits=1000, num_hashes=2.6).num_hashes == 3
    assert BloomFilter(100, num_bits=1000).num_hashes == 7


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"capacity": 10, "fpr": 1.5}, "'fpr'"),
        ({"capacity": 10, "fpr": 0}, "'fpr'"),
        ({"capacity": 10, "fpr": 1}, "'fpr'"),
        ({"capacity": 10, "fpr": float("nan")}, "'fpr'"),
        ({"capacity": 0, "fpr": 0.1}, "'capacity'"),
        ({"capacity": -3, "fpr": 0.1}, "'capacity'"),
        ({"capacity": 2.5, "fpr": 0.1}, "'capacity'"),
        ({"num_bits": 100, "num_hashes": 0.4}, "'num_hashes'"),
        ({"num_bits": 100, "num_hashes": 0}, "'num_hashes'"),
        ({"num_bits": 100, "num_hashes": -1}, "'num_hashes'"),
        ({"num_bits": 100, "num_hashes": float("inf")}, "'num_hashes'"),
        ({"num_bits": 0, "num_hashes": 2}, "'num_bits'"),
        ({"num_bits": "100", "num_hashes": 2}, "'num_bits'"),
        ({"num_bits": 100}, "num_hashes"),
        ({"capacity": 10}, "capacity and fpr"),
        ({}, "capacity and fpr"),
        ({"capacity": 10, "fpr": 0.1, "num_bits": 100}, "not both"),
        ({"num_bits": 100, "num_hashes": 2, "seed": -1}, "'seed'"),
        ({"capacity": 2**62, "fpr": 1e-300}, "cannot hold capacity"),
        ({"capacity": 10**400, "fpr": 0.1}, "'capacity'"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        BloomFilter(**kwargs)


def test_error_message_format():
    with pytest.raises(InvalidParameterError) as e:
        BloomFilter(capacity=10, fpr=1.5)
    assert str(e.value) == "The 'fpr' parameter of BloomFilter must be in (0, 1). Got 1.5 instead."
    assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)


@pytest.mark.parametrize("cls", [BloomFilter, CountingBloomFilter])
def test_no_false_negatives_all_input_kinds(cls):
    rng = np.random.default_rng(1)
    ints = rng.integers(-(2**62), 2**62, 3000)
    strs = [f"user-{i}" for i in range(3000)]
    bf = cls(capacity=10_000, fpr=0.01, seed=3)
    bf.add_many(ints)
    bf.update(strs[:1000])
    bf.add_many(pa.array(strs[1000:2000]))
    bf.add_many(np.array(strs[2000:]))
    for k in strs[:50] + ints[:50].tolist():
        assert k in bf
    assert bf.contains_many(ints).all()
    assert bf.contains_many(strs).all()
    assert bf.contains_many(pa.array(strs)).all()
    assert bf.contains_many(np.array(strs)).all()
    bf._check()
    assert 5000 < bf.estimated_count() < 7000


@pytest.mark.parametrize("cls", [BloomFilter, CountingBloomFilter])
def test_single_and_batch_paths_agree(cls):
    keys = [1, "1", 1.0, b"1", True, (1, "x"), 2**70, -0.0, np.int16(4)]
    a, b = cls(num_bits=997, num_hashes=5), cls(num_bits=997, num_hashes=5)
    for k in keys:
        a.add(k)
    b.add_many(keys)
    assert a == b
    probe = [f"p{i}" for i in range(500)] + keys
    assert a.contains_many(probe).tolist() == [k in a for k in probe]


def test_single_key_fast_paths_match_batches():
    """ASCII str and int64 keys take the by-address kernels; the int64 edges, big ints,
    non-ASCII and empty str take the payload kernel: all agree with the batch path."""
    keys = [-(2**63), 2**63 - 1, 2**63, -1, 0, 7, "", "a", "é", "naïve", "x" * 100, "\x00z"]
    a, b = BloomFilter(num_bits=4099, num_hashes=4), BloomFilter(num_bits=4099, num_hashes=4)
    for k in keys:
        a.add(k)
    b.add_many(keys)
    assert a == b
    probe = keys + [f"q{i}" for i in range(300)] + list(range(300))
    assert b.contains_many(probe).tolist() == [k in a for k in probe]
    # the storage array is swapped: the cached address follows it
    a.bits.words = a.bits.words.copy()
    a.add("later")
    assert "later" in a
    assert a.contains_many(["later"]).tolist() == [True]
    # a storage array the kernels cannot use is refused, never read out of bounds
    for bad in (np.zeros(3, np.uint64), a.bits.words.astype(np.int64), a.bits.words[::-1]):
        c = BloomFilter(num_bits=4099, num_hashes=4)
        with pytest.raises(InvalidParameterError, match="'words' parameter of BitArray"):
            c.bits.words = bad  # refused on assignment
        object.__setattr__(c.bits, "words", bad)  # and behind the check: refused before any bit is read
        with pytest.raises(InvalidParameterError):
            c.add("k")
        with pytest.raises(InvalidParameterError):
            _ = 5 in c
    frozen = BloomFilter(num_bits=4099, num_hashes=4)
    frozen.bits.words.flags.writeable = False
    with pytest.raises(InvalidParameterError):
        frozen.add("k")


def test_single_key_paths_under_threads_and_storage_swaps():
    """Threads add and query single keys while another swaps the storage array back and
    forth: the by-address kernels always get one array's (address, length, m) together."""
    import threading

    bf = BloomFilter(num_bits=1 << 16, num_hashes=5)
    stop = threading.Event()
    errors: list[BaseException] = []

    def swapper() -> None:
        while not stop.is_set():
            bf.bits.words = bf.bits.words.copy()

    def worker(base: int) -> None:
        try:
            for i in range(3000):
                bf.add(f"t{base}-{i}")
                bf.add(base * 100_000 + i)
                _ = f"t{base}-{i}" in bf  # a concurrent swap may lose the add: no assertion, no crash
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=swapper)] + [threading.Thread(target=worker, args=(b,)) for b in range(3)]
    for t in ts:
        t.start()
    for t in ts[1:]:
        t.join()
    stop.set()
    ts[0].join()
    assert not errors
    bf.add("after")  # and the filter still works, with no swap in flight
    assert "after" in bf and 12345 not in BloomFilter(num_bits=1 << 16, num_hashes=5)


@pytest.mark.parametrize("cls", [BloomFilter, CountingBloomFilter])
def test_bad_keys(cls):
    bf = cls(capacity=100, fpr=0.01)
    for bad in (None, [1, 2], {"a": 1}, float("nan"), object()):
        with pytest.raises(InvalidParameterError):
            bf.add(bad)
        with pytest.raises(InvalidParameterError):
            _ = bad in bf
    with pytest.raises(InvalidParameterError):
        bf.add_many(np.array([1.0, np.nan]))
    with pytest.raises(InvalidParameterError):
        bf.contains_many(["a", None])
    with pytest.raises(InvalidParameterError):
        bf.add_many("not a list")
    # empty input is a no-op with the right result type
    bf.add_many([])
    assert bf.contains_many([]).shape == (0,) and bf.contains_many(np.array([], dtype=np.int64)).dtype == bool
    bf._check()


def test_empty_filter_answers_false():
    bf = BloomFilter(capacity=100, fpr=0.01)
    assert not bf.contains_many(np.arange(1000)).any()
    assert bf.fill_ratio() == 0 and bf.estimated_count() == 0 and len(bf) == 0
    assert bf.predicted_fpr() == 0.0


def test_union_intersection_subset():
    a = BloomFilter(capacity=1000, fpr=0.01, seed=1)
    b = BloomFilter(capacity=1000, fpr=0.01, seed=1)
    a.add_many(range(0, 500))
    b.add_many(range(250, 750))
    u, i = a | b, a & b
    assert u.contains_many(list(range(750))).all()
    assert i.contains_many(list(range(250, 500))).all()
    assert a.union(b) == u and a.intersection(b) == i
    assert a.issubset(u) and not u.issubset(a)
    c = a.copy()
    c |= b
    assert c == u and a != c
    c &= a
    assert c == a
    u._check()
    i._check()


@pytest.mark.parametrize(
    "other",
    [
        BloomFilter(num_bits=9586, num_hashes=6, seed=1),
        BloomFilter(num_bits=9587, num_hashes=7, seed=1),
        BloomFilter(num_bits=9586, num_hashes=7, seed=2),
        CountingBloomFilter(num_bits=9586, num_hashes=7, seed=1),
    ],
)
def test_incompatible_filters(other):
    a = BloomFilter(num_bits=9586, num_hashes=7, seed=1)
    for op in (lambda: a | other, lambda: a & other, lambda: a.union(other), lambda: a.issubset(other)):
        with pytest.raises(IncompatibleFiltersError):
            op()
    with pytest.raises(IncompatibleFiltersError):
        a |= other


def test_counting_remove_and_to_bloom():
    cbf = CountingBloomFilter(capacity=2000, fpr=0.01, counter_bits=8, seed=9)
    keys = [f"k{i}" for i in range(1000)]
    cbf.add_many(keys)
    cbf.add("k0")  # twice
    cbf.remove("k0")
    assert "k0" in cbf
    cbf.remove_many(keys[500:])
    cbf._check()
    assert cbf.contains_many(keys[:500]).all()
    ref = BloomFilter(num_bits=cbf.num_bits, num_hashes=cbf.num_hashes, seed=9)
    ref.add_many(keys[:500])
    assert cbf.to_bloom() == ref  # removal restores exactly the filter of the remaining keys
    with pytest.raises(InvalidParameterError, match="not in the filter"):
        cbf.remove("never-added-key-xyz")
    snapshot = cbf.copy()
    with pytest.raises(InvalidParameterError, match="nothing was removed"):
        cbf.remove_many(keys[:10] + ["never-added-key-xyz"])
    assert cbf == snapshot
    with pytest.raises(InvalidParameterError):
        cbf.remove_many(keys[:1] * 3)  # more removals than insertions (counter goes to zero)
    assert cbf == snapshot


def test_counting_overflow_is_flagged_and_never_false_negative():
    cbf = CountingBloomFilter(num_bits=64, num_hashes=3, counter_bits=4)
    for _ in range(20):
        cbf.add("hot")
    assert cbf.overflowed
    for _ in range(20):
        cbf.remove("hot")
    assert "hot" in cbf  # saturated counters are sticky: no false negative
    with pytest.raises(InvalidParameterError, match="counter_bits"):
        CountingBloomFilter(num_bits=10, num_hashes=2, counter_bits=3)


def test_counting_union_intersection():
    a = CountingBloomFilter(num_bits=500, num_hashes=3, counter_bits=4)
    b = CountingBloomFilter(num_bits=500, num_hashes=3, counter_bits=4)
    a.add_many(["x", "y"])
    b.add_many(["y", "z"])
    u = a | b
    u.remove("y")
    assert {"x", "y", "z"} <= {k for k in ["x", "y", "z"] if k in u}
    i = a & b
    assert "y" in i
    with pytest.raises(IncompatibleFiltersError):
        _ = a | CountingBloomFilter(num_bits=500, num_hashes=3, counter_bits=8)


@pytest.mark.parametrize("cls", [BloomFilter, CountingBloomFilter])
def test_persistence_roundtrip_and_pickle(cls, tmp_path):
    bf = cls(capacity=500, fpr=0.02, seed=42)
    bf.add_many([f"x{i}" for i in range(300)])
    raw = bf.to_bytes()
    assert cls.from_bytes(raw) == bf
    bf.save(tmp_path / "f.bkf")
    loaded = bloomkit.load(tmp_path / "f.bkf")
    assert type(loaded) is cls and loaded == bf
    assert loaded.capacity == 500 and loaded.fpr == 0.02 and loaded.seed == 42
    assert pickle.loads(pickle.dumps(bf)) == bf
    with pytest.raises(FormatError):
        (BloomFilter if cls is CountingBloomFilter else CountingBloomFilter).from_bytes(raw)


def test_random_operation_sequences_keep_invariants():
    rng = np.random.default_rng(7)
    cbf = CountingBloomFilter(num_bits=3001, num_hashes=4, counter_bits=4, seed=5)
    present: dict[int, int] = {}
    for _ in range(400):
        op = rng.integers(3)
        key = int(rng.integers(200))
        if op == 0:
            cbf.add(key)
            present[key] = present.get(key, 0) + 1
        elif op == 1 and present:
            victim = list(present)[int(rng.integers(len(present)))]
            cbf.remove(victim)
            present[victim] -= 1
            if not present[victim]:
                del present[victim]
        else:
            batch = rng.integers(200, size=5)
            cbf.add_many(batch)
            for b in batch.tolist():
                present[b] = present.get(b, 0) + 1
        cbf._check()
        assert all(k in cbf for k in present)
    assert not cbf.overflowed or max(present.values()) > 0


def test_repr_and_len():
    bf = BloomFilter(capacity=100, fpr=0.1)
    bf.add_many(range(50))
    assert "BloomFilter(num_bits=" in repr(bf)
    assert 40 <= len(bf) <= 60


def test_concurrent_batch_adds_lose_no_keys():
    """Mutating kernels hold the GIL, so threads adding to one filter lose no bits."""
    from concurrent.futures import ThreadPoolExecutor

    bf = BloomFilter(num_bits=4096, num_hashes=3)
    chunks = [np.arange(i * 2000, (i + 1) * 2000) for i in range(8)]
    with ThreadPoolExecutor(4) as ex:
        list(ex.map(bf.add_many, chunks))
    assert bf.contains_many(np.concatenate(chunks)).all()


@pytest.mark.parametrize("threads", [2, 3])
def test_threaded_batches_equal_one_thread(monkeypatch, threads):
    """add_many / contains_many on several threads give the same bits and answers as one
    thread, for every batch type; a bad key raises the one-thread path's error and changes
    nothing."""
    import pyarrow as pa

    import bloomkit
    from bloomkit._engine import parallel as _parallel

    monkeypatch.setattr(_parallel, "MIN_PER_THREAD", 1000)
    n = 10_007
    ints = np.arange(n, dtype=np.int64) * 7919
    strs = [f"s{i}" for i in range(n)]
    batches = [ints, pa.array(strs), strs, tuple(strs), np.array(strs)]
    probe_keys = [np.arange(2 * n, dtype=np.int64) * 7919, pa.array([f"s{i}" for i in range(2 * n)])]
    try:
        results = {}
        for t in (1, threads):
            bloomkit.set_num_threads(t)
            assert bloomkit.get_num_threads() == t
            bf = BloomFilter(num_bits=50_000, num_hashes=4)  # probes outnumber words: threaded add
            for b in batches:
                bf.add_many(b)
            results[t] = (bf.bits.words.copy(), [bf.contains_many(p) for p in probe_keys])
            bad = [*strs[:5000], None, *strs[:5000]]
            before = bf.bits.words.copy()
            with pytest.raises(InvalidParameterError) as err:
                bf.add_many(bad)
            assert np.array_equal(bf.bits.words, before)
            results[t] += (str(err.value),)
        one, many = results[1], results[threads]
        assert np.array_equal(one[0], many[0])
        assert all(np.array_equal(a, b) for a, b in zip(one[1], many[1], strict=True))
        assert one[2] == many[2]
    finally:
        bloomkit.set_num_threads(None)


def test_set_num_threads_validates():
    import bloomkit

    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(InvalidParameterError):
            bloomkit.set_num_threads(bad)
    bloomkit.set_num_threads(None)
    assert bloomkit.get_num_threads() >= 1


def test_num_threads_environment(monkeypatch):
    import bloomkit
    from bloomkit._engine import parallel as _parallel

    try:
        for value, want in (("3", 3), (" 1 ", 1)):
            monkeypatch.setenv("BLOOMKIT_NUM_THREADS", value)
            bloomkit.set_num_threads(None)
            assert bloomkit.get_num_threads() == want
        for bad in ("0", "abc", "-2", "1.5"):
            monkeypatch.setenv("BLOOMKIT_NUM_THREADS", bad)
            bloomkit.set_num_threads(None)
            with pytest.raises(InvalidParameterError, match="BLOOMKIT_NUM_THREADS"):
                bloomkit.get_num_threads()
    finally:
        monkeypatch.delenv("BLOOMKIT_NUM_THREADS", raising=False)
        _parallel.set_num_threads(None)


# -- the shared protocol (issue 12) ---------------------------------------------------------------

@pytest.mark.parametrize("cls", [BloomFilter, CountingBloomFilter])
def test_clear_keeps_parameters_and_empties(cls):
    bf = cls(capacity=1000, fpr=0.01, seed=4)
    bf.add_many([f"k{i}" for i in range(500)])
    words_before = bf._store
    bf.clear()
    assert bf._store is words_before  # in place: the single-key fast path stays valid
    assert not bf and bf.fill_ratio() == 0 and bf.key_types == ()
    assert not bf.contains_many([f"k{i}" for i in range(500)]).any()
    bf.add("again")
    assert "again" in bf and bf.key_types == ("str",)
    bf._check()


@pytest.mark.parametrize("cls", [BloomFilter, CountingBloomFilter, "double"])
@pytest.mark.parametrize("factor", [2, 3, 5, 12])
def test_fold_equals_the_filter_built_at_the_smaller_size(cls, factor):
    """Both probe schemes: G_i is independent of m, reduced exactly (Barrett)."""
    if cls == "double":
        cls = functools.partial(BloomFilter, probes="double")
    keys = np.arange(2000)
    big = cls(num_bits=720 * 64, num_hashes=4, seed=9)
    big.add_many(keys)
    small = cls(num_bits=720 * 64 // factor, num_hashes=4, seed=9)
    small.add_many(keys)
    folded = big.folded(factor)
    assert folded == small and big.num_bits == 720 * 64
    big.fold(factor)
    assert big == small and big.contains_many(keys).all()
    big._check()
    with pytest.raises(InvalidParameterError, match="divide"):
        big.fold(7)


def test_full_set_protocol():
    a = BloomFilter(num_bits=4096, num_hashes=3, seed=1)
    b = BloomFilter(num_bits=4096, num_hashes=3, seed=1)
    a.add_many(["x", "y"])
    b.add_many(["y"])
    assert b <= a and b < a and a >= b and a > b and not a < a and a <= a.copy()
    assert b.issubset(a) and a.issuperset(b)
    c = b.copy()
    c.update(a, [1, 2, 3])  # filters merge, iterables insert
    assert {"x", "y"} <= {k for k in ("x", "y") if k in c} and 2 in c
    assert c.key_types == ("int", "str")
    c.intersection_update(a)
    assert "x" in c and bool(c) and not bool(BloomFilter(num_bits=64, num_hashes=1))
    assert (a | b).key_types == ("str",) and (a & b) == (b & a)


def test_key_types_are_recorded_and_saved():
    bf = BloomFilter(capacity=100, fpr=0.01)
    assert bf.key_types == ()
    bf.add("a")
    bf.add(5)
    bf.add_many(np.array([1.5, 2.5]))
    bf.add(("t", 1))
    bf.add_many(pa.array([b"x"]))
    assert bf.key_types == ("bytes", "float", "int", "str", "tuple")
    assert bloomkit.loads(bf.to_bytes()).key_types == bf.key_types
    bad = BloomFilter(capacity=100, fpr=0.01)
    with pytest.raises(InvalidParameterError):
        bad.add_many(["a", float("nan")])
    assert bad.key_types == ()  # nothing added, nothing recorded
    big = BloomFilter(capacity=10**6, fpr=0.01)
    big.add_many(np.arange(200_000, dtype=np.uint64) + (1 << 63))  # threaded path, uint64 > int64
    assert big.key_types == ("int",)


def test_info_for_requirements_and_overfill():
    bf = BloomFilter.for_requirements(1000, 0.01, seed=2)
    assert (bf.num_bits, bf.num_hashes, bf.seed) == (9594, 7, 2)
    info = bf.info()
    assert info["structure"] == "bloom.BloomFilter" and info["overfilled"] is False
    assert info["size_in_bits"] == bf.size_in_bits == 9594
    with pytest.warns(BloomkitWarning, match="capacity"):
        bf.add_many(np.arange(20_000))
    info = bf.info()
    assert info["overfilled"] is True and info["predicted_fpr"] > 0.5
    c = CountingBloomFilter.for_requirements(1000, 0.01, counter_bits=8)
    assert c.size_in_bits == 9594 * 8 and c.info()["counter_bits"] == 8


def test_overfilled_is_a_statistical_verdict():
    """Filled to exactly capacity, a small filter is flagged only by chance (the 3-sd margin:
    at most a few in 400; the old `estimate > capacity` rule flagged about half of them);
    filled to 1.5x capacity, every one is flagged."""
    at_cap = over = 0
    for seed in range(400):
        bf = BloomFilter(capacity=50, fpr=0.01, seed=seed)
        bf.add_many(np.arange(50) + seed * 1000)
        at_cap += bf.info()["overfilled"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BloomkitWarning)
            bf.add_many(np.arange(50, 75) + seed * 1000)
        over += bf.info()["overfilled"]
    assert at_cap <= 6 and over == 400, (at_cap, over)


# ---------------------------------------------------------------------------------------------
# first contact (issue 25): sizing that keeps its promise, warnings, empty batches, len()


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 100, 999, 1000, 12345, 10**6])
@pytest.mark.parametrize("fpr", [0.5, 0.1, 0.01, 0.001, 1e-6])
def test_capacity_and_fpr_are_met_by_the_model(n, fpr):
    """``BloomFilter(n, fpr).predicted_fpr(n) <= fpr`` (Eq. 1's m with a rounded k misses it by
    up to 16 %), with at most 0.5 % more bits than Eq. 1 for n >= 100, and m - 1
    bits would not do (the smallest such m, up to the jumps of the rounded k)."""
    bf = BloomFilter(n, fpr)
    m0 = theory.num_bits_for(n, fpr)
    assert bf.predicted_fpr(n) <= fpr
    assert bf.num_bits >= m0 and (n < 100 or bf.num_bits <= m0 * 1.005)
    if bf.num_bits > m0:
        k = theory.optimal_num_hashes(n, bf.num_bits - 1)
        assert theory.false_positive_rate(n, bf.num_bits - 1, k) > fpr


@pytest.mark.parametrize("cls", [BloomFilter, CountingBloomFilter])
def test_overfill_warns_once_and_can_be_an_error(cls):
    """Past its design, a filter warns once (single adds through the C or numba path, batches),
    at the same line as info()['overfilled']; at capacity it stays quiet; as an error it
    raises at every add past the line (the key is added)."""
    bf = cls(capacity=1000, fpr=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BloomkitWarning)
        for i in range(1000):  # exactly capacity: no warning
            bf.add(i)
        bf.add_many(np.arange(1000))  # duplicates add nothing
    assert not bf.info()["overfilled"]
    with pytest.warns(BloomkitWarning, match=r"capacity \(1000\).*above the 0.01") as record:
        for i in range(1000, 3000):
            bf.add(i)
        bf.add_many(np.arange(3000, 6000))
    assert len([w for w in record if issubclass(w.category, BloomkitWarning)]) == 1
    assert record[0].filename == __file__  # points at the caller's line
    assert bf.info()["overfilled"] and 6000 in bf and 2999 in bf
    quiet = cls(capacity=100, fpr=0.01)
    quiet.add_many(np.arange(100))
    with warnings.catch_warnings():
        warnings.simplefilter("error", BloomkitWarning)
        for i in range(100, 400):
            try:
                quiet.add(i)
            except BloomkitWarning:
                break
        assert 100 < i < 200  # within capacity / 64 adds of the 3-sd line (the line is ~120 keys)
        with pytest.raises(BloomkitWarning):
            quiet.add_many([10**6, 10**6 + 1])  # each add past the line raises again
        assert 10**6 in quiet  # the keys are in
    sized = BloomFilter(num_bits=64, num_hashes=3)  # no capacity: no design, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", BloomkitWarning)
        sized.add_many(np.arange(1000))


def test_overfill_check_costs_little():
    """The fill is counted at most about 64 times per capacity of adds: a million single adds
    into a filter of capacity 1,000,000 count its words a few dozen times, not a million."""
    bf = BloomFilter(capacity=10**6, fpr=0.01)
    calls = []
    real = bf._design_check
    bf._design_check = lambda *a: calls.append(1) or real(*a)  # the compiled add calls it by name
    for i in range(200_000):
        bf.add(i)
    assert 1 <= len(calls) <= 20, len(calls)


@pytest.mark.parametrize("cls", [BloomFilter, CountingBloomFilter])
def test_query_of_a_foreign_key_type_warns_once(cls):
    """A filter of int keys asked about "1" or 1.0 warns (once per type), answers False; keys
    of its own type (and big ints) and empty filters stay quiet; warnings as errors raise."""
    empty = cls(capacity=100, fpr=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BloomkitWarning)
        assert "1" not in empty and not empty.contains_many(["a", 1.5]).any()
    bf = cls(capacity=100, fpr=0.01)
    bf.add_many([1, 2, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("error", BloomkitWarning)
        assert 1 in bf and 2**70 not in bf and bf.contains_many(np.array([1, 2])).all()
        with pytest.raises(BloomkitWarning, match=r"holds int keys; the str key '1' is never one of them"):
            "1" in bf  # noqa: B015
        with pytest.raises(BloomkitWarning, match="float"):
            bf.contains_many([1.0])
    with pytest.warns(BloomkitWarning, match="str key '1'") as record:
        assert "1" not in bf and "2" not in bf and not bf.contains_many(["3"]).any()
    assert len(record) == 1 and record[0].filename == __file__
    with pytest.warns(BloomkitWarning, match="float keys are never among them"):
        bf.contains_many([1.0, 2.0])
    bf.add("x")  # now it holds str keys too: no warning for them
    with warnings.catch_warnings():
        warnings.simplefilter("error", BloomkitWarning)
        assert "x" in bf


@pytest.mark.parametrize("cls", [BloomFilter, CountingBloomFilter])
def test_empty_batches_change_nothing_and_len_is_an_estimate(cls):
    """``add_many([])`` / ``update([])`` are allowed and change nothing (as ``set.update``),
    ``contains_many([])`` is an empty bool array; ``len()`` is the rounded estimate."""
    bf = cls(capacity=10_000, fpr=0.01)
    before = bf.to_bytes()
    for empty in ([], (), np.array([], dtype=np.int64), pa.array([], pa.string())):
        bf.add_many(empty)
        bf.update(empty)
        out = bf.contains_many(empty)
        assert out.dtype == bool and out.shape == (0,)
    assert bf.to_bytes() == before and len(bf) == 0 and not bf
    bf.add_many(np.arange(10_000))
    assert len(bf) == round(bf.estimated_count()) and 9_800 < len(bf) < 10_200 and not cls.exact_len


def test_batch_inputs_against_a_python_set():
    """list, numpy, pyarrow (chunked too) and tuple inputs of the same keys give the same bits,
    hold every key of the exact model (a set) and record their key types."""
    rng = np.random.default_rng(3)
    ints = rng.integers(-(2**62), 2**62, 5000)
    words = [f"w{i}" for i in range(5000)]
    truth = set(ints.tolist()) | set(words)
    filters = []
    for batch_int, batch_str in ((ints.tolist(), words), (ints, pa.array(words)),
                                 (pa.chunked_array([ints[:100], ints[100:]]), pa.chunked_array([words[:7], words[7:]])),
                                 (tuple(ints.tolist()), np.array(words))):
        bf = BloomFilter(capacity=10_000, fpr=0.001)
        bf.add_many(batch_int)
        bf.add_many(batch_str)
        assert bf.key_types == ("int", "str")
        assert all(k in bf for k in truth) and bf.contains_many(list(truth)).all()
        filters.append(bf)
    assert all(f == filters[0] for f in filters)


def test_save_to_a_missing_directory_names_the_users_path(tmp_path):
    bf = BloomFilter(capacity=10, fpr=0.1)
    target = tmp_path / "no" / "such" / "f.bkf"
    with pytest.raises(FileNotFoundError) as e:
        bf.save(target)
    assert e.value.filename == str(target) and ".tmp" not in str(e.value)
    assert "directory does not exist" in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_import_is_light_and_the_namespace_clean():
    """``import bloomkit`` imports neither numpy, numba, scipy nor pyarrow (its names load on
    first use), and holds no stray names (``Any``, ``annotations``)."""
    code = ("import sys, bloomkit; heavy = [m for m in ('numpy', 'numba', 'scipy', 'pyarrow') if m in sys.modules];"
            "assert not heavy, heavy; print(' '.join(n for n in dir(bloomkit) if not n.startswith('_')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "Any" not in out and "annotations" not in out
    assert set(out) - set(bloomkit.__all__) <= {"errors"}  # the one submodule it imports
    assert set(bloomkit.__all__) <= set(dir(bloomkit))
    assert bloomkit.BloomFilter is BloomFilter and bloomkit.load is bloomkit._format.load
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        bloomkit.Nope  # noqa: B018


def test_single_keys_start_no_numba():
    """With the C extension, a new filter's first adds and queries (and their overfill check)
    start neither numba nor scipy."""
    if bloomkit.info()["hash_path"] != "c-extension":
        pytest.skip("the numba path is numba")
    code = ("import sys, bloomkit\n"
            "for cls in (bloomkit.BloomFilter, bloomkit.SplitBlockBloomFilter, bloomkit.CountingBloomFilter):\n"
            "    f = cls(capacity=100, fpr=0.01)\n"
            "    for i in range(100): f.add(f'k{i}')\n"
            "    assert 'k1' in f and len(f) > 50\n"
            "heavy = [m for m in ('numba', 'scipy', 'pyarrow') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-W", "ignore", "-c", code], check=True)


# -- the double-hashing probe scheme (issue 28 item 2, bloomkit._engine.probes) ----------------------------


def _dh_reference(h1: int, k: int, m: int) -> list[int]:
    """G_i = h1 + i h2 + (i^3 - i) / 6 mod 2^64, h2 = splitmix64(h1 + golden), then mod m."""
    mask = (1 << 64) - 1

    def splitmix(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    h2 = splitmix((h1 + 0x9E3779B97F4A7C15) & mask)
    return [((h1 + i * h2 + (i**3 - i) // 6) & mask) % m for i in range(k)]


@pytest.mark.parametrize("k,m", [(7, 1 << 16), (10, 9973), (3, 50_000), (1, 64)])
def test_double_hashing_positions_are_the_formula(k, m):
    from bloomkit._engine.hashing import hash64
    from bloomkit._engine.lazy import probes as P

    keys = ["a", "bé", 7, -3, b"raw", (1, "x")]
    h = np.array([hash64(x, 5) for x in keys], dtype=np.uint64)
    pos = P.dh_positions(h, k, np.uint64(m))
    for row, h1 in zip(pos.tolist(), h.tolist(), strict=True):
        assert row == _dh_reference(int(h1), k, m)
    for x, row in zip(keys, pos.tolist(), strict=True):
        f = BloomFilter(num_bits=m, num_hashes=k, seed=5, probes="double")
        f.add(x)
        assert np.flatnonzero(f.bits.test_many(np.arange(m))).tolist() == sorted(set(row))
        g = BloomFilter(num_bits=m, num_hashes=k, seed=5, probes="double")
        g.add_many([x])
        assert g == f and x in f and f.contains_many([x]).all()


def test_double_hashing_is_a_saved_hash_id_and_stays_apart(tmp_path):
    from bloomkit._format import pack, unpack

    f = BloomFilter(2000, 0.01, seed=3, probes="double")
    f.add_many(np.arange(2000))
    assert f.probes == "double" and f.info()["probes"] == "double"
    assert BloomFilter(2000, 0.01).probes == "independent"
    data = f.to_bytes()
    assert unpack(data).hash_id == 5
    g = BloomFilter.from_bytes(data)
    assert g == f and g.probes == "double" and g.contains_many(np.arange(2000)).all()
    f.save(tmp_path / "d.bk")
    assert bloomkit.load(tmp_path / "d.bk") == f
    plain = BloomFilter(2000, 0.01, seed=3)
    plain.add_many(np.arange(2000))
    assert plain != f and plain.to_bytes() != data  # other positions
    with pytest.raises(IncompatibleFiltersError):
        _ = plain | f
    with pytest.raises(InvalidParameterError, match="probes"):
        BloomFilter(100, 0.01, probes="triple")
    c = CountingBloomFilter(num_bits=64, num_hashes=2)
    params, arrays = c._to_state()
    forged = pack(c._STRUCTURE, params, arrays, hash_id=4, seed=0)  # the split-block filter's Parquet hash
    with pytest.raises(FormatError, match="hash id"):
        CountingBloomFilter.from_bytes(forged)


@pytest.mark.parametrize("width", [4, 8, 16, 32])
def test_counting_filter_double_hashing_counts_at_the_bit_filters_positions(width):
    """A counting filter of ``probes="double"`` increments, tests and decrements the counters at the
    double-hashing positions (its support is the BloomFilter's bits), single keys (C / numba) and
    batches alike, and saves its scheme as hash id 5; the default stays the independent scheme."""
    from bloomkit._format import unpack

    keys = np.arange(600)
    c = CountingBloomFilter(num_bits=4001, num_hashes=7, seed=2, counter_bits=width, probes="double")
    one = CountingBloomFilter(num_bits=4001, num_hashes=7, seed=2, counter_bits=width, probes="double")
    c.add_many(keys)
    for x in keys.tolist():
        one.add(x)
    ref = BloomFilter(num_bits=4001, num_hashes=7, seed=2, probes="double")
    ref.add_many(keys)
    assert c == one and c.to_bloom() == ref and c.to_bloom().probes == "double"
    assert c.to_bloom() != CountingBloomFilter(num_bits=4001, num_hashes=7, seed=2, counter_bits=width).to_bloom()
    assert all(x in c for x in keys[:50].tolist()) and c.contains_many(keys).all()
    assert np.array_equal(c.contains_many(keys + 10**6), ref.contains_many(keys + 10**6))
    c.remove_many(keys[:300])
    c.remove(int(keys[300]))
    rest = CountingBloomFilter(num_bits=4001, num_hashes=7, seed=2, counter_bits=width, probes="double")
    rest.add_many(keys[301:])
    if not c.overflowed:
        assert c == rest
    back = CountingBloomFilter.from_bytes(c.to_bytes())
    assert back == c and back.probes == "double" and unpack(back.to_bytes()).hash_id == 5
    with pytest.raises(IncompatibleFiltersError):
        _ = c | CountingBloomFilter(num_bits=4001, num_hashes=7, seed=2, counter_bits=width)


def test_double_hashing_model():
    n, m, k = 1000, 9586, 7
    assert theory.double_hashing_fpr(n, m, k) - theory.false_positive_rate(n, m, k) == pytest.approx(
        (1 - theory.false_positive_rate(n, m, k)) * n / m**2, rel=1e-3)
    f = BloomFilter(num_bits=m, num_hashes=k, probes="double")
    assert f.predicted_fpr(n) == pytest.approx(theory.double_hashing_fpr(n, m, k))
