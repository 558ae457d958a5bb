"""Tests of bloomkit.lookup: parameters (thesis numbers), GeometricFilter against the explicit
reference of Section 3.1, updates, BloomierFilter, codec, data loader, bad input (the protocol,
front door, features, files and threads: test_lookup_surface.py)."""

from __future__ import annotations

import gzip
import math

import numpy as np
import pyarrow as pa
import pytest

import bloomkit
from bloomkit.errors import FormatError, InvalidParameterError
from bloomkit.lookup import (
    BloomierFilter,
    GeometricFilter,
    UpdateNotSupportedError,
    ValueCodec,
    geometric_parameters,
)
from bloomkit.lookup import _kernels as LK
from bloomkit.lookup import params as P
from bloomkit.lookup.data import (
    absent_zipf_keys,
    load_table,
    ngram_table_from_text,
    trigram_table,
    zipf_table,
)

# ----------------------------------------------------------------------------- parameters


def test_thesis_example_numbers() -> None:
    g = geometric_parameters(400_000_000, 16, 2.0**-16, num_hashes=1)
    p_hat, e, p, r, n = g  # the documented unpacking
    assert round(p_hat, 4) == 0.9606
    assert e == 21
    assert round(p, 4) == 0.9697
    assert round(r, 4) == 0.2860
    assert n == 61
    assert round(g.encode_cost, 3) == 3.606
    assert round(g.unmatched_query_bound, 2) == 27.95
    # Section 3.5.2: candidates E = 20, 21 with p = 0.9412, 0.9697
    assert P.error_bit_candidates(p_hat, 2.0**-16) == (20, 21)
    assert round(P.load_factor_for_error_bits(20, 2.0**-16), 4) == 0.9412
    assert round(P.load_factor_for_error_bits(21, 2.0**-16), 4) == 0.9697
    # log2(p/((1-p) e_o)) at p_hat = 20.6073 (text)
    assert round(math.log2(p_hat / ((1 - p_hat) * 2.0**-16)), 2) == 20.61
    # Eq. 3.22 prefers E = 21 over the unrounded optimum
    assert P.geometric_space_per_key(p, 16, 2.0**-16) < P.geometric_space_per_key(0.9412, 16, 2.0**-16)
    # Lemma 3.4.2 with e_n = 2^-E gives exactly e_o at the chosen E
    assert P.false_positive_bound(p, 21, compact=False) == pytest.approx(2.0**-16)


def test_lambert_w_optimum_is_the_minimum() -> None:
    for v, e in ((16, 2.0**-16), (8, 2.0**-12), (3, 2.0**-4)):
        p = P.optimal_load_factor(v, e)
        f = [P.geometric_space_per_key(q, v, e, ceil=False) for q in (p - 1e-3, p, p + 1e-3)]
        assert f[1] < f[0] and f[1] < f[2]


