"""Single-item fast paths (issue 14): ParallelBloomFilter ``add`` / ``in`` of one item and the
point query ``might_contain`` of the ranges filter give exactly the answers, contents and
errors of the batch / record paths. Runs with the compiled boundary and on numba alone
(``make test``'s second pass).

The test names avoid the words of the Makefile's PURE_SKIP so that the numba-only pass runs them.
"""

from __future__ import annotations

import math
import random
import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bloomkit._engine import boundary as _boundary
from bloomkit.errors import InvalidParameterError
from bloomkit.multiattr import ParallelBloomFilter
from bloomkit.multiattr.table import MAX_ITEMS
from bloomkit.ranges import Decimal, Integer, RangeBloomFilter, RangeConfig, Schema, Text
from bloomkit.ranges.records import record_batch

# -- ParallelBloomFilter -----------------------------------------------------------------------

PBF_CONFIGS = [
    # p, q, m, counter_bits, verification: 32-bit and 64-bit table keys, saturating counters
    (3, 7, 1 << 12, 4, "attenuated"),
    (2, 3, 5, 4, "basic"),
    (4, 40, 1 << 16, 8, "attenuated"),
    (1, 1, 1, 16, "attenuated"),
]


def _items(rng: random.Random, p: int, n: int) -> list[tuple[Any, ...]]:
    kinds = [
        lambda i: f"v{rng.randrange(n)}-é",
        lambda i: rng.randrange(-(2**70), 2**70),
        lambda i: rng.randrange(50),
        lambda i: rng.choice([0.5, -0.0, 1e300, 2.25]),
        lambda i: rng.randbytes(rng.randrange(4)),
        lambda i: (rng.randrange(3), "x"),
        lambda i: rng.random() < 0.5,
    ]
    cols = [kinds[(c + p) % len(kinds)] for c in range(p)]
    return [tuple(col(i) for col in cols) for i in range(n)]


@pytest.mark.parametrize("p,q,m,b,verification", PBF_CONFIGS)
def test_single_adds_equal_the_batch_path(p: int, q: int, m: int, b: int, verification: str) -> None:
    rng = random.Random(p * 1000 + q)
    items = _items(rng, p, 600)  # the table grows several times through single adds
    one = ParallelBloomFilter(p, q, m, counter_bits=b, verification=verification, seed=7)
    many = ParallelBloomFilter(p, q, m, counter_bits=b, verification=verification, seed=7)
    for it in items:
        one.add(it)
    many.add_many(items)
    one._check()
    assert one == many and len(one) == len(many) == len(items)
    assert one.overflowed == many.overflowed
    assert one.attribute_key_types == many.attribute_key_types
    probes = items[::3] + _items(random.Random(99), p, 300)
    assert [it in one for it in probes] == many.contains_many(probes).tolist()
    assert all(it in one for it in items)


def test_single_items_as_lists_mappings_and_arrays() -> None:
    f = ParallelBloomFilter(3, 4, 256, attributes=["a", "b", "c"])
    f.add(["x", 1, 2.5])
    f.add({"c": 3, "b": 2, "a": "y"})
    f.add(np.array([7, 8, 9]))
    assert ("x", 1, 2.5) in f and ["y", 2, 3] in f and {"a": 7, "b": 8, "c": 9} in f
    assert ("x", 1, 2.0) not in f
    assert set(f.key_types) == {"str", "int", "float"}
    f.remove(("x", 1, 2.5))
    assert ("x", 1, 2.5) not in f and len(f) == 2
    f._check()


def test_md5_single_items_take_the_general_path() -> None:
    items = _items(random.Random(3), 3, 200)
    one = ParallelBloomFilter(3, 6, 512, hash="md5")
    many = ParallelBloomFilter(3, 6, 512, hash="md5")
    for it in items:
        one.add(it)
    many.add_many(items)
    assert one == many and all(it in one for it in items)


