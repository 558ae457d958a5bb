"""RangeBloomFilter: grouping / overlapping Bloom filter of multi-attribute records (doc 000).

One mechanism covers the four schemes of Section II (:mod:`bloomkit.ranges.layout`): for a
numeric attribute with group size ``d`` and ``s`` positions generated per group,

* traditional: d = 1, s = k;  grouping: s = k (Figure 2);
* overlapping: d = 1 (Figure 3);  grouping-overlapping: the general case (Figure 4).

Text attributes are plain Bloom filter keys with k positions. Keys are the strings
``"name:value"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Self, cast

import numpy as np

from .._engine.storage import BitArray
from .._format import ArraySpec, Persistable
from .._validation import Int, InvariantError, Options, param_error
from ..errors import FormatError, IncompatibleFiltersError
from . import _kernels as K
from ._keys import HASH_NAMES, HASH_SHA512
from .config import CONFIG, AttributeConfig, RangeConfig, design
from .layout import NUM_BITS, Layout, LayoutProperties, Plan, shared_layout, statistics_spec
from .records import RecordBatch, entry_values, record_batch
from .schema import SCHEMA, Numeric, Schema

__all__ = ["AttributeConfig", "RangeBloomFilter", "RangeConfig"]

FILL = Options("observed", "expected")
"""How predicted rates take the fill 1 - p: from the bits set, or from Eq. (36)."""
CHUNK = 1 << 14
"""Records hashed at once by a large insert_many / add_many (about 4 KB of scratch memory per
record of Table 1's attributes)."""


INSERTED = statistics_spec("values inserted", "expected hashed positions")
_CONTAINS = "RangeBloomFilter.might_contain"
_CONTAINS_WHERE = f"record 0 of {_CONTAINS}"  # how the record path names the one-value record
COUNT = Int(0)


class RangeBloomFilter(LayoutProperties, Persistable):
    """A Bloom filter of multi-attribute records with numeric ranges (document 000).

    Parameters
    ----------
    schema : Schema
        The attributes (Text, Integer, Decimal).
    num_bits : int
        m, the size of the filter in bits (1 <= m <= 2**40).
    config : RangeConfig or int
        k and per attribute (d, s); an int is k with every attribute traditional.
    hash : {"xxh64", "sha512"}
        "xxh64" (default): the package's seeded XXH64 probe positions; "sha512": the report's
        SHA-512 split into 32 16-bit words, each mod m (Section V; at most 32 positions per key).
    seed : int
        Hash seed (xxh64 only; must be 0 with sha512).

    Notes
    -----
    ``len()`` is the exact number of records inserted (``exact_len`` is True).
    :meth:`for_requirements` chooses m or k and (d, s) with the two-phase optimizer.

    Thread safety: any number of threads may insert and query at once. Records are validated
    and hashed outside the lock; the bits and the counters of one insert are updated together
    under the filter's lock, so no insert is lost and ``len()`` and the predicted rates stay
    consistent with the bits. Queries read the bits without the lock (a query racing an insert
    sees the record or not; a plain point query is one read-only kernel). ``clear`` while
    other threads insert can lose those inserts.

    Examples
    --------
    >>> from bloomkit.ranges import Integer, Schema, Text
    >>> schema = Schema([Text("Name"), Integer("Age", 0, 120)])
    >>> bf = RangeBloomFilter(schema, 512, RangeConfig(10, {"Age": (1, 2)}))
    >>> bf.insert({"Name": "Ada", "Age": (20, 29)})
    >>> bf.might_contain("Age", 25), bf.might_cover("Age", 21, 28), bf.matches({"Name": "Ada", "Age": 22})
    (True, True, True)
    """

    _PARAMS: ClassVar[Any] = {"schema": SCHEMA, "config": CONFIG, "num_bits": NUM_BITS, "inserted": INSERTED,
                              "count": COUNT}
    _ARRAYS: ClassVar[Any] = {"words": ArraySpec("<u8")}
    _HASH_IDS = tuple(HASH_NAMES)
    exact_len: ClassVar[bool] = True

    def __init__(
        self,
        schema: Schema,
        num_bits: int,
        config: RangeConfig | int,
        *,
        hash: str = "xxh64",
        seed: int = 0,
    ) -> None:
        layout = shared_layout(schema, num_bits, config, hash, seed, "RangeBloomFilter")
        self._init(layout, BitArray(layout.num_bits))

    def _init(self, layout: Layout, bits: BitArray, inserted: Mapping[str, list[float]] | None = None,
              count: int = 0) -> None:
        self._layout = layout
        self.bits = bits
        # per attribute: [number of inserted values (sum of range sizes), expected hashed positions]
        self._inserted: dict[str, list[float]] = {a.name: list((inserted or {}).get(a.name, [0.0, 0.0]))
                                                  for a in layout.schema}
        self._count = count

    @classmethod
    def from_layout(cls, layout: Layout) -> Self:
        """An empty filter of ``layout`` (e.g. ``other.layout``: filters that combine with it).

        Complexity: O(m / 64)."""
        if not isinstance(layout, Layout):
            raise param_error("layout", f"{cls.__name__}.from_layout", "a Layout", layout)
        out = object.__new__(cls)
        out._init(layout, BitArray(layout.num_bits))
        return out

    @classmethod
    def for_requirements(
        cls,
        schema: Schema,
        range_sizes: Mapping[str, int] | None = None,
        *,
        num_bits: int | None = None,
        fpr: float | None = None,
        per_attribute_k: bool = False,
        hash: str = "xxh64",
        seed: int = 0,
    ) -> Self:
        """A filter configured by the two-phase optimizer (Figures 6-7) for records of ``schema``
        whose numeric attributes hold ranges of about ``range_sizes[name]`` values: k and (d, s)
        for ``num_bits``, or the smallest m (and its configuration) whose f_T is at most
        ``fpr`` (:func:`~bloomkit.ranges.design`).

        >>> from bloomkit.ranges import Integer, Schema, Text
        >>> bf = RangeBloomFilter.for_requirements(Schema([Text("Name"), Integer("Age", 1, 120)]),
        ...                                        {"Age": 10}, fpr=0.01)
        >>> bf.num_bits, bf.config.num_hashes
        (51, 11)

        Complexity: one optimizer run (num_bits) or about 2 log2(m) runs (fpr), then O(m / 64).
        """
        d = design(schema, range_sizes, num_bits=num_bits, fpr=fpr, per_attribute_k=per_attribute_k)
        return cls(schema, d.num_bits, d.config, hash=hash, seed=seed)

    # -- parameters (schema, num_bits, config, num_hashes, hash, seed: LayoutProperties) ---------
    @property
    def size_in_bits(self) -> int:
        """Bits of the filter's payload: m."""
        return self._layout.num_bits

    def __len__(self) -> int:
        """The number of records inserted (exact)."""
        return self._count

    # -- updates ----------------------------------------------------------------------------------
    def _bit_setter(self, batch: RecordBatch) -> Callable[[], None]:
        """Hash ``batch`` now; the returned function sets its bits (call it under the lock)."""
        lay = self._layout
        if lay.hash_id == HASH_SHA512:
            pos, _ = lay.positions(batch)
            return lambda: self.bits.set_many(pos)
        h, counts, _, _ = lay.hashes(batch)
        return lambda: K.set_bits_counts(self.bits.words, h, counts, np.uint64(lay.num_bits))

    def _insert_batch(self, batch: RecordBatch) -> None:
        lay = self._layout
        sums = lay.batch_stats(batch)
        parts = batch.chunks(CHUNK)
        setter = self._bit_setter(batch) if len(parts) == 1 else None  # small: hashed outside the lock
        with self._lock:
            if setter is not None:
                setter()
            else:  # large: hashed part by part, so the scratch memory stays bounded
                for part in parts:
                    self._bit_setter(part)()
            self._note_inserted(sums, batch.size)

    def _note_inserted(self, sums: list[tuple[str, int, int, float]], records: int) -> None:
        """Under the lock: the statistics of inserted records (:meth:`Layout.batch_stats`)."""
        for name, _, values, positions in sums:
            st = self._inserted[name]
            st[0] += values
            st[1] += positions
        self._count += records

    def insert(self, record: Mapping[str, Any]) -> None:
        """Insert a record: ``{name: text | number | (lo, hi) | range}``.

        Not every attribute needs a value. Raises InvalidParameterError for unknown
        attributes, values of the wrong type, values outside the scope, reversed or empty
        ranges, NaN/inf for decimals; nothing is inserted then.

        A dict of plain values (as :meth:`might_contain` takes them, numeric ones also as
        ``(lo, hi)`` / ``[lo, hi]``) of an ``"xxh64"`` filter is inserted without building a
        record batch (one compiled call per value with the compiled boundary); anything else
        takes the record path (same bits, statistics and errors).

        Complexity: O(sum over numeric entries of ((b - a)/d + r) s + k) hash evaluations.
        """
        if not self._insert_plain(record):
            owner = "RangeBloomFilter.insert"
            self._insert_batch(record_batch(self.schema, [self.schema.check_record(record, owner)], owner))

    def _insert_plain(self, record: Any) -> bool:
        """Insert a dict of plain values through the attributes' point queries
        (:mod:`bloomkit.ranges.points`): every value's entry first, then the bits and the
        statistics under the lock. False (nothing done) for anything else."""
        lay = self._layout
        entries = lay.plain_entries(record)
        if entries is None:
            return False
        # the statistics of Layout.batch_stats for one record, without building its batch (which
        # costs ~50 us, five times the rest of the insert)
        sums = [(name, 1, v, lay.expected_positions(name, 1, v)) for name, _, entry in entries
                for v in (entry_values(entry),)]
        with self._lock:
            words = self.bits.words
            for _, point, entry in entries:
                point.fill(words, entry)
            self._note_inserted(sums, 1)
        return True

    def insert_many(self, records: Any, *, attributes: Sequence[str] | None = None) -> None:
        """Insert many records at once: an iterable of records, or a table read by column name
        (pandas / polars DataFrame, pyarrow Table, mapping of columns; a range as two columns
        ``"Age.lo"`` / ``"Age.hi"``: :mod:`bloomkit.ranges.records`). ``attributes`` names the
        attributes a table gives (default: all of the schema). Every record is validated before
        anything is inserted; all keys are hashed in one pass per attribute.

        Complexity: as the sum of :meth:`insert`, vectorised.
        """
        self._insert_batch(record_batch(self.schema, records, "RangeBloomFilter.insert_many", attributes=attributes))

    def clear(self) -> None:
        """Remove every record (all bits zero, counters zero); the layout stays. Complexity: O(m / 64)."""
        with self._lock:
            self.bits.clear()
            self._inserted = {a.name: [0.0, 0.0] for a in self.schema}
            self._count = 0

    # -- queries ----------------------------------------------------------------------------------
    def _positions_of(self, record: Mapping[str, Any], owner: str) -> np.ndarray:
        return self._layout.positions(record_batch(self.schema, [record], owner))[0]

    def _all_set(self, pos: np.ndarray) -> bool:
        return bool(self.bits.test_many(pos).all())

    def might_contain(self, attribute: str, value: Any) -> bool:
        """Point query: might the attribute hold ``value`` (a text or a single number)?

        False is certain; True is wrong with probability about :meth:`attribute_fprs`.

        A plain value (an int or, for a Decimal, a float within the scope; a str) of an
        ``"xxh64"`` filter is answered in one compiled call (:mod:`bloomkit.ranges.points`);
        anything else takes the record path (same answers, same errors).

        Complexity: O(k).
        """
        point = self._layout.points.get(attribute) if type(attribute) is str else None
        if point is not None:
            found = point.test(self.bits.words, value, _CONTAINS_WHERE)
            if found is not None:
                return found
        plan = self._layout.plan(attribute)
        if plan.attr.is_numeric and isinstance(value, tuple | list | range):
            raise param_error("value", "might_contain", "a single number (use might_intersect / might_cover for ranges)", value)
        return self._all_set(self._positions_of({plan.attr.name: value}, _CONTAINS))

    def might_cover(self, attribute: str, lo: Any, hi: Any) -> bool:
        """Range query: might *every* value of [lo, hi] be in the set (BF(range) subset of BF)?

        Plain numbers (as :meth:`might_contain` takes them) of an ``"xxh64"`` filter are answered
        in one compiled call; anything else takes the record path (same answers, same errors).

        Complexity: O(((hi - lo)/d + r) s + k).
        """
        found = self._range_point(attribute, "cover", lo, hi)
        return self._cover_record(attribute, lo, hi) if found is None else found

    def _range_point(self, attribute: Any, op: str, lo: Any, hi: Any) -> bool | None:
        """``cover`` / ``intersect`` of the attribute's point query (:mod:`.points`), or None
        for the record path."""
        point = self._layout.points.get(attribute) if type(attribute) is str else None
        found: bool | None = None if point is None else getattr(point, op)(self.bits.words, lo, hi)
        return found

    def _cover_record(self, attribute: str, lo: Any, hi: Any) -> bool:
        """:meth:`might_cover` by the positions of the entry (lo, hi) as a record (every value
        the compiled call does not take)."""
        plan = self._numeric_plan(attribute, "might_cover")
        return self._all_set(self._positions_of({plan.attr.name: (lo, hi)}, "RangeBloomFilter.might_cover"))

    def might_intersect(self, attribute: str, lo: Any, hi: Any) -> bool:
        """Range query: might *some* value of [lo, hi] be in the set?

        A value of group g is present iff the s positions of groups g .. g + r - 1 and the first
        k - r s positions of group g + r are all set; the groups of [lo, hi] are tested at once
        (plain numbers of an ``"xxh64"`` filter with the compiled boundary: in one C call).

        Complexity: O(((hi - lo)/d + r) s).
        """
        found = self._range_point(attribute, "intersect", lo, hi)
        return self._intersect_groups(attribute, lo, hi) if found is None else found

    def _intersect_groups(self, attribute: str, lo: Any, hi: Any) -> bool:
        """:meth:`might_intersect` by the vectorised test of the groups of [lo, hi] (every value
        the compiled call does not take)."""
        plan = self._numeric_plan(attribute, "might_intersect")
        attr = plan.attr
        assert isinstance(attr, Numeric)
        a, b = attr.to_interval((lo, hi), "RangeBloomFilter.might_intersect")
        ga, gb = self._layout.groups(plan, a, b)
        pos = self._layout.group_positions(plan, ga, gb + plan.r)
        ok = self.bits.test_many(pos.ravel()).reshape(pos.shape)
        full_ok = ok.all(axis=1)
        last_ok = cast(np.ndarray, ok[:, : plan.last].all(axis=1))  # 2-D .all(axis=1): an array
        # window_fail[g] = number of failing full groups among g .. g + r - 1
        fails = np.concatenate([[0], np.cumsum(~full_ok)])
        idx = np.arange(gb - ga + 1)
        window_fail = fails[idx + plan.r] - fails[idx]
        return bool(((window_fail == 0) & last_ok[idx + plan.r]).any())

    def _numeric_plan(self, attribute: str, owner: str) -> Plan:
        plan = self._layout.plan(attribute)
        if not plan.attr.is_numeric:
            raise param_error("attribute", owner, "a numeric attribute", attribute)
        return plan

    def query_filter(self, query_record: Mapping[str, Any]) -> RangeBloomFilter:
        """The filter BF(query) of the query record, with this filter's layout.

        Complexity: as :meth:`insert`.
        """
        q = self._empty_like()
        q.insert(query_record)
        return q

    def matches(self, query: Mapping[str, Any] | RangeBloomFilter) -> bool:
        """Subset test BF(query) subset of BF(self) (Section II, multiple-attribute queries).

        ``query`` is a record (its ranges must be covered, its texts contained) or a filter
        from :meth:`query_filter` (same layout, else IncompatibleFiltersError).

        Complexity: O(m / 64) after building BF(query).
        """
        qf = query if isinstance(query, RangeBloomFilter) else self.query_filter(query)
        self._compatible(qf)
        return bool(not np.any(qf.bits.words & ~self.bits.words))

    # -- combination ------------------------------------------------------------------------------
    def _empty_like(self) -> RangeBloomFilter:
        return self.from_layout(self._layout)

    def _compatible(self, other: Any) -> RangeBloomFilter:
        if not isinstance(other, RangeBloomFilter):
            raise IncompatibleFiltersError(f"expected a RangeBloomFilter, got {type(other).__name__}")
        diffs = self._layout.differences(other._layout)
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
        out._count = self._count + other._count
        return out

    def __or__(self, other: RangeBloomFilter) -> RangeBloomFilter:
        return self.union(other)

    def copy(self) -> RangeBloomFilter:
        """An independent copy. Complexity: O(m / 64)."""
        with self._lock:
            out = self._empty_like()
            out._init(self._layout, self.bits.copy(), self._inserted, self._count)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RangeBloomFilter):
            return NotImplemented
        return not self._layout.differences(other._layout) and self.bits == other.bits

    __hash__ = None  # type: ignore[assignment]

    # -- model ------------------------------------------------------------------------------------
    @property
    def expected_hashed_positions(self) -> float:
        """b = sum of Eq. (11) over the inserted entries (text: k)."""
        return float(sum(v[1] for v in self._inserted.values()))

    def fill_ratio(self) -> float:
        """Observed fraction of set bits (1 - p). Complexity: O(m / 64)."""
        return self.bits.popcount() / self.num_bits

    def attribute_fprs(self, *, fill: str = "observed") -> dict[str, float]:
        """Predicted false positive rate of each attribute (Section IV: f_T is their sum).

        Numeric attributes use Eq. (14) with n = the number of inserted values (exact for one
        inserted range), text attributes ``(1-p)^k`` (Eq. 2). ``fill="observed"`` takes 1 - p
        from the bits actually set, ``"expected"`` from Eq. (36) with b =
        :attr:`expected_hashed_positions`. Attributes with nothing inserted are reported with
        the rate of a text key (no range).

        Complexity: O(attributes + m / 64).
        """
        how = FILL(fill, "fill", "RangeBloomFilter.attribute_fprs")
        q = self.fill_ratio() if how == "observed" else self._layout.fill_of(self.expected_hashed_positions)
        return self._layout.rates({n: v[0] for n, v in self._inserted.items()}, q)

    def predicted_fpr(self, *, fill: str = "observed", attributes: Sequence[str] | None = None) -> float:
        """The predicted false positive rate f_T: the sum of :meth:`attribute_fprs` over all
        attributes (Section IV), or over ``attributes`` (an upper bound on the rate of a query
        on those attributes matching a record it should not), at most 1.

        Complexity: O(attributes + m / 64).
        """
        rates = self.attribute_fprs(fill=fill)
        names = rates if attributes is None else self.schema.names_of(attributes, "attributes",
                                                                      "RangeBloomFilter.predicted_fpr")
        return min(1.0, sum(rates[n] for n in names))

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, fill and predicted rates (JSON-able; what ``bloomkit info`` prints).

        Complexity: O(attributes + m / 64)."""
        rates = self.attribute_fprs()
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "schema": self.schema.to_list(),
            "config": self.config.to_dict(), "num_bits": self.num_bits, "num_hashes": self.num_hashes,
            "hash": self.hash, "seed": self.seed, "size_in_bits": self.size_in_bits, "count": self._count,
            "count_is_exact": True, "fill_ratio": self.fill_ratio(),
            "expected_hashed_positions": self.expected_hashed_positions,
            "inserted_values": {n: v[0] for n, v in self._inserted.items()},
            "predicted_fpr": min(1.0, sum(rates.values())), "attribute_fprs": rates,
        }

    def __repr__(self) -> str:
        return (
            f"RangeBloomFilter(num_bits={self.num_bits}, k={self.config.num_hashes}, "
            f"attributes={self.schema.names}, hash={self.hash!r}, records={self._count}, "
            f"set_bits={self.bits.popcount()})"
        )

    # -- invariants / persistence -----------------------------------------------------------------
    def _check(self) -> None:
        """Assert the invariants (used by the tests after every mutation)."""
        nw = (self.num_bits + 63) // 64
        if not (self.bits.num_bits == self.num_bits and self.bits.words.shape == (nw,)):
            raise InvariantError("self.bits.num_bits == self.num_bits and self.bits.words.shape == (nw,)")
        rem = self.num_bits & 63
        if not (rem == 0 or int(self.bits.words[-1]) >> rem == 0):
            raise InvariantError("rem == 0 or int(self.bits.words[-1]) >> rem == 0")
        if not (list(self._inserted) == self.schema.names == list(self._layout.plans)):
            raise InvariantError("list(self._inserted) == self.schema.names == list(self._layout.plans)")
        for name, plan in self._layout.plans.items():
            if not (1 <= plan.s <= plan.k and plan.d >= 1 and 0 < plan.last <= plan.s):
                raise InvariantError("1 <= plan.s <= plan.k and plan.d >= 1 and 0 < plan.last <= plan.s")
            if not (plan.r == -(-plan.k // plan.s) - 1):
                raise InvariantError("plan.r == -(-plan.k // plan.s) - 1")
            n, b = self._inserted[name]
            if not (n >= 0 and b >= 0):
                raise InvariantError("n >= 0 and b >= 0")
        if not (self._count >= 0):
            raise InvariantError("self._count >= 0")
        if self.expected_hashed_positions == 0:
            if not (self.bits.popcount() == 0):
                raise InvariantError("self.bits.popcount() == 0")

    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {**self._layout.params(), "inserted": {k: list(v) for k, v in self._inserted.items()},
                  "count": self._count}
        return params, {"words": self.bits.words}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> RangeBloomFilter:
        layout = Layout.from_params(params, seed, hash_id, cls.__name__)
        m = layout.num_bits
        words = arrays["words"]
        if words.shape != ((m + 63) // 64,):
            raise FormatError(f"RangeBloomFilter words array has {words.shape[0]} words; num_bits = {m} needs {(m + 63) // 64}")
        rem = m & 63
        if rem and int(words[-1]) >> rem:
            raise FormatError("RangeBloomFilter payload has bits set beyond num_bits")
        ins = params["inserted"]
        if set(ins) != set(layout.schema.names):
            raise FormatError("RangeBloomFilter 'inserted' does not name exactly the schema's attributes")
        obj = object.__new__(cls)
        obj._init(layout, BitArray(m, words), ins, params["count"])
        return obj
