"""Filters built partition by partition on Dask, distinct counts, membership and semi-joins
(see :mod:`bloomkit.dask`)."""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._engine.hashing import check_seed, hash_keys
from .._engine.lazy import require
from .._format import Persistable
from .._registry import load_class, with_capability
from .._validation import CAPACITY, FPR, Int, Options, check_float, check_path, check_reals
from ..errors import InvalidParameterError

__all__ = ["bloom_filter", "capacity_for", "contains", "distinct_count", "hll_estimate", "semi_join"]

KINDS = tuple(e.cli for e in with_capability("dask") if e.cli is not None)
"""The names ``kind=`` takes (the structure of every partition's filter): the registry's
structures of capability "dask", by their CLI names."""
SPLIT_EVERY = Int(2, 1 << 16)
_MERGEABLE = ("add_many", "copy", "union", "__len__")
HLL_PRECISION = Int(4, 18)
DEFAULT_PRECISION = 14
"""HyperLogLog registers 2^14: relative standard error 1.04 / 128 = 0.81%."""
CAPACITY_MARGIN_SE = 3.0
"""``capacity=None`` sizes for the estimate plus this many standard errors (2.4% at p = 14)."""


# ---------------------------------------------------------------------------------------------
# collections and their partitions


def dask_module(module: str = "dask") -> Any:
    """A dask module (``dask``, ``dask.dataframe``, ...), typed Any: imported on first use."""
    return require(module, "dask", "bloomkit.dask")


def _partitions(column: Any, name: str, owner: str) -> list[Any]:
    """One Delayed per partition (a pandas Series / DataFrame, a numpy block, a list), in
    order; a 2-D array is cut along its rows only (one row per item)."""
    dd, da, db = dask_module("dask.dataframe"), dask_module("dask.array"), dask_module("dask.bag")
    if isinstance(column, dd.Series | dd.DataFrame | dd.Index):
        return list(column.to_delayed())
    if isinstance(column, da.Array):
        if column.ndim == 1:
            return list(column.to_delayed().ravel())
        if column.ndim == 2:
            return list(column.rechunk({1: -1}).to_delayed()[:, 0])
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a 1-D dask Array of keys or a 2-D one of rows. "
            f"Got {column.ndim} dimensions instead.")
    if isinstance(column, db.Bag):
        return list(column.to_delayed())
    raise InvalidParameterError(
        f"The {name!r} parameter of {owner} must be a dask Series, DataFrame, Array or Bag. "
        f"Got {type(column).__name__} instead.")


def _client() -> Any:
    """The active distributed Client, or None (dask's local schedulers)."""
    try:
        return importlib.import_module("distributed").default_client()
    except (ImportError, ValueError):
        return None


def _placement(column: Any) -> list[str] | None:
    """The worker that holds each partition of ``column`` when it is persisted on a
    distributed cluster, else None."""
    n = getattr(column, "npartitions", 0)
    client = _client()
    if client is None or n < 1:
        return None
    keys = [f.key for f in importlib.import_module("distributed").futures_of(column)]
    if len(keys) != n or not all(isinstance(k, tuple) and len(k) == 2 and k[1] in range(n) for k in keys):
        return None
    who = client.sync(client.scheduler.who_has, keys=keys)
    places: dict[int, str] = {}
    for k in keys:
        held = who.get(k) or ()
        if not held:
            return None  # not in memory (yet)
        places[k[1]] = min(held)
    return [places[i] for i in range(n)]


