"""Canonical encoding and hashing: reference implementation, golden vectors, batch == single."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomkit import InvalidParameterError
from bloomkit._engine import hashing as H
from bloomkit._engine import kernels as K

GOLDEN = [  # (key, h1 with seed 0, h1 with seed 12345): pinned, never to change
    ("", 14138100816866770944, 11761527706698556579),
    ("a", 11131892426046007497, 14694363965411039297),
    ("hello world", 11471806885758874638, 8416440289042973092),
    ("héllo", 9393579367416996391, 14061813320921533278),
    (b"", 10409841044627374142, 11921863089037975537),
    (b"\x00\xff", 17559234352902144926, 16437873931294873711),
    (True, 13326220790326686422, 8249752305272265750),
    (False, 1355380655734680270, 11621545741508320444),
    (0, 893477769520319563, 11779735207589170476),
    (1, 12396469366980826958, 15085645571213570244),
    (-1, 11110769850763399585, 7149773951936728060),
    (2**63 - 1, 9305555520358581904, 15229553913693780869),
    (-(2**63), 17935731859415538524, 8733344805083956416),
    (2**64 - 1, 17948066320776962351, 14748015331127740551),
    (2**100, 1199509344027780001, 18372878128884749326),
    (0.0, 3182594086595051792, 12874043466503942223),
    (1.5, 10932113644300965451, 3895384762484651847),
    (-2.25, 9536043034218493967, 4730687176107113391),
    (float("inf"), 14540098041391150463, 7850262860563559777),
    ((1, "a"), 4745620244161354512, 3515173326569178835),
    (((), (b"x", 2.0)), 7031325269993251609, 2554541137435241308),
]


@pytest.mark.parametrize(("key", "h0", "h1"), GOLDEN)
def test_golden_vectors(key, h0, h1):
    assert H.hash64(key, 0) == h0
    assert H.hash64(key, 12345) == h1


@pytest.mark.parametrize("length", [0, 1, 3, 4, 7, 8, 9, 15, 16, 31, 32, 33, 63, 64, 65, 100, 1000])
@pytest.mark.parametrize("seed", [0, 1, 2**32, 2**64 - 1])
def test_kernel_matches_reference_xxh64(length, seed):
    data = bytes((i * 131 + 7) % 256 for i in range(length))
    buf = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(0, np.uint8)
    assert int(K.xxh64(buf, 0, length, np.uint64(seed))) == xxhash.xxh64_intdigest(data, seed)
    assert H._xxh64_bytes(data, seed) == xxhash.xxh64_intdigest(data, seed)


def test_hash_is_xxh64_of_payload_with_tag_seed():
    for key in ["abc", b"abc", 7, 2.5, True, (1, 2)]:
        tag, payload = H.encode_key(key)
        assert H.hash64(key, 99) == xxhash.xxh64_intdigest(payload, H.tag_seed(99, tag))


def test_encoding_distinguishes_types():
    keys = [1, 1.0, "1", b"1", True, (1,), 2**64]
    assert len({H.encode_key(k) for k in keys}) == len(keys)
    assert len({H.hash64(k) for k in keys}) == len(keys)


def test_equal_values_of_numpy_and_python_types_are_one_key():
    assert H.hash64(np.int32(5)) == H.hash64(5) == H.hash64(np.uint8(5))
    assert H.hash64(np.float32(0.5)) == H.hash64(0.5)
    assert H.hash64(np.str_("x")) == H.hash64("x")
    assert H.hash64(np.bytes_(b"x")) == H.hash64(b"x")
    assert H.hash64(np.bool_(True)) == H.hash64(True)
    assert H.hash64(-0.0) == H.hash64(0.0)
    assert H.hash64(bytearray(b"ab")) == H.hash64(b"ab") == H.hash64(memoryview(b"ab"))


def test_tuple_encoding_is_unambiguous():
    assert H.hash64(("ab", "c")) != H.hash64(("a", "bc"))
    assert H.hash64(((1,), 2)) != H.hash64((1, (2,)))
    tag, payload = H.encode_key(("a",))
    assert payload == bytes([H.TAG_STR]) + struct.pack("<Q", 1) + b"a"


def test_tuple_nesting_is_bounded_on_both_paths():
    """Keys nest tuples at most MAX_KEY_DEPTH deep, on the compiled and the numba path alike (a
    deeper key was a RecursionError, or a C stack overflow); the deepest key allowed hashes the
    same single and in a batch, and a filter refuses a deeper one by name."""
    import bloomkit

    key: object = 1
    for _ in range(H.MAX_KEY_DEPTH):
        key = (key,)
    assert H.hash_many([key], 3)[0] == H.hash64(key, 3)
    f = bloomkit.BloomFilter(capacity=10, fpr=0.01)
    f.add(key)
    assert key in f
    calls = (lambda k: H.hash64(k, 3), lambda k: H.hash_many([k], 3), f.add, f.__contains__)
    for deeper in ((key,), (((key,),),), _nest(3000)):
        for call in calls:
            with pytest.raises(InvalidParameterError, match="nest tuples more than 64 levels"):
                call(deeper)


def _nest(depth: int) -> object:
    key: object = "leaf"
    for _ in range(depth):
        key = (key,)
    return key


@pytest.mark.parametrize("bad", [None, [1], {1: 2}, {1}, object(), float("nan"), np.float64("nan"), 1j, ("a", None)])
def test_unsupported_keys_raise(bad):
    with pytest.raises(InvalidParameterError):
        H.hash64(bad)


def _single(keys, seed=5):
    return np.array([H.hash64(k, seed) for k in keys], dtype=np.uint64)


@pytest.mark.parametrize(
    "keys",
    [
        ["a", "bb", "", "héllo", "日本語", "\U0001f600"],
        ["a\x00b", "c"],  # NUL inside a key: the pyarrow fallback
        ["a" * i for i in range(20)],  # every length around the 8-byte separator scan
        ["abcdefgh", "ijklmnop", ""],
        ["abcdefghi\x00"],
        ["\x00"],
        [""],
        [b"x", b"", b"\x00\x01"],
        [1, -2, 2**62, 0],
        [0.5, -0.0, 1e300, float("-inf")],
        [True, False],
        [1, "1", 1.0, b"1", (1, "a"), 2**70, True],
        ["", b""],  # str first, then bytes: must not be read as str
        [b"", "", bytearray(b"x")],
        ["\ud800x"],  # lone surrogate passes through
        [],
    ],
)
def test_batch_list_equals_single(keys):
    assert np.array_equal(H.hash_many(keys, 5), _single(keys))
    assert np.array_equal(H.hash_many(tuple(keys), 5), _single(keys))
    with pytest.raises(InvalidParameterError, match="with a length"):  # iteration only over sized inputs
        H.hash_many(iter(keys), 5)


def test_batch_numpy_equals_single():
    ints = np.array([1, -5, 2**40, 0], dtype=np.int64)
    assert np.array_equal(H.hash_many(ints, 5), _single(ints.tolist()))
    for dt in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32):
        a = np.arange(10, dtype=dt)
        assert np.array_equal(H.hash_many(a, 5), _single(a.tolist()))
    u = np.array([0, 2**63, 2**64 - 1], dtype=np.uint64)
    assert np.array_equal(H.hash_many(u, 5), _single([int(x) for x in u]))
    f = np.array([0.5, -0.0, 3.0], dtype=np.float32)
    assert np.array_equal(H.hash_many(f, 5), _single([float(x) for x in f]))
    b = np.array([True, False, True])
    assert np.array_equal(H.hash_many(b, 5), _single([True, False, True]))
    s = np.array(["a", "héllo", "", "日本"])
    assert np.array_equal(H.hash_many(s, 5), _single(s.tolist()))
    by = np.array([b"ab", b"c", b""])
    assert np.array_equal(H.hash_many(by, 5), _single(by.tolist()))
    o = np.array([1, "a", 2.5], dtype=object)
    assert np.array_equal(H.hash_many(o, 5), _single([1, "a", 2.5]))
    rows = np.array([[1, 0, 0], [0, 0, 0], [255, 7, 0]], dtype=np.uint8)  # trailing NULs count
    assert np.array_equal(H.hash_many(rows, 5), _single([bytes(r) for r in rows]))
    assert np.array_equal(H.hash_many(rows[:, ::2], 5), _single([bytes(r) for r in rows[:, ::2]]))
    strided = np.arange(20)[::3]
    assert np.array_equal(H.hash_many(strided, 5), _single(strided.tolist()))


def test_batch_pyarrow_equals_single():
    keys = ["a", "bb", "", "héllo"]
    for t in (pa.string(), pa.large_string()):
        arr = pa.array(keys, type=t)
        assert np.array_equal(H.hash_many(arr, 5), _single(keys))
        assert np.array_equal(H.hash_many(arr.slice(1, 2), 5), _single(keys[1:3]))
    for t in (pa.binary(), pa.large_binary()):
        arr = pa.array([k.encode() for k in keys], type=t)
        assert np.array_equal(H.hash_many(arr, 5), _single([k.encode() for k in keys]))
    chunked = pa.chunked_array([pa.array(["a"]), pa.array(["bb", "c"])])
    assert np.array_equal(H.hash_many(chunked, 5), _single(["a", "bb", "c"]))
    assert np.array_equal(H.hash_many(pa.array([3, 4]), 5), _single([3, 4]))


def test_batch_bad_input():
    with pytest.raises(InvalidParameterError, match="NaN"):
        H.hash_many(np.array([1.0, np.nan]))
    with pytest.raises(InvalidParameterError, match="null"):
        H.hash_many(pa.array(["a", None]))
    with pytest.raises(InvalidParameterError):
        H.hash_many(np.zeros((2, 2)))  # 2-D is only for uint8 rows
    with pytest.raises(InvalidParameterError):
        H.hash_many(np.zeros((2, 2, 2), dtype=np.uint8))
    with pytest.raises(InvalidParameterError):
        H.hash_many(np.array([1 + 2j]))
    with pytest.raises(InvalidParameterError):
        H.hash_many(["a", None])
    with pytest.raises(InvalidParameterError):
        H.hash_many("abc")
    with pytest.raises(InvalidParameterError):
        H.hash_many(5)
    with pytest.raises(InvalidParameterError):
        H.hash_many(pa.array([[1], [2]]))
    with pytest.raises(InvalidParameterError):
        H.hash_many([1.0, float("nan")])


def test_positions_independent_of_m_and_fold_consistent():
    h1 = H.hash_many(np.arange(2000), 3)
    m = 2 * 3 * 5 * 7 * 64
    big = H.positions(h1, 7, m)
    for d in (2, 3, 5, 7, 6, 35, 64):
        assert np.array_equal(big % (m // d), H.positions(h1, 7, m // d))
    # the kernel equals the pure-Python reference G_i = splitmix64(h1 + (i + 1) * golden)
    for h in h1[:20].tolist() + [0, 2**64 - 1]:
        want = [H.probe(h, i) % 1009 for i in range(9)]
        assert H.positions_one(h, 9, 1009) == want
        assert H.positions(np.array([h], dtype=np.uint64), 9, 1009)[0].tolist() == want
    # SplitMix64 reference outputs (state 0: 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, ...)
    assert [H.probe(0, i) for i in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


@pytest.mark.parametrize("m", [50_000, 2**14, 3 * 2**16, 2 * 3 * 5 * 7 * 11 * 13 * 17])
def test_probe_positions_uniform_on_composite_sizes(m):
    """Distinct bits set by n keys match m (1 - (1 - 1/m)^(nk)) on composite m.

    Double hashing (h1 + i*h2 mod m) fails this: at m = 50,000 it set 2.6% fewer bits.
    """
    n, k = m // 10, 5
    pos = H.positions(H.hash_many(np.arange(n), 1), k, m)
    distinct = len(np.unique(pos))
    p0 = (1 - 1 / m) ** (n * k)
    assert abs(distinct - m * (1 - p0)) <= 5 * np.sqrt(m * p0 * (1 - p0))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.text(), st.binary(), st.integers(), st.floats(allow_nan=False), st.booleans()), max_size=20))
def test_batch_equals_single_property(keys):
    assert np.array_equal(H.hash_many(keys, 11), _single(keys, 11))


def test_independent_of_pythonhashseed_and_process():
    code = "from bloomkit._engine.hashing import hash64; print(hash64('abc', 7), hash64((1, 2.5), 7))"
    outs = set()
    for seed in ("0", "1", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout)
    assert len(outs) == 1
    assert outs.pop().split() == [str(H.hash64("abc", 7)), str(H.hash64((1, 2.5), 7))]


def test_seed_validation():
    assert H.check_seed(2**64 - 1, "X") == 2**64 - 1
    for bad in (-1, 2**64, 1.5, "1", True):
        with pytest.raises(InvalidParameterError, match="'seed'"):
            H.check_seed(bad, "X")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=30), st.integers(1, 2**63 - 1))
def test_fastmod_is_exact(xs, m):
    got = K.fastmod_many(np.array(xs, dtype=np.uint64), np.uint64(m))
    assert got.tolist() == [x % m for x in xs]


def test_fastmod_edges():
    for m in (1, 2, 3, 2**32, 2**32 + 1, 2**63 - 1, 2**62, 9585059):
        xs = [0, 1, m - 1, m, m + 1, 2**64 - 1, 2**64 - m, (2**64 // m) * m - 1, (2**64 // m) * m - m]
        xs = [x for x in xs if 0 <= x < 2**64]
        got = K.fastmod_many(np.array(xs, dtype=np.uint64), np.uint64(m))
        assert got.tolist() == [x % m for x in xs]


def test_nul_and_surrogate_together():
    keys = ["a\x00\ud800", "b"]
    assert np.array_equal(H.hash_many(keys, 5), _single(keys))


def test_import_is_light():
    """``import bloomkit`` imports neither numba nor pyarrow (kernels load on first use)."""
    code = "import sys, bloomkit; print('numba' in sys.modules, 'pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("odd", [None, "a\x00b", "\ud800x", "a\x00\ud800", 7, b"x"])
def test_str_lists_span_chunks(odd: object) -> None:
    """Lists of str are hashed STR_CHUNK keys at a time; an odd key in a later chunk (NUL,
    lone surrogate, both, a non-str) gives the same hashes as key-by-key hashing."""
    n = 2 * H.STR_CHUNK + 17
    keys: list = [f"k{i}é" if i % 5 == 0 else f"k{i}" for i in range(n)]
    if odd is not None:
        keys[H.STR_CHUNK + 3] = odd
    assert np.array_equal(H.hash_many(keys, 11), _single(keys, 11))
