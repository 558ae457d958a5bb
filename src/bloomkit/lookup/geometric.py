"""The Geometric filter (document 001, Zhao 2009): a key -> value lookup table with bounded
error made of a geometric series of hash tables plus an exact overflow table.

This is the *compact* version of Section 3.2: every cell has exactly c = E + V bits, the
fingerprint f(x) in the E high bits and the value in the V low bits; a zero cell is open
(Assumption 3.2.1, f(x) != 0) and a zero value part marks an invalid cell, home of an encoded
false positive (Assumption 3.2.2, values >= 1). Cells are packed in uint64 words, so the
tables take exactly sum(M_i) * c bits (plus < 256 bits of padding); cells of more than 64 bits
(V up to 64) keep their high value bits in a second packed array (:mod:`._kernels`).

Encoding is Algorithm 3 with the statuses of Algorithm 5: the first scan puts every key in
the first open cell of its walk (tables A_1..A_N, k probes each) and invalidates any cell
whose fingerprint equals the key's (Match and Unrecoverable-Collision: value part <- 0,
ERRATA); the second scan queries every key with an empty overflow table and moves each key
whose answer is wrong to the overflow table. Querying is Algorithm 4.

Updates after encoding (the thesis's claimed advantage over Bloomier, Section 5.1):

* ``set(x, v)`` overwrites x's value (its own cell, or its overflow / pinned entry), or
  inserts x when its walk finds no cell with its fingerprint;
* ``insert(x, v)`` of a key known to be new stores it in the first open cell of its walk. If
  the walk meets a cell with x's fingerprint first, invalidating that cell (as Algorithm 3
  does) would lose the unknown key stored there, so x is *pinned* instead: kept in a small
  exact table that queries consult before the hash tables. Pinning happens with probability
  about e_o per insert;
* ``remove(x)`` turns x's cell into an invalid cell (value part 0): the cell stays occupied,
  because keys encoded later may have walked past it.

``set`` of a new key and ``remove`` of an absent key meet a false positive with probability
<= e_o, and then change that other key's entry (there is no key in a cell to check against);
``insert`` never damages other keys.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np

from .._engine.columns import slice_keys, take
from .._engine.hashing import check_seed, hash64, hash_keys, hash_many
from .._engine.parallel import hash_batch, key_source
from .._engine.storage import aligned_copy, aligned_zeros
from .._format import ArraySpec
from .._validation import (
    CAPACITY,
    FPR,
    KEY_TYPES,
    Int,
    InvariantError,
    Optional,
    Options,
    param_error,
)
from ..errors import FormatError, InvalidParameterError
from . import _kernels as LK
from ._input import (
    ON_DUPLICATE,
    check_count,
    combine_duplicates,
    duplicate_error,
    read_pairs,
    read_values,
)
from ._mapping import LABEL_ARRAYS, LookupBase, padding_clear, words_for
from .overflow import ExactTable, alt_seed
from .params import (
    ERROR_BITS,
    GF_NUM_HASHES,
    LOAD_FACTOR,
    MARGIN,
    MAX_TABLES,
    NUM_TABLES,
    STORAGE_RATIO,
    VALUE_BITS,
    GeometricParameters,
    false_positive_bound,
    geometric_parameters,
    location_fpr,
    num_tables_for,
    predicted_fpr_from_loads,
    storage_margin,
    table_sizes,
)

if TYPE_CHECKING:
    from .ribbon import RibbonRetrieval

__all__ = ["GeometricFilter"]

_OWNER = "GeometricFilter"
DEFAULT_CHUNK = 1 << 16
MAX_TABLE_CELLS = 1 << 56
"""Largest M_i (so that every bit offset of a cell fits in int64)."""
RESCAN = Options("targeted", "full")


def _offsets(sizes: np.ndarray) -> np.ndarray:
    off = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    return off


def _cell_layout(error_bits: int, value_bits: int) -> tuple[int, int, int]:
    """(c_lo, v_lo, c_hi): bits of a cell in ``words``, value bits among them, bits in ``high``."""
    c = error_bits + value_bits
    lo = min(c, 64)
    return lo, lo - error_bits, c - lo


class GeometricFilter(LookupBase):
    """Key -> value lookup table with bounded error (Geometric filter, doc 001 Sec. 3.2).

    Values are integers in [1, 2^V - 1] (V <= 64), or str labels (numbered by a
    :class:`~bloomkit.lookup.ValueCodec` saved with the table). A key that was never inserted
    gets 0 / None (or ``default``) except with probability at most e_o (Lemma 3.4.2).

    Parameters
    ----------
    capacity : int
        |S|, the number of keys the table sequence is sized for (Eq. 3.14-3.16).
    value_bits : int
        V in [1, 64].
    fpr : float
        e_o in (0, 1), the allowed rate of non-zero answers for absent keys.
    num_hashes : int
        k in [1, 16], probes per table.
    storage_ratio : float, optional
        r; default Eq. (3.23) for k = 1, Algorithm 7 (uniform Monte Carlo) for k > 1.
    num_tables : int, optional
        N; default Eq. (3.16).
    error_bits : int, optional
        E in [1, 63]; default Section 3.5.2 (Lemmas 3.5.1, 3.5.2).
    margin : float, optional
        Relative reduction of the default r: r = r_k(p) (1 - margin). Default
        :func:`~bloomkit.lookup.params.storage_margin` = clip(4/sqrt(|S|), 0.001, 0.05). Ignored when
        ``storage_ratio`` is given. The sequence is unstable at the exact r_k(p): a table
        that absorbs a few keys too few passes the surplus on, amplified by p/d ~ 1.34 per
        table, and the tail over-fills (Fig. 4.1) or starves (Fig. 4.2) at random; the margin
        makes it starve, which costs nothing (Section 4.2).
    seed : int
        Seed of the key hash.

    Every parameter after ``capacity`` is keyword-only (by position: deprecated).

    Notes
    -----
    Thread safety: ``set``, ``update``, ``insert`` and ``remove`` are multi-step (a walk, then
    a cell or a side table written) and hold the table's lock, so any number of writer threads
    lose nothing. Queries take no lock and release the GIL in their kernels; a query running
    while the *same* key is written may see its old value, its new one, or (a cell crossing two
    words being written) neither. ``clear`` while other threads write can lose their writes.

    Examples
    --------
    >>> gf = GeometricFilter.build({"a b c": 3, "b c d": 1}, value_bits=8, fpr=2**-12)
    >>> gf["a b c"], gf.get("b c d"), len(gf)
    (3, 1, 2)
    """

    _PARAMS: ClassVar[Any] = {
        "capacity": CAPACITY, "value_bits": VALUE_BITS, "error_bits": ERROR_BITS, "fpr": FPR,
        "num_hashes": GF_NUM_HASHES, "load_factor": LOAD_FACTOR, "storage_ratio": STORAGE_RATIO,
        "p_hat": LOAD_FACTOR, "count": Int(0), "key_types": KEY_TYPES,
    }
    _ARRAYS: ClassVar[Any] = {
        "sizes": ArraySpec("<i8", lo=1, hi=MAX_TABLE_CELLS), "words": ArraySpec("<u8"),
        "high": ArraySpec("<u8", optional=True),
        **{f"{t}_{c}": ArraySpec("<u8") for t in ("ovf", "pin") for c in ("h1", "hb")},
        "ovf_val": ArraySpec(None, lo=1), "pin_val": ArraySpec(None, lo=1),
        **LABEL_ARRAYS,
    }

    def __init__(
        self,
        capacity: int,
        *,
        value_bits: int = 16,
        fpr: float = 2.0**-16,
        num_hashes: int = 1,
        storage_ratio: float | None = None,
        num_tables: int | None = None,
        error_bits: int | None = None,
        margin: float | None = None,
        seed: int = 0,
    ) -> None:
        cap = CAPACITY(capacity, "capacity", _OWNER)
        v = VALUE_BITS(value_bits, "value_bits", _OWNER)
        e = FPR(fpr, "fpr", _OWNER)
        k = GF_NUM_HASHES(num_hashes, "num_hashes", _OWNER)
        Optional(ERROR_BITS)(error_bits, "error_bits", _OWNER)
        Optional(STORAGE_RATIO)(storage_ratio, "storage_ratio", _OWNER)
        Optional(NUM_TABLES)(num_tables, "num_tables", _OWNER)
        mg = Optional(MARGIN)(margin, "margin", _OWNER)
        if v + np.log2(1.0 / e) < 3:
            raise param_error("fpr", _OWNER, "such that value_bits + log2(1/fpr) >= 3 (Lemma 3.5.1)", fpr)
        gp = geometric_parameters(
            cap, v, e, k, storage_ratio=storage_ratio, num_tables=num_tables, error_bits=error_bits
        )
        if storage_ratio is None:
            r_adj = gp.storage_ratio * (1.0 - (storage_margin(cap) if mg is None else mg))
            nt = gp.num_tables if num_tables is not None else num_tables_for(cap, r_adj, gp.load_factor)
            gp = gp._replace(storage_ratio=r_adj, num_tables=nt)
        self.seed = check_seed(seed, _OWNER)
        self.capacity = cap
        self.value_bits = v
        self.fpr = e
        self.num_hashes = k
        self._set_params(gp)
        self._init_storage(table_sizes(cap, gp.storage_ratio, gp.load_factor, gp.num_tables))

    @classmethod
    def for_requirements(cls, capacity: int, value_bits: int, fpr: float, *, num_hashes: int = 1,
                         seed: int = 0) -> Self:
        """An empty table for ``capacity`` keys of ``value_bits``-bit values answering absent
        keys wrongly at rate <= ``fpr``, with the space-optimal E and p of Section 3.5.2
        (Lemmas 3.5.1-3.5.2): about (V + log2 1/e_o) / p bits per key. Fill it with
        :meth:`insert` / :meth:`set`, or use :meth:`build` for a known set of keys.

        Complexity: O(sum M_i) (the zeroed tables).
        """
        return cls(capacity, value_bits=value_bits, fpr=fpr, num_hashes=num_hashes, seed=seed)

    # ------------------------------------------------------------------ internals
    def _set_params(self, gp: GeometricParameters) -> None:
        self.error_bits = gp.error_bits
        self.load_factor = gp.load_factor
        self.storage_ratio = gp.storage_ratio
        self.params = gp

    def _init_storage(self, sizes: np.ndarray, words: np.ndarray | None = None, high: np.ndarray | None = None) -> None:
        """Install the tables (``sizes`` already checked); every construction path ends here."""
        self._sizes = np.ascontiguousarray(sizes, dtype=np.int64)
        self._offsets = _offsets(self._sizes)
        self._c, self._vb, self._cb = _cell_layout(self.error_bits, self.value_bits)
        self._fpmod = np.uint64((1 << self.error_bits) - 1)
        total = int(self._offsets[-1])
        self._words = aligned_zeros(words_for(total, self._c), np.uint64, "the Geometric filter's cells") \
            if words is None else words
        self._high = aligned_zeros(words_for(total, self._cb), np.uint64, "the Geometric filter's cells") \
            if high is None else high
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

    def _kargs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int, int, int, np.uint64]:
        """The storage arguments of every Geometric kernel."""
        return (self._words, self._high, self._offsets, self._sizes, self.num_hashes, self._c, self._vb, self._cb,
                self._fpmod)

    def _walk(self, h1: int) -> tuple[int, int, int, int]:
        """(status, cell, value, fingerprint) of one key's walk."""
        st, idx, val, fp = LK.gf_walk_one(np.uint64(h1), *self._kargs())
        return int(st), int(idx), int(val), int(fp)

    def _write(self, idx: int, fp: int, value: int) -> None:
        LK.gf_write_cell(self._words, self._high, idx, self._c, self._vb, self._cb, np.uint64(fp), np.uint64(value))

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
    ) -> Self:
        """Encode ``keys -> values`` with EncodeRescan (Algorithm 3, compact rules).

        Parameters
        ----------
        keys : mapping, or a column: list, tuple, numpy, pyarrow, pandas, polars
            The keys, by position (a pandas index is ignored); a mapping gives the values too.
        values : column of int or str, optional
            Integers in [1, 2^V - 1], or str labels (a table of labels: its
            :class:`~bloomkit.lookup.ValueCodec` numbers them and is saved with it), one per key,
            by position.
        value_bits, fpr, num_hashes, storage_ratio, num_tables, error_bits, margin, seed
            See :class:`GeometricFilter`; the capacity is the number of distinct keys.
        on_duplicate : {"error", "last", "sum", "max", "min"}
            A key given twice raises InvalidParameterError naming it (default: found for free,
            every copy of a repeated key ends in the overflow table), or its values are
            combined first (the last one, their sum, maximum or minimum; a sum above
            2^V - 1 raises). Labels take "error" or "last".
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

        Complexity: O(|S| k / (r p)) probes (Eq. 3.24), two passes over the keys (one more,
        and a sort, when ``on_duplicate`` combines values).
        """
        owner = f"{_OWNER}.build"
        dup = ON_DUPLICATE(on_duplicate, "on_duplicate", owner)
        scan = RESCAN(rescan, "rescan", owner)
        v = VALUE_BITS(value_bits, "value_bits", owner)
        sd = check_seed(seed, owner)
        keys, raw, n = read_pairs(keys, values, owner)
        vals, codec = read_values(raw, v, owner)
        check_count(vals, n, owner)
        chunk = max(8192, min(DEFAULT_CHUNK, n // 128)) if chunk_size is None else \
            Int(1)(chunk_size, "chunk_size", owner)
        dups = 0
        if dup != "error":
            keys, _h1, vals, dups = combine_duplicates(keys, hash_many(keys, sd), vals, sd, v, dup, owner,
                                                       labels=codec is not None)
            n = len(vals)
        gf = cls(n, value_bits=v, fpr=fpr, num_hashes=num_hashes, storage_ratio=storage_ratio, num_tables=num_tables,
                 error_bits=error_bits, margin=margin, seed=sd)
        gf._codec = codec
        gf._encode(keys, vals, n, chunk, scan)
        gf._build_stats["duplicates"] = dups
        return gf

    def _encode(self, keys: Any, values: np.ndarray, n: int, chunk: int, rescan: str) -> None:
        landed = np.zeros(self.num_tables + 1, dtype=np.int64)
        stats: dict[str, float] = {"stored": 0, "invalidated": 0, "exhausted": 0}
        # keys with a wrong answer after the first scan: (index, h1, hb, value)
        cands: list[tuple[int, int, int, int]] = []
        unstored_idx: list[np.ndarray] = []
        inv_cells: list[np.ndarray] = []
        inv_fps: list[np.ndarray] = []
        alt = alt_seed(self.seed)
        mask = 0
        owner = f"{_OWNER}.build"

        def wrong(kc: Any, start: int, h1: np.ndarray, v: np.ndarray, pos: np.ndarray) -> None:
            hb = hash_many(take(kc, pos), alt)
            cands.extend((start + int(p), int(h1[p]), int(hb[j]), int(v[p])) for j, p in enumerate(pos.tolist()))

        t0 = time.perf_counter()
        for start in range(0, n, chunk):
            kc, v = slice_keys(keys, start, min(n, start + chunk)), values[start : start + chunk]
            h1, tags = hash_keys(kc, self.seed, owner=owner)
            mask |= tags
            s, i, e, uns, icells, ifps = LK.gf_encode(h1, v, *self._kargs(), landed)
            stats["stored"] += s
            stats["invalidated"] += i
            stats["exhausted"] += e
            if rescan == "targeted" and len(uns):
                wrong(kc, start, h1, v, uns)
                unstored_idx.append(uns + start)
            inv_cells.append(icells)
            inv_fps.append(ifps)
        t1 = time.perf_counter()
        cells = np.unique(np.concatenate(inv_cells)) if inv_cells else np.zeros(0, np.int64)
        if rescan == "full":
            # Algorithm 3's second scan as printed: query every key with an empty overflow
            # table; every wrong answer goes to the overflow table
            empty = np.zeros(0, dtype=np.uint64)
            for start in range(0, n, chunk):
                kc, v = slice_keys(keys, start, min(n, start + chunk)), values[start : start + chunk]
                h1 = hash_many(kc, self.seed)
                out = np.empty(len(h1), dtype=np.uint64)
                flag = np.empty(len(h1), dtype=np.uint8)
                LK.gf_query_pipelined(h1, *self._kargs(), empty, out, flag)
                bad = np.flatnonzero(out != v)
                if len(bad):
                    wrong(kc, start, h1, v, bad)
        elif len(cells):
            # The wrong answers are exactly (a) the keys the first scan did not store and (b) the
            # owners of the cells it invalidated after they were stored: a stored key's walk
            # passes only cells whose fingerprint differs from its own, and fingerprints never
            # change, so its first cell with its fingerprint is its own. Only keys whose
            # fingerprint is one of the invalidated cells' need a walk.
            fps = np.unique(np.concatenate(inv_fps))
            seen = np.unique(np.concatenate(unstored_idx)) if unstored_idx else np.zeros(0, np.int64)
            for start in range(0, n, chunk):
                kc = slice_keys(keys, start, min(n, start + chunk))
                h1 = hash_many(kc, self.seed)
                own = LK.gf_find_owners(h1, fps, cells, *self._kargs())
                own = own[~np.isin(own + start, seen)]
                if len(own):
                    wrong(kc, start, h1, values[start : start + chunk], own)
        # into the overflow table in key order: a repeated key is named at its second position
        cands.sort()
        for idx, a, b, val in cands:
            if (a, b) in self._overflow:
                raise duplicate_error(keys, owner, idx)
            self._overflow.set((a, b), val)
        self._count = n
        self._landed = landed
        self._note_keys(mask)
        stats["scan1_seconds"] = t1 - t0
        stats["scan2_seconds"] = time.perf_counter() - t1
        stats["overflow"] = len(self._overflow)
        stats["invalidated_valid_cells"] = len(cells)
        self._build_stats = stats

    # ------------------------------------------------------------------ queries
    def _ids_of(self, keys: Any) -> tuple[np.ndarray, int]:
        """Value ids of a canonical batch (Algorithm 4) and the cells probed: hashed and walked
        in slices on :func:`bloomkit.get_num_threads` threads (read-only kernels, no copies);
        one binary search of the overflow table's h1 column when a walk ends there.

        Complexity: O(n k / (r p)) probes for present keys (Eq. 3.25), at most
        O(n k / (1 - p^k)) for absent keys (Eq. 3.26).
        """
        kargs, ovf = self._kargs(), self._overflow.sorted_h1()

        def walk(h: np.ndarray, lo: int, hi: int) -> tuple[int, np.ndarray, np.ndarray]:
            out = np.empty(hi - lo, dtype=np.uint64)
            flag = np.empty(hi - lo, dtype=np.uint8)
            return int(LK.gf_query_pipelined(h[lo:hi], *kargs, ovf, out, flag)), out, flag

        batch, hash_chunk = key_source(keys, lambda ks: hash_keys(ks, self.seed), self._owner("get_many"))
        h1, _parts, res = hash_batch(batch, hash_chunk, walk)
        out = res[0][1] if len(res) == 1 else np.concatenate([r[1] for r in res])
        flag = res[0][2] if len(res) == 1 else np.concatenate([r[2] for r in res])
        alt = alt_seed(self.seed)
        idx = np.flatnonzero(flag)
        if len(idx):  # walks that ended on an invalid cell or past A_N: the overflow table answers
            hb = hash_many(take(keys, idx), alt).tolist()
            out[idx] = [self._overflow.get((int(h1[i]), b), 0) for i, b in zip(idx.tolist(), hb, strict=True)]
        if len(self._pinned):  # pinned keys answer before the tables
            idx = np.flatnonzero(np.isin(h1, self._pinned.sorted_h1()))
            if len(idx):
                hb = hash_many(take(keys, idx), alt).tolist()
                for i, b in zip(idx.tolist(), hb, strict=True):
                    pv = self._pinned.get((int(h1[i]), b), 0)
                    if pv:
                        out[i] = pv
        return out, sum(r[0] for r in res)

    def _id_of(self, key: Any) -> int:
        """Value id of one key. Complexity: O(k / (r p)) expected probes (Eq. 3.25)."""
        h1 = hash64(key, self.seed)
        if len(self._pinned):
            pv = self._pinned.get((h1, hash64(key, alt_seed(self.seed))), 0)
            if pv:
                return pv
        st, _idx, val, _fp = self._walk(h1)
        if st == LK.MATCH:
            return val
        if st == LK.OPEN:
            return 0
        return self._overflow.get((h1, hash64(key, alt_seed(self.seed))), 0)

    # ------------------------------------------------------------------ updates (hold the lock)
    def _set_ident(self, h1: int, hb: int, vid: int) -> None:
        ident = (h1, hb)
        for table in (self._pinned, self._overflow):
            if ident in table:
                table.set(ident, vid)
                return
        st, idx, _val, fp = self._walk(h1)
        if st in (LK.MATCH, LK.OPEN):  # MATCH: this key's cell (or, new key: a false positive's)
            self._write(idx, fp, vid)
            if st == LK.OPEN:
                self._count += 1
        else:
            self._overflow.set(ident, vid)
            self._count += 1

    def insert(self, key: Any, value: Any) -> None:
        """Add a key known to be new after encoding (Section 5.1).

        The key goes to the first open cell of its walk; if the walk meets an invalid cell
        with its fingerprint or runs past the last table it goes to the overflow table; if it
        meets a valid cell with its fingerprint (another key's, or its own if it is already
        present) it is pinned (see the module docstring). No other key's answer changes.

        Raises InvalidParameterError if the key is known to be present (in the overflow or
        pinned table); use :meth:`set` to overwrite.

        Complexity: O(k / (r p)) expected probes while the load stays near the design.
        """
        h1, hb, tag = self._ident(key)
        ident = (h1, hb)
        with self._lock:
            vid = self._value_id(value, "insert")
            if ident in self._pinned or ident in self._overflow:
                raise InvalidParameterError(
                    f"The 'key' parameter of {_OWNER}.insert must be a new key (use set() to change "
                    f"a value). Got {key!r}, which is present, instead."
                )
            st, idx, _val, fp = self._walk(h1)
            if st == LK.OPEN:
                self._write(idx, fp, vid)
            elif st == LK.MATCH:
                self._pinned.set(ident, vid)
            else:
                self._overflow.set(ident, vid)
            self._count += 1
            self._note_keys(1 << tag)

    def remove(self, key: Any) -> None:
        """Delete a key that is present; its cell becomes invalid (stays occupied).

        Raises KeyError when the key is found absent. For a key that was never inserted the
        walk meets a false positive with probability <= e_o and then removes that other key.

        Complexity: O(k / (r p)) expected probes.
        """
        h1, hb, _tag = self._ident(key)
        with self._lock:
            if self._pinned.pop((h1, hb)) is not None or self._overflow.pop((h1, hb)) is not None:
                self._count -= 1
                return
            st, idx, _val, fp = self._walk(h1)
            if st != LK.MATCH:
                raise KeyError(key)
            self._write(idx, fp, 0)
            self._count -= 1

    def clear(self) -> None:
        """Remove every key (and label); the parameters and table sizes stay. Complexity: O(sum M_i)."""
        with self._lock:
            self._words.fill(0)
            self._high.fill(0)
            self._overflow.clear()
            self._pinned.clear()
            self._count = 0
            self._key_mask = 0
            self._landed = None
            if self._codec is not None:
                self._codec = type(self._codec)(value_bits=self.value_bits)

    def copy(self) -> Self:
        """An independent copy. Complexity: O(sum M_i)."""
        with self._lock:
            out = type(self).__new__(type(self))
            out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_bk_lock"})
            out._init_storage(self._sizes.copy(), aligned_copy(self._words), aligned_copy(self._high))
            out._overflow, out._pinned = self._overflow.copy(), self._pinned.copy()
            out._count, out._build_stats = self._count, dict(self._build_stats)
            out._landed = None if self._landed is None else self._landed.copy()
            out._codec = None if self._codec is None else self._codec.copy()
            return out

    # ------------------------------------------------------------------ space and model
    def _table_bits(self) -> int:
        """sum(M_i) * c bits of the tables plus (128 + V) bits per overflow / pinned entry."""
        return self.table_bits() + (len(self._overflow) + len(self._pinned)) * (128 + self.value_bits)

    def table_bits(self) -> int:
        """sum(M_i) * c, the hash tables alone (Eq. 3.17). Complexity: O(1)."""
        return int(self._offsets[-1]) * (self.error_bits + self.value_bits)

    def _stats(self) -> tuple[np.ndarray, np.ndarray, int]:
        occ, val, bad = LK.gf_table_stats(self._words, self._high, self._offsets, self._c, self._vb, self._cb)
        return occ, val, int(bad)

    def _max_cell_value(self) -> int:
        return int(LK.gf_max_value(self._words, self._high, int(self._offsets[-1]), self._c, self._vb, self._cb))

    def table_load_factors(self) -> np.ndarray:
        """Occupied fraction of each table, p_1..p_N (Figs. 4.1, 4.2). Complexity: O(sum M_i)."""
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

    def to_static(self, keys: Any, *, fpr: float | None = None, bumped: bool = True) -> RibbonRetrieval:
        """Freeze this table into a static :class:`~bloomkit.lookup.RibbonRetrieval` of the same
        values (V, labels, seed) at ``fpr`` (default: this table's): ``keys`` are the keys it
        holds (it keeps fingerprints, not keys). :meth:`RibbonRetrieval.from_table` takes the
        other options.

        Complexity: one batch query plus a ribbon build."""
        from .ribbon import RibbonRetrieval

        return RibbonRetrieval.from_table(self, keys, fpr=fpr, bumped=bumped)

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
        return float(predicted_fpr_from_loads(occ / self._sizes, val / self._sizes, self.num_hashes, self.error_bits))

    def location_fpr(self) -> float:
        """e_n = 1/(2^E - 1). Complexity: O(1)."""
        return location_fpr(self.error_bits)

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, loads and predicted rates (what ``bloomkit info`` prints).

        Complexity: O(sum M_i)."""
        occ, val, _bad = self._stats()
        loads = occ / self._sizes
        return {
            **self._info_common(), "capacity": self.capacity, "num_hashes": self.num_hashes,
            "num_tables": self.num_tables, "load_factor": self.load_factor, "storage_ratio": self.storage_ratio,
            "table_bits": self.table_bits(), "overflow_size": len(self._overflow), "pinned_size": len(self._pinned),
            "table_load_factors": [float(x) for x in loads],
            "predicted_fpr": float(predicted_fpr_from_loads(loads, val / self._sizes, self.num_hashes, self.error_bits)),
            "fpr_bound": self.fpr_bound(), "overfilled": bool(self._count > self.capacity),
        }

    def __repr__(self) -> str:
        return (
            f"GeometricFilter(keys={self._count}, V={self.value_bits}, E={self.error_bits}, "
            f"k={self.num_hashes}, N={self.num_tables}, r={self.storage_ratio:.4f}, "
            f"p={self.load_factor:.4f}, overflow={len(self._overflow)})"
        )

    # ------------------------------------------------------------------ invariants
    def _check(self) -> None:
        """Assert the structure's invariants (called by tests after mutations)."""
        if not (self._sizes.ndim == 1 and 1 <= len(self._sizes) <= MAX_TABLES and (self._sizes >= 1).all()):
            raise InvariantError("self._sizes.ndim == 1 and 1 <= len(self._sizes) <= MAX_TABLES and (self._sizes >= 1).all()")
        if not (np.array_equal(self._offsets, _offsets(self._sizes))):
            raise InvariantError("np.array_equal(self._offsets, _offsets(self._sizes))")
        if not ((self._c, self._vb, self._cb) == _cell_layout(self.error_bits, self.value_bits)):
            raise InvariantError("(self._c, self._vb, self._cb) == _cell_layout(self.error_bits, self.value_bits)")
        total = int(self._offsets[-1])
        for arr, bits in ((self._words, self._c), (self._high, self._cb)):
            if not (arr.dtype == np.uint64 and len(arr) == words_for(total, bits)):
                raise InvariantError("arr.dtype == np.uint64 and len(arr) == words_for(total, bits)")
            if not (padding_clear(arr, total * bits)):
                raise InvariantError("padding bits are set")
        _occ, val, bad = self._stats()
        if not (bad == 0):
            raise InvariantError("a cell has a value part but no fingerprint")
        hi = (1 << self.value_bits) - 1
        labels = hi if self._codec is None else len(self._codec)
        for table in (self._overflow, self._pinned):
            for _ident, v in table.items():
                if not (1 <= v <= min(hi, labels)):
                    raise InvariantError("1 <= v <= min(hi, labels)")
        for ident, _v in self._pinned.items():
            if not (ident not in self._overflow):
                raise InvariantError("ident not in self._overflow")
        if not (self._codec is None or self._max_cell_value() <= len(self._codec)):
            raise InvariantError("self._codec is None or self._max_cell_value() <= len(self._codec)")
        # every live key has exactly one of: a valid cell, an overflow entry, a pinned entry
        if not (self._count == int(val.sum()) + len(self._overflow) + len(self._pinned)):
            raise InvariantError("self._count == int(val.sum()) + len(self._overflow) + len(self._pinned)")

    # ------------------------------------------------------------------ persistence
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {
            "capacity": self.capacity, "value_bits": self.value_bits, "error_bits": self.error_bits,
            "fpr": self.fpr, "num_hashes": self.num_hashes, "load_factor": self.load_factor,
            "storage_ratio": self.storage_ratio, "p_hat": self.params.p_hat, "count": self._count,
            "key_types": list(self.key_types),
        }
        arrays = {"sizes": self._sizes, "words": self._words}
        if self._cb:
            arrays["high"] = self._high
        arrays.update(self._overflow.to_arrays("ovf"))
        arrays.update(self._pinned.to_arrays("pin"))
        arrays.update(self._label_arrays())
        return params, arrays

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Self:
        v, eb = params["value_bits"], params["error_bits"]
        sizes, words, high = arrays["sizes"], arrays["words"], arrays.get("high")
        if not 1 <= len(sizes) <= MAX_TABLES:
            raise FormatError(f"the 'sizes' array of {_OWNER} must hold 1 to {MAX_TABLES} tables; got {len(sizes)}")
        total = sum(sizes.tolist())  # Python ints: no wrap-around, whatever the file says
        c, _vb, cb = _cell_layout(eb, v)
        for name, arr, bits in (("words", words, c), ("high", high, cb)):
            need = words_for(total, bits)
            if (arr is None and bits) or (arr is not None and not bits) or (arr is not None and len(arr) != need):
                raise FormatError(
                    f"the {name!r} array of {_OWNER} must hold {need if bits else 0} words for the {total} cells "
                    f"of its 'sizes' ({bits} bits each); got {'none' if arr is None else len(arr)}"
                )
            if arr is not None and not padding_clear(arr, total * bits):
                raise FormatError(f"the {name!r} array of {_OWNER} has padding bits set")
        codec = cls._read_labels(arrays, v, _OWNER)
        top = (1 << v) - 1 if codec is None else min((1 << v) - 1, len(codec))
        gf = cls.__new__(cls)
        gf.seed = seed
        gf.capacity, gf.value_bits, gf.fpr, gf.num_hashes = params["capacity"], v, params["fpr"], params["num_hashes"]
        gf._set_params(GeometricParameters(params["p_hat"], eb, params["load_factor"], params["storage_ratio"],
                                           len(sizes)))
        gf._init_storage(sizes, words, aligned_zeros(1, np.uint64) if high is None else high)
        gf._overflow = ExactTable.from_arrays(arrays, "ovf", top, _OWNER)
        gf._pinned = ExactTable.from_arrays(arrays, "pin", top, _OWNER)
        if any(ident in gf._overflow for ident, _v in gf._pinned.items()):
            raise FormatError(f"the pinned table of {_OWNER} holds a key of its overflow table")
        gf._codec = codec
        gf._count = params["count"]
        gf._restore_keys(params)
        _occ, val, bad = gf._stats()
        if bad:
            raise FormatError(f"the 'words' array of {_OWNER} holds {bad} cells with a value but no fingerprint")
        if codec is not None and gf._max_cell_value() > len(codec):
            raise FormatError(f"a cell of {_OWNER} holds a label id beyond its {len(codec)} labels")
        if gf._count != int(val.sum()) + len(gf._overflow) + len(gf._pinned):
            raise FormatError(f"the 'count' parameter of {_OWNER} ({gf._count}) does not match its cells and tables")
        return gf
