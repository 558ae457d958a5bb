"""RangeBloomFilter: grouping / overlapping Bloom filter of multi-attribute records (doc 000).

One mechanism covers the four schemes of Section II. For a numeric attribute with group size
``d`` and ``s`` positions generated per group, a value ``x`` in group ``g`` sets the ``s``
positions of group ``g``, then of ``g + 1``, ... until ``k`` positions are set, the last group
contributing the remaining ``k - r s`` (Figures 2-4, ``r = ceil(k/s) - 1``, Eq. 13):

* traditional: d = 1, s = k;  grouping: s = k (Figure 2);
* overlapping: d = 1 (Figure 3);  grouping-overlapping: the general case (Figure 4).

Inserting the range ``[a, b]`` therefore sets the ``s`` positions of the groups
``g(a) .. g(b) + r - 1`` and the first ``k - r s`` positions of group ``g(b) + r``: the
union of what each of its values would set (the count of Eq. 11). Text attributes are plain
Bloom filter keys with k positions. Keys are the strings ``"name:value"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .._format import Persistable
from .._hashing import HASH_XXH64, check_seed
from .._storage import BitArray
from .._validation import check_choice, check_int, param_error
from ..errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from . import model as M
from ._keys import HASH_SHA512, SHA512_MAX_POSITIONS, key_positions, key_strings
from .schema import Attribute, Schema, Text, _Numeric

__all__ = ["AttributeConfig", "RangeBloomFilter", "RangeConfig"]

_HASHES = {"xxh64": HASH_XXH64, "sha512": HASH_SHA512}
_HASH_NAMES = {v: k for k, v in _HASHES.items()}


@dataclass(frozen=True)
class AttributeConfig:
    """Configuration of one attribute.

    Parameters
    ----------
    group_size : int
        d in the report (numeric attributes only), >= 1.
    positions : int, optional
        s in the report, positions generated per group, 1 <= s <= k (default k: no overlap).
    num_hashes : int, optional
        This attribute's own k (default: the filter's shared k).
    """

    group_size: int = 1
    positions: int | None = None
    num_hashes: int | None = None


class RangeConfig:
    """k and, per numeric attribute, (d, s): the configuration of a :class:`RangeBloomFilter`.

    Parameters
    ----------
    num_hashes : int
        k, the positions set per inserted key (shared by all attributes unless overridden).
    attributes : mapping, optional
        ``name -> AttributeConfig | (d, s) | (d, s, k)``. Attributes not listed use d = 1,
        s = k (a traditional Bloom filter).

    Examples
    --------
    >>> cfg = RangeConfig(15, {"Age": (1, 6), "Income": (5, 1)})
    >>> cfg["Income"]
    AttributeConfig(group_size=5, positions=1, num_hashes=None)
    """

    def __init__(self, num_hashes: int, attributes: Mapping[str, Any] | None = None) -> None:
        self.num_hashes = check_int(num_hashes, "num_hashes", "RangeConfig", lo=1, hi=1024)
        attrs: dict[str, AttributeConfig] = {}
        if attributes is not None and not isinstance(attributes, Mapping):
            raise param_error("attributes", "RangeConfig", "a mapping name -> (d, s)", attributes)
        for name, value in (attributes or {}).items():
            if not isinstance(name, str):
                raise param_error("attributes", "RangeConfig", "a mapping with str names", name)
            if value is None:
                continue
            if isinstance(value, AttributeConfig):
                ac = value
            elif isinstance(value, tuple | list) and len(value) in (2, 3):
                ac = AttributeConfig(*value)
            else:
                raise param_error(name, "RangeConfig", "an AttributeConfig or a (d, s) / (d, s, k) tuple", value)
            d = check_int(ac.group_size, "group_size", "RangeConfig", lo=1)
            k = self.num_hashes if ac.num_hashes is None else check_int(ac.num_hashes, "num_hashes", "RangeConfig", lo=1, hi=1024)
            s = None if ac.positions is None else check_int(ac.positions, "positions", "RangeConfig", lo=1, hi=k)
            attrs[name] = AttributeConfig(d, s, None if ac.num_hashes is None else k)
        self._attrs = attrs

    @classmethod
    def from_result(cls, result: Any) -> RangeConfig:
        """Configuration of an :func:`~bloomkit.ranges.optimize_multi` result."""
        attrs = {}
        for a in result.attributes:
            per_k = a.k if a.k != result.k else None
            if a.d is None:
                attrs[a.name] = AttributeConfig(1, None, per_k)
            else:
                attrs[a.name] = AttributeConfig(a.d, a.s, per_k)
        return cls(result.k, attrs)

    def __getitem__(self, name: str) -> AttributeConfig:
        return self._attrs.get(name, AttributeConfig())

    def resolve(self, attr: Attribute) -> tuple[int, int, int]:
        """(k, d, s) of an attribute (text: d = 1, s = k)."""
        ac = self[attr.name]
        k = self.num_hashes if ac.num_hashes is None else ac.num_hashes
        if not attr.is_numeric:
            if ac.group_size != 1 or (ac.positions is not None and ac.positions != k):
                raise InvalidParameterError(
                    f"The configuration of text attribute {attr.name!r} must not set group_size or "
                    f"positions. Got {ac} instead."
                )
            return k, 1, k
        s = k if ac.positions is None else ac.positions
        if s > k:
            raise param_error("positions", "RangeConfig", f"<= k ({k}) for {attr.name!r}", s)
        assert isinstance(attr, _Numeric)
        if ac.group_size > attr.scope_size:
            raise param_error("group_size", "RangeConfig", f"<= the scope size {attr.scope_size} of {attr.name!r}", ac.group_size)
        return k, ac.group_size, s

    def to_dict(self) -> dict[str, Any]:
        return {
            "num_hashes": self.num_hashes,
            "attributes": {n: [a.group_size, a.positions, a.num_hashes] for n, a in sorted(self._attrs.items())},
        }

    @classmethod
    def from_dict(cls, data: Any) -> RangeConfig:
        if not isinstance(data, dict) or not isinstance(data.get("attributes"), dict):
            raise InvalidParameterError(f"malformed configuration {data!r}")
        return cls(data["num_hashes"], {n: AttributeConfig(*v) for n, v in data["attributes"].items()})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RangeConfig) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RangeConfig({self.num_hashes}, {self._attrs!r})"


@dataclass(frozen=True)
class _Plan:
    attr: Attribute
    k: int
    d: int
    s: int
    r: int
    last: int


class RangeBloomFilter(Persistable):
    """A Bloom filter of multi-attribute records with numeric ranges (document 000).

    Parameters
    ----------
    schema : Schema
        The attributes (Text, Integer, Decimal).
    num_bits : int
        m, the size of the filter in bits.
    config : RangeConfig or int
        k and per attribute (d, s); an int is k with every attribute traditional.
    hash : {"xxh64", "sha512"}
        "xxh64" (default): the package's seeded XXH64 probe positions; "sha512": the report's
        SHA-512 split into 32 16-bit words, each mod m (Section V; at most 32 positions per key).
    seed : int
        Hash seed (xxh64 only; must be 0 with sha512).

    Examples
    --------
    >>> from bloomkit.ranges import Integer, Schema, Text
    >>> schema = Schema([Text("Name"), Integer("Age", 0, 120)])
    >>> bf = RangeBloomFilter(schema, 512, RangeConfig(10, {"Age": (1, 2)}))
    >>> bf.insert({"Name": "Ada", "Age": (20, 29)})
    >>> bf.might_contain("Age", 25), bf.might_cover("Age", 21, 28), bf.matches({"Name": "Ada", "Age": 22})
    (True, True, True)
    """

    _STRUCTURE = "ranges.RangeBloomFilter"
    _HASH_IDS = tuple(_HASH_NAMES)

    def __init__(
        self,
        schema: Schema,
        num_bits: int,
        config: RangeConfig | int,
        *,
        hash: str = "xxh64",
        seed: int = 0,
    ) -> None:
        owner = "RangeBloomFilter"
        if not isinstance(schema, Schema):
            raise param_error("schema", owner, "a Schema", schema)
        self.schema = schema
        self.num_bits = check_int(num_bits, "num_bits", owner, lo=1, hi=1 << 40)
        if isinstance(config, bool) or not isinstance(config, RangeConfig | int):
            raise param_error("config", owner, "a RangeConfig or an int k", config)
        self.config = RangeConfig(config) if isinstance(config, int) else config
        self.hash = check_choice(hash, "hash", owner, tuple(_HASHES))
        self._hash_id = _HASHES[self.hash]
        self.seed = check_seed(seed, owner)
        if self._hash_id == HASH_SHA512 and self.seed != 0:
            raise param_error("seed", owner, "0 with hash='sha512' (SHA-512 is unseeded)", seed)
        for name in self.config._attrs:
            schema[name]  # unknown attribute in the configuration -> InvalidParameterError
        self._plans: dict[str, _Plan] = {}
        for attr in schema:
            k, d, s = self.config.resolve(attr)
            if self._hash_id == HASH_SHA512 and s > SHA512_MAX_POSITIONS:
                raise param_error("positions", owner, f"<= {SHA512_MAX_POSITIONS} per key with hash='sha512'", s)
            r = int(M.r(k, s))
            self._plans[attr.name] = _Plan(attr, k, d, s, r, k - r * s)
        self.bits = BitArray(self.num_bits)
        # per attribute: [number of inserted values (sum of range sizes), expected hashed positions]
        self._inserted: dict[str, list[float]] = {a.name: [0.0, 0.0] for a in schema}

    # -- positions -------------------------------------------------------------------------------
    def _plan(self, name: Any) -> _Plan:
        attr = self.schema[name]
        return self._plans[attr.name]

    def _group_positions(self, plan: _Plan, g0: int, g1: int) -> np.ndarray:
        """(g1 - g0 + 1, s) positions of groups g0..g1 of a numeric attribute."""
        attr = plan.attr
        assert isinstance(attr, _Numeric)
        values = attr.scaled_lo + np.arange(g0, g1 + 1, dtype=np.int64) * plan.d
        return key_positions(key_strings(attr.name, values), plan.s, self.num_bits, self._hash_id, self.seed)

    def _interval_positions(self, plan: _Plan, a: int, b: int) -> np.ndarray:
        """Every position set by inserting the scaled interval [a, b] (a 1-D int64 array)."""
        attr = plan.attr
        assert isinstance(attr, _Numeric)
        ga = (a - attr.scaled_lo) // plan.d
        gb = (b - attr.scaled_lo) // plan.d
        pos = self._group_positions(plan, ga, gb + plan.r)
        full = pos[:-1].ravel()
        return np.concatenate([full, pos[-1, : plan.last]])

    def _text_positions(self, plan: _Plan, text: str) -> np.ndarray:
        pos: np.ndarray = key_positions([f"{plan.attr.name}:{text}"], plan.k, self.num_bits, self._hash_id, self.seed)[0]
        return pos

    def _small_positions(self, keys: list[str], counts: list[int]) -> np.ndarray:
        width = max(counts)
        pos = key_positions(keys, width, self.num_bits, self._hash_id, self.seed)
        mask = np.arange(width)[None, :] < np.asarray(counts)[:, None]
        return pos[mask]

    def _range_positions(self, plan: _Plan, a: int, b: int) -> np.ndarray:
        """Positions of the scaled interval [a, b]: short ranges through a list of keys."""
        if (b - a) // plan.d > 256:
            return self._interval_positions(plan, a, b)
        attr = plan.attr
        assert isinstance(attr, _Numeric)
        ga = (a - attr.scaled_lo) // plan.d
        gb = (b - attr.scaled_lo) // plan.d
        base = attr.scaled_lo
        keys = [f"{attr.name}:{base + g * plan.d}" for g in range(ga, gb + plan.r + 1)]
        return self._small_positions(keys, [plan.s] * (len(keys) - 1) + [plan.last])

    def _value_positions(self, name: str, value: Any) -> tuple[np.ndarray, int]:
        """(positions, number of values) of one record entry."""
        plan = self._plan(name)
        if isinstance(plan.attr, Text):
            return self._text_positions(plan, plan.attr.check_text(value)), 1
        assert isinstance(plan.attr, _Numeric)
        a, b = plan.attr.to_interval(value)
        return self._range_positions(plan, a, b), b - a + 1

    # -- updates ---------------------------------------------------------------------------------
    def _entry_keys(self, name: str, value: Any) -> tuple[list[str], list[int], int]:
        """Keys, positions per key and value count of one record entry (validated)."""
        plan = self._plan(name)
        attr = plan.attr
        if isinstance(attr, Text):
            return [f"{attr.name}:{attr.check_text(value)}"], [plan.k], 1
        assert isinstance(attr, _Numeric)
        a, b = attr.to_interval(value)
        ga = (a - attr.scaled_lo) // plan.d
        gb = (b - attr.scaled_lo) // plan.d
        base = attr.scaled_lo
        keys = [f"{attr.name}:{base + g * plan.d}" for g in range(ga, gb + plan.r + 1)]
        counts = [plan.s] * (len(keys) - 1) + [plan.last]
        return keys, counts, b - a + 1

    def _record_positions(self, rec: Mapping[str, Any]) -> tuple[np.ndarray, list[tuple[str, int]]]:
        """All positions of a validated record (one hashing pass) and (name, count) per entry."""
        small_keys: list[str] = []
        small_counts: list[int] = []
        parts: list[np.ndarray] = []
        entries: list[tuple[str, int]] = []
        for name, value in rec.items():
            plan = self._plan(name)
            if plan.attr.is_numeric:
                attr = plan.attr
                assert isinstance(attr, _Numeric)
                a, b = attr.to_interval(value)
                if (b - a) // plan.d > 256:  # long ranges: vectorised key generation
                    parts.append(self._interval_positions(plan, a, b))
                    entries.append((plan.attr.name, b - a + 1))
                    continue
            keys, counts, nvals = self._entry_keys(name, value)
            small_keys.extend(keys)
            small_counts.extend(counts)
            entries.append((plan.attr.name, nvals))
        if small_keys:
            parts.append(self._small_positions(small_keys, small_counts))
        return (np.concatenate(parts) if parts else np.zeros(0, np.int64)), entries

    def insert(self, record: Mapping[str, Any]) -> None:
        """Insert a record: ``{name: text | number | (lo, hi) | range}``.

        Not every attribute needs a value. Raises InvalidParameterError for unknown
        attributes, values of the wrong type, values outside the scope, reversed or empty
        ranges, NaN/inf for decimals; nothing is inserted then.

        Complexity: O(sum over numeric entries of ((b - a)/d + r) s + k) hash evaluations.
        """
        rec = self.schema.check_record(record)
        pos, entries = self._record_positions(rec)
        self.bits.set_many(pos)
        for name, count in entries:
            plan = self._plans[name]
            st = self._inserted[name]
            st[0] += count
            st[1] += float(M.go(count, plan.d, plan.s, plan.k))

    def insert_many(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Insert every record of an iterable. Complexity: the sum of :meth:`insert`."""
        for rec in records:
            self.insert(rec)

    # -- queries ---------------------------------------------------------------------------------
    def _all_set(self, pos: np.ndarray) -> bool:
        return bool(self.bits.test_many(pos).all())

    def might_contain(self, attribute: str, value: Any) -> bool:
        """Point query: might the attribute hold ``value`` (a text or a single number)?

        False is certain; True is wrong with probability about :meth:`predicted_fpr`.

        Complexity: O(k).
        """
        plan = self._plan(attribute)
        if plan.attr.is_numeric and isinstance(value, tuple | list | range):
            raise param_error("value", "might_contain", "a single number (use might_intersect / might_cover for ranges)", value)
        pos, _ = self._value_positions(plan.attr.name, value)
        return self._all_set(pos)

    def might_cover(self, attribute: str, lo: Any, hi: Any) -> bool:
        """Range query: might *every* value of [lo, hi] be in the set (BF(range) subset of BF)?

        Complexity: O(((hi - lo)/d + r) s + k).
        """
        plan = self._numeric_plan(attribute, "might_cover")
        assert isinstance(plan.attr, _Numeric)
        a, b = plan.attr.to_interval((lo, hi))
        return self._all_set(self._range_positions(plan, a, b))

    def might_intersect(self, attribute: str, lo: Any, hi: Any) -> bool:
        """Range query: might *some* value of [lo, hi] be in the set?

        A value of group g is present iff the s positions of groups g .. g + r - 1 and the first
        k - r s positions of group g + r are all set; the groups of [lo, hi] are tested at once.

        Complexity: O(((hi - lo)/d + r) s).
        """
        plan = self._numeric_plan(attribute, "might_intersect")
        attr = plan.attr
        assert isinstance(attr, _Numeric)
        a, b = attr.to_interval((lo, hi))
        ga = (a - attr.scaled_lo) // plan.d
        gb = (b - attr.scaled_lo) // plan.d
        pos = self._group_positions(plan, ga, gb + plan.r)
        ok = self.bits.test_many(pos.ravel()).reshape(pos.shape)
        full_ok = ok.all(axis=1)
        last_ok = cast(np.ndarray, ok[:, : plan.last].all(axis=1))  # 2-D .all(axis=1): an array
        ngroups = gb - ga + 1
        # bad[g] = number of failing full groups among g .. g + r - 1
        fails = np.concatenate([[0], np.cumsum(~full_ok)])
        idx = np.arange(ngroups)
        window_fail = fails[idx + plan.r] - fails[idx]
        present = (window_fail == 0) & last_ok[idx + plan.r]
        return bool(present.any())

    def _numeric_plan(self, attribute: str, owner: str) -> _Plan:
        plan = self._plan(attribute)
        if not plan.attr.is_numeric:
            raise param_error("attribute", owner, "a numeric attribute", attribute)
        return plan

    def query_filter(self, query_record: Mapping[str, Any]) -> RangeBloomFilter:
        """The filter BF(query) of the query record, with this filter's schema and configuration.

        Complexity: as :meth:`insert`.
        """
        q = self._empty_like()
        q.insert(query_record)
        return q

    def matches(self, query: Mapping[str, Any] | RangeBloomFilter) -> bool:
        """Subset test BF(query) subset of BF(self) (Section II, multiple-attribute queries).

        ``query`` is a record (its ranges must be covered, its texts contained) or a filter
        from :meth:`query_filter` (same schema and configuration, else IncompatibleFiltersError).

        Complexity: O(m / 64) after building BF(query).
        """
        qf = query if isinstance(query, RangeBloomFilter) else self.query_filter(query)
        self._compatible(qf)
        return bool(not np.any(qf.bits.words & ~self.bits.words))

    # -- combination -----------------------------------------------------------------------------
    def _empty_like(self) -> RangeBloomFilter:
        out = object.__new__(RangeBloomFilter)
        out.schema, out.num_bits, out.config = self.schema, self.num_bits, self.config
        out.hash, out._hash_id, out.seed, out._plans = self.hash, self._hash_id, self.seed, self._plans
        out.bits = BitArray(self.num_bits)
        out._inserted = {a.name: [0.0, 0.0] for a in self.schema}
        return out

    def _compatible(self, other: Any) -> RangeBloomFilter:
        if not isinstance(other, RangeBloomFilter):
            raise IncompatibleFiltersError(f"expected a RangeBloomFilter, got {type(other).__name__}")
        diffs = []
        if other.schema != self.schema:
            diffs.append("schema")
        if other.num_bits != self.num_bits:
            diffs.append(f"num_bits ({self.num_bits} vs {other.num_bits})")
        if other.config != self.config:
            diffs.append("configuration")
        if other._hash_id != self._hash_id or other.seed != self.seed:
            diffs.append("hash/seed")
        if diffs:
            raise IncompatibleFiltersError("RangeBloomFilters differ in " + ", ".join(diffs))
        return other

    def union(self, other: RangeBloomFilter) -> RangeBloomFilter:
        """A filter of both sets (bitwise OR); IncompatibleFiltersError if they differ.

        Complexity: O(m / 64).
        """
        self._compatible(other)
        out = self._empty_like()
        out.bits = self.bits | other.bits
        for name in out._inserted:
            out._inserted[name] = [x + y for x, y in zip(self._inserted[name], other._inserted[name], strict=True)]
        return out

    def __or__(self, other: RangeBloomFilter) -> RangeBloomFilter:
        return self.union(other)

    def copy(self) -> RangeBloomFilter:
        """An independent copy. Complexity: O(m / 64)."""
        out = self._empty_like()
        out.bits = self.bits.copy()
        out._inserted = {k: list(v) for k, v in self._inserted.items()}
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RangeBloomFilter):
            return NotImplemented
        try:
            self._compatible(other)
        except IncompatibleFiltersError:
            return False
        return self.bits == other.bits

    __hash__ = None  # type: ignore[assignment]

    # -- model -----------------------------------------------------------------------------------
    @property
    def expected_hashed_positions(self) -> float:
        """b = sum of Eq. (11) over the inserted entries (text: k)."""
        return float(sum(v[1] for v in self._inserted.values()))

    def fill_ratio(self) -> float:
        """Observed fraction of set bits (1 - p). Complexity: O(m / 64)."""
        return self.bits.popcount() / self.num_bits

    def predicted_fpr(self, fill: str = "observed") -> dict[str, float]:
        """Predicted false positive rate per attribute and the total (the sum, f_T).

        Numeric attributes use Eq. (14) with n = the number of inserted values (exact for one
        inserted range), text attributes ``(1-p)^k``. ``fill="observed"`` takes 1 - p from the
        bits actually set, ``"expected"`` from Eq. (36) with b = :attr:`expected_hashed_positions`.
        Attributes with nothing inserted are reported with the rate of a text key (no range).

        Complexity: O(attributes + m / 64).
        """
        check_choice(fill, "fill", "predicted_fpr", ("observed", "expected"))
        if fill == "observed":
            q = self.fill_ratio()
        else:
            q = float(M.a1(self.expected_hashed_positions, self.num_bits)) / self.num_bits
        out: dict[str, float] = {}
        for name, plan in self._plans.items():
            n = self._inserted[name][0]
            attr = plan.attr
            if isinstance(attr, _Numeric) and n >= 1:
                out[name] = float(M.f_go_fill(attr.scope_size, min(n, attr.scope_size), plan.d, plan.s, plan.k, q))
            else:
                out[name] = float(M.f_text(plan.k, q))
        out["total"] = float(sum(out.values()))
        return out

    def __repr__(self) -> str:
        return (
            f"RangeBloomFilter(num_bits={self.num_bits}, k={self.config.num_hashes}, "
            f"attributes={self.schema.names}, hash={self.hash!r}, set_bits={self.bits.popcount()})"
        )

    # -- invariants / persistence ----------------------------------------------------------------
    def _check(self) -> None:
        """Assert the invariants (used by the tests after every mutation)."""
        nw = (self.num_bits + 63) // 64
        assert self.bits.num_bits == self.num_bits and self.bits.words.shape == (nw,)
        rem = self.num_bits & 63
        assert rem == 0 or int(self.bits.words[-1]) >> rem == 0
        assert set(self._inserted) == set(self.schema.names) == set(self._plans)
        for name, plan in self._plans.items():
            assert 1 <= plan.s <= plan.k and plan.d >= 1 and 0 < plan.last <= plan.s
            assert plan.r == -(-plan.k // plan.s) - 1
            n, b = self._inserted[name]
            assert n >= 0 and b >= 0
        if self.expected_hashed_positions == 0:
            assert self.bits.popcount() == 0

    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {
            "schema": self.schema.to_list(),
            "config": self.config.to_dict(),
            "num_bits": self.num_bits,
            "inserted": {k: list(v) for k, v in self._inserted.items()},
        }
        return params, {"words": self.bits.words}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> RangeBloomFilter:
        if hash_id not in _HASH_NAMES:
            raise FormatError(f"unknown hash id {hash_id} for RangeBloomFilter")
        schema = Schema.from_list(params["schema"])
        obj = cls(schema, params["num_bits"], RangeConfig.from_dict(params["config"]), hash=_HASH_NAMES[hash_id], seed=seed)
        words = arrays["words"]
        nw = (obj.num_bits + 63) // 64
        if words.dtype != np.uint64 or words.shape != (nw,):
            raise FormatError(f"RangeBloomFilter words must be uint64[{nw}], got {words.dtype}{words.shape}")
        rem = obj.num_bits & 63
        if rem and int(words[-1]) >> rem:
            raise FormatError("RangeBloomFilter payload has bits set beyond num_bits")
        obj.bits = BitArray(obj.num_bits, words.astype(np.uint64).copy())
        ins = params["inserted"]
        if not isinstance(ins, dict) or set(ins) != set(schema.names):
            raise FormatError("RangeBloomFilter 'inserted' does not match the schema")
        for name, v in ins.items():
            if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, int | float) and not isinstance(x, bool) and x >= 0 for x in v)):
                raise FormatError(f"RangeBloomFilter 'inserted' entry of {name!r} is malformed")
            obj._inserted[name] = [float(v[0]), float(v[1])]
        return obj
