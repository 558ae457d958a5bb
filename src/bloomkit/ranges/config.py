"""Configuration of the ranges structures: k and, per attribute, (d, s) (document 000).

:class:`RangeConfig` is what the constructors take and what files hold (strictly validated by
:meth:`RangeConfig.from_dict`, the :data:`CONFIG` constraint); :func:`design` runs the
two-phase optimizer of Figures 6-7 (:func:`~bloomkit.ranges.optimize_multi`) for a schema,
typical inserted range sizes and a size (or a target rate): the job document 000 exists for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._validation import FPR, MAX_HASHES, NUM_HASHES, Check, Int, Optional, Str, param_error
from ..errors import InvalidParameterError
from .optimize import MultiResult, optimize_multi
from .schema import MAX_ATTRIBUTES, MAX_SCALED, Attribute, Numeric, Schema

__all__ = ["CONFIG", "MAX_DESIGN_BITS", "AttributeConfig", "Design", "RangeConfig", "design"]

_GROUP = Int(1, 2 * MAX_SCALED + 1)
_POSITIONS = Optional(Int(1, MAX_HASHES))
_OWN_K = Optional(NUM_HASHES)
_NAME = Str(1, 256)
MAX_DESIGN_BITS = 1 << 26
"""Largest m :func:`design` considers when sizing for a target rate."""


@dataclass(frozen=True)
class AttributeConfig:
    """Configuration of one attribute.

    Parameters
    ----------
    group_size : int
        d in the report (numeric attributes only), >= 1.
    positions : int, optional
        s in the report, positions generated per group, 1 <= s <= k (default k: no overlap).
    num_hashes : int, optional
        This attribute's own k (default: the filter's shared k).
    """

    group_size: int = 1
    positions: int | None = None
    num_hashes: int | None = None


class RangeConfig:
    """k and, per numeric attribute, (d, s): the configuration of a :class:`RangeBloomFilter`.

    Parameters
    ----------
    num_hashes : int
        k, the positions set per inserted key (shared by all attributes unless overridden),
        1 <= k <= 1024.
    attributes : mapping, optional
        ``name -> AttributeConfig | (d, s) | (d, s, k)``. Attributes not listed use d = 1,
        s = k (a traditional Bloom filter).

    Examples
    --------
    >>> cfg = RangeConfig(15, {"Age": (1, 6), "Income": (5, 1)})
    >>> cfg["Income"]
    AttributeConfig(group_size=5, positions=1, num_hashes=None)
    """

    def __init__(self, num_hashes: int, attributes: Mapping[str, Any] | None = None) -> None:
        owner = "RangeConfig"
        self.num_hashes = NUM_HASHES(num_hashes, "num_hashes", owner)
        attrs: dict[str, AttributeConfig] = {}
        if attributes is not None and (not isinstance(attributes, Mapping) or len(attributes) > MAX_ATTRIBUTES):
            raise param_error("attributes", owner, f"a mapping name -> (d, s) of at most {MAX_ATTRIBUTES} items", attributes)
        for name, value in (attributes or {}).items():
            _NAME(name, "attributes", owner)
            if value is None:
                continue
            if isinstance(value, AttributeConfig):
                ac = value
            elif isinstance(value, tuple | list) and len(value) in (2, 3):
                ac = AttributeConfig(*value)
            else:
                raise param_error(name, owner, "an AttributeConfig or a (d, s) / (d, s, k) tuple", value)
            d = _GROUP(ac.group_size, "group_size", owner)
            k = self.num_hashes if ac.num_hashes is None else NUM_HASHES(ac.num_hashes, "num_hashes", owner)
            s = _POSITIONS(ac.positions, "positions", owner)
            if s is not None and s > k:
                raise param_error("positions", owner, f"<= k ({k}) for {name!r}", s)
            attrs[name] = AttributeConfig(d, s, None if ac.num_hashes is None else k)
        self._attrs = attrs

    @classmethod
    def from_result(cls, result: MultiResult) -> RangeConfig:
        """Configuration of an :func:`~bloomkit.ranges.optimize_multi` result."""
        attrs = {}
        for a in result.attributes:
            per_k = a.k if a.k != result.k else None
            attrs[a.name] = AttributeConfig(1, None, per_k) if a.d is None else AttributeConfig(a.d, a.s, per_k)
        return cls(result.k, attrs)

    def __getitem__(self, name: str) -> AttributeConfig:
        return self._attrs.get(name, AttributeConfig())

    @property
    def names(self) -> list[str]:
        """The attributes configured explicitly."""
        return list(self._attrs)

    def resolve(self, attr: Attribute) -> tuple[int, int, int]:
        """(k, d, s) of an attribute (text: d = 1, s = k); InvalidParameterError if the
        configuration does not fit the attribute (grouping a text, d larger than the scope)."""
        ac = self[attr.name]
        k = self.num_hashes if ac.num_hashes is None else ac.num_hashes
        if not attr.is_numeric:
            if ac.group_size != 1 or (ac.positions is not None and ac.positions != k):
                raise InvalidParameterError(
                    f"The configuration of text attribute {attr.name!r} must not set group_size or "
                    f"positions. Got {ac} instead."
                )
            return k, 1, k
        s = k if ac.positions is None else ac.positions
        assert isinstance(attr, Numeric)
        if ac.group_size > attr.scope_size:
            raise param_error("group_size", "RangeConfig", f"<= the scope size {attr.scope_size} of {attr.name!r}",
                              ac.group_size)
        return k, ac.group_size, s

    def to_dict(self) -> dict[str, Any]:
        return {
            "num_hashes": self.num_hashes,
            "attributes": {n: [a.group_size, a.positions, a.num_hashes] for n, a in sorted(self._attrs.items())},
        }

    @classmethod
    def from_dict(cls, data: Any, name: str = "config", owner: str = "RangeConfig") -> RangeConfig:
        """Inverse of :meth:`to_dict`, strict: exactly the keys ``num_hashes`` and ``attributes``,
        each attribute ``[d, s or None, k or None]``; InvalidParameterError naming the field."""
        if not isinstance(data, dict) or set(data) != {"num_hashes", "attributes"}:
            raise param_error(name, owner, "a mapping with exactly the keys 'num_hashes' and 'attributes'", data)
        attrs = data["attributes"]
        if not isinstance(attrs, dict):
            raise param_error(f"{name}.attributes", owner, "a mapping name -> [d, s, k]", attrs)
        out: dict[str, AttributeConfig] = {}
        for n, v in attrs.items():
            if not (isinstance(v, list) and len(v) == 3):
                raise param_error(f"{name}.attributes[{n!r}]", owner, "a list [d, s or null, k or null]", v)
            out[n] = AttributeConfig(*v)
        try:
            return cls(data["num_hashes"], out)
        except InvalidParameterError as e:
            raise InvalidParameterError(f"{name} of {owner}: {e}") from None

    @classmethod
    def coerce(cls, value: Any, name: str = "config", owner: str = "RangeConfig") -> RangeConfig:
        """A RangeConfig as given, an int k (every attribute traditional), or the
        :meth:`to_dict` form (the :data:`CONFIG` constraint)."""
        if isinstance(value, RangeConfig):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return cls(value)
        if isinstance(value, dict):
            return cls.from_dict(value, name, owner)
        raise param_error(name, owner, "a RangeConfig, an int k or a configuration mapping", value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RangeConfig) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:  # immutable: equal configurations (equal to_dict) hash alike
        return hash((self.num_hashes, frozenset(self._attrs.items())))

    def __repr__(self) -> str:
        return f"RangeConfig({self.num_hashes}, {self._attrs!r})"


CONFIG = Check(RangeConfig.coerce, "a RangeConfig, an int k or a configuration mapping")
"""The constraint of a ``config`` parameter (constructors and loaders alike)."""


# ---------------------------------------------------------------------------------------------
# sizing: the two-phase optimizer for a schema


@dataclass(frozen=True)
class Design:
    """What :func:`design` chose: m, the configuration, and the optimizer's result (its
    ``total_fpr`` is f_T, the model's rate at the typical range sizes)."""

    num_bits: int
    config: RangeConfig
    result: MultiResult

    @property
    def predicted_fpr(self) -> float:
        """f_T of the chosen configuration (the sum of the attributes' rates, Section IV)."""
        return float(self.result.total_fpr)


