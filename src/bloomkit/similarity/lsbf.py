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

from typing import Any

import numpy as np

from .mlbf import _LSHFilter

__all__ = ["LSBF"]


class LSBF(_LSHFilter):
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

    _STRUCTURE = "similarity.LSBF"
    _PHYSICAL = True
    _RANDOM_OFFSET = True
    _DEFAULT_BITS = 1 << 20

    def __init__(
        self,
        dim: int,
        w: float,
        and_width: int = 5,
        num_bits: int = 1 << 20,
        verify_bits: int = 1 << 16,
        verify_hashes: int = 4,
        seed: int = 0,
        *,
        domain: tuple[Any, Any] | None = None,
        offset: Any = None,
        domain_margin: float = 0.1,
    ) -> None:
        self._setup(dim, w, 1, and_width, 1, num_bits, verify_bits, verify_hashes, seed,
                    domain, offset, domain_margin)

    def query(self, q: Any) -> bool:
        """Is ``q`` within about w of a stored object? Complexity: O(d k + k + k')."""
        return bool(self.query_many(self._one_vector(q, "q", "query"))[0])

    def query_many(self, Q: Any, *, verify: bool = True) -> np.ndarray:
        """Bool array of approximate memberships. Complexity: O(n (d k + k + k'))."""
        self._require_fitted("Q")
        return self._query_many(Q, 0, verify)