def _chains(column: Any) -> list[list[int]] | None:
    """When ``column`` is persisted on a distributed cluster: its partition numbers grouped by
    the worker that holds them, cut into one chain per worker thread; else None.

    A chain adds its partitions one after the other into one filter on that worker, so a
    worker holds its partitions and about two filters per thread, instead of the leaf filters
    of a tree waiting for their merge (up to ``split_every`` of them, per level)."""
    places = _placement(column)
    if places is None or len(places) < 2:
        return None
    threads = _client().nthreads()
    by_worker: dict[str, list[int]] = {}
    for i, w in enumerate(places):
        by_worker.setdefault(w, []).append(i)
    out: list[list[int]] = []
    for w, idx in sorted(by_worker.items()):
        t = max(1, min(int(threads.get(w, 1)), len(idx)))
        out.extend(idx[j * len(idx) // t : (j + 1) * len(idx) // t] for j in range(t))
    return out


def _tree(items: list[Any], fn: Callable[..., Any], split_every: int, down_to: int = 1) -> Any:
    """Reduce Delayed ``items`` with ``fn(*group)`` in a tree of fan-in ``split_every``: the
    root, or (``down_to`` > 1) the list of at most ``down_to`` subtrees' results."""
    delayed = dask_module().delayed
    while len(items) > down_to:
        items = [delayed(fn, pure=True)(*items[i : i + split_every]) for i in range(0, len(items), split_every)]
    return items[0] if down_to == 1 else items


def _broadcast(obj: Any) -> Any:
    """``obj`` (a structure, or a Delayed computing one) as one dependency of a graph, held by
    every worker: under distributed a Future (scattered to every worker, or computed on the
    cluster and copied to every worker), so each worker has it once; else one key of the graph
    (never one copy per task)."""
    dask = dask_module()
    lazy = isinstance(obj, dask_module("dask.delayed").Delayed)
    client = _client()
    if client is None:
        return obj if lazy else dask.delayed(obj, name=f"bloomkit-{id(obj):x}-{os.urandom(8).hex()}")
    if not lazy:
        return client.scatter(obj, broadcast=True, hash=False)
    future = client.compute(obj)
    importlib.import_module("distributed").wait(future)
    client.replicate([future])
    return future


def _same(x: Any) -> Any:
    return x


def _map_where(frame: Any, fn: Callable[..., Any], shared: Any, *args: Any, meta: Any) -> Any:
    """``frame.map_partitions(fn, shared, *args)``, each task on the worker that holds its
    partition when ``frame`` is persisted on a distributed cluster.

    A dependency held by every worker makes every worker a candidate for a task, and the
    scheduler then moves partitions to balance load; so each worker gets its own key for the
    shared object (the same object, no copy) and a partition's task depends on its worker's
    key only."""
    places = _placement(frame)
    if places is None:
        return frame.map_partitions(fn, shared, *args, meta=meta)
    client, delayed = _client(), dask_module().delayed
    here = {w: client.submit(_same, shared, workers=[w], pure=False) for w in set(places)}
    tasks = [delayed(fn, pure=True)(part, here[w], *args) for part, w in zip(frame.to_delayed(), places, strict=True)]
    return dask_module("dask.dataframe").from_delayed(tasks, meta=meta, divisions=frame.divisions, verify_meta=False)


def is_empty(part: Any) -> bool:
    """True for a partition without rows (skipped: an empty pandas string column reaches the
    front door as an arrow array of type null, which it refuses as a key type)."""
    try:
        return len(part) == 0
    except TypeError:  # an iterator (a Bag partition): the front door reads it
        return False


def in_partition(e: InvalidParameterError, index: int) -> InvalidParameterError:
    return InvalidParameterError(f"{e} (in partition {index}; positions count from its start)")


# ---------------------------------------------------------------------------------------------
# distinct keys: HyperLogLog (Flajolet et al. 2007) over the keys' 64-bit hashes


def _bit_length(w: np.ndarray) -> np.ndarray:
    """Exact bit length of every uint64 (via 32-bit halves: floats hold them exactly)."""
    hi = (w >> np.uint64(32)).astype(np.float64)
    lo = (w & np.uint64(0xFFFFFFFF)).astype(np.float64)
    return np.where(hi > 0, 32 + np.frexp(hi)[1], np.frexp(lo)[1])


def _hll_part(part: Any, seed: int, p: int, index: int, owner: str) -> np.ndarray:
    """HyperLogLog registers (2^p uint8) of one partition's keys."""
    reg = np.zeros(1 << p, dtype=np.uint8)
    if is_empty(part):
        return reg
    try:
        h = hash_keys(part, seed, name="column", owner=owner)[0]
    except InvalidParameterError as e:
        raise in_partition(e, index) from None
    if len(h):
        idx = (h >> np.uint64(64 - p)).astype(np.intp)
        w = (h << np.uint64(p)) | np.uint64(1 << (p - 1))  # the sentinel caps the rank at 65 - p
        rank = (65 - _bit_length(w)).astype(np.uint8)
        np.maximum.at(reg, idx, rank)
    return reg


def _hll_merge(*regs: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.maximum.reduce(regs)
    return out


def hll_estimate(registers: np.ndarray) -> float:
    """Distinct count from HyperLogLog registers: ``alpha m^2 / sum 2^-M_j``, linear counting
    ``m ln(m / V)`` below 2.5 m while V registers are zero (64-bit hashes: no large-range
    correction). Relative standard error 1.04 / sqrt(m).

    >>> hll_estimate(np.zeros(16, dtype=np.uint8))
    0.0
    """
    regs = check_reals(registers, "registers", "bloomkit.dask.hll_estimate", 0, 64)
    if regs.ndim != 1 or len(regs) < 16 or len(regs) & (len(regs) - 1):
        raise InvalidParameterError(
            "The 'registers' parameter of bloomkit.dask.hll_estimate must be a 1-D array of 2^p registers "
            f"(p >= 4). Got shape {regs.shape} instead.")
    m = len(regs)
    alpha = 0.7213 / (1 + 1.079 / m)
    est = alpha * m * m / float(np.sum(np.ldexp(1.0, -regs.astype(np.int64))))
    zeros = int(np.count_nonzero(regs == 0))
    if est <= 2.5 * m and zeros:
        est = m * math.log(m / zeros)
    return float(est)


def distinct_count(column: Any, *, seed: int = 0, precision: int = DEFAULT_PRECISION,
                   split_every: int = 8) -> float:
    """HyperLogLog estimate of the number of distinct keys of a dask collection.

    Every partition hashes its keys (the library's 64-bit hash, so ``1`` and ``"1"`` are
    different keys) into 2^``precision`` one-byte registers; the registers are merged by a
    maximum in a tree, so the estimate is the same for any partitioning of the same keys.

    Parameters
    ----------
    column : dask Series, Array, Bag or Index
        The keys.
    seed : int
        Hash seed.
    precision : int in [4, 18]
        p: 2^p registers, relative standard error 1.04 / 2^(p/2) (0.81% at 14).
    split_every : int >= 2
        Fan-in of the reduction tree.

    Returns
    -------
    float

    Complexity: one pass over the data (one hash per key); 2^p bytes per partition moved.
    """
    owner = "bloomkit.dask.distinct_count"
    p = HLL_PRECISION(precision, "precision", owner)
    sd = check_seed(seed, owner)
    every = SPLIT_EVERY(split_every, "split_every", owner)
    delayed = dask_module().delayed
    leaves = [delayed(_hll_part, pure=True)(part, sd, p, i, owner)
              for i, part in enumerate(_partitions(column, "column", owner))]
    return hll_estimate(_tree(leaves, _hll_merge, every).compute())


def capacity_for(estimate: float, precision: int = DEFAULT_PRECISION) -> int:
    """The capacity ``capacity=None`` chooses: the estimate plus
    :data:`CAPACITY_MARGIN_SE` standard errors, rounded up (at least 1).

    >>> capacity_for(1000.0)
    1025
    """
    owner = "bloomkit.dask.capacity_for"
    est = check_float(estimate, "estimate", owner, lo=0)
    se = 1.04 / math.sqrt(1 << HLL_PRECISION(precision, "precision", owner))
    return max(1, math.ceil(est * (1 + CAPACITY_MARGIN_SE * se)))


# ---------------------------------------------------------------------------------------------
# filters built partition by partition


class _Spec(NamedTuple):
    """What every partition's filter is: a kind by name and its sizing, or a template."""

    kind: str
    capacity: int
    fpr: float
    seed: int
    attributes: tuple[str, ...] | None = None


def _kind_classes() -> dict[str, Any]:
    return {e.cli: load_class(e) for e in with_capability("dask") if e.cli is not None}


def _new(spec: Any) -> Any:
    """An empty filter of the spec (or a copy of an empty template)."""
    if not isinstance(spec, _Spec):
        return spec.copy()
    cls = _kind_classes()[spec.kind]
    if spec.kind == "pbf":
        assert spec.attributes is not None
        return cls.for_requirements(len(spec.attributes), spec.capacity, spec.fpr, seed=spec.seed,
                                    attributes=list(spec.attributes))
    return cls.for_requirements(spec.capacity, spec.fpr, seed=spec.seed)


def _add(f: Any, part: Any, index: int) -> Any:
    if is_empty(part):
        return f
    try:
        f.add_many(part)
    except InvalidParameterError as e:
        raise in_partition(e, index) from None
    return f


def _leaf(spec: Any, part: Any, index: int) -> Any:
    """The filter of one partition (runs on the worker that holds it)."""
    return _add(_new(spec), part, index)


def _union(*filters: Any) -> Any:
    """The union of the filters (a new object: the inputs are other tasks' results)."""
    out = filters[0].copy()
    for f in filters[1:]:
        out |= f
    return out


def _chain_step(f: Any, part: Any, index: int) -> Any:
    return _add(f.copy(), part, index)


def _row_count(parts: list[Any], split_every: int) -> int:
    delayed = dask_module().delayed
    return int(_tree([delayed(len, pure=True)(p) for p in parts], _sum, split_every).compute())


def _sum(*xs: int) -> int:
    return sum(xs)


def _filter_graph(column: Any, capacity: Any, fpr: Any, seed: Any, kind: Any, like: Any, split_every: Any,
                  owner: str, parts_for: Callable[[_Spec], None] | None = None) -> Any:
    """The Delayed filter of ``column`` (validating every argument first; ``capacity=None``
    computes the distinct count, or the row count for "pbf", before it returns).
    ``parts_for``: called with the spec once it is known; the graph then stops short of the
    root, at a list of at most ``split_every`` partial filters (their union is the filter)."""
    every = SPLIT_EVERY(split_every, "split_every", owner)
    parts = _partitions(column, "column", owner)
    delayed = dask_module().delayed
    spec: Any
    cls: Any
    if like is not None:
        if not isinstance(like, Persistable) or not all(callable(getattr(like, a, None)) for a in _MERGEABLE):
            raise InvalidParameterError(
                f"The 'like' parameter of {owner} must be an empty bloomkit structure with add_many and "
                f"union. Got {type(like).__name__} instead.")
        if capacity is not None or kind != "bloom" or seed != 0 or fpr != 0.01:
            raise InvalidParameterError(
                f"{owner} takes its parameters from 'like': leave capacity, fpr, seed and kind unset. "
                f"Got capacity={capacity!r}, fpr={fpr!r}, seed={seed!r}, kind={kind!r} instead.")
        if len(like) != 0:  # type: ignore[arg-type]
            raise InvalidParameterError(
                f"The 'like' parameter of {owner} must be empty (every partition adds into a copy of it). "
                f"Got a {type(like).__name__} of {len(like)} keys instead.")  # type: ignore[arg-type]
        cls = type(like)
        spec, in_order = _broadcast(like), cls is _kind_classes()["scalable"]
    else:
        name = Options(*KINDS)(kind, "kind", owner)
        rate = FPR(fpr, "fpr", owner)
        sd = check_seed(seed, owner)
        attributes = None
        if name == "pbf":
            if not isinstance(column, dask_module("dask.dataframe").DataFrame):
                raise InvalidParameterError(
                    f"The 'column' parameter of {owner} must be a dask DataFrame (one column per attribute) "
                    f"for kind='pbf'. Got {type(column).__name__} instead.")
            attributes = tuple(str(c) for c in column.columns)
        if capacity is None:
            cap = _row_count(parts, every) if name == "pbf" else \
                capacity_for(distinct_count(column, seed=sd, split_every=every))
        else:
            cap = CAPACITY(capacity, "capacity", owner)
        spec, in_order = _Spec(name, cap, rate, sd, attributes), name == "scalable"
        cls = _kind_classes()[name]
    top = 1
    if parts_for is not None:
        parts_for(spec)
        top = every
    if in_order:  # a key enters a slice only if the slices before it do not report it: in order
        f = delayed(_new, pure=True)(spec)
        for i, part in enumerate(parts):
            f = delayed(_chain_step, pure=True)(f, part, i)
        return f
    # a PBF union keeps counter maxima: sums within chains and maxima across them would depend
    # on where the partitions are, so PBFs always merge partition filters in the tree
    chains = None if cls is _kind_classes()["pbf"] else _chains(column)
    if chains is None:  # every partition's filter, merged in a tree
        return _tree([delayed(_leaf, pure=True)(spec, part, i) for i, part in enumerate(parts)], _union, every, top)
    ends = []
    for run in chains:  # the partitions of one worker thread, added one after the other
        f = delayed(_leaf, pure=True)(spec, parts[run[0]], run[0])
        for i in run[1:]:
            f = delayed(_chain_step, pure=True)(f, parts[i], i)
        ends.append(f)
    return _tree(ends, _union, every, top)


def bloom_filter(column: Any, capacity: int | None = None, fpr: float = 0.01, *, seed: int = 0,
                 kind: str = "bloom", like: Any = None, split_every: int = 8,
                 output: str | os.PathLike[str] | None = None) -> Any:
    """Build a filter of the keys of a dask collection, partition by partition.

    Every partition builds a filter of the same shape on the worker that holds it (its keys
    never move); the filters are merged by a tree reduction (union: OR of bits for Bloom,
    split-block and foldable filters; saturating counter sums for counting filters; the
    document's union for PBF and MLBF). Bloom, split-block, foldable and counting filters come
    out *equal* (``==``, ``to_bytes()`` byte for byte) to the filter built in one process from
    the same keys, for any partitioning (``kind.for_requirements(capacity, fpr, seed=seed)``
    then ``add_many`` of every key).

    Parameters
    ----------
    column : dask Series, Index, Array (1-D keys, or 2-D rows for a similarity template), Bag,
        or DataFrame (kind="pbf", or a PBF template)
        The keys: ``dd.read_parquet(path)["id"]`` works as it is.
    capacity : int, optional
        n, the keys the filter is sized for. ``None`` estimates the distinct keys first with
        :func:`distinct_count` (HyperLogLog, 2^14 registers: one more pass over the data, one
        hash per key, 16 KiB per partition moved) and adds three standard errors
        (:func:`capacity_for`: +2.4%); for kind="pbf" it counts the rows (items are stored
        with multiplicity).
    fpr : float in (0, 1)
        Target false positive rate at ``capacity``.
    seed : int
        Hash seed.
    kind : {"bloom", "counting", "foldable", "scalable", "split-block", "pbf"}
        The structure: BloomFilter, CountingBloomFilter, FoldableBloomFilter,
        ScalableBloomFilter, SplitBlockBloomFilter, or ParallelBloomFilter (attributes = the
        DataFrame's columns, read by name). A scalable filter is sequential by definition (a
        key enters a slice only if the slices before it do not report it), so its partitions
        are added in order, one task after the other (the filter travels, the keys do not):
        equal to the one-process build, but not parallel.
    like : bloomkit structure, optional
        An empty structure to copy on every partition instead of ``kind`` (any parameters:
        e.g. ``MLBF(..., domain=(lo, hi))`` over a 2-D dask Array, or a BloomFilter of a given
        ``num_bits``); it is sent once to each worker. Leave capacity, fpr, seed and kind unset.
        An MLBF needs ``domain=`` or ``offset=`` (filters fitted on different partitions do not
        combine: IncompatibleFiltersError).
    split_every : int >= 2
        Fan-in of the reduction tree (filters merged per task).
    output : path, optional
        Write the merged filter into this file instead of returning it in memory (kinds
        "bloom", "counting", "split-block"): the file is made with ``create`` (mapped, the
        filter may be larger than the client's memory), the last level of the tree (at most
        ``split_every`` partial filters) is OR-ed into it one at a time as each arrives, and
        the sealed file is renamed onto ``output`` (never a partial file under that name). An
        existing ``output`` is replaced.

    Returns
    -------
    The filter, on the client; with ``output``, the filter mapped read-only from that file
    (``bloomkit.open(output)``: close it when done).

    Notes
    -----
    A ParallelBloomFilter merged by union (the document's conservative union, Section 5.2)
    answers exactly as the one-process filter (non-zero counters at the same places, the same
    verification values) but keeps counter maxima, not sums: its ``len()`` and counts are
    lower and it refuses ``remove``.

    Complexity: O(n k) hashing and probes spread over the workers, plus O(P m) to allocate
    and merge P partitions' filters of m bits (log_split_every(P) levels); a scalable filter
    is built in P sequential steps.
    """
    owner = "bloomkit.dask.bloom_filter"
    if output is None:
        return _filter_graph(column, capacity, fpr, seed, kind, like, split_every, owner).compute()
    return _into_file(column, capacity, fpr, seed, kind, like, split_every, output, owner)


_INTO_FILE = tuple(str(e.cli) for e in with_capability("mapped") if "dask" in e.capabilities)


def _into_file(column: Any, capacity: Any, fpr: Any, seed: Any, kind: Any, like: Any, split_every: Any,
               output: Any, owner: str) -> Any:
    """:func:`bloom_filter` with ``output``: the partial filters OR-ed into a mapped file."""
    from .._mapped import create_beside
    from .._mapped import open as open_mapped

    path = check_path(output, "output", owner)
    if like is not None or kind not in _INTO_FILE:
        raise InvalidParameterError(
            f"The 'output' parameter of {owner} writes kinds {', '.join(map(repr, _INTO_FILE))} into a file "
            f"(without 'like'). Got kind={kind!r}{' with like' if like is not None else ''} instead.")
    if os.path.isdir(path):
        raise InvalidParameterError(f"The 'output' parameter of {owner} must name a file. Got the directory {path!r} instead.")
    specs: list[_Spec] = []
    partials = _filter_graph(column, capacity, fpr, seed, kind, None, split_every, owner, parts_for=specs.append)
    (spec,) = specs
    with create_beside(_kind_classes()[spec.kind], path, spec.capacity, spec.fpr, seed=spec.seed) as f:
        if _client() is not None:
            as_completed = importlib.import_module("distributed").as_completed
            for future in as_completed(_client().compute(partials)):
                f |= future.result()
                future.release()
        else:
            for part in partials:  # one partial filter in the client's memory at a time
                f |= part.compute()
    return open_mapped(path)


# ---------------------------------------------------------------------------------------------
# membership on partitions, semi-joins


def _contains_series(part: Any, f: Any) -> Any:
    import pandas as pd

    hits = np.zeros(0, dtype=bool) if is_empty(part) else f.contains_many(part)
    return pd.Series(hits, index=part.index, name=part.name)


def _contains_block(block: np.ndarray, f: Any) -> np.ndarray:
    return np.zeros(0, dtype=bool) if is_empty(block) else np.asarray(f.contains_many(block), dtype=bool)


def _contains_list(part: Any, f: Any) -> list[bool]:
    keys = list(part)
    return [bool(x) for x in f.contains_many(keys)] if keys else []


def contains(column: Any, filter: Any) -> Any:
    """Membership of every key of a dask collection in ``filter``, partition by partition.

    The filter is sent once to each worker (scattered under distributed); nothing moves but
    the answers. Returns a lazy dask collection of bools shaped like ``column``: a Series
    with the same index and divisions, a 1-D Array with the same chunks, or a Bag.

    Complexity: O(n k) probes over the workers (``filter.contains_many``).
    """
    owner = "bloomkit.dask.contains"
    if not callable(getattr(filter, "contains_many", None)):
        raise InvalidParameterError(
            f"The 'filter' parameter of {owner} must be a bloomkit filter with contains_many. "
            f"Got {type(filter).__name__} instead.")
    import pandas as pd

    dd, da, db = dask_module("dask.dataframe"), dask_module("dask.array"), dask_module("dask.bag")
    if isinstance(column, dd.Series | dd.Index):
        shared = _broadcast(filter)
        meta = pd.Series(dtype=bool, name=column.name)
        if isinstance(column, dd.Series):
            return _map_where(column, _contains_series, shared, meta=meta)
        return column.map_partitions(_contains_series, shared, meta=meta)
    if isinstance(column, da.Array) and column.ndim == 1:
        return column.map_blocks(_contains_block, _broadcast(filter), dtype=bool, meta=np.array((), dtype=bool))
    if isinstance(column, db.Bag):
        return column.map_partitions(_contains_list, _broadcast(filter))
    raise InvalidParameterError(
        f"The 'column' parameter of {owner} must be a dask Series, Index, 1-D Array or Bag. "
        f"Got {type(column).__name__} instead.")


def _semi_part(part: Any, f: Any, on: str) -> Any:
    """The rows of one partition whose key the filter reports (null keys never match)."""
    col = part[on]
    present = col.notna().to_numpy()
    keep = np.zeros(len(part), dtype=bool)
    if len(part) and present.all():
        keep = np.asarray(f.contains_many(col), dtype=bool)
    elif present.any():
        keep[present] = f.contains_many(col[present])
    return part.iloc[np.flatnonzero(keep)]


def semi_join(left: Any, right: Any, on: str, fpr: float = 0.01, *, exact: bool = False, seed: int = 0,
              split_every: int = 8) -> Any:
    """The rows of ``left`` whose ``on`` key appears in ``right`` (a Bloom semi-join).

    A Bloom filter of ``right[on]`` is built now as in :func:`bloom_filter` (capacity from
    :func:`distinct_count`), on the workers, and copied once to every worker; each partition
    of ``left`` then keeps the rows the filter reports, on the worker that holds it (a
    persisted ``left``: each task depends on its partition and on its own worker's key for
    the filter, so the scheduler has no other place to run it; a ``left`` read as it is
    filtered: read and filtered in one task). No row of
    ``left`` moves between workers (unless dask's work stealing moves a task to an idle
    worker: ``distributed.scheduler.work-stealing: False`` forbids it), and a fraction ``fpr``
    of the non-matching rows get through. With ``exact=True`` those are removed by dask's own merge of the pruned rows
    with the distinct keys of ``right`` (a shuffle of the pruned rows only).

    Null keys never match (SQL semantics): rows of ``left`` with a null key are dropped and the
    nulls of ``right[on]`` are ignored.

    Parameters
    ----------
    left, right : dask DataFrame
        Both have a column ``on``.
    on : str
        The join column.
    fpr : float in (0, 1)
        False positive rate of the filter.
    exact : bool
        Finish with ``pruned.merge(right[[on]].drop_duplicates(), on=on)`` (dask's merge: the
        result's index is dask's).
    seed, split_every
        As in :func:`bloom_filter`.

    Returns
    -------
    dask DataFrame (lazy), with the columns of ``left``; partition for partition the rows of
    ``left`` that pass (the index of ``left`` kept) when ``exact`` is False.

    Complexity: building the filter (one HLL pass and one build pass over ``right[on]``),
    O(|left| k) probes where ``left`` lies; with ``exact``, a merge of the pruned rows.
    """
    owner = "bloomkit.dask.semi_join"
    dd = dask_module("dask.dataframe")
    for name, frame in (("left", left), ("right", right)):
        if not isinstance(frame, dd.DataFrame):
            raise InvalidParameterError(
                f"The {name!r} parameter of {owner} must be a dask DataFrame. Got {type(frame).__name__} instead.")
        if on not in frame.columns:
            raise InvalidParameterError(
                f"The 'on' parameter of {owner} must name a column of {name}. Got {on!r} instead "
                f"(columns: {', '.join(map(str, frame.columns))}).")
    if not isinstance(exact, bool):
        raise InvalidParameterError(f"The 'exact' parameter of {owner} must be a bool. Got {exact!r} instead.")
    keys = right[on].dropna()
    f = _broadcast(_filter_graph(keys, None, fpr, seed, "bloom", None, split_every, owner))
    pruned = _map_where(left, _semi_part, f, on, meta=dask_module("dask.dataframe.utils").make_meta(left))
    if exact:
        return pruned.merge(right[[on]].dropna().drop_duplicates(), on=on, how="inner")
    return pruned

