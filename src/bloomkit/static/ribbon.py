"""The standard ribbon filter (Dillinger and Walzer, "Ribbon filter: practically smaller than
Bloom and Xor", 2021), w = 64: ribbon retrieval of the value 0 under an r-bit check, so that a
stored key's row XOR fp(x) is 0 and an absent key's is uniform on r bits (false positive rate
2^-r, any r in [1, 64]). Same kernels as :class:`bloomkit.lookup.RibbonRetrieval`
(:mod:`bloomkit.lookup._ribbon_kernels`); the slack eps it needs grows with log n
(:func:`bloomkit.lookup.ribbon.default_overhead`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Self

import numpy as np

from .._format import ArraySpec
from .._hashing import check_seed, key_type_mask
from .._storage import aligned_copy, aligned_zeros
from .._validation import FPR, KEY_TYPES, Int, Optional, param_error
from ..errors import FormatError
from ..lookup import _ribbon_kernels as RK
from ..lookup.ribbon import ATTEMPTS, MAX_ATTEMPTS, OVERHEAD, solve
from ._base import StaticFilter, read_keys
from .model import static_fpr

__all__ = ["RibbonFilter"]

_OWNER = "RibbonFilter"
CHECK_BITS = Int(1, 64)


class RibbonFilter(StaticFilter):
    """Static membership filter: a standard ribbon filter, w = 64, r-bit fingerprints.

    Build with :meth:`build`; answers True for every key it was built from and for an absent key
    with probability 2^-r. It cannot change afterwards.

    Notes
    -----
    Thread safety: a built filter is never written; any number of threads may query it at once
    (the query kernel releases the GIL).

    Examples
    --------
    >>> f = RibbonFilter.build(["apple", "pear", "plum"], fingerprint_bits=12)
    >>> "pear" in f, len(f), f.predicted_fpr() == 2**-12
    (True, 3, True)
    """

    _STRUCTURE = "static.RibbonFilter"
    _PARAMS: ClassVar[Any] = {"fingerprint_bits": CHECK_BITS, "num_slots": Int(64, 1 << 50),
                              "salt": Int(0, MAX_ATTEMPTS - 1), "count": Int(0), "key_types": KEY_TYPES}
    _ARRAYS: ClassVar[Any] = {"solution": ArraySpec("<u8")}

    def __init__(self) -> None:  # use build(); this is the empty filter of 64 slots
        self.seed = 0
        self.fingerprint_bits = 8
        self._m = 64
        self._salt = 0
        self._count = 0
        self._attempts = 0
        self._dups = 0
        self._Z = aligned_zeros(self.fingerprint_bits, np.uint64, "the ribbon solution")

    @classmethod
    def build(
        cls,
        keys: Any,
        *,
        fingerprint_bits: int | None = None,
        fpr: float | None = None,
        overhead: float | None = None,
        seed: int = 0,
        max_attempts: int = 16,
    ) -> Self:
        """Build the filter of a set of keys.

        Parameters
        ----------
        keys : list, tuple, numpy, pyarrow, pandas or polars column
            By position; a key given twice is kept once.
        fingerprint_bits : int, optional
            r in [1, 64]: the false positive rate is 2^-r. Default 8, or ceil(log2(1/fpr)).
        fpr : float, optional
            A target rate instead of ``fingerprint_bits``.
        overhead : float, optional
            eps = m / n - 1 (default :func:`bloomkit.lookup.ribbon.default_overhead`).
        seed : int
        max_attempts : int
            Salts tried before giving up (BloomkitError naming the slack).

        Returns
        -------
        RibbonFilter

        Complexity: as :meth:`bloomkit.lookup.RibbonRetrieval.build`.
        """
        owner = f"{_OWNER}.build"
        if fingerprint_bits is not None and fpr is not None:
            raise param_error("fpr", owner, "None when 'fingerprint_bits' is given", fpr)
        if fingerprint_bits is None:
            r = 8 if fpr is None else max(1, math.ceil(math.log2(1.0 / FPR(fpr, "fpr", owner)) - 1e-12))
            if r > 64:
                raise param_error("fpr", owner, "at least 2^-64", fpr)
        else:
            r = CHECK_BITS(fingerprint_bits, "fingerprint_bits", owner)
        eps = Optional(OVERHEAD)(overhead, "overhead", owner)
        attempts = ATTEMPTS(max_attempts, "max_attempts", owner)
        sd = check_seed(seed, owner)
        h1, tags = read_keys(keys, owner, sd)
        Z, m, salt, used, h1, _ = solve(h1, np.zeros(len(h1), np.uint64), r, eps, attempts, owner,
                                        lambda h, v: (np.unique(h), np.zeros(len(np.unique(h)), np.uint64)))
        f = cls()
        f.seed, f.fingerprint_bits = sd, r
        f._m, f._salt, f._attempts, f._count = m, salt, used, len(h1)
        f._Z = aligned_copy(Z)
        f._note_keys(tags)
        return f

    # ------------------------------------------------------------------ queries
    def _test(self, h1: np.ndarray) -> np.ndarray:
        out = np.empty(len(h1), dtype=np.uint64)
        RK.rb_query(h1, self._Z, np.uint64(self._salt), self._m, self.fingerprint_bits, out)
        hit: np.ndarray = out == 0
        return hit

    def clear(self) -> None:
        """Forget every key (the solution zero: an absent key still matches at 2^-r). Complexity: O(m r / 64)."""
        with self._lock:
            self._Z.fill(0)
            self._count = 0
            self._key_mask = 0

    def copy(self) -> Self:
        """An independent copy. Complexity: O(m r / 64)."""
        out = type(self).__new__(type(self))
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_bk_lock"})
        out._Z = aligned_copy(self._Z)
        return out

    # ------------------------------------------------------------------ space and model
    @property
    def num_slots(self) -> int:
        """m."""
        return self._m

    def _table_bits(self) -> int:
        return self._m * self.fingerprint_bits

    def predicted_fpr(self) -> float:
        """2^-r (an absent key's check is uniform). Complexity: O(1)."""
        return static_fpr(self.fingerprint_bits)

    def build_stats(self) -> dict[str, int]:
        """Salts tried by the build and the salt kept."""
        return {"attempts": self._attempts, "salt": self._salt}

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, overhead over the bound and the predicted rate. Complexity: O(1)."""
        return {**self._info_common(self.predicted_fpr(), float(self.fingerprint_bits)),
                "fingerprint_bits": self.fingerprint_bits, "num_slots": self._m, "ribbon_width": 64,
                "salt": self._salt}

    def __repr__(self) -> str:
        return f"RibbonFilter(keys={self._count}, r={self.fingerprint_bits}, m={self._m})"

    def _check(self) -> None:
        """Assert the structure's invariants."""
        assert self._m >= 64 and self._m % 64 == 0 and 1 <= self.fingerprint_bits <= 64
        assert self._Z.dtype == np.uint64 and len(self._Z) == self._m // 64 * self.fingerprint_bits
        assert self._count <= self._m

    # ------------------------------------------------------------------ persistence
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return ({"fingerprint_bits": self.fingerprint_bits, "num_slots": self._m, "salt": self._salt,
                 "count": self._count, "key_types": list(self.key_types)}, {"solution": self._Z})

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int, hash_id: int) -> Self:
        r, m = params["fingerprint_bits"], params["num_slots"]
        if m % 64:
            raise FormatError(f"{_OWNER}: num_slots = {m} is not a multiple of 64")
        Z = arrays["solution"]
        if len(Z) != m // 64 * r:
            raise FormatError(f"the 'solution' array of {_OWNER} must hold {m // 64 * r} words; got {len(Z)}")
        if params["count"] > m:
            raise FormatError(f"the 'count' parameter of {_OWNER} ({params['count']}) exceeds its {m} slots")
        f = cls.__new__(cls)
        f.seed, f.fingerprint_bits, f._m, f._salt, f._count = seed, r, m, params["salt"], params["count"]
        f._attempts, f._dups, f._Z = 0, 0, Z
        f._key_mask = key_type_mask(params["key_types"])
        return f
