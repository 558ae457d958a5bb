"""ProfileIndex: many published profile filters, searched by attributes (the MFPGC use case).

Document 000 was written for MFPGC, where callees publish their attributes as Bloom filters
and a caller reaches "whoever matches" a multi-attribute query (Section II: "we are interested
in checking if a data set S1 is a subset of another set S2", i.e. BF(query) subset of
BF(profile)). The index stores N profile filters of one layout *bit-sliced*: row j is the j-th
bit of every profile (one bit per profile, 64 profiles per uint64 word). A query sets a few
dozen bits; the profiles that have all of them are the AND of those rows, computed word by word
with an early exit once a block of words is all zero (numba kernel, without the GIL).

Optionally the index keeps each profile's record (as arrays, :mod:`bloomkit.ranges.store`)
and verifies candidates exactly: a text attribute must be equal, a numeric query value or
range must lie inside the profile's range (or equal its point value). Verification removes
the Bloom false positives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Self

import numpy as np

from .._engine.hashing import TAG_STR, tag_seed
from .._engine.lazy import kernels as core
from .._engine.storage import aligned_zeros
from .._format import ArraySpec, Persistable
from .._search_mode import SEARCH_MODES
from .._validation import Bool, Int, InvariantError, Options, param_error
from ..errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from . import _index_kernels as IK
from . import _kernels as K
from ._index_query import (
    _RECOUNT,
    FalseCandidates,
    _Compiled,
    _Intervals,
    _unpack_ids,
    compile_query,
    price_query,
)
from ._index_state import _bit_vector, _fill_dtype, _is_active, _live_mask, _State
from ._keys import HASH_NAMES, HASH_SHA512
from .config import CONFIG, RangeConfig, design
from .filter import CHUNK, FILL, RangeBloomFilter
from .layout import NUM_BITS, Layout, LayoutProperties, statistics_spec
from .records import RecordBatch, one_record, record_batch
from .schema import SCHEMA, Numeric, Schema
from .store import RECORD_ARRAYS, RECORD_ARRAYS_2, RecordStore

__all__ = ["FalseCandidates", "ProfileIndex"]

_BLOCK = 8  # words per early-exit block (512 profiles); measured best of 4..256 at N = 1e6
_INTERVAL_MIN = 1 << 14  # live profiles from which a verified search may take the interval index
_INTERVAL_PRUNE = 256  # ... when it leaves at most 1/256 of the live profiles (at least 64) to check
_NO_RECORDS = (np.zeros((0, 0), np.uint8), np.zeros((0, 3), np.int64), np.zeros(1, np.int64), np.zeros(0, np.uint8))
MAX_PROFILES = 1 << 36
CAPACITY = Int(1, MAX_PROFILES)
MODE = Options(*SEARCH_MODES)


INSERTED = statistics_spec("profiles giving it", "values", "expected hashed positions")


class ProfileIndex(LayoutProperties, Persistable):
    """Bit-sliced index of profile filters answering ``search(query) -> ids``.

    Parameters
    ----------
    schema, num_bits, config, hash, seed :
        The layout shared by every profile filter (see :class:`RangeBloomFilter`).
    capacity : int
        Initial number of profile slots (grows by doubling).
    store_records : bool
        Keep each profile's record (as arrays) for exact verification of candidates
        (``search(..., verify=True)``) and :meth:`record`.

    Notes
    -----
    Ids are slot numbers ``0, 1, 2, ...`` in the order of adding, never reused after
    :meth:`remove` (until :meth:`clear`), and saved with the index. ``len()`` is the exact
    number of live profiles (``exact_len`` is True). Memory: ``m`` bits per slot for the
    filters (and its set-bit count: 2 bytes while m < 2**16), plus with records one row of
    bytes per slot: a bit per attribute, two ends per numeric attribute in the fewest bytes its
    scope needs, a dictionary code per text attribute (:mod:`bloomkit.ranges.store`), and the
    distinct texts once; a verified search on a large index adds 4 bytes per profile per
    numeric attribute its interval index builds.

    Thread safety: any number of threads may add, remove and search at once. Profiles are
    validated and hashed outside the lock; slots are allocated and bits, records and counters
    written under the index's lock (the column kernel keeps the GIL), so no profile is lost and
    ids are unique. A profile becomes visible to searches only once its columns and record are
    complete (its active bit is set last; removal clears it first). Searches take a snapshot of
    the arrays and run the AND kernel without the GIL; a search racing an add or a remove sees
    that profile or not. ``clear`` while other threads add can lose those adds. The bits-per-row
    counts that order a search's ANDs are a cache a search replaces whole (a stale one only
    orders the rows less well).

    Examples
    --------
    >>> from bloomkit.ranges import Integer, RangeConfig, Schema, Text
    >>> idx = ProfileIndex(Schema([Text("City"), Integer("Age", 0, 120)]), 256,
    ...                    RangeConfig(8, {"Age": (1, 2)}), store_records=True)
    >>> idx.add_many([{"City": "Hsinchu", "Age": (20, 29)}, {"City": "Taipei", "Age": (30, 39)}]).tolist()
    [0, 1]
    >>> idx.search({"Age": 25}, verify=True).tolist()
    [0]
    """

    _PARAMS: ClassVar[Any] = {
        "schema": SCHEMA, "config": CONFIG, "num_bits": NUM_BITS, "next": Int(0, MAX_PROFILES),
        "count": Int(0, MAX_PROFILES), "store_records": Bool(), "inserted": INSERTED,
    }
    _ARRAYS: ClassVar[Any] = {"slices": ArraySpec("<u8", 2), "active": ArraySpec("<u8", 1), **RECORD_ARRAYS,
                                **RECORD_ARRAYS_2}  # layout 2: read, converted
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
        capacity: int = 1024,
        store_records: bool = False,
    ) -> None:
        owner = "ProfileIndex"
        layout = Layout(schema, num_bits, config, hash, seed, owner)
        cap = CAPACITY(capacity, "capacity", owner)
        self._init(layout, Bool()(store_records, "store_records", owner), self._empty_state(layout, cap, store_records))

    @staticmethod
    def _empty_state(layout: Layout, capacity: int, store_records: bool) -> _State:
        nwords = (capacity + 63) // 64
        slices = aligned_zeros((layout.num_bits, nwords), np.uint64, "a ProfileIndex")
        records = RecordStore(layout.schema, nwords * 64) if store_records else None
        return _State(slices, aligned_zeros(nwords, np.uint64, "a ProfileIndex"), records,
                      np.zeros(nwords * 64, dtype=_fill_dtype(layout.num_bits)))

    def _init(self, layout: Layout, store_records: bool, state: _State, next_id: int = 0, count: int = 0,
              inserted: Mapping[str, list[float]] | None = None, set_bits: int = 0) -> None:
        self._layout = layout
        self._str_seed = np.uint64(tag_seed(layout.seed, TAG_STR))  # the seed of the keys "name:value"
        self.store_records = store_records
        self._st = state
        self._next = next_id  # ids are slot numbers, never reused
        self._count = count
        self._set_bits = set_bits  # bits set in all live columns (the observed fill)
        self._density: tuple[int, int, np.ndarray] | None = None  # (changes, count, set bits per row): _sparse_first
        self._queries: dict[tuple[str, ...], _Compiled] = {}  # compiled queries per attribute set (_compiled_query)
        self._intervals: _Intervals | None = None  # the interval index of the records (_interval_index)
        # per attribute: [profiles that gave it, values, expected hashed positions], over the profiles added
        self._inserted = {a.name: list((inserted or {}).get(a.name, [0.0, 0.0, 0.0])) for a in layout.schema}

    @classmethod
    def for_requirements(
        cls,
        schema: Schema,
        range_sizes: Mapping[str, int] | None = None,
        *,
        num_bits: int | None = None,
        fpr: float | None = None,
        per_attribute_k: bool = False,
        capacity: int = 1024,
        store_records: bool = False,
        hash: str = "xxh64",
        seed: int = 0,
    ) -> Self:
        """An index whose profile filters are configured by the two-phase optimizer (Figures
        6-7) for ``range_sizes`` and ``num_bits`` or a target f_T ``fpr``
        (:func:`~bloomkit.ranges.design`; see :meth:`RangeBloomFilter.for_requirements`).

        Complexity: the optimizer runs, then O(m x capacity / 64)."""
        d = design(schema, range_sizes, num_bits=num_bits, fpr=fpr, per_attribute_k=per_attribute_k)
        return cls(schema, d.num_bits, d.config, hash=hash, seed=seed, capacity=capacity, store_records=store_records)

    # -- properties (schema, num_bits, config, num_hashes, hash, seed: LayoutProperties) ---------
    def __len__(self) -> int:
        """The number of live profiles (exact)."""
        return self._count

    @property
    def capacity(self) -> int:
        """Profile slots allocated (ids below it need no growth)."""
        return int(self._st.slices.shape[1]) * 64

    @property
    def next_id(self) -> int:
        """The id the next profile gets."""
        return self._next

    @property
    def size_in_bits(self) -> int:
        """Bits of the bit-sliced filters: m x capacity."""
        return self.num_bits * self.capacity

    # -- updates ----------------------------------------------------------------------------------
    def _ensure(self, need: int) -> _State:
        """The state, grown (copied, then swapped in) to hold ``need`` slots. Under the lock.

        The records of a loaded index cover its profiles only; they grow to the capacity of the
        filters on the first add."""
        st = self._st
        nwords = st.slices.shape[1]
        records_ok = st.records is None or st.records.capacity >= need
        if need <= nwords * 64 and records_ok:
            return st
        slices, active, fills = st.slices, st.active, st.fills
        if need > nwords * 64:
            new_words = max((need + 63) // 64, 2 * nwords)
            slices = aligned_zeros((self.num_bits, new_words), np.uint64, "a ProfileIndex")
            slices[:, :nwords] = st.slices
            active = aligned_zeros(new_words, np.uint64, "a ProfileIndex")
            active[:nwords] = st.active
            fills = np.zeros(new_words * 64, dtype=st.fills.dtype)
            fills[: st.fills.size] = st.fills
        records = None if st.records is None else st.records.grown(slices.shape[1] * 64)
        self._st = _State(slices, active, records, fills)
        return self._st

    def _add(self, batch: RecordBatch | None, set_columns: Callable[[np.ndarray, int], int], n: int) -> np.ndarray:
        """Add ``n`` profiles: ``set_columns(slices, first)`` sets their bits (columns first ..
        first + n - 1) and returns how many were 0; ``batch`` gives records and statistics."""
        sums = [] if batch is None else self._layout.batch_stats(batch)
        with self._lock:
            first = self._next
            st = self._ensure(first + n)
            try:
                if st.records is not None and batch is not None:
                    st.records.write(first, batch)
                new = set_columns(st.slices, first)
                st.fills[first : first + n] = IK.column_fills(st.slices, first, n)
            except BaseException:  # e.g. MemoryError while hashing a part: leave no trace in the slots
                for slot in range(first, first + n):
                    IK.clear_column(st.slices, slot)
                    if st.records is not None:
                        st.records.clear(slot)
                st.fills[first : first + n] = 0
                raise
            IK.set_bit_range(st.active, first, first + n)  # visible to searches from here on
            self._next += n
            self._count += n
            self._set_bits += int(new)
            for name, profiles, values, positions in sums:
                st_attr = self._inserted[name]
                st_attr[0] += profiles
                st_attr[1] += values
                st_attr[2] += positions
        return np.arange(first, first + n, dtype=np.int64)

    def add(self, profile: Mapping[str, Any] | RangeBloomFilter) -> int:
        """Add a profile (a record, or a filter of the same layout); returns its id.

        A dict of plain values (as :meth:`RangeBloomFilter.insert` takes them) skips the record
        batch: its bits come from the attributes' point queries (same columns, record and
        statistics; tested equal), anything else takes the record path.

        Complexity: O(k x attributes) hashing + O(set bits).
        """
        if isinstance(profile, RangeBloomFilter):
            self._compatible(profile)
            if self.store_records:
                raise InvalidParameterError("The 'profile' parameter must be a record when store_records=True. Got a filter instead.")
            pos = np.flatnonzero(_bit_vector(profile.bits.words, self.num_bits)).astype(np.int64)
            return int(self._add(None, lambda sl, first: IK.set_columns(sl, pos, np.full(pos.size, first, np.int64)), 1)[0])
        plain = self._add_plain(profile)
        if plain is not None:
            return plain
        owner = "ProfileIndex.add"
        return int(self._add_batch(record_batch(self.schema, [self.schema.check_record(profile, owner)], owner))[0])

    def _add_plain(self, profile: Any) -> int | None:
        """:meth:`add` of a dict of plain values (:meth:`RangeBloomFilter.insert` takes the same)
        through the attributes' point queries (:mod:`bloomkit.ranges.points`): every value's
        entry first, then its bits in a scratch filter, its columns and record as the record
        path writes them. None (nothing done) for anything else."""
        entries = self._layout.plain_entries(profile)
        if entries is None:
            return None
        words = np.zeros((self.num_bits + 63) // 64, dtype=np.uint64)
        for _, point, entry in entries:
            point.fill(words, entry)
        pos = np.flatnonzero(_bit_vector(words, self.num_bits)).astype(np.int64)
        batch = one_record(self.schema, [(name, entry) for name, _, entry in entries])
        ids = self._add(batch, lambda sl, first: int(IK.set_columns(sl, pos, np.full(pos.size, first, np.int64))), 1)
        return int(ids[0])

    def _column_setter(self, batch: RecordBatch) -> Callable[[np.ndarray, int], int]:
        """Hash ``batch`` now; the returned function sets its bits in columns ``first + row``."""
        lay = self._layout
        if lay.hash_id == HASH_SHA512:
            pos, rows = lay.positions(batch, with_rows=True)
            assert rows is not None
            return lambda sl, first: int(IK.set_columns(sl, pos, rows + first))
        h, counts, keyrows, starts = lay.hashes(batch)
        m = np.uint64(lay.num_bits)
        used = [c.rows for c in batch.columns if len(c.rows)]
        lo = min((int(r[0]) for r in used), default=0)
        n = max((int(r[-1]) for r in used), default=-1) + 1 - lo  # the profiles of this part
        if n >= 32:  # 64 profiles at a time: one write per row and column word
            return lambda sl, first: int(K.set_columns_blocked(sl, h, counts, keyrows - lo, starts, first + lo, n, m))
        return lambda sl, first: int(K.set_columns_h1(sl, h, counts, keyrows + first, m))

    def _add_batch(self, batch: RecordBatch) -> np.ndarray:
        parts = batch.chunks(CHUNK)
        if len(parts) == 1:  # hashed outside the lock
            return self._add(batch, self._column_setter(batch), batch.size)
        with self._lock:  # a large batch: hashed part by part under the lock (bounded scratch memory)
            return self._add(batch, lambda sl, first: sum(self._column_setter(p)(sl, first) for p in parts), batch.size)

    def add_many(self, profiles: Any, *, attributes: Sequence[str] | None = None) -> np.ndarray:
        """Add many profiles at once; returns their ids (consecutive, int64).

        ``profiles`` is an iterable of records or a table read by column name (pandas / polars
        DataFrame, pyarrow Table, mapping of columns; a range as two columns ``"Age.lo"`` /
        ``"Age.hi"``: :mod:`bloomkit.ranges.records`); ``attributes`` names the attributes a
        table gives (default: all). Every profile is validated before anything is added; the keys
        are hashed in one pass per attribute and the columns set in one kernel call (per part of
        :data:`~bloomkit.ranges.filter.CHUNK` profiles: the scratch memory stays bounded).

        Complexity: O(total keys x s) hashing + O(set bits), vectorised.
        """
        return self._add_batch(record_batch(self.schema, profiles, "ProfileIndex.add_many", attributes=attributes))

    def add_filters(self, words: np.ndarray) -> np.ndarray:
        """Bulk-add N profile filters given as an (N, ceil(m/64)) uint64 array of their words.

        Returns the new ids. Not allowed with ``store_records=True``; these profiles count in
        the observed fill but not in the per-attribute statistics of :meth:`attribute_fprs`.

        Complexity: O(N m) in a numba kernel.
        """
        if self.store_records:
            raise InvalidParameterError("add_filters cannot be used with store_records=True (no records to keep)")
        w = np.asarray(words)
        nw = (self.num_bits + 63) // 64
        if w.dtype != np.uint64 or w.ndim != 2 or w.shape[1] != nw:
            raise param_error("words", "ProfileIndex.add_filters", f"a uint64 array of shape (N, {nw})", getattr(w, "shape", w))
        rem = self.num_bits & 63
        if rem and w.size and np.any(w[:, -1] >> np.uint64(rem)):
            raise param_error("words", "ProfileIndex.add_filters", f"filters with no bit set beyond {self.num_bits}", "stray bits")
        n = w.shape[0]
        ones = int(core.popcount_words(np.ascontiguousarray(w).reshape(-1)))
        with self._lock:
            first = self._next
            st = self._ensure(first + n)
            IK.transpose_into(st.slices, np.ascontiguousarray(w), first, self.num_bits)
            st.fills[first : first + n] = IK.column_fills(st.slices, first, n)
            IK.set_bit_range(st.active, first, first + n)
            self._next += n
            self._count += n
            self._set_bits += ones
        return np.arange(first, first + n, dtype=np.int64)

    def remove(self, profile_id: int) -> None:
        """Remove a profile by id (InvalidParameterError if unknown); its record is erased.

        Complexity: O(m)."""
        pid = Int(0)(profile_id, "profile_id", "ProfileIndex.remove")
        with self._lock:
            st = self._st
            if not _is_active(st.active, pid, self._next):
                raise param_error("profile_id", "ProfileIndex.remove", "the id of a profile in the index", profile_id)
            st.active[pid >> 6] &= ~(np.uint64(1) << np.uint64(pid & 63))  # invisible from here on
            self._set_bits -= int(IK.clear_column(st.slices, pid))
            st.fills[pid] = 0
            if st.records is not None:
                st.records.clear(pid)
            self._count -= 1

    def clear(self) -> None:
        """Remove every profile; ids start again at 0 and the storage shrinks to 64 slots.

        Complexity: O(m)."""
        with self._lock:
            self._init(self._layout, self.store_records, self._empty_state(self._layout, 64, self.store_records))

    def copy(self) -> ProfileIndex:
        """An independent copy (ids kept). Complexity: O(size)."""
        with self._lock:
            st = self._st
            rec = None
            if st.records is not None:
                rec = st.records.copy()
            out = object.__new__(type(self))
            out._init(self._layout, self.store_records, _State(st.slices.copy(), st.active.copy(), rec, st.fills.copy()),
                      self._next, self._count, self._inserted, self._set_bits)
        return out

    def compacted(self, capacity: int | None = None) -> tuple[ProfileIndex, np.ndarray]:
        """A new index holding this one's live profiles in slots ``0 .. len - 1`` (in id order),
        and ``old_ids``: the id each of its profiles has here (``old_ids[new_id]``).

        Ids are never reused within one index; a long-running owner that removes and adds
        (updates) compacts instead: memory is then O(live profiles) however many updates were
        made. This index is left as it was (searches running on it finish unaffected);
        filters, records (texts of removed profiles dropped), fills and the per-attribute
        statistics of :meth:`attribute_fprs` are carried over. ``capacity``: slots of the new
        index (default: the live profiles, at least 64).

        Complexity: O(m x live / 64) word writes (a bit gather of the live columns) + the
        records of the live profiles; holds this index's lock meanwhile.
        """
        cap = 64 if capacity is None else CAPACITY(capacity, "capacity", "ProfileIndex.compacted")
        with self._lock:
            st = self._st
            live = _unpack_ids(st.active)
            n = int(live.size)
            nwords = (max(cap, n) + 63) // 64
            slices = aligned_zeros((self.num_bits, nwords), np.uint64, "a ProfileIndex")
            IK.gather_columns_into(st.slices, live, slices)
            active = aligned_zeros(nwords, np.uint64, "a ProfileIndex")
            IK.set_bit_range(active, 0, n)
            fills = np.zeros(nwords * 64, dtype=st.fills.dtype)
            fills[:n] = st.fills[live]
            rec = None if st.records is None else st.records.gathered(live, nwords * 64)
            out = object.__new__(type(self))
            out._init(self._layout, self.store_records, _State(slices, active, rec, fills), n, n, self._inserted,
                      self._set_bits)
        return out, live

    def get_filter(self, profile_id: int) -> RangeBloomFilter:
        """The stored filter of a profile (rebuilt from its column). Complexity: O(m)."""
        pid = self._live_id(profile_id, "ProfileIndex.get_filter")
        st = self._st
        col = ((st.slices[:, pid >> 6] >> np.uint64(pid & 63)) & np.uint64(1)).astype(bool)
        bf = RangeBloomFilter.from_layout(self._layout)
        bf.bits.set_many(np.flatnonzero(col))
        return bf

    def record(self, profile_id: int) -> dict[str, Any]:
        """The stored record of a profile (needs ``store_records``): texts, numbers and
        ``(lo, hi)`` ranges as given (decimals at their places). Complexity: O(attributes)."""
        if not self.store_records:
            raise InvalidParameterError("record() needs an index built with store_records=True")
        pid = self._live_id(profile_id, "ProfileIndex.record")
        records = self._st.records
        assert records is not None
        return records.record(pid)

    def _live_id(self, profile_id: Any, owner: str) -> int:
        pid = Int(0)(profile_id, "profile_id", owner)
        if not _is_active(self._st.active, pid, self._next):
            raise param_error("profile_id", owner, "the id of a profile in the index", profile_id)
        return pid

    def _compatible(self, other: RangeBloomFilter) -> None:
        diffs = self._layout.differences(other.layout)
        if diffs:
            raise IncompatibleFiltersError("the filter and the index differ in " + ", ".join(diffs))

    # -- search -----------------------------------------------------------------------------------
    def query_rows(self, query: Mapping[str, Any] | RangeBloomFilter) -> np.ndarray:
        """The bit positions set by BF(query) (the rows the search ANDs), sorted.

        Complexity: as :meth:`RangeBloomFilter.insert` of the query."""
        if isinstance(query, RangeBloomFilter):
            self._compatible(query)
            return np.flatnonzero(_bit_vector(query.bits.words, self.num_bits)).astype(np.int64)
        return np.unique(self._layout.positions(self._query_batch(query, "ProfileIndex.query_rows"))[0])

    def _query_batch(self, query: Any, owner: str) -> RecordBatch:
        return record_batch(self.schema, [self.schema.check_record(query, owner)], owner)

    def search(self, query: Mapping[str, Any] | RangeBloomFilter, *, mode: str = "subset",
               verify: bool = False) -> np.ndarray:
        """Ids of the matching profiles (sorted int64 array).

        ``mode="subset"`` (the report's test): profiles whose filter contains BF(query), i.e.
        every text is present and every query value or range is covered by the profile.
        ``mode="intersect"``: every text is present and, per numeric attribute, *some* value of
        the query range is present (profiles that publish points, queried with ranges:
        "callees aged 20-29 in this 1 km square"); one AND per group of the query range, ORed.

        With ``verify=True`` (needs ``store_records``) candidates are checked against their
        records (text equal; subset: query range inside the profile's; intersect: the ranges
        overlap), which removes Bloom false positives.

        A query of plain values (numbers, ``(lo, hi)`` pairs, strings) is answered in one
        compiled call (its attribute set compiled once and cached; hashing, the AND and the
        verification in one kernel); with ``verify=True`` on an index of at least 16,384
        profiles an interval index of the records answers selective queries without the scan
        (docs/ranges.md, "The compiled search").

        Complexity: O(|rows of BF(query)| * N / 64) word ANDs in the worst case; with filters
        about half full each block of 512 profiles stops after ~log2(512) + 1 rows
        unless it holds a match. Intersect: that times the number of groups of the ranges.
        Verified through the interval index: O(numeric attributes x log N + candidates of the
        most selective numeric attribute), used when those are at most N / 256.
        """
        owner = "ProfileIndex.search"
        how = MODE(mode, "mode", owner)
        if (verify if type(verify) is bool else Bool()(verify, "verify", owner)) and not self.store_records:
            raise InvalidParameterError("search(verify=True) needs an index built with store_records=True")
        st = self._st  # one consistent snapshot of the arrays
        if isinstance(query, RangeBloomFilter):
            if how == "intersect" or verify:
                raise InvalidParameterError(f"search({'verify=True' if verify else 'mode=intersect'}) needs a query record, not a filter")
            words = IK.sliced_and_blocks(st.slices, self._sparse_first(st, self.query_rows(query)), st.active, _BLOCK)
            return _unpack_ids(words)
        compiled = self._compiled_query(st, query)
        if compiled is not None:
            found = self._fast_search(st, compiled, how, bool(verify))
            if found is not None:
                return found
        batch = self._query_batch(query, owner)
        ids = self._candidates(st, batch, how)
        if verify and ids.size:
            assert st.records is not None
            ids = ids[st.records.matches(ids, batch, how)]
        return ids

    def _compiled_query(self, st: _State, query: Any) -> tuple[_Compiled, np.ndarray, np.ndarray] | None:
        """``(compiled attribute set, vals, qbytes)`` of a query of plain values (as :meth:`add` takes them:
        :meth:`Layout.plain_entries`) for the kernels of :mod:`._kernels` (see ``Q_KIND``): the
        spec of its attribute set is compiled once and cached; per query only its values and
        key bytes are filled in. None for anything else (the record path answers, or refuses
        with the record path's message: NaN, wrong types, values out of scope, sha512)."""
        return compile_query(self._layout, st.records, self._queries, query)

    def _fast_search(self, st: _State, compiled: tuple[_Compiled, np.ndarray, np.ndarray], how: str,
                     verify: bool) -> np.ndarray | None:
        """:meth:`search` of a compiled query in one kernel call: with ``verify`` on an index of
        at least :data:`_INTERVAL_MIN` profiles, through the interval index when one numeric
        attribute leaves at most 1/:data:`_INTERVAL_PRUNE` of them to check; else (subset) the
        bit-sliced AND with hashing and verification in the same kernel. None: the record path
        (intersect mode without a selective numeric attribute)."""
        cq, vals, qbytes = compiled
        spec = cq.spec
        rec = st.records
        nslots = min(self._next, st.active.shape[0] * 64)
        if verify and rec is not None and self._count >= _INTERVAL_MIN and cq.numeric:
            iv = self._interval_index(st, nslots, cq)
            ids, ok = IK.interval_search(iv.entries, iv.fences, iv.classes, iv.built, st.active, nslots, spec, vals,
                                        qbytes, *rec.view, how == "intersect", max(64, self._count // _INTERVAL_PRUNE))
            if ok:
                return ids
        if how != "subset":
            return None
        arrays = _NO_RECORDS if rec is None else rec.view
        ids = IK.compiled_search(st.slices, st.active, nslots, self._row_density(st), spec, vals, qbytes,
                                self._str_seed, K.DIGIT_PAIRS, _BLOCK, verify, *arrays)
        return ids

    def _interval_index(self, st: _State, nslots: int, cq: _Compiled) -> _Intervals:
        """The interval index of the records (:meth:`_Intervals.current`), with the column of
        the query's numeric attribute that is expected to leave the fewest candidates: the
        smallest mean share of its scope a profile's range covers (from the statistics of the
        profiles added; chosen once per attribute set and 1/16 change of the profiles). Only
        the columns queries pick are built (4 bytes per profile each)."""
        assert st.records is not None
        pick = cq.pick
        if pick is None or abs(self._next - pick[0]) * _RECOUNT > max(pick[0], 1024):
            best, share = 0, np.inf
            for row in cq.spec:
                if row[IK.Q_KIND] == 0:
                    continue
                attr = self.schema.attributes[int(row[IK.Q_PCOL])]
                assert isinstance(attr, Numeric)
                given, values, _ = self._inserted[attr.name]
                s = (values / given if given else np.inf) / attr.scope_size
                if s < share:
                    best, share = int(row[IK.Q_RCOL]), s
            cq.pick = pick = (self._next, best)
        iv = _Intervals.current(self._intervals, self._layout.schema, st.records, nslots, 2 * self._next - self._count,
                                self._count, pick[1])
        self._intervals = iv
        return iv

    def search_candidates(self, query: Mapping[str, Any], *, mode: str = "subset") -> tuple[np.ndarray, np.ndarray]:
        """``(candidates, matches)``: what ``search(query, mode=mode)`` and ``search(query,
        mode=mode, verify=True)`` return, from one pass (needs ``store_records``): the profiles
        whose filters pass the query, and those of them whose records satisfy it exactly.
        ``len(candidates) - len(matches)`` is the number of Bloom false positives.

        Complexity: as :meth:`search` with ``verify=True``.
        """
        owner = "ProfileIndex.search_candidates"
        how = MODE(mode, "mode", owner)
        if not self.store_records:
            raise InvalidParameterError("search_candidates() needs an index built with store_records=True")
        st = self._st
        batch = self._query_batch(query, owner)
        cand = self._candidates(st, batch, how)
        assert st.records is not None
        return cand, (cand[st.records.matches(cand, batch, how)] if cand.size else cand)

    def _candidates(self, st: _State, batch: RecordBatch, how: str) -> np.ndarray:
        """Ids whose filters pass the query ``batch`` (subset: AND of BF(query)'s rows;
        intersect: per ranged attribute an OR over its groups of ANDs)."""
        if how == "subset":
            rows = np.unique(self._layout.positions(batch)[0])
            words = IK.sliced_and_blocks(st.slices, self._sparse_first(st, rows), st.active, _BLOCK)
        else:
            is_range = [c.a is not None and c.b is not None and bool(c.b[0] > c.a[0]) for c in batch.columns]
            ranged = [c for c, r in zip(batch.columns, is_range, strict=True) if r]
            points = RecordBatch(1, tuple(c for c, r in zip(batch.columns, is_range, strict=True) if not r))
            rows = np.unique(self._layout.positions(points)[0])
            words = IK.sliced_and_blocks(st.slices, self._sparse_first(st, rows), st.active, _BLOCK)
            for c in ranged:
                assert c.a is not None and c.b is not None
                rows, offsets = self._layout.range_rows(self._layout.plans[c.name], int(c.a[0]), int(c.b[0]))
                words = IK.or_of_ands(st.slices, rows, offsets, words, _BLOCK)
        return _unpack_ids(words)

    def _sparse_first(self, st: _State, rows: np.ndarray) -> np.ndarray:
        """``rows`` with the rows of fewest set bits first. The AND kernel stops a block of
        profiles once it is all zero, so the sparsest rows first end it soonest: on a million of
        Table 1's profiles (rows from 18% to 92% set) a 4-attribute search reads about half the
        words (0.80 -> 0.42 ms). Only the order of the ANDs changes, not the answer. The bits
        per row are counted (O(m N / 64)) at most once per 1/16 change of the profiles (adds +
        removes), by whichever search finds them stale.

        Complexity: O(len(rows) log len(rows)), plus the occasional count."""
        out: np.ndarray = rows[np.argsort(self._row_density(st)[rows], kind="stable")]
        return out

    def _row_density(self, st: _State) -> np.ndarray:
        """The set bits of every row (counted again at most once per 1/16 change of the profiles)."""
        changes = 2 * self._next - self._count  # adds + removes since the last clear
        dens = self._density
        if dens is None or abs(changes - dens[0]) * _RECOUNT > max(dens[1], 1024):
            nw = min(st.slices.shape[1], (self._next + 63) // 64)
            counts = np.array([core.popcount_words(st.slices[j, :nw]) for j in range(st.slices.shape[0])], dtype=np.int64)
            self._density = dens = (changes, self._count, counts)
        return dens[2]

    # -- model ------------------------------------------------------------------------------------
    def fill_ratio(self) -> float:
        """Mean fraction of set bits of the live profile filters (1 - p). Complexity: O(1)."""
        return self._set_bits / (self._count * self.num_bits) if self._count else 0.0

    def attribute_fprs(self, *, fill: str = "observed") -> dict[str, float]:
        """Predicted false positive rate of each attribute for one profile: Eq. (14) with n =
        the mean number of values per profile giving the attribute, text ``(1-p)^k``, at the
        mean fill of the live profiles (``"observed"``) or Eq. (36) at the mean expected hashed
        positions per profile (``"expected"``). The per-attribute statistics are over the
        profiles added (records; removals and :meth:`add_filters` do not change them).

        Complexity: O(attributes)."""
        how = FILL(fill, "fill", "ProfileIndex.attribute_fprs")
        if how == "observed":
            q = self.fill_ratio()
        else:
            q = self._layout.fill_of(sum(v[2] for v in self._inserted.values()) / max(self._next, 1))
        n = {k: v[1] / v[0] for k, v in self._inserted.items() if v[0] > 0}
        return self._layout.rates(n, q)

    def predicted_fpr(self, *, fill: str = "observed", attributes: Sequence[str] | None = None) -> float:
        """f_T of one profile: the sum of :meth:`attribute_fprs` over all attributes, or over
        the ``attributes`` of a query (an upper bound on the probability that a profile which
        does not match the query is returned without verification), at most 1.
        Complexity: O(attributes)."""
        rates = self.attribute_fprs(fill=fill)
        names = rates if attributes is None else self.schema.names_of(attributes, "attributes",
                                                                      "ProfileIndex.predicted_fpr")
        return min(1.0, float(sum(rates[n] for n in names)))

    def expected_false_candidates(self, query: Mapping[str, Any], *, mode: str = "subset",
                                  max_profiles: int | None = None) -> FalseCandidates:
        """The model of ``query`` against the profiles stored: how many profiles that do not
        match it are expected to pass its filter test (the Bloom false positives that
        ``search(..., verify=True)`` removes), with its variance, the number of profiles that
        do not match, and their ratio (needs ``store_records``).

        Unlike :meth:`predicted_fpr` (Eq. 14 averaged over a random point outside a typical
        range, at the mean fill), this prices the query actually asked against each profile
        actually stored: its record decides (exactly) whether it matches, and which of the
        query's key words its own keys cover (:func:`~bloomkit.ranges.model.uncovered_words`:
        a value in a group the profile inserted is a grouping false positive, certain; one
        ``i`` groups past the profile's range has ``i s`` words of its own, Eq. 13-14's
        overlapping terms; anything farther has all its words: Eq. 14's last term); each word
        the profile does not cover is set with probability ``q = c / m``, the profile's own
        fill (``c`` set bits). So a non-matching profile passes with probability ``q^J``
        (subset mode, and points in either mode: one AND over J uncovered words), times, for
        each range of an intersect query, the chance that one of the range's keys passes
        (:func:`~bloomkit.ranges.model.intersect_pass_probability`). The sum over profiles
        is the expectation; the variance assumes the profiles independent (they share the
        query's positions and, where they publish equal values, some bits, so counts spread
        somewhat more). A query that cannot be priced gives zeros with ``reason`` set (no
        profile that fails to match; m over :data:`MODEL_MAX_BITS`), never NaN.

        ``max_profiles`` bounds the work: an index with more live profiles prices those of
        every j-th column word (64 slots each, j chosen so about ``max_profiles`` are priced)
        and scales up (``priced`` says how many; the sampling variance is in ``variance``).

        Complexity: O(live profiles x query attributes) in one kernel without the GIL (about
        10 ns per profile and attribute here), or O(max_profiles x ...); plus for an
        intersect range of G groups a table of O(min(G, 256) s k m) (cached per design and G).
        """
        owner = "ProfileIndex.expected_false_candidates"
        how = MODE(mode, "mode", owner)
        cap = None if max_profiles is None else CAPACITY(max_profiles, "max_profiles", owner)
        if not self.store_records:
            raise InvalidParameterError("expected_false_candidates() needs an index built with store_records=True")
        batch = self._query_batch(query, owner)
        st = self._st
        assert st.records is not None
        return price_query(self._layout, st.records, st.active, st.fills, batch, how, cap, self.num_bits,
                           self._count, self._next)

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, fill and predicted rates (JSON-able; what ``bloomkit info`` prints).

        Complexity: O(attributes)."""
        st = self._st
        rates = self.attribute_fprs()
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "schema": self.schema.to_list(),
            "config": self.config.to_dict(), "num_bits": self.num_bits, "num_hashes": self.num_hashes,
            "hash": self.hash, "seed": self.seed, "size_in_bits": self.size_in_bits, "count": self._count,
            "count_is_exact": True, "next_id": self._next, "capacity": self.capacity,
            "store_records": self.store_records, "fill_ratio": self.fill_ratio(),
            "predicted_fpr": min(1.0, float(sum(rates.values()))), "attribute_fprs": rates,
            "nbytes": {"filters": int(st.slices.nbytes + st.active.nbytes + st.fills.nbytes),
                       "records": 0 if st.records is None else st.records.nbytes},
        }

    def __repr__(self) -> str:
        return (f"ProfileIndex(num_bits={self.num_bits}, k={self.config.num_hashes}, attributes={self.schema.names}, "
                f"profiles={self._count}, store_records={self.store_records})")

    # -- invariants / persistence -----------------------------------------------------------------
    def _check(self) -> None:
        """Assert the invariants (the tests call it after mutations, the loader after loading)."""
        st = self._st
        nw = st.slices.shape[1]
        if not (st.slices.shape == (self.num_bits, nw) and st.active.shape == (nw,)):
            raise InvariantError("st.slices.shape == (self.num_bits, nw) and st.active.shape == (nw,)")
        if not (self._count == int(core.popcount_words(st.active)) and self._next <= nw * 64):
            raise InvariantError("self._count == int(core.popcount_words(st.active)) and self._next <= nw * 64")
        if not (not _unpack_ids(st.active).size or int(_unpack_ids(st.active)[-1]) < self._next):
            raise InvariantError("not _unpack_ids(st.active).size or int(_unpack_ids(st.active)[-1]) < self._next")
        if not (not np.any(st.slices & ~st.active[None, :])):
            raise InvariantError("bits set for inactive slots")
        if not (self._set_bits == int(core.popcount_words(st.slices.reshape(-1)))):
            raise InvariantError("self._set_bits == int(core.popcount_words(st.slices.reshape(-1)))")
        if not (st.fills.shape == (nw * 64,) and np.array_equal(st.fills, IK.column_fills(st.slices, 0, nw * 64))):
            raise InvariantError("st.fills.shape == (nw * 64,) and np.array_equal(st.fills, IK.column_fills(st.slices, 0, nw * 64))")
        if not ((st.records is not None) == self.store_records):
            raise InvariantError("(st.records is not None) == self.store_records")
        if st.records is not None:
            live = _live_mask(st.active, st.records.capacity)
            if not (not st.records.rows[~live, : (len(self.schema) + 7) // 8].any()):
                raise InvariantError("no presence bits for inactive slots")
        if not (list(self._inserted) == self.schema.names):
            raise InvariantError("list(self._inserted) == self.schema.names")

    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        st = self._st
        params = {**self._layout.params(), "next": self._next, "count": self._count,
                  "store_records": self.store_records, "inserted": {k: list(v) for k, v in self._inserted.items()}}
        arrays = {"slices": st.slices, "active": st.active}
        if st.records is not None:
            arrays.update(st.records.state(self._next, _live_mask(st.active, self._next)))
        return params, arrays

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> ProfileIndex:
        layout = Layout.from_params(params, seed, hash_id, cls.__name__)
        slices, active = arrays["slices"], arrays["active"]
        nxt, cnt = params["next"], params["count"]
        if slices.shape != (layout.num_bits, active.shape[0]):
            raise FormatError(f"ProfileIndex slices shape {slices.shape} does not match ({layout.num_bits}, {active.shape[0]})")
        if not cnt <= nxt <= active.shape[0] * 64:
            raise FormatError(f"ProfileIndex counters are inconsistent: count {cnt}, next {nxt}, {active.shape[0] * 64} slots")
        ids = _unpack_ids(active)
        if cnt != ids.size or (ids.size and int(ids[-1]) >= nxt):
            raise FormatError("ProfileIndex active mask does not match its counters")
        if np.any(slices & ~active[None, :]):
            raise FormatError("ProfileIndex has bits set for inactive slots")
        if set(params["inserted"]) != set(layout.schema.names):
            raise FormatError("ProfileIndex 'inserted' does not name exactly the schema's attributes")
        store = params["store_records"]
        if not store and any(n in arrays for n in (*RECORD_ARRAYS, *RECORD_ARRAYS_2)):
            raise FormatError("ProfileIndex without stored records holds record arrays")
        records = None
        if store:
            records = RecordStore.from_state(layout.schema, arrays, nxt, _live_mask(active, nxt))
        obj = object.__new__(cls)
        obj._init(layout, store, _State(slices, active, records), nxt, cnt, params["inserted"],
                  int(core.popcount_words(slices.reshape(-1))))
        return obj
