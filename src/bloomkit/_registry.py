"""The one structure registry: every persistable structure, declared once.

Each :class:`Entry` names a structure's tag (the file format's structure id), the public module
and class that define it, its family, its ``bloomkit build --kind`` name and help, and what it
can do (:data:`CAPABILITIES`). Everything that lists structures is derived from :data:`ENTRIES`:

* the loader (:func:`bloomkit.load` imports the module of a file's tag; a class learns its tag
  here, :class:`bloomkit._format.Persistable` sets ``_STRUCTURE`` when the class is created);
* the public names of :mod:`bloomkit` (capability ``"top-level"``, imported on first use);
* the CLI's ``--kind`` choices (:data:`bloomkit._commands.KINDS`, a builder per family);
* the structures :func:`bloomkit.open` maps (``"mapped"``);
* the partition filters of :func:`bloomkit.dask.bloom_filter` (``"dask"``) and the shards of
  :func:`bloomkit.dask.lookup_table` (``"shard"``);
* the test suites (conformance, membership behaviour, calibration, fuzz, threads).

Adding a structure is: its module, its line here, its example in tests/conformance/examples.py
and its golden file (tests/golden/v2). This module imports nothing of bloomkit: ``import
bloomkit`` reads it without numpy.

>>> by_tag("bloom.BloomFilter").cli
'bloom'
>>> [e.cli for e in with_capability("dask")]
['bloom', 'counting', 'scalable', 'foldable', 'split-block', 'pbf']
"""

from __future__ import annotations

import importlib
from typing import Any, NamedTuple

__all__ = ["CAPABILITIES", "ENTRIES", "FAMILIES", "Entry", "by_tag", "entry_of_class", "load_class", "packages",
           "with_capability"]

FAMILIES = ("membership", "lookup", "similarity", "items", "records", "sharded")
"""What a structure answers: is a key in the set; a key's value; is a vector near the set; is an
item (a tuple of attributes) in the set; which records / profiles match a query; a table of
lookup shards."""

CAPABILITIES = {
    "top-level": "a public name of the bloomkit package itself (bloomkit.BloomFilter)",
    "set-algebra": "Python's set protocol over words of bits (bloomkit._membership.WordSetAlgebra)",
    "counters": "counters instead of bits: keys can be removed (the CLI passes --counter-bits)",
    "mapped": "memory-mapped by bloomkit.open and built into a file by create (its state is one word array)",
    "static": "no insert once built: built once from all of its keys (the CLI reads its input once, keeps it in memory)",
    "dask": "a partition filter of bloomkit.dask.bloom_filter (for_requirements(capacity, fpr, seed=))",
    "shard": "a shard of bloomkit.dask.lookup_table (build(keys, values, ...))",
    "one-width": "a similarity filter of one granularity w: no levels, no OR count (the CLI builds it so)",
    "virtual-bits": "a similarity filter without a physical bit array (MLBF*: num_bits is a virtual address space, not --num-bits)",
}


class Entry(NamedTuple):
    """One persistable structure."""

    tag: str
    """The structure tag of its files (``"<package>.<Name>"``, never changed once released)."""
    module: str
    """The public module that defines or re-exports the class (``"bloomkit.folding"``)."""
    name: str
    """The class's name in that module."""
    family: str
    """One of :data:`FAMILIES`."""
    cli: str | None = None
    """Its ``bloomkit build --kind`` name (None: not built by the CLI)."""
    help: str = ""
    """The CLI's one-line description of it."""
    capabilities: frozenset[str] = frozenset()
    """Keys of :data:`CAPABILITIES`."""


def _e(tag: str, module: str, name: str, family: str, cli: str | None = None, help: str = "",
       caps: str = "") -> Entry:
    return Entry(tag, f"bloomkit.{module}", name, family, cli, help, frozenset(caps.split()))