def test_monte_carlo_storage_ratios() -> None:
    p = 32 / 33
    uniform = [0.286, 0.479, 0.610, 0.700, 0.765, 0.813]
    thesis = [0.2822, 0.4738, 0.6039, 0.6946, 0.7598, 0.8081]  # Table 4.1
    for k in range(1, 7):
        r_u = P.storage_ratio_monte_carlo(p, k, 1 << 21)
        assert abs(r_u - uniform[k - 1]) < 0.003, (k, r_u)
        # the thesis's random() mod M with M = 4e8, scaled 1:100 (same bias pattern)
        r_c = P.storage_ratio_monte_carlo(p, k, 4_000_000, generator="c_random", random_range=(1 << 31) // 100)
        assert abs(r_c - thesis[k - 1]) < 0.0025, (k, r_c)
        assert r_c < r_u
    assert abs(P.storage_ratio_k1(p) - P.storage_ratio_monte_carlo(p, 1, 1 << 21)) < 0.002


def test_algorithm6_matches_eq_3_11() -> None:
    for r in (0.2, 0.286, 0.5, 1.0):
        mc = P.load_factor_monte_carlo(r, 1, 400_000)
        assert abs(mc - P.load_factor_k1(r)) < 0.003


def test_fig34_crossover_and_table_sizes() -> None:
    assert P.space_ratio_to_bloomier(26) < 1 < P.space_ratio_to_bloomier(25)
    assert P.space_ratio_to_bloomier(15) == pytest.approx(1.09, abs=0.01)
    sizes = P.table_sizes(400_000_000, 0.2860, 0.9697, 61)
    assert sizes[0] == 114_400_000
    assert (np.diff(sizes) <= 0).all()
    d = 1 - 0.2860 * 0.9697
    assert sizes[10] == math.ceil(0.2860 * 4e8 * d**10 - 1e-9)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"value_bits": 0},
        {"value_bits": 65},
        {"value_bits": 1.5},
        {"fpr": 0.0},
        {"fpr": 1.0},
        {"fpr": float("nan")},
        {"fpr": 1.5},
        {"num_hashes": 0},
        {"num_hashes": True},
    ],
)
def test_parameter_errors(kwargs: dict) -> None:
    args = {"num_keys": 1000, "value_bits": 16, "fpr": 2.0**-16}
    args.update(kwargs)
    with pytest.raises(InvalidParameterError, match="parameter"):
        geometric_parameters(**args)


def test_parameter_errors_derived() -> None:
    with pytest.raises(InvalidParameterError):
        geometric_parameters(0, 16, 0.01)
    with pytest.raises(InvalidParameterError, match="E <= 63"):
        geometric_parameters(1000, 32, 2.0**-70)
    with pytest.raises(InvalidParameterError, match="Lemma 3.5.1"):
        geometric_parameters(1000, 1, 0.9)
    with pytest.raises(InvalidParameterError, match="error_bits"):
        geometric_parameters(1000, 16, 0.01, error_bits=64)
    with pytest.raises(InvalidParameterError):
        P.storage_ratio_monte_carlo(0.9, 1, 1000, generator="lcg")


# ----------------------------------------------------------------------------- helpers


def _data(n: int, seed: int = 0, v: int = 16) -> tuple[np.ndarray, np.ndarray]:
    t = zipf_table(n, seed=seed, value_bits=v)
    return t.keys, t.values


class ExplicitGeometricFilter:
    """Section 3.1: the explicit version with placement and validation bit arrays,
    c-bit cells holding F(x) XOR v(x) (uniform encoding), Algorithms 2, 3, 4 as printed
    (with the ERRATA reading of Algorithm 3 line 19 and Algorithm 2 line 3: "< 2^V").

    F(x) = f(x) << V, so the test "F(x) XOR A[h] < 2^V" is "same fingerprint" and the
    decoded value is exact; the overflow table is a dict of the keys themselves."""

    def __init__(self, gf: GeometricFilter) -> None:
        self.gf = gf
        self.sizes = gf.table_sizes
        self.k = gf.num_hashes
        self.V = gf.value_bits
        self.E = gf.error_bits
        self.cells = [[0] * int(m) for m in self.sizes]
        self.placement = [[0] * int(m) for m in self.sizes]
        self.validation = [[1] * int(m) for m in self.sizes]
        self.overflow: dict = {}

    def _probes(self, keys) -> tuple[np.ndarray, np.ndarray]:
        h1 = bloomkit._engine.hashing.hash_many(keys, self.gf.seed)
        pos = LK.gf_positions(h1, self.sizes, self.k)
        fp = LK.gf_fingerprints(h1, np.uint64((1 << self.E) - 1))
        return pos, fp.astype(object) << self.V

    def _status(self, F: int, i: int, h: int) -> str:  # Algorithm 2
        if self.placement[i][h] == 0:
            return "open"
        if F ^ self.cells[i][h] < (1 << self.V):
            return "match" if self.validation[i][h] else "unrecoverable"
        return "recoverable"

    def encode_rescan(self, keys, values) -> None:  # Algorithm 3
        pos, F = self._probes(keys)
        for n in range(len(values)):
            stored = False
            for t in range(len(self.sizes) * self.k):
                i, h = t // self.k, int(pos[n, t])
                st = self._status(F[n], i, h)
                if st == "open":
                    self.cells[i][h] = F[n] ^ int(values[n])
                    self.placement[i][h] = 1
                    stored = True
                elif st in ("match", "unrecoverable"):
                    self.validation[i][h] = 0
                    stored = True
                if stored:
                    break
        got = self.query_many(keys)
        for n in range(len(values)):
            if got[n] != int(values[n]):
                self.overflow[keys[n].item() if hasattr(keys[n], "item") else keys[n]] = int(values[n])

    def query_many(self, keys) -> list[int]:  # Algorithm 4
        pos, F = self._probes(keys)
        out = []
        for n in range(len(pos)):
            key = keys[n].item() if hasattr(keys[n], "item") else keys[n]
            res = None
            st = "none"
            for t in range(len(self.sizes) * self.k):
                i, h = t // self.k, int(pos[n, t])
                st = self._status(F[n], i, h)
                if st == "open":
                    res = 0
                elif st == "match":
                    res = F[n] ^ self.cells[i][h]
                elif st == "unrecoverable":
                    res = self.overflow.get(key, 0)
                if res is not None:
                    break
            if res is None:
                res = self.overflow.get(key, 0)
            out.append(res)
        return out


