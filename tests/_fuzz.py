"""Seeded fuzzing of bloomkit's public calls (issue 26, item 6): every call returns, raises a
bloomkit error, or raises TypeError / ValueError whose message names the parameter; none hangs,
none allocates far more than its input describes, and none leaves a structure broken.

What is called (:func:`targets`, sorted by name):

* every registered structure (``bloomkit._format.registered_structures()``): its constructor,
  its public class methods (``for_requirements``, ``build``, ``from_bytes``, ``load``, ...), every
  public method of a populated instance (a fresh copy of the conformance example,
  tests/conformance/examples.py, for each call) and its operators (``|``, ``&``, ``|=``, ``&=``,
  ``in``, ``==``, ``<=``, ``<``, ``>=``, ``>``, ``[]``); after a method call the instance's
  ``_check()`` must still pass (a failed call leaves the structure valid);
* every public function and class of the public modules (:data:`MODULES`: their ``__all__``).

With what (:class:`Gen`): values drawn by a seeded generator: None, bools, boundary and huge
ints, NaN / infinities, strs (the option names the package uses among them), bytes (real
containers and Parquet filters among them), lists / tuples / dicts / sets nested up to a few
levels and a few thousand deep, numpy arrays of every kind, shape and size, numpy scalars,
pyarrow arrays / tables, pandas objects, paths (existing files, directories, devices), the
examples of every structure, and hostile objects (an object whose ``__getitem__`` answers every
index, a ``__len__`` that lies, a generator, a ``__repr__`` that raises). A parameter keeps its
default (or a value of its annotated type, or a value of the example's own domain) often enough
that calls get past the first check.

How (:func:`run`): case ``i`` of seed ``s`` is reproducible on its own (its generator is seeded
with ``(s, i)``; targets are taken round-robin in a seeded order, so every target is called).
Cases run in child processes (``BLOOMKIT_NUM_THREADS=1``) under an address-space limit
(``RLIMIT_AS``: what the warmed-up child uses plus ``memory_limit``) and a per-call time limit
enforced by the parent (a call over it is re-run alone in a fresh child with three times the
limit before it counts as a hang); a hung or crashed child is replaced and the run goes on.

Outcomes: ``ok``, ``clean`` (a bloomkit error, or TypeError / ValueError naming a parameter of
the call), ``unclear`` (any other exception, or a TypeError / ValueError that names none),
``memory`` (a MemoryError other than bloomkit's storage refusing a structure of the size the
caller asked for), ``hang``, ``crash``, ``broken`` (the instance's ``_check()`` fails after the
call).

Command line (from the repository root)::

    python tests/_fuzz.py --seed 1 --calls 3000         # a run: counts and every problem
    python tests/_fuzz.py --seed 1 --case 1234          # one case, in this process, with its traceback
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import json
import math
import operator
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script: tests/ holds the conformance examples
    sys.path.insert(0, str(HERE))

MODULES = (
    "bloomkit",
    "bloomkit.theory",
    "bloomkit.parquet",
    "bloomkit.splitblock",
    "bloomkit.ranges",
    "bloomkit.ranges.model",
    "bloomkit.lookup",
    "bloomkit.lookup.params",
    "bloomkit.static",
    "bloomkit.static.model",
    "bloomkit.similarity",
    "bloomkit.similarity.theory",
    "bloomkit.similarity.minhash_bbit",
    "bloomkit.folding",
    "bloomkit.multiattr",
    "bloomkit.multiattr.model",
    "bloomkit.dask",
)
"""The public modules whose ``__all__`` functions and classes are called (bloomkit.serve, the CLI
and bloomkit.experiments are left out: they start servers, parse argv, run for minutes)."""

SKIP = {
    "bloomkit.info",  # no parameters that matter
    "bloomkit.dask.bloom_filter", "bloomkit.dask.contains", "bloomkit.dask.semi_join",  # need a cluster
    "bloomkit.dask.lookup_table", "bloomkit.dask.distinct_count",
}

OPERATORS = {
    "__or__": operator.or_, "__and__": operator.and_, "__ior__": operator.ior, "__iand__": operator.iand,
    "__contains__": lambda a, b: b in a, "__eq__": operator.eq, "__le__": operator.le, "__lt__": operator.lt,
    "__ge__": operator.ge, "__gt__": operator.gt, "__getitem__": operator.getitem,
}

KEYERROR_PROTOCOL = ("__getitem__", "remove", "update")
"""Methods whose KeyError for an absent key is their documented protocol (``t[key]``, ``remove`` as
``set.remove``, the deprecated ``update(key, value)`` that overwrites a present key)."""

OPTION_STRINGS = (
    "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BOOLEAN", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY",
    "bloom", "counting", "scalable", "foldable", "split-block", "geometric", "bloomier", "pbf",
    "error", "last", "sum", "max", "min", "any", "all", "independent", "greedy", "min_cost", "entropy",
    "basic", "attenuated", "native", "parquet", "xxh64", "sha512", "md5", "str", "int", "float", "bytes",
    "tuple", "targeted", "full", "Age", "Name", "Lat", "a", "s", "user_id",
)


# ---------------------------------------------------------------------------------------------
# targets


@dataclass(frozen=True)
class Target:
    name: str  # "BloomFilter.union", "bloomkit.parquet.plain_values", "BloomFilter.__or__"
    kind: str  # "function", "constructor", "classmethod", "method", "operator"
    where: str  # module name, or the structure tag
    attr: str  # the attribute ("__init__" for a constructor)


def _structures() -> dict[str, type]:
    from bloomkit._format import registered_structures

    return dict(sorted(registered_structures().items()))


def targets(modules: tuple[str, ...] | None = None) -> list[Target]:
    """Every public call, sorted by name (the same list in the parent and the child); with
    ``modules``, only the functions of those modules (the fuzzer's own tests)."""
    import importlib

    out: dict[str, Target] = {}
    registered = _structures() if modules is None else {}
    for tag, cls in registered.items():
        name = cls.__name__
        out[f"{name}()"] = Target(f"{name}()", "constructor", tag, "__init__")
        for attr in sorted(dir(cls)):
            raw = inspect.getattr_static(cls, attr)
            if attr in OPERATORS and attr in _defined_dunders(cls):
                out[f"{name}.{attr}"] = Target(f"{name}.{attr}", "operator", tag, attr)
            if attr.startswith("_"):
                continue
            if isinstance(raw, classmethod | staticmethod):
                out[f"{name}.{attr}"] = Target(f"{name}.{attr}", "classmethod", tag, attr)
            elif inspect.isfunction(raw):
                out[f"{name}.{attr}"] = Target(f"{name}.{attr}", "method", tag, attr)
    seen = {id(c) for c in registered.values()}
    for modname in MODULES if modules is None else modules:
        mod = importlib.import_module(modname)
        for attr in sorted(getattr(mod, "__all__", ())):
            obj = getattr(mod, attr)
            full = f"{modname}.{attr}"
            if full in SKIP or not callable(obj) or id(obj) in seen:
                continue
            if isinstance(obj, type) and issubclass(obj, BaseException):
                continue
            seen.add(id(obj))
            out[full] = Target(full, "function", modname, attr)
    return [out[k] for k in sorted(out)]


def _defined_dunders(cls: type) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        names |= set(vars(klass))
    return names


# ---------------------------------------------------------------------------------------------
# values


class Endless:
    """``__getitem__`` answers every index and there is no ``__len__``: iteration never ends."""

    def __getitem__(self, i: Any) -> Any:
        return i

    def __repr__(self) -> str:
        return "Endless()"


class LyingLen(Endless):
    """Claims 3 items and yields them forever."""

    def __len__(self) -> int:
        return 3

    def __iter__(self) -> Iterator[int]:
        i = 0
        while True:
            yield i
            i += 1

    def __repr__(self) -> str:
        return "LyingLen()"


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr refused")


class Index:
    """An integer-like object (``__index__``)."""

    def __init__(self, v: int) -> None:
        self.v = v

    def __index__(self) -> int:
        return self.v

    def __repr__(self) -> str:
        return f"Index({self.v})"


def _nested(depth: int, leaf: Any, kind: type) -> Any:
    out = leaf
    for _ in range(depth):
        out = kind([out]) if kind is not dict else {"k": out}
    return out


@dataclass
class World:
    """What the generator draws from besides fresh values: the structure examples, files made in
    the child's folder, and the domain values of the examples (keys, profiles, points)."""

    examples: dict[str, Any] = field(default_factory=dict)
    variants: dict[str, list[Any]] = field(default_factory=dict)  # other instances methods are called on
    paths: list[str] = field(default_factory=list)
    blobs: list[bytes] = field(default_factory=list)
    domain: list[Any] = field(default_factory=list)


def make_world(folder: Path, *, full: bool = True) -> World:
    """The examples and files of a run (built once per child process); ``full=False``: a few
    paths and blobs only (the fuzzer's own tests, which call no structure)."""
    if not full:
        (folder / "f.bin").write_bytes(b"\x00" * 10)
        return World(paths=[str(folder / "f.bin"), str(folder / "empty.bin")], blobs=[b"", b"abc"], domain=[1, "a", [1, 2]])
    import pyarrow as pa
    import pyarrow.parquet as pq
    from conformance import examples as ex

    import bloomkit
    from bloomkit import parquet

    w = World()
    for tag, e in ex.EXAMPLES.items():
        w.examples[tag] = e.make()
    for i, (_tag, obj) in enumerate(sorted(w.examples.items())):
        raw = obj.to_bytes()
        w.blobs.append(raw)
        if i % 3 == 0:
            (folder / f"ex{i}.bkf").write_bytes(raw)
            w.paths.append(str(folder / f"ex{i}.bkf"))
    sbf = bloomkit.SplitBlockBloomFilter.for_parquet(physical_type="INT64", num_bytes=64)
    sbf.add_many(np.arange(5))
    sbs = bloomkit.SplitBlockBloomFilter.for_parquet(physical_type="BYTE_ARRAY", num_bytes=64)
    sbs.add_many(["a", "b"])
    w.variants["splitblock.SplitBlockBloomFilter"] = [sbf, sbs]  # Parquet mode
    w.blobs += [parquet.serialize_bloom_filter(sbf), sbf.to_parquet_bitset(), w.blobs[0][:40]]
    t = pa.table({"a": np.arange(300, dtype=np.int64), "s": [f"k{i}" for i in range(300)]})
    pq.write_table(t, folder / "t.parquet", row_group_size=100, bloom_filter_options={"a": True, "s": True})
    (folder / "d").mkdir(exist_ok=True)
    pq.write_table(t.slice(0, 10), folder / "d" / "p.parquet", bloom_filter_options={"a": True})
    (folder / "junk.bin").write_bytes(b"\x00" * 100)
    w.paths += [str(folder / "t.parquet"), str(folder / "d"), str(folder / "junk.bin"), str(folder / "missing.bkf"),
                str(folder), "", "out.bkf", str(folder / "d" / "new" / "x.bkf")]
    # only paths inside the run's own folder: never a device (as root, an earlier save() replaced
    # /dev/null and /dev/zero; save() now refuses them, tested in test_format), never "/" or
    # "..", which save_shards() would fill with shard files
    w.domain += [*ex.STR, *ex.PROFILES, *ex.RANGE_QUERIES, ex.LOOKUP_KEYS[:10], [1, 2, 3],
                 np.array([[1.0, 2.0, 3.0, 4.0]]), np.full((3, 4), 50.0), ("10.0.0.1", "10.0.0.2", 80),
                 [("a", "b", 1), ("c", "d", 2)], {"Age": (20, 29)}, {"Age": 22}, "Age", ("Age", 22), 50.0,
                 [50.0, 50.0, 50.0, 50.0], (0, 100), 0.01, 2**-16, 1000, 3]
    return w


class Gen:
    """Random argument values (seeded). ``big`` allows larger collections (the slow run)."""

    def __init__(self, rng: np.random.Generator, world: World, *, big: bool = False) -> None:
        self.rng, self.world, self.big = rng, world, big

    def pick(self, seq: Any) -> Any:
        return seq[int(self.rng.integers(len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def size(self) -> int:
        r = self.rng.random()
        if r < 0.25:
            return 0
        if r < 0.8:
            return int(self.rng.integers(1, 6))
        if r < 0.97:
            return int(self.rng.integers(6, 200))
        return int(self.rng.integers(200, 100_000 if self.big else 5_000))

    # -- scalars
    def int_(self) -> Any:
        r = self.rng.random()
        if r < 0.5:
            return int(self.rng.integers(-3, 12))
        if r < 0.8:
            return self.pick([0, 1, -1, 2, 7, 64, 255, 256, 1000, 4096, 2**31 - 1, 2**31, 2**32, 2**32 + 1,
                              2**53 + 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), 10**9, 10**12,
                              10**15, 10**18])
        if r < 0.9:
            return self.pick([10**30, -(10**30), 2**1000, 10**400])
        return self.pick([np.int64(5), np.uint64(2**64 - 1), np.int8(-1), np.uint8(200), Index(3), Index(2**70),
                          True, 3.0])

    def float_(self) -> Any:
        r = self.rng.random()
        if r < 0.4:
            return float(self.rng.uniform(-2, 2))
        if r < 0.85:
            return self.pick([0.0, -0.0, 0.5, 1.0, 1.5, 0.01, 1e-3, 2**-16, 1e-300, 5e-324, 1e300, -1.0, 100.0,
                              1e9, 1e15, 1e18, math.nan, math.inf, -math.inf])
        return self.pick([np.float32(0.1), np.float64("nan"), np.float16(1), 1 + 2j, self.int_()])

    def str_(self) -> Any:
        r = self.rng.random()
        if r < 0.5:
            return self.pick(OPTION_STRINGS)
        if r < 0.8:
            return self.pick(["", "x", "alpha", "\x00", "é", "\ud800", " ", "1", "1.5", "nan", "-1", "a,b",
                              "Age=22", "sub/x", "./y"])
        # random text; never "/" or "\\" (a str is also a path to save to: only relative names)
        if self.chance(0.5):
            return "a" * self.pick([100, 70_000])
        text = "".join(chr(int(c)) for c in self.rng.integers(32, 0x3000, self.size()) if chr(int(c)) not in "/\\")
        return "dots" if text in (".", "..") else text

    def bytes_(self) -> Any:
        r = self.rng.random()
        if r < 0.4:
            return self.pick(self.world.blobs)
        if r < 0.6:
            b = bytearray(self.pick(self.world.blobs))
            if b:
                b[int(self.rng.integers(len(b)))] ^= 0xFF
            return bytes(b)
        if r < 0.9:
            return self.rng.bytes(self.size())
        return self.pick([bytearray(b"abc"), memoryview(b"abcd"), b"", b"\x00" * 32])

    # -- containers
    def array(self) -> Any:
        n = self.size()
        kind = self.pick(["bool", "int8", "int32", "int64", "uint8", "uint64", "float32", "float64", "complex",
                          "U", "S", "object", "datetime", "2d", "0d", "empty2d", "fortran", "strided", "huge"])
        rng = self.rng
        if kind == "bool":
            return rng.random(n) < 0.5
        if kind in ("int8", "int32", "int64", "uint8", "uint64"):
            info = np.iinfo(kind)
            return rng.integers(max(info.min, -(2**62)), min(info.max, 2**62), n, dtype=kind, endpoint=True)
        if kind in ("float32", "float64"):
            a = rng.normal(0, 50, n).astype(kind)
            if n and self.chance(0.3):
                a[int(rng.integers(n))] = self.pick([np.nan, np.inf, -np.inf])
            return a
        if kind == "complex":
            return rng.normal(size=n) + 1j
        if kind == "U":
            return np.array([f"k{i}" for i in range(n)])
        if kind == "S":
            return np.array([f"k{i}".encode() for i in range(n)])
        if kind == "object":
            return np.array([self.scalar() for _ in range(n)] + [None], dtype=object)[:n]
        if kind == "datetime":
            return np.arange(n).astype("datetime64[s]")
        if kind == "2d":
            return rng.normal(50, 20, (n, self.pick([1, 2, 3, 4, 5, 64])))
        if kind == "0d":
            return np.array(self.pick([1, 1.5, "a", True]))
        if kind == "empty2d":
            return np.zeros((0, self.pick([0, 4])))
        if kind == "fortran":
            return np.asfortranarray(rng.normal(50, 10, (max(n, 1), 4)))
        if kind == "strided":
            return rng.integers(0, 100, 2 * n + 1)[::2]
        return np.broadcast_to(np.int64(1), (10**6,))  # a read-only view of stride 0

    def arrow(self) -> Any:
        import pyarrow as pa

        n = self.size()
        return self.pick([
            lambda: pa.array(np.arange(n)),
            lambda: pa.array([f"k{i}" for i in range(n)]),
            lambda: pa.array([1, None, 3][: max(1, min(n, 3))]),
            lambda: pa.array([], pa.null()),
            lambda: pa.array([[1, 2]] * n, pa.list_(pa.int64())),
            lambda: pa.array([[1.0, 2.0, 3.0, 4.0]] * n, pa.list_(pa.float64(), 4)),
            lambda: pa.array([{"x": 1}] * n),
            lambda: pa.chunked_array([pa.array(["a"]), pa.array(["b", "c"])]),
            lambda: pa.array([b"ab"] * n, pa.binary(2)),
            lambda: pa.table({"a": np.arange(n), "b": np.arange(n)}),
            lambda: pa.table({"a": np.arange(n)}),
            lambda: pa.array([1.5] * n),
            lambda: pa.array(["x"] * n).dictionary_encode(),
        ])()

    def pandas(self) -> Any:
        import pandas as pd

        n = self.size()
        return self.pick([
            lambda: pd.Series(np.arange(n), index=np.arange(n)[::-1]),
            lambda: pd.Series(["a", None, "c"][: max(1, min(n, 3))]),
            lambda: pd.Series(pd.Categorical(["x", "y"] * n)),
            lambda: pd.DataFrame({"a": np.arange(n), "b": np.arange(n)}),
            lambda: pd.DataFrame({"Age": [20] * n, "Name": ["x"] * n}),
            lambda: pd.Series(pd.array([1, None], dtype="Int64")),
            lambda: pd.Series(pd.date_range("2020", periods=n)),
            lambda: pd.Index(["a", "b"]),
        ])()

    def scalar(self) -> Any:
        return self.pick([self.int_, self.float_, self.str_, self.bytes_, lambda: self.pick([None, True, False])])()

    def collection(self, depth: int) -> Any:
        n = self.size()
        kind = self.pick(["list", "tuple", "dict", "set", "range", "gen", "deep", "mixed"])
        if kind == "list":
            return [self.value(depth + 1) for _ in range(min(n, 50))] if depth < 2 else [self.scalar() for _ in range(n)]
        if kind == "tuple":
            return tuple(self.value(depth + 1) for _ in range(min(n, 6)))
        if kind == "dict":
            return {self.pick(OPTION_STRINGS): self.value(depth + 1) for _ in range(min(n, 6))}
        if kind == "set":
            return {self.int_() if self.chance(0.5) else self.str_() for _ in range(min(n, 10))}
        if kind == "range":
            return range(self.pick([0, 3, 1000, 10**6]))
        if kind == "gen":
            return (i for i in range(min(n, 10)))
        if kind == "deep":
            return _nested(self.pick([40, 200, 3000]), self.pick([1, "a", []]), self.pick([list, tuple, dict]))
        return [self.int_(), self.str_(), 1.5, None][: max(1, n)]

    def hostile(self) -> Any:
        return self.pick([Endless, LyingLen, BadRepr, object, lambda: (lambda x: x), lambda: Ellipsis,
                          lambda: slice(0, 2), lambda: ValueError("x"), lambda: io.BytesIO(self.bytes_()),
                          lambda: Path(self.pick(self.world.paths)), lambda: type])()

    def example(self) -> Any:
        if not self.world.examples:
            return None
        return self.world.examples[self.pick(sorted(self.world.examples))].copy()

    def value(self, depth: int = 0) -> Any:
        r = self.rng.random()
        if r < 0.06:
            return None
        if r < 0.10:
            return self.pick([True, False])
        if r < 0.22:
            return self.int_()
        if r < 0.30:
            return self.float_()
        if r < 0.38:
            return self.str_()
        if r < 0.44:
            return self.bytes_()
        if r < 0.56 and depth < 4:
            return self.collection(depth)
        if r < 0.66:
            return self.array()
        if r < 0.71:
            return self.arrow()
        if r < 0.75:
            return self.pandas()
        if r < 0.82:
            return self.hostile()
        if r < 0.88:
            return self.example()
        if r < 0.93:
            return self.pick(self.world.paths)
        return self.pick(self.world.domain)

    def typed(self, annotation: str) -> Any:
        """A value of the annotated type (the annotation is a string: ``from __future__ import
        annotations``), or a generic one."""
        a = annotation.replace(" ", "")
        opts: list[Callable[[], Any]] = []
        if re.search(r"\bint\b", a):
            opts.append(self.int_)
        if re.search(r"\bfloat\b", a):
            opts.append(self.float_)
        if re.search(r"\bstr\b", a):
            opts.append(self.str_)
        if re.search(r"\bbool\b", a):
            opts.append(lambda: self.pick([True, False]))
        if re.search(r"\bbytes\b", a):
            opts.append(self.bytes_)
        if "None" in a:
            opts.append(lambda: None)
        return self.pick(opts)() if opts else self.value()


# ---------------------------------------------------------------------------------------------
# one case


@dataclass
class Call:
    target: Target
    fn: Callable[..., Any]
    args: list[Any]
    kwargs: dict[str, Any]
    params: set[str]
    instance: Any = None

    def describe(self) -> str:
        parts = [_short(a) for a in self.args] + [f"{k}={_short(v)}" for k, v in self.kwargs.items()]
        return f"{self.target.name}({', '.join(parts)})"


def _short(v: Any, limit: int = 120) -> str:
    if isinstance(v, np.ndarray):
        return f"np.ndarray(shape={v.shape}, dtype={v.dtype})"
    if isinstance(v, list | tuple | dict) and len(repr(type(v))) and _depth(v) > 20:
        return f"<{type(v).__name__} nested {_depth(v)} deep>"
    try:
        r = repr(v)
    except Exception:
        return f"<{type(v).__name__} with a failing repr>"
    return r if len(r) <= limit else r[:limit] + "..."


def _depth(v: Any) -> int:
    d = 0
    while isinstance(v, list | tuple | dict) and len(v) == 1 and d < 10_000:
        v = next(iter(v.values())) if isinstance(v, dict) else v[0]
        d += 1
    return d


def _signature(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def make_call(seed: int, i: int, tlist: list[Target], world: World, *, big: bool = False) -> Call:
    """Case ``i`` of seed ``seed``: the target and its arguments (deterministic)."""
    import importlib

    order = np.random.default_rng([seed, 0xF022]).permutation(len(tlist))
    t = tlist[int(order[i % len(tlist)])]
    gen = Gen(np.random.default_rng([seed, i]), world, big=big)
    instance = None
    if t.kind == "function":
        fn = getattr(importlib.import_module(t.where), t.attr)
    else:
        cls = _structures()[t.where]
        if t.kind == "constructor":
            fn = cls
        elif t.kind == "classmethod":
            fn = getattr(cls, t.attr)
        else:
            instance = gen.pick([world.examples[t.where], *world.variants.get(t.where, [])]).copy()
            fn = OPERATORS[t.attr] if t.kind == "operator" else getattr(instance, t.attr)
    if t.kind == "operator":
        return Call(t, lambda other, _f=fn, _o=instance: _f(_o, other), [gen.value()], {}, {"other"}, instance)
    sig = _signature(fn)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    params: set[str] = set()
    if sig is None:
        return Call(t, fn, [gen.value() for _ in range(int(gen.rng.integers(0, 3)))], {}, set(), instance)
    for p in sig.parameters.values():
        params.add(p.name)
        if p.kind is p.VAR_POSITIONAL:
            args += [gen.value() for _ in range(int(gen.rng.integers(0, 3)))]
            continue
        if p.kind is p.VAR_KEYWORD:
            if gen.chance(0.2):
                kwargs[gen.pick(["extra", "capacity", "seed"])] = gen.value()
            continue
        has_default = p.default is not p.empty
        r = gen.rng.random()
        if has_default and r < 0.45:
            continue  # keep the default
        if r < 0.6 and p.annotation is not p.empty:
            v = gen.typed(str(p.annotation))
        elif r < 0.7:
            v = gen.pick(world.domain)
        else:
            v = gen.value()
        if p.kind is p.POSITIONAL_ONLY or (p.kind is p.POSITIONAL_OR_KEYWORD and not kwargs and gen.chance(0.5)):
            args.append(v)
        else:
            kwargs[p.name] = v
    return Call(t, fn, args, kwargs, params, instance)


# ---------------------------------------------------------------------------------------------
# the oracle


def names_a_parameter(message: str, params: set[str]) -> bool:
    """The message names one of the call's parameters: quoted (``'fpr'``), or as a word when the
    name is longer than two characters; Python's operator messages name the operand."""
    if "unsupported operand" in message or "not supported between instances" in message:
        return True
    if re.search(r"(takes|expected) (at most |at least |exactly )?\d+ (positional )?arguments?", message):
        return True  # Python's own signature errors (a *args method given too many)
    for p in params:
        if f"'{p}'" in message or f'"{p}"' in message or f"`{p}`" in message:
            return True
        if len(p) > 2 and re.search(rf"(?<![\w.]){re.escape(p)}(?!\w)", message):
            return True
    return False


def _refused_allocation(tb: Any) -> bool:
    """A MemoryError raised where bloomkit allocates a structure's cells (the size the caller
    asked for; numpy's message names it)."""
    frames = traceback.extract_tb(tb)
    return any(f.filename.endswith(os.path.join("bloomkit", "_engine", "storage.py")) for f in frames[-3:])


def _through_bloomkit(tb: Any) -> bool:
    return any(os.sep + "bloomkit" + os.sep in f.filename for f in traceback.extract_tb(tb))


def classify(exc: BaseException | None, params: set[str], *, operator_call: bool = False,
             mapping_get: bool = False) -> str:
    """``ok``, ``clean``, ``memory`` or ``unclear`` (see the module docstring). Also clean: an
    OSError that names its file (``load("missing.bkf")``: what ``open`` raises), a KeyError from
    ``t[key]`` (the mapping protocol), and an operator's error raised by the *other* operand's
    reflected method (no bloomkit frame: bloomkit returned NotImplemented). ``mapping_get``: the
    call is ``t[key]`` or a documented ``remove(key)`` of a lookup table (KeyError for an absent
    key, as dict and set raise)."""
    from bloomkit.errors import BloomkitError

    if exc is None:
        return "ok"
    if isinstance(exc, BloomkitError):
        return "clean"
    if isinstance(exc, MemoryError):
        return "clean" if _refused_allocation(exc.__traceback__) else "memory"
    if isinstance(exc, TypeError | ValueError) and names_a_parameter(str(exc), params):
        return "clean"
    if isinstance(exc, OSError) and exc.filename is not None:
        return "clean"
    if mapping_get and type(exc) is KeyError:
        return "clean"
    if operator_call and not _through_bloomkit(exc.__traceback__):
        return "clean"
    return "unclear"


def execute(call: Call) -> tuple[str, str]:
    """Run one call; (outcome, detail)."""
    import bloomkit

    exc: BaseException | None = None
    try:
        call.fn(*call.args, **call.kwargs)
    except RecursionError as e:  # not a MemoryError, not clean: reported with its kind
        exc = e
    except Exception as e:
        exc = e
    finally:
        bloomkit.set_num_threads(1)
    outcome = classify(exc, call.params, operator_call=call.target.kind == "operator",
                       mapping_get=call.target.attr in KEYERROR_PROTOCOL)
    detail = "" if exc is None else f"{type(exc).__module__}.{type(exc).__name__}: {str(exc)[:300]}"
    if outcome in ("ok", "clean") and call.instance is not None and call.target.kind != "classmethod":
        try:
            call.instance._check()
        except Exception as e:
            return "broken", f"after {detail or 'returning'}: _check() raised {type(e).__name__}: {str(e)[:200]}"
    return outcome, detail


# ---------------------------------------------------------------------------------------------
# the child process


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Config:
    """What defines a run besides its case numbers (sent to every child as JSON)."""

    seed: int
    big: bool = False
    time_limit: float = 10.0  # seconds a call may take (a stalled call is re-run alone with 3x)
    memory_limit: int = 1 << 30  # bytes of address space a call may add to the warmed-up child
    modules: tuple[str, ...] | None = None  # None: the whole public API (see targets())


def child(cfg: Config, cases: list[int], folder: Path) -> None:
    """Run ``cases`` in ``folder`` (the parent makes and removes it) and write one JSON line
    before ("start") and after each."""
    import resource

    warnings.simplefilter("ignore")
    os.chdir(folder)
    tlist = targets(cfg.modules)
    order = np.random.default_rng([cfg.seed, 0xF022]).permutation(len(tlist))
    world = make_world(folder, full=cfg.modules is None)
    if world.examples:  # warm up outside the time limit: compile / load the kernels the examples use
        from conformance.examples import EXAMPLES

        for tag, e in world.examples.items():
            with contextlib.suppress(Exception):
                EXAMPLES[tag].probe(e.copy())
                e.copy()._check()
    limit = _vm_bytes() + cfg.memory_limit
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    out = os.fdopen(os.dup(1), "w")  # the protocol; whatever the calls print goes nowhere
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    print(json.dumps({"targets": [t.name for t in tlist]}), file=out, flush=True)
    for i in cases:
        print(json.dumps({"start": i}), file=out, flush=True)
        t0 = time.perf_counter()
        try:
            call = make_call(cfg.seed, i, tlist, world, big=cfg.big)
            what = call.describe()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                outcome, detail = execute(call)
        except MemoryError as e:  # while building the arguments: the generator's fault, not a bomb
            outcome, detail, what = "skipped", f"MemoryError while making the case: {e}", f"case {i}"
        rec = {"i": i, "target": tlist[int(order[i % len(tlist)])].name, "outcome": outcome, "detail": detail,
               "call": what[:400], "seconds": round(time.perf_counter() - t0, 3)}
        print(json.dumps(rec), file=out, flush=True)


# ---------------------------------------------------------------------------------------------
# the parent


@dataclass
class Report:
    config: Config
    calls: int
    counts: Counter[str] = field(default_factory=Counter)
    problems: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    target_names: list[str] = field(default_factory=list)

    @property
    def targets(self) -> int:
        return len(self.target_names)

    def summary(self) -> str:
        c = self.counts
        return (f"seed {self.config.seed}: {self.calls} calls over {self.targets} targets in {self.seconds:.1f} s: "
                f"{c['ok']} returned, {c['clean']} clean errors; problems: {c['unclear']} unclear errors, "
                f"{c['hang']} hangs, {c['memory']} memory bombs, {c['crash']} crashes, {c['broken']} broken "
                f"structures ({c['skipped']} skipped)")

    def lines(self, limit: int = 40) -> list[str]:
        big = " --big" if self.config.big else ""
        return [f"[{p['outcome']}] case {p['i']}: {p['call']}\n    -> {p.get('detail', '')}  "
                f"(python tests/_fuzz.py --seed {self.config.seed}{big} --case {p['i']})" for p in self.problems[:limit]]


PROBLEMS = ("unclear", "hang", "memory", "crash", "broken")


def _drive(cfg: Config, cases: list[int], time_limit: float, names: list[str] | None = None,
           startup_limit: float = 300.0) -> tuple[list[dict[str, Any]], list[int], int | None, bool]:
    """Run ``cases`` in one child until it ends or stalls. Returns the records, the cases not
    run, the case running when it stopped (or None) and whether it stalled; ``names`` receives
    the child's list of targets."""
    env = {**os.environ, "BLOOMKIT_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    err = tempfile.TemporaryFile(mode="w+")  # read back only when the child fails outside a call
    folder = tempfile.mkdtemp(prefix="bloomkit-fuzz-")  # everything the calls write goes here
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=err, text=True, env=env, cwd=folder)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps({"config": asdict(cfg), "cases": cases, "folder": folder}))  # too many for argv
    proc.stdin.close()
    records: list[dict[str, Any]] = []
    done: set[int] = set()
    current: int | None = None
    deadline = time.monotonic() + startup_limit
    stalled = False
    buf = ""
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    while True:
        timeout = deadline - time.monotonic()
        if timeout <= 0:
            stalled = True
            break
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16).decode()
        if not chunk:
            break  # the child ended
        buf += chunk
        *lines, buf = buf.split("\n")
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if "targets" in rec:
                if names is not None:
                    names[:] = rec["targets"]
            elif "start" in rec:
                current = rec["start"]
                deadline = time.monotonic() + time_limit
            else:
                records.append(rec)
                done.add(rec["i"])
                current = None
    if stalled:
        proc.kill()
    proc.wait()
    proc.stdout.close()
    shutil.rmtree(folder, ignore_errors=True)
    with err:
        if proc.returncode != 0 and current is None and not stalled:
            err.seek(0)
            raise RuntimeError(f"fuzz child failed outside a call (exit {proc.returncode}):\n{err.read()[-3000:]}")
    rest = [c for c in cases if c not in done and c != current]
    return records, rest, current, stalled


def run(cfg: Config, calls: int, *, start: int = 0, cases: list[int] | None = None,
        progress: bool = False) -> Report:
    """Run cases ``start .. start + calls - 1`` of ``cfg`` (or the listed ``cases``); see the
    module docstring."""
    t0 = time.perf_counter()
    todo = list(range(start, start + calls)) if cases is None else list(cases)
    report = Report(cfg, len(todo))
    while todo:
        if progress:
            print(f"fuzz: {report.calls - len(todo)} of {report.calls} calls done ({time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
        records, todo, current, _stalled = _drive(cfg, todo, cfg.time_limit, report.target_names)
        if current is not None:  # hung or crashed in this case: confirm alone, with more time
            again, _, _, stalled = _drive(cfg, [current], 3 * cfg.time_limit)
            records += again or [{"i": current, "outcome": "hang" if stalled else "crash",
                                  "call": _describe(cfg, current),
                                  "detail": f"no answer within {3 * cfg.time_limit:g} s" if stalled else "the child died"}]
        for rec in records:
            report.counts[rec["outcome"]] += 1
            if rec["outcome"] in PROBLEMS:
                report.problems.append(rec)
    report.seconds = time.perf_counter() - t0
    return report


def _describe(cfg: Config, i: int) -> str:
    """The call of case ``i`` as text (made in a scratch folder of this process)."""
    try:
        with tempfile.TemporaryDirectory() as d:
            world = make_world(Path(d), full=cfg.modules is None)
            return make_call(cfg.seed, i, targets(cfg.modules), world, big=cfg.big).describe()
    except Exception as e:  # pragma: no cover - description only
        return f"case {i} ({type(e).__name__} while describing it)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--case", type=int, help="run one case here, with its traceback")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--memory-limit", type=int, default=1 << 30)
    ap.add_argument("--big", action="store_true", help="larger collections (the slow run)")
    ap.add_argument("--replay", help="run only the problem cases of a report written with --json")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        job = json.loads(sys.stdin.read())
        cfg_d = job["config"]
        cfg_d["modules"] = None if cfg_d["modules"] is None else tuple(cfg_d["modules"])
        child(Config(**cfg_d), job["cases"], Path(job["folder"]))
        return 0
    cfg = Config(a.seed, a.big, a.time_limit, a.memory_limit)
    if a.case is not None:
        with tempfile.TemporaryDirectory() as d:
            os.chdir(d)
            call = make_call(a.seed, a.case, targets(), make_world(Path(d)), big=a.big)
            print(call.describe())
            try:
                call.fn(*call.args, **call.kwargs)
                print("returned")
            except Exception as e:
                traceback.print_exc()
                print("outcome:", classify(e, call.params, operator_call=call.target.kind == "operator",
                                           mapping_get=call.target.attr in KEYERROR_PROTOCOL))
        return 0
    cases = None if a.replay is None else sorted(p["i"] for p in json.loads(Path(a.replay).read_text())["problems"])
    report = run(cfg, a.calls, start=a.start, cases=cases, progress=True)
    print(report.summary())
    print("\n".join(report.lines(limit=10_000)))
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": report.summary(), "counts": report.counts,
                                            "problems": report.problems}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