@pytest.mark.parametrize("bad", [
    ("a", 1),  # p = 2 values
    ("a", 1, float("nan")),
    ("a", 1, object()),
    "abc",
    {"a": 1, "b": 2, "c": 3},  # no attribute names
    None,
])
def test_single_item_errors_are_the_general_paths(bad: Any) -> None:
    f = ParallelBloomFilter(3, 4, 256)
    f.add(("ok", 1, 2))
    before = f.copy()
    with pytest.raises(InvalidParameterError) as general:
        f.verification_value(bad)  # the general single-item path (hash_item)
    for op in (f.add, f.__contains__):
        with pytest.raises(InvalidParameterError) as fast:
            op(bad)
        assert str(fast.value) == str(general.value)
    assert f == before and len(f) == 1
    f._check()


def test_a_full_table_refuses_a_single_add_and_changes_nothing() -> None:
    f = ParallelBloomFilter(2, 3, 64)
    f.add(("a", 1))
    before = f._counters.data.copy()
    f._table.total = MAX_ITEMS  # as if full (counts are int32)
    with pytest.raises(InvalidParameterError, match="at most"):
        f.add(("b", 2))
    assert np.array_equal(f._counters.data, before)
    f._table.total = 1
    f._check()


# -- point queries of the ranges filter --------------------------------------------------------

SCHEMA = Schema([Integer("Age", -300, 700), Decimal("Lat", -90, 90, 4), Text("Name"), Decimal("Price", 0, 1000, 0)])
CONFIGS = [
    RangeConfig(7, {"Age": (4, 2), "Lat": (100, 3)}),  # grouping-overlapping, r = 3 and 2
    RangeConfig(6, {"Age": (1, 6), "Lat": (3, 6), "Price": (2, 4)}),  # grouping, overlapping
    5,  # traditional
]
POINTS = ["Age", "Lat", "Name", "Price"]


def _record_path(f: RangeBloomFilter, attribute: str, value: Any) -> bool:
    """The answer of the record path (what might_contain computed before the fast path)."""
    return f._all_set(f._positions_of({attribute: value}, "RangeBloomFilter.might_contain"))


def _filled(config: Any, hash_name: str = "xxh64", seed: int = 5) -> RangeBloomFilter:
    f = RangeBloomFilter(SCHEMA, 1 << 11, config, hash=hash_name, seed=0 if hash_name == "sha512" else seed)
    rng = random.Random(11)
    records = []
    for i in range(60):
        a = rng.randrange(-300, 690)
        records.append({"Age": (a, a + rng.randrange(10)), "Lat": round(rng.uniform(-90, 90), 4),
                        "Name": f"n{i}", "Price": rng.randrange(1001)})
    f.insert_many(records)
    return f


FILTERS = {(i, h): _filled(c, h) for i, c in enumerate(CONFIGS) for h in ("xxh64", "sha512")}
NUMPY_SCALARS = [np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint64, np.float64, np.float32]


def _numpy(values: Any) -> Any:
    """The same values as numpy scalars (of a type that holds them), or the value itself."""
    def convert(v: Any, t: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool) and np.issubdtype(t, np.integer):
            info = np.iinfo(t)
            return t(v) if info.min <= v <= info.max else v
        return t(v) if isinstance(v, float) and np.issubdtype(t, np.floating) else v
    return st.tuples(values, st.sampled_from(NUMPY_SCALARS)).map(lambda vt: convert(*vt))


VALUES = {
    "Age": st.one_of(st.integers(-300, 700), _numpy(st.integers(-310, 710))),
    "Lat": st.one_of(st.floats(-90, 90), st.integers(-90, 90), st.sampled_from([0.00005, -0.00015, 25.0999, -0.0]),
                     _numpy(st.one_of(st.floats(-91, 91), st.integers(-91, 91)))),
    "Name": st.one_of(st.text(max_size=6), st.sampled_from([f"n{i}" for i in range(60)])),
    "Price": st.one_of(st.integers(0, 1000), st.floats(0, 1000), _numpy(st.floats(-1, 1001))),
}


