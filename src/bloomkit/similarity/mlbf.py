"""MLBF and MLBF* (document 002, Sections 3, 5.2, 5.3).

An MLBF answers "is q within about 2^theta w of some stored object?" for every level
theta = 0..S-1 from ONE structure:

* BMLBF (VLBF 0): m = 2^B bits. Object o sets, for every AND-construction j = 1..L, the k
  bits loc_0 = h_{t,j}(o) & (m - 1) (alignable LSH, :mod:`bloomkit.similarity.lsh`).
  VLBF theta is virtual: its location a is set when any of the 2^theta level-0 bits under
  it is set (Fig 4, Theorem 4).
* MVBF (VVBF 0): m' = 2^B' bits holding xi_j(o) = j . h_{1,j}(o) ... h_{k,j}(o) through the
  split-address scheme of Section 5.2 (coarse addresses from k' hashes of j and the upper
  substrings, one suffix bit per level from hashing the concatenated next bits, only level-0
  bits stored, coarse locations tested as "any set bit under this prefix"); see
  :mod:`bloomkit.similarity._kernels` for the exact bit layout.
* Query at level theta: q is positive if for some j all k VLBF-theta locations and all k'
  VVBF-theta locations of xi_j(q) are set (AND of k, OR over L).

MLBF* (Section 5.3) has no physical BMLBF: the MVBF alone filters (``num_bits`` is then only
the virtual address space 2^B).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Self

import numpy as np

from .._format import ArraySpec
from . import _kernels as SK
from .base import ARRAYS, LSHFilterBase
from .lsh import as_points

__all__ = ["MLBF", "MLBFStar"]


class _MultiLevel(LSHFilterBase):
    """MLBF and MLBF*: S levels, sized from Section 6.4's requirements."""

    @classmethod
    def for_requirements(
        cls,
        dim: int,
        r1: float,
        r2: float,
        delta_n: float,
        delta_p_lsh: float,
        delta_p_verify: float,
        num_objects: int,
        *,
        p1: float | None = None,
        w: float | None = None,
        levels: Sequence[int] = (0,),
        num_bits: int | None = None,
        seed: int = 0,
        domain: tuple[Any, Any] | None = None,
        offset: Any = None,
        domain_margin: float = 0.1,
    ) -> Self:
        """A filter sized from Section 6.4's requirements (w, k, L, m', k' from
        :func:`bloomkit.similarity.select_parameters` with this ``seed``; S = max(levels) + 1):
        its ``predicted_fpr(level=theta)`` at ``num_objects`` objects is at most
        ``delta_p_verify`` at every level of ``levels``. ``num_bits`` defaults to the class's
        default m.

        Complexity: as select_parameters, plus O(m + m') allocation.
        """
        from .params import select_parameters  # scipy: imported when sizing, not with the filters

        sp = select_parameters(r1, r2, delta_n, delta_p_lsh, delta_p_verify, num_objects,
                               p1=p1, w=w, levels=levels, seed=seed)
        size = {} if num_bits is None else {"num_bits": num_bits}
        make: Callable[..., Self] = cls  # MLBF or MLBFStar: the same keyword-only parameters
        return make(dim, sp.w, num_levels=max(sp.levels) + 1, and_width=sp.and_width,
                    or_count=sp.or_count, verify_bits=sp.verify_bits, verify_hashes=sp.verify_hashes,
                    seed=seed, domain=domain, offset=offset, domain_margin=domain_margin, **size)


