"""Tests of bloomkit.lookup's contract and surface (issues 11 and 12) for both tables: the
LookupTable protocol, the data front door (pandas / pyarrow / polars by position, against a
dict), str labels, 64-bit values, on_duplicate, persistence and hostile files, threads."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import bloomkit
from bloomkit._protocols import LookupTable
from bloomkit.errors import FormatError, InvalidParameterError
from bloomkit.lookup import BloomierFilter, GeometricFilter
from bloomkit.lookup import params as P
from bloomkit.lookup.data import absent_zipf_keys, zipf_table


def _data(n: int, seed: int = 0, v: int = 16) -> tuple[np.ndarray, np.ndarray]:
    t = zipf_table(n, seed=seed, value_bits=v)
    return t.keys, t.values


# ----------------------------------------------------------------------------- persistence


def _small_gf() -> GeometricFilter:
    keys, vals = _data(300, v=6)
    gf = GeometricFilter.build(keys, vals, value_bits=6, error_bits=4, fpr=2.0**-4)
    fresh = absent_zipf_keys(300, 100).tolist()
    for k in fresh[:60]:
        gf.insert(np.uint64(k), 5)
    gf.remove(keys[3])
    assert gf.overflow_size > 0 and gf.pinned_size > 0
    return gf


def test_persistence_round_trip(tmp_path) -> None:
    gf = _small_gf()
    probe = np.concatenate([_data(300, v=6)[0], absent_zipf_keys(300, 2000)])
    for g2 in (
        GeometricFilter.from_bytes(gf.to_bytes()),
        pickle.loads(pickle.dumps(gf)),
        bloomkit.loads(gf.to_bytes()),
    ):
        g2._check()
        assert (g2.get_many(probe) == gf.get_many(probe)).all()
        assert len(g2) == len(gf) and g2.pinned_size == gf.pinned_size
    path = tmp_path / "gf.bk"
    gf.save(path)
    g3 = bloomkit.load(path)
    assert isinstance(g3, GeometricFilter)
    assert (g3.get_many(probe) == gf.get_many(probe)).all()
    assert g3.to_bytes() == gf.to_bytes()
    g3.insert(np.uint64(123456789), 7)  # still updatable after loading
    assert g3.get(np.uint64(123456789)) == 7
    keys, vals = _data(500)
    bf = BloomierFilter.build(keys, vals)
    b2 = bloomkit.loads(bf.to_bytes())
    assert isinstance(b2, BloomierFilter) and (b2.get_many(keys) == vals).all()
    b2._check()
    assert pickle.loads(pickle.dumps(bf)).get(keys[1]) == vals[1]


@pytest.mark.parametrize("which", ["geometric", "bloomier"])
def test_damaged_files(which: str) -> None:
    if which == "geometric":
        obj = GeometricFilter.build(["a", "b", "c"], [1, 2, 3], value_bits=2, fpr=2**-4)
        cls = GeometricFilter
    else:
        obj = BloomierFilter.build(["a", "b", "c"], [1, 2, 3], value_bits=2, fpr=2**-4)
        cls = BloomierFilter
    blob = obj.to_bytes()
    for cut in range(len(blob)):
        with pytest.raises(FormatError):
            cls.from_bytes(blob[:cut])
    for i in range(len(blob)):
        bad = bytearray(blob)
        bad[i] ^= 0x40
        with pytest.raises(FormatError):
            cls.from_bytes(bytes(bad))
    with pytest.raises(FormatError):
        cls.from_bytes(blob + b"\0")
    other = BloomierFilter if cls is GeometricFilter else GeometricFilter
    with pytest.raises(FormatError):
        other.from_bytes(blob)
    with pytest.raises(FormatError):
        cls.from_bytes(b"not a filter at all, just some bytes" * 3)


def test_inconsistent_state_is_format_error() -> None:
    from bloomkit._format import pack

    gf = GeometricFilter.build(["a", "b", "c"], [1, 2, 3], value_bits=2, fpr=2**-4)
    params, arrays = gf._to_state()
    for mutate in (
        lambda p, a: p.update(count=99),
        lambda p, a: p.update(value_bits=40),
        lambda p, a: p.pop("error_bits"),
        lambda p, a: a.update(words=a["words"][:-1]),
        lambda p, a: a.update(sizes=a["sizes"] * 0),
        lambda p, a: a.update(ovf_val=np.array([0], dtype=np.int64), ovf_h1=np.array([1], np.uint64), ovf_hb=np.array([1], np.uint64)),
    ):
        p2, a2 = dict(params), dict(arrays)
        mutate(p2, a2)
        with pytest.raises(FormatError):
            GeometricFilter.from_bytes(pack(GeometricFilter._STRUCTURE, p2, a2, seed=gf.seed))



# ============================================================================= issue 12: the protocol


TABLES = [GeometricFilter, BloomierFilter]


def _words(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"w{i}-{int(x)}" for i, x in enumerate(rng.integers(0, 10**9, n).tolist())]


@pytest.mark.parametrize("cls", TABLES)
def test_protocol_surface(cls: type, tmp_path) -> None:
    keys = _words(3000)
    vals = np.arange(3000) % 1000 + 1
    t = cls.build(keys, vals, value_bits=10, fpr=2**-14)
    assert isinstance(t, LookupTable)
    assert isinstance(t.size_in_bits, int) and t.size_in_bits > 0
    assert type(t.size_in_bits) is int  # a property, not a method
    assert isinstance(t.predicted_fpr(), float) and 0 < t.predicted_fpr() < 2**-10
    info = t.info()
    assert info["structure"] == cls._STRUCTURE and info["count"] == 3000 and info["values"] == "int"
    assert info["size_in_bits"] == t.size_in_bits and info["key_types"] == ["str"]
    assert cls.exact_len is True and len(t) == 3000
    assert t.key_types == ("str",)
    back = bloomkit.loads(t.to_bytes())
    assert back.key_types == ("str",) and len(back) == 3000
    c = t.copy()
    assert c is not t and c.to_bytes() == t.to_bytes() and (c.get_many(keys) == vals).all()
    c.clear()
    assert len(c) == 0 and c.key_types == () and (t.get_many(keys) == vals).all()
    assert (c.get_many(keys) == 0).all()
    c._check()
    mixed = cls.build([1, "1", b"1", 1.5], [1, 2, 3, 4], value_bits=4, fpr=2**-10)
    assert mixed.key_types == ("bytes", "float", "int", "str")


def test_geometric_set_and_update_dict_meaning() -> None:
    keys = _words(2000, seed=1)
    gf = GeometricFilter.build(keys, np.arange(1, 2001), value_bits=12, fpr=2**-20)
    gf.set(keys[0], 4000)
    assert gf[keys[0]] == 4000 and len(gf) == 2000
    gf.set("new key", 5)
    assert gf["new key"] == 5 and len(gf) == 2001
    gf.update({keys[1]: 1, "other": 2})
    gf.update([(keys[2], 3), ("pair", 4)])
    gf.update(kw_key=6)
    gf.update()
    assert [gf[k] for k in (keys[1], "other", keys[2], "pair", "kw_key")] == [1, 2, 3, 4, 6]
    assert len(gf) == 2004
    before = gf.to_bytes()
    with pytest.raises(InvalidParameterError, match="value"):
        gf.update({"x1": 1, "x2": 0, "x3": 3})  # checked before anything changes
    with pytest.raises(InvalidParameterError, match="key"):
        gf.update([("y1", 1), (object(), 2)])
    for bad in ("ab", 5, [(1, 2, 3)]):
        with pytest.raises(InvalidParameterError, match="other"):
            gf.update(bad)
    with pytest.raises(TypeError):
        gf.update({}, {}, {})
    assert gf.to_bytes() == before
    with pytest.raises(TypeError, match="at most 1 positional"):
        gf.update(keys[3], 77)  # set(key, value), or update({key: value})
    gf.update({keys[3]: 77})
    assert gf[keys[3]] == 77 and len(gf) == 2004
    gf._check()


def test_keyword_only_parameters_and_for_requirements() -> None:
    with pytest.raises(TypeError):
        GeometricFilter(1000, 8)
    assert GeometricFilter(1000, value_bits=8).value_bits == 8
    g = GeometricFilter.for_requirements(1000, 8, 2**-12, num_hashes=2, seed=3)
    assert (g.value_bits, g.fpr, g.num_hashes, g.seed, g.capacity, len(g)) == (8, 2**-12, 2, 3, 1000, 0)
    keys = _words(1000, seed=2)
    for i, k in enumerate(keys):
        g.insert(k, i % 255 + 1)
    assert (g.get_many(keys) == np.arange(1000) % 255 + 1).all()
    assert g.fpr_bound() <= 2**-12 * 1.0001
    g._check()


@pytest.mark.parametrize("cls", TABLES)
def test_return_probes_and_defaults(cls: type) -> None:
    keys, vals = _data(5000)
    t = cls.build(keys, vals, value_bits=16)
    got, probes = t.get_many(keys, return_probes=True)
    assert (got == vals).all() and isinstance(probes, int)
    if cls is BloomierFilter:
        assert probes == 3 * len(keys)
    else:  # Eq. 3.25: about k / (r p) probes per stored key
        assert len(keys) <= probes <= 1.3 * len(keys) / (t.storage_ratio * t.load_factor)
    absent = absent_zipf_keys(5000, 1000)
    assert (t.get_many(absent, default=-3) != 0).all()
    with pytest.raises(InvalidParameterError, match="default"):
        t.get_many(absent, default="x")
    wide = cls.build(keys[:100], vals[:100], value_bits=64)
    assert wide.get_many(keys[:100]).dtype == np.uint64
    with pytest.raises(InvalidParameterError, match="default"):
        wide.get_many(absent, default=-1)


# ============================================================================= the data front door

_REV = np.arange(8192)[::-1]


def _key_columns(keys: list[str]) -> dict[str, Any]:
    import pandas as pd
    import polars as pl

    n = len(keys)
    rng = np.random.default_rng(9)
    return {
        "pandas reversed index": pd.Series(keys, index=np.arange(n)[::-1]),
        "pandas shuffled index": pd.Series(keys, index=rng.permutation(n)),
        "pandas string index": pd.Series(keys, index=[f"row{i}" for i in rng.permutation(n)]),
        "pandas categorical": pd.Series(keys, dtype="category", index=rng.permutation(n)),
        "pandas string dtype": pd.Series(keys, dtype="string", index=np.arange(n)[::-1] * 3),
        "pyarrow chunked": pa.chunked_array([pa.array(keys[: n // 3]), pa.array(keys[n // 3 :])]),
        "pyarrow dictionary": pa.array(keys).dictionary_encode(),
        "polars": pl.Series(keys),
        "numpy": np.array(keys),
    }


def _value_columns(vals: np.ndarray) -> dict[str, Any]:
    import pandas as pd
    import polars as pl

    n = len(vals)
    rng = np.random.default_rng(10)
    return {
        "pandas Int64 nullable, reversed": pd.Series(vals, dtype="Int64", index=np.arange(n)[::-1]),
        "pandas int64, shuffled": pd.Series(vals, index=rng.permutation(n)),
        "pandas uint16[pyarrow]": pd.Series(vals, dtype="uint16[pyarrow]", index=[f"r{i}" for i in range(n)]),
        "pyarrow": pa.array(vals),
        "polars": pl.Series(vals),
        "list": vals.tolist(),
    }


@pytest.mark.parametrize("n", [8192, 50_000])
@pytest.mark.parametrize("cls", TABLES)
def test_frames_and_tables_by_position_against_a_dict(cls: type, n: int) -> None:
    """Issue 12's silent wrong answers: a Series whose index is not 0..n-1 (56 of 8,192 wrong on
    a reversed Series; a bare KeyError at 50k shuffled rows). A 5-bit fingerprint puts many keys
    in the overflow table, the path that indexed by label."""
    keys = _words(n, seed=n)
    vals = np.random.default_rng(n).integers(1, 2**12, n)
    model = dict(zip(keys, vals.tolist(), strict=True))
    kcols, vcols = _key_columns(keys), _value_columns(vals)
    kw: dict[str, Any] = {"value_bits": 12, "error_bits": 5, "fpr": 2.0**-5} if cls is GeometricFilter else \
        {"value_bits": 12}
    for i, (kname, kcol) in enumerate(kcols.items()):
        vname = list(vcols)[i % len(vcols)]
        t = cls.build(kcol, vcols[vname], **kw)
        t._check()
        for query in (keys, kcol):
            got = t.get_many(query).tolist()
            wrong = sum(g != model[k] for k, g in zip(keys, got, strict=True))
            assert wrong == 0, f"{kname} / {vname}: {wrong} of {n} stored keys answer a wrong value"
        assert all(t.get(k) == model[k] for k in keys[:: max(1, n // 200)])
        if cls is GeometricFilter:
            assert t.overflow_size > 100  # the overflow (by-position) path was exercised
    df = __import__("pandas").DataFrame({"key": keys, "count": vals}).sample(frac=1.0, random_state=3)
    t = cls.build(df["key"], df["count"], **kw)
    assert t.get_many(df["key"]).tolist() == df["count"].tolist()


def test_nulls_in_keys_or_values_are_refused_by_name() -> None:
    import pandas as pd

    with pytest.raises(InvalidParameterError, match="'values'.*position 1"):
        GeometricFilter.build(["a", "b", "c"], pd.Series([1, None, 3], dtype="Int64"))
    with pytest.raises(InvalidParameterError, match="'keys'.*position 2"):
        BloomierFilter.build(pd.Series(["a", "b", None]), [1, 2, 3])
    with pytest.raises(InvalidParameterError, match="'values'"):
        BloomierFilter.build(["a", "b"], pa.array([1, None]))
    with pytest.raises(InvalidParameterError, match="index 1"):  # never coerced to the labels "1", "x"
        GeometricFilter.build(["a", "b"], pd.Series([1, "x"], dtype=object, index=[5, 2]))


# ============================================================================= features


@pytest.mark.parametrize("cls", TABLES)
def test_str_values_are_saved_with_the_table(cls: type, tmp_path) -> None:
    import pandas as pd

    keys = _words(4000, seed=4)
    tags = ["noun", "verb", "adjective", "adverb", "préposition"]
    labels = [tags[i * 7 % 5] for i in range(4000)]
    for values in (labels, np.array(labels), pa.array(labels), pd.Series(labels, dtype="category", index=_REV[:4000])):
        t = cls.build(keys, values, value_bits=3, fpr=2**-14)
        assert t.get_many(keys).tolist() == labels
    assert t.codec is not None and t.codec.labels == ["noun", "adjective", "préposition", "verb", "adverb"]
    assert t.get(keys[1]) == labels[1] == t[keys[1]] and keys[1] in t
    absent = [f"absent {i}" for i in range(3000)]
    got = t.get_many(absent)
    assert got.dtype == object and sum(g is not None for g in got) <= 3
    assert t.get("absent", "?") in ("?", *tags) and list(t.get_many(absent[:5], default="?")).count("?") >= 4
    path = tmp_path / "pos.bkf"
    t.save(path)
    back = bloomkit.load(path)
    back._check()
    assert back.get_many(keys).tolist() == labels and back.codec == t.codec
    assert back.info()["values"] == "str" and back.info()["num_labels"] == 5
    with pytest.raises(InvalidParameterError, match="at most 7"):
        cls.build([f"k{i}" for i in range(8)], [f"label{i}" for i in range(8)], value_bits=3)
    with pytest.raises(InvalidParameterError, match="on_duplicate"):
        cls.build(["a", "a"], ["x", "y"], on_duplicate="sum")
    last = cls.build(["a", "b", "a"], ["x", "y", "z"], on_duplicate="last")
    assert last.get_many(["a", "b"]).tolist() == ["z", "y"]


def test_geometric_label_updates() -> None:
    gf = GeometricFilter.build(["cat", "run"], ["noun", "verb"], value_bits=4, fpr=2**-12)
    gf.set("cat", "verb")
    gf.set("red", "adjective")  # a new label
    gf.update({"fast": "adjective"})
    gf.insert("slowly", "adverb")
    assert gf.get_many(["cat", "run", "red", "fast", "slowly"]).tolist() == ["verb", "verb", "adjective", "adjective", "adverb"]
    with pytest.raises(InvalidParameterError, match="str label"):
        gf.set("cat", 3)
    back = GeometricFilter.from_bytes(gf.to_bytes())
    assert back.get("red") == "adjective" and back.codec.labels == gf.codec.labels
    ints = GeometricFilter.build(["a"], [1])
    with pytest.raises(InvalidParameterError, match="integer"):
        ints.set("a", "noun")


@pytest.mark.parametrize("v", [33, 48, 63, 64])
@pytest.mark.parametrize("cls", TABLES)
def test_values_up_to_64_bits(cls: type, v: int, tmp_path) -> None:
    n = 20_000
    rng = np.random.default_rng(v)
    hi = (1 << v) - 1
    vals = np.array([int.from_bytes(rng.bytes(8), "little") & hi or 1 for _ in range(n)], dtype=np.uint64)
    vals[:3] = [1, hi, hi - 1]
    keys = np.arange(n, dtype=np.int64) * 104729
    t = cls.build(keys, vals if v == 64 else vals.astype(np.int64), value_bits=v, fpr=2**-16)
    t._check()
    got = t.get_many(keys)
    assert got.dtype == (np.uint64 if v == 64 else np.int64)
    assert (got.astype(np.uint64) == vals).all()
    assert t.get(int(keys[1])) == hi and type(t.get(int(keys[1]))) is int
    # c = E + V bits per cell, in two arrays when c > 64: the thesis's space is unchanged
    if cls is GeometricFilter:
        c = t.error_bits + v
        assert t.table_bits() == int(t.table_sizes.sum()) * c
        assert t.table_bits() <= n * c / t.load_factor + t.num_tables * c  # Eq. 3.17
        assert t.bits_per_key() <= 1.01 * P.geometric_space_per_key(t.load_factor, v, 2**-16) + 1
        assert t.predicted_fpr() <= t.fpr_bound() <= 2**-16 * 1.0001
    else:
        assert t.size_in_bits == t.num_cells * (t.error_bits + v)
    absent = np.arange(n, dtype=np.int64) * 104729 + 1
    assert int((t.get_many(absent) != 0).sum()) <= 5
    t.save(tmp_path / "wide.bkf")
    back = bloomkit.load(tmp_path / "wide.bkf")
    back._check()
    assert (back.get_many(keys).astype(np.uint64) == vals).all()
    if cls is GeometricFilter:
        back.set(int(keys[5]), hi)
        back.insert(-1, hi)
        back.update({-2: 1, -3: hi - 5})
        assert back.get_many([int(keys[5]), -1, -2, -3]).astype(np.uint64).tolist() == [hi, hi, 1, hi - 5]
        with pytest.raises(InvalidParameterError, match="value"):
            back.set(-4, hi + 1)
        back._check()
    big = cls.build([1, 2], [hi, hi - 1], value_bits=v)  # Python ints beyond int64 for v = 64
    assert big.get(1) == hi and big.get(2) == hi - 1
    with pytest.raises(InvalidParameterError, match="index 1"):
        cls.build([1, 2], [1, hi + 1], value_bits=v)


def _combine(mode: str, old: int, new: int) -> int:
    return {"sum": old + new, "max": max(old, new), "min": min(old, new), "last": new}[mode]


@pytest.mark.parametrize("mode", ["sum", "max", "min", "last"])
@pytest.mark.parametrize("cls", TABLES)
def test_on_duplicate_against_a_dict(cls: type, mode: str) -> None:
    rng = np.random.default_rng(len(mode))
    raw = rng.integers(0, 3000, 20_000)
    keys = [f"key{k}" for k in raw.tolist()]
    vals = rng.integers(1, 100, len(keys))
    model: dict[str, int] = {}
    for k, v in zip(keys, vals.tolist(), strict=True):
        model[k] = _combine(mode, model[k], v) if k in model else v
    t = cls.build(keys, vals, value_bits=24, on_duplicate=mode)
    t._check()
    assert len(t) == len(model)
    assert t.get_many(list(model)).tolist() == list(model.values())
    if cls is GeometricFilter:
        assert t.build_stats()["duplicates"] == len(keys) - len(model)
        assert t.capacity == len(model) and t.overflow_size < 0.01 * len(model)  # sized for the distinct keys
    with pytest.raises(InvalidParameterError, match="twice"):
        cls.build(keys, vals, value_bits=24)


def test_on_duplicate_sum_never_wraps_or_clips() -> None:
    for cls in TABLES:
        with pytest.raises(InvalidParameterError, match="sums to 300 for the key 'a'"):
            cls.build(["a", "b", "a"], [200, 1, 100], value_bits=8, on_duplicate="sum")
        with pytest.raises(InvalidParameterError, match=f"sums to {2**64}"):
            cls.build([7, 7], [2**63, 2**63], value_bits=64, on_duplicate="sum")
        t = cls.build([7, 7, 8], [2**63, 2**63 - 1, 1], value_bits=64, on_duplicate="sum")
        assert t.get(7) == 2**64 - 1


def test_ngram_counts_by_sum() -> None:
    from collections import Counter

    text = ("the cat sat on the mat and the cat sat on the hat " * 50).split()
    grams = [" ".join(text[i : i + 3]) for i in range(len(text) - 2)]
    want = Counter(grams)
    gf = GeometricFilter.build(grams, np.ones(len(grams), dtype=np.int64), value_bits=16, on_duplicate="sum")
    assert dict(zip(want, gf.get_many(list(want)).tolist(), strict=True)) == dict(want)
    assert len(gf) == len(want)


# ============================================================================= issue 11: hostile files


def _forge(obj: Any, mutate: Any) -> bytes:
    from bloomkit._format import pack

    params, arrays = obj._to_state()
    params, arrays = dict(params), {k: v.copy() for k, v in arrays.items()}
    mutate(params, arrays)
    return pack(obj._STRUCTURE, params, arrays, seed=obj.seed)


def test_forged_table_sizes_never_reach_the_kernels(tmp_path) -> None:
    """Table sizes whose int64 sum wraps around to the true total segfaulted from_bytes / load /
    ``bloomkit info``; each case runs in a child process."""
    from conformance.forge import run_forgeries

    gf = GeometricFilter.build([f"k{i}" for i in range(200)], [1] * 200, value_bits=2, fpr=2**-4)
    assert gf.num_tables >= 4

    def wrap(p: dict, a: dict) -> None:
        a["sizes"][:4] += np.int64(1 << 62)  # 4 * 2^62 = 2^64: the int64 sum is unchanged

    def huge(p: dict, a: dict) -> None:
        a["sizes"][0] = np.int64(1 << 56)

    def negative(p: dict, a: dict) -> None:
        a["sizes"][1] = -a["sizes"][0]

    def many(p: dict, a: dict) -> None:
        a["sizes"] = np.ones(200_000, dtype=np.int64)

    cases = [(name, _forge(gf, fn)) for name, fn in (("wrap", wrap), ("huge", huge), ("negative", negative),
                                                      ("many", many))]
    assert int(np.sum(np.frombuffer(b"", np.int64))) == 0
    assert not run_forgeries(cases, tmp_path)
    for _name, raw in cases:
        with pytest.raises(FormatError, match="'sizes'"):
            GeometricFilter.from_bytes(raw)


@pytest.mark.parametrize("v", [8, 60])
@pytest.mark.parametrize("cls", TABLES)
def test_padding_bits_are_refused_at_load(cls: type, v: int) -> None:
    t = cls.build([f"k{i}" for i in range(100)], list(range(1, 101)), value_bits=v, fpr=2**-12)
    cells = int(t.table_sizes.sum()) if cls is GeometricFilter else t.num_cells
    c = t.error_bits + v
    for name, bits in (("words", min(c, 64)), ("high", c - 64)):
        if bits <= 0:
            continue
        used = cells * bits
        for pos in (used, used + 7, 64 * (used // 64 + 1) + 63):  # right after the last cell; the padding word
            def flip(p: dict, a: dict, name: str = name, pos: int = pos) -> None:
                a[name][pos // 64] |= np.uint64(1 << (pos % 64))

            if pos // 64 < len(t._to_state()[1][name]):
                with pytest.raises(FormatError, match=f"'{name}'.*padding"):
                    cls.from_bytes(_forge(t, flip))
    if v == 8:
        with pytest.raises(FormatError, match="'high'"):
            cls.from_bytes(_forge(t, lambda p, a: a.update(high=np.zeros(1, np.uint64))))
    else:
        with pytest.raises(FormatError, match="'high'"):
            cls.from_bytes(_forge(t, lambda p, a: a.pop("high")))


def test_side_tables_are_validated_at_load() -> None:
    gf = _small_gf()
    n = gf.overflow_size
    assert n >= 2 and gf.pinned_size >= 1
    bad = {
        "different lengths": lambda p, a: a.update(ovf_hb=a["ovf_hb"][:-1]),
        "out of order": lambda p, a: a.update(ovf_h1=a["ovf_h1"][::-1].copy(), ovf_hb=a["ovf_hb"][::-1].copy(),
                                              ovf_val=a["ovf_val"][::-1].copy()),
        "a key twice": lambda p, a: a.update(ovf_h1=np.repeat(a["ovf_h1"][:1], 2), ovf_hb=np.repeat(a["ovf_hb"][:1], 2),
                                             ovf_val=np.repeat(a["ovf_val"][:1], 2)),
        "value 0": lambda p, a: a["pin_val"].__setitem__(0, 0),
        "value above 2^V - 1": lambda p, a: a["ovf_val"].__setitem__(0, 64),
        "float values": lambda p, a: a.update(ovf_val=a["ovf_val"].astype(np.float64)),
        "pinned in the overflow table": lambda p, a: a.update(
            ovf_h1=np.concatenate([a["ovf_h1"], a["pin_h1"][:1]]), ovf_hb=np.concatenate([a["ovf_hb"], a["pin_hb"][:1]]),
            ovf_val=np.concatenate([a["ovf_val"], a["pin_val"][:1]])),
        "count": lambda p, a: p.update(count=p["count"] + 1),
        "a cell with a value and no fingerprint": lambda p, a: a["words"].__setitem__(0, np.uint64(1)),
    }
    for what, fn in bad.items():
        with pytest.raises(FormatError):
            GeometricFilter.from_bytes(_forge(gf, fn))
        assert what


@pytest.mark.parametrize("cls", TABLES)
def test_saved_labels_are_validated_at_load(cls: type) -> None:
    t = cls.build(["a", "b", "c", "d"], ["x", "yy", "x", "zzz"], value_bits=4, fpr=2**-10)
    assert t.to_bytes() == bloomkit.loads(t.to_bytes()).to_bytes()
    bad = {
        "offsets not from 0": lambda p, a: a["labels_offsets"].__setitem__(0, 1),
        "offsets decrease": lambda p, a: a["labels_offsets"].__setitem__(2, 0),
        "offsets past the data": lambda p, a: a["labels_offsets"].__setitem__(-1, 99),
        "not UTF-8": lambda p, a: a["labels_data"].__setitem__(0, 0xFF),
        "a label twice": lambda p, a: a.update(labels_data=np.frombuffer(b"xxzzz", np.uint8).copy(),
                                               labels_offsets=np.array([0, 1, 2, 5])),
        "one array only": lambda p, a: a.pop("labels_data"),
        "more labels than 2^V - 1": lambda p, a: p.update(value_bits=1),
    }
    for _what, fn in bad.items():
        with pytest.raises(FormatError):
            cls.from_bytes(_forge(t, fn))
    if cls is GeometricFilter:  # a cell whose id names no label
        t2 = cls.build(["a", "b"], ["x", "y"], value_bits=4, fpr=2**-10)
        with pytest.raises(FormatError, match="label"):
            cls.from_bytes(_forge(t2, lambda p, a: a.update(labels_offsets=a["labels_offsets"][:2].copy(),
                                                            labels_data=a["labels_data"][:1].copy())))


# ============================================================================= threads


def test_writers_and_readers_at_once() -> None:
    """4 writer threads (insert, set, update, remove) and 2 reader threads (batch and single
    queries of keys nobody writes) on one Geometric filter: readers always see exact values,
    and the final table is exact."""
    import threading

    stable = _words(5000, seed=11)
    stable_vals = np.arange(5000) % 60000 + 1
    gf = GeometricFilter.build(stable, stable_vals, value_bits=16, fpr=2**-32, error_bits=34)
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for i in range(600):
                k = f"writer{w}-{i}"
                [gf.insert, gf.set, lambda k, v: gf.update({k: v})][i % 3](k, i + 1)
                if i % 5 == 4:
                    gf.remove(f"writer{w}-{i - 1}")
        except BaseException as e:
            errors.append(e)

    def reader() -> None:
        try:
            while not stop.is_set():
                assert (gf.get_many(stable) == stable_vals).all()
                assert gf.get(stable[7]) == stable_vals[7]
        except BaseException as e:
            errors.append(e)
            stop.set()

    readers = [threading.Thread(target=reader) for _ in range(2)]
    writers = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join(120)
    stop.set()
    for t in readers:
        t.join(120)
    assert not errors, errors[0]
    gf._check()
    want = {f"writer{w}-{i}": i + 1 for w in range(4) for i in range(600) if (i + 1) % 5 != 4}
    assert len(gf) == 5000 + len(want)
    assert gf.get_many(list(want)).tolist() == list(want.values())


def test_concurrent_writers_number_new_labels_consistently() -> None:
    import threading

    gf = GeometricFilter.build(["seed"], ["first"], value_bits=10, fpr=2**-30, error_bits=34)
    barrier = threading.Barrier(4)

    def writer(w: int) -> None:
        barrier.wait()
        for i in range(300):
            gf.set(f"k{w}-{i}", f"label{(w * 7 + i) % 40}")
        gf.update({f"u{w}-{i}": f"other{w}-{i % 5}" for i in range(100)})

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    gf._check()
    codec = gf.codec
    assert codec is not None and all(codec.encode(lab) == i + 1 for i, lab in enumerate(codec.labels))
    assert len(codec) == 1 + 40 + 20
    for w in range(4):
        assert gf.get_many([f"k{w}-{i}" for i in range(300)]).tolist() == [f"label{(w * 7 + i) % 40}" for i in range(300)]
        assert gf.get_many([f"u{w}-{i}" for i in range(100)]).tolist() == [f"other{w}-{i % 5}" for i in range(100)]


@pytest.mark.parametrize("cls", TABLES)
def test_forger_on_wide_label_tables(cls: type, tmp_path) -> None:
    """The conformance forger (every param hostile, every array huge / all ones / short /
    retyped / missing / twice) on the parts the registry's example lacks: the high-bits array
    of cells wider than 64 bits, saved labels, and (Geometric) overflow and pinned entries."""
    from conformance.forge import forgeries, run_forgeries

    keys = [f"k{i}" for i in range(60)]
    t = cls.build(keys, [f"label{i % 9}" for i in range(60)], value_bits=60, error_bits=5, fpr=2**-5, seed=1)
    if cls is GeometricFilter:
        for i in range(40):
            t.insert(f"new{i}", f"label{i % 3}")
        assert t.overflow_size and t.pinned_size
    raw = t.to_bytes()
    assert "high" in t._to_state()[1] and "labels_data" in t._to_state()[1]
    problems = run_forgeries(list(forgeries(raw)), tmp_path)
    assert not problems, "\n".join(problems[:10])
