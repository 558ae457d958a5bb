"""Parallel Bloom filters with a verification table (document 004: Hua & Xiao, "A
Multi-attribute Data Structure with Parallel Bloom Filters for Network Services").

An item has p attributes. The PBF is a counter matrix of p submatrices (one per attribute),
each of q arrays (one per hash function) of m counters (Fig. 1): ``p*q*m`` counters. The
verification table stores the verification value V_a of every item (Section 3.3), which ties
the attributes of one item together. A query is the two-step check of Fig. 3: all p*q
counters non-zero, then V_a in the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Self

import numpy as np

from .._engine.boundary import COMPILED, KIND_ITEMS, KIND_PYTHON, ItemCore, check_storage
from .._engine.hashing import key_type_mask, key_type_names
from .._engine.storage import CounterArray
from .._format import ArraySpec, Persistable
from .._membership import SetUpdate
from .._validation import (
    CAPACITY,
    FPR,
    SEED,
    Bool,
    Int,
    InvariantError,
    Optional,
    check_choice,
    param_error,
)
from ..errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from . import _kernels as MK
from . import model
from . import params as P
from .batches import as_columns, as_item, as_positions, attribute_index
from .hashing import (
    HASHES,
    attribute_positions,
    attribute_seeds,
    hash_columns,
    hash_item,
    hash_item_into,
    material_len,
    material_positions,
)
from .table import MAX_ITEMS, VerificationTable

__all__ = ["ParallelBloomFilter", "as_columns"]

_OWNER = "ParallelBloomFilter"
_CHUNK = 1 << 15
_HASH_NAMES = {v: k for k, v in HASHES.items()}

class ParallelBloomFilter(SetUpdate, ItemCore, Persistable):
    """Parallel Bloom filters (PBF) plus verification table for items with p attributes.

    Parameters
    ----------
    num_attributes : int
        p, attributes per item (1..64).
    num_hashes : int
        q, hash functions (arrays) per attribute (1..62).
    num_counters : int
        m, counters per array; the PBF holds p*q*m counters (at most 2**40).
    counter_bits : {4, 8, 16, 32}, keyword-only
        Counter width. Counters saturate at ``2**counter_bits - 1`` (flagged by
        :attr:`overflowed`); a saturated counter never goes back down, so it can never cause
        a false negative, but the item cannot be fully removed from the PBF.
    verification : {"attenuated", "basic"}, keyword-only
        How V_a is formed (Section 3.3): ``sum_ij H_ij / 2^j`` (improved method, kept as the
        exact integer ``sum_ij H_ij * 2^(q-j)``) or ``sum_ij H_ij`` (basic method).
    hash : {"xxh64", "md5"}, keyword-only
        ``"xxh64"`` (default): the package's XXH64 of each attribute value (per-attribute seed)
        and the foundation's probe positions ``G_j mod m`` (q independent SplitMix64 words, as
        :func:`bloomkit._engine.hashing.positions`); ``"md5"``: the paper's MD5 split into 32-bit
        words mod m (Section 6.2). See :mod:`bloomkit.multiattr.hashing`. (``hash_function``
        is the deprecated name.)
    seed : int, keyword-only
        Hash seed in [0, 2**64).
    attributes : list of str, keyword-only, optional
        Names of the p attributes, in order. With names, tables (DataFrame, pyarrow Table,
        mapping of columns) are read by column name and single items may be mappings; without
        names a table is refused (see :mod:`bloomkit.multiattr.batches` for the one rule).

    Notes
    -----
    ``len()`` is the exact number of stored items, with multiplicity (``exact_len`` is True).
    Batches (``add_many``, ``contains_many``, ``remove_many``, ``pbf_stage_many``) are named
    tables read by name, rows (tuples, or a 2-D array of shape (n, p)) or a list of p column
    arrays (:mod:`bloomkit.multiattr.batches`).

    Thread safety: any number of threads may add, remove and query at once. Every mutation
    (``add``, ``add_many``, ``remove``, ``remove_many``, ``clear``, ``|=``, ``add_positions``)
    runs its counter updates and the verification table's insert / growth / counts under the
    filter's lock; the counter kernels keep the GIL. A single ``add`` (``hash="xxh64"``) is
    one GIL-holding kernel for the p*q counters, the table's slots and its counts, and still
    takes the lock: another mutation may be growing the table (its rehash kernel releases the
    GIL) or replacing the contents (``clear``, ``|=``). With the compiled boundary
    (:mod:`bloomkit._engine.boundary`) a tuple item is hashed, then its counters and table slot are
    updated under the lock in one C call that holds the GIL. Queries take no lock: they release the
    GIL and read the table's slot arrays as one consistent pair, so an item whose add returned
    is always found. ``copy``, ``union``, ``intersection``, ``to_bytes`` and ``save`` read a
    consistent state under the lock.

    Examples
    --------
    >>> f = ParallelBloomFilter(3, 4, 1024, attributes=["src", "dst", "port"])
    >>> f.add(("10.0.0.1", "10.0.0.2", 80))
    >>> ("10.0.0.1", "10.0.0.2", 80) in f, {"port": 80, "dst": "10.0.0.2", "src": "10.0.0.1"} in f
    (True, True)
    >>> f.contains_attribute("port", 80), len(f)
    (True, 1)
    """

    _HASH_IDS = tuple(HASHES.values())
    _PARAMS: ClassVar[Any] = {
        "num_attributes": P.NUM_ATTRIBUTES, "num_hashes": P.PBF_NUM_HASHES, "num_counters": P.NUM_COUNTERS,
        "counter_bits": P.COUNTER_BITS, "verification": P.VERIFICATION, "attributes": P.ATTRIBUTES,
        "key_types": P.ATTRIBUTE_KEY_TYPES, "state": P.STATE, "overflowed": Bool(),
        "num_items": Int(0, MAX_ITEMS), "capacity": Optional(CAPACITY), "fpr": Optional(FPR),
    }
    _ARRAYS: ClassVar[Any] = {
        "counters": ArraySpec(None),  # the dtype follows counter_bits (checked in _from_state)
        "values": ArraySpec("<i8", lo=0, hi=(1 << 62) - 1),
        "counts": ArraySpec("<i8", lo=1, hi=MAX_ITEMS),
    }
    exact_len: ClassVar[bool] = True

    def __init__(
        self,
        num_attributes: int,
        num_hashes: int,
        num_counters: int,
        *,
        counter_bits: int = 4,
        verification: str = "attenuated",
        hash: str = "xxh64",  # the package's one name for the hash option (shadows the builtin here)
        seed: int = 0,
        attributes: Sequence[str] | None = None,
    ) -> None:
        self._configure(
            P.NUM_ATTRIBUTES(num_attributes, "num_attributes", _OWNER),
            P.PBF_NUM_HASHES(num_hashes, "num_hashes", _OWNER),
            P.NUM_COUNTERS(num_counters, "num_counters", _OWNER),
            P.COUNTER_BITS(counter_bits, "counter_bits", _OWNER),
            P.VERIFICATION(verification, "verification", _OWNER),
            P.HASH(hash, "hash", _OWNER),
            SEED(seed, "seed", _OWNER),
            P.ATTRIBUTES(list(attributes) if isinstance(attributes, Iterable) and not isinstance(attributes, str | bytes)
                         else attributes, "attributes", _OWNER),
        )
        self._set_contents(CounterArray(self._total, self.counter_bits),
                           VerificationTable(key_bits=self._key_bits), "exact", [0] * self.num_attributes)
        self.capacity: int | None = None
        self.fpr: float | None = None

    def _configure(self, p: int, q: int, m: int, b: int, verification: str, hash_name: str, seed: int,
                   attributes: list[str] | None) -> None:
        """Set the parameters and the state derived from them (no storage: nothing of the
        declared size is allocated). Raises InvalidParameterError for relations between them."""
        if p * q * m > P.MAX_TOTAL_COUNTERS:
            raise param_error("num_counters", _OWNER, f"such that p*q*m <= 2**40 (p*q = {p * q})", m)
        vmax = model.max_verification_value(p, q, m, verification)
        if vmax >= 1 << 62:
            raise param_error("num_hashes", _OWNER,
                              "small enough that p*(m-1)*(2**q - 1) < 2**62 (attenuated values are int64)", q)
        if attributes is not None and len(attributes) != p:
            raise param_error("attributes", _OWNER, f"a list of num_attributes = {p} names", attributes)
        self.num_attributes, self.num_hashes, self.num_counters = p, q, m
        self.counter_bits, self.verification, self.hash, self.seed = b, verification, hash_name, seed
        self.attributes: tuple[str, ...] | None = None if attributes is None else tuple(attributes)
        self._hash_id = HASHES[hash_name]
        self._total = p * q * m
        self._vmax = vmax
        self._weights = model.verification_weights(q, verification)
        self._key_bits = 32 if vmax < (1 << 32) - 1 else 64
        # the single-item path ("xxh64": one hashing call, one kernel)
        self._one_item = hash_name == "xxh64"
        self._maxval = (1 << b) - 1
        self._seeds = attribute_seeds(seed, p)

    def _set_contents(self, counters: CounterArray, table: VerificationTable, state: str,
                      key_masks: list[int]) -> None:
        self._counters = counters
        self._table = table
        self._state = state
        self._key_masks = key_masks
        self._noted: list[int] | None = None  # the last key-type masks noted by add
        self._h1: np.ndarray | None = np.empty(self.num_attributes, dtype=np.uint64)  # add's scratch
        self._mutex = self._lock  # the lock itself (add skips the property)

    @classmethod
    def for_requirements(
        cls,
        num_attributes: int,
        capacity: int,
        fpr: float,
        *,
        query: str = "any",
        counter_bits: int = 4,
        verification: str = "attenuated",
        hash: str = "xxh64",
        seed: int = 0,
        attributes: Sequence[str] | None = None,
    ) -> Self:
        """The smallest filter (counters plus table) holding ``capacity`` items of
        ``num_attributes`` attributes at false positive rate ``fpr``.

        q and m come from :func:`bloomkit.multiattr.model.optimal_parameters` (the model of
        :mod:`~bloomkit.multiattr.model`; ``query="any"`` bounds both the fresh and the
        recombined rate, ``"fresh"`` or ``"recombined"`` only one), which also keeps counter
        saturation unlikely at capacity. ``capacity`` and ``fpr`` are kept (saved, in
        :meth:`info`, which says ``overfilled`` past capacity).

        Complexity: about 0.5 s of model evaluations, then O(p q m) to allocate.

        >>> f = ParallelBloomFilter.for_requirements(3, 10_000, 0.01)
        >>> (f.num_hashes, f.num_counters, f.capacity)
        (9, 3364, 10000)
        """
        q, m = model.optimal_parameters(num_attributes, capacity, fpr, query=query,
                                        counter_bits=counter_bits, verification=verification)
        out = cls(num_attributes, q, m, counter_bits=counter_bits, verification=verification, hash=hash,
                  seed=seed, attributes=attributes)
        out.capacity = CAPACITY(capacity, "capacity", _OWNER)
        out.fpr = FPR(fpr, "fpr", _OWNER)
        return out

    # -- properties ----------------------------------------------------------------------------
    @property
    def overflowed(self) -> bool:
        """True once any counter saturated (see ``counter_bits``)."""
        return bool(self._counters.overflowed)

    @property
    def size_in_bits(self) -> int:
        """Bits of the structure: ``p q m counter_bits`` (the PBF) plus the verification
        table's ``slots * (key_bits + 32)`` (keys and int32 counts)."""
        return self._total * self.counter_bits + self._table.size_in_bits

    @property
    def counter_state(self) -> str:
        """``"exact"``, ``"upper"`` (after an intersection) or ``"union"`` (after a union)."""
        return self._state

    @property
    def key_types(self) -> tuple[str, ...]:
        """The kinds of attribute values stored, over all attributes ("str", "int", ...;
        "unknown" for items added by position, :meth:`add_positions`)."""
        mask = 0
        for mk in self._key_masks:
            mask |= mk
        return tuple(key_type_names(mask))

    @property
    def attribute_key_types(self) -> tuple[tuple[str, ...], ...]:
        """:attr:`key_types` of each attribute, in attribute order."""
        return tuple(tuple(key_type_names(mk)) for mk in self._key_masks)

    def __len__(self) -> int:
        """Exact number of stored items (with multiplicity). Complexity: O(1)."""
        return self._table.total

    def __repr__(self) -> str:
        names = "" if self.attributes is None else f", attributes={list(self.attributes)!r}"
        return (f"ParallelBloomFilter(num_attributes={self.num_attributes}, num_hashes={self.num_hashes}, "
                f"num_counters={self.num_counters}, counter_bits={self.counter_bits}, "
                f"verification={self.verification!r}, hash={self.hash!r}, seed={self.seed}{names}) "
                f"with {len(self)} items")

    # -- input ---------------------------------------------------------------------------------
    def _attribute_index(self, i: Any) -> int:
        return attribute_index(i, self.num_attributes, self.attributes, _OWNER)

    def _hash_one(self, item: Any) -> tuple[np.ndarray, list[int]]:
        return hash_item(as_item(item, self.num_attributes, self.attributes, _OWNER), self.hash, self.seed,
                         self.num_hashes)

    def _hash_batch(self, data: Any, method: str) -> tuple[np.ndarray, int, list[int]]:
        owner = f"{_OWNER}.{method}"
        cols = as_columns(data, self.num_attributes, self.attributes, owner=owner)
        mat, masks = hash_columns(cols, self.hash, self.seed, self.num_hashes, owner=owner)
        return mat, material_len(mat, self.hash), masks

    def _positions(self, mat: np.ndarray, lo: int, hi: int) -> np.ndarray:
        return material_positions(mat, self.hash, self.num_hashes, self.num_counters, lo, hi)

    def _check_positions(self, pos: Any) -> np.ndarray:
        return as_positions(pos, self.num_attributes, self.num_hashes, self.num_counters, _OWNER)

    # -- mutations: everything below the hashing runs under the lock ---------------------------
    def _add_positions_locked(self, pos: np.ndarray) -> None:
        vals = np.empty(pos.shape[0], dtype=np.int64)
        c = self._counters
        over = MK.pbf_add(c.data, c.width, c.max_value, pos, self.num_counters, self._weights, vals)
        c.overflowed |= bool(over)
        self._table._add_trusted(vals)

    def _add_material(self, mat: np.ndarray, n: int, masks: list[int]) -> None:
        with self._lock:
            self._table._check_room(n)  # before anything changes
            if self.hash != "xxh64":
                for lo in range(0, n, _CHUNK):
                    self._add_positions_locked(self._positions(mat, lo, min(n, lo + _CHUNK)))
            else:
                vals = np.empty(n, dtype=np.int64)
                c = self._counters
                over = MK.pbf_add_xxh64(c.data, c.width, c.max_value, np.ascontiguousarray(mat),
                                        self.num_hashes, np.uint64(self.num_counters), self._weights, vals)
                c.overflowed |= bool(over)
                self._table._add_trusted(vals)
            self._note_keys(masks)

    def _note_keys(self, masks: list[int]) -> None:
        """OR the key-type masks of an added batch in, attribute by attribute (under the lock)."""
        known = self._key_masks
        for i, mk in enumerate(masks):
            if mk & ~known[i]:
                known[i] |= mk

    def _remove_positions(self, pos: np.ndarray) -> None:
        with self._lock:
            if self._state == "union":
                raise InvalidParameterError(
                    "Items cannot be removed from a ParallelBloomFilter produced by a union: its "
                    "counters are maxima (Section 5.2) and a removal could zero a counter that another "
                    "stored item needs (a false negative).")
            vals = MK.verification_values(pos, self._weights)
            u, need = np.unique(vals, return_counts=True)
            short = self._table.count_many(u) < need
            if short.any():
                raise InvalidParameterError(
                    f"Cannot remove an item that is not stored (verification value {int(u[short][0])} "
                    "is not in the table often enough); nothing was removed.")
            p, q, m = self.num_attributes, self.num_hashes, self.num_counters
            base = (np.arange(p * q, dtype=np.int64) * m).reshape(1, p, q)
            self._counters.decrement_many((pos + base).ravel())  # all or nothing
            self._table.remove_many(vals)

    def _core_rebind(self) -> None:
        """Bind the counters and the verification table to the compiled ``add`` / ``in``
        (:mod:`bloomkit._engine.boundary`): called by them whenever the counter array or the table's
        arrays are not the ones bound (checked here as the kernels need them)."""
        if not self._one_item:  # MD5 material: the Python methods
            self._item_bind(KIND_PYTHON, None, None, 0, 0, 0, 0, (), None, None, 0, 0.0)
            return
        c, table = self._counters, self._table
        n, dtype = CounterArray.storage_shape(c.size, c.width)
        check_storage(_OWNER, c.data, dtype, n, "counter bytes" if c.width == 4 else "counters")
        keys, counts = table._slots
        check_storage(_OWNER, keys, table._empty.dtype, len(keys), "verification keys")
        check_storage(_OWNER, counts, np.dtype(np.int32), len(keys), "verification counts")
        check_storage(_OWNER, table._stats, np.dtype(np.int64), 3, "table statistics")
        self._item_bind(KIND_ITEMS, c, table, self.num_attributes, self.num_hashes, self.num_counters, c.width,
                        self._seeds, self._weights, self._mutex, MAX_ITEMS, MK.TABLE_MAX_LOAD)

    def _py_add(self, item: Any) -> None:
        """Add one item (Fig. 2): increment its p*q counters and store V_a.

        Parameters
        ----------
        item : tuple, list or mapping
            The p attribute values (str, bytes, int, float, bool or tuples of these), in
            attribute order, or a mapping ``{name: value}`` (filters with attribute names).

        With ``hash="xxh64"``: one hashing call for the p values, then one kernel for the
        counters and the table (:func:`MK.pbf_add_item`); the batch path when the table must
        grow first. Complexity: O(p q).
        """
        if not self._one_item:
            mat, masks = self._hash_one(item)
            self._add_material(mat, 1, masks)
            return
        p = self.num_attributes
        if type(item) is not tuple or len(item) != p:
            item = as_item(item, p, self.attributes, _OWNER)
        with self._mutex:  # the scratch is taken while in use: an add nested in the hashing (user
            h1, self._h1 = self._h1, None  # code of an int subclass) finds None and allocates its own
            if h1 is None:
                h1 = np.empty(p, dtype=np.uint64)
            masks = hash_item_into(item, self._seeds, h1)  # raises before anything changes
            c, table = self._counters, self._table
            keys, counts = table._slots
            over = MK.pbf_add_item(c.data, c.width, self._maxval, h1, self.num_hashes, self.num_counters,
                                   self._weights, keys, counts, table._stats, table._vacant)
            if over:
                if over < 0:  # the table must grow (or is full): the batch path
                    self._add_material(h1.reshape(p, 1), 1, masks)
                    return
                c.overflowed = True
            if masks != self._noted:
                self._note_keys(masks)
                self._noted = masks
            self._h1 = h1

    def add_many(self, data: Any) -> None:
        """Add a batch of items: a named table (by name), rows or p columns
        (:mod:`bloomkit.multiattr.batches`).

        Every value is hashed before anything changes, so a bad value leaves the filter intact.
        Complexity: O(n p q).
        """
        mat, n, masks = self._hash_batch(data, "add_many")
        self._add_material(mat, n, masks)

    def add_positions(self, positions: Any) -> None:
        """Add items given by their positions H_ij: an integer array of shape (n, p, q) with
        values in [0, m) (e.g. :meth:`positions` of another filter, or hashes computed once
        and reduced for several m). Their key types are recorded as "unknown".

        Complexity: O(n p q).
        """
        pos = self._check_positions(positions)
        with self._lock:
            self._table._check_room(pos.shape[0])
            self._add_positions_locked(pos)
            self._note_keys([key_type_mask(["unknown"])] * self.num_attributes)

    def remove(self, item: Any) -> None:
        """Remove one item (Fig. 4): decrement its counters and remove V_a from the table.

        Raises InvalidParameterError, with nothing changed, if V_a is not in the table (the
        item was never added), if a counter is already zero (possible only after an
        intersection), or if the filter came from a union (see :meth:`union`).
        Complexity: O(p q).
        """
        self._remove_positions(self._positions(self._hash_one(item)[0], 0, 1))

    def remove_many(self, data: Any) -> None:
        """Remove a batch of items (as :meth:`add_many` takes them), all or nothing (same
        errors as :meth:`remove`). Complexity: O(n p q).
        """
        mat, n, _ = self._hash_batch(data, "remove_many")
        if n:
            self._remove_positions(self._positions(mat, 0, n))

    def clear(self) -> None:
        """Remove every item (counters zero, empty table, key types forgotten); parameters stay.

        Complexity: O(p q m).
        """
        with self._lock:
            self._counters.clear()
            self._set_contents(self._counters, VerificationTable(key_bits=self._key_bits), "exact",
                               [0] * self.num_attributes)

    # -- queries: no lock (read-only kernels) --------------------------------------------------
    def _probe_positions(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(passed the PBF stage, verification value) of every row of positions."""
        n = pos.shape[0]
        passed = np.empty(n, dtype=np.bool_)
        vals = np.empty(n, dtype=np.int64)
        c = self._counters
        MK.pbf_probe(c.data, c.width, pos, self.num_counters, self._weights, passed, vals)
        return passed, vals

    def _probe_material(self, mat: np.ndarray, n: int, verify: bool) -> np.ndarray:
        if self.hash != "xxh64":
            out = np.empty(n, dtype=np.bool_)
            for lo in range(0, n, _CHUNK):
                hi = min(n, lo + _CHUNK)
                passed, vals = self._probe_positions(self._positions(mat, lo, hi))
                out[lo:hi] = self._table._contains_trusted(vals, passed) if verify else passed
            return out
        passed = np.empty(n, dtype=np.bool_)
        vals = np.empty(n, dtype=np.int64)
        c = self._counters
        MK.pbf_probe_xxh64(c.data, c.width, np.ascontiguousarray(mat), self.num_hashes,
                           np.uint64(self.num_counters), self._weights, passed, vals)
        return self._table._contains_trusted(vals, passed) if verify else passed

    def _py_contains(self, item: Any) -> bool:
        """Two-step check of Fig. 3: all p*q counters non-zero, then V_a in the table.

        With ``hash="xxh64"``: one hashing call, then one read-only kernel for both steps.
        Complexity: O(p q).
        """
        if not self._one_item:
            return bool(self._probe_material(self._hash_one(item)[0], 1, True)[0])
        p = self.num_attributes
        if type(item) is not tuple or len(item) != p:
            item = as_item(item, p, self.attributes, _OWNER)
        h1 = np.empty(p, dtype=np.uint64)
        hash_item_into(item, self._seeds, h1)
        table, c = self._table, self._counters
        keys, counts = table._slots  # one consistent pair
        found: bool = MK.pbf_contains_item(c.data, c.width, h1, self.num_hashes, self.num_counters, self._weights,
                                           keys, counts, table._vacant)
        return found

    if not COMPILED:  # else ItemCore's compiled add / in (the same counters and table)
        add = _py_add
        __contains__ = _py_contains

    def contains_many(self, data: Any) -> np.ndarray:
        """Bool array: the two-step check for every item of a batch (as :meth:`add_many`
        takes them). Complexity: O(n p q).
        """
        mat, n, _ = self._hash_batch(data, "contains_many")
        return self._probe_material(mat, n, True)

    def pbf_stage_many(self, data: Any) -> np.ndarray:
        """Bool array: the first step of Fig. 3 only (all p*q counters non-zero).

        This is what the PBF alone answers, without the verification table. Complexity: O(n p q).
        """
        mat, n, _ = self._hash_batch(data, "pbf_stage_many")
        return self._probe_material(mat, n, False)

    def positions(self, data: Any) -> np.ndarray:
        """(n, p, q) int64 positions H_ij in [0, m) of a batch (as :meth:`add_many` takes it).

        Complexity: O(n p q).
        """
        mat, n, _ = self._hash_batch(data, "positions")
        return self._positions(mat, 0, n)

    def contains_positions(self, positions: Any) -> np.ndarray:
        """:meth:`contains_many` for items given by their positions (see :meth:`add_positions`).

        Complexity: O(n p q).
        """
        passed, vals = self._probe_positions(self._check_positions(positions))
        return self._table._contains_trusted(vals, passed)

    def pbf_stage_positions(self, positions: Any) -> np.ndarray:
        """:meth:`pbf_stage_many` for items given by their positions. Complexity: O(n p q)."""
        return self._probe_positions(self._check_positions(positions))[0]

    def verification_value(self, item: Any) -> int:
        """V_a of an item (integer form, Section 3.3). Complexity: O(p q)."""
        pos = self._positions(self._hash_one(item)[0], 0, 1)
        return int(MK.verification_values(pos, self._weights)[0])

    def contains_attribute(self, i: int | str, value: Any) -> bool:
        """Whether some stored item may have attribute ``i`` (index or name) equal to ``value``.

        Answered from submatrix i alone (its q counters), so it has no false negatives and the
        false positive rate of a Bloom filter with q hashes over the distinct values of
        attribute i. Complexity: O(q).
        """
        return bool(self.contains_attribute_many(i, [value])[0])

    def contains_attribute_many(self, i: int | str, values: Any) -> np.ndarray:
        """Bool array: :meth:`contains_attribute` for a column of values (by position).

        Complexity: O(n q).
        """
        i = self._attribute_index(i)
        q, m = self.num_hashes, self.num_counters
        pos = attribute_positions(values, i, self.hash, self.seed, q, m)
        c = self._counters
        return MK.attribute_probe(c.data, c.width, np.ascontiguousarray(pos), i, q, m)

    # -- algebra (Section 5.2) -----------------------------------------------------------------
    def _params_tuple(self) -> tuple[Any, ...]:
        return (self.num_attributes, self.num_hashes, self.num_counters, self.counter_bits,
                self.verification, self.hash, self.seed, self.attributes)

    def _compatible(self, other: Any, op: str) -> ParallelBloomFilter:
        if not isinstance(other, ParallelBloomFilter):
            raise IncompatibleFiltersError(
                f"The {op} of a ParallelBloomFilter needs another ParallelBloomFilter. "
                f"Got {type(other).__name__} instead.")
        names = ("num_attributes (p)", "num_hashes (q)", "num_counters (m)", "counter_bits",
                 "verification", "hash", "seed", "attributes")
        for name, a, b in zip(names, self._params_tuple(), other._params_tuple(), strict=True):
            if a != b:
                raise IncompatibleFiltersError(
                    f"ParallelBloomFilters with different {name} cannot be combined ({op}): "
                    f"{a!r} and {b!r}.")
        return other

    def _snapshot(self) -> tuple[CounterArray, VerificationTable, str, list[int]]:
        """Copies of the contents, read under the lock (one object's lock at a time)."""
        with self._lock:
            return self._counters.copy(), self._table.copy(), self._state, list(self._key_masks)

    def _like(self, counters: CounterArray, table: VerificationTable, state: str, masks: list[int]) -> Self:
        """A filter with this one's parameters over the given contents (not copied)."""
        out = self.__class__.__new__(self.__class__)
        skip = ("_bk_lock", "_mutex", "_h1", "_counters", "_table", "_state", "_key_masks")
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k not in skip})
        out._set_contents(counters, table, state, masks)
        return out

    def _combine(self, other: ParallelBloomFilter, op: str) -> Self:
        o = self._compatible(other, op)
        return self._like(*_merged(self._snapshot(), o._snapshot(), op, self.counter_bits))

    def union(self, other: ParallelBloomFilter) -> Self:
        """PBF(A) | PBF(B): counter-wise maximum and union of the tables (Section 5.2, Fig. 5a).

        The document's "conservative" union. The counters are non-zero exactly where those of
        PBF(A u B) are, but a maximum can be smaller than the true count of A u B, so the result
        refuses :meth:`remove`. The table keeps the larger multiplicity of each value.
        Complexity: O(p q m + |A| + |B|).
        """
        return self._combine(other, "union")

    def intersection(self, other: ParallelBloomFilter) -> Self:
        """PBF(A) & PBF(B): counter-wise minimum and intersection of the tables (Section 5.2, Fig. 5b).

        The minimum of two counters is at least the number of items of A n B on it, so items of
        the result can still be removed. Complexity: O(p q m + |A| + |B|).
        """
        return self._combine(other, "intersection")

    def __or__(self, other: ParallelBloomFilter) -> Self:
        return self.union(other)

    def __and__(self, other: ParallelBloomFilter) -> Self:
        return self.intersection(other)

    def __ior__(self, other: ParallelBloomFilter) -> Self:
        o = self._compatible(other, "union")
        theirs = o._snapshot()  # the other's lock first, released before ours is taken
        with self._lock:
            ours = (self._counters, self._table, self._state, self._key_masks)
            self._set_contents(*_merged(ours, theirs, "union", self.counter_bits))
        return self

    def copy_empty(self) -> Self:
        """An empty filter with the same parameters. Complexity: O(p q m)."""
        return self._like(CounterArray(self._total, self.counter_bits), VerificationTable(key_bits=self._key_bits),
                          "exact", [0] * self.num_attributes)

    def copy(self) -> Self:
        """An independent copy. Complexity: O(p q m + n)."""
        return self._like(*self._snapshot())

    def __eq__(self, other: object) -> bool:
        """Same parameters, counters, table, counter state and overflow flag (key types are
        not compared)."""
        if not isinstance(other, ParallelBloomFilter):
            return NotImplemented
        ca, ta, sa, _ = self._snapshot()
        cb, tb, sb, _ = other._snapshot()
        return (self._params_tuple() == other._params_tuple() and ca == cb and ta == tb and sa == sb
                and ca.overflowed == cb.overflowed)

    __hash__ = None  # type: ignore[assignment]

    # -- model ---------------------------------------------------------------------------------
    def fill_ratios(self) -> np.ndarray:
        """(p, q) fraction of non-zero counters of every array. Complexity: O(p q m)."""
        p, q, m = self.num_attributes, self.num_hashes, self.num_counters
        c = self._counters
        return (MK.array_stats(c.data, c.width, p * q, m)[1] / m).reshape(p, q)

    def predicted_fpr(self, *, query: str = "fresh") -> float:
        """Model false positive rate of the two-step check for the current contents.

        ``query="fresh"`` (attribute values never stored): the product of the measured fill
        ratios of the p*q arrays (stage 1) times the probability that a random V falls on one
        of the table's values (stage 2, :func:`model.table_hit_probability`), assuming the
        stages independent. ``query="recombined"`` (each attribute from a different stored
        item; p >= 2): :func:`model.two_step_fpr` with n = the number of stored items.
        Complexity: O(p q m + n).
        """
        check_choice(query, "query", "predicted_fpr", ("fresh", "recombined"))
        p, q, m = self.num_attributes, self.num_hashes, self.num_counters
        if query == "recombined":
            return float(model.two_step_fpr(len(self), p, q, m, self.verification, "recombined"))
        stage1 = float(np.prod(self.fill_ratios()))
        if stage1 == 0.0:
            return 0.0
        values, _ = self._table.items()
        return stage1 * model.table_hit_probability(values, p, q, m, self.verification)

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, fill, counts and predicted rates (what ``bloomkit info`` prints).

        ``predicted_fpr`` is the fresh-query rate, ``predicted_fpr_recombined`` the rate of
        recombined queries (None for p = 1); ``overfilled`` is True once more than
        ``capacity`` items are stored (filters from :meth:`for_requirements`).
        Complexity: O(p q m + n).
        """
        fill = self.fill_ratios()
        n = len(self)
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "seed": self.seed, "hash": self.hash,
            "num_attributes": self.num_attributes, "num_hashes": self.num_hashes,
            "num_counters": self.num_counters, "counter_bits": self.counter_bits,
            "verification": self.verification,
            "attributes": None if self.attributes is None else list(self.attributes),
            "capacity": self.capacity, "fpr": self.fpr, "size_in_bits": self.size_in_bits,
            "table_bits": self._table.size_in_bits, "key_types": list(self.key_types),
            "attribute_key_types": [list(t) for t in self.attribute_key_types],
            "count": n, "count_is_exact": True, "distinct_verification_values": self._table.distinct,
            "fill_ratio": float(fill.mean()), "fill_ratios": fill.tolist(),
            "predicted_fpr": self.predicted_fpr(),
            "predicted_fpr_recombined": self.predicted_fpr(query="recombined") if self.num_attributes > 1 else None,
            "overflowed": self.overflowed, "counter_state": self._state,
            "overfilled": bool(self.capacity is not None and n > self.capacity),
        }

    # -- persistence ---------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        values, counts = self._table.items()
        params = {
            "num_attributes": self.num_attributes, "num_hashes": self.num_hashes,
            "num_counters": self.num_counters, "counter_bits": self.counter_bits,
            "verification": self.verification,
            "attributes": None if self.attributes is None else list(self.attributes),
            "key_types": [list(t) for t in self.attribute_key_types], "state": self._state,
            "overflowed": self.overflowed, "num_items": len(self), "capacity": self.capacity, "fpr": self.fpr,
        }
        return params, {"counters": self._counters.data, "values": values, "counts": counts}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int,
                    hash_id: int) -> ParallelBloomFilter:
        out = cls.__new__(cls)
        p, b = params["num_attributes"], params["counter_bits"]
        try:
            out._configure(p, params["num_hashes"], params["num_counters"], b, params["verification"],
                           _HASH_NAMES[hash_id], seed, params["attributes"])
        except InvalidParameterError as e:
            raise FormatError(f"invalid ParallelBloomFilter parameters: {e}") from None
        if len(params["key_types"]) != p:
            raise FormatError(f"'key_types' has {len(params['key_types'])} lists for num_attributes = {p}")
        counters = CounterArray.from_saved(arrays["counters"], out._total, b, "the 'counters' array (p*q*m counters)")
        counters.overflowed = params["overflowed"]
        values, counts = arrays["values"], arrays["counts"]
        VerificationTable.check_items(values, counts, out._vmax, params["num_items"])
        table = VerificationTable.from_items(values, counts, out._key_bits)  # charged to the load budget
        out._set_contents(counters, table, params["state"], [key_type_mask(t) for t in params["key_types"]])
        out.capacity, out.fpr = params["capacity"], params["fpr"]
        if out._state == "exact" and not counters.overflowed:
            sums, _ = MK.array_stats(counters.data, counters.width, out._total // out.num_counters,
                                     out.num_counters)
            if not bool(np.all(sums == len(out))):
                raise FormatError("the counter sums do not match 'num_items' (every array of an exact "
                                  "filter sums to the number of items)")
        return out

    # -- invariants ----------------------------------------------------------------------------
    def _check(self) -> None:
        """Assert the invariants (called by the tests after mutations and by the loader).

        Every array received one increment per stored item, so with exact counters and no
        saturation each array sums to the number of items; after an intersection the sums are
        at least that. The verification table is checked by its own ``_check``.
        """
        p, q, m = self.num_attributes, self.num_hashes, self.num_counters
        c = self._counters
        if not (c.size == p * q * m == self._total and c.width == self.counter_bits):
            raise InvariantError("c.size == p * q * m == self._total and c.width == self.counter_bits")
        if c.width == 4 and c.size % 2:
            if not (int(c.data[-1]) >> 4 == 0):
                raise InvariantError("padding nibble is not zero")
        if self._state not in P.STATE.choices:
            raise InvariantError("self._state in P.STATE.choices")
        if not (len(self._key_masks) == p and (self.attributes is None or len(self.attributes) == p)):
            raise InvariantError("len(self._key_masks) == p and (self.attributes is None or len(self.attributes) == p)")
        self._table._check()
        if not (self._table.key_bits == self._key_bits):
            raise InvariantError("self._table.key_bits == self._key_bits")
        values, _ = self._table.items()
        if values.size:
            if not (0 <= int(values[0]) and int(values[-1]) <= self._vmax):
                raise InvariantError("0 <= int(values[0]) and int(values[-1]) <= self._vmax")
        sums, nonzero = MK.array_stats(c.data, c.width, p * q, m)
        if not c.overflowed:
            if self._state == "exact":
                if not (bool(np.all(sums == len(self)))):
                    raise InvariantError((sums, len(self)))
            elif self._state == "upper":
                if not (bool(np.all(sums >= len(self)))):
                    raise InvariantError("bool(np.all(sums >= len(self)))")
        if len(self) and self._state != "union":
            if not (bool(np.all(nonzero >= 1))):
                raise InvariantError("bool(np.all(nonzero >= 1))")


_Contents = tuple[CounterArray, VerificationTable, str, list[int]]


def _merged(a: _Contents, b: _Contents, op: str, bits: int) -> _Contents:
    """The contents (counters, table, counter state, key-type masks) of the union (counter-wise
    maximum) or intersection (minimum) of two filters' contents (Section 5.2)."""
    (ca, ta, sa, ka), (cb, tb, sb, kb) = a, b
    if op == "union":
        vals, table, state = np.maximum(ca.values(), cb.values()), ta.union(tb), "union"
        masks = [x | y for x, y in zip(ka, kb, strict=True)]
    else:
        vals, table = np.minimum(ca.values(), cb.values()), ta.intersection(tb)
        state = "union" if "union" in (sa, sb) else "upper"
        masks = [x & y for x, y in zip(ka, kb, strict=True)]
    counters = CounterArray.from_values(vals, bits)
    counters.overflowed |= ca.overflowed or cb.overflowed
    return counters, table, state, masks