@pytest.mark.parametrize(("k", "v", "e", "n"), [(1, 4, 5, 3000), (2, 6, 4, 2000), (3, 8, 9, 4000), (1, 16, 21, 3000)])
def test_compact_equals_explicit_reference(k: int, v: int, e: int, n: int) -> None:
    keys, vals = _data(n, seed=k, v=v)
    gf = GeometricFilter.build(keys, vals, value_bits=v, error_bits=e, num_hashes=k, fpr=2.0**-e, seed=7)
    gf._check()
    ref = ExplicitGeometricFilter(gf)
    ref.encode_rescan(keys, vals)
    # every member exact in both
    assert (gf.get_many(keys) == vals).all()
    assert ref.query_many(keys) == vals.tolist()
    # identical answers on absent keys, false positives included
    absent = absent_zipf_keys(n, 6000, seed=k)
    assert gf.get_many(absent).tolist() == ref.query_many(absent)
    assert len(ref.overflow) == gf.overflow_size
    if e <= 5:  # small E: the invalidation / overflow paths were exercised
        assert gf.build_stats()["invalidated"] > 0 and gf.overflow_size > 0


# ----------------------------------------------------------------------------- GeometricFilter


def test_key_types_and_single_vs_batch() -> None:
    words = [f"w{i} x{i % 7} y{i % 13}" for i in range(3000)]
    vals = np.arange(1, 3001) % 255 + 1
    for keys in (words, np.array(words), pa.array(words), [w.encode() for w in words], list(range(3000))):
        gf = GeometricFilter.build(keys, vals, value_bits=8, fpr=2**-14)
        gf._check()
        batch = gf.get_many(keys)
        assert (batch == vals).all()
        for i in (0, 17, 2999):
            key = keys[i].as_py() if isinstance(keys, pa.Array) else keys[i]
            assert gf.get(key) == vals[i] == gf[key]
            assert key in gf
    gf = GeometricFilter.build(dict(zip(words, vals.tolist(), strict=True)), value_bits=8, fpr=2**-14)
    assert gf.get(words[5]) == vals[5] and len(gf) == 3000
    mixed = [1, "1", b"1", 1.5, (2, "a")]
    gm = GeometricFilter.build(mixed, [1, 2, 3, 4, 5], value_bits=4, fpr=2**-12)
    assert gm.get_many(mixed).tolist() == [1, 2, 3, 4, 5]


