"""The engine shared by MLBF, MLBF* and LSBF (document 002): parameters, insertion, queries,
persistence, theory. :mod:`bloomkit.similarity.mlbf` and :mod:`bloomkit.similarity.lsbf` hold the
classes users build; this module holds what they have in common.

Storage: a BMLBF / LSH array of m = 2^B bits (absent in the MLBF*, where m is only the address
space) and an MVBF of m' = 2^B' bits (:mod:`bloomkit.similarity.mvbf`, kernels in
:mod:`bloomkit.similarity._kernels`). Object o sets, for every AND-construction j = 1..L, the k
bits loc_0 = h_{t,j}(o) & (m - 1) (:mod:`bloomkit.similarity.lsh`) and the k' MVBF bits of
xi_j(o) = j . h_{1,j}(o) ... h_{k,j}(o). A query at level theta is positive if for some j all k
VLBF-theta locations and all k' VVBF-theta locations of xi_j(q) are set (AND of k, OR over L).
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

import numpy as np

from .._engine.hashing import HASH_XXH64
from .._engine.storage import BitArray
from .._format import ArraySpec, Persistable
from .._validation import SEED, Bool, Int, InvariantError, Real, Spec, check_int
from ..errors import FormatError, IncompatibleFiltersError, InvalidParameterError
from . import _kernels as SK
from . import theory
from .lsh import AlignableLSH, as_point, as_points
from .mvbf import mvbf_seeds, verification_fpr
from .spec import (
    AND_WIDTH,
    NUM_BITS,
    NUM_LEVELS,
    OR_COUNT,
    VERIFY_BITS,
    VERIFY_HASHES,
    check_levels_fit,
)

__all__ = ["LSHFilterBase"]

_CHUNK = 1 << 15
ALPHA = Real(0, 1)

PARAMS: Spec = {
    **AlignableLSH.PARAMS,
    "num_levels": NUM_LEVELS, "and_width": AND_WIDTH, "or_count": OR_COUNT, "num_bits": NUM_BITS,
    "verify_bits": VERIFY_BITS, "verify_hashes": VERIFY_HASHES, "count": Int(0),
}
"""The saved parameters of an MLBF / MLBF* (the LSBF pins S = L = 1)."""
ARRAYS: dict[str, ArraySpec] = {**AlignableLSH.ARRAYS, "mvbf": ArraySpec("<u8"), "bmlbf": ArraySpec("<u8")}
"""The saved arrays of a filter with a physical BMLBF (the MLBF* has no ``bmlbf``)."""


class LSHFilterBase(Persistable):
    """What MLBF, MLBF* and LSBF share (not built directly: use those classes).

    Thread safety: any number of threads may add and query at once. ``add`` / ``add_many`` /
    ``clear`` hold the object's lock (fitting the domain on the first batch, setting the bits
    -- one compiled call that keeps the GIL -- and counting are one step); queries take no lock
    and release the GIL, and a query running while an object is added may or may not see it.
    """

    _PHYSICAL: ClassVar[bool] = True
    _RANDOM_OFFSET: ClassVar[bool] = False
    _HASH_IDS: ClassVar[tuple[int, ...]] = (HASH_XXH64,)  # the MVBF hashes with XXH64; the loader refuses others
    _PARAMS: ClassVar[Spec] = PARAMS
    _ARRAYS: ClassVar[dict[str, ArraySpec]] = ARRAYS
    exact_len: ClassVar[bool] = True

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

    def _setup(self, dim: Any, w: Any, num_levels: Any, and_width: Any, or_count: Any, num_bits: Any,
               verify_bits: Any, verify_hashes: Any, seed: Any, domain: Any, offset: Any,
               domain_margin: Any) -> None:
        """Validate with the loader's constraints (``_PARAMS``) and allocate (constructors)."""
        self._setup_storage(num_levels, and_width, or_count, num_bits, verify_bits, verify_hashes, seed)
        self._lsh = AlignableLSH(dim, w, self.and_width * self.or_count, seed=self.seed, domain=domain,
                                 offset=offset, random_offset=self._RANDOM_OFFSET,
                                 domain_margin=domain_margin, owner=type(self).__name__)
        self._derive()

    def _setup_storage(self, num_levels: Any, and_width: Any, or_count: Any, num_bits: Any, verify_bits: Any,
                       verify_hashes: Any, seed: Any) -> None:
        """The parameters and bit arrays every family has (validated with ``_PARAMS``)."""
        own = type(self).__name__
        spec = type(self)._PARAMS
        self.num_levels = spec["num_levels"](num_levels, "num_levels", own)
        self.and_width = spec["and_width"](and_width, "and_width", own)
        self.or_count = spec["or_count"](or_count, "or_count", own)
        self.num_bits = check_levels_fit(spec["num_bits"](num_bits, "num_bits", own), self.num_levels,
                                         "num_bits", own)
        self.verify_bits = check_levels_fit(spec["verify_bits"](verify_bits, "verify_bits", own),
                                            self.num_levels, "verify_bits", own)
        self.verify_hashes = spec["verify_hashes"](verify_hashes, "verify_hashes", own)
        self.seed = SEED(seed, "seed", own)
        self._bml = BitArray(self.num_bits) if self._PHYSICAL else None
        self._mv = BitArray(self.verify_bits)
        self.count = 0

    def _derive(self) -> None:
        """State derived from the parameters (every construction path ends here)."""
        self._sc, self._ss = mvbf_seeds(self.seed)
        self._mc = np.uint64(self.verify_bits >> (self.num_levels - 1))  # VVBF S-1 locations
        self._mask = np.int64(self.num_bits - 1)
        self._no_bml = np.zeros(1, np.uint64)  # what the kernels read when there is no BMLBF

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
        """Stored bits: m + m' (with a physical BMLBF / LSH array) or m' (MLBF*)."""
        return (self.num_bits if self._PHYSICAL else 0) + self.verify_bits

    def _check_level(self, level: Any, owner: str) -> int:
        return check_int(level, "level", owner, lo=0, hi=self.num_levels - 1)

    def distance_for_level(self, level: int) -> float:
        """Bucket width 2^theta w of level theta, the distance scale it answers for.

        Complexity: O(1).
        """
        return self.w * (1 << self._check_level(level, f"{type(self).__name__}.distance_for_level"))

    def _bml_words(self) -> np.ndarray:
        return self._bml.words if self._bml is not None else self._no_bml

    # -- building -----------------------------------------------------------------------------
    def add(self, point: Any) -> None:
        """Insert one point (a length-d vector).

        Complexity: O(d k L + L (k + k' S)).
        """
        cls = type(self).__name__
        self._insert(as_point(point, self.dim, "point", f"{cls}.add", batch=f"{cls}.add_many"), f"{cls}.add")

    def add_many(self, points: Any) -> None:
        """Insert every row of ``points``: an (n, d) array, a list of vectors, a DataFrame whose
        numeric columns (in order) are the d dimensions, a pyarrow table / fixed-size list array.
        The first batch fits the domain if none was given; a batch with a point outside the
        domain (or NaN, inf, a non-number) raises InvalidParameterError and inserts nothing.

        Complexity: O(n (d k L + L (k + k' S))).
        """
        cls = type(self).__name__
        self._insert(as_points(points, self.dim, "points", f"{cls}.add_many", single=f"{cls}.add"),
                     f"{cls}.add_many")

    def _insert(self, arr: np.ndarray, owner: str) -> None:
        if arr.shape[0] == 0:
            return  # nothing to insert: no domain needed
        with self._lock:  # fit, check, set bits and count as one step
            lsh = self._lsh
            if not lsh.fitted:
                lsh.fit(arr)
            lsh.check_domain(arr, "points", owner)
            bml = self._bml_words()
            for s in range(0, arr.shape[0], _CHUNK):
                loc = lsh.locations(arr[s : s + _CHUNK], self.num_bits)
                SK.insert(loc, self.and_width, self.or_count, self.num_levels, bml, self._PHYSICAL,
                          self._mv.words, self.verify_hashes, self._mc, self._sc, self._ss)
            self.count += int(arr.shape[0])

    def clear(self) -> None:
        """Remove every object; the parameters, the hash functions and the domain (part of the
        hash functions: the shift s) stay. Complexity: O((m + m') / 64)."""
        with self._lock:
            self._mv.clear()
            if self._bml is not None:
                self._bml.clear()
            self.count = 0

    # -- querying -----------------------------------------------------------------------------
    def query(self, point: Any, level: int = 0) -> bool:
        """Is ``point`` an approximate member at level theta (distance scale 2^theta w)?

        Complexity: O(d k L + L (k 2^theta / 64 + k' S)).
        """
        cls = type(self).__name__
        arr = as_point(point, self.dim, "point", f"{cls}.query", batch=f"{cls}.query_many")
        return bool(self._query_arr(arr, level, True, f"{cls}.query")[0])

    def _query_many(self, points: Any, level: Any, verify: bool) -> np.ndarray:
        own = f"{type(self).__name__}.query_many"
        verify = Bool()(verify, "verify", own)
        return self._query_arr(as_points(points, self.dim, "points", own, single=f"{type(self).__name__}.query"),
                               level, verify, own)

    def _query_arr(self, arr: np.ndarray, level: Any, verify: bool, owner: str) -> np.ndarray:
        lv = self._check_level(level, owner)
        lsh = self._lsh
        lsh.check_domain(arr, "points", owner)  # also: refused before the domain is known
        A, sh = lsh.kernel_args()
        out: np.ndarray = SK.query_vectors(arr, A, sh, self._mask, self.and_width, self.or_count,
                                           self.num_levels, lv, self._bml_words(), self._PHYSICAL,
                                           self._mv.words, self.verify_hashes, self._mc, self._sc,
                                           self._ss, verify)
        return out

    # -- theory -------------------------------------------------------------------------------
    def _predicted(self, level: Any, alpha: Any, owner: str) -> float:
        """Theorem 8, exact OR form: 1 - (1 - alpha phi)^L, with phi the verification FPR of this
        filter's MVBF (Theorem 7's exponential form with this seed's suffix bits,
        :func:`bloomkit.similarity.mvbf.verification_fpr`; at the coarsest level, and for the
        LSBF, exactly (1 - e^(-k' n L / m''))^k')."""
        lv = self._check_level(level, owner)
        a = ALPHA(alpha, "alpha", owner)
        phi = verification_fpr(self.count * self.or_count, self.verify_bits, self.verify_hashes, self.num_levels,
                               lv, self.seed, self.and_width, exact=False)
        return float(theory.or_amplify(a * phi, self.or_count))

    def info(self) -> dict[str, Any]:
        """Parameters, sizes, fill, domain and predicted rates per level (``bloomkit info``).

        Complexity: O((m + m') / 64 + d).
        """
        lsh = self._lsh
        own = f"{type(self).__name__}.info"
        fitted = lsh.lower is not None and lsh.upper is not None and lsh.offset is not None

        def vec(v: np.ndarray | None) -> list[float] | None:
            return None if v is None or not fitted else [float(x) for x in v]

        rates = [self._predicted(t, 1.0, own) for t in range(self.num_levels)]
        return {
            "structure": self._STRUCTURE, "class": type(self).__name__, "seed": self.seed,
            "dim": self.dim, "w": self.w, "num_levels": self.num_levels, "and_width": self.and_width,
            "or_count": self.or_count, "num_bits": self.num_bits, "verify_bits": self.verify_bits,
            "verify_hashes": self.verify_hashes, "size_in_bits": self.size_in_bits,
            "count": self.count, "count_is_exact": True,
            "fill_ratio_bmlbf": None if self._bml is None else self._bml.popcount() / self.num_bits,
            "fill_ratio_mvbf": self._mv.popcount() / self.verify_bits,
            "distance_by_level": [self.w * (1 << t) for t in range(self.num_levels)],
            "domain_fitted": fitted, "domain_lower": vec(lsh.lower), "domain_upper": vec(lsh.upper),
            "offset": vec(lsh.offset),
            "predicted_fpr": rates[0], "predicted_fpr_by_level": rates,
        }

    # -- set operations -----------------------------------------------------------------------
    def _compatible(self, other: Any) -> None:
        if type(other) is not type(self):
            raise IncompatibleFiltersError(
                f"cannot combine a {type(self).__name__} with a {type(other).__name__}"
            )
        mine = (self.num_levels, self.and_width, self.or_count, self.num_bits, self.verify_bits,
                self.verify_hashes, self.seed, *self._family_key())
        theirs = (other.num_levels, other.and_width, other.or_count, other.num_bits,
                  other.verify_bits, other.verify_hashes, other.seed, *other._family_key())
        if mine != theirs:
            raise IncompatibleFiltersError(
                f"{type(self).__name__}s differ in (S, k, L, m, m', k', seed, {self._FAMILY_KEY}): "
                f"{mine} vs {theirs}"
            )
        self._family_compatible(other)

    # -- the hash family's part (the Jaccard family overrides these: bloomkit.similarity.jaccard)
    _FAMILY_KEY: ClassVar[str] = "d, w"

    def _family_key(self) -> tuple[Any, ...]:
        """The family's parameters two filters must share to be combined."""
        return (self.dim, self.w)

    def _family_ready(self) -> bool:
        """True once the family can hash (the Euclidean family: its domain is known)."""
        return self._lsh.fitted

    def _family_compatible(self, other: Any) -> None:
        a, b = self._lsh, other._lsh
        if not (np.array_equal(a.a, b.a) and np.array_equal(a.b, b.b)):
            raise IncompatibleFiltersError(f"{type(self).__name__}s use different projections")
        if a.offset is not None and b.offset is not None and not np.array_equal(a.offset, b.offset):
            raise IncompatibleFiltersError(
                f"{type(self).__name__}s use different shifts (fitted on different domains); "
                "pass the same domain= or offset= to both"
            )

    def copy(self) -> Self:
        """An independent copy. Complexity: O(m + m')."""
        out: Self = type(self).from_bytes(self.to_bytes())
        return out

    def union(self, other: Any) -> Self:
        """The filter of both object sets (bitwise OR); both must share every parameter, the
        seed and the shift. Raises IncompatibleFiltersError otherwise.

        Complexity: O(m + m').
        """
        self._compatible(other)
        out: Self = self.copy() if self._family_ready() else other.copy()
        src = other if self._family_ready() else self
        out._mv |= src._mv
        if out._bml is not None and src._bml is not None:
            out._bml |= src._bml
        out._merge_family(src)
        out.count = self.count + other.count
        return out

    def _merge_family(self, src: Any) -> None:
        """The union's family state from ``src``'s (the Euclidean family: the domain boxes)."""
        a, b = self._lsh, src._lsh
        if a.lower is not None and a.upper is not None and b.lower is not None and b.upper is not None:
            # same shift: the union's domain covers both boxes (set before anyone queries it)
            a.lower = np.minimum(a.lower, b.lower)
            a.upper = np.maximum(a.upper, b.upper)

    def __or__(self, other: Any) -> Self:
        return self.union(other)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, LSHFilterBase)
        return self.to_bytes() == other.to_bytes()

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        """Number of objects added (exact; an object added twice counts twice)."""
        return self.count

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(dim={self.dim}, w={self.w!r}, num_levels={self.num_levels}, "
                f"and_width={self.and_width}, or_count={self.or_count}, num_bits={self.num_bits}, "
                f"verify_bits={self.verify_bits}, verify_hashes={self.verify_hashes}, "
                f"seed={self.seed}) with {self.count} objects")

    # -- invariants ---------------------------------------------------------------------------
    def _check(self) -> None:
        """Assert the structure's invariants (the tests after mutations, the loader after loading)."""
        S = self.num_levels
        for nbits in (self.num_bits, self.verify_bits):
            if not (nbits & (nbits - 1) == 0 and nbits >= 1 << S):
                raise InvariantError("nbits & (nbits - 1) == 0 and nbits >= 1 << S")
        if not (self._mv.num_bits == self.verify_bits and self._mv.words.dtype == np.uint64):
            raise InvariantError("self._mv.num_bits == self.verify_bits and self._mv.words.dtype == np.uint64")
        if not (self.count >= 0):
            raise InvariantError("self.count >= 0")
        kp_l = self.verify_hashes * self.or_count
        if not (self._mv.popcount() <= kp_l * self.count):
            raise InvariantError("self._mv.popcount() <= kp_l * self.count")
        stores = [self._mv]
        if self._PHYSICAL:
            if not (self._bml is not None and self._bml.num_bits == self.num_bits):
                raise InvariantError("self._bml is not None and self._bml.num_bits == self.num_bits")
            if not (self._bml.popcount() <= self.and_width * self.or_count * self.count):
                raise InvariantError("self._bml.popcount() <= self.and_width * self.or_count * self.count")
            stores.append(self._bml)
        else:
            if self._bml is not None:
                raise InvariantError("self._bml is None")
        for b in stores:
            rem = b.num_bits & 63
            if not (rem == 0 or int(b.words[-1]) >> rem == 0):
                raise InvariantError("bits set beyond the size")
        self._check_family()

    def _check_family(self) -> None:
        lsh = self._lsh
        if not (lsh.a.shape == (self.and_width * self.or_count, lsh.dim)):
            raise InvariantError("lsh.a.shape == (self.and_width * self.or_count, lsh.dim)")
        if lsh.lower is not None and lsh.upper is not None:
            if not (lsh.offset is not None and np.all(lsh.lower <= lsh.upper)):
                raise InvariantError("lsh.offset is not None and np.all(lsh.lower <= lsh.upper)")
        else:
            if not (self.count == 0 and not lsh.fitted):
                raise InvariantError("self.count == 0 and not lsh.fitted")

    # -- persistence --------------------------------------------------------------------------
    def _family_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return self._lsh.state()

    def _to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        params, arrays = self._family_state()
        params.update(num_levels=self.num_levels, and_width=self.and_width, or_count=self.or_count,
                      num_bits=self.num_bits, verify_bits=self.verify_bits,
                      verify_hashes=self.verify_hashes, count=self.count)
        arrays["mvbf"] = self._mv.words
        if self._bml is not None:
            arrays["bmlbf"] = self._bml.words
        return params, arrays

    @classmethod
    def _from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int,
                    hash_id: int) -> Any:
        """Rebuild from validated params / arrays: every relation is checked here, before
        anything is allocated (the bit arrays are the file's own)."""
        own = cls.__name__
        k, L = params["and_width"], params["or_count"]
        if params["num_functions"] != k * L:
            raise FormatError(f"{own}: 'num_functions' = {params['num_functions']} is not k L = {k * L}")
        if params["random_offset"] is not cls._RANDOM_OFFSET:
            raise FormatError(f"{own}: 'random_offset' must be {cls._RANDOM_OFFSET} (the {own}'s LSH family)")
        if params["count"] and not params["fitted"]:
            raise FormatError(f"{own}: {params['count']} objects stored without a domain")
        obj = cls._restore(params, arrays, seed)
        obj._lsh = AlignableLSH.from_state(params, arrays, seed, own)
        obj._derive()
        return obj

    @classmethod
    def _restore(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int) -> Any:
        """A new object with the saved parameters and bit arrays of every family (checked
        before allocation); the caller restores its family and calls ``_derive``."""
        own = cls.__name__
        S = params["num_levels"]
        try:
            for name in ("num_bits", "verify_bits"):
                check_levels_fit(params[name], S, name, own)
        except InvalidParameterError as e:
            raise FormatError(str(e)) from None

        def bits(name: str, nbits: int) -> BitArray:
            words = arrays[name]
            if words.shape != ((nbits + 63) // 64,):
                raise FormatError(f"{own}: the {name!r} array has {words.shape[0]} words; {nbits} bits need "
                                  f"{(nbits + 63) // 64}")
            if nbits & 63 and int(words[-1]) >> (nbits & 63):
                raise FormatError(f"{own}: the {name!r} array has bits set beyond its {nbits} bits")
            return BitArray(nbits, words)

        obj = cls.__new__(cls)
        obj._mv = bits("mvbf", params["verify_bits"])
        obj._bml = bits("bmlbf", params["num_bits"]) if cls._PHYSICAL else None
        obj.seed = seed
        obj.num_levels, obj.and_width, obj.or_count = S, params["and_width"], params["or_count"]
        obj.num_bits, obj.verify_bits = params["num_bits"], params["verify_bits"]
        obj.verify_hashes, obj.count = params["verify_hashes"], params["count"]
        return obj