class MLBF(_MultiLevel):
    """Multi-granularity locality-sensitive Bloom filter (document 002, Sections 3-5).

    Parameters
    ----------
    dim : int
        Dimension d of the objects.
    w : float
        Bucket width of level 0 ("w" in the document); level theta answers at 2^theta w.
    num_levels : int
        S, number of granularities (levels 0..S-1, S <= 32).
    and_width : int
        k, LSH functions per AND-construction (1..63).
    or_count : int
        L, AND-constructions in the OR-construction (1..4096).
    num_bits : int
        m = 2^B, bits of the BMLBF (power of two, >= 2^S).
    verify_bits : int
        m' = 2^B', bits of the MVBF (power of two, >= 2^S).
    verify_hashes : int
        k', hash functions of the MVBF (1..64).
    seed : int
        Seed of the projections and of the MVBF hashes.
    domain : (lower, upper), optional
        Box the objects and queries live in (scalars or length-d vectors); fitted on the first
        batch when omitted (widened by ``domain_margin`` of the span).
    offset : float or array, optional
        The positive shift of Section 4; default ``max(0, 1 - lower)``.
    domain_margin : float
        See ``domain``.

    Everything after ``w`` is keyword-only (by position it still works for one release, with a
    DeprecationWarning).

    Notes
    -----
    Points: an (n, d) array, a list of vectors, a pandas DataFrame whose numeric columns in
    order are the d dimensions (any index), a pyarrow table or fixed-size list array, a polars
    DataFrame. ``len()`` is the exact number of objects added (``exact_len``).

    Thread safety: any number of threads may add and query at once. Adds hold the object's lock
    (fitting the domain, setting bits with a kernel that keeps the GIL, counting); queries take
    no lock and release the GIL. ``clear`` and ``union`` while others add may lose those adds.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(1, 1000, (100, 20))
    >>> f = MLBF(20, w=1.0, num_levels=3, and_width=5, or_count=6, num_bits=2**20,
    ...          verify_bits=2**16, verify_hashes=4, seed=1, domain=(0, 1001))
    >>> f.add_many(X)
    >>> bool(f.query(X[0] + 0.01, level=0))
    True
    >>> f.distance_for_level(2)
    4.0
    """

    _PHYSICAL = True

    def __init__(
        self,
        dim: int,
        w: float,
        *,
        num_levels: int = 3,
        and_width: int = 5,
        or_count: int = 6,
        num_bits: int = 1 << 20,
        verify_bits: int = 1 << 16,
        verify_hashes: int = 4,
        seed: int = 0,
        domain: tuple[Any, Any] | None = None,
        offset: Any = None,
        domain_margin: float = 0.1,
    ) -> None:
        self._setup(dim, w, num_levels, and_width, or_count, num_bits, verify_bits,
                    verify_hashes, seed, domain, offset, domain_margin)

    def query_many(self, points: Any, level: int = 0, *, verify: bool = True) -> np.ndarray:
        """Bool array: approximate membership of every row of ``points`` at level theta.

        ``verify=False`` skips the MVBF (the bare VLBF of Theorems 5-6, Figs 8-9).

        Complexity: O(n (d k L + L (k + k' S))).
        """
        return self._query_many(points, level, verify)

    def and_pass_many(self, points: Any, level: int = 0) -> np.ndarray:
        """(n, L) bool: which AND-constructions g_j(q) pass VLBF theta alone.

        Complexity: O(n (d k L + k L)).
        """
        own = "MLBF.and_pass_many"
        lv = self._check_level(level, own)
        arr = as_points(points, self.dim, "points", own)
        self._lsh.check_domain(arr, "points", own)
        assert self._bml is not None
        loc = self._lsh.locations(arr, self.num_bits)
        out: np.ndarray = SK.and_pass(loc, self.and_width, self.or_count, lv, self._bml.words)
        return out

    def predicted_fpr(self, *, level: int = 0, alpha: float = 1.0) -> float:
        """The false positive rate for far queries at level theta, with the current count n:
        Theorem 8 in the exact OR form of its proof (ERRATA 002), ``1 - (1 - alpha phi)^L``.
        phi is the verification FPR of this filter's MVBF: (1 - e^(-k' n L / m''))^k',
        m'' = m' / 2^theta (Theorem 7) at the coarsest level; below it, Theorem 7 with this
        seed's suffix bits (a suffix bit is a hash of a k-bit slice, only 2^k values, so the bits
        are not uniform: 1.0-1.4 times Theorem 7 at k = 5, k' = 1, computed from the hash alone,
        :func:`bloomkit.similarity.mvbf.verification_fpr`).

        alpha (Theorem 5) is the probability that the k BMLBF bits of one AND-construction
        are set for the query; it depends on the query's distances to the stored objects, which
        the filter does not keep. The default alpha = 1 is the headline: the MLBF*'s rate, an
        upper bound of the MLBF's for every query. Pass ``alpha=theory.alpha(p, p', k, L)``
        for a known query.

        Complexity: as :meth:`MLBFStar.predicted_fpr`.
        """
        return self._predicted(level, alpha, "MLBF.predicted_fpr")


class MLBFStar(_MultiLevel):
    """MLBF* (document 002, Section 5.3): the MVBF alone, no physical BMLBF.

    Same parameters as :class:`MLBF` (keyword-only after ``w``); ``num_bits`` (default 2^32)
    is only the virtual address space 2^B of the LSH locations whose concatenations are
    verified, it costs no memory. Thread safety: as :class:`MLBF`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(1, 1000, (100, 20))
    >>> f = MLBFStar(20, w=1.0, num_levels=3, verify_bits=2**16, seed=1, domain=(0, 1001))
    >>> f.add_many(X)
    >>> f.query_many(X[:3] + 0.01, level=1).tolist()
    [True, True, True]
    """

    _PHYSICAL = False
    _ARRAYS: ClassVar[dict[str, ArraySpec]] = {k: v for k, v in ARRAYS.items() if k != "bmlbf"}

    def __init__(
        self,
        dim: int,
        w: float,
        *,
        num_levels: int = 3,
        and_width: int = 5,
        or_count: int = 6,
        num_bits: int = 1 << 32,
        verify_bits: int = 1 << 16,
        verify_hashes: int = 4,
        seed: int = 0,
        domain: tuple[Any, Any] | None = None,
        offset: Any = None,
        domain_margin: float = 0.1,
    ) -> None:
        self._setup(dim, w, num_levels, and_width, or_count, num_bits, verify_bits,
                    verify_hashes, seed, domain, offset, domain_margin)

    def query_many(self, points: Any, level: int = 0) -> np.ndarray:
        """Bool array of approximate memberships at level theta.

        Complexity: O(n (d k L + L k' S)).
        """
        return self._query_many(points, level, True)

    def predicted_fpr(self, *, level: int = 0) -> float:
        """The false positive rate for far queries at level theta, with the current count n:
        Theorem 8 for the MLBF* in the exact OR form of its proof (ERRATA 002),
        ``1 - (1 - phi)^L``, phi = (1 - e^(-k' n L / m''))^k', m'' = m' / 2^theta (Fig 13's
        worked numbers) at the coarsest level; below it phi carries this seed's suffix bits, as
        in :meth:`MLBF.predicted_fpr`. Complexity: O(2^k S + N k') the first time per level
        (cached), then O(2^(S-1-theta) k' + N k').
        """
        return self._predicted(level, 1.0, "MLBFStar.predicted_fpr")
