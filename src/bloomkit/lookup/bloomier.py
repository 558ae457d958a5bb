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
  (2^V - 1) / 2^c <= 2^-E <= e_o.
* No updates after encoding: :meth:`update`, :meth:`insert` and :meth:`remove` raise
  :class:`UpdateNotSupportedError` (the thesis's Section 2.2.3 "Inflexibility").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._format import Persistable
from .._hashing import HASH_XXH64, check_seed, hash64, hash_many
from .._parallel import hash_batch
from .._validation import check_float, check_int, param_error
from ..errors import BloomkitError, FormatError, InvalidParameterError, UpdateNotSupportedError
from . import _kernels as LK
from ._mapping import LookupMapping
from .overflow import alt_seed, check_values, normalize_input, subset_keys
from .params import MAX_CELL_BITS, MAX_VALUE_BITS

__all__ = ["BloomierFilter", "UpdateNotSupportedError"]

_OWNER = "BloomierFilter"


class BloomierFilter(LookupMapping, Persistable):
    """Static key -> value table with bounded error (Bloomier filter, doc 001 Sec. 2.2).

    Build with :meth:`build`; values are integers in [1, 2^V - 1], absent keys return 0 (or
    ``default``) except with probability (2^V - 1)/2^c <= e_o.

    Examples
    --------
    >>> bf = BloomierFilter.build(["x", "y"], [5, 7], value_bits=4, fpr=2**-10)
    >>> bf.get("x"), bf["y"]
    (5, 7)
    """

    _STRUCTURE = "lookup.BloomierFilter"

    def __init__(self) -> None:  # use build()
        self.seed = 0
        self._hash_id = HASH_XXH64
        self.value_bits = 16
        self.error_bits = 16
        self.fpr = 2.0**-16
        self.storage_ratio = 1.23
        self._block = 1
        self._salt = 0
        self._count = 0
        self._attempts = 0
        self._setup_words(None)

    def _setup_words(self, words: np.ndarray | None) -> None:
        self._cell_bits = self.value_bits + self.error_bits
        self._mask = np.uint64((1 << self._cell_bits) - 1)
        nwords = (3 * self._block * self._cell_bits + 63) // 64 + 1
        self._words = np.zeros(nwords, dtype=np.uint64) if words is None else words

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
    ) -> BloomierFilter:
        """Encode ``keys -> values``: ordered matching (Algorithm 1) then Eq. (2.2).

        Parameters
        ----------
        keys : mapping, list, tuple, numpy array or pyarrow array
        values : sequence of int, optional
            Integers in [1, 2^V - 1].
        value_bits : int
            V in [1, 32].
        fpr : float
            e_o in (0, 1); E = ceil(log2 1/e_o) unless ``error_bits`` is given.
        storage_ratio : float
            M / |S|, at least 1.23 (the peeling threshold of 3-hypergraphs is about 1.222).
        seed : int
        on_duplicate : {"error", "last"}
        max_attempts : int
            Salts tried before giving up.

        Returns
        -------
        BloomierFilter

        Complexity: O((k + 1)|S| + M) time per attempt (Section 2.2.2); O(|S| + M) words of
        auxiliary memory.
        """
        keys, values, n = normalize_input(keys, values, _OWNER, on_duplicate)
        v = check_int(value_bits, "value_bits", _OWNER, lo=1, hi=MAX_VALUE_BITS)
        e = check_float(fpr, "fpr", _OWNER, 0, 1, lo_open=True, hi_open=True)
        r = check_float(storage_ratio, "storage_ratio", _OWNER, 1.23, 100.0)
        if error_bits is None:
            eb = max(1, math.ceil(math.log2(1.0 / e) - 1e-12))
        else:
            eb = check_int(error_bits, "error_bits", _OWNER, lo=1, hi=MAX_CELL_BITS - v)
        if eb + v > MAX_CELL_BITS:
            raise param_error("fpr", _OWNER, f"such that ceil(log2(1/fpr)) + V <= {MAX_CELL_BITS}", fpr)
        attempts = check_int(max_attempts, "max_attempts", _OWNER, lo=1, hi=10_000)
        bf = cls()
        bf.seed = check_seed(seed, _OWNER)
        bf.value_bits, bf.error_bits, bf.fpr, bf.storage_ratio = v, eb, e, r
        vals = check_values(values, v, _OWNER)
        h1 = hash_many(keys, bf.seed)
        if len(h1) != n:
            raise InvalidParameterError(f"The 'keys' parameter of {_OWNER} yielded {len(h1)} keys for {n} values.")
        h1, vals = bf._dedupe(keys, h1, vals, on_duplicate)
        bf._count = len(h1)
        bf._block = max(1, math.ceil((r * len(h1) + 32) / 3))
        bf._setup_words(None)
        block = np.uint64(bf._block)
        for salt in range(attempts):
            ok, oc, cnt = LK.bl_peel(h1, np.uint64(salt), block)
            if cnt == len(h1):
                LK.bl_assign(h1, vals, ok, oc, np.uint64(salt), block, bf._words, bf._cell_bits)
                bf._salt = salt
                bf._attempts = salt + 1
                return bf
        raise BloomkitError(
            f"BloomierFilter: no ordered matching found in {attempts} attempts for {len(h1)} keys "
            f"at M = {3 * bf._block}; raise storage_ratio"
        )

    def _dedupe(self, keys: Any, h1: np.ndarray, vals: np.ndarray, on_duplicate: str) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(h1, kind="stable")
        sh = h1[order]
        same = np.flatnonzero(sh[1:] == sh[:-1])
        if len(same) == 0:
            return h1, vals
        involved = np.unique(np.concatenate([order[same], order[same + 1]]))
        hb = dict(zip(involved.tolist(), hash_many(subset_keys(keys, involved), alt_seed(self.seed)).tolist(), strict=True))
        drop = []
        for s in same.tolist():
            a, b = int(order[s]), int(order[s + 1])  # a < b (stable sort)
            if hb[a] != hb[b]:
                raise InvalidParameterError(
                    f"The 'seed' parameter of {_OWNER} gives two different keys the same 64-bit hash "
                    f"(indices {a} and {b}); choose another seed. Got {self.seed} instead."
                )
            if on_duplicate == "error":
                key = subset_keys(keys, np.array([b]))[0]
                raise InvalidParameterError(
                    f"The 'keys' parameter of {_OWNER} must not repeat a key (pass "
                    f"on_duplicate='last' to keep the last value). Got {key!r} twice (second time at "
                    f"index {b}) instead."
                )
            drop.append(a)
        keep = np.ones(len(h1), dtype=bool)
        keep[drop] = False
        return h1[keep], vals[keep]

    # ------------------------------------------------------------------ queries
    def get_many(self, keys: Any, default: int = 0) -> np.ndarray:
        """Values of a batch of keys by Eq. (2.1); ``default`` where the answer is invalid.

        Complexity: O(n k) with k = 3 cell reads per key.
        """
        salt, block = np.uint64(self._salt), np.uint64(self._block)

        def query(h: np.ndarray, lo: int, hi: int) -> np.ndarray:  # on several threads for big batches
            part = np.empty(hi - lo, dtype=np.int64)
            LK.bl_query(h[lo:hi], self._words, salt, block, self._cell_bits, self.value_bits, part)
            return part

        _h1, _parts, res = hash_batch(keys, lambda ks: hash_many(ks, self.seed), query)
        out = res[0] if len(res) == 1 else np.concatenate(res)
        if default:
            out[out == 0] = default
        return out

    def get(self, key: Any, default: int = 0) -> int:
        """Value of one key. Complexity: O(k)."""
        out = np.empty(1, dtype=np.int64)
        LK.bl_query(
            np.array([hash64(key, self.seed)], dtype=np.uint64),
            self._words,
            np.uint64(self._salt),
            np.uint64(self._block),
            self._cell_bits,
            self.value_bits,
            out,
        )
        v = int(out[0])
        return v if v else default

    # ------------------------------------------------------------------ no updates
    def _refuse(self, what: str) -> UpdateNotSupportedError:
        return UpdateNotSupportedError(
            f"BloomierFilter.{what}: a Bloomier filter cannot be changed after encoding (every "
            "cell is shared by the XOR of Eq. 2.1); rebuild it, or use GeometricFilter, which "
            "supports update/insert/remove"
        )

    def update(self, key: Any, value: int) -> None:
        """Always raises UpdateNotSupportedError (Section 2.2.3)."""
        raise self._refuse("update")

    def insert(self, key: Any, value: int) -> None:
        """Always raises UpdateNotSupportedError (Section 2.2.3)."""
        raise self._refuse("insert")

    def remove(self, key: Any) -> None:
        """Always raises UpdateNotSupportedError (Section 2.2.3)."""
        raise self._refuse("remove")

    # ------------------------------------------------------------------ space and model
    @property
    def num_cells(self) -> int:
        """M."""
        return 3 * self._block

    def size_in_bits(self) -> int:
        """M * c. Complexity: O(1)."""
        return 3 * self._block * self._cell_bits

    def bits_per_key(self) -> float:
        """size_in_bits() / |S|. Complexity: O(1)."""
        return self.size_in_bits() / max(1, self._count)

    def predicted_fpr(self) -> float:
        """(2^V - 1) / 2^c: an absent key's g(x) is uniform on [0, 2^c). Complexity: O(1)."""
        return ((1 << self.value_bits) - 1) / float(1 << self._cell_bits)

    def build_stats(self) -> dict[str, int]:
        """Salts tried by the last build."""
        return {"attempts": self._attempts, "salt": self._salt}

    def __repr__(self) -> str:
        return f"BloomierFilter(keys={self._count}, V={self.value_bits}, E={self.error_bits}, M={self.num_cells})"

    def _check(self) -> None:
        """Assert the structure's invariants."""
        assert self._block >= 1 and self._cell_bits == self.value_bits + self.error_bits <= MAX_CELL_BITS
        total = 3 * self._block * self._cell_bits
        assert self._words.dtype == np.uint64 and len(self._words) == (total + 63) // 64 + 1
        w, b = divmod(total, 64)
        assert not self._words[w + 1 :].any()
        assert (int(self._words[w]) >> b == 0) if b else self._words[w] == 0

    # ------------------------------------------------------------------ persistence
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {
            "value_bits": self.value_bits,
            "error_bits": self.error_bits,
            "fpr": self.fpr,
            "storage_ratio": self.storage_ratio,
            "block": self._block,
            "salt": self._salt,
            "count": self._count,
        }
        return params, {"words": self._words}

    @classmethod
    def _from_state(
        cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int
    ) -> BloomierFilter:
        if hash_id != HASH_XXH64:
            raise FormatError(f"BloomierFilter uses hash id {HASH_XXH64}, the file says {hash_id}")
        try:
            v = check_int(params["value_bits"], "value_bits", _OWNER, lo=1, hi=MAX_VALUE_BITS)
            eb = check_int(params["error_bits"], "error_bits", _OWNER, lo=1, hi=MAX_CELL_BITS - v)
            fpr = check_float(params["fpr"], "fpr", _OWNER, 0, 1, lo_open=True, hi_open=True)
            r = check_float(params["storage_ratio"], "storage_ratio", _OWNER, 1.23, 100.0)
            block = check_int(params["block"], "block", _OWNER, lo=1)
            salt = check_int(params["salt"], "salt", _OWNER, lo=0, hi=(1 << 63))
            count = check_int(params["count"], "count", _OWNER, lo=0)
        except (KeyError, InvalidParameterError) as e:
            raise FormatError(f"invalid BloomierFilter parameters: {e}") from None
        words = arrays.get("words")
        if words is None or words.dtype != np.uint64 or words.ndim != 1:
            raise FormatError("BloomierFilter needs a uint64 'words' array")
        if len(words) != (3 * block * (v + eb) + 63) // 64 + 1:
            raise FormatError("BloomierFilter cell array does not match its size")
        bf = cls()
        bf.seed = int(seed)
        bf.value_bits, bf.error_bits, bf.fpr, bf.storage_ratio = v, eb, fpr, r
        bf._block, bf._salt, bf._count, bf._attempts = block, salt, count, 0
        bf._setup_words(np.ascontiguousarray(words).copy())
        return bf