def test_absent_keys_default_and_keyerror() -> None:
    keys, vals = _data(2000)
    gf = GeometricFilter.build(keys, vals, value_bits=16, fpr=2**-16)
    absent = absent_zipf_keys(2000, 500)
    got = gf.get_many(absent, default=-1)
    assert (got == -1).sum() >= 495
    miss = next(int(a) for a, g in zip(absent, got, strict=True) if g == -1)
    assert gf.get(np.uint64(miss), default=-7) == -7
    with pytest.raises(KeyError):
        gf[np.uint64(miss)]
    assert np.uint64(miss) not in gf


def test_space_accounting_and_model() -> None:
    keys, vals = _data(100_000)
    gf = GeometricFilter.build(keys, vals, value_bits=16, fpr=2.0**-16)
    c = gf.error_bits + gf.value_bits
    assert c == 37
    assert gf.table_bits() == int(gf.table_sizes.sum()) * c
    assert gf.size_in_bits == gf.table_bits() + gf.overflow_size * (128 + 16)
    assert gf.bits_per_key() <= 1.20 * (16 + 16)
    # Eq. 3.17: sum M_i c <= |S| c / p
    assert gf.table_bits() <= len(keys) * c / gf.load_factor + gf.num_tables * c
    loads = gf.table_load_factors()
    assert len(loads) == gf.num_tables and loads[0] == pytest.approx(gf.load_factor, abs=0.01)
    s = gf.trying_set_sizes()
    assert s[0] == len(keys) and (np.diff(s) <= 0).all()
    assert gf.predicted_fpr() <= gf.fpr_bound() <= 2.0**-16 * 1.0001


def test_updates_random_sequence_against_dict() -> None:
    rng = np.random.default_rng(5)
    keys, vals = _data(4000, seed=3, v=10)
    # small E so pinning, invalidation and overflow all happen
    gf = GeometricFilter.build(keys, vals, value_bits=10, error_bits=6, fpr=2.0**-6, seed=1)
    model = dict(zip(keys.tolist(), vals.tolist(), strict=True))
    fresh = iter(absent_zipf_keys(4000, 10_000, seed=3).tolist())
    removed: list[int] = []
    for step in range(3000):
        op = rng.integers(0, 3)
        if op == 0:  # update a present key
            key = list(model)[rng.integers(0, len(model))]
            model[key] = int(rng.integers(1, 1024))
            gf.set(np.uint64(key), model[key])
        elif op == 1:  # insert a new key
            key = next(fresh)
            model[key] = int(rng.integers(1, 1024))
            gf.insert(np.uint64(key), model[key])
        else:  # remove a present key
            key = list(model)[rng.integers(0, len(model))]
            del model[key]
            gf.remove(np.uint64(key))
            removed.append(key)
        if step % 500 == 0:
            gf._check()
    gf._check()
    assert len(gf) == len(model)
    ks = np.array(list(model), dtype=np.uint64)
    assert (gf.get_many(ks) == np.array(list(model.values()))).all()
    assert all(gf.get(np.uint64(k)) == v for k, v in list(model.items())[:200])
    assert gf.pinned_size > 0  # the pinned path was exercised
    # removed keys: their own cell is invalid, so they answer 0 unless they were pinned and
    # now meet another key's cell with their fingerprint (rate ~ 1/(2^E - 1) per cell)
    nz = int((gf.get_many(np.array(removed, dtype=np.uint64)) != 0).sum())
    assert nz <= 0.1 * len(removed)


def test_update_remove_insert_errors() -> None:
    keys, vals = _data(1000)
    gf = GeometricFilter.build(keys, vals)
    absent = absent_zipf_keys(1000, 50)
    miss = next(a for a in absent if gf.get(a) == 0)
    with pytest.raises(TypeError):
        gf.update(miss, 3)
    with pytest.raises(KeyError):
        gf.remove(miss)
    with pytest.raises(InvalidParameterError, match="value"):
        gf.set(keys[0], 0)
    with pytest.raises(InvalidParameterError, match="value"):
        gf.insert(miss, 1 << 16)
    with pytest.raises(InvalidParameterError, match="value"):
        gf.insert(miss, 2.0)
    gf.insert(miss, 9)
    assert gf.get(miss) == 9
    gf.remove(miss)
    assert gf.get(miss) == 0
    gf._check()


