"""BitArray and CounterArray."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomkit import FormatError, IncompatibleFiltersError, InvalidParameterError
from bloomkit._engine.storage import BitArray, CounterArray


def test_bitarray_basic():
    b = BitArray(130)
    assert b.words.shape == (3,) and len(b) == 130
    b.set(0)
    b.set(129)
    b.set_many([5, 64, 64])
    assert b.test(0) and b.test(129) and b.test(64) and not b.test(1)
    assert b.test_many([0, 1, 5, 129]).tolist() == [True, False, True, True]
    assert b.popcount() == 4
    c = b.copy()
    assert c == b and c is not b
    c.set(1)
    assert c != b


def test_bitarray_ops_and_incompatible():
    a, b = BitArray(100), BitArray(100)
    a.set_many([1, 2, 3])
    b.set_many([3, 4])
    assert (a | b).popcount() == 4 and (a & b).popcount() == 1
    a |= b
    assert a.popcount() == 4
    with pytest.raises(IncompatibleFiltersError):
        _ = a | BitArray(101)


@pytest.mark.parametrize("bad", [-1, 130, 1.0, "3"])
def test_bitarray_bad_index(bad):
    b = BitArray(130)
    with pytest.raises(InvalidParameterError):
        b.set(bad)
    with pytest.raises(InvalidParameterError):
        b.set_many([bad] if not isinstance(bad, str) else np.array(["x"]))


@pytest.mark.parametrize("bad", [0, -5, 2.5, None, True])
def test_bitarray_bad_size(bad):
    with pytest.raises(InvalidParameterError, match="num_bits"):
        BitArray(bad)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9), st.data())
def test_fold_equals_bitwise_definition(q, f, data):
    m = q * f * data.draw(st.sampled_from([1, 7, 64, 65]))
    idx = data.draw(st.lists(st.integers(0, m - 1), max_size=50))
    b = BitArray(m)
    b.set_many(np.array(idx, dtype=np.int64))
    if f == 1:
        with pytest.raises(InvalidParameterError):
            b.fold(1)
        return
    folded = b.fold(f)
    expect = BitArray(m // f)
    expect.set_many(np.array(idx, dtype=np.int64) % (m // f))
    assert folded == expect


def test_fold_bad_factor():
    b = BitArray(120)
    for bad in (7, 0, -2, 1, 2.0):
        with pytest.raises(InvalidParameterError):
            b.fold(bad)


def test_bitarray_bytes_roundtrip_and_damage():
    b = BitArray(77)
    b.set_many([0, 8, 76])
    raw = b.to_bytes()
    assert len(raw) == 10 and raw[0] == 1 and raw[1] == 1
    assert BitArray.from_bytes(raw, 77) == b
    with pytest.raises(FormatError):
        BitArray.from_bytes(raw[:-1], 77)
    with pytest.raises(FormatError):
        BitArray.from_bytes(raw[:-1] + b"\xff", 77)  # bits beyond num_bits


@pytest.mark.parametrize("width", [4, 8, 16, 32])
def test_counters_increment_decrement(width):
    c = CounterArray(11, width)
    c.increment_many([0, 0, 10, 5])
    assert c.get(0) == 2 and c.get(10) == 1 and c.get(5) == 1 and c.get(1) == 0
    assert c.values().tolist() == [2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    c.decrement_many([0, 10])
    assert c.values().tolist() == [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
    before = c.copy()
    with pytest.raises(InvalidParameterError, match="zero"):
        c.decrement_many([0, 5, 10])  # 10 is zero: all or nothing
    assert c == before
    assert c.nonzero_count() == 2
    assert CounterArray.from_bytes(c.to_bytes(), 11, width) == c


def test_counter_saturation_flag_and_sticky():
    c = CounterArray(3, 4)
    assert c.max_value == 15
    assert not c.increment_many([1] * 15)
    assert not c.overflowed
    assert c.increment_many([1])
    assert c.overflowed and c.get(1) == 15
    c.decrement_many([1])
    assert c.get(1) == 15  # a saturated counter stays saturated
    c8 = CounterArray(2, 8)
    c8.increment_many([0] * 300)
    assert c8.get(0) == 255 and c8.overflowed


def test_counter_fold_sums_and_saturates():
    c = CounterArray.from_values([1, 2, 3, 4, 5, 6], 4)
    f = c.fold(2)
    assert f.values().tolist() == [5, 7, 9] and not f.overflowed
    g = CounterArray.from_values([15, 0, 1, 0], 4).fold(2)
    assert g.values().tolist() == [15, 0] and g.overflowed
    with pytest.raises(InvalidParameterError):
        c.fold(4)


def test_counter_bad_params_and_bytes():
    with pytest.raises(InvalidParameterError, match="width"):
        CounterArray(10, 5)
    with pytest.raises(InvalidParameterError):
        CounterArray(0, 4)
    with pytest.raises(InvalidParameterError):
        CounterArray.from_values([-1, 2])
    c = CounterArray(3, 4)
    with pytest.raises(FormatError):
        CounterArray.from_bytes(c.to_bytes() + b"\0", 3, 4)
    with pytest.raises(FormatError):
        CounterArray.from_bytes(b"\x00\xf0", 3, 4)  # padding nibble set
