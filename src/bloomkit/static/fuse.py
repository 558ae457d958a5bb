"""Binary fuse filters (Graf and Lemire, "Binary Fuse Filters: Fast and Smaller Than Xor
Filters", ACM JEA 27, 2022): a static membership filter at 1.13x (3-wise) / 1.08x (4-wise) the
information bound, one memory access per hash.

M = (S + arity - 1) L cells of r bits (r = 8, 16 or 32) hold fingerprints such that, for every
key x of the set, ``F[p_0(x)] XOR ... XOR F[p_{arity-1}(x)] = fp(x)``; the cells of a key lie in
``arity`` consecutive segments of L cells. The build peels the hypergraph of the keys' cells
(a cell holding one key fixes that key last) and assigns the fingerprints in reverse peeling
order; when peeling fails it retries with a new salt (bounded by ``max_attempts``, each attempt
reported by :meth:`BinaryFuseFilter.build_stats`). Sizes and rates: :mod:`bloomkit.static.model`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

import numpy as np

from .._engine.hashing import check_seed, key_type_mask
from .._engine.storage import aligned_copy, aligned_zeros
from .._format import ArraySpec
from .._validation import KEY_TYPES, Int, InvariantError, Options
from ..errors import BloomkitError, FormatError
from . import _kernels as FK
from ._base import StaticFilter, fingerprint_bits_of, read_keys
from .model import MAX_SEGMENT, fuse_bits_per_key, fuse_layout, static_fpr

__all__ = ["BinaryFuseFilter"]

_OWNER = "BinaryFuseFilter"
ARITY = Options(3, 4)
FINGERPRINT_BITS = Options(8, 16, 32)
_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32}
MAX_ATTEMPTS = 1000
ATTEMPTS = Int(1, MAX_ATTEMPTS)


class BinaryFuseFilter(StaticFilter):
    """Static membership filter: a binary fuse filter, 3- or 4-wise, r-bit fingerprints.

    Build with :meth:`build`; ``key in f`` / :meth:`contains_many` answer True for every key it
    was built from and for an absent key with probability 2^-r (:meth:`predicted_fpr`). It
    cannot change afterwards (``add``, ``update``, ``|`` raise UpdateNotSupportedError).

    Notes
    -----
    Thread safety: a built filter is never written, so any number of threads may query it at
    once; the query kernel releases the GIL. ``clear`` while other threads query makes their
    answers undefined.

    Examples
    --------
    >>> f = BinaryFuseFilter.build(["apple", "pear", "plum"], fingerprint_bits=16)
    >>> "pear" in f, len(f), f.arity
    (True, 3, 4)
    """

    _PARAMS: ClassVar[Any] = {
        "arity": ARITY, "fingerprint_bits": FINGERPRINT_BITS, "segment_length": Int(1, 1 << 18),
        "segment_count": Int(1, 1 << 40), "salt": Int(0, MAX_ATTEMPTS * 2), "count": Int(0),
        "key_types": KEY_TYPES,
    }
    _ARRAYS: ClassVar[Any] = {"fingerprints": ArraySpec("|u1")}

    def __init__(self) -> None:  # use build(); this is the empty filter of 8-bit fingerprints
        self.seed = 0
        self.arity = 4
        self.fingerprint_bits = 8
        self._seg_len = 4
        self._seg_count = 1
        self._salt = 0
        self._count = 0
        self._attempts = 0
        self._dups = 0
        self._setup()

    def _setup(self, raw: np.ndarray | None = None) -> None:
        cells = (self._seg_count + self.arity - 1) * self._seg_len
        dt = _DTYPES[self.fingerprint_bits]
        if raw is None:
            self._fps = aligned_zeros(cells, dt, "the binary fuse filter's fingerprints")
        else:
            self._fps = raw.view(np.dtype(dt).newbyteorder("<")).astype(dt, copy=False)
        self._span = np.uint64(self._seg_count * self._seg_len)
        self._shift = np.uint64(64 - self.fingerprint_bits)

    @classmethod
    def build(
        cls,
        keys: Any,
        *,
        fingerprint_bits: int | None = None,
        fpr: float | None = None,
        arity: int = 4,
        seed: int = 0,
        max_attempts: int = 100,
    ) -> Self:
        """Build the filter of a set of keys.

        Parameters
        ----------
        keys : list, tuple, numpy, pyarrow, pandas or polars column
            By position; a key given twice is kept once (a set). NaN and nulls are refused.
        fingerprint_bits : {8, 16, 32}, optional
            r; the false positive rate is 2^-r. Default 8 (or the smallest r with 2^-r <= fpr).
        fpr : float, optional
            A target rate instead of ``fingerprint_bits``.
        arity : {3, 4}
            Cells per key: 4 is smaller (1.075 M/n for large n), 3 is a little faster to query.
        seed : int
        max_attempts : int
            Salts tried before giving up (each attempt fails with a small probability that
            falls with n; duplicates do not use up attempts).

        Returns
        -------
        BinaryFuseFilter

        Raises
        ------
        BloomkitError
            No peelable layout in ``max_attempts`` salts (the message names the count).

        Complexity: O(n) expected time per attempt; about 9 n + 13 M bytes of working memory
        beside the keys' 8-byte hashes.
        """
        owner = f"{_OWNER}.build"
        r = fingerprint_bits_of(fingerprint_bits, fpr, owner, FINGERPRINT_BITS, (8, 16, 32))
        a = ARITY(arity, "arity", owner)
        attempts = ATTEMPTS(max_attempts, "max_attempts", owner)
        sd = check_seed(seed, owner)
        h1, tags = read_keys(keys, owner, sd)
        f = cls()
        f.seed, f.arity, f.fingerprint_bits = sd, a, r
        deduped = False
        tried = 0
        while True:
            n = len(h1)
            seg, count, cells = fuse_layout(n, a)
            f._seg_len, f._seg_count = seg, count
            f._setup()
            block_bits = max(1, min(20, (count - 1).bit_length()))
            for salt in range(tried, attempts):
                hs, js, top, dups, overflow = FK.fuse_peel(h1, np.uint64(salt), a, np.uint64(seg), f._span, cells,
                                                           block_bits)
                tried = salt + 1
                if overflow:
                    continue
                if top + dups == n:
                    FK.fuse_assign(hs, js, top, f._fps, a, np.uint64(seg), f._span, f._shift)
                    f._salt, f._attempts, f._count, f._dups = salt, tried, top, f._dups + dups
                    f._note_keys(tags)
                    return f
                if dups and not deduped:
                    break  # repeated keys left some cells unpeelable: drop them, same attempt budget
            else:
                raise BloomkitError(
                    f"{_OWNER}: no peelable layout found in {attempts} attempts for {n} keys "
                    f"({cells} cells, {a}-wise); raise max_attempts or use arity={7 - a}")
            uniq = np.unique(h1)
            f._dups += n - len(uniq)
            h1, deduped = uniq, True

    # ------------------------------------------------------------------ queries
    def _test(self, h1: np.ndarray) -> np.ndarray:
        out = np.empty(len(h1), dtype=np.bool_)
        FK.fuse_contains(h1, self._fps, np.uint64(self._salt), self.arity, np.uint64(self._seg_len), self._span,
                         self._shift, out)
        return out

    def clear(self) -> None:
        """Forget every key: all cells zero (an absent key still matches at 2^-r). Complexity: O(M)."""
        with self._lock:
            self._fps.fill(0)
            self._count = 0
            self._key_mask = 0

    def copy(self) -> Self:
        """An independent copy. Complexity: O(M)."""
        out = type(self).__new__(type(self))
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_bk_lock"})
        out._fps = aligned_copy(self._fps)
        return out

    # ------------------------------------------------------------------ space and model
    @property
    def num_cells(self) -> int:
        """M."""
        return len(self._fps)

    @property
    def segment_length(self) -> int:
        """L."""
        return self._seg_len

    def _table_bits(self) -> int:
        return len(self._fps) * self.fingerprint_bits

    def predicted_fpr(self) -> float:
        """2^-r: an absent key's fingerprint is uniform and independent of its cells.
        Complexity: O(1)."""
        return static_fpr(self.fingerprint_bits)

    def predicted_bits_per_key(self) -> float:
        """r M / n of the model (:func:`bloomkit.static.model.fuse_bits_per_key`). Complexity: O(1)."""
        return fuse_bits_per_key(self._count, self.arity, self.fingerprint_bits)

    def build_stats(self) -> dict[str, int]:
        """Salts tried by the build, the salt kept, and the repeated keys dropped."""
        return {"attempts": self._attempts, "salt": self._salt, "duplicates": self._dups}

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, overhead over the bound and the predicted rate. Complexity: O(1)."""
        return {**self._info_common(self.predicted_fpr(), float(self.fingerprint_bits)), "arity": self.arity,
                "fingerprint_bits": self.fingerprint_bits, "num_cells": self.num_cells,
                "segment_length": self._seg_len, "segment_count": self._seg_count, "salt": self._salt}

    def __repr__(self) -> str:
        return (f"BinaryFuseFilter(keys={self._count}, arity={self.arity}, r={self.fingerprint_bits}, "
                f"M={self.num_cells})")

    def _check(self) -> None:
        """Assert the structure's invariants."""
        if not (self.arity in (3, 4) and self.fingerprint_bits in _DTYPES):
            raise InvariantError("self.arity in (3, 4) and self.fingerprint_bits in _DTYPES")
        if not (self._seg_len >= 1 and self._seg_len & (self._seg_len - 1) == 0):
            raise InvariantError("self._seg_len >= 1 and self._seg_len & (self._seg_len - 1) == 0")
        if not (self._seg_len <= MAX_SEGMENT[self.arity] or self._seg_len == 4):
            raise InvariantError("self._seg_len <= MAX_SEGMENT[self.arity] or self._seg_len == 4")
        if not (len(self._fps) == (self._seg_count + self.arity - 1) * self._seg_len):
            raise InvariantError("len(self._fps) == (self._seg_count + self.arity - 1) * self._seg_len")
        if not (self._fps.dtype == _DTYPES[self.fingerprint_bits]):
            raise InvariantError("self._fps.dtype == _DTYPES[self.fingerprint_bits]")
        if not (int(self._span) == self._seg_count * self._seg_len):
            raise InvariantError("int(self._span) == self._seg_count * self._seg_len")
        if not (self._count <= len(self._fps)):
            raise InvariantError("self._count <= len(self._fps)")

    # ------------------------------------------------------------------ persistence
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params = {"arity": self.arity, "fingerprint_bits": self.fingerprint_bits, "segment_length": self._seg_len,
                  "segment_count": self._seg_count, "salt": self._salt, "count": self._count,
                  "key_types": list(self.key_types)}
        return params, {"fingerprints": self._fps.astype(self._fps.dtype.newbyteorder("<"), copy=False).view(np.uint8)}

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Self:
        a, r, seg, count = params["arity"], params["fingerprint_bits"], params["segment_length"], params["segment_count"]
        if seg & (seg - 1) or (seg > MAX_SEGMENT[a]):
            raise FormatError(f"the segment length of {_OWNER} must be a power of two <= {MAX_SEGMENT[a]}; got {seg}")
        cells = (count + a - 1) * seg
        raw = arrays["fingerprints"]
        if len(raw) != cells * r // 8:
            raise FormatError(f"the 'fingerprints' array of {_OWNER} must hold {cells * r // 8} bytes for {cells} "
                              f"cells of {r} bits; got {len(raw)}")
        if params["count"] > cells:
            raise FormatError(f"the 'count' parameter of {_OWNER} ({params['count']}) exceeds its {cells} cells")
        f = cls.__new__(cls)
        f.seed, f.arity, f.fingerprint_bits = seed, a, r
        f._seg_len, f._seg_count, f._salt, f._count = seg, count, params["salt"], params["count"]
        f._attempts, f._dups = 0, 0
        f._setup(aligned_copy(raw))
        f._key_mask = key_type_mask(params["key_types"])
        return f
