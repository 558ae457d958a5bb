"""Key -> value tables in shards: :class:`ShardedLookupTable` and its build on Dask.

A key lives in shard ``XXH64(key, s_r) mod S`` with the routing seed ``s_r =
splitmix64(seed + 0x5349 * golden)`` (:func:`bloomkit._engine.hashing.probe`): the library's key hash
under a seed of its own, so the bits that pick a shard are independent of those the shard's
table uses. Every shard is a :class:`~bloomkit.lookup.GeometricFilter` or
:class:`~bloomkit.lookup.BloomierFilter` built from its keys in input order, so the table
built on a cluster (:func:`lookup_table`, after a hash shuffle) is byte for byte the table
:meth:`ShardedLookupTable.build` makes in one process with the same number of shards.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from .._engine.columns import as_keys, batch_len, take
from .._engine.hashing import check_seed, hash64, hash_keys, key_type_mask, key_type_names, probe
from .._format import ArraySpec, Persistable, loads, read_file, registered_structures
from .._registry import load_class, with_capability
from .._validation import FPR, Int, InvariantError, Options, check_path, param_error
from ..errors import FormatError, InvalidParameterError
from ..lookup._mapping import pairs_of
from ._build import dask_module, in_partition, is_empty

__all__ = ["MAX_SHARDS", "ShardedLookupTable", "lookup_table", "routing_seed"]

MAX_SHARDS = 1 << 16
"""Most shards a table may have."""
NUM_SHARDS = Int(1, MAX_SHARDS)
KINDS = {e.cli: e.tag for e in with_capability("shard") if e.cli is not None}
"""``kind=`` name -> structure tag of the shards (the registry's capability "shard")."""
SHARD_STRUCTURE = Options(*KINDS.values())
ON_DUPLICATE = Options("error", "last", "sum", "max", "min")
_ROUTE = 0x5349  # the probe index that derives the routing seed
_POS_BITS = 40  # pos = partition << 40 | row: 2^23 partitions of up to 2^40 rows
_FILE = re.compile(r"shard-(\d{5})-of-(\d{5})\.bkf")


def routing_seed(seed: int) -> int:
    """s_r, the seed of the hash that picks a key's shard. Complexity: O(1)."""
    return probe(check_seed(seed, "bloomkit.dask.routing_seed"), _ROUTE)


def _classes() -> dict[str, Any]:
    return {e.tag: load_class(e) for e in with_capability("shard")}


def _shard_ids(keys: Any, seed: int, num_shards: int, owner: str) -> np.ndarray:
    h = hash_keys(keys, routing_seed(seed), name="keys", owner=owner)[0]
    out: np.ndarray = (h % np.uint64(num_shards)).astype(np.int64)
    return out


def _build_one(cls: Any, keys: Any, values: Any, shard: int, num_shards: int, value_bits: int, fpr: float,
               seed: int, on_duplicate: str, options: dict[str, Any], owner: str) -> Any:
    if is_empty(keys):
        raise InvalidParameterError(
            f"The 'num_shards' parameter of {owner} leaves shard {shard} of {num_shards} without keys: "
            "use fewer shards (every shard holds a table built from its keys).")
    return cls.build(keys, values, value_bits=value_bits, fpr=fpr, seed=seed, on_duplicate=on_duplicate, **options)


class ShardedLookupTable(Persistable):
    """A key -> value lookup table cut into shards by a hash of the key.

    Parameters
    ----------
    shards : sequence of GeometricFilter or BloomierFilter
        Shard i answers the keys with ``shard_of(key) == i``; all of one class, one seed (the
        table's), one value width and one kind of values (integers or str labels).
    seed : int, keyword-only
        The seed of every shard; the routing seed is derived from it (:func:`routing_seed`).

    Notes
    -----
    The LookupTable protocol (:class:`bloomkit._protocols.LookupTable`): ``get`` /
    ``get_many`` / ``[]`` / ``in`` / ``len`` (exact) / ``set`` / ``update`` (dict meaning),
    ``size_in_bits`` (the sum of the shards'), ``predicted_fpr()`` (their mean: an absent key
    goes to each shard with probability 1/S), ``info()``, and the container format: ``save``
    writes one file holding every shard's container, :meth:`save_shards` a directory of shard
    files; ``load`` reads either. Build one with :meth:`build` (one process) or
    :func:`bloomkit.dask.lookup_table` (a cluster).

    Thread safety: as safe as its shards (each takes its own lock: GeometricFilter's ``set``
    and ``update`` may run in any number of threads, BloomierFilter is read-only); the table
    itself only routes. ``update`` stores each shard's pairs under that shard's lock, one
    shard after the other.

    Examples
    --------
    >>> t = ShardedLookupTable.build(["a", "b", "c", "d"], [1, 2, 3, 4], num_shards=2, value_bits=8, fpr=2**-8)
    >>> t.get("b"), t.get_many(["c", "a"]).tolist(), len(t)
    (2, [3, 1], 4)
    """

    _PARAMS: ClassVar[Any] = {"num_shards": NUM_SHARDS, "shard_structure": SHARD_STRUCTURE}
    _ARRAYS: ClassVar[Any] = {"offsets": ArraySpec("<i8", lo=0), "shards": ArraySpec("|u1")}
    exact_len: ClassVar[bool] = True

    def __init__(self, shards: Sequence[Any], *, seed: int = 0) -> None:
        owner = type(self).__name__
        self.seed = check_seed(seed, owner)
        tables = list(shards) if isinstance(shards, Sequence) and not isinstance(shards, str | bytes) else None
        if tables is None:
            raise param_error("shards", owner, "a sequence of GeometricFilter or BloomierFilter tables", shards)
        NUM_SHARDS(len(tables), "num_shards", owner)
        problem = self._inconsistency(tables, self.seed)
        if problem:
            raise InvalidParameterError(f"The 'shards' parameter of {owner} {problem}.")
        self._shards = tuple(tables)

    @staticmethod
    def _inconsistency(tables: list[Any], seed: int) -> str | None:
        classes = _classes()
        first = tables[0]
        if type(first) not in classes.values():
            return f"must hold GeometricFilter or BloomierFilter tables. Got {type(first).__name__} instead"
        for i, t in enumerate(tables):
            if type(t) is not type(first):
                return f"must hold tables of one class. Got {type(first).__name__} and {type(t).__name__} (shard {i})"
            if t.seed != seed:
                return f"must hold tables of the table's seed {seed}. Got seed {t.seed} (shard {i})"
            if t.value_bits != first.value_bits or (t.codec is None) != (first.codec is None):
                return (f"must hold tables of one value width and one kind of values. Got shard {i} with "
                        f"V = {t.value_bits} and {'int' if t.codec is None else 'str'} values, shard 0 with "
                        f"V = {first.value_bits} and {'int' if first.codec is None else 'str'} values")
        return None

    @classmethod
    def build(cls, keys: Any, values: Any = None, *, num_shards: int, value_bits: int = 16, fpr: float = 2.0**-16,
              kind: str = "geometric", seed: int = 0, on_duplicate: str = "error", **options: Any) -> Self:
        """Build a table of ``num_shards`` shards in this process: the keys of each shard, in
        input order, go to ``GeometricFilter.build`` (or ``BloomierFilter.build``) with the
        other arguments; duplicates are handled by ``on_duplicate`` as there (a key's copies
        all reach one shard). :func:`bloomkit.dask.lookup_table` builds the same bytes on a
        cluster.

        Parameters
        ----------
        keys : mapping, or a column (list, numpy, pyarrow, pandas, polars), by position
        values : column of int or str, optional (the mapping's values when ``keys`` is one)
        num_shards : int in [1, 65536]
        value_bits, fpr, seed, on_duplicate, **options
            As for the shards' ``build``.
        kind : {"geometric", "bloomier"}

        Complexity: one hash per key to route it, then the shards' builds.
        """
        owner = f"{cls.__name__}.build"
        s = NUM_SHARDS(num_shards, "num_shards", owner)
        shard_cls = _classes()[KINDS[Options(*KINDS)(kind, "kind", owner)]]
        sd = check_seed(seed, owner)
        if values is None and isinstance(keys, Mapping):
            keys, values = list(keys.keys()), list(keys.values())
        if values is None:
            raise param_error("values", owner, "a column of values (or keys a mapping)", values)
        ks, vs = as_keys(keys, "keys", owner), as_keys(values, "values", owner)
        if batch_len(ks) != batch_len(vs):
            raise InvalidParameterError(
                f"The 'values' parameter of {owner} must have as many entries as 'keys' ({batch_len(ks)}). "
                f"Got {batch_len(vs)} instead.")
        ids = _shard_ids(ks, sd, s, owner)
        order = np.argsort(ids, kind="stable")
        bounds = np.searchsorted(ids[order], np.arange(s + 1))
        shards = []
        for i in range(s):
            idx = order[bounds[i] : bounds[i + 1]]
            shards.append(_build_one(shard_cls, take(ks, idx), take(vs, idx), i, s, value_bits, fpr, sd,
                                     on_duplicate, options, owner))
        return cls(shards, seed=sd)

    # -- routing --------------------------------------------------------------------------------
    @property
    def num_shards(self) -> int:
        """S, the number of shards."""
        return len(self._shards)

    @property
    def shards(self) -> tuple[Any, ...]:
        """The shard tables (shared, not copies)."""
        return self._shards

    @property
    def shard_structure(self) -> str:
        """The structure tag of the shards ("lookup.GeometricFilter" or "lookup.BloomierFilter")."""
        return _tag_of(self._shards[0])

    @property
    def value_bits(self) -> int:
        """V, the width of the values."""
        return int(self._shards[0].value_bits)

    def shard_of(self, key: Any) -> int:
        """The shard that holds ``key``. Complexity: O(1)."""
        return hash64(key, routing_seed(self.seed)) % len(self._shards)

    def shard_ids(self, keys: Any) -> np.ndarray:
        """The shard of every key of a batch (int64), by position. Complexity: O(n)."""
        return _shard_ids(keys, self.seed, len(self._shards), f"{type(self).__name__}.shard_ids")

    # -- the LookupTable protocol -------------------------------------------------------------
    def get(self, key: Any, default: Any = None) -> Any:
        """The value of ``key`` (``default`` when found absent: 0, or None for str labels).

        Complexity: one shard's ``get``."""
        return self._shards[self.shard_of(key)].get(key, default)

    def get_many(self, keys: Any, default: Any = None) -> np.ndarray:
        """The values of a batch of keys, by position (as the shards' ``get_many``: int64,
        uint64 when V = 64, or objects for str labels). Complexity: O(n) routing plus the
        shards' lookups."""
        owner = f"{type(self).__name__}.get_many"
        ks = as_keys(keys, "keys", owner)
        s = len(self._shards)
        ids = _shard_ids(ks, self.seed, s, owner)
        order = np.argsort(ids, kind="stable")
        bounds = np.searchsorted(ids[order], np.arange(s + 1))
        out: np.ndarray | None = None
        for i in np.flatnonzero(np.diff(bounds)):
            idx = order[bounds[i] : bounds[i + 1]]
            vals = self._shards[i].get_many(take(ks, idx), default)
            if out is None:
                out = np.empty(len(ids), dtype=vals.dtype)
            out[idx] = vals
        if out is None:  # no keys
            out = self._shards[0].get_many(take(ks, order), default)
        return out

    def __getitem__(self, key: Any) -> Any:
        """Value of ``key``; KeyError when found absent. Complexity: as :meth:`get`."""
        return self._shards[self.shard_of(key)][key]

    def __contains__(self, key: Any) -> bool:
        """True when ``key`` gets a value (false positives at ``predicted_fpr()``)."""
        return key in self._shards[self.shard_of(key)]

    def __len__(self) -> int:
        """Number of keys stored (exact). Complexity: O(S)."""
        return sum(len(t) for t in self._shards)

    def set(self, key: Any, value: Any) -> None:
        """Store ``value`` for ``key`` in its shard (overwrite or insert; a Bloomier shard
        raises UpdateNotSupportedError). Complexity: as the shard's ``set``."""
        self._shards[self.shard_of(key)].set(key, value)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Store many (key, value) pairs (a mapping, an iterable of pairs, keyword arguments),
        each shard's pairs in one call of its ``update``. Complexity: O(number of pairs)."""
        pairs = pairs_of(other, f"{type(self).__name__}.update") + list(kwargs.items())
        groups: dict[int, list[tuple[Any, Any]]] = {}
        for k, v in pairs:
            groups.setdefault(self.shard_of(k), []).append((k, v))
        for i in sorted(groups):
            self._shards[i].update(groups[i])

    @property
    def key_types(self) -> tuple[str, ...]:
        """The kinds of keys stored, over all shards."""
        mask = 0
        for t in self._shards:
            mask |= key_type_mask(t.key_types)
        return tuple(key_type_names(mask))

    @property
    def size_in_bits(self) -> int:
        """Bits of all shards (their ``size_in_bits``). Complexity: O(S)."""
        return sum(int(t.size_in_bits) for t in self._shards)

    def bits_per_key(self) -> float:
        """``size_in_bits`` / number of keys. Complexity: O(S)."""
        return self.size_in_bits / max(1, len(self))

    def predicted_fpr(self) -> float:
        """Rate of values for absent keys: the mean of the shards' ``predicted_fpr()`` (an
        absent key reaches each shard with probability 1/S). Complexity: the shards'."""
        return float(np.mean([t.predicted_fpr() for t in self._shards]))

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, counts and the predicted rate (what ``bloomkit info`` prints).

        Complexity: the shards' ``info()``."""
        infos = [t.info() for t in self._shards]
        count = sum(int(i["count"]) for i in infos)
        size = sum(int(i["size_in_bits"]) for i in infos)
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "seed": self.seed,
            "num_shards": len(self._shards), "shard_structure": infos[0]["structure"],
            "value_bits": self.value_bits, "fpr": infos[0]["fpr"], "values": infos[0]["values"],
            "count": count, "count_is_exact": True, "key_types": list(self.key_types),
            "size_in_bits": size, "bits_per_key": size / max(1, count),
            "predicted_fpr": float(np.mean([i["predicted_fpr"] for i in infos])),
            "shard_counts": [int(i["count"]) for i in infos],
        }

    def copy(self) -> Self:
        """An independent copy (every shard copied). Complexity: O(size)."""
        return type(self)([t.copy() for t in self._shards], seed=self.seed)

    def __repr__(self) -> str:
        return (f"ShardedLookupTable(num_shards={len(self._shards)}, shards={_tag_of(self._shards[0])}, "
                f"seed={self.seed}) with {len(self)} keys")

    def _check(self) -> None:
        """Assert the invariants (shard classes, seeds, widths), and each shard's."""
        if not (1 <= len(self._shards) <= MAX_SHARDS):
            raise InvariantError("1 <= len(self._shards) <= MAX_SHARDS")
        if self._inconsistency(list(self._shards), self.seed) is not None:
            raise InvariantError("self._inconsistency(list(self._shards), self.seed) is None")
        for t in self._shards:
            t._check()

    # -- files ----------------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        blobs = [t.to_bytes() for t in self._shards]
        offsets = np.zeros(len(blobs) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in blobs], out=offsets[1:])
        params = {"num_shards": len(blobs), "shard_structure": _tag_of(self._shards[0])}
        return params, {"offsets": offsets, "shards": np.frombuffer(b"".join(blobs), dtype=np.uint8)}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Self:
        s, tag = params["num_shards"], params["shard_structure"]
        off, blob = arrays["offsets"], arrays["shards"]
        if off.shape != (s + 1,) or int(off[0]) != 0 or int(off[-1]) != blob.shape[0]:
            raise FormatError(f"{cls.__name__}: 'offsets' must be {s + 1} offsets from 0 to the {blob.shape[0]} "
                              f"bytes of 'shards'; got shape {off.shape}")
        if s > 1 and bool(np.any(off[1:] <= off[:-1])):
            raise FormatError(f"{cls.__name__}: 'offsets' must increase (every shard has bytes)")
        want = registered_structures()[tag]
        raw = blob.tobytes()
        shards = []
        for i in range(s):
            t = loads(raw[int(off[i]) : int(off[i + 1])])  # a damaged shard: FormatError
            if type(t) is not want:
                raise FormatError(f"{cls.__name__}: shard {i} holds a {type(t).__name__}, not a {tag}")
            shards.append(t)
        problem = cls._inconsistency(shards, seed)
        if problem:
            raise FormatError(f"{cls.__name__}: the shards {problem}")
        return cls(shards, seed=seed)

    def save_shards(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write every shard to ``directory`` (created if needed) as
        ``shard-<i>-of-<S>.bkf`` (each written durably and atomically by its ``save``); shard
        files of another number of shards already there are removed first. Returns the paths.

        Complexity: O(size)."""
        folder = Path(check_path(directory, "directory", "ShardedLookupTable.save_shards"))
        folder.mkdir(parents=True, exist_ok=True)
        s = len(self._shards)
        for old in folder.iterdir():
            m = _FILE.fullmatch(old.name)
            if m and int(m.group(2)) != s:
                old.unlink()
        paths = [folder / f"shard-{i:05d}-of-{s:05d}.bkf" for i in range(s)]
        for t, p in zip(self._shards, paths, strict=True):
            t.save(p)
        return paths

    @classmethod
    def load_shards(cls, directory: str | os.PathLike[str]) -> Self:
        """Read a directory written by :meth:`save_shards`: every ``shard-<i>-of-<S>.bkf``
        file for i < S, all of one class and seed; FormatError when one is missing, damaged,
        or of another table. Complexity: O(size)."""
        folder = Path(check_path(directory, "directory", "ShardedLookupTable.load_shards"))
        found: dict[int, Path] = {}
        totals = set()
        for p in folder.iterdir():
            m = _FILE.fullmatch(p.name)
            if m:
                found[int(m.group(1))] = p
                totals.add(int(m.group(2)))
        if len(totals) != 1:
            raise FormatError(f"{folder} must hold the shard files of one table (shard-<i>-of-<S>.bkf); "
                              f"found {len(found)} shard files of {sorted(totals) or 'no'} shards")
        s = totals.pop()
        missing = sorted(set(range(s)) - set(found))
        if missing or not 1 <= s <= MAX_SHARDS:
            raise FormatError(f"{folder}: shard {missing[0] if missing else s} of {s} is missing")
        shards = [loads(read_file(found[i], "ShardedLookupTable.load_shards")) for i in range(s)]
        tag = _tag_of(shards[0]) if type(shards[0]) in _classes().values() else type(shards[0]).__name__
        problem = cls._inconsistency(shards, int(getattr(shards[0], "seed", 0)))
        if problem:
            raise FormatError(f"{folder}: the shard files ({tag}) {problem}")
        return cls(shards, seed=shards[0].seed)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Read a file written by :meth:`save`, or a directory written by :meth:`save_shards`."""
        if Path(check_path(path, "path", "ShardedLookupTable.load")).is_dir():
            return cls.load_shards(path)
        out: Self = cls.from_bytes(read_file(path, "ShardedLookupTable.load"))
        return out


def _tag_of(table: Any) -> str:
    for tag, c in _classes().items():
        if type(table) is c:
            return tag
    raise InvalidParameterError(f"not a lookup table: {type(table).__name__}")  # pragma: no cover - checked


# ---------------------------------------------------------------------------------------------
# the build on Dask


def _pairs(k: Any, v: Any, seed: int, num_shards: int, owner: str, partition_info: Any = None) -> Any:
    """One partition's rows as (key, value, shard, pos), by position (indexes ignored)."""
    import pandas as pd

    number = int(partition_info["number"]) if partition_info else 0
    if len(k) != len(v):
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} must have as many entries as 'keys' in every partition. "
            f"Got {len(v)} values for {len(k)} keys in partition {number} instead.")
    try:
        shard = np.zeros(0, dtype=np.int64) if is_empty(k) else _shard_ids(k, seed, num_shards, owner)
    except InvalidParameterError as e:
        raise in_partition(e, number) from None
    pos = (np.int64(number) << np.int64(_POS_BITS)) + np.arange(len(k), dtype=np.int64)
    return pd.DataFrame({"key": k.reset_index(drop=True), "value": v.reset_index(drop=True),
                         "shard": shard, "pos": pos})


