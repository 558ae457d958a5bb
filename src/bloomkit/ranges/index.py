"""ProfileIndex: many published profile filters, searched by attributes (the MFPGC use case).

Document 000 was written for MFPGC, where callees publish their attributes as Bloom filters
and a caller reaches "whoever matches" a multi-attribute query (Section II: "we are interested
in checking if a data set S1 is a subset of another set S2", i.e. BF(query) subset of
BF(profile)). The index stores N profile filters of one configuration *bit-sliced*: row j is
the j-th bit of every profile (one bit per profile, 64 profiles per uint64 word). A query sets
a few dozen bits; the profiles that have all of them are the AND of those rows, computed word
by word with an early exit once a block of words is all zero (numba kernel).

Optionally the index keeps each profile's record and verifies candidates exactly: a text
attribute must be equal, a numeric query value or range must lie inside the profile's range
(or equal its point value). Verification removes the Bloom false positives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._format import Persistable
from .._validation import check_choice, check_int, param_error
from ..errors import FormatError, InvalidParameterError
from . import _kernels as K
from .filter import _HASH_NAMES, RangeBloomFilter, RangeConfig
from .schema import Schema, Text, _Numeric

__all__ = ["ProfileIndex"]

_BLOCK = 8  # words per early-exit block (512 profiles); measured best of 4..256 at N = 1e6


class ProfileIndex(Persistable):
    """Bit-sliced index of profile filters answering ``search(query) -> ids``.

    Parameters
    ----------
    schema, num_bits, config, hash, seed :
        The configuration shared by every profile filter (see :class:`RangeBloomFilter`).
    capacity : int
        Initial number of profile slots (grows by doubling).
    store_records : bool
        Keep each profile's record for exact verification of candidates.

    Examples
    --------
    >>> from bloomkit.ranges import Integer, RangeConfig, Schema, Text
    >>> idx = ProfileIndex(Schema([Text("City"), Integer("Age", 0, 120)]), 256,
    ...                    RangeConfig(8, {"Age": (1, 2)}), store_records=True)
    >>> a = idx.add({"City": "Hsinchu", "Age": (20, 29)})
    >>> b = idx.add({"City": "Taipei", "Age": (30, 39)})
    >>> idx.search({"Age": 25}, verify=True).tolist()
    [0]
    """

    _STRUCTURE = "ranges.ProfileIndex"
    _HASH_IDS = tuple(_HASH_NAMES)

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
        self._proto = RangeBloomFilter(schema, num_bits, config, hash=hash, seed=seed)
        cap = check_int(capacity, "capacity", "ProfileIndex", lo=1)
        if not isinstance(store_records, bool):
            raise param_error("store_records", "ProfileIndex", "a bool", store_records)
        self.store_records = store_records
        nwords = (cap + 63) // 64
        self._slices = np.zeros((self.num_bits, nwords), dtype=np.uint64)
        self._active = np.zeros(nwords, dtype=np.uint64)
        self._next = 0  # ids are slot numbers, never reused
        self._count = 0
        self._records: dict[int, dict[str, Any]] = {}

    # -- properties ------------------------------------------------------------------------------
    @property
    def schema(self) -> Schema:
        return self._proto.schema

    @property
    def num_bits(self) -> int:
        return self._proto.num_bits

    @property
    def config(self) -> RangeConfig:
        return self._proto.config

    @property
    def seed(self) -> int:
        return self._proto.seed

    @property
    def _hash_id(self) -> int:
        return self._proto._hash_id

    def __len__(self) -> int:
        return self._count

    @property
    def capacity(self) -> int:
        return self._slices.shape[1] * 64

    # -- updates ---------------------------------------------------------------------------------
    def _grow(self, need: int) -> None:
        if need <= self.capacity:
            return
        nwords = self._slices.shape[1]
        new_words = max((need + 63) // 64, 2 * nwords)
        slices = np.zeros((self.num_bits, new_words), dtype=np.uint64)
        slices[:, :nwords] = self._slices
        active = np.zeros(new_words, dtype=np.uint64)
        active[:nwords] = self._active
        self._slices, self._active = slices, active

    def _normalize(self, record: Mapping[str, Any]) -> dict[str, Any]:
        rec = self.schema.check_record(record)
        out: dict[str, Any] = {}
        for name, v in rec.items():
            attr = self.schema[name]
            if isinstance(attr, Text):
                out[name] = attr.check_text(v)
            else:
                assert isinstance(attr, _Numeric)
                out[name] = list(attr.to_interval(v))
        return out

    def add(self, profile: Mapping[str, Any] | RangeBloomFilter) -> int:
        """Add a profile (a record, or a filter of the same configuration); returns its id.

        Complexity: O(k * attributes) hashing + O(set bits).
        """
        if isinstance(profile, RangeBloomFilter):
            self._proto._compatible(profile)
            if self.store_records:
                raise InvalidParameterError("The 'profile' parameter must be a record when store_records=True. Got a filter instead.")
            bf = profile
            rec = None
        else:
            rec = self._normalize(profile)
            bf = self._proto._empty_like()
            bf.insert(profile)
        slot = self._next
        self._grow(slot + 1)
        bits = np.flatnonzero(self._bit_vector(bf.bits.words)).astype(np.int64)
        K.set_columns(self._slices, bits, np.full(bits.size, slot, dtype=np.int64))
        self._active[slot >> 6] |= np.uint64(1) << np.uint64(slot & 63)
        self._next += 1
        self._count += 1
        if rec is not None and self.store_records:
            self._records[slot] = rec
        return slot

    def add_filters(self, words: np.ndarray) -> np.ndarray:
        """Bulk-add N profile filters given as an (N, ceil(m/64)) uint64 array of their words.

        Returns the new ids. Not allowed with ``store_records=True``.

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
        first = self._next
        n = w.shape[0]
        self._grow(first + n)
        K.transpose_into(self._slices, np.ascontiguousarray(w), first, self.num_bits)
        ids = np.arange(first, first + n, dtype=np.int64)
        full = np.zeros(self._active.shape[0] * 64, dtype=bool)
        full[ids] = True
        self._active |= _pack_bits(full)
        self._next += n
        self._count += n
        return ids

    def remove(self, profile_id: int) -> None:
        """Remove a profile by id (InvalidParameterError if unknown). Complexity: O(m)."""
        pid = check_int(profile_id, "profile_id", "ProfileIndex.remove", lo=0)
        if not self._is_active(pid):
            raise param_error("profile_id", "ProfileIndex.remove", "the id of a profile in the index", profile_id)
        mask = ~(np.uint64(1) << np.uint64(pid & 63))
        self._slices[:, pid >> 6] &= mask
        self._active[pid >> 6] &= mask
        self._records.pop(pid, None)
        self._count -= 1

    def _is_active(self, pid: int) -> bool:
        return pid < self._next and bool((int(self._active[pid >> 6]) >> (pid & 63)) & 1)

    def _bit_vector(self, words: np.ndarray) -> np.ndarray:
        bits = np.unpackbits(words.astype("<u8").view(np.uint8), bitorder="little")
        return bits[: self.num_bits].astype(bool)

    def get_filter(self, profile_id: int) -> RangeBloomFilter:
        """The stored filter of a profile (rebuilt from its column). Complexity: O(m)."""
        pid = check_int(profile_id, "profile_id", "ProfileIndex.get_filter", lo=0)
        if not self._is_active(pid):
            raise param_error("profile_id", "ProfileIndex.get_filter", "the id of a profile in the index", profile_id)
        col = ((self._slices[:, pid >> 6] >> np.uint64(pid & 63)) & np.uint64(1)).astype(bool)
        bf = self._proto._empty_like()
        bf.bits.set_many(np.flatnonzero(col))
        return bf

    # -- search ----------------------------------------------------------------------------------
    def query_rows(self, query: Mapping[str, Any] | RangeBloomFilter) -> np.ndarray:
        """The bit positions set by BF(query) (the rows the search ANDs)."""
        if isinstance(query, RangeBloomFilter):
            self._proto._compatible(query)
            qf = query
        else:
            qf = self._proto.query_filter(query)
        return np.flatnonzero(self._bit_vector(qf.bits.words)).astype(np.int64)

    def search(self, query: Mapping[str, Any] | RangeBloomFilter, *, mode: str = "subset", verify: bool = False) -> np.ndarray:
        """Ids of the matching profiles (sorted int64 array).

        ``mode="subset"`` (the report's test): profiles whose filter contains BF(query), i.e.
        every text is present and every query value or range is covered by the profile.
        ``mode="intersect"``: every text is present and, per numeric attribute, *some* value of
        the query range is present (profiles that publish points, queried with ranges:
        "callees aged 20-29 in this 1 km square"); one AND per group of the query range, ORed.

        With ``verify=True`` (needs ``store_records``) candidates are checked against their
        records (text equal; subset: query range inside the profile's; intersect: the ranges
        overlap), which removes Bloom false positives.

        Complexity: O(|rows of BF(query)| * N / 64) word ANDs in the worst case; with filters
        about half full each block of 512 profiles stops after ~log2(512) + 1 rows
        unless it holds a match. Intersect: that times the number of groups of the ranges.
        """
        check_choice(mode, "mode", "ProfileIndex.search", ("subset", "intersect"))
        if verify and not self.store_records:
            raise InvalidParameterError("search(verify=True) needs an index built with store_records=True")
        if mode == "subset" or isinstance(query, RangeBloomFilter):
            if mode == "intersect":
                raise InvalidParameterError("search(mode='intersect') needs a query record, not a filter")
            rows = self.query_rows(query)
            words = K.sliced_and_blocks(self._slices, rows, self._active, _BLOCK)
        else:
            rec = self.schema.check_record(query)
            points = {n: v for n, v in rec.items() if not self._is_range_query(n, v)}
            ranges = {n: v for n, v in rec.items() if n not in points}
            words = K.sliced_and_blocks(self._slices, self.query_rows(points), self._active, _BLOCK)
            for name, value in ranges.items():
                rows, offsets = self._group_rows(name, value)
                words = K.or_of_ands(self._slices, rows, offsets, words, _BLOCK)
        ids = _unpack_ids(words)
        if verify:
            if isinstance(query, RangeBloomFilter):
                raise InvalidParameterError("search(verify=True) needs a query record, not a filter")
            q = self._normalize(query)
            ids = np.array([i for i in ids.tolist() if _record_matches(self._records.get(i), q, mode)], dtype=np.int64)
        return ids

    def _is_range_query(self, name: str, value: Any) -> bool:
        attr = self.schema[name]
        if not isinstance(attr, _Numeric):
            return False
        a, b = attr.to_interval(value)
        return b > a

    def _group_rows(self, name: str, value: Any) -> tuple[np.ndarray, np.ndarray]:
        """Rows (bit positions) of one value per group of a query range, and group offsets."""
        proto = self._proto
        plan = proto._plan(name)
        attr = plan.attr
        assert isinstance(attr, _Numeric)
        a, b = attr.to_interval(value)
        ga = (a - attr.scaled_lo) // plan.d
        gb = (b - attr.scaled_lo) // plan.d
        pos = proto._group_positions(plan, ga, gb + plan.r)
        rows: list[np.ndarray] = []
        offsets = [0]
        for g in range(gb - ga + 1):
            p = np.unique(np.concatenate([pos[g : g + plan.r].ravel(), pos[g + plan.r, : plan.last]]))
            rows.append(p)
            offsets.append(offsets[-1] + p.size)
        return np.concatenate(rows).astype(np.int64), np.asarray(offsets, dtype=np.int64)

    # -- invariants / persistence ----------------------------------------------------------------
    def _check(self) -> None:
        """Assert the invariants (used by the tests)."""
        nw = self._slices.shape[1]
        assert self._slices.shape == (self.num_bits, nw) and self._active.shape == (nw,)
        assert self._count == int(sum(bin(int(w)).count("1") for w in self._active))
        assert self._next <= nw * 64
        inactive = ~self._active
        assert not np.any(self._slices & inactive[None, :]), "bits set for inactive slots"
        if self.store_records:
            live = set(_unpack_ids(self._active).tolist())
            assert set(self._records) == live

    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {
            "schema": self.schema.to_list(),
            "config": self.config.to_dict(),
            "num_bits": self.num_bits,
            "next": self._next,
            "count": self._count,
            "store_records": self.store_records,
            "records": [[k, v] for k, v in sorted(self._records.items())],
        }
        return params, {"slices": self._slices, "active": self._active}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> ProfileIndex:
        if hash_id not in _HASH_NAMES:
            raise FormatError(f"unknown hash id {hash_id} for ProfileIndex")
        obj = cls(Schema.from_list(params["schema"]), params["num_bits"], RangeConfig.from_dict(params["config"]),
                  hash=_HASH_NAMES[hash_id], seed=seed, store_records=bool(params["store_records"]))
        slices, active = arrays["slices"], arrays["active"]
        if slices.dtype != np.uint64 or active.dtype != np.uint64 or slices.ndim != 2 or active.ndim != 1:
            raise FormatError("ProfileIndex arrays must be uint64")
        if slices.shape != (obj.num_bits, active.shape[0]):
            raise FormatError(f"ProfileIndex slices shape {slices.shape} does not match ({obj.num_bits}, {active.shape[0]})")
        nxt, cnt = params["next"], params["count"]
        if not (isinstance(nxt, int) and isinstance(cnt, int) and 0 <= cnt <= nxt <= active.shape[0] * 64):
            raise FormatError("ProfileIndex counters are inconsistent")
        obj._slices = slices.astype(np.uint64).copy()
        obj._active = active.astype(np.uint64).copy()
        obj._next, obj._count = nxt, cnt
        if cnt != int(sum(bin(int(w)).count("1") for w in obj._active)) or (nxt < obj._active.shape[0] * 64 and _unpack_ids(obj._active).size and int(_unpack_ids(obj._active).max()) >= nxt):
            raise FormatError("ProfileIndex active mask does not match its counters")
        if np.any(obj._slices & ~obj._active[None, :]):
            raise FormatError("ProfileIndex has bits set for inactive slots")
        recs = params["records"]
        if not isinstance(recs, list):
            raise FormatError("ProfileIndex records must be a list")
        for item in recs:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int) and isinstance(item[1], dict)):
                raise FormatError("malformed ProfileIndex record")
            obj._records[item[0]] = item[1]
        if obj.store_records and set(obj._records) != set(_unpack_ids(obj._active).tolist()):
            raise FormatError("ProfileIndex records do not match the active profiles")
        return obj


