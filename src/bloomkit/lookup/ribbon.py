"""Ribbon retrieval (Dillinger and Walzer 2021; Dillinger, Huebschle-Schneider, Sanders, Walzer,
"Fast Succinct Retrieval and Approximate Membership using Ribbon", SEA 2022): a static key ->
value table near the information bound, beside the Geometric filter of document 001.

Each key x gets a band of w = 64 slots starting at s(x) and a random 64-bit row c(x); the table
is the solution Z (m = (1 + eps) n slots of c = V + E bits) of the linear system over GF(2)
``XOR_{t: c_t(x) = 1} Z[s(x) + t] = v(x) XOR fp(x)`` for every key, found by banded Gaussian
elimination (kernels and layout: :mod:`bloomkit.lookup._ribbon_kernels`). A query XORs the
c-bit rows its coefficient selects and fp(x) back: the value of a stored key, a uniform c-bit
word for an absent one, which reads as a value (in [1, 2^V - 1]) with probability
(2^V - 1) / 2^c <= 2^-E: the same contract as :class:`BloomierFilter` (Eq. 2.1 of document 001
with the XOR of three cells replaced by the XOR of a band).

What this is and is not
-----------------------
* *Standard* ribbon, w = 64: the slack eps it needs grows with log n (measured: about 0.09 at
  10^5 keys, 0.11 at 10^6, 0.13-0.15 at 10^7; :func:`default_overhead`), so the space is 1.1 -
  1.15x the bound of V + log2(1/e) bits per key, not the 1.005x of bumped ribbon (BuRR), which
  is not implemented.
* Static: ``set`` / ``update`` / ``insert`` / ``remove`` raise UpdateNotSupportedError; freeze an
  updatable :class:`GeometricFilter` with :meth:`RibbonRetrieval.from_table`
  (``GeometricFilter.to_static(keys)``).
* c = V + E <= 64.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NoReturn, Self

import numpy as np

from .._columns import as_keys
from .._format import ArraySpec
from .._hashing import check_seed, hash64, hash_keys, hash_many
from .._parallel import hash_batch
from .._storage import aligned_copy, aligned_zeros
from .._validation import FPR, KEY_TYPES, Int, Optional, Real, param_error
from ..errors import BloomkitError, FormatError, UpdateNotSupportedError
from . import _ribbon_kernels as RK
from ._input import ON_DUPLICATE, check_count, combine_duplicates, key_at, read_pairs, read_values
from ._mapping import LABEL_ARRAYS, LookupBase
from .params import ERROR_BITS, MAX_ERROR_BITS, VALUE_BITS

__all__ = ["RibbonRetrieval", "default_overhead"]

_OWNER = "RibbonRetrieval"
MAX_ATTEMPTS = 1000
OVERHEAD = Real(0.0, 10.0)
"""eps = m / n - 1 asked of a build (tiny sets get at least one block of 64 slots)."""
ATTEMPTS = Int(1, MAX_ATTEMPTS)
MAX_CHECK_BITS = 64


def default_overhead(n: int) -> float:
    """eps for ``n`` keys at which a standard ribbon of width 64 is solved at the first attempt
    in most builds (measured here: failures at eps = 0.07 / 0.09 for 10^6 keys, 0.11 for 10^7):
    ``max(0.03, 0.0275 log10(n) - 0.0525)``.

    >>> round(default_overhead(10**6), 4), round(default_overhead(10**7), 4)
    (0.1125, 0.14)
    """
    return max(0.03, 0.0275 * math.log10(max(n, 1)) - 0.0525)


def solve(h1: np.ndarray, vals: np.ndarray, c: int, overhead: float | None, attempts: int, owner: str,
          dedupe: Any) -> tuple[np.ndarray, int, int, int, np.ndarray, np.ndarray]:
    """Band and solve, retrying with new salts: (Z, m, salt, attempts used, h1, vals).

    ``dedupe(h1, vals) -> (h1, vals)`` is called once, when an attempt meets a redundant or an
    inconsistent row (a key given twice is both): it removes repeated keys or raises by the
    caller's policy; that attempt is then repeated. A system without a solution after
    ``attempts`` salts raises BloomkitError naming the count and the slack."""
    deduped = False
    salt = 0
    while salt < attempts:
        n = len(h1)
        eps = default_overhead(n) if overhead is None else overhead
        m = _slots(n, eps)
        Z, redundant, status = RK.rb_build(h1, vals, np.uint64(salt), m, c)
        if (redundant or status) and not deduped:
            deduped = True
            before = len(h1)
            h1, vals = dedupe(h1, vals)
            if len(h1) != before:
                continue
        if status == 0:
            return Z, m, salt, salt + 1, h1, vals
        salt += 1
    raise BloomkitError(
        f"{owner}: the ribbon system of {len(h1)} keys in {m} slots (eps = {eps:.3g}) had no solution in "
        f"{attempts} attempts; raise overhead (or max_attempts)")


def _slots(n: int, eps: float) -> int:
    from ..static.model import ribbon_slots

    return ribbon_slots(n, eps)


class RibbonRetrieval(LookupBase):
    """Static key -> value table: standard ribbon retrieval, w = 64.

    Build with :meth:`build` (or freeze a Geometric filter: :meth:`from_table`); values are
    integers in [1, 2^V - 1] or str labels; an absent key gets 0 / None (or ``default``) except
    with probability (2^V - 1) / 2^c <= 2^-E (:meth:`predicted_fpr`).

    Notes
    -----
    Thread safety: a built table is never written (updates raise), so any number of threads may
    query it at once; the query kernel releases the GIL.

    Examples
    --------
    >>> t = RibbonRetrieval.build(["x", "y", "z"], [5, 7, 9], value_bits=4, fpr=2**-10)
    >>> t.get("x"), t["z"], t.get_many(["y", "x"]).tolist()
    (5, 9, [7, 5])
    """

    _STRUCTURE = "lookup.RibbonRetrieval"
    _PARAMS: ClassVar[Any] = {
        "value_bits": VALUE_BITS, "error_bits": ERROR_BITS, "fpr": FPR, "num_slots": Int(64, 1 << 50), "salt": Int(0, MAX_ATTEMPTS - 1), "count": Int(0), "key_types": KEY_TYPES,
    }
    _ARRAYS: ClassVar[Any] = {"solution": ArraySpec("<u8"), **LABEL_ARRAYS}

    def __init__(self) -> None:  # use build(); this is the empty table of 64 slots
        self.seed = 0
        self.value_bits = 16
        self.error_bits = 16
        self.fpr = 2.0**-16
        self._m = 64
        self._salt = 0
        self._count = 0
        self._attempts = 0
        self._dups = 0
        self._setup()

    def _setup(self, Z: np.ndarray | None = None) -> None:
        self._c = self.value_bits + self.error_bits
        self._Z = aligned_zeros(self._m // 64 * self._c, np.uint64, "the ribbon solution") if Z is None else Z

    @classmethod
    def build(
        cls,
        keys: Any,
        values: Any = None,
        *,
        value_bits: int = 16,
        fpr: float = 2.0**-16,
        error_bits: int | None = None,
        overhead: float | None = None,
        seed: int = 0,
        on_duplicate: str = "error",
        max_attempts: int = 16,
    ) -> Self:
        """Solve the ribbon system of ``keys -> values``.

        Parameters
        ----------
        keys : mapping, or a column: list, tuple, numpy, pyarrow, pandas, polars
            By position; a mapping gives the values too.
        values : column of int or str, optional
            Integers in [1, 2^V - 1], or str labels (numbered by a saved ValueCodec).
        value_bits : int
            V; V + E <= 64.
        fpr : float
            e; E = ceil(log2 1/e) unless ``error_bits`` is given.
        overhead : float, optional
            eps = m / n - 1 (default :func:`default_overhead`).
        seed : int
        on_duplicate : {"error", "last", "sum", "max", "min"}
            A key given twice raises (default), or its values are combined (labels: "error",
            "last"). Detected while solving: input without repeats is never sorted.
        max_attempts : int
            Salts tried before giving up (BloomkitError naming the slack).

        Returns
        -------
        RibbonRetrieval

        Complexity: O(n w / 64 + m c / 64 * 64) per attempt: each row XORs a few earlier rows
        (expected O(1) for eps above the threshold), back-substitution costs c parities per slot;
        working memory 16 bytes per key (the keys sorted by band) and 16 bytes per slot.
        """
        owner = f"{_OWNER}.build"
        dup = ON_DUPLICATE(on_duplicate, "on_duplicate", owner)
        v = VALUE_BITS(value_bits, "value_bits", owner)
        e = FPR(fpr, "fpr", owner)
        eb = Optional(ERROR_BITS)(error_bits, "error_bits", owner)
        if eb is None:
            eb = max(1, math.ceil(math.log2(1.0 / e) - 1e-12))
            if eb > MAX_ERROR_BITS:
                raise param_error("fpr", owner, f"such that ceil(log2(1/fpr)) <= {MAX_ERROR_BITS}", fpr)
        if v + eb > MAX_CHECK_BITS:
            raise param_error("error_bits" if error_bits is not None else "fpr", owner,
                              f"such that value_bits + error_bits <= {MAX_CHECK_BITS} (V = {v})",
                              error_bits if error_bits is not None else fpr)
        eps = Optional(OVERHEAD)(overhead, "overhead", owner)
        attempts = ATTEMPTS(max_attempts, "max_attempts", owner)
        sd = check_seed(seed, owner)
        keys, raw, n = read_pairs(keys, values, owner)
        vals, codec = read_values(raw, v, owner)
        check_count(vals, n, owner)
        h1, tags = hash_keys(keys, sd, owner=owner)
        box: dict[str, Any] = {"keys": keys, "dups": 0}

        def dedupe(h: np.ndarray, vs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            k2, h2, v2, d = combine_duplicates(box["keys"], h, vs, sd, v, dup, owner, labels=codec is not None,
                                               collisions="error")
            box["keys"], box["dups"] = k2, d
            return h2, v2

        return cls._solved(h1, vals, v, eb, e, eps, sd, codec, tags, attempts, owner, dedupe, box)

    @classmethod
    def _solved(cls, h1: np.ndarray, vals: np.ndarray, v: int, eb: int, e: float, eps: float | None, sd: int,
                codec: Any, tags: int, attempts: int, owner: str, dedupe: Any, box: dict[str, Any]) -> Self:
        Z, m, salt, used, h1, vals = solve(h1, vals, v + eb, eps, attempts, owner, dedupe)
        t = cls.__new__(cls)
        t.seed, t.value_bits, t.error_bits, t.fpr = sd, v, eb, e
        t._m, t._salt, t._attempts, t._count, t._dups = m, salt, used, len(h1), box["dups"]
        t._setup(aligned_copy(Z))
        t._codec = codec
        t._key_mask = 0
        t._note_keys(tags)
        return t

    @classmethod
    def from_table(
        cls, table: LookupBase, keys: Any, *, fpr: float | None = None, error_bits: int | None = None,
        overhead: float | None = None, max_attempts: int = 16,
    ) -> Self:
        """Freeze an updatable table (a :class:`GeometricFilter`) into ribbon retrieval: the
        values of ``keys`` as the table answers them, the table's V, labels (its ValueCodec)
        and seed; ``fpr`` defaults to the table's.

        A Geometric filter keeps fingerprints, not keys, so the keys it holds must be given; a
        key the table finds absent raises InvalidParameterError naming it.

        Complexity: one batch query of the table plus a build.
        """
        owner = f"{_OWNER}.from_table"
        if not isinstance(table, LookupBase):
            raise param_error("table", owner, "a bloomkit lookup table (GeometricFilter, ...)", table)
        batch = as_keys(keys, "keys", owner)
        ids, _probes = table._ids_of(batch)
        ids = np.asarray(ids, dtype=np.uint64)
        if len(ids) == 0:
            raise param_error("keys", owner, "not empty", "0 keys")
        if table.codec is not None:
            ids = np.where(ids > len(table.codec), 0, ids)
        missing = np.flatnonzero(ids == 0)
        if len(missing):
            raise param_error("keys", owner, "keys the table holds",
                              f"{key_at(batch, int(missing[0]))!r} (index {int(missing[0])}), which it finds absent")
        v = table.value_bits
        e = FPR(table.fpr if fpr is None else fpr, "fpr", owner)
        eb = Optional(ERROR_BITS)(error_bits, "error_bits", owner)
        if eb is None:
            eb = max(1, math.ceil(math.log2(1.0 / e) - 1e-12))
        if v + eb > MAX_CHECK_BITS:
            raise param_error("fpr", owner, f"such that value_bits + error_bits <= {MAX_CHECK_BITS} (V = {v})", e)
        eps = Optional(OVERHEAD)(overhead, "overhead", owner)
        attempts = ATTEMPTS(max_attempts, "max_attempts", owner)
        h1, tags = hash_keys(batch, table.seed, owner=owner)
        box: dict[str, Any] = {"keys": batch, "dups": 0}

        def dedupe(h: np.ndarray, vs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            k2, h2, v2, d = combine_duplicates(box["keys"], h, vs, table.seed, v, "last", owner, collisions="error")
            box["keys"], box["dups"] = k2, d  # a key given twice has one value in the table
            return h2, v2

        codec = None if table.codec is None else table.codec.copy()
        return cls._solved(h1, ids, v, eb, e, eps, table.seed, codec, tags, attempts, owner, dedupe, box)

    # ------------------------------------------------------------------ queries
    def _query(self, h1: np.ndarray) -> np.ndarray:
        out = np.empty(len(h1), dtype=np.uint64)
        RK.rb_query(h1, self._Z, np.uint64(self._salt), self._m, self._c, out)
        out[out >> np.uint64(self.value_bits) != 0] = 0
        return out

    def _ids_of(self, keys: Any) -> tuple[np.ndarray, int]:
        """Value ids of a batch on several threads; 2 blocks of c words read per key.

        Complexity: O(n c)."""
        _h1, _parts, res = hash_batch(keys, lambda ks: hash_many(ks, self.seed), lambda h, lo, hi: self._query(h[lo:hi]))
        out = res[0] if len(res) == 1 else np.concatenate(res)
        return out, 2 * len(out)

    def _id_of(self, key: Any) -> int:
        """Value id of one key. Complexity: O(c)."""
        return int(self._query(np.array([hash64(key, self.seed)], dtype=np.uint64))[0])

    # ------------------------------------------------------------------ no updates
    def _refuse(self, what: str) -> UpdateNotSupportedError:
        return UpdateNotSupportedError(
            f"RibbonRetrieval.{what}: a ribbon table cannot be changed after it is solved (every slot is "
            "shared by the keys' equations); rebuild it, or use GeometricFilter, which supports "
            "set/update/insert/remove"
        )

    def _set_ident(self, h1: int, hb: int, vid: int, *, key: Any = None, present_only: bool = False) -> NoReturn:
        raise self._refuse("set")

    def set(self, key: Any, value: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError."""
        raise self._refuse("set")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError."""
        raise self._refuse("update")

    def insert(self, key: Any, value: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError."""
        raise self._refuse("insert")

    def remove(self, key: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError."""
        raise self._refuse("remove")

    def clear(self) -> None:
        """Remove every key (the solution zero; labels forgotten); the size stays. Complexity: O(m c / 64)."""
        with self._lock:
            self._Z.fill(0)
            self._count = 0
            self._key_mask = 0
            if self._codec is not None:
                self._codec = type(self._codec)(value_bits=self.value_bits)

    def copy(self) -> Self:
        """An independent copy. Complexity: O(m c / 64)."""
        out = type(self).__new__(type(self))
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_bk_lock"})
        out._Z = aligned_copy(self._Z)
        out._codec = None if self._codec is None else self._codec.copy()
        return out

    # ------------------------------------------------------------------ space and model
    @property
    def num_slots(self) -> int:
        """m."""
        return self._m

    @property
    def overhead(self) -> float:
        """eps = m / n - 1 (n the keys stored)."""
        return self._m / max(1, self._count) - 1.0

    def _table_bits(self) -> int:
        """m * c."""
        return self._m * self._c

    def predicted_fpr(self) -> float:
        """(2^V - 1) / 2^c: an absent key's answer is uniform on [0, 2^c) (a table of L str labels:
        L / 2^c). Complexity: O(1)."""
        from ..static.model import static_fpr

        if self._codec is not None:
            return len(self._codec) / float(1 << self._c)
        return static_fpr(self._c, self.value_bits)

    def build_stats(self) -> dict[str, int]:
        """Salts tried by the build, the salt kept, repeated keys combined."""
        return {"attempts": self._attempts, "salt": self._salt, "duplicates": self._dups}

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, overhead over the bound V + log2(1/e), predicted rate. Complexity: O(1)."""
        bound = self.value_bits + math.log2(1.0 / self.fpr)
        return {**self._info_common(), "num_slots": self._m, "overhead": self.overhead, "ribbon_width": 64,
                "bound_bits_per_key": bound, "bits_per_key_over_bound": self.bits_per_key() / bound,
                "salt": self._salt, "predicted_fpr": self.predicted_fpr()}

    def __repr__(self) -> str:
        return f"RibbonRetrieval(keys={self._count}, V={self.value_bits}, E={self.error_bits}, m={self._m})"

    def _check(self) -> None:
        """Assert the structure's invariants."""
        assert self._m >= 64 and self._m % 64 == 0
        assert self._c == self.value_bits + self.error_bits <= MAX_CHECK_BITS
        assert self._Z.dtype == np.uint64 and len(self._Z) == self._m // 64 * self._c
        assert self._count <= self._m

    # ------------------------------------------------------------------ persistence
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {
            "value_bits": self.value_bits, "error_bits": self.error_bits, "fpr": self.fpr,
            "num_slots": self._m, "salt": self._salt, "count": self._count,
            "key_types": list(self.key_types),
        }
        return params, {"solution": self._Z, **self._label_arrays()}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Self:
        v, eb, m = params["value_bits"], params["error_bits"], params["num_slots"]
        if v + eb > MAX_CHECK_BITS:
            raise FormatError(f"{_OWNER}: value_bits + error_bits = {v + eb} exceeds {MAX_CHECK_BITS}")
        if m % 64:
            raise FormatError(f"{_OWNER}: num_slots = {m} is not a multiple of 64")
        Z = arrays["solution"]
        if len(Z) != m // 64 * (v + eb):
            raise FormatError(f"the 'solution' array of {_OWNER} must hold {m // 64 * (v + eb)} words; got {len(Z)}")
        if params["count"] > m:
            raise FormatError(f"the 'count' parameter of {_OWNER} ({params['count']}) exceeds its {m} slots")
        t = cls.__new__(cls)
        t.seed, t.value_bits, t.error_bits, t.fpr = seed, v, eb, params["fpr"]
        t._m, t._salt, t._count, t._attempts, t._dups = m, params["salt"], params["count"], 0, 0
        t._setup(Z)
        t._codec = cls._read_labels(arrays, v, _OWNER)
        t._restore_keys(params)
        return t