@settings(max_examples=300, deadline=None)
@given(data=st.data())
@example(data=None)
def test_point_query_equals_the_record_path(data: Any) -> None:
    cases = ([(k, a, v) for k in FILTERS for a, v in (("Age", -300), ("Age", 700), ("Lat", 90.0), ("Lat", -89.99995),
                                                       ("Name", "n3"), ("Price", 999.5))] if data is None else
             [(data.draw(st.sampled_from(sorted(FILTERS))), a, data.draw(VALUES[a])) for a in POINTS])
    for key, attribute, value in cases:
        f = FILTERS[key]
        try:
            expected = _record_path(f, attribute, value)
        except InvalidParameterError as e:  # e.g. a lone surrogate, a float of Price out of scope
            with pytest.raises(InvalidParameterError) as fast:
                f.might_contain(attribute, value)
            assert str(fast.value) == str(e)
            continue
        assert f.might_contain(attribute, value) is expected, (key, attribute, value)


def test_point_queries_find_every_inserted_value() -> None:
    for (i, h), f in FILTERS.items():
        for a in range(-300, 701, 7):
            assert f.might_contain("Age", a) == _record_path(f, "Age", a), (i, h, a)
        assert all(f.might_contain("Name", f"n{j}") for j in range(60))
    f = FILTERS[0, "xxh64"]
    assert f.layout.points and not FILTERS[0, "sha512"].layout.points  # sha512: the record path only


@pytest.mark.parametrize("attribute,value", [
    ("Age", 701), ("Age", -301), ("Age", 3.0), ("Age", True), ("Age", "3"), ("Age", np.int64(10**6)),
    ("Age", np.uint64(2**63 + 5)), ("Age", np.bool_(True)), ("Age", np.float64(3.0)), ("Lat", np.float64("nan")),
    ("Age", (1, 2)), ("Age", range(3)), ("Age", None),
    ("Lat", float("nan")), ("Lat", float("inf")), ("Lat", 90.00005), ("Lat", 91), ("Lat", False), ("Lat", 1e300),
    ("Name", 3), ("Name", "\udc80"), ("Name", b"x"), ("Price", -0.5), ("Price", 1000.5),
    ("Nope", 3), (["Age"], 3),
])
def test_point_query_errors_are_the_record_paths(attribute: Any, value: Any) -> None:
    f = FILTERS[0, "xxh64"]
    with pytest.raises(InvalidParameterError) as fast:
        f.might_contain(attribute, value)
    g = FILTERS[0, "sha512"]  # no fast path: the record path's message
    with pytest.raises(InvalidParameterError) as general:
        g.might_contain(attribute, value)
    assert str(fast.value) == str(general.value)


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), st.integers(0, 12))
@example(0.00005, 4)
@example(2.5, 0)
@example(-2.5, 0)
@example(1.0000000000000002, 12)
def test_decimal_scale_float_agrees_with_scale(x: float, places: int) -> None:
    d = Decimal("x", -1, 1, places)
    fast = d.scale_float(x)
    if fast is not None:
        assert fast == d.scale(x)
    elif math.isfinite(x) and abs(x) * 10.0**places < 2**52 * 0.99:
        # only values near a rounding tie are left to scale()
        y = abs(x) * 10.0**places
        assert abs(y - math.floor(y) - 0.5) <= y * 1e-15 + 1e-300


def test_an_add_nested_in_the_hashing_of_another_keeps_both() -> None:
    """User code may run while a value is hashed (an int subclass on the numba path): an add
    nested there must not share the outer add's scratch array."""
    f = ParallelBloomFilter(2, 4, 512)

    class Sneaky(int):
        def __int__(self) -> int:
            f.add(("inner", 7))
            return 5

        __index__ = __int__

    f.add(("outer", Sneaky(5)))
    assert len(f) == 2 and ("outer", 5) in f and ("inner", 7) in f
    f._check()
    g = ParallelBloomFilter(2, 4, 512)
    g.add_many([("inner", 7), ("outer", 5)])
    assert f == g


# -- the compiled boundary of single items (bloomkit._speedups.ItemCore / PointTest) ----------

C = _boundary.extension()
needs_c = pytest.mark.skipif(C is None, reason=f"compiled boundary not active: {_boundary.hash_path()}")