def test_insert_beyond_capacity_and_empty_filter() -> None:
    gf = GeometricFilter(500, value_bits=8, fpr=2**-12)
    keys, vals = _data(1500, v=8)
    for k, v in zip(keys.tolist(), vals.tolist(), strict=True):
        gf.insert(np.uint64(k), v)
    gf._check()
    assert (gf.get_many(keys) == vals).all()
    assert gf.overflow_size > 0  # the tables are full past the capacity


def test_duplicates() -> None:
    keys = ["a", "b", "c", "b", "d"]
    with pytest.raises(InvalidParameterError, match="'b' twice"):
        GeometricFilter.build(keys, [1, 2, 3, 4, 5])
    gf = GeometricFilter.build(keys, [1, 2, 3, 4, 5], on_duplicate="last")
    assert gf.get("b") == 4 and len(gf) == 4
    gf._check()
    with pytest.raises(InvalidParameterError, match="on_duplicate"):
        GeometricFilter.build(keys, [1, 2, 3, 4, 5], on_duplicate="first")
    with pytest.raises(InvalidParameterError, match="'b' twice"):
        BloomierFilter.build(keys, [1, 2, 3, 4, 5])
    bf = BloomierFilter.build(keys, [1, 2, 3, 4, 5], on_duplicate="last")
    assert bf.get("b") == 4 and len(bf) == 4


@pytest.mark.parametrize("cls", [GeometricFilter, BloomierFilter])
def test_bad_build_input(cls: type) -> None:
    with pytest.raises(InvalidParameterError, match="values"):
        cls.build(["a", "b"], [1, 0], value_bits=4)
    with pytest.raises(InvalidParameterError, match="index 1"):
        cls.build(["a", "b"], [1, 16], value_bits=4)
    with pytest.raises(InvalidParameterError, match="values"):
        cls.build(["a", "b"], [1, -3], value_bits=4)
    with pytest.raises(InvalidParameterError, match="1.5"):
        cls.build(["a", "b"], [1, 1.5], value_bits=4)
    with pytest.raises(InvalidParameterError, match="values"):
        cls.build(["a", "b"], np.array([1.0, 2.0]), value_bits=4)
    with pytest.raises(InvalidParameterError, match="values"):
        cls.build(["a", "b"], [True, 1], value_bits=4)
    with pytest.raises(InvalidParameterError, match="values.*index 1"):
        cls.build(["a", "b"], ["x", 1], value_bits=4)
    with pytest.raises(InvalidParameterError, match="values.*index 1"):
        cls.build(["a", "b"], [1, "x"], value_bits=4)
    with pytest.raises(InvalidParameterError, match="values"):
        cls.build(["a", "b"], [b"x", b"y"], value_bits=4)
    with pytest.raises(InvalidParameterError, match="as many"):
        cls.build(["a", "b"], [1, 2, 3])
    with pytest.raises(InvalidParameterError, match="empty"):
        cls.build([], [])
    with pytest.raises(InvalidParameterError, match="empty"):
        cls.build({})
    with pytest.raises(InvalidParameterError, match="key"):
        cls.build([object(), "b"], [1, 2])
    with pytest.raises(InvalidParameterError, match="key"):
        cls.build([["list"], "b"], [1, 2])
    with pytest.raises(InvalidParameterError, match="collection"):
        cls.build("abc", [1, 2, 3])
    with pytest.raises(InvalidParameterError, match="values"):
        cls.build(["a"])
    for bad in ({"value_bits": 0}, {"value_bits": 65}, {"fpr": 0.0}, {"fpr": 1.0}, {"fpr": -1}, {"fpr": float("nan")}):
        with pytest.raises(InvalidParameterError):
            cls.build(["a"], [1], **bad)
    with pytest.raises(InvalidParameterError, match="error_bits"):
        cls.build(["a"], [1], error_bits=0)
    with pytest.raises(InvalidParameterError, match="error_bits"):
        cls.build(["a"], [1], value_bits=16, error_bits=64)
    with pytest.raises(InvalidParameterError, match="fpr"):
        cls.build(["a"], [1], value_bits=32, fpr=2.0**-70)