ENTRIES: tuple[Entry, ...] = (
    _e("bloom.BloomFilter", "bloom", "BloomFilter", "membership", "bloom", "Bloom filter (default)",
       "top-level set-algebra mapped dask"),
    _e("bloom.CountingBloomFilter", "bloom", "CountingBloomFilter", "membership", "counting",
       "counting Bloom filter (keys can be removed)", "top-level set-algebra mapped counters dask"),
    _e("scalable.ScalableBloomFilter", "scalable", "ScalableBloomFilter", "membership", "scalable",
       "scalable Bloom filter (grows; --capacity is the first slice)", "top-level dask"),
    _e("folding.FoldableBloomFilter", "folding", "FoldableBloomFilter", "membership", "foldable",
       "foldable Bloom filter (document 003)", "set-algebra dask"),
    _e("folding.FoldableCounting", "folding", "FoldableCountingBloomFilter", "membership", "foldable-counting",
       "foldable counting Bloom filter (document 003; keys can be removed)", "set-algebra counters"),
    _e("splitblock.SplitBlockBloomFilter", "splitblock", "SplitBlockBloomFilter", "membership", "split-block",
       "split-block Bloom filter (512-bit blocks: one cache line per key)", "top-level set-algebra mapped dask"),
    _e("lookup.GeometricFilter", "lookup", "GeometricFilter", "lookup", "geometric",
       "Geometric filter: key -> value (document 001; --values)", "shard"),
    _e("lookup.BloomierFilter", "lookup", "BloomierFilter", "lookup", "bloomier",
       "Bloomier filter: key -> value (--values)", "static shard"),
    _e("lookup.RibbonRetrieval", "lookup", "RibbonRetrieval", "lookup", "ribbon-retrieval",
       "ribbon retrieval: static key -> value (--values)", "static"),
    _e("static.BinaryFuseFilter", "static", "BinaryFuseFilter", "membership", "fuse",
       "binary fuse filter (static, 4-wise; 8/16/32-bit fingerprints for --fpr)", "static"),
    _e("static.RibbonFilter", "static", "RibbonFilter", "membership", "ribbon", "ribbon filter (static, w = 64)",
       "static"),
    _e("similarity.MLBF", "similarity", "MLBF", "similarity", "mlbf",
       "MLBF: near-membership of vectors (document 002; --w)"),
    _e("similarity.MLBFStar", "similarity", "MLBFStar", "similarity", "mlbf-star",
       "MLBF*: the virtual multi-level filter (--w)", "virtual-bits"),
    _e("similarity.LSBF", "similarity", "LSBF", "similarity", "lsbf", "LSBF: one-width locality-sensitive filter (--w)",
       "one-width"),
    _e("multiattr.ParallelBloomFilter", "multiattr", "ParallelBloomFilter", "items", "pbf",
       "parallel Bloom filter of multi-attribute items (document 004; --columns)", "dask"),
    _e("ranges.RangeBloomFilter", "ranges", "RangeBloomFilter", "records", "range",
       "range Bloom filter of one set of records (document 000: one per profile; --schema, columns by "
       "attribute name)"),
    _e("ranges.ProfileIndex", "ranges", "ProfileIndex", "records", "profile-index",
       "profile index: one profile per row, searched by attributes and ranges (--schema)"),
    _e("similarity.JaccardMLBF", "similarity", "JaccardMLBF", "similarity"),
    _e("similarity.JaccardMLBFStar", "similarity", "JaccardMLBFStar", "similarity"),
    _e("similarity.JaccardLSBF", "similarity", "JaccardLSBF", "similarity"),
    _e("dask.ShardedLookupTable", "dask", "ShardedLookupTable", "sharded"),
)
"""Every persistable structure (the order of the CLI's ``--kind`` list)."""

_BY_TAG = {e.tag: e for e in ENTRIES}


def by_tag(tag: str) -> Entry | None:
    """The entry of a structure tag, or None. Complexity: O(1)."""
    return _BY_TAG.get(tag)


def with_capability(cap: str) -> list[Entry]:
    """The entries with capability ``cap`` (a key of :data:`CAPABILITIES`), in registry order."""
    if cap not in CAPABILITIES:
        raise KeyError(f"unknown capability {cap!r}")
    return [e for e in ENTRIES if cap in e.capabilities]


def entry_of_class(module: str, qualname: str) -> Entry | None:
    """The entry of the class ``qualname`` defined in ``module`` (the entry's public module or
    one of its submodules), or None."""
    for e in ENTRIES:
        if e.name == qualname and (module == e.module or module.startswith(e.module + ".")):
            return e
    return None


def packages() -> tuple[str, ...]:
    """The public modules that define structures (``bloom``, ``scalable``, ...), in order."""
    return tuple(dict.fromkeys(e.module.removeprefix("bloomkit.") for e in ENTRIES))


def load_class(entry: Entry) -> Any:
    """The class of ``entry`` (imports its module). ModuleNotFoundError when an optional
    dependency of that module is missing."""
    return getattr(importlib.import_module(entry.module), entry.name)