@needs_c
def test_the_compiled_item_and_point_paths_are_active() -> None:
    assert ParallelBloomFilter.add is C.ItemCore.add and ParallelBloomFilter.__contains__ is C.ItemCore.__contains__
    f = ParallelBloomFilter(2, 3, 64)
    assert f._core_kind == 0  # bound on first use
    f.add(("a", 1))
    assert f._core_kind == _boundary.KIND_ITEMS and ("a", 1) in f
    g = ParallelBloomFilter(2, 3, 64, hash="md5")
    g.add(("a", 1))
    assert g._core_kind == _boundary.KIND_PYTHON and ("a", 1) in g
    for name, point in FILTERS[0, "xxh64"].layout.points.items():
        assert isinstance(point, C.PointTest), name


def test_single_items_follow_replaced_storage(tmp_path: Any) -> None:
    """clear, |=, copy, pickle, load, table growth and a swapped counter array: single adds and
    queries always work on the filter's current counters and table, key types noted anew."""
    import pickle

    import bloomkit

    f = ParallelBloomFilter(2, 4, 1 << 10, counter_bits=8)
    f.add(("a", 1))
    g = f.copy()
    g.add(("b", 2))
    assert ("b", 2) in g and ("b", 2) not in f
    f.clear()
    assert ("a", 1) not in f and f.attribute_key_types == ((), ())
    f.add((2.5, b"x"))
    assert f.attribute_key_types == (("float",), ("bytes",))
    f |= g
    assert ("a", 1) in f and ("b", 2) in f and (2.5, b"x") in f
    h = pickle.loads(pickle.dumps(f))
    h.add(("c", 3))
    assert ("c", 3) in h and ("c", 3) not in f
    f.save(tmp_path / "f.bk")
    loaded = bloomkit.load(tmp_path / "f.bk")
    loaded.add(("d", 4))
    assert ("d", 4) in loaded and len(loaded) == len(f) + 1
    f._counters.data = f._counters.data.copy()
    f.add(("e", 5))
    assert ("e", 5) in f and f.contains_many([("e", 5)]).tolist() == [True]
    cap = f._table.capacity
    for i in range(cap):  # the table grows under single adds
        f.add((f"g{i}", i))
    assert f._table.capacity > cap and all((f"g{i}", i) in f for i in range(cap))
    f._check()


@needs_c
def test_bad_storage_is_refused_by_single_items() -> None:
    """The compiled path checks the storage it binds (a read-only counter array is refused;
    a wrong-sized one cannot be assigned at all)."""
    f = ParallelBloomFilter(2, 3, 64)
    f.add(("a", 1))
    good = f._counters.data
    with pytest.raises(InvalidParameterError, match="'data' parameter of CounterArray"):
        f._counters.data = np.zeros(3, np.uint8)  # refused on assignment (both paths)
    ro = good.copy()
    ro.flags.writeable = False
    f._counters.data = ro
    for op in (f.add, f.__contains__):
        with pytest.raises(InvalidParameterError, match="storage of this ParallelBloomFilter"):
            op(("k", 1))
    f._counters.data = good
    assert ("a", 1) in f
    p, q, m = 2, 3, 64
    args = [f._counters, f._table, p, q, m, 4, f._seeds, f._weights, f._mutex, MAX_ITEMS, 0.7]
    for i, bad in ((4, m * 1000), (2, 65), (3, 63), (6, (1,)), (7, np.zeros(2, np.int64)), (10, 1.5)):
        with pytest.raises((ValueError, TypeError)):
            f._item_bind(_boundary.KIND_ITEMS, *(args[:i] + [bad] + args[i + 1:]))
    assert f._core_kind == 0
    f.add(("b", 2))  # re-bound from the filter's own storage
    assert ("a", 1) in f and ("b", 2) in f and f._core_kind == _boundary.KIND_ITEMS


def test_an_error_while_noting_key_types_releases_the_lock() -> None:
    f = ParallelBloomFilter(2, 3, 64)

    def boom(masks: Any) -> None:
        raise RuntimeError("boom")

    f._note_keys = boom  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="boom"):
        f.add(("a", 1))
    got: list[bool] = []
    t = threading.Thread(target=lambda: got.append(f._mutex.acquire(blocking=False)))
    t.start()
    t.join()
    assert got == [True]


