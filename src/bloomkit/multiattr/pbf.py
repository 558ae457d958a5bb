"""Parallel Bloom filters with a verification table (document 004: Hua & Xiao, "A
Multi-attribute Data Structure with Parallel Bloom Filters for Network Services").

An item has p attributes. The PBF is a counter matrix of p submatrices (one per attribute),
each of q arrays (one per hash function) of m counters (Fig. 1): ``p*q*m`` counters. The
verification table stores the verification value V_a of every item (Section 3.3), which ties
the attributes of one item together. A query is the two-step check of Fig. 3: all p*q
counters non-zero, then V_a in the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from .._format import Persistable
from .._hashing import check_seed, hash64
from .._storage import CounterArray
from .._validation import check_choice, check_int, param_error
from ..errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from . import _kernels as MK
from . import model
from .hashing import (
    HASHES,
    attribute_positions,
    attribute_seed,
    hash_material,
    item_material,
    material_len,
    material_positions,
)
from .table import VerificationTable

__all__ = ["ParallelBloomFilter", "as_columns"]

_OWNER = "ParallelBloomFilter"
_CHUNK = 1 << 15
#: counter states: "exact" (only adds / removes), "upper" (after an intersection: counters are
#: upper bounds of the stored items' counts, removal stays safe), "union" (after a union:
#: counters are maxima, a removal could zero a counter another item needs, so it is refused)
_STATES = ("exact", "upper", "union")


def _is_pandas(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "pandas" and hasattr(obj, "iloc")


def as_columns(data: Any, p: int, owner: str = _OWNER) -> list[Any]:
    """The p attribute columns of a batch.

    Accepts a pyarrow Table / RecordBatch, a pandas DataFrame, a numpy structured array, a 2-D
    numpy array of shape (n, p) (one row per item), or a sequence of p columns (numpy arrays,
    pyarrow arrays or lists) of equal length. Raises InvalidParameterError otherwise.
    """
    if isinstance(data, pa.Table | pa.RecordBatch):
        cols: list[Any] = [data.column(i) for i in range(data.num_columns)]
    elif _is_pandas(data):
        cols = [data.iloc[:, i].to_numpy() for i in range(data.shape[1])]
    elif isinstance(data, np.ndarray):
        if data.dtype.names:
            cols = [data[name] for name in data.dtype.names]
        elif data.ndim == 2:
            cols = [data[:, i] for i in range(data.shape[1])]
        else:
            raise param_error("data", owner, "a 2-D array of shape (n, p) or a structured array",
                              f"array of shape {data.shape}")
    elif isinstance(data, list | tuple):
        cols = list(data)
        for c in cols:
            if isinstance(c, str | bytes) or not hasattr(c, "__len__"):
                raise param_error("data", owner, "a sequence of p columns (arrays or lists)",
                                  f"a sequence containing {type(c).__name__}")
    else:
        raise param_error("data", owner,
                          "a pyarrow Table, pandas DataFrame, numpy array or a sequence of p columns",
                          type(data).__name__)
    if len(cols) != p:
        raise param_error("data", owner, f"made of {p} attribute columns", f"{len(cols)} columns")
    lengths = {len(c) for c in cols}
    if len(lengths) > 1:
        raise param_error("data", owner, "made of columns of equal length",
                          f"lengths {sorted(lengths)}")
    return cols


class ParallelBloomFilter(Persistable):
    """Parallel Bloom filters (PBF) plus verification table for items with p attributes.

    Parameters
    ----------
    num_attributes : int
        p, attributes per item (1..64).
    num_hashes : int
        q, hash functions (arrays) per attribute (1..62).
    num_counters : int
        m, counters per array; the PBF holds p*q*m counters.
    counter_bits : {4, 8, 16, 32}
        Counter width. Counters saturate at ``2**counter_bits - 1`` (flagged by
        :attr:`overflowed`); a saturated counter never goes back down, so it can never cause
        a false negative, but the item cannot be fully removed from the PBF.
    verification : {"attenuated", "basic"}
        How V_a is formed (Section 3.3): ``sum_ij H_ij / 2^j`` (improved method, kept as the
        exact integer ``sum_ij H_ij * 2^(q-j)``) or ``sum_ij H_ij`` (basic method).
    hash_function : {"xxh64", "md5"}
        ``"xxh64"`` (default): the package's XXH64 of each attribute value (per-attribute seed)
        and the foundation's probe positions ``G_j mod m`` (q independent SplitMix64 words, as
        :func:`bloomkit._hashing.positions`); ``"md5"``: the paper's MD5 split into 32-bit
        words mod m (Section 6.2). See :mod:`bloomkit.multiattr.hashing`.
    seed : int
        Hash seed in [0, 2**64).

    Examples
    --------
    >>> f = ParallelBloomFilter(3, 4, 1024)
    >>> f.add(("10.0.0.1", "10.0.0.2", 80))
    >>> ("10.0.0.1", "10.0.0.2", 80) in f
    True
    >>> f.contains_attribute(2, 80)
    True
    """

    _STRUCTURE = "multiattr.ParallelBloomFilter"
    _HASH_IDS = tuple(HASHES.values())

    def __init__(
        self,
        num_attributes: int,
        num_hashes: int,
        num_counters: int,
        counter_bits: int = 4,
        verification: str = "attenuated",
        *,
        hash_function: str = "xxh64",
        seed: int = 0,
    ) -> None:
        self.num_attributes = check_int(num_attributes, "num_attributes", _OWNER, lo=1, hi=64)
        self.num_hashes = check_int(num_hashes, "num_hashes", _OWNER, lo=1, hi=62)
        self.num_counters = check_int(num_counters, "num_counters", _OWNER, lo=1, hi=1 << 32)
        self.counter_bits = check_choice(counter_bits, "counter_bits", _OWNER, (4, 8, 16, 32))
        self.verification = check_choice(verification, "verification", _OWNER, model.VERIFICATIONS)
        self.hash_function = check_choice(hash_function, "hash_function", _OWNER, tuple(HASHES))
        self.seed = check_seed(seed, _OWNER)
        self._hash_id = HASHES[self.hash_function]
        total = self.num_attributes * self.num_hashes * self.num_counters
        if total > 1 << 40:
            raise param_error("num_counters", _OWNER,
                              f"such that p*q*m <= 2**40 (p*q = {self.num_attributes * self.num_hashes})",
                              num_counters)
        self._vmax = model.max_verification_value(
            self.num_attributes, self.num_hashes, self.num_counters, self.verification)
        if self._vmax >= 1 << 62:
            raise param_error("num_hashes", _OWNER,
                              "small enough that p*(m-1)*(2**q - 1) < 2**62 (attenuated values are int64)",
                              num_hashes)
        self._weights = model.verification_weights(self.num_hashes, self.verification)
        self._counters = CounterArray(total, self.counter_bits)
        self._attr_seeds = [attribute_seed(self.seed, i) for i in range(self.num_attributes)]
        self._key_bits = 32 if self._vmax < (1 << 32) - 1 else 64
        self._table = VerificationTable(key_bits=self._key_bits)
        self._state = "exact"

    # -- properties ----------------------------------------------------------------------------
    @property
    def overflowed(self) -> bool:
        """True once any counter saturated (see ``counter_bits``)."""
        return bool(self._counters.overflowed)

    @property
    def nbytes(self) -> int:
        """Memory of the counters plus the verification table, in bytes."""
        return int(self._counters.data.nbytes + self._table.nbytes)

    @property
    def counter_state(self) -> str:
        """``"exact"``, ``"upper"`` (after an intersection) or ``"union"`` (after a union)."""
        return self._state

    def __len__(self) -> int:
        """Number of stored items (with multiplicity)."""
        return self._table.total

    def __repr__(self) -> str:
        return (f"ParallelBloomFilter(num_attributes={self.num_attributes}, num_hashes={self.num_hashes}, "
                f"num_counters={self.num_counters}, counter_bits={self.counter_bits}, "
                f"verification={self.verification!r}, hash_function={self.hash_function!r}, "
                f"seed={self.seed}) with {len(self)} items")

    # -- hashing -------------------------------------------------------------------------------
    def _item_positions(self, item: Any) -> np.ndarray:
        mat = self._item_material(item)
        return material_positions(mat, self.hash_function, self.num_hashes, self.num_counters)

    def _item_material(self, item: Any) -> np.ndarray:
        if isinstance(item, np.ndarray) and item.ndim == 1:
            item = item.tolist()
        if not isinstance(item, tuple | list):
            raise param_error("item", _OWNER, f"a tuple of {self.num_attributes} attribute values",
                              item)
        if len(item) != self.num_attributes:
            raise param_error("item", _OWNER, f"a tuple of {self.num_attributes} attribute values",
                              f"{len(item)} values {tuple(item)!r}")
        if self.hash_function != "md5":
            return np.array([[hash64(v, s)] for v, s in zip(item, self._attr_seeds, strict=True)],
                            dtype=np.uint64)
        return item_material(item, self.hash_function, self.seed, self.num_hashes)

    def _hash_batch(self, data: Any) -> tuple[np.ndarray, int]:
        cols = as_columns(data, self.num_attributes)
        mat = hash_material(cols, self.hash_function, self.seed, self.num_hashes)
        return mat, material_len(mat, self.hash_function)

    def _positions(self, mat: np.ndarray, lo: int, hi: int) -> np.ndarray:
        return material_positions(mat, self.hash_function, self.num_hashes, self.num_counters, lo, hi)

    def _flat_index(self, pos: np.ndarray) -> np.ndarray:
        p, q, m = self.num_attributes, self.num_hashes, self.num_counters
        base = (np.arange(p * q, dtype=np.int64) * m).reshape(1, p, q)
        return (pos + base).ravel()

    # -- core operations on positions (used by the public methods and the experiments) --------
    def _add_positions(self, pos: np.ndarray) -> None:
        vals = np.empty(pos.shape[0], dtype=np.int64)
        c = self._counters
        over = MK.pbf_add(c.data, c.width, c.max_value, np.ascontiguousarray(pos),
                          self.num_counters, self._weights, vals)
        c.overflowed |= bool(over)
        self._table.add_many(vals)

    def _probe_positions(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(passed the PBF stage, verification value) of every row of positions."""
        n = pos.shape[0]
        passed = np.empty(n, dtype=np.bool_)
        vals = np.empty(n, dtype=np.int64)
        c = self._counters
        MK.pbf_probe(c.data, c.width, np.ascontiguousarray(pos), self.num_counters, self._weights,
                     passed, vals)
        return passed, vals

    def _query_positions(self, pos: np.ndarray) -> np.ndarray:
        passed, vals = self._probe_positions(pos)
        return self._table.contains_many(vals, passed)

    def _pbf_stage_positions(self, pos: np.ndarray) -> np.ndarray:
        return self._probe_positions(pos)[0]

    def _add_material(self, mat: np.ndarray, n: int) -> None:
        if len(self) + n >= 1 << 31:
            raise InvalidParameterError(
                f"A ParallelBloomFilter holds fewer than 2**31 items; it has {len(self)} and "
                f"{n} more were given. Nothing was added.")
        if self.hash_function != "xxh64":
            for lo in range(0, n, _CHUNK):
                self._add_positions(self._positions(mat, lo, min(n, lo + _CHUNK)))
            return
        vals = np.empty(n, dtype=np.int64)
        c = self._counters
        over = MK.pbf_add_xxh64(c.data, c.width, c.max_value, np.ascontiguousarray(mat),
                                self.num_hashes, np.uint64(self.num_counters), self._weights, vals)
        c.overflowed |= bool(over)
        self._table._add_trusted(vals)

    def _probe_material(self, mat: np.ndarray, n: int, verify: bool) -> np.ndarray:
        if self.hash_function != "xxh64":
            out = np.empty(n, dtype=np.bool_)
            for lo in range(0, n, _CHUNK):
                hi = min(n, lo + _CHUNK)
                pos = self._positions(mat, lo, hi)
                out[lo:hi] = self._query_positions(pos) if verify else self._pbf_stage_positions(pos)
            return out
        passed = np.empty(n, dtype=np.bool_)
        vals = np.empty(n, dtype=np.int64)
        c = self._counters
        MK.pbf_probe_xxh64(c.data, c.width, np.ascontiguousarray(mat), self.num_hashes,
                           np.uint64(self.num_counters), self._weights, passed, vals)
        return self._table._contains_trusted(vals, passed) if verify else passed

    def _remove_positions(self, pos: np.ndarray) -> None:
        if self._state == "union":
            raise InvalidParameterError(
                "Items cannot be removed from a ParallelBloomFilter produced by a union: its "
                "counters are maxima (Section 5.2) and a removal could zero a counter that another "
                "stored item needs (a false negative)."
            )
        vals = MK.verification_values(np.ascontiguousarray(pos), self._weights)
        have = self._table.count_many(np.unique(vals))
        u, need = np.unique(vals, return_counts=True)
        short = have < need
        if short.any():
            raise InvalidParameterError(
                f"Cannot remove an item that is not stored (verification value {int(u[short][0])} "
                "is not in the table often enough); nothing was removed."
            )
        self._counters.decrement_many(self._flat_index(pos))  # all or nothing
        self._table.remove_many(vals)

    # -- public API ----------------------------------------------------------------------------
    def add(self, item: Sequence[Any]) -> None:
        """Add one item (Fig. 2): increment its p*q counters and store V_a.

        Parameters
        ----------
        item : tuple or list
            The p attribute values (str, bytes, int, float, bool or tuples of these).

        Complexity: O(p q).
        """
        mat = self._item_material(item)
        self._add_material(mat, 1)

    def add_many(self, data: Any) -> None:
        """Add a batch of items given as columns (see :func:`as_columns`).

        Every value is hashed before anything changes, so a bad value leaves the filter intact.
        Complexity: O(n p q).
        """
        mat, n = self._hash_batch(data)
        self._add_material(mat, n)

    def __contains__(self, item: Any) -> bool:
        """Two-step check of Fig. 3: all p*q counters non-zero, then V_a in the table.

        Complexity: O(p q).
        """
        return bool(self._probe_material(self._item_material(item), 1, True)[0])

    def contains_many(self, data: Any) -> np.ndarray:
        """Bool array: the two-step check for every item of a batch (columns).

        Complexity: O(n p q).
        """
        mat, n = self._hash_batch(data)
        return self._probe_material(mat, n, True)

    def pbf_stage_many(self, data: Any) -> np.ndarray:
        """Bool array: the first step of Fig. 3 only (all p*q counters non-zero).

        This is what the PBF alone answers, without the verification table. Complexity: O(n p q).
        """
        mat, n = self._hash_batch(data)
        return self._probe_material(mat, n, False)

    def remove(self, item: Sequence[Any]) -> None:
        """Remove one item (Fig. 4): decrement its counters and remove V_a from the table.

        Raises InvalidParameterError, with nothing changed, if V_a is not in the table (the
        item was never added), if a counter is already zero (possible only after an
        intersection), or if the filter came from a union (see :meth:`union`).
        Complexity: O(p q).
        """
        self._remove_positions(self._item_positions(item))

    def remove_many(self, data: Any) -> None:
        """Remove a batch of items, all or nothing (same errors as :meth:`remove`).

        Complexity: O(n p q).
        """
        mat, n = self._hash_batch(data)
        if n:
            self._remove_positions(self._positions(mat, 0, n))

    def verification_value(self, item: Sequence[Any]) -> int:
        """V_a of an item (integer form, Section 3.3). Complexity: O(p q)."""
        return int(MK.verification_values(self._item_positions(item), self._weights)[0])

    def contains_attribute(self, i: int, value: Any) -> bool:
        """Whether some stored item may have attribute i equal to ``value``.

        Answered from submatrix i alone (its q counters), so it has no false negatives and the
        false positive rate of a Bloom filter with q hashes over the distinct values of
        attribute i. Complexity: O(q).
        """
        return bool(self.contains_attribute_many(i, [value])[0])

    def contains_attribute_many(self, i: int, values: Any) -> np.ndarray:
        """Bool array: :meth:`contains_attribute` for a column of values. Complexity: O(n q)."""
        i = check_int(i, "i", _OWNER, lo=0, hi=self.num_attributes - 1)
        q, m = self.num_hashes, self.num_counters
        pos = attribute_positions(values, i, self.hash_function, self.seed, q, m)
        c = self._counters
        return MK.attribute_probe(c.data, c.width, np.ascontiguousarray(pos), i, q, m)

    # -- algebra (Section 5.2) -----------------------------------------------------------------
    def _params_tuple(self) -> tuple[Any, ...]:
        return (self.num_attributes, self.num_hashes, self.num_counters, self.counter_bits,
                self.verification, self.hash_function, self.seed)

    def _compatible(self, other: Any, op: str) -> ParallelBloomFilter:
        if not isinstance(other, ParallelBloomFilter):
            raise IncompatibleFiltersError(
                f"The {op} of a ParallelBloomFilter needs another ParallelBloomFilter. "
                f"Got {type(other).__name__} instead.")
        names = ("num_attributes (p)", "num_hashes (q)", "num_counters (m)", "counter_bits",
                 "verification", "hash_function", "seed")
        for name, a, b in zip(names, self._params_tuple(), other._params_tuple(), strict=True):
            if a != b:
                raise IncompatibleFiltersError(
                    f"ParallelBloomFilters with different {name} cannot be combined ({op}): "
                    f"{a!r} and {b!r}.")
        return other

    def _with(self, counters: np.ndarray, table: VerificationTable, state: str,
              overflowed: bool) -> ParallelBloomFilter:
        out = self.copy_empty()
        out._counters = CounterArray.from_values(counters, self.counter_bits)
        out._counters.overflowed |= overflowed
        out._table = table
        out._state = state
        return out

    def union(self, other: ParallelBloomFilter) -> ParallelBloomFilter:
        """PBF(A) | PBF(B): counter-wise maximum and union of the tables (Section 5.2, Fig. 5a).

        The document's "conservative" union. The counters are non-zero exactly where those of
        PBF(A u B) are, but a maximum can be smaller than the true count of A u B, so the result
        refuses :meth:`remove`. The table keeps the larger multiplicity of each value.
        Complexity: O(p q m + |A| + |B|).
        """
        o = self._compatible(other, "union")
        vals = np.maximum(self._counters.values(), o._counters.values())
        return self._with(vals, self._table.union(o._table), "union",
                          self.overflowed or o.overflowed)

    def intersection(self, other: ParallelBloomFilter) -> ParallelBloomFilter:
        """PBF(A) & PBF(B): counter-wise minimum and intersection of the tables (Section 5.2, Fig. 5b).

        The minimum of two counters is at least the number of items of A n B on it, so items of
        the result can still be removed. Complexity: O(p q m + |A| + |B|).
        """
        o = self._compatible(other, "intersection")
        vals = np.minimum(self._counters.values(), o._counters.values())
        state = "union" if "union" in (self._state, o._state) else "upper"
        return self._with(vals, self._table.intersection(o._table), state,
                          self.overflowed or o.overflowed)

    def __or__(self, other: ParallelBloomFilter) -> ParallelBloomFilter:
        return self.union(other)

    def __and__(self, other: ParallelBloomFilter) -> ParallelBloomFilter:
        return self.intersection(other)

    def copy_empty(self) -> ParallelBloomFilter:
        """An empty filter with the same parameters. Complexity: O(p q m)."""
        return ParallelBloomFilter(self.num_attributes, self.num_hashes, self.num_counters,
                                   self.counter_bits, self.verification,
                                   hash_function=self.hash_function, seed=self.seed)

    def copy(self) -> ParallelBloomFilter:
        """An independent copy. Complexity: O(p q m + n)."""
        out = self.copy_empty()
        out._counters = self._counters.copy()
        out._table = self._table.copy()
        out._state = self._state
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParallelBloomFilter):
            return NotImplemented
        return (self._params_tuple() == other._params_tuple() and self._counters == other._counters
                and self._table == other._table and self._state == other._state
                and self.overflowed == other.overflowed)

    __hash__ = None  # type: ignore[assignment]

    # -- model ---------------------------------------------------------------------------------
    def fill_ratios(self) -> np.ndarray:
        """(p, q) fraction of non-zero counters of every array. Complexity: O(p q m)."""
        p, q, m = self.num_attributes, self.num_hashes, self.num_counters
        c = self._counters
        return (MK.array_stats(c.data, c.width, p * q, m)[1] / m).reshape(p, q)

    def predicted_fpr(self, query: str = "fresh") -> float:
        """Model false positive rate of the two-step check for the current contents.

        ``query="fresh"`` (attribute values never stored): the product of the measured fill
        ratios of the p*q arrays (stage 1) times the probability that a random V falls on one
        of the table's values (stage 2, :func:`model.table_hit_probability`), assuming the
        stages independent. ``query="recombined"`` (each attribute from a different stored
        item): :func:`model.two_step_fpr` with n = the number of stored items.
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

    # -- persistence ---------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        values, counts = self._table.items()
        params = {
            "num_attributes": self.num_attributes,
            "num_hashes": self.num_hashes,
            "num_counters": self.num_counters,
            "counter_bits": self.counter_bits,
            "verification": self.verification,
            "hash_function": self.hash_function,
            "state": self._state,
            "overflowed": self.overflowed,
            "num_items": len(self),
        }
        return params, {"counters": self._counters.data, "values": values, "counts": counts}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int,
                    hash_id: int) -> ParallelBloomFilter:
        expected = {"num_attributes", "num_hashes", "num_counters", "counter_bits", "verification",
                    "hash_function", "state", "overflowed", "num_items"}
        if set(params) != expected or set(arrays) != {"counters", "values", "counts"}:
            raise FormatError("ParallelBloomFilter container has unexpected parameters or arrays")
        hf = params["hash_function"]
        if hf not in HASHES or HASHES[hf] != hash_id:
            raise FormatError(f"hash id {hash_id} does not match hash_function {hf!r}")
        if params["state"] not in _STATES or not isinstance(params["overflowed"], bool):
            raise FormatError("invalid counter state")
        try:
            f = cls(params["num_attributes"], params["num_hashes"], params["num_counters"],
                    params["counter_bits"], params["verification"], hash_function=hf, seed=seed)
        except InvalidParameterError as e:
            raise FormatError(f"invalid ParallelBloomFilter parameters: {e}") from None
        data = arrays["counters"]
        if data.dtype != f._counters.data.dtype or data.shape != f._counters.data.shape:
            raise FormatError("counter array has the wrong dtype or shape")
        ca = CounterArray.from_bytes(data.tobytes(), f._counters.size, f.counter_bits)
        ca.overflowed = params["overflowed"]
        values, counts = arrays["values"], arrays["counts"]
        VerificationTable._validate_items(values, counts, f._vmax)
        if int(counts.sum()) != params["num_items"]:
            raise FormatError("item count does not match the verification table")
        f._counters = ca
        f._table = VerificationTable.from_items(values, counts, f._key_bits)
        f._state = params["state"]
        if f._state == "exact" and not ca.overflowed:
            sums, _ = MK.array_stats(ca.data, ca.width, f.num_attributes * f.num_hashes, f.num_counters)
            if not bool(np.all(sums == len(f))):
                raise FormatError("counter sums do not match the number of items")
        return f

    # -- invariants ----------------------------------------------------------------------------
    def _check(self) -> None:
        """Assert the invariants (called by the tests after mutations).

        Every array received one increment per stored item, so with exact counters and no
        saturation each array sums to the number of items; after an intersection the sums are
        at least that. The verification table is checked by its own ``_check``.
        """
        p, q, m = self.num_attributes, self.num_hashes, self.num_counters
        c = self._counters
        assert c.size == p * q * m and c.width == self.counter_bits
        assert self._state in _STATES
        self._table._check()
        values, _ = self._table.items()
        if values.size:
            assert 0 <= int(values[0]) and int(values[-1]) <= self._vmax
        sums, nonzero = MK.array_stats(c.data, c.width, p * q, m)
        if not c.overflowed:
            if self._state == "exact":
                assert bool(np.all(sums == len(self))), (sums, len(self))
            elif self._state == "upper":
                assert bool(np.all(sums >= len(self)))
        if len(self) and self._state != "union":
            assert bool(np.all(nonzero >= 1))
