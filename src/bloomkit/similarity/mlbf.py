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

from typing import Any, ClassVar

import numpy as np

from .._format import Persistable
from .._hashing import HASH_XXH64, tag_seed
from .._storage import BitArray
from .._validation import check_float, check_int
from ..errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from . import _kernels as SK
from . import theory
from .lsh import AlignableLSH, as_vectors

__all__ = ["MLBF", "MLBFStar"]

_CHUNK = 1 << 15
_TAG_COARSE = 21
_TAG_SUFFIX = 22


def _log2_exact(value: Any, name: str, owner: str, lo_exp: int, hi_exp: int) -> int:
    v = check_int(value, name, owner, lo=1)
    if v & (v - 1) or not lo_exp <= v.bit_length() - 1 <= hi_exp:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a power of two in "
            f"[2^{lo_exp}, 2^{hi_exp}] (alignment of the levels needs m = 2^B, Theorem 4). "
            f"Got {value!r} instead."
        )
    return v.bit_length() - 1


class _LSHFilter(Persistable):
    """Shared engine of MLBF, MLBF* and LSBF (not public)."""

    _PHYSICAL: ClassVar[bool] = True
    _RANDOM_OFFSET: ClassVar[bool] = False
    _DEFAULT_BITS: ClassVar[int] = 1 << 20

    num_levels: int
    and_width: int
    or_count: int
    num_bits: int
    verify_bits: int
    verify_hashes: int
    seed: int
    count: int
    _lsh: AlignableLSH
    _bml: BitArray | None
    _mv: BitArray

    def _setup(
        self,
        dim: int,
        w: float,
        num_levels: int,
        and_width: int,
        or_count: int,
        num_bits: int | None,
        verify_bits: int,
        verify_hashes: int,
        seed: int,
        domain: tuple[Any, Any] | None,
        offset: Any,
        domain_margin: float,
    ) -> None:
        own = type(self).__name__
        self._hash_id = HASH_XXH64
        nb = self._DEFAULT_BITS if num_bits is None else num_bits
        self._set_shape(num_levels, and_width, or_count, nb, verify_bits, verify_hashes)
        self.seed = check_int(seed, "seed", own, lo=0, hi=(1 << 64) - 1)
        check_float(w, "w", own, lo=0, lo_open=True)
        self._lsh = AlignableLSH(
            dim,
            w,
            self.and_width * self.or_count,
            self.seed,
            domain=domain,
            offset=offset,
            random_offset=self._RANDOM_OFFSET,
            domain_margin=domain_margin,
            owner=own,
        )
        self._bml = BitArray(self.num_bits) if self._PHYSICAL else None
        self._mv = BitArray(self.verify_bits)
        self.count = 0

    def _set_shape(
        self, num_levels: Any, and_width: Any, or_count: Any, num_bits: Any, verify_bits: Any,
        verify_hashes: Any,
    ) -> None:
        """Check and set S, k, L, m = 2^B, m' = 2^B' and k' (constructor and loader)."""
        own = type(self).__name__
        self.num_levels = check_int(num_levels, "num_levels", own, lo=1, hi=32)
        self.and_width = check_int(and_width, "and_width", own, lo=1, hi=63)
        self.or_count = check_int(or_count, "or_count", own, lo=1, hi=4096)
        self._b = _log2_exact(num_bits, "num_bits", own, self.num_levels, 62)
        self.num_bits = 1 << self._b
        self._bp = _log2_exact(verify_bits, "verify_bits", own, self.num_levels, 40)
        self.verify_bits = 1 << self._bp
        self.verify_hashes = check_int(verify_hashes, "verify_hashes", own, lo=1, hi=64)

    # -- derived ------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """Dimension d of the vectors."""
        return self._lsh.dim

    @property
    def w(self) -> float:
        """Bucket width w of level 0."""
        return self._lsh.w

    @property
    def lsh(self) -> AlignableLSH:
        """The k*L hash functions (read-only use)."""
        return self._lsh

    @property
    def size_in_bits(self) -> int:
        """Stored bits: m + m' (with a physical BMLBF) or m' (MLBF*)."""
        return (self.num_bits if self._PHYSICAL else 0) + self.verify_bits

    def _seeds(self) -> tuple[np.uint64, np.uint64]:
        return np.uint64(tag_seed(self.seed, _TAG_COARSE)), np.uint64(tag_seed(self.seed, _TAG_SUFFIX))

    def _mc(self) -> np.uint64:
        return np.uint64(self.verify_bits >> (self.num_levels - 1))

    def _check_level(self, level: Any) -> int:
        return check_int(level, "level", type(self).__name__, lo=0, hi=self.num_levels - 1)

    def distance_for_level(self, level: int) -> float:
        """Bucket width 2^theta w of level theta, the distance scale it answers for.

        Complexity: O(1).
        """
        return self.w * (1 << self._check_level(level))

    def _bml_words(self) -> np.ndarray:
        """The BMLBF's words, or one dummy word for the kernels when there is none (MLBF*)."""
        return self._bml.words if self._bml is not None else np.zeros(1, np.uint64)

    # -- building -----------------------------------------------------------------------------
    def _prepare(self, X: Any, name: str, fit: bool) -> np.ndarray:
        arr = as_vectors(X, self._lsh.dim, type(self).__name__, name)
        if arr.shape[0] == 0 and fit:
            return arr  # nothing to insert: no domain needed
        if fit and not self._lsh.fitted:
            self._lsh.fit(arr)
        self._lsh.check_domain(arr, name)
        return arr

    def _one_vector(self, x: Any, name: str, method: str) -> np.ndarray:
        """``x`` as a (1, d) array; ``method`` (add or query) takes one vector, ``method``_many a batch."""
        arr = as_vectors(x, self._lsh.dim, type(self).__name__, name)
        if arr.shape[0] != 1:
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(self).__name__}.{method} must be one vector of length "
                f"{self.dim}. Got shape {np.shape(x)} instead; use {method}_many for a batch."
            )
        return arr

    def add(self, x: Any) -> None:
        """Insert one object (a length-d vector).

        Complexity: O(d k L + L (k + k' S)).
        """
        self.add_many(self._one_vector(x, "x", "add"))

    def add_many(self, X: Any) -> None:
        """Insert every row of ``X`` (n, d). The first batch fits the domain if none was given.

        Complexity: O(n (d k L + L (k + k' S))).
        """
        arr = self._prepare(X, "X", fit=True)
        if arr.shape[0] == 0:
            return
        sc, ss = self._seeds()
        bml = self._bml_words()
        for s in range(0, arr.shape[0], _CHUNK):
            loc = self._lsh.locations(arr[s : s + _CHUNK], self.num_bits)
            SK.insert(loc, self.and_width, self.or_count, self.num_levels, bml, self._PHYSICAL,
                      self._mv.words, self.verify_hashes, self._mc(), sc, ss)
        self.count += int(arr.shape[0])

    # -- querying -----------------------------------------------------------------------------
    def _query_many(self, Q: Any, level: int, verify: bool = True) -> np.ndarray:
        lv = self._check_level(level)
        arr = self._prepare(Q, "Q", fit=False)
        sc, ss = self._seeds()
        bml = self._bml_words()
        A, sh = self._lsh.kernel_args()
        out = SK.query_vectors(arr, A, sh, np.int64(self.num_bits - 1), self.and_width,
                               self.or_count, self.num_levels, lv, bml, self._PHYSICAL,
                               self._mv.words, self.verify_hashes, self._mc(), sc, ss, verify)
        return out

    def _require_fitted(self, name: str) -> None:
        if not self._lsh.fitted:
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(self).__name__} cannot be queried before the "
                "domain is known: insert data first or pass domain= / offset=."
            )

    # -- theory -------------------------------------------------------------------------------
    def predicted_verify_fpr(self, level: int = 0) -> float:
        """Theorem 8 (typical case, exact OR form) for the MVBF part: 1 - (1 - phi)^L with
        phi = (1 - e^(-k' n L / m''))^k'. It is the MLBF*'s FPR for far queries and an upper
        bound on the MLBF's (which multiplies phi by alpha <= 1).

        Complexity: O(1).
        """
        lv = self._check_level(level)
        return float(theory.mlbf_star_fpr(self.count, self.or_count, self.verify_bits,
                                          self.verify_hashes, lv))

    # -- set operations -----------------------------------------------------------------------
    def _compatible(self, other: Any) -> None:
        if type(other) is not type(self):
            raise IncompatibleFiltersError(
                f"cannot combine a {type(self).__name__} with a {type(other).__name__}"
            )
        mine = (self.num_levels, self.and_width, self.or_count, self.num_bits, self.verify_bits,
                self.verify_hashes, self.seed, self.dim, self.w)
        theirs = (other.num_levels, other.and_width, other.or_count, other.num_bits,
                  other.verify_bits, other.verify_hashes, other.seed, other.dim, other.w)
        if mine != theirs:
            raise IncompatibleFiltersError(
                f"{type(self).__name__}s differ in (S, k, L, m, m', k', seed, d, w): "
                f"{mine} vs {theirs}"
            )
        a, b = self._lsh, other._lsh
        if not (np.array_equal(a.a, b.a) and np.array_equal(a.b, b.b)):
            raise IncompatibleFiltersError(f"{type(self).__name__}s use different projections")
        if a.fitted and b.fitted:
            assert a.offset is not None and b.offset is not None
            if not np.array_equal(a.offset, b.offset):
                raise IncompatibleFiltersError(
                    f"{type(self).__name__}s use different shifts (fitted on different domains); "
                    "pass the same domain= or offset= to both"
                )

    def copy(self) -> Any:
        """An independent copy. Complexity: O(m + m')."""
        return type(self).from_bytes(self.to_bytes())

    def union(self, other: Any) -> Any:
        """The filter of both object sets (bitwise OR); both must share every parameter, the
        seed and the shift. Raises IncompatibleFiltersError otherwise.

        Complexity: O(m + m').
        """
        self._compatible(other)
        out = self.copy() if self._lsh.fitted else other.copy()
        src = other if self._lsh.fitted else self
        out._mv |= src._mv
        if out._bml is not None and src._bml is not None:
            out._bml |= src._bml
        a, b = out._lsh, src._lsh
        if a.fitted and b.fitted:  # same shift: the union's domain covers both boxes
            assert a.lower is not None and b.lower is not None
            assert a.upper is not None and b.upper is not None
            a.lower = np.minimum(a.lower, b.lower)
            a.upper = np.maximum(a.upper, b.upper)
        out.count = self.count + other.count
        return out

    def __or__(self, other: Any) -> Any:
        return self.union(other)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.to_bytes() == other.to_bytes()

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(dim={self.dim}, w={self.w!r}, num_levels={self.num_levels}, "
                f"and_width={self.and_width}, or_count={self.or_count}, num_bits={self.num_bits}, "
                f"verify_bits={self.verify_bits}, verify_hashes={self.verify_hashes}, "
                f"seed={self.seed}) with {self.count} objects")

    # -- invariants ---------------------------------------------------------------------------
    def _check(self) -> None:
        """Assert the structure's invariants (called by the tests after mutations)."""
        assert 1 <= self.num_levels <= self._b and self.num_levels <= self._bp
        assert self.num_bits == 1 << self._b and self.verify_bits == 1 << self._bp
        assert self._mv.num_bits == self.verify_bits
        assert self._mv.words.dtype == np.uint64
        assert self.count >= 0
        kp_l = self.verify_hashes * self.or_count
        assert self._mv.popcount() <= kp_l * self.count
        if self.count == 0:
            assert self._mv.popcount() == 0
        if self._PHYSICAL:
            assert self._bml is not None and self._bml.num_bits == self.num_bits
            assert self._bml.popcount() <= self.and_width * self.or_count * self.count
            if self.count == 0:
                assert self._bml.popcount() == 0
        else:
            assert self._bml is None
        lsh = self._lsh
        assert lsh.a.shape == (self.and_width * self.or_count, lsh.dim)
        if lsh.fitted:
            assert lsh.lower is not None and lsh.upper is not None and lsh.offset is not None
            assert np.all(lsh.lower <= lsh.upper)
        else:
            assert self.count == 0

    # -- persistence --------------------------------------------------------------------------
    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params, arrays = self._lsh.state()
        params.update(
            num_levels=self.num_levels,
            and_width=self.and_width,
            or_count=self.or_count,
            num_bits=self.num_bits,
            verify_bits=self.verify_bits,
            verify_hashes=self.verify_hashes,
            count=self.count,
        )
        arrays["mvbf"] = self._mv.words
        if self._bml is not None:
            arrays["bmlbf"] = self._bml.words
        return params, arrays

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int,
                    hash_id: int) -> Any:
        own = cls.__name__
        if hash_id != HASH_XXH64:
            raise FormatError(f"{own} uses hash id {HASH_XXH64}, the file has {hash_id}")
        obj = cls.__new__(cls)
        try:
            obj._hash_id = HASH_XXH64
            obj.seed = seed
            obj._set_shape(params["num_levels"], params["and_width"], params["or_count"],
                           params["num_bits"], params["verify_bits"], params["verify_hashes"])
            obj.count = check_int(params["count"], "count", own, lo=0)
        except (KeyError, InvalidParameterError) as e:
            raise FormatError(f"invalid {own} parameters: {e}") from None
        obj._lsh = AlignableLSH.from_state(params, arrays, seed, own)
        if obj._lsh.num_functions != obj.and_width * obj.or_count:
            raise FormatError(f"invalid {own}: projection count does not match k*L")
        if obj._lsh.random_offset != cls._RANDOM_OFFSET:
            raise FormatError(f"invalid {own}: wrong LSH family")
        if not obj._lsh.fitted and obj.count:
            raise FormatError(f"invalid {own}: objects stored without a domain")

        def bits(name: str, nbits: int) -> BitArray:
            wds = arrays.get(name)
            if wds is None or wds.dtype != np.uint64 or wds.shape != ((nbits + 63) // 64,):
                raise FormatError(f"invalid {own} bit array {name!r}")
            return BitArray(nbits, wds.copy())

        obj._mv = bits("mvbf", obj.verify_bits)
        if cls._PHYSICAL:
            obj._bml = bits("bmlbf", obj.num_bits)
        else:
            if "bmlbf" in arrays:
                raise FormatError(f"invalid {own}: unexpected BMLBF array")
            obj._bml = None
        try:
            obj._check()
        except AssertionError:
            raise FormatError(f"invalid {own}: inconsistent contents") from None
        return obj


class MLBF(_LSHFilter):
    """Multi-granularity locality-sensitive Bloom filter (document 002, Sections 3-5).

    Parameters
    ----------
    dim : int
        Dimension d of the objects.
    w : float
        Bucket width of level 0 ("w" in the document); level theta answers at 2^theta w.
    num_levels : int
        S, number of granularities (levels 0..S-1).
    and_width : int
        k, LSH functions per AND-construction (1..63).
    or_count : int
        L, AND-constructions in the OR-construction.
    num_bits : int
        m = 2^B, bits of the BMLBF (power of two, >= 2^S).
    verify_bits : int
        m' = 2^B', bits of the MVBF (power of two, >= 2^S).
    verify_hashes : int
        k', hash functions of the MVBF.
    seed : int
        Seed of the projections and of the MVBF hashes.
    domain : (lower, upper), optional
        Box the objects and queries live in (scalars or length-d vectors); fitted on the first
        batch when omitted (widened by ``domain_margin`` of the span).
    offset : float or array, optional
        The positive shift of Section 4; default ``max(0, 1 - lower)``.
    domain_margin : float
        See ``domain``.

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

    _STRUCTURE = "similarity.MLBF"
    _PHYSICAL = True
    _DEFAULT_BITS = 1 << 20

    def __init__(
        self,
        dim: int,
        w: float,
        num_levels: int = 3,
        and_width: int = 5,
        or_count: int = 6,
        num_bits: int = 1 << 20,
        verify_bits: int = 1 << 16,
        verify_hashes: int = 4,
        seed: int = 0,
        *,
        domain: tuple[Any, Any] | None = None,
        offset: Any = None,
        domain_margin: float = 0.1,
    ) -> None:
        self._setup(dim, w, num_levels, and_width, or_count, num_bits, verify_bits,
                    verify_hashes, seed, domain, offset, domain_margin)

    def query(self, q: Any, level: int = 0) -> bool:
        """Is ``q`` an approximate member at level theta (distance scale 2^theta w)?

        Complexity: O(d k L + L (k 2^theta / 64 + k' S)).
        """
        return bool(self.query_many(self._one_vector(q, "q", "query"), level)[0])

    def query_many(self, Q: Any, level: int = 0, *, verify: bool = True) -> np.ndarray:
        """Bool array: approximate membership of every row of ``Q`` at level theta.

        ``verify=False`` skips the MVBF (the bare VLBF of Theorems 5-6, Figs 8-9).

        Complexity: O(n (d k L + L (k + k' S))).
        """
        self._require_fitted("Q")
        return self._query_many(Q, level, verify)

    def and_pass_many(self, Q: Any, level: int = 0) -> np.ndarray:
        """(n, L) bool: which AND-constructions g_j(q) pass VLBF theta alone.

        Complexity: O(n (d k L + k L)).
        """
        self._require_fitted("Q")
        lv = self._check_level(level)
        arr = self._prepare(Q, "Q", fit=False)
        assert self._bml is not None
        loc = self._lsh.locations(arr, self.num_bits)
        return SK.and_pass(loc, self.and_width, self.or_count, lv, self._bml.words)

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
        levels: tuple[int, ...] = (0,),
        num_bits: int = 1 << 20,
        seed: int = 0,
        domain: tuple[Any, Any] | None = None,
        offset: Any = None,
    ) -> MLBF:
        """Build an MLBF from Section 6.4's requirements (see
        :func:`bloomkit.similarity.params.select_parameters`); S = max(levels) + 1.

        Complexity: as select_parameters, plus O(m + m') allocation.
        """
        from .params import select_parameters

        sp = select_parameters(r1, r2, delta_n, delta_p_lsh, delta_p_verify, num_objects,
                               p1=p1, w=w, levels=levels)
        return cls(dim, sp.w, max(sp.levels) + 1, sp.and_width, sp.or_count, num_bits,
                   sp.verify_bits, sp.verify_hashes, seed, domain=domain, offset=offset)


class MLBFStar(_LSHFilter):
    """MLBF* (document 002, Section 5.3): the MVBF alone, no physical BMLBF.

    Same parameters as :class:`MLBF`; ``num_bits`` (default 2^32) is only the virtual address space 2^B of the LSH locations whose concatenations are verified, it costs no memory.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(1, 1000, (100, 20))
    >>> f = MLBFStar(20, w=1.0, num_levels=3, verify_bits=2**16, seed=1, domain=(0, 1001))
    >>> f.add_many(X)
    >>> f.query_many(X[:3] + 0.01, level=1).tolist()
    [True, True, True]
    """

    _STRUCTURE = "similarity.MLBFStar"
    _PHYSICAL = False
    _DEFAULT_BITS = 1 << 32

    def __init__(
        self,
        dim: int,
        w: float,
        num_levels: int = 3,
        and_width: int = 5,
        or_count: int = 6,
        num_bits: int = 1 << 32,
        verify_bits: int = 1 << 16,
        verify_hashes: int = 4,
        seed: int = 0,
        *,
        domain: tuple[Any, Any] | None = None,
        offset: Any = None,
        domain_margin: float = 0.1,
    ) -> None:
        self._setup(dim, w, num_levels, and_width, or_count, num_bits, verify_bits,
                    verify_hashes, seed, domain, offset, domain_margin)

    def query(self, q: Any, level: int = 0) -> bool:
        """Is ``q`` an approximate member at level theta? Complexity: O(d k L + L k' S)."""
        return bool(self.query_many(self._one_vector(q, "q", "query"), level)[0])

    def query_many(self, Q: Any, level: int = 0) -> np.ndarray:
        """Bool array of approximate memberships at level theta.

        Complexity: O(n (d k L + L k' S)).
        """
        self._require_fitted("Q")
        return self._query_many(Q, level, True)