def test_bloomier_no_updates_and_bad_params() -> None:
    bf = BloomierFilter.build(["a", "b"], [1, 2])
    for call in (lambda: bf.update("a", 3), lambda: bf.insert("c", 3), lambda: bf.remove("a")):
        with pytest.raises(UpdateNotSupportedError, match="cannot be changed"):
            call()
    assert issubclass(UpdateNotSupportedError, NotImplementedError)
    with pytest.raises(InvalidParameterError, match="storage_ratio"):
        BloomierFilter.build(["a"], [1], storage_ratio=1.0)
    with pytest.raises(InvalidParameterError, match="capacity"):
        GeometricFilter(0)
    with pytest.raises(InvalidParameterError, match="storage_ratio"):
        GeometricFilter(100, storage_ratio=1.2)
    with pytest.raises(InvalidParameterError, match="margin"):
        GeometricFilter(100, margin=0.9)


@pytest.mark.parametrize("n", [1, 2, 10, 1000, 50_000])
def test_bloomier_exact(n: int) -> None:
    keys, vals = _data(n, v=12)
    bf = BloomierFilter.build(keys, vals, value_bits=12, fpr=2**-20)
    bf._check()
    assert (bf.get_many(keys) == vals).all()
    assert bf.get(keys[0]) == vals[0] == bf[keys[0]]
    assert bf.error_bits == 20 and bf.num_cells >= 1.23 * n
    assert bf.size_in_bits == bf.num_cells * 32


# ----------------------------------------------------------------------------- codec, data


def test_value_codec() -> None:
    codec = ValueCodec(["noun", "verb"], value_bits=2)
    assert codec.encode("adj") == 3
    with pytest.raises(InvalidParameterError, match="at most 3"):
        codec.encode("adv")
    assert codec.decode_many([0, 1, 3]) == [None, "noun", "adj"]
    with pytest.raises(InvalidParameterError):
        codec.decode(4)
    with pytest.raises(InvalidParameterError, match="hashable"):
        codec.encode(["x"])
    c2 = ValueCodec.from_json(codec.to_json())
    assert c2.labels == codec.labels
    with pytest.raises(FormatError):
        ValueCodec.from_json("{bad json")
    # labels through a filter
    words = {"cat": "noun", "run": "verb", "red": "adj"}
    c3 = ValueCodec(value_bits=4)
    gf = GeometricFilter.build(list(words), c3.encode_many(words.values()), value_bits=4, fpr=2**-10)
    assert c3.decode_many(gf.get_many(list(words))) == list(words.values())


def test_ngram_loader_on_own_text(tmp_path) -> None:
    text = "The cat sat on the mat. The cat sat on the hat! the CAT sat, on the mat's edge"
    path = tmp_path / "tiny.dict.dz"
    with gzip.open(path, "wb") as fh:
        fh.write(text.encode())
    t = trigram_table(path, num_absent=5, seed=1)
    toks = ["the", "cat", "sat", "on", "the", "mat", "the", "cat", "sat", "on", "the", "hat", "the", "cat", "sat", "on", "the", "mat's", "edge"]
    want: dict[str, int] = {}
    for i in range(len(toks) - 2):
        key = " ".join(toks[i : i + 3])
        want[key] = want.get(key, 0) + 1
    got = dict(zip(t.keys.to_pylist(), t.values.tolist(), strict=True))
    assert got == want and t.num_tokens == len(toks)
    assert len(t.absent) == 5 and not set(t.absent.to_pylist()) & set(want)
    # plain text files and prefixes work too; counts clip to 2^V - 1
    plain = tmp_path / "plain.txt"
    plain.write_text("a b a b a b a b a b")
    t2 = trigram_table(plain, value_bits=2)
    assert dict(zip(t2.keys.to_pylist(), t2.values.tolist(), strict=True)) == {"a b a": 3, "b a b": 3}
    with pytest.raises(InvalidParameterError, match="tokens"):
        ngram_table_from_text("two words")
    with pytest.raises(FileNotFoundError):
        trigram_table(tmp_path / "missing.dz")
    uni = ngram_table_from_text("x y x z", 1)
    assert dict(zip(uni.keys.to_pylist(), uni.values.tolist(), strict=True)) == {"x": 2, "y": 1, "z": 1}


