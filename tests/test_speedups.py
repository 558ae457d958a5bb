"""The compiled boundary (bloomkit._speedups, issue 14) against the Python / numba path.

Both paths must give the same hashes, bits, files and errors. In one process the pure path
is reached through the Python methods every filter keeps (``_py_add`` / ``_py_contains``) and
by switching ``bloomkit._engine.hashing._C`` off; a child process with ``BLOOMKIT_NO_EXTENSION=1``
checks the switch and that files are byte-identical. XXH64 is checked against the reference
``xxhash`` package. Tests of the extension itself are skipped when it is not active (a build
without a compiler, or the suite's second pass with BLOOMKIT_NO_EXTENSION=1).
"""

from __future__ import annotations

import math
import os
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

import bloomkit
from bloomkit import (
    BloomFilter,
    CountingBloomFilter,
    InvalidParameterError,
    SplitBlockBloomFilter,
)
from bloomkit._engine import boundary as _boundary
from bloomkit._engine import hashing as _hashing
from bloomkit._engine.hashing import encode_key, hash64_tag, hash_many, tag_seed

C = _boundary.extension()
needs_c = pytest.mark.skipif(C is None, reason=f"compiled boundary not active: {_boundary.hash_path()}")
ROOT = Path(__file__).resolve().parents[1]


def py_hash64_tag(key: Any, seed: int) -> tuple[int, int]:
    """The reference: Python's canonical encoding and the reference XXH64."""
    tag, payload = encode_key(key)
    return xxhash.xxh64_intdigest(payload, tag_seed(seed, tag)), tag


def outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    """('ok', value) or (exception type name, message): errors compare as values."""
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001 - every error type is part of the comparison
        return type(e).__name__, str(e)


@pytest.fixture
def pure_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python / numba hashing in this process (the filters' Python methods stay reachable)."""
    monkeypatch.setattr(_hashing, "_C", None)


# every key kind of bloomkit._engine.hashing: str with non-ASCII and lone surrogates, bytes, bool, ints
# of any size and sign, floats with -0.0, inf and NaN, nested tuples
scalars = (
    st.text(alphabet=st.characters(blacklist_categories=()), max_size=40)
    | st.text(max_size=80)
    | st.binary(max_size=80)
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**63) - 2, max_value=2**63 + 2)
    | st.integers(min_value=-(2**200), max_value=2**200)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0.0, -0.0, float("nan"), 2**63, -(2**63), 2**64, -(2**63) - 1, "", b"", (), "\ud800", "a\udfffb"])
)
keys = st.recursive(scalars, lambda inner: st.tuples(inner, inner) | st.lists(inner, max_size=4).map(tuple),
                    max_leaves=12)
seeds = st.sampled_from([0, 1, 2**64 - 1, 0x9E3779B97F4A7C15]) | st.integers(0, 2**64 - 1)


