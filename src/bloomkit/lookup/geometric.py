"""The Geometric filter (document 001, Zhao 2009): a key -> value lookup table with bounded
error made of a geometric series of hash tables plus an exact overflow table.

This is the *compact* version of Section 3.2: every cell has exactly c = E + V bits, the
fingerprint f(x) in the E high bits and the value in the V low bits; a zero cell is open
(Assumption 3.2.1, f(x) != 0) and a zero value part marks an invalid cell, home of an encoded
false positive (Assumption 3.2.2, values >= 1). Cells are packed in uint64 words, so the
tables take exactly sum(M_i) * c bits (plus < 128 bits of padding).

Encoding is Algorithm 3 with the statuses of Algorithm 5: the first scan puts every key in
the first open cell of its walk (tables A_1..A_N, k probes each) and invalidates any cell
whose fingerprint equals the key's (Match and Unrecoverable-Collision: value part <- 0,
ERRATA); the second scan queries every key with an empty overflow table and moves each key
whose answer is wrong to the overflow table. Querying is Algorithm 4.

Updates after encoding (the thesis's claimed advantage over Bloomier, Section 5.1):

* ``update(x, v)`` rewrites the value part of x's own cell (or its overflow entry);
* ``insert(x, v)`` of a new key stores it in the first open cell of its walk. If the walk
  meets a cell with x's fingerprint first, invalidating that cell (as Algorithm 3 does) would
  lose the unknown key stored there, so x is *pinned* instead: kept in a small exact table
  that queries consult before the hash tables. Pinning happens with probability about e_o
  per insert;
* ``remove(x)`` turns x's cell into an invalid cell (value part 0): the cell stays occupied,
  because keys encoded later may have walked past it.

``update`` and ``remove`` must be given keys that are present: for an absent key, the walk
meets a false positive with probability <= e_o and would then change another key's entry
(there is no key in a cell to check against). ``insert`` never damages other keys.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyarrow as pa

from .._format import Persistable
from .._hashing import HASH_XXH64, check_seed, hash64, hash_many
from .._parallel import hash_batch
from .._validation import check_choice, check_float, check_int, param_error
from ..errors import FormatError, InvalidParameterError
from . import _kernels as LK
from ._mapping import LookupMapping
from .overflow import (
    ExactTable,
    alt_seed,
    check_values,
    identity,
    iter_chunks,
    normalize_input,
    subset_keys,
)
from .params import (
    MAX_CELL_BITS,
    MAX_VALUE_BITS,
    false_positive_bound,
    geometric_parameters,
    location_fpr,
    num_tables_for,
    predicted_fpr_from_loads,
    storage_margin,
    table_sizes,
)

__all__ = ["GeometricFilter"]

_OWNER = "GeometricFilter"
DEFAULT_CHUNK = 1 << 16


def _offsets(sizes: np.ndarray) -> np.ndarray:
    off = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    return off


class GeometricFilter(LookupMapping, Persistable):
    """Key -> value lookup table with bounded error (Geometric filter, doc 001 Sec. 3.2).

    Values are integers in [1, 2^V - 1]; a key that was never inserted returns 0 (or
    ``default``) except with probability at most e_o (Lemma 3.4.2).

    Parameters
    ----------
    capacity : int
        |S|, the number of keys the table sequence is sized for (Eq. 3.14-3.16).
    value_bits : int
        V in [1, 32].
    fpr : float
        e_o in (0, 1), the allowed rate of non-zero answers for absent keys.
    num_hashes : int
        k in [1, 16], probes per table.
    storage_ratio : float, optional
        r; default Eq. (3.23) for k = 1, Algorithm 7 (uniform Monte Carlo) for k > 1.
    num_tables : int, optional
        N; default Eq. (3.16).
    error_bits : int, optional
        E; default Section 3.5.2 (Lemmas 3.5.1, 3.5.2).
    margin : float, optional
        Relative reduction of the default r: r = r_k(p) (1 - margin). Default
        :func:`~bloomkit.lookup.params.storage_margin` = clip(4/sqrt(|S|), 0.001, 0.05). Ignored when
        ``storage_ratio`` is given. The sequence is unstable at the exact r_k(p): a table
        that absorbs a few keys too few passes the surplus on, amplified by p/d ~ 1.34 per
        table, and the tail over-fills (Fig. 4.1) or starves (Fig. 4.2) at random; the margin
        makes it starve, which costs nothing (Section 4.2).
    seed : int
        Seed of the key hash.

    Examples
    --------
    >>> gf = GeometricFilter.build({"a b c": 3, "b c d": 1}, value_bits=8, fpr=2**-12)
    >>> gf["a b c"], gf.get("b c d"), len(gf)
    (3, 1, 2)
    """

    _STRUCTURE = "lookup.GeometricFilter"

    def __init__(
        self,
        capacity: int,
        value_bits: int = 16,
        fpr: float = 2.0**-16,
        num_hashes: int = 1,
        *,
        storage_ratio: float | None = None,
        num_tables: int | None = None,
        error_bits: int | None = None,
        margin: float | None = None,
        seed: int = 0,
    ) -> None:
        cap = check_int(capacity, "capacity", _OWNER, lo=1)
        v = check_int(value_bits, "value_bits", _OWNER, lo=1, hi=MAX_VALUE_BITS)
        e = check_float(fpr, "fpr", _OWNER, 0, 1, lo_open=True, hi_open=True)
        k = check_int(num_hashes, "num_hashes", _OWNER, lo=1, hi=16)
        if error_bits is not None:
            check_int(error_bits, "error_bits", _OWNER, lo=1, hi=MAX_CELL_BITS - v)
        if v + np.log2(1.0 / e) < 3:
            raise param_error("fpr", _OWNER, "such that value_bits + log2(1/fpr) >= 3 (Lemma 3.5.1)", fpr)
        gp = geometric_parameters(
            cap, v, e, k, storage_ratio=storage_ratio, num_tables=num_tables, error_bits=error_bits
        )
        if storage_ratio is None:
            m = storage_margin(cap) if margin is None else check_float(margin, "margin", _OWNER, 0, 0.5)
            r_adj = gp.storage_ratio * (1.0 - m)
            nt = gp.num_tables if num_tables is not None else num_tables_for(cap, r_adj, gp.load_factor)
            gp = gp._replace(storage_ratio=r_adj, num_tables=nt)
        if gp.error_bits + v > MAX_CELL_BITS:
            raise param_error("fpr", _OWNER, f"such that E + V <= {MAX_CELL_BITS}", fpr)
        self.seed = check_seed(seed, _OWNER)
        self._hash_id = HASH_XXH64
        self.capacity = cap
        self.value_bits = v
        self.fpr = e
        self.num_hashes = k
        self.error_bits = gp.error_bits
        self.load_factor = gp.load_factor
        self.storage_ratio = gp.storage_ratio
        self.params = gp
        sizes = table_sizes(cap, gp.storage_ratio, gp.load_factor, gp.num_tables)
        self._init_storage(sizes)

    # ------------------------------------------------------------------ internals
    def _init_storage(self, sizes: np.ndarray, words: np.ndarray | None = None) -> None:
        self._sizes = np.ascontiguousarray(sizes, dtype=np.int64)
        self._offsets = _offsets(self._sizes)
        self._cell_bits = self.error_bits + self.value_bits
        self._mask = np.uint64((1 << self._cell_bits) - 1)
        self._fpmod = np.uint64((1 << self.error_bits) - 1)
        nwords = (int(self._offsets[-1]) * self._cell_bits + 63) // 64 + 1
        self._words = np.zeros(nwords, dtype=np.uint64) if words is None else words
        self._overflow = ExactTable()
        self._pinned = ExactTable()
        self._count = 0
        self._landed: np.ndarray | None = None
        self._build_stats: dict[str, float] = {}

    @property
    def num_tables(self) -> int:
        """N, the number of hash tables."""
        return int(len(self._sizes))

    @property
    def table_sizes(self) -> np.ndarray:
        """M_1..M_N (Eq. 3.15), a copy."""
        return self._sizes.copy()

    @property
    def overflow_size(self) -> int:
        """|S_{N+1}| plus encoded false positives: entries of the overflow table."""
        return len(self._overflow)

    @property
    def pinned_size(self) -> int:
        """Keys inserted after encoding that are kept before the tables (see module doc)."""
        return len(self._pinned)

    def _kargs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int, int, np.uint64]:
        return (self._words, self._offsets, self._sizes, self.num_hashes, self._cell_bits, self.value_bits, self._fpmod)

    def _walk(self, h1: int) -> tuple[int, int, int, int]:
        st, idx, cell, fp, _tab = LK.gf_walk_one(np.uint64(h1), *self._kargs())
        return int(st), int(idx), int(cell), int(fp)

    def _check_value(self, value: Any) -> int:
        hi = (1 << self.value_bits) - 1
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or not 1 <= int(value) <= hi:
            raise param_error("value", _OWNER, f"an integer in [1, {hi}] (V = {self.value_bits})", value)
        return int(value)

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        keys: Any,
        values: Any = None,
        *,
        value_bits: int = 16,
        fpr: float = 2.0**-16,
        num_hashes: int = 1,
        storage_ratio: float | None = None,
        num_tables: int | None = None,
        error_bits: int | None = None,
        margin: float | None = None,
        seed: int = 0,
        on_duplicate: str = "error",
        chunk_size: int | None = None,
        rescan: str = "targeted",
    ) -> GeometricFilter:
        """Encode ``keys -> values`` with EncodeRescan (Algorithm 3, compact rules).

        Parameters
        ----------
        keys : mapping, list, tuple, numpy array or pyarrow array
            The keys; a mapping gives the values too.
        values : sequence or array of int, optional
            Integers in [1, 2^V - 1], one per key.
        value_bits, fpr, num_hashes, storage_ratio, num_tables, error_bits, margin, seed
            See :class:`GeometricFilter`; the capacity is ``len(keys)``.
        on_duplicate : {"error", "last"}
            A key given twice raises InvalidParameterError naming it (default), or keeps its
            last value. Duplicates are found for free: every copy of a repeated key ends in
            the overflow table (its copies share one walk).
        chunk_size : int, optional
            Keys hashed per chunk; each scan hashes the keys again chunk by chunk, so the
            memory beyond the input and the filter is about 56 bytes x chunk_size. Default
            clamp(|S| / 128, 8192, 65536): below 10% of the filter from |S| = 10^6 on.
        rescan : {"targeted", "full"}
            How the second scan of Algorithm 3 finds the keys whose answer is wrong.
            ``"full"`` queries every key, as printed. ``"targeted"`` (default) gives the same
            overflow table: it takes the keys the first scan did not store, and walks only
            the keys whose fingerprint equals that of a cell invalidated after it was stored
            (the owners of such cells); the other keys are only re-hashed, and nothing at all
            happens when no stored cell was invalidated.

        Returns
        -------
        GeometricFilter

        Complexity: O(|S| k / (r p)) probes (Eq. 3.24), two passes over the keys.
        """
        keys, values, n = normalize_input(keys, values, _OWNER, on_duplicate)
        if chunk_size is None:
            chunk = max(8192, min(DEFAULT_CHUNK, n // 128))
        else:
            chunk = check_int(chunk_size, "chunk_size", _OWNER, lo=1)
        gf = cls(
            n,
            value_bits,
            fpr,
            num_hashes,
            storage_ratio=storage_ratio,
            num_tables=num_tables,
            error_bits=error_bits,
            margin=margin,
            seed=seed,
        )
        check_choice(rescan, "rescan", _OWNER, ("targeted", "full"))
        gf._encode(keys, values, n, chunk, on_duplicate, rescan)
        return gf

    def _encode(self, keys: Any, values: Any, n: int, chunk: int, on_duplicate: str, rescan: str) -> None:
        landed = np.zeros(self.num_tables + 1, dtype=np.int64)
        stats: dict[str, float] = {"stored": 0, "invalidated": 0, "exhausted": 0}
        # keys with a wrong answer after the first scan: (index, h1, hb, value)
        cands: list[tuple[int, int, int, int]] = []
        unstored_idx: list[np.ndarray] = []
        inv_cells: list[np.ndarray] = []
        inv_fps: list[np.ndarray] = []
        alt = alt_seed(self.seed)
        t0 = time.perf_counter()
        for start, kc, vc in iter_chunks(keys, values, n, chunk):
            v = check_values(vc, self.value_bits, _OWNER, offset=start)
            h1 = hash_many(kc, self.seed)
            if len(h1) != len(v):
                raise InvalidParameterError(
                    f"The 'keys' parameter of {_OWNER} yielded {len(h1)} keys for {len(v)} values."
                )
            s, i, e, uns, icells, ifps = LK.gf_encode(h1, v, *self._kargs(), landed)
            stats["stored"] += s
            stats["invalidated"] += i
            stats["exhausted"] += e
            if rescan == "targeted" and len(uns):
                hb = hash_many(subset_keys(kc, uns), alt)
                cands += [(start + int(u), int(h1[u]), int(hb[j]), int(v[u])) for j, u in enumerate(uns.tolist())]
                unstored_idx.append(uns + start)
            inv_cells.append(icells)
            inv_fps.append(ifps)
        t1 = time.perf_counter()
        cells = np.unique(np.concatenate(inv_cells)) if inv_cells else np.zeros(0, np.int64)
        if rescan == "full":
            # Algorithm 3's second scan as printed: query every key with an empty overflow
            # table; every wrong answer goes to the overflow table
            empty = np.zeros(0, dtype=np.uint64)
            for start, kc, vc in iter_chunks(keys, values, n, chunk):
                v = check_values(vc, self.value_bits, _OWNER, offset=start)
                h1 = hash_many(kc, self.seed)
                out = np.empty(len(h1), dtype=np.int64)
                flag = np.empty(len(h1), dtype=np.uint8)
                LK.gf_query_pipelined(h1, *self._kargs(), empty, out, flag)
                bad = np.flatnonzero(out != v)
                if len(bad):
                    hb = hash_many(subset_keys(kc, bad), alt)
                    cands += [(start + int(b), int(h1[b]), int(hb[j]), int(v[b])) for j, b in enumerate(bad.tolist())]
        elif len(cells):
            # The wrong answers are exactly (a) the keys the first scan did not store and (b) the
            # owners of the cells it invalidated after they were stored: a stored key's walk
            # passes only cells whose fingerprint differs from its own, and fingerprints never
            # change, so its first cell with its fingerprint is its own. Only keys whose
            # fingerprint is one of the invalidated cells' need a walk.
            fps = np.unique(np.concatenate(inv_fps))
            seen = np.unique(np.concatenate(unstored_idx)) if unstored_idx else np.zeros(0, np.int64)
            for start, kc, vc in iter_chunks(keys, values, n, chunk):
                h1 = hash_many(kc, self.seed)
                own = LK.gf_find_owners(h1, fps, cells, *self._kargs())
                own = own[~np.isin(own + start, seen)]
                if len(own):
                    v = check_values(vc, self.value_bits, _OWNER, offset=start)
                    hb = hash_many(subset_keys(kc, own), alt)
                    cands += [(start + int(o), int(h1[o]), int(hb[j]), int(v[o])) for j, o in enumerate(own.tolist())]
        # into the overflow table in key order (so that on_duplicate="last" keeps the last value)
        cands.sort()
        dups = 0
        for idx, a, b, val in cands:
            ident = (a, b)
            if ident in self._overflow:
                if on_duplicate == "error":
                    key = subset_keys(keys, np.array([idx]))[0]
                    if hasattr(key, "as_py"):
                        key = key.as_py()
                    raise InvalidParameterError(
                        f"The 'keys' parameter of {_OWNER} must not repeat a key "
                        f"(pass on_duplicate='last' to keep the last value). Got {key!r} "
                        f"twice (second time at index {idx}) instead."
                    )
                dups += 1
            self._overflow.set(ident, val)
        self._count = n - dups
        self._landed = landed
        stats["scan1_seconds"] = t1 - t0
        stats["scan2_seconds"] = time.perf_counter() - t1
        stats["duplicates"] = dups
        stats["overflow"] = len(self._overflow)
        stats["invalidated_valid_cells"] = len(cells)
        self._build_stats = stats

    # ------------------------------------------------------------------ queries
    def _walk_many(self, keys: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(h1, walk answer, overflow flag) of every key: the batch is hashed and walked in
        slices on :func:`bloomkit.get_num_threads` threads (read-only kernels, no copies)."""
        kargs, ovf = self._kargs(), self._overflow.sorted_h1()

        def walk(h: np.ndarray, lo: int, hi: int) -> tuple[int, np.ndarray, np.ndarray]:
            out = np.empty(hi - lo, dtype=np.int64)
            flag = np.empty(hi - lo, dtype=np.uint8)
            return int(LK.gf_query_pipelined(h[lo:hi], *kargs, ovf, out, flag)), out, flag

        h1, _parts, res = hash_batch(keys, lambda ks: hash_many(ks, self.seed), walk)
        self._last_probes = sum(r[0] for r in res)
        out = res[0][1] if len(res) == 1 else np.concatenate([r[1] for r in res])
        flag = res[0][2] if len(res) == 1 else np.concatenate([r[2] for r in res])
        return h1, out, flag

    def get_many(self, keys: Any, default: int = 0) -> np.ndarray:
        """Values of a batch of keys (Algorithm 4); ``default`` for keys found absent.

        Parameters
        ----------
        keys : list, tuple, numpy array or pyarrow array
        default : int

        Returns
        -------
        numpy.ndarray of int64

        Complexity: O(n k / (r p)) probes for present keys (Eq. 3.25), at most
        O(n k / (1 - p^k)) for absent keys (Eq. 3.26); one binary search of the overflow
        table's h1 column when a walk ends there.
        """
        if not isinstance(keys, list | tuple | np.ndarray | pa.Array | pa.ChunkedArray | str | bytes):
            keys = list(keys)  # iterators: the overflow check needs the keys twice
        h1, out, flag = self._walk_many(keys)
        idx = np.flatnonzero(flag)
        if len(idx):
            hb = hash_many(subset_keys(keys, idx), alt_seed(self.seed))
            for j, i in enumerate(idx.tolist()):
                out[i] = self._overflow.get((int(h1[i]), int(hb[j])), 0)
        if len(self._pinned):
            idx = np.flatnonzero(np.isin(h1, self._pinned.sorted_h1()))
            if len(idx):
                hb = hash_many(subset_keys(keys, idx), alt_seed(self.seed))
                for j, i in enumerate(idx.tolist()):
                    pv = self._pinned.get((int(h1[i]), int(hb[j])), 0)
                    if pv:
                        out[i] = pv
        if default:
            out[out == 0] = default
        return out

    def get(self, key: Any, default: int = 0) -> int:
        """Value of one key, or ``default`` when it is found absent.

        Complexity: O(k / (r p)) expected probes (Eq. 3.25).
        """
        h1 = hash64(key, self.seed)
        if len(self._pinned):
            pv = self._pinned.get((h1, hash64(key, alt_seed(self.seed))), 0)
            if pv:
                return pv
        st, _idx, cell, _fp = self._walk(h1)
        if st == LK.MATCH:
            return cell & ((1 << self.value_bits) - 1)
        if st == LK.OPEN:
            return default
        v = self._overflow.get((h1, hash64(key, alt_seed(self.seed))), 0)
        return v if v else default

    # ------------------------------------------------------------------ updates
    def update(self, key: Any, value: int) -> None:
        """Change the value of a key that is present.

        Raises KeyError when the key is found absent. For a key that was never inserted the
        walk meets a false positive with probability <= e_o and then rewrites that other
        key's value: only update keys you inserted.

        Complexity: O(k / (r p)) expected probes.
        """
        v = self._check_value(value)
        ident = identity(key, self.seed)
        if ident in self._pinned:
            self._pinned.set(ident, v)
            return
        if ident in self._overflow:
            self._overflow.set(ident, v)
            return
        st, idx, _cell, fp = self._walk(ident[0])
        if st != LK.MATCH:
            raise KeyError(key)
        LK.set_one_cell(self._words, idx, self._cell_bits, self._mask, np.uint64((fp << self.value_bits) | v))

    def insert(self, key: Any, value: int) -> None:
        """Add a new key after encoding (Section 5.1).

        The key goes to the first open cell of its walk; if the walk meets an invalid cell
        with its fingerprint or runs past the last table it goes to the overflow table; if it
        meets a valid cell with its fingerprint (another key's, or its own if it is already
        present) it is pinned (see the module docstring). No other key's answer changes.

        Raises InvalidParameterError if the key is known to be present (in the overflow or
        pinned table); for keys in the hash tables use :meth:`update`.

        Complexity: O(k / (r p)) expected probes while the load stays near the design.
        """
        v = self._check_value(value)
        ident = identity(key, self.seed)
        if ident in self._pinned or ident in self._overflow:
            raise InvalidParameterError(
                f"The 'key' parameter of {_OWNER}.insert must be a new key (use update() to change "
                f"a value). Got {key!r}, which is present, instead."
            )
        st, idx, _cell, fp = self._walk(ident[0])
        if st == LK.OPEN:
            LK.set_one_cell(self._words, idx, self._cell_bits, self._mask, np.uint64((fp << self.value_bits) | v))
        elif st == LK.MATCH:
            self._pinned.set(ident, v)
        else:
            self._overflow.set(ident, v)
        self._count += 1

    def remove(self, key: Any) -> None:
        """Delete a key that is present; its cell becomes invalid (stays occupied).

        Raises KeyError when the key is found absent. Same caveat as :meth:`update` for keys
        that were never inserted.

        Complexity: O(k / (r p)) expected probes.
        """
        ident = identity(key, self.seed)
        if self._pinned.pop(ident) is not None or self._overflow.pop(ident) is not None:
            self._count -= 1
            return
        st, idx, _cell, fp = self._walk(ident[0])
        if st != LK.MATCH:
            raise KeyError(key)
        LK.set_one_cell(self._words, idx, self._cell_bits, self._mask, np.uint64(fp << self.value_bits))
        self._count -= 1

    # ------------------------------------------------------------------ space and model
    def size_in_bits(self) -> int:
        """sum(M_i) * c bits of the tables plus (128 + V) bits per overflow/pinned entry.

        Complexity: O(1).
        """
        tables = int(self._offsets[-1]) * self._cell_bits
        return tables + (len(self._overflow) + len(self._pinned)) * (128 + self.value_bits)

    def table_bits(self) -> int:
        """sum(M_i) * c, the hash tables alone (Eq. 3.17). Complexity: O(1)."""
        return int(self._offsets[-1]) * self._cell_bits

    def bits_per_key(self) -> float:
        """size_in_bits() / number of keys (per capacity when empty). Complexity: O(1)."""
        return self.size_in_bits() / max(1, self._count or self.capacity)

    def _stats(self) -> tuple[np.ndarray, np.ndarray, int]:
        occ, val, bad = LK.gf_table_stats(self._words, self._offsets, self._cell_bits, self.value_bits)
        return occ, val, int(bad)

    def table_load_factors(self) -> np.ndarray:
        """Occupied fraction of each table, p_1..p_N (Figs. 4.1, 4.2).

        Complexity: O(sum M_i).
        """
        occ, _val, _bad = self._stats()
        return occ / self._sizes

    def trying_set_sizes(self) -> np.ndarray | None:
        """|S_1|..|S_{N+1}| of the last build (Eq. 3.14), or None if not built here."""
        if self._landed is None:
            return None
        return np.cumsum(self._landed[::-1])[::-1].copy()

    def build_stats(self) -> dict[str, float]:
        """Counts of the last build (stored, invalidated, exhausted, duplicates, overflow) and
        the seconds of its two scans (scan1_seconds, scan2_seconds)."""
        return dict(self._build_stats)

    def fpr_bound(self) -> float:
        """Lemma 3.4.2 at the design load factor: p/(1-p) * 1/(2^E - 1). Complexity: O(1)."""
        return false_positive_bound(self.load_factor, self.error_bits, compact=True)

    def predicted_fpr(self) -> float:
        """FPR of absent keys from the measured table loads (first order in e_n).

        See :func:`bloomkit.lookup.params.predicted_fpr_from_loads`; bounded by
        :meth:`fpr_bound` when every p_i <= p.

        Complexity: O(sum M_i).
        """
        occ, val, _bad = self._stats()
        return predicted_fpr_from_loads(occ / self._sizes, val / self._sizes, self.num_hashes, self.error_bits)

    def location_fpr(self) -> float:
        """e_n = 1/(2^E - 1). Complexity: O(1)."""
        return location_fpr(self.error_bits)

    def __repr__(self) -> str:
        return (
            f"GeometricFilter(keys={self._count}, V={self.value_bits}, E={self.error_bits}, "
            f"k={self.num_hashes}, N={self.num_tables}, r={self.storage_ratio:.4f}, "
            f"p={self.load_factor:.4f}, overflow={len(self._overflow)})"
        )

    # ------------------------------------------------------------------ invariants
    def _check(self) -> None:
        """Assert the structure's invariants (called by tests after mutations)."""
        assert self._sizes.ndim == 1 and len(self._sizes) >= 1 and (self._sizes >= 1).all()
        assert np.array_equal(self._offsets, _offsets(self._sizes))
        assert self._cell_bits == self.error_bits + self.value_bits <= MAX_CELL_BITS
        total_bits = int(self._offsets[-1]) * self._cell_bits
        assert self._words.dtype == np.uint64 and len(self._words) == (total_bits + 63) // 64 + 1
        # padding bits beyond the last cell are zero
        w, b = divmod(total_bits, 64)
        assert not self._words[w + 1 :].any()
        if b:
            assert int(self._words[w]) >> b == 0
        else:
            assert self._words[w] == 0
        occ, val, bad = self._stats()
        assert bad == 0, "a cell has a value part but no fingerprint"
        assert (occ <= self._sizes).all()
        hi = (1 << self.value_bits) - 1
        for table in (self._overflow, self._pinned):
            for _ident, v in table.items():
                assert 1 <= v <= hi
        for ident, _v in self._pinned.items():
            assert ident not in self._overflow
        # every live key has exactly one of: a valid cell, an overflow entry, a pinned entry
        assert self._count == int(val.sum()) + len(self._overflow) + len(self._pinned), (
            self._count,
            int(val.sum()),
            len(self._overflow),
            len(self._pinned),
        )

    # ------------------------------------------------------------------ persistence
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {
            "capacity": self.capacity,
            "value_bits": self.value_bits,
            "error_bits": self.error_bits,
            "fpr": self.fpr,
            "num_hashes": self.num_hashes,
            "load_factor": self.load_factor,
            "storage_ratio": self.storage_ratio,
            "p_hat": self.params.p_hat,
            "count": self._count,
        }
        arrays = {"sizes": self._sizes, "words": self._words}
        arrays.update(self._overflow.to_arrays("ovf"))
        arrays.update(self._pinned.to_arrays("pin"))
        return params, arrays

    @classmethod
    def _from_state(
        cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int
    ) -> GeometricFilter:
        if hash_id != HASH_XXH64:
            raise FormatError(f"GeometricFilter uses hash id {HASH_XXH64}, the file says {hash_id}")
        p = dict(params)
        try:
            v = check_int(p["value_bits"], "value_bits", _OWNER, lo=1, hi=MAX_VALUE_BITS)
            eb = check_int(p["error_bits"], "error_bits", _OWNER, lo=1, hi=MAX_CELL_BITS - v)
            k = check_int(p["num_hashes"], "num_hashes", _OWNER, lo=1, hi=16)
            cap = check_int(p["capacity"], "capacity", _OWNER, lo=1)
            count = check_int(p["count"], "count", _OWNER, lo=0)
            fpr = check_float(p["fpr"], "fpr", _OWNER, 0, 1, lo_open=True, hi_open=True)
            lf = check_float(p["load_factor"], "load_factor", _OWNER, 0, 1, lo_open=True, hi_open=True)
            sr = check_float(p["storage_ratio"], "storage_ratio", _OWNER, 0, None, lo_open=True)
            ph = check_float(p["p_hat"], "p_hat", _OWNER, 0, 1, lo_open=True, hi_open=True)
        except (KeyError, InvalidParameterError) as e:
            raise FormatError(f"invalid GeometricFilter parameters: {e}") from None
        sizes = arrays.get("sizes")
        words = arrays.get("words")
        if sizes is None or words is None or sizes.dtype != np.int64 or words.dtype != np.uint64:
            raise FormatError("GeometricFilter needs int64 'sizes' and uint64 'words' arrays")
        if sizes.ndim != 1 or len(sizes) < 1 or (sizes < 1).any() or words.ndim != 1:
            raise FormatError("invalid GeometricFilter table sizes")
        total = int(sizes.sum())
        if len(words) != (total * (eb + v) + 63) // 64 + 1:
            raise FormatError("GeometricFilter cell array does not match the table sizes")
        gf = cls.__new__(cls)
        gf.seed = int(seed)
        gf._hash_id = HASH_XXH64
        gf.capacity, gf.value_bits, gf.fpr, gf.num_hashes = cap, v, fpr, k
        gf.error_bits, gf.load_factor, gf.storage_ratio = eb, lf, sr
        from .params import GeometricParameters

        gf.params = GeometricParameters(ph, eb, lf, sr, len(sizes))
        gf._init_storage(sizes.copy(), np.ascontiguousarray(words).copy())
        hi = (1 << v) - 1
        gf._overflow = ExactTable.from_arrays(arrays, "ovf", hi)
        gf._pinned = ExactTable.from_arrays(arrays, "pin", hi)
        gf._count = count
        occ, val, bad = gf._stats()
        if bad or count != int(val.sum()) + len(gf._overflow) + len(gf._pinned):
            raise FormatError("GeometricFilter cells are inconsistent with its key count")
        return gf