@needs_c
def test_point_test_refuses_bad_parameters_and_words() -> None:
    good = dict(text=False, decimal=True, prefix=b"Lat:", seed=1, m=1000, k=7, d=100, s=3, last=1, nkeys=3,
                base=-900000, lo=-900000, hi=900000, unit=10**4, factor=1e4)
    t = C.PointTest(**good)
    assert t.test(np.zeros(16, np.uint64), 25.5, "x") is False
    assert t.test(np.zeros(16, np.uint64), 90.5, "x") is None  # out of scope: the record path
    with pytest.raises(ValueError, match="smaller than m bits"):
        t.test(np.zeros(15, np.uint64), 25.5, "x")
    for name, bad in (("m", 0), ("k", 0), ("d", 0), ("nkeys", 0), ("hi", -10**6), ("unit", 0), ("factor", float("nan")),
                      ("prefix", b"x" * 2000), ("d", 2**59)):
        with pytest.raises((ValueError, OverflowError)):
            C.PointTest(**{**good, name: bad})


def test_numpy_scalars_take_the_point_path() -> None:
    """A numpy integer or float64 scalar in scope is answered by the point query itself (not
    the record path), with the answer of the equal Python number."""
    f = FILTERS[0, "xxh64"]
    words = f.bits.words
    points = f.layout.points
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.longlong):
        for a in range(0, 100, 7):
            assert points["Age"].test(words, t(a), "w") is f.might_contain("Age", a), (t, a)
    for x in (25.0999, -89.5, 0.0, 12.34567):
        assert points["Lat"].test(words, np.float64(x), "w") is f.might_contain("Lat", x)
    assert points["Lat"].test(words, np.float32(25.5), "w") is None  # float32: the record path


@settings(max_examples=300, deadline=None)
@given(data=st.data())
@example(data=None)
def test_range_queries_equal_the_vectorised_paths(data: Any) -> None:
    """might_cover / might_intersect of plain (lo, hi) pairs (the compiled call with the
    extension; cover in one kernel on numba alone) give the record path's answers and errors."""
    widths = {"Age": st.integers(-2, 60), "Lat": st.floats(-0.001, 0.05), "Price": st.integers(-2, 60)}
    if data is None:  # whole scopes too (Lat: 1.8M groups at d = 1, beyond MAX_GROUPS: the record path)
        cases = [(k, a, lo, hi) for k in FILTERS for a, lo, hi in (
            ("Age", -300, 700), ("Age", 5, 5), ("Age", 700, 700), ("Lat", 25.0999, 25.1), ("Price", 0, 1000),
            ("Age", 10, 9), ("Age", -301, 3), ("Name", 1, 2), ("Lat", 1, float("nan")), ("Age", (1, 2), 3))]
        cases += [((i, "xxh64"), "Lat", -90.0, 90.0) for i in range(len(CONFIGS))]
    else:  # windows of up to ~60 groups from any value of VALUES (numpy scalars, out of scope, ...)
        cases = []
        for _ in range(4):
            a = data.draw(st.sampled_from(sorted(widths)))
            lo = data.draw(VALUES[a])
            width = data.draw(widths[a])
            hi = lo + width if type(lo) in (int, float) and not isinstance(lo, bool) else lo
            cases.append((data.draw(st.sampled_from(sorted(FILTERS))), a, lo, hi))
    for key, attribute, lo, hi in cases:
        f = FILTERS[key]
        for fast, slow in ((f.might_cover, f._cover_record), (f.might_intersect, f._intersect_groups)):
            try:
                expected = slow(attribute, lo, hi)
            except InvalidParameterError as e:
                with pytest.raises(InvalidParameterError) as got:
                    fast(attribute, lo, hi)
                assert str(got.value) == str(e)
                continue
            assert fast(attribute, lo, hi) is expected, (key, attribute, lo, hi, fast.__name__)


def test_range_queries_of_every_window_equal_the_vectorised_paths() -> None:
    """Every (lo, hi) window of Age in steps (r = 0, 1, 2 and 3 groups of look-ahead)."""
    for (i, h), f in FILTERS.items():
        for lo in range(-300, 700, 13):
            for width in (0, 1, 3, 8, 40):
                hi = min(700, lo + width)
                assert f.might_intersect("Age", lo, hi) is f._intersect_groups("Age", lo, hi), (i, h, lo, hi)
                assert f.might_cover("Age", lo, hi) is f._cover_record("Age", lo, hi), (i, h, lo, hi)