def _attributes(schema: Schema, range_sizes: Any, owner: str) -> list[tuple[str, int | None, int]]:
    sizes = {} if range_sizes is None else range_sizes
    if not isinstance(sizes, Mapping):
        raise param_error("range_sizes", owner, "a mapping attribute name -> typical inserted range size n", sizes)
    for n in sizes:
        attr = schema[n]  # unknown names raise
        if not attr.is_numeric:
            raise param_error("range_sizes", owner, f"sizes of numeric attributes only ({n!r} is a text attribute)", sizes)
    out: list[tuple[str, int | None, int]] = []
    for attr in schema:
        if not isinstance(attr, Numeric) or attr.scope_size < 2:
            out.append((attr.name, None, 1))  # a text (or a one-value scope): n = 1, no range
            continue
        n = Int(1, attr.scope_size - 1)(sizes.get(attr.name, 1), f"range_sizes[{attr.name!r}]", owner)
        out.append((attr.name, attr.scope_size, n))
    return out


def design(
    schema: Schema,
    range_sizes: Mapping[str, int] | None = None,
    *,
    num_bits: int | None = None,
    fpr: float | None = None,
    per_attribute_k: bool = False,
    exact: bool = False,
) -> Design:
    """Configure a filter of ``schema`` with the two-phase optimizer (Figures 6-7, Section IV.2).

    Parameters
    ----------
    schema : Schema
    range_sizes : mapping name -> int, optional
        n_i, the typical number of values of an inserted range of each numeric attribute, in
        the attribute's scaled units (Table 1: Age 10, Latitude 100 at four places = 0.01
        degree). Numeric attributes not listed are points (n = 1); text attributes have n = 1.
    num_bits : int, optional
        m. Give exactly one of ``num_bits`` and ``fpr``.
    fpr : float in (0, 1), optional
        Target f_T: the smallest m (up to :data:`MAX_DESIGN_BITS`) whose optimized f_T is at
        most ``fpr`` (doubling, then bisection on m; f_T falls with m).
    per_attribute_k, exact :
        As for :func:`~bloomkit.ranges.optimize_multi` (which runs with ``accelerate=True``).

    Returns
    -------
    Design

    Examples
    --------
    >>> from bloomkit.ranges import Integer, Schema, Text
    >>> d = design(Schema([Text("Name"), Integer("Age", 1, 120)]), {"Age": 10}, num_bits=128)
    >>> d.config.num_hashes, d.config["Age"].group_size, round(d.predicted_fpr, 5)
    (14, 1, 0.00026)

    Complexity: one optimizer run (about 1-10 ms for 10 attributes) with ``num_bits``; about
    2 log2(m) runs with ``fpr``.
    """
    owner = "design"
    schema = Schema.coerce(schema, "schema", owner)
    attrs = _attributes(schema, range_sizes, owner)
    if (num_bits is None) == (fpr is None):
        raise InvalidParameterError(
            f"{owner} needs exactly one of num_bits and fpr. Got num_bits={num_bits!r}, fpr={fpr!r} instead.")

    def run(m: int) -> MultiResult:
        return optimize_multi(attrs, m, exact=exact, per_attribute_k=per_attribute_k, accelerate=True)

    if num_bits is not None:
        m = Int(2, MAX_DESIGN_BITS)(num_bits, "num_bits", owner)
        res = run(m)
    else:
        target = FPR(fpr, "fpr", owner)
        hi, res = 64, run(64)
        while res.total_fpr > target:
            if hi >= MAX_DESIGN_BITS:
                raise param_error("fpr", owner, f"reachable with at most {MAX_DESIGN_BITS} bits", fpr)
            hi = min(2 * hi, MAX_DESIGN_BITS)
            res = run(hi)
        lo = hi // 2  # f_T(lo) > target (or lo is below the first m tried)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            r_mid = run(mid)
            if r_mid.total_fpr <= target:
                hi, res = mid, r_mid
            else:
                lo = mid
        m = hi
    return Design(m, RangeConfig.from_result(res), res)