def _pack_bits(flags: np.ndarray) -> np.ndarray:
    """Bool array (multiple of 64) -> uint64 words, bit i of word w = flags[64 w + i]."""
    return np.packbits(flags.astype(np.uint8), bitorder="little").view("<u8").astype(np.uint64)


def _unpack_ids(words: np.ndarray) -> np.ndarray:
    """Sorted positions of the set bits of uint64 words (only non-zero words are unpacked)."""
    nz = np.flatnonzero(words)
    if nz.size == 0:
        return np.zeros(0, dtype=np.int64)
    bits = np.unpackbits(words[nz].astype("<u8").view(np.uint8), bitorder="little").reshape(-1, 64)
    r, c = np.nonzero(bits)
    return (nz[r].astype(np.int64) << 6) + c.astype(np.int64)


def _record_matches(profile: dict[str, Any] | None, query: dict[str, Any], mode: str) -> bool:
    if profile is None:
        return False
    for name, qv in query.items():
        if name not in profile:
            return False
        pv = profile[name]
        if isinstance(qv, str):
            if pv != qv:
                return False
        elif mode == "subset":
            if not (pv[0] <= qv[0] and qv[1] <= pv[1]):
                return False
        elif not (pv[0] <= qv[1] and qv[0] <= pv[1]):
            return False
    return True

