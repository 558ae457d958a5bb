"""The data front door (bloomkit._engine.columns): every input kind, by position, nulls refused by name,
exact key types; and through BloomFilter, answers compared with a Python set."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from bloomkit import BloomFilter, CountingBloomFilter, InvalidParameterError
from bloomkit._engine.columns import as_keys, as_matrix, as_table, as_values, take
from bloomkit._engine.hashing import hash64, hash_keys, hash_many, key_type_names

WORDS = [f"word-{i}-é" if i % 7 == 0 else f"word-{i}" for i in range(3000)]
INTS = list(range(-1500, 1500))


def _shuffled(series: pd.Series, seed: int = 0) -> pd.Series:
    order = np.random.default_rng(seed).permutation(len(series))
    return pd.Series(series.to_numpy()[order], index=series.index[order[::-1]])


INPUTS = {
    "list str": lambda: WORDS,
    "tuple str": lambda: tuple(WORDS),
    "dict keys str": lambda: dict.fromkeys(WORDS).keys(),  # a sized collection, in order
    "numpy U": lambda: np.array(WORDS),
    "numpy object": lambda: np.array(WORDS, dtype=object),
    "pyarrow string": lambda: pa.array(WORDS),
    "pyarrow large_string": lambda: pa.array(WORDS, pa.large_string()),
    "pyarrow string_view": lambda: pa.array(WORDS, pa.string_view()),
    "pyarrow dictionary": lambda: pa.array(WORDS).dictionary_encode(),
    "pyarrow chunked dictionary": lambda: pa.chunked_array(
        [pa.array(WORDS[:1000]).dictionary_encode(), pa.array(WORDS[1000:]).dictionary_encode()]),
    "pyarrow table": lambda: pa.table({"w": WORDS}),
    "pandas object, reversed index": lambda: pd.Series(WORDS, index=range(len(WORDS) - 1, -1, -1), dtype=object),
    "pandas string, shuffled index": lambda: pd.Series(WORDS, dtype="string", index=np.random.default_rng(1).permutation(3000)),
    "pandas string[pyarrow]": lambda: pd.Series(WORDS, dtype="string[pyarrow]", index=np.arange(3000) * 7),
    "pandas categorical, label index": lambda: pd.Series(WORDS, dtype="category", index=[f"r{i}" for i in range(3000)]),
    "pandas Index": lambda: pd.Index(WORDS),
    "pandas one-column frame": lambda: pd.DataFrame({"w": WORDS}, index=np.arange(3000)[::-1]),
    "polars": lambda: pl.Series(WORDS),
    "polars categorical": lambda: pl.Series(WORDS, dtype=pl.Categorical),
}

INT_INPUTS = {
    "list int": lambda: INTS,
    "numpy int64": lambda: np.array(INTS),
    "numpy int32": lambda: np.array(INTS, dtype=np.int32),
    "pyarrow int64": lambda: pa.array(INTS),
    "pyarrow chunked": lambda: pa.chunked_array([pa.array(INTS[:10]), pa.array(INTS[10:])]),
    "pandas int64 shuffled": lambda: pd.Series(INTS, index=np.random.default_rng(2).permutation(3000)),
    "pandas Int64 nullable": lambda: pd.Series(INTS, dtype="Int64", index=np.arange(3000)[::-1]),
    "pandas int64[pyarrow]": lambda: pd.Series(INTS, dtype="int64[pyarrow]"),
    "polars int": lambda: pl.Series(INTS),
}


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_str_inputs_hash_like_the_python_keys(kind):
    want = np.array([hash64(w, 5) for w in WORDS], dtype=np.uint64)
    h, tags = hash_keys(INPUTS[kind](), 5)
    assert np.array_equal(h, want)
    assert key_type_names(tags) == ["str"]


@pytest.mark.parametrize("kind", sorted(INT_INPUTS))
def test_int_inputs_hash_like_the_python_keys(kind):
    want = np.array([hash64(i, 5) for i in INTS], dtype=np.uint64)
    h, tags = hash_keys(INT_INPUTS[kind](), 5)
    assert np.array_equal(h, want)
    assert key_type_names(tags) == ["int"]


@pytest.mark.parametrize("kind", sorted(INPUTS) + sorted(INT_INPUTS))
def test_bloom_answers_equal_a_python_set(kind):
    """Silent wrong answers are the worst defect: every input kind, exact comparison."""
    make = INPUTS.get(kind) or INT_INPUTS[kind]
    truth = set(WORDS) if kind in INPUTS else set(INTS)
    for cls in (BloomFilter, CountingBloomFilter):
        bf = cls(capacity=10_000, fpr=1e-6, seed=3)
        bf.add_many(make())
        probe = list(truth)[:500]
        assert bf.contains_many(make()).all()
        assert all(k in bf for k in probe)
        absent = [f"nope-{i}" for i in range(2000)] if kind in INPUTS else list(range(10_000, 12_000))
        assert bf.contains_many(absent).sum() <= 1  # fpr 1e-6: a false positive here is a bug


def test_nulls_are_refused_by_name_and_position():
    for data in (pd.Series(["a", None, "c"], dtype="string"), pd.Series([1, None], dtype="Int64"),
                 pa.array(["a", None]), pl.Series(["a", None]), pd.Series([1.0, np.nan]),
                 np.ma.masked_array([1, 2], mask=[False, True])):
        with pytest.raises(InvalidParameterError, match=r"'keys' parameter of BloomFilter.add_many must not contain nulls.*position 1"):
            BloomFilter(capacity=10, fpr=0.1).add_many(data)
    with pytest.raises(InvalidParameterError, match="position 1"):
        BloomFilter(capacity=10, fpr=0.1).add_many(["a", None])


def test_mixed_object_columns_are_never_coerced():
    """1 and 1.0 are different keys: an object Series of mixed values keeps its exact objects."""
    s = pd.Series([1, 2.5, "3", b"4", True], index=[9, 8, 7, 6, 5], dtype=object)
    h, tags = hash_keys(s, 0)
    assert np.array_equal(h, [hash64(v, 0) for v in [1, 2.5, "3", b"4", True]])
    assert key_type_names(tags) == ["bool", "bytes", "float", "int", "str"]
    assert hash64(1, 0) != hash64(1.0, 0)


def test_tables_of_several_columns_need_a_column():
    with pytest.raises(InvalidParameterError, match="one column.*a, b"):
        as_keys(pd.DataFrame({"a": [1], "b": [2]}))
    with pytest.raises(InvalidParameterError, match="one column"):
        as_keys(pa.table({"a": [1], "b": [2]}))
    with pytest.raises(InvalidParameterError, match="single str"):
        as_keys("abc")
    with pytest.raises(InvalidParameterError, match="datetime64"):
        as_keys(pd.Series(pd.to_datetime(["2024-01-01"])))
    with pytest.raises(InvalidParameterError, match="mapping"):
        as_keys({"a": 1})


def test_as_table_reads_columns_by_name():
    df = pd.DataFrame({"b": [1, 2, 3], "a": ["x", "y", "z"]}, index=[2, 0, 1])
    for data in (df, df[["a", "b"]], pa.Table.from_pandas(df, preserve_index=False), pl.from_pandas(df), {"a": ["x", "y", "z"], "b": [1, 2, 3]}):
        t = as_table(data, ["a", "b"])
        assert list(t) == ["a", "b"]
        assert list(as_values(t["b"])) == [1, 2, 3]
        assert [str(x) for x in (t["a"].to_pylist() if hasattr(t["a"], "to_pylist") else t["a"])] == ["x", "y", "z"]
    with pytest.raises(InvalidParameterError, match="no column 'c'"):
        as_table(df, ["a", "c"])
    with pytest.raises(InvalidParameterError, match="column 'b' that is not one of a"):
        as_table(df, ["a"])
    with pytest.raises(InvalidParameterError, match="different lengths"):
        as_table({"a": [1, 2], "b": [1]}, ["a", "b"])


def test_values_by_position():
    s = pd.Series([10, 20, 30], index=[2, 1, 0])
    assert as_values(s).tolist() == [10, 20, 30]
    assert as_values(pa.chunked_array([[1], [2, 3]])).tolist() == [1, 2, 3]
    with pytest.raises(InvalidParameterError, match="nulls"):
        as_values(pd.Series([1, None], dtype="Int64"), owner="GeometricFilter.build")
    with pytest.raises(InvalidParameterError, match="'values'"):
        as_values([1, 2**70], dtype=np.uint64)


def test_take_is_positional_for_every_batch():
    idx = np.array([2, 0])
    assert take(["a", "b", "c"], idx) == ["c", "a"]
    assert take(np.array([5, 6, 7]), idx).tolist() == [7, 5]
    assert take(pa.array(["a", "b", "c"]), idx).to_pylist() == ["c", "a"]
    assert np.array_equal(hash_many(take(as_keys(_shuffled(pd.Series(WORDS))), idx), 0),
                          hash_many([as_keys(_shuffled(pd.Series(WORDS))).to_pylist()[i] for i in (2, 0)], 0))


class _Endless:
    """``__getitem__`` answers every index (iteration by the old protocol never ends)."""

    def __getitem__(self, i):
        return i


class _LyingLen:
    def __len__(self):
        return 3

    def __iter__(self):
        n = 0
        while True:
            yield n
            n += 1


@pytest.mark.parametrize("batch", [(w for w in WORDS), iter(WORDS), _Endless(), _LyingLen()],
                         ids=["generator", "iterator", "endless __getitem__", "lying __len__"])
def test_unsized_or_endless_batches_are_refused_without_iterating(batch):
    """Iteration only over sized inputs, and no further than their length: an endless source
    would otherwise be read until memory runs out."""
    bf = BloomFilter(capacity=100, fpr=0.01)
    with pytest.raises(InvalidParameterError, match="'keys' parameter of BloomFilter.add_many"):
        bf.add_many(batch)
    assert not bf
    with pytest.raises(InvalidParameterError, match="'points' parameter of f"):  # rows of vectors too
        as_matrix(batch, "points", "f")


@pytest.mark.parametrize("kind", ["numpy", "arrow", "list"])
def test_keys_go_through_the_front_door_once(kind, monkeypatch):
    """A batch method converts its keys once (:class:`KeyBatch` from ``key_source``); the
    chunks below it are slices of that batch, never converted or typed again."""
    import bloomkit._engine.hashing as H
    import bloomkit._engine.parallel as P
    from bloomkit._engine.columns import KeyBatch

    n = 3 * P.CHUNK + 17  # several chunks, and several threads' slices
    ints = np.arange(n, dtype=np.int64)
    keys = {"numpy": ints, "arrow": pa.array([str(i) for i in range(n)]), "list": [str(i) for i in range(n)]}[kind]
    calls = {"as_keys": 0, "key_tags": 0}

    def counting(name, fn):
        def wrapper(*a, **kw):
            calls[name] += 1
            return fn(*a, **kw)
        return wrapper

    monkeypatch.setattr(P, "as_keys", counting("as_keys", P.as_keys))
    monkeypatch.setattr(H, "as_keys", counting("as_keys", H.as_keys))
    monkeypatch.setattr(P, "key_tags", counting("key_tags", P.key_tags))
    f = BloomFilter(n, 0.01)
    f.add_many(keys)
    assert calls["as_keys"] == 1
    assert calls["key_tags"] == (kind != "list")  # a list's types are found while hashing it
    assert f.contains_many(keys).all()
    b = KeyBatch(ints, 16)
    assert len(b) == n and len(b.slice(5, 9)) == 4 and b.slice(5, 9).tags == 16 and b.nbytes == ints.nbytes
