"""The alignable LSH family of document 002 (Definition 7, Section 4) and its bit mapping.

h_{t,j}(x) = floor(a_{t,j} . (x + s) / w),  a_{t,j} ~ N(0, I_d)

* ``s`` is the positive shift of Section 4: ``H^(a)`` has no random offset b, so objects on
  opposite sides of the origin never collide; shifting every coordinate to >= 1 restores the
  locality (distances are unchanged). The shift is fitted on the data bounds (or given), and
  the *domain* -- the box the shift was fitted for -- is enforced: a point outside it raises
  InvalidParameterError naming its row, dimension and value, instead of being hashed with a
  wrong collision probability.
* The k*L projections of a batch are one pass ``sum_i x_i (a_i / w) + (a.s + b) / w``.
* Location mapping (ERRATA): the filter has m = 2^B bits and loc_0 = bucket & (m - 1) in two's
  complement. Then loc_theta = loc_0 >> theta = floor(a.x / (2^theta w)) & (m/2^theta - 1)
  (Theorem 4), i.e. VLBF theta equals a filter rebuilt with width 2^theta w on m/2^theta bits.
  A general modulus would break this alignment.

``random_offset=True`` gives the classic family H^(a,b) of Formula 1 (b uniform in [0, w)),
used by the single-distance LSBF baseline; it is not alignable.

Points enter through the data front door (:func:`bloomkit._engine.columns.as_matrix`): 2-D numpy
arrays, lists of vectors, pandas DataFrames (numeric columns in order = dimensions, any index),
pyarrow tables / fixed-size lists, polars DataFrames.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

from .._engine.columns import as_matrix, sized_items
from .._format import ArraySpec
from .._validation import SEED, Bool, Spec, check_params
from ..errors import FormatError, InvalidParameterError
from . import _kernels as SK
from .spec import DIM, DOMAIN_MARGIN, FINITE, NUM_FUNCTIONS, RANDOM_OFFSET, WIDTH

__all__ = ["AlignableLSH", "as_point", "as_points"]

_MAX_ABS_BUCKET = float(1 << 52)  # floats hold every integer bucket exactly below 2^53


def as_points(points: Any, dim: int, name: str = "points", owner: str = "AlignableLSH",
              single: str | None = None) -> np.ndarray:
    """A batch of points as an (n, dim) C-contiguous float64 array of finite numbers.

    ``points``: a 2-D numpy array, a list of vectors, a pandas DataFrame (numeric columns in
    order are the dimensions; the index is ignored), a pyarrow Table / RecordBatch /
    FixedSizeListArray or a polars DataFrame. 1-D input, the wrong number of columns,
    non-numeric or bool values, nulls, NaN and infinities raise InvalidParameterError naming the
    row and the column; ``single`` names the method that takes one point, for the 1-D message.

    Complexity: O(n d).
    """
    hint = f", or pass one point to {single}" if single else ""
    return as_matrix(points, name, owner, ncols=dim, hint=hint)


def as_point(point: Any, dim: int, name: str = "point", owner: str = "AlignableLSH",
             batch: str | None = None) -> np.ndarray:
    """One point (a length-dim vector, or a (1, dim) row) as a (1, dim) float64 array.

    Raises InvalidParameterError for a batch (naming ``batch``, the method that takes one), the
    wrong length, non-numeric values, NaN or inf.

    Complexity: O(d).
    """
    if not isinstance(point, np.ndarray | list | tuple) and not hasattr(point, "__array__"):
        if isinstance(point, str | bytes) or not isinstance(point, Iterable):
            point = [point]  # a scalar: "a vector of length 1"
        point = sized_items(point, name, owner, "values")  # never iterated past its len()
    if isinstance(point, list | tuple) and not all(isinstance(v, numbers.Number) for v in point):
        if len(point) == 1 and isinstance(point[0], list | tuple | np.ndarray):  # one (1, dim) row
            return as_matrix(point, name, owner, ncols=dim)
        if all(isinstance(v, list | tuple | np.ndarray) for v in point):  # several rows: a batch
            raise InvalidParameterError(
                f"The {name!r} parameter of {owner} must be one point, a vector of length {dim}. Got "
                f"{len(point)} rows instead" + (f"; use {batch} for a batch." if batch else "."))
        return as_matrix([point], name, owner, ncols=dim)  # names the offending value
    try:
        shape = point.shape if isinstance(point, np.ndarray) else np.shape(point)
    except ValueError:  # ragged nested lists
        shape = (-1, -1)
    if not (len(shape) == 1 or len(shape) == 2 and shape[0] == 1):
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be one point, a vector of length {dim}. Got "
            f"{'shape ' + str(shape) if shape != (-1, -1) else 'rows of unequal length'} instead"
            + (f"; use {batch} for a batch." if batch else ".")
        )
    if shape[-1] != dim:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be one point, a vector of length {dim}. "
            f"Got a vector of length {shape[-1]} instead."
        )
    if len(shape) == 2:
        rows = point
    else:
        rows = point.reshape(1, -1) if isinstance(point, np.ndarray) else [point]
    return as_matrix(rows, name, owner, ncols=dim)


def _bound_vector(v: Any, dim: int, name: str, owner: str) -> np.ndarray:
    try:
        a = np.array(v, dtype=np.float64)
    except (TypeError, ValueError):
        a = np.full(0, np.nan)
    if a.ndim == 0:
        a = np.full(dim, float(a))
    if a.shape != (dim,) or not np.isfinite(a).all():
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a finite number or a length-{dim} "
            f"vector. Got {v!r} instead."
        )
    return a


def _bucket_bound(a: np.ndarray, lower: np.ndarray, upper: np.ndarray, offset: np.ndarray, w: float) -> float:
    """Largest |a.(x + s)| / w over the domain box (inf on overflow)."""
    with np.errstate(over="ignore", invalid="ignore"):
        row_sum = float(np.abs(a).sum(axis=1).max()) if a.size else 0.0
        ext = np.maximum(np.abs(lower + offset), np.abs(upper + offset))
        bound = row_sum * float(ext.max()) / w
    return bound if np.isfinite(bound) else float("inf")


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
        Seed of the Gaussian projection vectors (keyword-only).
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
    PARAMS: ClassVar[Spec] = {
        "dim": DIM, "w": WIDTH, "num_functions": NUM_FUNCTIONS, "random_offset": RANDOM_OFFSET,
        "domain_margin": DOMAIN_MARGIN, "fitted": Bool(), "offset_given": Bool(),
    }
    """The saved parameters (the loader's spec; ``fitted`` / ``offset_given`` are strict bools)."""
    ARRAYS: ClassVar[dict[str, ArraySpec]] = {
        "lsh_a": ArraySpec("<f8", 2, lo=-FINITE, hi=FINITE),
        "lsh_b": ArraySpec("<f8", 1, lo=0.0, hi=FINITE),
        "lsh_lower": ArraySpec("<f8", 1, optional=True, lo=-FINITE, hi=FINITE),
        "lsh_upper": ArraySpec("<f8", 1, optional=True, lo=-FINITE, hi=FINITE),
        "lsh_offset": ArraySpec("<f8", 1, optional=True, lo=-FINITE, hi=FINITE),
    }
    """The saved arrays: projections a, offsets b, and the domain box and shift once fitted."""

    def __init__(
        self,
        dim: int,
        w: float,
        num_functions: int,
        *,
        seed: int = 0,
        domain: tuple[Any, Any] | None = None,
        offset: Any = None,
        random_offset: bool = False,
        domain_margin: float = 0.1,
        owner: str | None = None,
    ) -> None:
        if owner is not None and not isinstance(owner, str):
            raise InvalidParameterError(f"The 'owner' parameter of {self._OWNER} must be None or a str (for "
                                        f"messages). Got {type(owner).__name__} instead.")
        own = owner or self._OWNER
        self.owner = own
        self.dim: int = DIM(dim, "dim", own)
        self.w: float = WIDTH(w, "w", own)
        self.num_functions: int = NUM_FUNCTIONS(num_functions, "num_functions", own)
        self.seed: int = SEED(seed, "seed", own)
        self.domain_margin: float = DOMAIN_MARGIN(domain_margin, "domain_margin", own)
        self.random_offset: bool = RANDOM_OFFSET(random_offset, "random_offset", own)
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 0x002]))
        self.a = rng.standard_normal((self.num_functions, self.dim))  # rows a_{t,j}
        self.b = (
            rng.uniform(0.0, self.w, self.num_functions) if self.random_offset else np.zeros(self.num_functions)
        )
        self._given_offset = None if offset is None else _bound_vector(offset, self.dim, "offset", own)
        self._unfit()
        if domain is not None:
            if not isinstance(domain, tuple | list) or len(domain) != 2:
                raise InvalidParameterError(
                    f"The 'domain' parameter of {own} must be a pair (lower, upper). Got {domain!r} instead."
                )
            self.set_domain(domain[0], domain[1])
        elif self._given_offset is not None:
            # an offset alone defines the domain x + s >= 0 (no upper bound beyond overflow)
            lo = -self._given_offset
            self._finish_domain(lo, np.full(self.dim, np.inf))

    def _unfit(self) -> None:
        self.lower: np.ndarray | None = None
        self.upper: np.ndarray | None = None
        self.offset: np.ndarray | None = None
        self._kargs: tuple[np.ndarray, np.ndarray] | None = None

    # -- domain ------------------------------------------------------------------------------
    @property
    def fitted(self) -> bool:
        """True once the domain (and so the shift) is known."""
        return self.offset is not None

    def set_domain(self, lower: Any, upper: Any) -> None:
        """Fix the domain box; the shift follows from it unless it was given.

        Complexity: O(d num_functions).
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
        if not np.isfinite(hi).all():
            # offset-only domain: cap the upper bound where buckets would leave 2^52
            row_sum = float(np.abs(self.a).sum(axis=1).max())
            cap = _MAX_ABS_BUCKET * self.w / max(row_sum, 1e-300) - off
            hi = np.where(np.isfinite(hi), hi, cap)
        # overflow guard: |a.(x+s)/w| must stay an exactly representable integer
        bound = _bucket_bound(self.a, lo, hi, off, self.w)
        if not bound <= _MAX_ABS_BUCKET * (1 + 1e-12):
            raise InvalidParameterError(
                f"The 'w' parameter of {self.owner} must be large enough for the domain: buckets "
                f"up to {bound:.3g} exceed 2^52. Got {self.w!r} instead."
            )
        # publish the shift last: a reader that sees ``fitted`` sees the box and the kernel
        # arguments of the same domain (threads query without a lock)
        self._kargs = self._kernel_args(off)
        self.lower, self.upper = lo, hi
        self.offset = off

    def _kernel_args(self, off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (np.ascontiguousarray((self.a / self.w).T),
                np.ascontiguousarray((self.a @ off + self.b) / self.w))

    def fit(self, X: np.ndarray) -> None:
        """Fit the domain on the bounds of ``X`` (widened by ``domain_margin`` of the span).

        Complexity: O(n d).
        """
        lo = X.min(axis=0)
        hi = X.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        with np.errstate(over="ignore"):
            self.set_domain(lo - self.domain_margin * span, hi + self.domain_margin * span)

    def check_domain(self, X: np.ndarray, name: str = "points", owner: str | None = None) -> None:
        """Raise InvalidParameterError, naming the row, the dimension, the value and that
        dimension's domain, if a row of ``X`` lies outside the domain.

        Complexity: O(n d).
        """
        own = owner or self.owner
        lower, upper = self.lower, self.upper
        if not self.fitted or lower is None or upper is None:
            raise InvalidParameterError(
                f"The {name!r} parameter of {own} cannot be hashed before the domain is "
                "known: insert data first or pass domain= / offset=."
            )
        if X.size == 0 or not ((X < lower).any() or (X > upper).any()):
            return
        r, c = (int(i) for i in np.argwhere((X < lower) | (X > upper))[0])
        raise InvalidParameterError(
            f"The {name!r} parameter of {own} must lie inside the filter's domain. Got {float(X[r, c])!r} "
            f"at row {r}, dimension {c} instead, outside that dimension's domain "
            f"[{lower[c]:.6g}, {upper[c]:.6g}] (set by domain= / offset= or fitted on the first "
            "batch added; build the filter with a wider domain= to admit it)."
        )

    # -- hashing -----------------------------------------------------------------------------
    def kernel_args(self) -> tuple[np.ndarray, np.ndarray]:
        """(At, shift) with At = (a / w)^T of shape (d, num_functions), shift = (a.s + b) / w.

        Computed once when the domain is fixed. Complexity: O(1).
        """
        kargs = self._kargs
        if kargs is None:
            raise InvalidParameterError(
                f"{self.owner} cannot hash before the domain is known: insert data first or pass domain= / offset=."
            )
        return kargs

    def projections(self, X: np.ndarray) -> np.ndarray:
        """(n, num_functions) scaled projections (a.(x + s) + b) / w.

        ``X`` must be validated (:func:`as_points`) and inside the domain. Evaluated as
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
        """Parameters and arrays for the container format (:attr:`PARAMS`, :attr:`ARRAYS`).

        Complexity: O(1) (no copies).
        """
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
        if self.lower is not None and self.upper is not None and self.offset is not None:
            arrays.update(lsh_lower=self.lower, lsh_upper=self.upper, lsh_offset=self.offset)
        return params, arrays

    @classmethod
    def from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray], seed: int,
                   owner: str) -> AlignableLSH:
        """Rebuild from :meth:`state` output (parameters checked against :attr:`PARAMS` here
        too); FormatError naming the field on anything inconsistent, before any allocation
        beyond the arrays given.

        Complexity: O(d num_functions).
        """
        try:
            p = check_params(cls.PARAMS, {k: params.get(k) for k in cls.PARAMS}, owner)
        except InvalidParameterError as e:
            raise FormatError(f"invalid {owner} LSH parameters: {e}") from None
        dim, nf, w = p["dim"], p["num_functions"], p["w"]
        a, b = arrays.get("lsh_a"), arrays.get("lsh_b")
        if a is None or a.dtype != np.float64 or a.shape != (nf, dim):
            raise FormatError(f"{owner}: the 'lsh_a' array must be {nf} x {dim} float64 (num_functions x dim); "
                              f"got {None if a is None else (a.shape, str(a.dtype))}")
        if b is None or b.dtype != np.float64 or b.shape != (nf,):
            raise FormatError(f"{owner}: the 'lsh_b' array must hold {nf} float64 offsets; "
                              f"got {None if b is None else (b.shape, str(b.dtype))}")
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            raise FormatError(f"{owner}: the LSH arrays hold NaN or infinite values")
        if p["random_offset"] and (np.any(b < 0) or np.any(b >= w)):
            raise FormatError(f"{owner}: the 'lsh_b' offsets must lie in [0, w = {w!r})")
        if not p["random_offset"] and np.any(b != 0):
            raise FormatError(f"{owner}: the 'lsh_b' offsets must be 0 (the alignable family has none)")
        box = [arrays.get(n) for n in ("lsh_lower", "lsh_upper", "lsh_offset")]
        if p["offset_given"] and not p["fitted"]:
            raise FormatError(f"{owner}: 'offset_given' without 'fitted' (a given shift fixes the domain)")
        if not p["fitted"]:
            if any(v is not None for v in box):
                raise FormatError(f"{owner}: domain arrays in a file whose 'fitted' is false")
        elif any(v is None or v.dtype != np.float64 or v.shape != (dim,) or not np.isfinite(v).all() for v in box):
            raise FormatError(f"{owner}: 'lsh_lower', 'lsh_upper' and 'lsh_offset' must be finite float64 "
                              f"vectors of length dim = {dim}")
        obj = cls.__new__(cls)
        obj.owner, obj.dim, obj.w, obj.num_functions, obj.seed = owner, dim, w, nf, seed
        obj.domain_margin, obj.random_offset = p["domain_margin"], p["random_offset"]
        obj.a, obj.b = a, b
        obj._unfit()
        obj._given_offset = None
        if p["fitted"]:
            lo, hi, off = box
            assert lo is not None and hi is not None and off is not None
            if np.any(hi < lo):
                raise FormatError(f"{owner}: the domain has lower > upper")
            if not _bucket_bound(a, lo, hi, off, w) <= _MAX_ABS_BUCKET * (1 + 1e-12):
                raise FormatError(f"{owner}: buckets of the domain exceed 2^52 (w too small for the box)")
            if p["offset_given"]:
                obj._given_offset = off
            obj._kargs = obj._kernel_args(off)
            obj.lower, obj.upper, obj.offset = lo, hi, off
        return obj
