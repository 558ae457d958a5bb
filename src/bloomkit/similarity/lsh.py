"""The alignable LSH family of document 002 (Definition 7, Section 4) and its bit mapping.

h_{t,j}(x) = floor(a_{t,j} . (x + s) / w),  a_{t,j} ~ N(0, I_d)

* ``s`` is the positive shift of Section 4: ``H^(a)`` has no random offset b, so objects on
  opposite sides of the origin never collide; shifting every coordinate to >= 1 restores the
  locality (distances are unchanged). The shift is fitted on the data bounds (or given), and
  the *domain* -- the box the shift was fitted for -- is enforced: a vector outside it raises
  InvalidParameterError instead of being hashed with a wrong collision probability.
* The k*L projections of a batch are one matrix product ``(X + s) @ A.T / w``.
* Location mapping (ERRATA): the filter has m = 2^B bits and loc_0 = bucket & (m - 1) in two's
  complement. Then loc_theta = loc_0 >> theta = floor(a.x / (2^theta w)) & (m/2^theta - 1)
  (Theorem 4), i.e. VLBF theta equals a filter rebuilt with width 2^theta w on m/2^theta bits.
  A general modulus would break this alignment.

``random_offset=True`` gives the classic family H^(a,b) of Formula 1 (b uniform in [0, w)),
used by the single-distance LSBF baseline; it is not alignable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_float, check_int
from ..errors import FormatError, InvalidParameterError
from . import _kernels as SK

__all__ = ["AlignableLSH", "as_vectors"]

_MAX_ABS_BUCKET = float(1 << 52)  # floats hold every integer bucket exactly below 2^53


def as_vectors(x: Any, dim: int, owner: str, name: str = "X") -> np.ndarray:
    """Validate a batch of vectors: (n, dim) finite float64 (a single vector becomes (1, dim)).

    Raises InvalidParameterError for non-numeric input, the wrong dimension, NaN or inf.

    Complexity: O(n d).
    """
    if isinstance(x, np.ndarray):
        arr = x
    else:
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"The {name!r} parameter of {owner} must be a numeric array of shape (n, {dim}). "
                f"Got {type(x).__name__} instead."
            ) from None
    if arr.dtype.kind not in "iuf":
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a numeric (int or float) array of shape "
            f"(n, {dim}). Got dtype {arr.dtype} instead."
        )
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must have shape (n, {dim}) (dimension {dim}). "
            f"Got shape {np.shape(x)} instead."
        )
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.size and not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must contain only finite values. "
            f"Got NaN or inf in row {bad} instead."
        )
    return arr


def _bound_vector(v: Any, dim: int, name: str, owner: str) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64) if not isinstance(v, np.ndarray) else v.astype(np.float64)
    if a.ndim == 0:
        a = np.full(dim, float(a))
    if a.shape != (dim,) or not np.isfinite(a).all():
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a finite number or a length-{dim} "
            f"vector. Got {v!r} instead."
        )
    return a


class AlignableLSH:
    """k*L functions of the alignable family H^(a) (Definition 7) with a fitted positive shift.

    Parameters
    ----------
    dim : int
        Dimension d.
    w : float
        Bucket width of level 0 (w > 0).
    num_functions : int
        Number of functions (k*L for an MLBF).
    seed : int
        Seed of the Gaussian projection vectors.
    domain : (lower, upper), optional
        Box (scalars or length-d vectors) that every vector must lie in. If omitted it is
        fitted by :meth:`fit` (the first batch inserted), widened by ``domain_margin`` times
        its span on each side.
    offset : float or array, optional
        The shift s. Default: ``max(0, 1 - lower)`` per coordinate, so every shifted vector
        of the domain has coordinates >= 1 (Section 4: the digits data are shifted by +1).
    random_offset : bool
        Add b ~ U[0, w) per function (Formula 1, not alignable; for the LSBF baseline).
    domain_margin : float
        Fraction of the data span added on each side when the domain is fitted.
    """

    _OWNER = "AlignableLSH"

    def __init__(
        self,
        dim: int,
        w: float,
        num_functions: int,
        seed: int = 0,
        *,
        domain: tuple[Any, Any] | None = None,
        offset: Any = None,
        random_offset: bool = False,
        domain_margin: float = 0.1,
        owner: str | None = None,
    ) -> None:
        own = owner or self._OWNER
        self.owner = own
        self.dim = check_int(dim, "dim", own, lo=1, hi=1 << 20)
        self.w = check_float(w, "w", own, lo=0, lo_open=True)
        self.num_functions = check_int(num_functions, "num_functions", own, lo=1, hi=1 << 24)
        self.seed = check_int(seed, "seed", own, lo=0, hi=(1 << 64) - 1)
        self.domain_margin = check_float(domain_margin, "domain_margin", own, lo=0)
        self.random_offset = bool(random_offset)
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 0x002]))
        self.a = rng.standard_normal((self.num_functions, self.dim))  # rows a_{t,j}
        self.b = (
            rng.uniform(0.0, self.w, self.num_functions) if self.random_offset else np.zeros(self.num_functions)
        )
        self._given_offset = None if offset is None else _bound_vector(offset, self.dim, "offset", own)
        self.lower: np.ndarray | None = None
        self.upper: np.ndarray | None = None
        self.offset: np.ndarray | None = None
        if domain is not None:
            self.set_domain(domain[0], domain[1])
        elif self._given_offset is not None:
            # an offset alone defines the domain x + s >= 0 (no upper bound beyond overflow)
            lo = -self._given_offset
            self._finish_domain(lo, np.full(self.dim, np.inf))
        self._scaled: np.ndarray | None = None
        self._shift: np.ndarray | None = None

    # -- domain ------------------------------------------------------------------------------
    @property
    def fitted(self) -> bool:
        """True once the domain (and so the shift) is known."""
        return self.offset is not None

    def set_domain(self, lower: Any, upper: Any) -> None:
        """Fix the domain box; the shift follows from it unless it was given.

        Complexity: O(d).
        """
        lo = _bound_vector(lower, self.dim, "domain", self.owner)
        hi = _bound_vector(upper, self.dim, "domain", self.owner)
        if np.any(hi < lo):
            raise InvalidParameterError(
                f"The 'domain' parameter of {self.owner} must have lower <= upper in every "
                f"coordinate. Got lower={lower!r}, upper={upper!r} instead."
            )
        self._finish_domain(lo, hi)

    def _finish_domain(self, lo: np.ndarray, hi: np.ndarray) -> None:
        off = self._given_offset if self._given_offset is not None else np.maximum(0.0, 1.0 - lo)
        row_sum = float(np.abs(self.a).sum(axis=1).max())
        if not np.isfinite(hi).all():
            # offset-only domain: cap the upper bound where buckets would leave 2^52
            cap = _MAX_ABS_BUCKET * self.w / max(row_sum, 1e-300) - off
            hi = np.where(np.isfinite(hi), hi, cap)
        # overflow guard: |a.(x+s)/w| must stay an exactly representable integer
        ext = np.maximum(np.abs(lo + off), np.abs(hi + off))
        bound = row_sum * float(ext.max()) / self.w
        if not bound <= _MAX_ABS_BUCKET * (1 + 1e-12):
            raise InvalidParameterError(
                f"The 'w' parameter of {self.owner} must be large enough for the domain: buckets "
                f"up to {bound:.3g} exceed 2^52. Got {self.w!r} instead."
            )
        self.lower, self.upper, self.offset = lo, hi, off
        self._scaled = None
        self._shift = None

    def fit(self, X: np.ndarray) -> None:
        """Fit the domain on the bounds of ``X`` (widened by ``domain_margin`` of the span).

        Complexity: O(n d).
        """
        lo = X.min(axis=0)
        hi = X.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        self.set_domain(lo - self.domain_margin * span, hi + self.domain_margin * span)

    def check_domain(self, X: np.ndarray, name: str = "X") -> None:
        """Raise InvalidParameterError if a row of ``X`` lies outside the fitted domain.

        Complexity: O(n d).
        """
        if self.lower is None or self.upper is None:
            raise InvalidParameterError(
                f"The {name!r} parameter of {self.owner} cannot be hashed before the domain is "
                "fitted (insert data first or pass domain=/offset=)."
            )
        if X.size == 0:
            return
        out = (X < self.lower).any(axis=1) | (X > self.upper).any(axis=1)
        if out.any():
            r = int(np.flatnonzero(out)[0])
            raise InvalidParameterError(
                f"The {name!r} parameter of {self.owner} must lie inside the fitted domain "
                f"[{self.lower.min():.6g}, {self.upper.max():.6g}] (per coordinate). "
                f"Got row {r} outside it instead."
            )

    # -- hashing -----------------------------------------------------------------------------
    def kernel_args(self) -> tuple[np.ndarray, np.ndarray]:
        """(At, shift) with At = (a / w)^T of shape (d, num_functions), shift = (a.s + b) / w.

        Complexity: O(d num_functions) on the first call, O(1) afterwards (cached).
        """
        assert self.offset is not None
        if self._scaled is None or self._shift is None:  # set together
            self._scaled = np.ascontiguousarray((self.a / self.w).T)
            self._shift = np.ascontiguousarray((self.a @ self.offset + self.b) / self.w)
        return self._scaled, self._shift

    def projections(self, X: np.ndarray) -> np.ndarray:
        """(n, num_functions) scaled projections (a.(x + s) + b) / w.

        ``X`` must be validated (:func:`as_vectors`) and inside the domain. Evaluated as
        sum_i x_i (a_i / w) + (a.s + b) / w in one fixed order by a numba kernel, so that every
        path (insert, query, this method) gives the same buckets.

        Complexity: O(n d num_functions).
        """
        A, sh = self.kernel_args()
        return SK.projections(np.ascontiguousarray(X, dtype=np.float64), A, sh)

    def buckets(self, X: np.ndarray) -> np.ndarray:
        """(n, num_functions) int64 buckets floor((a.(x + s) + b) / w) (Definition 7).

        Complexity: O(n d num_functions).
        """
        out: np.ndarray = np.floor(self.projections(X)).astype(np.int64)
        return out

    def locations(self, X: np.ndarray, num_bits: int) -> np.ndarray:
        """Level-0 addresses bucket & (num_bits - 1); num_bits must be a power of two.

        Complexity: O(n d num_functions).
        """
        A, sh = self.kernel_args()
        return SK.locations(np.ascontiguousarray(X, dtype=np.float64), A, sh,
                            np.int64(num_bits - 1))

    # -- persistence helpers -----------------------------------------------------------------
    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Parameters and arrays for the container format. Complexity: O(1) (no copies)."""
        params = {
            "dim": self.dim,
            "w": self.w,
            "num_functions": self.num_functions,
            "random_offset": self.random_offset,
            "domain_margin": self.domain_margin,
            "fitted": self.fitted,
            "offset_given": self._given_offset is not None,
        }
        arrays = {"lsh_a": self.a, "lsh_b": self.b}
        if self.fitted:
            assert self.lower is not None and self.upper is not None and self.offset is not None
            arrays.update(lsh_lower=self.lower, lsh_upper=self.upper, lsh_offset=self.offset)
        elif self._given_offset is not None:
            arrays["lsh_offset"] = self._given_offset
        return params, arrays

    @classmethod
    def from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int,
                   owner: str) -> AlignableLSH:
        """Rebuild from :meth:`state` output; FormatError on anything inconsistent.

        Complexity: O(d num_functions).
        """
        obj = cls.__new__(cls)
        obj.owner = owner
        try:
            obj.dim = check_int(params["dim"], "dim", owner, lo=1, hi=1 << 20)
            obj.w = check_float(params["w"], "w", owner, lo=0, lo_open=True)
            obj.num_functions = check_int(params["num_functions"], "num_functions", owner, 1, 1 << 24)
            obj.seed = seed
            obj.random_offset = bool(params["random_offset"])
            obj.domain_margin = check_float(params["domain_margin"], "domain_margin", owner, lo=0)
            a = arrays["lsh_a"]
            b = arrays["lsh_b"]
        except (KeyError, InvalidParameterError) as e:
            raise FormatError(f"invalid {owner} LSH parameters: {e}") from None
        if (a.dtype != np.float64 or a.shape != (obj.num_functions, obj.dim)
                or b.dtype != np.float64 or b.shape != (obj.num_functions,)
                or not np.isfinite(a).all() or not np.isfinite(b).all()):
            raise FormatError(f"invalid {owner} LSH projection arrays")
        if obj.random_offset:
            if np.any(b < 0) or np.any(b >= obj.w):
                raise FormatError(f"invalid {owner} LSH offsets b")
        elif np.any(b != 0):
            raise FormatError(f"invalid {owner} LSH offsets b")
        obj.a, obj.b = a.copy(), b.copy()
        obj._scaled = None
        obj._shift = None
        obj.lower = obj.upper = obj.offset = None
        obj._given_offset = None
        fitted = params.get("fitted")
        given = params.get("offset_given")
        if not isinstance(fitted, bool) or not isinstance(given, bool):
            raise FormatError(f"invalid {owner} LSH flags")

        def vec(name: str) -> np.ndarray:
            v = arrays.get(name)
            if v is None or v.dtype != np.float64 or v.shape != (obj.dim,) or np.isnan(v).any():
                raise FormatError(f"invalid {owner} LSH array {name!r}")
            return v.copy()

        if given:
            obj._given_offset = vec("lsh_offset")
            if not np.isfinite(obj._given_offset).all():
                raise FormatError(f"invalid {owner} LSH offset")
        if fitted:
            lo, hi, off = vec("lsh_lower"), vec("lsh_upper"), vec("lsh_offset")
            if (not np.isfinite(lo).all() or np.isnan(hi).any() or np.any(hi < lo)
                    or not np.isfinite(off).all()):
                raise FormatError(f"invalid {owner} LSH domain")
            obj.lower, obj.upper, obj.offset = lo, hi, off
        return obj