def test_zipf_generator_and_fallback(monkeypatch) -> None:
    a = zipf_table(10_000, seed=3, num_absent=1000)
    b = zipf_table(10_000, seed=3)
    assert (a.keys == b.keys).all() and (a.values == b.values).all()
    assert len(np.unique(a.keys)) == 10_000
    assert not np.isin(a.absent, a.keys).any()
    assert a.values.min() >= 1 and a.values.max() <= 65535
    assert 0.85 < np.mean(a.values == 1) < 0.92  # like the GCIDE trigram counts
    import bloomkit.lookup.data as D

    monkeypatch.setattr(D, "GCIDE_PATH", D.Path("/nonexistent/gcide.dict.dz"))
    t, note = load_table(5000, num_absent=10)
    assert note.startswith("FALLBACK") and len(t) == 5000


@pytest.mark.parametrize("k", [1, 3])
def test_pipelined_query_equals_plain_walk(k: int) -> None:
    # 40,000 keys: several QUERY_BLOCKs, the last one partial
    keys, vals = _data(20_000, v=8)
    gf = GeometricFilter.build(keys, vals, value_bits=8, error_bits=5, fpr=2.0**-5, num_hashes=k)
    h1 = bloomkit._engine.hashing.hash_many(np.concatenate([keys, absent_zipf_keys(20_000, 20_000)]))
    outs = []
    for fn in (LK.gf_query, LK.gf_query_pipelined):
        out = np.empty(len(h1), np.uint64)
        flag = np.empty(len(h1), np.uint8)
        probes = fn(h1, *gf._kargs(), gf._overflow.sorted_h1(), out, flag)
        outs.append((out, flag, probes))
    assert (outs[0][0] == outs[1][0]).all() and (outs[0][1] == outs[1][1]).all()
    assert outs[0][2] == outs[1][2] and outs[0][1].sum() > 0


