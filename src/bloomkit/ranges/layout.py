"""Where records go in a filter: the shared core of RangeBloomFilter and ProfileIndex.

A :class:`Layout` is a schema, a configuration (k and per attribute (d, s)), m, a hash and a
seed. For a numeric attribute with group size ``d`` and ``s`` positions generated per group,
a value ``x`` in group ``g`` sets the ``s`` positions of group ``g``, then of ``g + 1``, ...
until ``k`` positions are set, the last group contributing the remaining ``k - r s``
(Figures 2-4, ``r = ceil(k/s) - 1``, Eq. 13). Inserting the range ``[a, b]`` sets the ``s``
positions of the groups ``g(a) .. g(b) + r - 1`` and the first ``k - r s`` positions of group
``g(b) + r``: the union of what each of its values would set (the count of Eq. 11). A text is
a plain Bloom filter key with k positions. Keys are the strings ``"name:value"``, ``value``
the scaled first number of the group.

:meth:`Layout.positions` turns a whole :class:`~bloomkit.ranges.records.RecordBatch` into
positions in one hashing pass per attribute; :meth:`Layout.hashes` gives the keys' hashes and
position counts, which the structures' kernels turn into set bits without materialising the
positions.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._engine.hashing import TAG_STR, hash_many, tag_seed
from .._engine.hashing import positions as probe_positions
from .._validation import SEED, Check, Int, Options, param_error
from ..errors import FormatError, InvalidParameterError
from . import _kernels as K
from . import model as M
from ._keys import (
    HASH_NAMES,
    HASH_SHA512,
    HASHES,
    SHA512_MAX_POSITIONS,
    key_positions,
    key_strings,
    masked_positions,
)
from .config import CONFIG, RangeConfig
from .points import PointQuery, point_query
from .records import RecordBatch
from .schema import SCHEMA, Attribute, Numeric, Schema

__all__ = ["HASH", "MAX_BITS", "NUM_BITS", "TABLE_GROUPS", "Layout", "LayoutProperties", "Plan", "shared_layout"]

_SMALL_RECORDS, _SMALL_KEYS = 4, 256  # batches hashed with Python ints (one record, short ranges)
TABLE_GROUPS = 1 << 22
"""Largest scope (in groups) whose key hashes a Layout tabulates for large batches (32 MiB)."""
MAX_BITS = 1 << 40
NUM_BITS = Int(1, MAX_BITS)
"""m of a ranges structure."""
HASH = Options(*HASHES)
"""The ``hash=`` choice: "xxh64" (the package hash) or "sha512" (the report's, Section V)."""


@dataclass(frozen=True)
class Plan:
    """k, d, s of one attribute, with r = ceil(k/s) - 1, the positions of the last group
    ``last = k - r s`` and ``base``, the scaled lower end of its scope (0 for text)."""

    attr: Attribute
    k: int
    d: int
    s: int
    r: int
    last: int
    base: int


class Layout:
    """Schema + configuration + m + hash + seed: how records become bit positions.

    Parameters are validated with the constraints the structures declare for their files
    (:data:`~bloomkit.ranges.schema.SCHEMA`, :data:`~bloomkit.ranges.config.CONFIG`,
    :data:`NUM_BITS`, :data:`HASH`, ``SEED``); ``owner`` names the structure in messages.
    """

    def __init__(self, schema: Any, num_bits: Any, config: Any, hash: Any, seed: Any, owner: str) -> None:
        self.schema: Schema = SCHEMA(schema, "schema", owner)
        self.num_bits: int = NUM_BITS(num_bits, "num_bits", owner)
        self.config: RangeConfig = CONFIG(config, "config", owner)
        self.hash: str = HASH(hash, "hash", owner)
        self.hash_id = HASHES[self.hash]
        self.seed: int = SEED(seed, "seed", owner)
        if self.hash_id == HASH_SHA512 and self.seed != 0:
            raise param_error("seed", owner, "0 with hash='sha512' (SHA-512 is unseeded)", seed)
        for name in self.config.names:
            if name not in self.schema:
                raise param_error("config", owner, f"a configuration of the schema's attributes (not {name!r})",
                                  self.config)
        self.plans: dict[str, Plan] = {}
        for attr in self.schema:
            k, d, s = self.config.resolve(attr)
            if self.hash_id == HASH_SHA512 and s > SHA512_MAX_POSITIONS:
                raise param_error("positions", owner, f"<= {SHA512_MAX_POSITIONS} per key with hash='sha512'", s)
            r = int(M.r(k, s))
            base = attr.scaled_lo if isinstance(attr, Numeric) else 0
            if isinstance(attr, Numeric) and attr.scaled_hi + (r + 1) * d > 1 << 62:  # key values fit int64
                raise param_error("group_size", owner, f"small enough that {attr.name!r}'s keys fit 64 bits", d)
            self.plans[attr.name] = Plan(attr, k, d, s, r, k - r * s, base)
        self._tables: dict[str, np.ndarray] = {}  # h1 of every group of an attribute (big batches)
        self.points: dict[str, PointQuery] = {} if self.hash_id == HASH_SHA512 else {
            name: point_query(p.attr, p.k, p.d, p.s, p.r, p.last, p.base, self.num_bits, self.seed)
            for name, p in self.plans.items()}
        """The compiled point query of each attribute (``"xxh64"`` layouts; :mod:`.points`)."""

    @classmethod
    def from_params(cls, params: Mapping[str, Any], seed: int, hash_id: int, owner: str) -> Layout:
        """The layout of a file's parameters (already checked one by one against the
        structure's spec) and header; FormatError if they do not fit together."""
        try:
            return cls(params["schema"], params["num_bits"], params["config"], HASH_NAMES[hash_id], seed, owner)
        except (KeyError, InvalidParameterError) as e:
            raise FormatError(f"inconsistent {owner} parameters: {e}") from None

    def plan(self, name: Any) -> Plan:
        """The plan of the attribute called ``name`` (InvalidParameterError if unknown)."""
        return self.plans[self.schema[name].name]

    def params(self) -> dict[str, Any]:
        """The saved parameters every ranges structure shares."""
        return {"schema": self.schema.to_list(), "config": self.config.to_dict(), "num_bits": self.num_bits}

    def differences(self, other: Layout) -> list[str]:
        """What differs between two layouts (empty: filters of both combine)."""
        diffs = []
        if other.schema != self.schema:
            diffs.append("schema")
        if other.num_bits != self.num_bits:
            diffs.append(f"num_bits ({self.num_bits} vs {other.num_bits})")
        if other.config != self.config:
            diffs.append("configuration")
        if other.hash_id != self.hash_id or other.seed != self.seed:
            diffs.append("hash/seed")
        return diffs

    # -- keys and positions -----------------------------------------------------------------------
    def _parts(self, batch: RecordBatch) -> list[tuple[Plan, Any, np.ndarray, np.ndarray]]:
        """Per attribute of ``batch``: (plan, the keys: int64 group numbers g (key value
        ``base + g d``) or texts, positions per key, record of each key)."""
        out: list[tuple[Plan, Any, np.ndarray, np.ndarray]] = []
        for col in batch.columns:
            plan = self.plans[col.name]
            if col.text is not None:
                out.append((plan, col.text, np.full(len(col.rows), plan.k, dtype=np.int64), col.rows))
                continue
            assert col.a is not None and col.b is not None
            ga = (col.a - plan.base) // plan.d
            nk = (col.b - plan.base) // plan.d - ga + plan.r + 1  # keys (groups) per record
            ends = np.cumsum(nk)
            total = int(ends[-1]) if ends.size else 0
            g = np.arange(total, dtype=np.int64) - np.repeat(ends - nk - ga, nk)
            counts = np.full(total, plan.s, dtype=np.int64)
            counts[ends - 1] = plan.last
            out.append((plan, g, counts, np.repeat(col.rows, nk)))
        return out

    def _group_hashes(self, plan: Plan, g: np.ndarray) -> np.ndarray:
        """h1 of the keys of groups ``g`` of a numeric attribute (xxh64). A batch with many keys
        takes them from a table of every group of the scope (computed once per layout, at most
        :data:`TABLE_GROUPS` groups): a gather instead of formatting and hashing each key."""
        table = self._tables.get(plan.attr.name)
        if table is None:
            assert isinstance(plan.attr, Numeric)
            groups = (plan.attr.scaled_hi - plan.base) // plan.d + plan.r + 1
            if groups <= TABLE_GROUPS and 8 * len(g) >= groups:
                table = self._tables[plan.attr.name] = self._group_hashes_direct(plan, np.arange(groups, dtype=np.int64))
        return table[g] if table is not None else self._group_hashes_direct(plan, g)

    def _group_hashes_direct(self, plan: Plan, g: np.ndarray) -> np.ndarray:
        prefix = np.frombuffer((plan.attr.name + ":").encode("utf-8"), np.uint8)
        return K.int_key_hashes(prefix, plan.base + g * plan.d, np.uint64(tag_seed(self.seed, TAG_STR)), K.DIGIT_PAIRS)

    def _hash(self, plan: Plan, keys: Any) -> np.ndarray:
        """h1 of the keys ``"name:value"`` of group numbers or of texts (xxh64)."""
        if isinstance(keys, np.ndarray):
            return self._group_hashes(plan, keys)
        return hash_many(self._strings(plan, keys), self.seed)

    def _strings(self, plan: Plan, keys: Any) -> pa.Array | list[str]:
        """The key strings (the SHA-512 path hashes strings)."""
        prefix = plan.attr.name + ":"
        if isinstance(keys, np.ndarray):
            return key_strings(plan.attr.name, plan.base + keys * plan.d)
        if isinstance(keys, list):
            return [prefix + t for t in keys]
        text = keys.cast(pa.string()) if pa.types.is_large_string(keys.type) else keys
        return pc.binary_join_element_wise(prefix, text, "")

    def _small_hashes(self, batch: RecordBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """:meth:`hashes` of a batch of a few records with few keys, with Python ints and one
        hashing call (the same keys in the same order; a few times faster than the array path
        for one record). None for larger batches."""
        if batch.size > _SMALL_RECORDS:
            return None
        keys: list[str] = []
        counts: list[int] = []
        rows: list[int] = []
        starts = [0]
        for col in batch.columns:
            plan = self.plans[col.name]
            prefix = plan.attr.name + ":"
            if col.text is not None:
                texts = col.text if isinstance(col.text, list) else col.text.to_pylist()
                keys += [prefix + t for t in texts]
                counts += [plan.k] * len(texts)
                rows += col.rows.tolist()
            else:
                assert col.a is not None and col.b is not None
                base, d = plan.base, plan.d
                for row, a, b in zip(col.rows.tolist(), col.a.tolist(), col.b.tolist(), strict=True):
                    ga, gz = (a - base) // d, (b - base) // d + plan.r
                    if gz - ga >= _SMALL_KEYS:
                        return None
                    keys += [f"{prefix}{base + g * d}" for g in range(ga, gz + 1)]
                    counts += [plan.s] * (gz - ga) + [plan.last]
                    rows += [row] * (gz - ga + 1)
            starts.append(len(keys))
        return (hash_many(keys, self.seed), np.array(counts, dtype=np.int64), np.array(rows, dtype=np.int64),
                np.array(starts, dtype=np.int64))

    def hashes(self, batch: RecordBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(h1, positions per key, record per key, part starts) of every key of ``batch``: one
        hashing pass per attribute (part), no key string built for numeric values; within a
        part the keys are sorted by record (``hash="xxh64"`` only).

        Complexity: O(keys), in numba kernels."""
        assert self.hash_id != HASH_SHA512
        small = self._small_hashes(batch)
        if small is not None:
            return small
        parts = self._parts(batch)
        starts = np.concatenate([[0], np.cumsum([len(c) for _, _, c, _ in parts], dtype=np.int64)]).astype(np.int64)
        if not parts:
            z = np.zeros(0, dtype=np.int64)
            return z.astype(np.uint64), z, z, starts
        return (np.concatenate([self._hash(p, keys) for p, keys, _, _ in parts]),
                np.concatenate([c for _, _, c, _ in parts]), np.concatenate([r for _, _, _, r in parts]), starts)

    def positions(self, batch: RecordBatch, *, with_rows: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """Every position the records of ``batch`` set (1-D int64, repeats possible) and, with
        ``with_rows``, the record of each position.

        Complexity: O(sum over entries of ((b - a)/d + r) s + k) hashes, vectorised.
        """
        if self.hash_id != HASH_SHA512:
            h, counts, rows, _ = self.hashes(batch)
            pos = K.count_positions(h, counts, np.uint64(self.num_bits))
        else:
            parts = self._parts(batch)
            pos = np.concatenate([np.zeros(0, np.int64)] + [
                masked_positions(self._strings(p, keys), c, self.num_bits, self.hash_id, 0) for p, keys, c, _ in parts])
            counts = np.concatenate([np.zeros(0, np.int64)] + [c for _, _, c, _ in parts])
            rows = np.concatenate([np.zeros(0, np.int64)] + [r for _, _, _, r in parts])
        return pos, (np.repeat(rows, counts) if with_rows else None)


    def plain_entries(self, record: Any) -> list[tuple[str, PointQuery, Any]] | None:
        """``(name, point query, entry)`` of every value of a dict of plain values (as the point
        queries take them: :meth:`bloomkit.ranges.points.PointProbe.entry`), in the record's
        order; None for anything else (the record path). Complexity: O(attributes)."""
        points = self.points
        if type(record) is not dict or not points:
            return None
        out: list[tuple[str, PointQuery, Any]] = []
        for name, value in record.items():
            point = points.get(name) if type(name) is str else None
            if point is None:
                return None
            entry = point.entry(value)
            if entry is None:
                return None
            out.append((name, point, entry))
        return out

    def group_positions(self, plan: Plan, g0: int, g1: int) -> np.ndarray:
        """(g1 - g0 + 1, s) positions of the groups g0..g1 of a numeric attribute."""
        g = np.arange(g0, g1 + 1, dtype=np.int64)
        if self.hash_id == HASH_SHA512:
            return key_positions(self._strings(plan, g), plan.s, self.num_bits, self.hash_id, 0)
        return probe_positions(self._group_hashes(plan, g), plan.s, self.num_bits)

    def groups(self, plan: Plan, a: int, b: int) -> tuple[int, int]:
        """The groups of the first and last values of the scaled interval [a, b]."""
        return (a - plan.base) // plan.d, (b - plan.base) // plan.d

    def range_rows(self, plan: Plan, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """For "some value of [a, b] is present": the positions of one value per group of the
        range (unique per group) and the offsets of each group's positions."""
        ga, gb = self.groups(plan, a, b)
        pos = self.group_positions(plan, ga, gb + plan.r)
        parts = [np.unique(np.concatenate([pos[g : g + plan.r].ravel(), pos[g + plan.r, : plan.last]]))
                 for g in range(gb - ga + 1)]
        offsets = np.concatenate([[0], np.cumsum([p.size for p in parts])]).astype(np.int64)
        return np.concatenate(parts).astype(np.int64), offsets

    # -- model ------------------------------------------------------------------------------------
    def expected_positions(self, name: str, entries: int, values: int) -> float:
        """Sum of Eq. (11) over ``entries`` entries of ``values`` values in all (text: k per
        entry; :func:`~bloomkit.ranges.model.go_total`)."""
        plan = self.plans[name]
        return float(M.go_total_unchecked(values, entries, plan.d, plan.s, plan.k))

    def batch_stats(self, batch: RecordBatch) -> list[tuple[str, int, int, float]]:
        """(name, entries, values, expected hashed positions) of every attribute of ``batch``."""
        out = []
        for col in batch.columns:
            entries, values = len(col.rows), col.values()
            out.append((col.name, entries, values, self.expected_positions(col.name, entries, values)))
        return out

    def fill_of(self, positions: float) -> float:
        """1 - p after ``positions`` hashed positions, Eq. (36) / m."""
        return float(M.a1(positions, self.num_bits)) / self.num_bits

    def rates(self, values: Mapping[str, float], fill: float, names: Any = None) -> dict[str, float]:
        """Predicted false positive rate per attribute at fill ``1 - p``: Eq. (14) with n = the
        number of inserted values (at most R) for numeric attributes holding some, ``(1-p)^k``
        (Eq. 2) otherwise. ``names`` limits the attributes (default all)."""
        out: dict[str, float] = {}
        for name in self.plans if names is None else [self.schema[n].name for n in names]:
            plan = self.plans[name]
            n = values.get(name, 0.0)
            attr = plan.attr
            if isinstance(attr, Numeric) and n >= 1:
                out[name] = float(M.f_go_fill(attr.scope_size, min(n, attr.scope_size), plan.d, plan.s, plan.k, fill))
            else:
                out[name] = float(M.f_text(plan.k, fill))
        return out


MAX_STATISTIC = float(1 << 62)


@functools.lru_cache(maxsize=256)
def _shared(schema: Schema, num_bits: int, config: Any, hash: str, seed: int, owner: str,
            types: tuple[type, ...]) -> Layout:
    return Layout(schema, num_bits, config, hash, seed, owner)


def shared_layout(schema: Any, num_bits: Any, config: Any, hash: Any, seed: Any, owner: str) -> Layout:
    """``Layout(schema, num_bits, config, hash, seed, owner)``, one object for equal arguments:
    a layout is immutable (its group-hash tables are a cache), so the filters of one design
    share it, and a new filter of a known design builds no plans or point queries (document
    000 builds a filter per profile: 212 -> ~40 us). Arguments are keyed with their types (a
    ``True`` seed is not the seed 1: the constructor refuses it); unhashable ones (a
    configuration mapping) build a layout of their own.

    Complexity: O(attributes) to hash the arguments, O(1) when the design is known."""
    args = (schema, num_bits, config, hash, seed)
    try:
        return _shared(*args, owner, tuple(type(a) for a in args))
    except TypeError:  # unhashable
        return Layout(*args, owner)


def statistics_spec(*fields: str) -> Check:
    """The constraint of a structure's saved per-attribute statistics: ``{attribute: [<fields>]}``,
    each a number in [0, 2**62] (returned as floats); the loader checks the attribute names
    against the schema."""
    what = "[" + ", ".join(fields) + "]"

    def check(value: Any, name: str, owner: str) -> dict[str, list[float]]:
        if not isinstance(value, dict):
            raise param_error(name, owner, f"a mapping attribute -> {what}", value)
        out = {}
        for k, v in value.items():
            if not (isinstance(v, list) and len(v) == len(fields) and all(
                    isinstance(x, int | float) and not isinstance(x, bool) and 0 <= x <= MAX_STATISTIC for x in v)):
                raise param_error(f"{name}[{k!r}]", owner, f"{what}: {len(fields)} numbers in [0, 2**62]", v)
            out[k] = [float(x) for x in v]
        return out

    return Check(check, f"a mapping attribute -> {what}")


class LayoutProperties:
    """The parameters of a structure built on a :class:`Layout` (``self._layout``), read-only."""

    _layout: Layout

    @property
    def layout(self) -> Layout:
        """Schema, configuration, m, hash and seed (structures of one layout combine)."""
        return self._layout

    @property
    def schema(self) -> Schema:
        return self._layout.schema

    @property
    def num_bits(self) -> int:
        """m, the bits of a filter."""
        return self._layout.num_bits

    @property
    def config(self) -> RangeConfig:
        return self._layout.config

    @property
    def num_hashes(self) -> int:
        """k, the shared number of positions per key (attributes may override it)."""
        return self._layout.config.num_hashes

    @property
    def hash(self) -> str:
        """"xxh64" or "sha512"."""
        return self._layout.hash

    @property
    def seed(self) -> int:
        return self._layout.seed

    @property
    def _hash_id(self) -> int:
        return self._layout.hash_id
