"""What the static membership filters share: the membership protocol minus every change after
the build (``add``, ``update``, ``|`` raise :class:`UpdateNotSupportedError`), batch queries
hashed and tested a chunk at a time on several threads, key types, and the build's front door
(keys through :func:`bloomkit._engine.columns.as_keys`, hashed by :func:`bloomkit._engine.hashing.hash_keys`,
empty input refused, repeated keys kept once).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NoReturn

import numpy as np

from .._engine.columns import as_keys
from .._engine.hashing import HASH_XXH64, KeyTypesMixin, hash64_tag, hash_keys
from .._engine.parallel import key_source, query_chunked
from .._format import Persistable
from .._validation import FPR, param_error
from .._watch import FilterWatch
from ..errors import InvalidParameterError, UpdateNotSupportedError

__all__ = ["StaticFilter", "fingerprint_bits_of", "read_keys"]


def read_keys(keys: Any, owner: str, seed: int) -> tuple[np.ndarray, int]:
    """(h1 of every key, key tag mask) of a build's keys; empty input and NaN refused by name."""
    batch = as_keys(keys, "keys", owner)
    h1, tags = hash_keys(batch, seed, owner=owner)
    if len(h1) == 0:
        raise InvalidParameterError(f"The 'keys' parameter of {owner} must not be empty. Got 0 keys instead.")
    return h1, tags


def fingerprint_bits_of(fingerprint_bits: int | None, fpr: float | None, owner: str, check: Callable[..., int],
                        widths: Sequence[int]) -> int:
    """r of a build: ``fingerprint_bits`` (validated by ``check``), or the smallest of ``widths``
    with 2^-r <= ``fpr``, or 8; both given, or an fpr below 2^-max(widths): InvalidParameterError."""
    if fingerprint_bits is not None and fpr is not None:
        raise param_error("fpr", owner, "None when 'fingerprint_bits' is given", fpr)
    if fingerprint_bits is not None:
        return check(fingerprint_bits, "fingerprint_bits", owner)
    if fpr is None:
        return 8
    need = math.log2(1.0 / FPR(fpr, "fpr", owner)) - 1e-9
    for r in widths:
        if r >= need:
            return r
    raise param_error("fpr", owner, f"at least 2^-{widths[-1]} ({widths[-1]}-bit fingerprints)", fpr)


class StaticFilter(KeyTypesMixin, FilterWatch, Persistable):
    """Membership built once from a set of keys: no false negatives for the keys it was built
    from, false positives at ``predicted_fpr()``; ``len`` is the number of distinct keys."""

    exact_len: ClassVar[bool] = True
    _HASH_IDS: ClassVar[tuple[int, ...]] = (HASH_XXH64,)
    seed: int
    _count: int

    # -- hooks --------------------------------------------------------------------------------
    def _test(self, h1: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        """Bool array: membership of the keys of hashes ``h1``."""
        raise NotImplementedError

    def _table_bits(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- queries ------------------------------------------------------------------------------
    def __contains__(self, key: Any) -> bool:
        """True if ``key`` may be in the set (always for a key it was built from). Complexity: O(1)."""
        h, tag = hash64_tag(key, self.seed)
        self._foreign_key(key, tag, 2)
        return bool(self._test(np.array([h], dtype=np.uint64))[0])

    def contains_many(self, keys: Any) -> np.ndarray:
        """Bool array: membership of every key of a batch (list, numpy, pyarrow, pandas, polars;
        by position), hashed and tested a chunk at a time on several threads (the kernels
        release the GIL). Complexity: O(n)."""
        batch, hash_chunk = key_source(keys, lambda ks: hash_keys(ks, self.seed), f"{type(self).__name__}.contains_many")
        self._foreign_keys(batch.tags, 2)
        return query_chunked(batch, lambda part: self._test(hash_chunk(part)))

    def __len__(self) -> int:
        """Number of distinct keys the filter was built from (exact)."""
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    # -- no changes after the build -------------------------------------------------------------
    def _refuse(self, what: str) -> UpdateNotSupportedError:
        return UpdateNotSupportedError(
            f"{type(self).__name__}.{what}: a static filter cannot be changed after it is built (every cell "
            "is shared by the keys' equations); build a new one from all the keys, or use a BloomFilter"
        )

    def add(self, key: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError (a static filter)."""
        raise self._refuse("add")

    def add_many(self, keys: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError (a static filter)."""
        raise self._refuse("add_many")

    def update(self, *others: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError (a static filter)."""
        raise self._refuse("update")

    def union(self, other: Any) -> NoReturn:
        """Always raises UpdateNotSupportedError (no union of static filters)."""
        raise self._refuse("union")

    def __or__(self, other: Any) -> NoReturn:
        raise self._refuse("__or__")

    # -- sizes --------------------------------------------------------------------------------
    @property
    def size_in_bits(self) -> int:
        """Bits of the filter's cells. Complexity: O(1)."""
        return self._table_bits()

    def bits_per_key(self) -> float:
        """``size_in_bits`` / number of keys. Complexity: O(1)."""
        return self._table_bits() / max(1, self._count)

    def _set_count(self) -> int:
        return 0

    def _design_limit(self) -> tuple[int, int] | None:
        return None  # no adds: nothing to overfill

    def _info_common(self, fpr: float, bound: float) -> dict[str, Any]:
        bpk = self.bits_per_key()
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "seed": self.seed, "count": self._count,
            "count_is_exact": True, "key_types": list(self.key_types), "size_in_bits": int(self._table_bits()),
            "bits_per_key": bpk, "bound_bits_per_key": bound, "overhead": bpk / bound if bound else float("nan"),
            "predicted_fpr": fpr,
        }
