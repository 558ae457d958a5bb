"""The Bloomier filter (Chazelle et al. 2004) as described in document 001, Section 2.2: the
baseline the Geometric filter is measured against.

One table of M = 1.23 |S| cells of c = V + E bits, k = 3 cells per key, the value recovered
by XOR (Eq. 2.1) ``g(x) = f(x) XOR A[h_1(x)] XOR A[h_2(x)] XOR A[h_3(x)]``. Encoding needs an
ordered matching (Algorithm 1), found by peeling cells of degree one; on failure the
positions are re-drawn with a new salt. Each key is then written into its critical cell by
Eq. (2.2) in reverse peeling order.

Implementation notes (differences from the thesis, all measured in the experiments):

* The three cells of a key are drawn from three disjoint blocks of M/3 cells, so a key's cells
  are distinct; M is rounded to 3 * ceil((1.23 |S| + 32) / 3): the +32 cells make tiny sets
  peelable (as in Graf and Lemire's xor filters) and are negligible for large |S|.
* Peeling keeps, per cell, a degree counter and the XOR of incident key indices instead of
  adjacency lists (the thesis's 8.23 |S| units of Algorithm 1); encoding still holds every
  key's hash, the counters and the peeling order: about 49 bytes per key (measured by the
  benchmark) against the filter's c * 1.23 / 8.
* E = ceil(log2 1/e_o) error bits; an absent key gets a non-zero answer with probability
  (2^V - 1) / 2^c <= 2^-E <= e_o. Cells of more than 64 bits (V up to 64) are split at bit 64
  into two packed arrays (:mod:`._kernels`).
* No updates after encoding: :meth:`set`, :meth:`update`, :meth:`insert` and :meth:`remove`
  raise :class:`UpdateNotSupportedError` (the thesis's Section 2.2.3 "Inflexibility").
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Self

import numpy as np

from .._engine.hashing import check_seed, hash_keys
from .._engine.storage import aligned_copy, aligned_zeros
from .._format import ArraySpec
from .._validation import FPR, KEY_TYPES, Int, InvariantError, Optional, Real, param_error
from ..errors import BloomkitError, FormatError, UpdateNotSupportedError
from . import _bloomier_kernels as BK
from ._input import ON_DUPLICATE, check_count, combine_duplicates, read_pairs, read_values
from ._mapping import LABEL_ARRAYS, StaticLookup, padding_clear, words_for
from .params import ERROR_BITS, MAX_ERROR_BITS, VALUE_BITS

__all__ = ["BloomierFilter", "UpdateNotSupportedError"]

_OWNER = "BloomierFilter"
MAX_ATTEMPTS = 10_000
BL_STORAGE_RATIO = Real(1.23, 100.0)
"""M / |S|: at least 1.23 (the peeling threshold of 3-hypergraphs is about 1.222)."""
ATTEMPTS = Int(1, MAX_ATTEMPTS)
BLOCK = Int(1, 1 << 56)
"""M / 3, cells per block."""


def _layout(c: int) -> tuple[int, int]:
    """(bits of a cell in ``words``, bits in ``high``)."""
    return min(c, 64), max(0, c - 64)


class BloomierFilter(StaticLookup):
    """Static key -> value table with bounded error (Bloomier filter, doc 001 Sec. 2.2).

    Build with :meth:`build`; values are integers in [1, 2^V - 1] (V <= 64) or str labels,
    absent keys get 0 / None (or ``default``) except with probability (2^V - 1)/2^c <= e_o.

    Notes
    -----
    Thread safety: a built table is never written (updates raise), so any number of threads
    may query it at once; the query kernel releases the GIL. ``clear`` while other threads
    query makes their answers undefined: do it from one thread.

    Examples
    --------
    >>> bf = BloomierFilter.build(["x", "y"], [5, 7], value_bits=4, fpr=2**-10)
    >>> bf.get("x"), bf["y"]
    (5, 7)
    """

    _PARAMS: ClassVar[Any] = {
        "value_bits": VALUE_BITS, "error_bits": ERROR_BITS, "fpr": FPR, "storage_ratio": BL_STORAGE_RATIO,
        "block": BLOCK, "salt": Int(0, MAX_ATTEMPTS - 1), "count": Int(0), "key_types": KEY_TYPES,
    }
    _ARRAYS: ClassVar[Any] = {"words": ArraySpec("<u8"), "high": ArraySpec("<u8", optional=True), **LABEL_ARRAYS}
    _PROBES_PER_KEY: ClassVar[int] = 3  # Eq. (2.1): k = 3 cells
    _FROZEN: ClassVar[str] = ("a Bloomier filter cannot be changed after encoding (every cell is shared by the "
                              "XOR of Eq. 2.1)")

    def __init__(self) -> None:  # use build()
        self.seed = 0
        self.value_bits = 16
        self.error_bits = 16
        self.fpr = 2.0**-16
        self.storage_ratio = 1.23
        self._block = 1
        self._salt = 0
        self._count = 0
        self._attempts = 0
        self._setup_words()

    def _setup_words(self, words: np.ndarray | None = None, high: np.ndarray | None = None) -> None:
        self._c = self.value_bits + self.error_bits
        self._clo, self._chi = _layout(self._c)
        cells = 3 * self._block
        self._words = aligned_zeros(words_for(cells, self._clo), np.uint64, "the Bloomier filter's cells") \
            if words is None else words
        self._high = aligned_zeros(words_for(cells, self._chi), np.uint64, "the Bloomier filter's cells") \
            if high is None else high

    @classmethod
    def build(
        cls,
        keys: Any,
        values: Any = None,
        *,
        value_bits: int = 16,
        fpr: float = 2.0**-16,
        storage_ratio: float = 1.23,
        error_bits: int | None = None,
        seed: int = 0,
        on_duplicate: str = "error",
        max_attempts: int = 64,
    ) -> Self:
        """Encode ``keys -> values``: ordered matching (Algorithm 1) then Eq. (2.2).

        Parameters
        ----------
        keys : mapping, or a column: list, tuple, numpy, pyarrow, pandas, polars
            By position (a pandas index is ignored); a mapping gives the values too.
        values : column of int or str, optional
            Integers in [1, 2^V - 1], or str labels (numbered by a saved ValueCodec).
        value_bits : int
            V in [1, 64].
        fpr : float
            e_o in (0, 1); E = ceil(log2 1/e_o) (at most 63) unless ``error_bits`` is given.
        storage_ratio : float
            M / |S|, at least 1.23 (the peeling threshold of 3-hypergraphs is about 1.222).
        seed : int
        on_duplicate : {"error", "last", "sum", "max", "min"}
            A key given twice raises (default), or its values are combined (labels: "error",
            "last").
        max_attempts : int
            Salts tried before giving up.

        Returns
        -------
        BloomierFilter

        Complexity: O((k + 1)|S| + M) time per attempt (Section 2.2.2), plus a sort of the
        hashes (duplicates); O(|S| + M) words of auxiliary memory.
        """
        owner = f"{_OWNER}.build"
        dup = ON_DUPLICATE(on_duplicate, "on_duplicate", owner)
        v = VALUE_BITS(value_bits, "value_bits", owner)
        e = FPR(fpr, "fpr", owner)
        r = BL_STORAGE_RATIO(storage_ratio, "storage_ratio", owner)
        eb = Optional(ERROR_BITS)(error_bits, "error_bits", owner)
        if eb is None:
            eb = max(1, math.ceil(math.log2(1.0 / e) - 1e-12))
            if eb > MAX_ERROR_BITS:
                raise param_error("fpr", owner, f"such that ceil(log2(1/fpr)) <= {MAX_ERROR_BITS}", fpr)
        attempts = ATTEMPTS(max_attempts, "max_attempts", owner)
        sd = check_seed(seed, owner)
        keys, raw, n = read_pairs(keys, values, owner)
        vals, codec = read_values(raw, v, owner)
        check_count(vals, n, owner)
        h1, tags = hash_keys(keys, sd, owner=owner)
        keys, h1, vals, _dups = combine_duplicates(keys, h1, vals, sd, v, dup, owner, labels=codec is not None,
                                                   collisions="error")
        bf = cls()
        bf.seed, bf.value_bits, bf.error_bits, bf.fpr, bf.storage_ratio = sd, v, eb, e, r
        bf._codec = codec
        bf._count = len(h1)
        bf._block = max(1, math.ceil((r * len(h1) + 32) / 3))
        bf._setup_words()
        block = np.uint64(bf._block)
        for salt in range(attempts):
            ok, oc, cnt = BK.bl_peel(h1, np.uint64(salt), block)
            if cnt == len(h1):
                BK.bl_assign(h1, vals, ok, oc, np.uint64(salt), block, bf._words, bf._high, bf._clo, bf._chi)
                bf._salt = salt
                bf._attempts = salt + 1
                bf._note_keys(tags)
                return bf
        raise BloomkitError(
            f"BloomierFilter: no ordered matching found in {attempts} attempts for {len(h1)} keys "
            f"at M = {3 * bf._block}; raise storage_ratio"
        )

    # ------------------------------------------------------------------ queries
    def _query(self, h1: np.ndarray) -> np.ndarray:
        out = np.empty(len(h1), dtype=np.uint64)
        BK.bl_query(h1, self._words, self._high, np.uint64(self._salt), np.uint64(self._block), self._clo, self._chi,
                    self.value_bits, out)
        return out

    def clear(self) -> None:
        """Remove every key (all cells zero; labels forgotten); the size stays. Complexity: O(M)."""
        with self._lock:
            self._words.fill(0)
            self._high.fill(0)
            self._count = 0
            self._key_mask = 0
            if self._codec is not None:
                self._codec = type(self._codec)(value_bits=self.value_bits)

    def copy(self) -> Self:
        """An independent copy. Complexity: O(M)."""
        out = type(self).__new__(type(self))
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_bk_lock"})
        out._setup_words(aligned_copy(self._words), aligned_copy(self._high))
        out._codec = None if self._codec is None else self._codec.copy()
        return out

    # ------------------------------------------------------------------ space and model
    @property
    def num_cells(self) -> int:
        """M."""
        return 3 * self._block

    def _table_bits(self) -> int:
        """M * c."""
        return 3 * self._block * self._c

    def predicted_fpr(self) -> float:
        """(2^V - 1) / 2^c: an absent key's g(x) is uniform on [0, 2^c) (a table of L str
        labels: L / 2^c, only the ids of labels count). Complexity: O(1)."""
        top = (1 << self.value_bits) - 1 if self._codec is None else len(self._codec)
        return top / float(1 << self._c)

    def build_stats(self) -> dict[str, int]:
        """Salts tried by the last build."""
        return {"attempts": self._attempts, "salt": self._salt}

    def info(self) -> dict[str, Any]:
        """Parameters, sizes and the predicted rate (what ``bloomkit info`` prints). Complexity: O(1)."""
        return {**self._info_common(), "num_cells": self.num_cells, "storage_ratio": self.storage_ratio,
                "num_hashes": 3, "salt": self._salt, "predicted_fpr": self.predicted_fpr()}

    def __repr__(self) -> str:
        return f"BloomierFilter(keys={self._count}, V={self.value_bits}, E={self.error_bits}, M={self.num_cells})"

    def _check(self) -> None:
        """Assert the structure's invariants."""
        if not (self._block >= 1 and self._c == self.value_bits + self.error_bits):
            raise InvariantError("self._block >= 1 and self._c == self.value_bits + self.error_bits")
        if not ((self._clo, self._chi) == _layout(self._c)):
            raise InvariantError("(self._clo, self._chi) == _layout(self._c)")
        for arr, bits in ((self._words, self._clo), (self._high, self._chi)):
            if not (arr.dtype == np.uint64 and len(arr) == words_for(3 * self._block, bits)):
                raise InvariantError("arr.dtype == np.uint64 and len(arr) == words_for(3 * self._block, bits)")
            if not (padding_clear(arr, 3 * self._block * bits)):
                raise InvariantError("padding bits are set")
        if not (self._count <= 3 * self._block):
            raise InvariantError("self._count <= 3 * self._block")

    # ------------------------------------------------------------------ persistence
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {
            "value_bits": self.value_bits, "error_bits": self.error_bits, "fpr": self.fpr,
            "storage_ratio": self.storage_ratio, "block": self._block, "salt": self._salt, "count": self._count,
            "key_types": list(self.key_types),
        }
        arrays = {"words": self._words}
        if self._chi:
            arrays["high"] = self._high
        arrays.update(self._label_arrays())
        return params, arrays

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Self:
        v, eb, block = params["value_bits"], params["error_bits"], params["block"]
        clo, chi = _layout(v + eb)
        for name, bits in (("words", clo), ("high", chi)):
            arr = arrays.get(name)
            need = words_for(3 * block, bits)
            if (arr is None) != (bits == 0) or (arr is not None and len(arr) != need):
                raise FormatError(
                    f"the {name!r} array of {_OWNER} must hold {need if bits else 0} words for {3 * block} cells "
                    f"of {bits} bits; got {'none' if arr is None else len(arr)}"
                )
            if arr is not None and not padding_clear(arr, 3 * block * bits):
                raise FormatError(f"the {name!r} array of {_OWNER} has padding bits set")
        if params["count"] > 3 * block:
            raise FormatError(f"the 'count' parameter of {_OWNER} ({params['count']}) exceeds its {3 * block} cells")
        bf = cls.__new__(cls)
        bf.seed = seed
        bf.value_bits, bf.error_bits, bf.fpr, bf.storage_ratio = v, eb, params["fpr"], params["storage_ratio"]
        bf._block, bf._salt, bf._count, bf._attempts = block, params["salt"], params["count"], 0
        high = arrays.get("high")
        bf._setup_words(arrays["words"], aligned_zeros(1, np.uint64) if high is None else high)
        bf._codec = cls._read_labels(arrays, v, _OWNER)
        bf._restore_keys(params)
        return bf
