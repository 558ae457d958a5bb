"""LSBF baseline: the locality-sensitive Bloom filter of Hua et al. as described in document
002, Section 2.3 (Fig 2).

k LSH functions h_t(x) = floor((a_t.x + b_t) / w) (Formula 1, classic family with random b)
set k bits of one m-bit array; the concatenation of the k addresses is stored in a standard
verification Bloom filter with k' hash functions. A query is positive when its k bits and its
k' verification bits are all set. One distance (w) only, no OR-construction; Hua et al.'s
multi-probe of neighbouring buckets is not part of the description in document 002 and is not
implemented. One LSBF per granularity is what the MLBF replaces (Figs 15-16).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .._validation import Int, Spec, safe_repr
from ..errors import InvalidParameterError
from .base import PARAMS, LSHFilterBase

__all__ = ["LSBF"]


class LSBF(LSHFilterBase):
    """Locality-sensitive Bloom filter (Hua et al. 2012; document 002, Section 2.3).

    Parameters
    ----------
    dim : int
        Dimension d.
    w : float
        Bucket width (the one distance scale).
    and_width : int
        k, LSH functions (bits per object in the LSH array).
    num_bits : int
        m (a power of two), bits of the LSH array.
    verify_bits : int
        m' (a power of two), bits of the verification filter.
    verify_hashes : int
        k'.
    seed : int
        Seed of projections, offsets b and verification hashes.
    domain, offset, domain_margin
        As for :class:`bloomkit.similarity.MLBF`.

    Everything after ``w`` is keyword-only (by position it still works for one release, with a
    DeprecationWarning). An LSBF has one level: ``query`` / ``query_many`` take ``level=0``
    only, for the protocol shared with the MLBF.

    Notes
    -----
    Thread safety: as :class:`bloomkit.similarity.MLBF` (adds hold the object's lock, queries
    take none and release the GIL).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(1, 1000, (50, 20))
    >>> f = LSBF(20, w=2.0, and_width=5, num_bits=2**16, verify_bits=2**14, seed=3,
    ...          domain=(0, 1001))
    >>> f.add_many(X)
    >>> bool(f.query(X[7]))
    True
    """

    _PHYSICAL = True
    _RANDOM_OFFSET = True
    _PARAMS: ClassVar[Spec] = {**PARAMS, "num_levels": Int(1, 1), "or_count": Int(1, 1)}

    def __init__(
        self,
        dim: int,
        w: float,
        *,
        and_width: int = 5,
        num_bits: int = 1 << 20,
        verify_bits: int = 1 << 16,
        verify_hashes: int = 4,
        seed: int = 0,
        domain: tuple[Any, Any] | None = None,
        offset: Any = None,
        domain_margin: float = 0.1,
    ) -> None:
        self._setup(dim, w, 1, and_width, 1, num_bits, verify_bits, verify_hashes, seed,
                    domain, offset, domain_margin)

    def _check_level(self, level: Any, owner: str) -> int:
        if type(level) is int and level == 0 or isinstance(level, np.integer) and int(level) == 0:
            return 0
        raise InvalidParameterError(
            f"The 'level' parameter of {owner} must be 0: an LSBF answers at its one width "
            f"w = {self.w!r}. Got {safe_repr(level)} instead; for the width 2^level w build an LSBF with "
            "that w, or use an MLBF / MLBFStar, which answer every level from one filter."
        )

    def query_many(self, points: Any, level: int = 0, *, verify: bool = True) -> np.ndarray:
        """Bool array of approximate memberships (``level`` must be 0). ``verify=False`` skips
        the verification filter. Complexity: O(n (d k + k + k'))."""
        return self._query_many(points, level, verify)

    def predicted_fpr(self, *, level: int = 0, alpha: float = 1.0) -> float:
        """The false positive rate for far queries with the current count n: Theorem 7 for
        the verification filter (n' = n concatenations, one AND-construction, L = 1) times
        alpha, ``alpha (1 - e^(-k' n / m'))^k'`` -- Theorem 8's form with L = 1. alpha is the
        probability that the query's k LSH-array bits are set (Theorem 5 with L = 1); it depends
        on the query's distances to the stored objects, so the default alpha = 1 (the headline)
        is an upper bound for every query. ``level`` must be 0.

        Complexity: O(1).
        """
        return self._predicted(level, alpha, "LSBF.predicted_fpr")