def test_hash_path_is_reported() -> None:
    info = bloomkit.info()
    assert info["hash_path"] == _boundary.hash_path()
    assert info["extension"] is (C is not None)
    out = subprocess.run([sys.executable, "-m", "bloomkit", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"bloomkit {bloomkit.__version__} ({_boundary.hash_path()})"


def test_environment_switch_forces_numba_and_files_are_identical(tmp_path: Path) -> None:
    """A child with BLOOMKIT_NO_EXTENSION=1 runs on numba and writes the same file bytes."""
    script = (
        "import sys, bloomkit\n"
        "from bloomkit import BloomFilter, CountingBloomFilter, SplitBlockBloomFilter\n"
        "keys = ['a', 'é', '\\ud800', b'b', 1, -1, 2**70, 1.5, -0.0, True, (1, ('x', b'y'))]\n"
        "keys += [f'k{i}' for i in range(300)] + list(range(300))\n"
        "for i, cls in enumerate((BloomFilter, CountingBloomFilter, SplitBlockBloomFilter)):\n"
        "    f = cls(capacity=500, fpr=0.01, seed=7)\n"
        "    for k in keys: f.add(k)\n"
        "    assert all(k in f for k in keys)\n"
        "    f.save(sys.argv[1] + f'/{i}.bk')\n"
        "print(bloomkit.info()['hash_path'])\n"
    )
    outs = {}
    for name, env in (("numba", {"BLOOMKIT_NO_EXTENSION": "1"}), ("default", {})):
        d = tmp_path / name
        d.mkdir()
        e = {k: v for k, v in os.environ.items() if k != "BLOOMKIT_NO_EXTENSION"} | env
        r = subprocess.run([sys.executable, "-c", script, str(d)], capture_output=True, text=True, env=e, check=True)
        outs[name] = r.stdout.strip()
    assert outs["numba"] == "numba (BLOOMKIT_NO_EXTENSION=1)"
    if C is not None:
        assert outs["default"] == "c-extension"
    for i in range(3):
        assert (tmp_path / "numba" / f"{i}.bk").read_bytes() == (tmp_path / "default" / f"{i}.bk").read_bytes()


# -- hashing -----------------------------------------------------------------------------------


@needs_c
def test_xxh64_matches_the_reference_package() -> None:
    rng = np.random.default_rng(14)
    for n in list(range(0, 70)) + [100, 255, 256, 1000, 4097]:
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        for seed in (0, 1, 2**64 - 1, int(rng.integers(0, 2**63))):
            assert C.hash64(data, seed) == xxhash.xxh64_intdigest(data, tag_seed(seed, _hashing.TAG_BYTES))
            s = data.decode("latin-1")  # non-ASCII str: UTF-8 written by the extension
            assert C.hash64(s, seed) == xxhash.xxh64_intdigest(s.encode("utf-8"), tag_seed(seed, _hashing.TAG_STR))


@needs_c
@settings(max_examples=400, deadline=None)
@given(key=keys, seed=seeds)
def test_single_key_hash_and_encoding_match_python(key: Any, seed: int) -> None:
    assert outcome(C.encode, key) == outcome(encode_key, key)
    assert outcome(C.hash64_tag, key, seed) == outcome(py_hash64_tag, key, seed)
    assert outcome(hash64_tag, key, seed) == outcome(py_hash64_tag, key, seed)


@needs_c
@settings(max_examples=200, deadline=None)
@given(batch=st.lists(keys, max_size=30) | st.lists(scalars, max_size=30) | st.lists(st.text(max_size=12), max_size=30)
       | st.lists(st.integers(), max_size=30) | st.lists(st.floats(), max_size=30), seed=seeds)
def test_list_hashing_matches_python(batch: list[Any], seed: int) -> None:
    fast = outcome(_hashing._hash_list, batch, seed)
    saved = _hashing._C
    _hashing._C = None
    try:
        slow = outcome(_hashing._hash_list, batch, seed)
    finally:
        _hashing._C = saved
    assert fast[0] == slow[0]
    if fast[0] == "ok":
        assert fast[1][0].tolist() == slow[1][0].tolist() and fast[1][1] == slow[1][1]
        assert fast[1][0].tolist() == [py_hash64_tag(k, seed)[0] for k in batch]
    else:
        assert fast == slow


@pytest.mark.parametrize("bad", [
    [1, 2, None], ["a", float("nan")], [1.0, float("nan")], ["a", object()], [("x", [1])], [1, 2**64, {}],
])
def test_list_errors_are_the_python_paths(bad: list[Any], pure_hashing: None) -> None:
    with pytest.raises(InvalidParameterError) as slow:
        _hashing._hash_list(bad, 0)
    saved, _hashing._C = _hashing._C, C
    try:
        with pytest.raises(InvalidParameterError) as fast:
            _hashing._hash_list(bad, 0)
    finally:
        _hashing._C = saved
    assert str(fast.value) == str(slow.value)


def test_key_errors_are_identical_on_both_paths() -> None:
    for bad in (None, [1], {"a": 1}, float("nan"), ("a", float("nan")), object(), (1, (2, None))):
        msgs = set()
        for fn in (lambda k: hash64_tag(k, 3), lambda k: py_hash64_tag(k, 3)):
            with pytest.raises(InvalidParameterError) as e:
                fn(bad)
            msgs.add(str(e.value))
        assert len(msgs) == 1, msgs


def test_tuple_and_iterator_batches() -> None:
    ks = ["a", 1, (2, "b"), 2.5, b"x"]
    want = [py_hash64_tag(k, 5)[0] for k in ks]
    assert hash_many(tuple(ks), 5).tolist() == want
    with pytest.raises(InvalidParameterError, match="with a length"):  # iteration only over sized inputs
        hash_many(iter(ks), 5)
    assert hash_many(np.array(ks, dtype=object), 5).tolist() == want


# -- filters -----------------------------------------------------------------------------------

KEYS: list[Any] = (["", "a", "é", "naïve", "\ud800", "x" * 100, "\x00z", b"", b"b\x00", True, False, 0, -1,
                    2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**200, 0.0, -0.0, 1.5, math.inf, (), (1, ("x", b"y")),
                    np.int16(4), np.float32(2.5), np.bool_(True), np.str_("np"), np.bytes_(b"nb"), bytearray(b"ba")]
                   + [f"k{i}" for i in range(400)] + list(range(400)))
MAKERS = {
    "bloom": lambda: BloomFilter(num_bits=9973, num_hashes=5, seed=11),
    "bloom_double": lambda: BloomFilter(num_bits=9973, num_hashes=5, seed=11, probes="double"),
    "bloom_double7": lambda: BloomFilter(num_bits=1 << 13, num_hashes=7, seed=11, probes="double"),
    "bloom_double10": lambda: BloomFilter(num_bits=6000, num_hashes=10, seed=11, probes="double"),
    "counting4": lambda: CountingBloomFilter(num_bits=4001, num_hashes=4, seed=11),
    "counting8": lambda: CountingBloomFilter(num_bits=4000, num_hashes=3, counter_bits=8),
    "counting16": lambda: CountingBloomFilter(num_bits=999, num_hashes=7, counter_bits=16),
    "counting32": lambda: CountingBloomFilter(num_bits=998, num_hashes=2, counter_bits=32),
    "counting4_double": lambda: CountingBloomFilter(num_bits=4001, num_hashes=7, seed=11, probes="double"),
    "counting16_double": lambda: CountingBloomFilter(num_bits=1 << 10, num_hashes=10, counter_bits=16, probes="double"),
    "splitblock": lambda: SplitBlockBloomFilter(num_blocks=37, seed=11),
}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_single_keys_set_the_bits_of_the_python_path(name: str) -> None:
    fast, slow, batch = MAKERS[name](), MAKERS[name](), MAKERS[name]()
    for k in KEYS:
        fast.add(k)
        slow._py_add(k)
    batch.add_many(KEYS)
    assert fast.to_bytes() == slow.to_bytes() == batch.to_bytes()
    assert fast.key_types == slow.key_types == batch.key_types
    probe = KEYS + [f"q{i}" for i in range(500)] + [10**6 + i for i in range(500)]
    got = [k in fast for k in probe]
    assert got == [slow._py_contains(k) for k in probe] == fast.contains_many(probe).tolist()
    for bad in (None, float("nan"), [1], ("a", float("nan"))):
        with pytest.raises(InvalidParameterError) as e1:
            fast.add(bad)
        with pytest.raises(InvalidParameterError) as e2:
            slow._py_add(bad)
        assert str(e1.value) == str(e2.value)
        with pytest.raises(InvalidParameterError):
            _ = bad in fast
    assert fast.to_bytes() == slow.to_bytes()


@pytest.mark.parametrize("probes", ["independent", "double"])
def test_counters_saturate_alike(probes: str) -> None:
    fast, slow = (CountingBloomFilter(num_bits=64, num_hashes=3, probes=probes) for _ in range(2))
    for _ in range(20):
        fast.add("hot")
        slow._py_add("hot")
    assert fast.overflowed and slow.overflowed
    assert fast.to_bytes() == slow.to_bytes()
    fast.remove("hot")
    slow.remove("hot")
    assert fast.to_bytes() == slow.to_bytes()


def test_parquet_mode_keeps_the_python_methods() -> None:
    f = SplitBlockBloomFilter.for_parquet(physical_type="INT64", ndv=100, fpp=0.01)
    g = SplitBlockBloomFilter.for_parquet(physical_type="INT64", ndv=100, fpp=0.01)
    for v in range(50):
        f.add(v)
    g.add_many(list(range(50)))
    assert f.to_bytes() == g.to_bytes() and all(v in f for v in range(50))


@pytest.mark.parametrize("name", ["bloom", "counting4", "splitblock"])
def test_replaced_storage_is_followed(name: str, tmp_path: Path) -> None:
    """fold, clear, |=, copy, load, pickle and a swapped words array: the compiled methods
    always work on the filter's current storage, and key types are recorded anew."""
    import pickle

    f = MAKERS[name]()
    f.add("a")
    g = f.copy()
    g.add("b")
    assert "b" in g and f._py_contains("b") == ("b" in f)
    f.clear()
    assert "a" not in f and f.key_types == ()
    f.add(5)
    assert f.key_types == ("int",) and 5 in f
    f |= g
    assert "a" in f and "b" in f and f.key_types == ("int", "str")
    h = pickle.loads(pickle.dumps(f))
    h.add("c")
    assert "c" in h and h.key_types == ("int", "str")
    f.save(tmp_path / "f.bk")
    loaded = bloomkit.load(tmp_path / "f.bk")
    loaded.add(2.5)
    assert 2.5 in loaded and "float" in loaded.key_types
    if name != "splitblock":
        big = MAKERS[name]().__class__(num_bits=6000, num_hashes=3)
        big.add("x")
        big.fold(3)
        ref = big.__class__(num_bits=2000, num_hashes=3)
        ref.add("x")
        big.add("y")
        ref.add("y")
        assert big == ref
    else:
        sb = SplitBlockBloomFilter(num_blocks=36)
        sb.add("x")
        sb.fold(4)
        ref = SplitBlockBloomFilter(num_blocks=9)
        ref.add("x")
        sb.add("y")
        ref.add("y")
        assert sb == ref


def test_swapped_and_bad_words_arrays() -> None:
    f = BloomFilter(num_bits=4099, num_hashes=4)
    f.add("x")
    f.bits.words = f.bits.words.copy()  # the BitArray's slot: checked on every call
    f.add("later")
    assert "later" in f and f.contains_many(["later", "x"]).tolist() == [True, True]
    c = CountingBloomFilter(num_bits=100, num_hashes=3)
    c.add("x")
    c.counters.data = c.counters.data.copy()
    c.add("y")
    assert "y" in c and c.contains_many(["y"]).tolist() == [True]
    bad = CountingBloomFilter(num_bits=100, num_hashes=3)
    for arr in (np.zeros(3, np.uint8), np.zeros(50, np.uint16), np.zeros(100, np.uint8)[::2], [0] * 50):
        with pytest.raises(InvalidParameterError, match="'data' parameter of CounterArray"):
            bad.counters.data = arr  # type: ignore[assignment]  # both paths: checked on assignment
    with pytest.raises(InvalidParameterError, match="'words' parameter of BitArray"):
        f.bits.words = np.zeros(3, np.uint64)
    if C is not None:  # a read-only array: the compiled path refuses to write it
        ro = bad.counters.data.copy()
        ro.flags.writeable = False
        bad.counters.data = ro
        with pytest.raises(InvalidParameterError, match="storage of this CountingBloomFilter"):
            bad.add("k")
        with pytest.raises(InvalidParameterError, match="storage of this CountingBloomFilter"):
            _ = "k" in bad
        frozen = SplitBlockBloomFilter(num_blocks=5)
        frozen.words.flags.writeable = False
        with pytest.raises(InvalidParameterError, match="storage of this SplitBlockBloomFilter"):
            frozen.add("k")


def test_threads_lose_no_bits_with_storage_swaps() -> None:
    f = BloomFilter(num_bits=1 << 15, num_hashes=5)
    ref = BloomFilter(num_bits=1 << 15, num_hashes=5)
    work = [[f"t{t}-{i}" for i in range(4000)] + list(range(t * 10**6, t * 10**6 + 2000)) for t in range(4)]
    ts = [threading.Thread(target=lambda ks=ks: [f.add(k) for k in ks]) for ks in work]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for ks in work:
        ref.add_many(ks)
    assert f == ref


@needs_c
def test_filter_base_class_is_compiled() -> None:
    assert isinstance(BloomFilter(capacity=10, fpr=0.1), C.FilterCore)
    assert BloomFilter.add is C.FilterCore.add
    f = BloomFilter(capacity=10, fpr=0.1)
    assert f._core_kind == 0  # bound on first use
    f.add("x")
    assert f._core_kind == _boundary.KIND_BITS


def test_float_payload_reference() -> None:
    """-0.0 and 0.0 are one key, NaN is refused (module docstring of _hashing)."""
    assert hash64_tag(-0.0, 1) == hash64_tag(0.0, 1) == (xxhash.xxh64_intdigest(struct.pack("<d", 0.0), tag_seed(1, 6)), 6)