def _shard_task(part: Any, shard: int, num_shards: int, kind: str, value_bits: int, fpr: float, seed: int,
                on_duplicate: str, options: dict[str, Any], owner: str) -> Any:
    """Build one shard from its rows, in input order (runs on the worker that holds them)."""
    rows = part.iloc[np.argsort(part["pos"].to_numpy(), kind="stable")]
    return _build_one(_classes()[KINDS[kind]], rows["key"], rows["value"], shard, num_shards, value_bits, fpr,
                      seed, on_duplicate, options, owner)


def lookup_table(keys: Any, values: Any, value_bits: int = 16, fpr: float = 2.0**-16, *, kind: str = "geometric",
                 num_shards: int | None = None, on_duplicate: str = "error", seed: int = 0,
                 **options: Any) -> ShardedLookupTable:
    """Build a :class:`ShardedLookupTable` of ``keys -> values`` on a Dask cluster.

    Every row gets its shard (a hash of its key) and its position; dask's shuffle (``set_index``
    on the shard number with one division per shard) brings each shard's rows to one partition,
    where a worker builds the shard from them in input order (so duplicates across partitions
    meet there and ``on_duplicate`` treats them as the local build does). The result equals
    ``ShardedLookupTable.build(all keys, all values, num_shards=...)`` byte for byte.

    Parameters
    ----------
    keys, values : dask Series (or 1-D dask Arrays) with the same partitions
        Paired by position within each partition (indexes are ignored).
    value_bits, fpr : as ``GeometricFilter.build`` (V in [1, 64], e_o)
    kind : {"geometric", "bloomier"}
    num_shards : int, optional
        S; default the number of partitions of ``keys``. Every shard must receive keys.
    on_duplicate : {"error", "last", "sum", "max", "min"}
    seed : int
    **options
        Passed to every shard's ``build`` (e.g. ``num_hashes``, ``storage_ratio``).

    Returns
    -------
    ShardedLookupTable, on the client.

    Complexity: one shuffle of (key, value, shard, position) rows, then the shards' builds
    in parallel.
    """
    owner = "bloomkit.dask.lookup_table"
    name = Options(*KINDS)(kind, "kind", owner)
    dup = ON_DUPLICATE(on_duplicate, "on_duplicate", owner)
    FPR(fpr, "fpr", owner)
    sd = check_seed(seed, owner)
    dd, da = dask_module("dask.dataframe"), dask_module("dask.array")
    cols = []
    for label, col in (("keys", keys), ("values", values)):
        if isinstance(col, da.Array) and col.ndim == 1:
            col = dd.from_dask_array(col)
        if not isinstance(col, dd.Series):
            raise InvalidParameterError(f"The {label!r} parameter of {owner} must be a dask Series or a 1-D dask "
                                        f"Array. Got {type(col).__name__} instead.")
        cols.append(col)
    k, v = cols
    if k.npartitions != v.npartitions:
        raise InvalidParameterError(
            f"The 'values' parameter of {owner} must have the partitions of 'keys' ({k.npartitions}). "
            f"Got {v.npartitions} instead.")
    s = NUM_SHARDS(k.npartitions if num_shards is None else num_shards, "num_shards", owner)
    import pandas as pd

    empty = dask_module("dask.dataframe.utils").make_meta
    meta = pd.DataFrame({"key": empty(k).reset_index(drop=True), "value": empty(v).reset_index(drop=True),
                         "shard": pd.Series(dtype=np.int64), "pos": pd.Series(dtype=np.int64)})
    rows = dd.map_partitions(_pairs, k, v, sd, s, owner, align_dataframes=False, meta=meta)
    shuffled = rows.set_index("shard", divisions=list(range(s + 1)))
    parts = shuffled.to_delayed()
    delayed = dask_module().delayed
    tasks = [delayed(_shard_task, pure=True)(p, i, s, name, value_bits, fpr, sd, dup, options, owner)
             for i, p in enumerate(parts)]
    return ShardedLookupTable(list(dask_module().compute(*tasks)), seed=sd)