def _record_insert(f: RangeBloomFilter, record: Any) -> None:
    """insert by the record path (what insert did for every record before the plain-value path)."""
    owner = "RangeBloomFilter.insert"
    f._insert_batch(record_batch(f.schema, [f.schema.check_record(record, owner)], owner))


def _state(f: RangeBloomFilter) -> tuple[Any, ...]:
    return f.bits.words.tobytes(), {k: list(v) for k, v in f._inserted.items()}, f._count


@settings(max_examples=200, deadline=None)
@given(data=st.data())
@example(data=None)
def test_single_inserts_equal_the_record_path(data: Any) -> None:
    """insert of a dict of plain values (entry + fill per value) leaves exactly the bits,
    statistics and count of the record path; anything else is refused alike, nothing inserted."""
    widths = {"Age": st.integers(-2, 40), "Lat": st.floats(-0.001, 0.05), "Price": st.integers(-2, 40)}
    if data is None:
        records = [{}, {"Age": 5}, {"Age": (5, 9), "Name": "n1"}, {"Age": [700, 700], "Lat": (-90, -89.99)},
                   {"Name": "\udc80"}, {"Age": (9, 5)}, {"Age": (1, 2, 3)}, {"Nope": 1}, {"Age": range(3, 5)},
                   {"Price": np.float64(999.5), "Age": np.int8(-3), "Lat": [np.int64(1), 2.5]}]
    else:
        records = []
        for _ in range(3):
            rec: dict[str, Any] = {}
            for a in data.draw(st.lists(st.sampled_from(POINTS), unique=True, max_size=4)):
                v = data.draw(VALUES[a])
                if a in widths and data.draw(st.booleans()) and type(v) in (int, float):
                    v = data.draw(st.sampled_from([tuple, list]))((v, v + data.draw(widths[a])))
                rec[a] = v
            records.append(rec)
    for key, f in FILTERS.items():
        for rec in records:
            fast, slow = f.copy(), f.copy()
            before = _state(fast)
            try:
                _record_insert(slow, rec)
            except InvalidParameterError as e:
                with pytest.raises(InvalidParameterError) as got:
                    fast.insert(rec)
                assert str(got.value) == str(e) and _state(fast) == before, rec  # nothing inserted
                continue
            fast.insert(rec)
            assert _state(fast) == _state(slow), (key, rec)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
@example(data=None)
def test_single_profiles_equal_the_record_path(data: Any) -> None:
    """ProfileIndex.add of a dict of plain values leaves exactly the file (columns, records,
    statistics) of the record path; anything else is refused alike, nothing added."""
    from bloomkit.ranges import ProfileIndex

    if data is None:
        records = [{}, {"Age": 5, "Name": "n1"}, {"Name": "x", "Age": (5, 9), "Lat": [1, 2.5], "Price": 7},
                   {"Name": "\udc80"}, {"Age": (9, 5)}, {"Nope": 1}, {"Age": np.int16(3), "Price": np.float64(2.0)}]
    else:
        records = []
        for _ in range(4):
            rec: dict[str, Any] = {}
            for a in data.draw(st.lists(st.sampled_from(POINTS), unique=True, max_size=4)):
                rec[a] = data.draw(VALUES[a])
            records.append(rec)
    for i, config in enumerate(CONFIGS):
        for store in (True, False):
            fast = ProfileIndex(SCHEMA, 1 << 11, config, seed=5, store_records=store)
            slow = ProfileIndex(SCHEMA, 1 << 11, config, seed=5, store_records=store)
            for rec in records:
                owner = "ProfileIndex.add"
                try:
                    slow._add_batch(record_batch(slow.schema, [slow.schema.check_record(rec, owner)], owner))
                except InvalidParameterError as e:
                    with pytest.raises(InvalidParameterError) as got:
                        fast.add(rec)
                    assert str(got.value) == str(e)
                    continue
                fast.add(rec)
            assert fast.to_bytes() == slow.to_bytes(), (i, store, records)
