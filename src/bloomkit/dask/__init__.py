"""Scale-out on Dask: filters built from partitioned data, sharded lookup tables, Bloom
semi-joins (issue 15; docs/scale-out.md).

Everything here runs on whatever scheduler dask uses at the time of the call: a
``distributed.Client`` (a ``LocalCluster`` on a laptop, ``Client("tcp://scheduler:8786")`` on a
cluster) or dask's local schedulers. Nothing is imported from dask until a function runs, so
``import bloomkit.dask`` works without the ``dask`` extra and :class:`ShardedLookupTable`
files load anywhere.

* :func:`bloom_filter`: every partition of a dask Series / Array / Bag / DataFrame builds a
  filter of the same shape on the worker that holds it (through the structure's
  ``add_many``, i.e. the data front door :mod:`bloomkit._engine.columns`: by position, nulls
  refused); the filters are merged by a tree reduction. The result *equals* (``==``, and
  ``to_bytes()`` byte for byte) the filter built in one process from the same keys, whatever
  the partitioning.
* :func:`distinct_count`: the HyperLogLog estimate that ``capacity=None`` sizes filters with.
* :func:`contains` and :func:`semi_join`: a filter sent once to every worker, the partitions
  of the left side filtered where they are (no row of ``left`` moves between workers).
* :func:`lookup_table` and :class:`ShardedLookupTable`: key -> value tables built shard by
  shard after a hash shuffle, equal to :meth:`ShardedLookupTable.build` in one process.

Filters travel between processes as their container bytes with the arrays out of band
(pickle protocol 5: :meth:`bloomkit._format.Persistable.__reduce_ex__`); a damaged one raises
FormatError in the process that receives it.
"""

from __future__ import annotations

from ._build import (
    KINDS,
    bloom_filter,
    capacity_for,
    contains,
    distinct_count,
    hll_estimate,
    semi_join,
)
from .sharded import MAX_SHARDS, ShardedLookupTable, lookup_table, routing_seed

__all__ = [
    "KINDS",
    "MAX_SHARDS",
    "ShardedLookupTable",
    "bloom_filter",
    "capacity_for",
    "contains",
    "distinct_count",
    "hll_estimate",
    "lookup_table",
    "routing_seed",
    "semi_join",
]