def test_mulhi_and_cells() -> None:
    import numba

    from bloomkit._engine.jit import mulhi64

    mulhi = numba.njit(lambda a, b: mulhi64(a, b))
    rng = np.random.default_rng(0)
    for a, b in zip(rng.integers(0, 2**63, 200).tolist(), rng.integers(1, 2**63, 200).tolist(), strict=True):
        for bb in (b, b >> 33, 1, (1 << 32) - 1, 1 << 32):
            assert int(mulhi(np.uint64(a * 2 + 1), np.uint64(bb))) == ((a * 2 + 1) * bb) >> 64
    # packed Geometric cells of every layout (c = E + V up to 127 bits: a second array above 64)
    # round-trip fingerprint and value, neighbours untouched
    for e, v in ((1, 1), (5, 2), (21, 16), (7, 57), (21, 43), (22, 64), (63, 64), (1, 64)):
        c = e + v
        clo, vlo, chi = min(c, 64), min(c, 64) - e, c - min(c, 64)
        words = np.zeros((50 * clo + 63) // 64 + 1, dtype=np.uint64)
        high = np.zeros((50 * chi + 63) // 64 + 1, dtype=np.uint64)
        fps = [int(x) % ((1 << e) - 1) + 1 if e > 1 else 1 for x in rng.integers(0, 2**63, 50).tolist()]
        vals = [int.from_bytes(rng.bytes(8), "little") & ((1 << v) - 1) for _ in range(50)]
        for i, (f, x) in enumerate(zip(fps, vals, strict=True)):
            LK.gf_write_cell(words, high, i, clo, vlo, chi, np.uint64(f), np.uint64(x))
        lo = LK.all_cells(words, 50, clo).tolist()
        hi = LK.all_cells(high, 50, chi).tolist() if chi else [0] * 50
        assert [w >> vlo for w in lo] == fps
        assert [(w & ((1 << vlo) - 1)) | (h << vlo) for w, h in zip(lo, hi, strict=True)] == vals


@pytest.mark.parametrize("n", [1, 2, 3, 17])
def test_tiny_geometric_filters(n: int) -> None:
    keys = [f"k{i}" for i in range(n)]
    vals = list(range(1, n + 1))
    gf = GeometricFilter.build(keys, vals, value_bits=8, fpr=2**-10)
    gf._check()
    assert gf.get_many(tuple(keys)).tolist() == vals
    with pytest.raises(InvalidParameterError, match="with a length"):  # iteration only over sized inputs
        gf.get_many(iter(keys))
    assert gf.num_tables >= 1 and len(gf) == n
    g2 = GeometricFilter.from_bytes(gf.to_bytes())
    assert g2.get_many(keys).tolist() == vals


@pytest.mark.parametrize(("k", "e"), [(1, 4), (2, 6), (3, 21)])
def test_targeted_rescan_equals_full_rescan(k: int, e: int) -> None:
    keys, vals = _data(5000, seed=k, v=8)
    # repeated keys with other values, so that "last" matters
    keys = np.concatenate([keys, keys[:50]])
    vals = np.concatenate([vals, vals[:50] % 200 + 3])
    a = GeometricFilter.build(keys, vals, value_bits=8, error_bits=e, fpr=2.0**-e, num_hashes=k,
                              on_duplicate="last", chunk_size=700)
    b = GeometricFilter.build(keys, vals, value_bits=8, error_bits=e, fpr=2.0**-e, num_hashes=k,
                              on_duplicate="last", rescan="full", chunk_size=1000)
    assert a.to_bytes() == b.to_bytes()
    a._check()
    last = dict(zip(keys.tolist(), vals.tolist(), strict=True))
    assert a.get_many(np.array(list(last), dtype=np.uint64)).tolist() == list(last.values())
    assert a.build_stats()["duplicates"] == 50 and len(a) == 5000
    with pytest.raises(InvalidParameterError, match="rescan"):
        GeometricFilter.build(keys[:10], vals[:10], rescan="none")


def test_duplicate_named_for_arrow_input() -> None:
    keys = pa.array(["x", "y", "z", "y"])
    with pytest.raises(InvalidParameterError, match="Got 'y' twice \\(second time at index 3\\)"):
        GeometricFilter.build(keys, [1, 2, 3, 4])


def test_threaded_get_many_equals_one_thread(monkeypatch) -> None:
    """get_many hashes and walks slices on several threads; answers (overflow and pinned
    entries included) and probe counts equal the one-thread path."""
    import bloomkit
    from bloomkit._engine import parallel as _parallel

    monkeypatch.setattr(_parallel, "MIN_PER_THREAD", 500)
    keys, vals = _data(8000, v=8)
    gf = GeometricFilter.build(keys, vals, value_bits=8, error_bits=5, fpr=2.0**-5)
    assert gf.overflow_size > 0
    probe_keys = np.concatenate([keys, absent_zipf_keys(8000, 5000)])
    try:
        got = {}
        for t in (1, 3):
            bloomkit.set_num_threads(t)
            got[t] = (*gf.get_many(probe_keys, default=-1, return_probes=True), gf.get_many(list(probe_keys.tolist())))
        assert np.array_equal(got[1][0], got[3][0]) and got[1][1] == got[3][1]
        assert np.array_equal(got[1][2], got[3][2])
        assert (got[3][0][: len(keys)] == vals).all()
    finally:
        bloomkit.set_num_threads(None)
