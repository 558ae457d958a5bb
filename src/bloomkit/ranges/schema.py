"""Attribute schema of a multi-attribute record (document 000, Section II).

An attribute is Text, Integer(lo, hi) or Decimal(lo, hi, places). Decimal values are scaled to
integers with the given precision ("Latitude 23.2621448 can be represented by 232621 with
accuracy to the four decimal places", Section II). A record gives each attribute a value: a
text, a number, or an inclusive numeric range (a ``(lo, hi)`` pair or a Python ``range`` with
step 1). Inserted keys are the strings ``"name:value"`` (Section II: "inserting Latitude
23.0000 is to set array positions h_i("Latitude:230000")"); for numeric attributes ``value``
is the scaled integer of the first number of the group (Figure 2: "Ages 0-4 are all
represented by Age 0").
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal as _PyDecimal
from decimal import InvalidOperation
from typing import Any

import numpy as np

from .._validation import check_int, param_error
from ..errors import InvalidParameterError

__all__ = ["Attribute", "Decimal", "Integer", "Schema", "Text"]


def _check_name(name: Any, owner: str) -> str:
    if not isinstance(name, str) or not name or ":" in name:
        raise param_error("name", owner, "a non-empty str without ':'", name)
    return name


@dataclass(frozen=True)
class Attribute:
    """Base class of the three attribute types; use :class:`Text`, :class:`Integer`, :class:`Decimal`."""

    name: str

    @property
    def is_numeric(self) -> bool:
        return False

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class Text(Attribute):
    """An atomic text attribute (n = 1 in Section IV). Values are non-empty-or-empty ``str``."""

    def __post_init__(self) -> None:
        _check_name(self.name, "Text")

    def check_text(self, value: Any) -> str:
        """Return ``value`` if it is a ``str`` (InvalidParameterError otherwise)."""
        if not isinstance(value, str):
            raise param_error(self.name, "the record", "a str (Text attribute)", value)
        return value

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "name": self.name}


@dataclass(frozen=True)
class _Numeric(Attribute):
    lo: int | float
    hi: int | float

    @property
    def is_numeric(self) -> bool:
        return True

    @property
    def scaled_lo(self) -> int:
        raise NotImplementedError

    @property
    def scaled_hi(self) -> int:
        raise NotImplementedError

    @property
    def scope_size(self) -> int:
        """R in the report: the number of distinct (scaled) values of the attribute."""
        return self.scaled_hi - self.scaled_lo + 1

    def scale(self, value: Any) -> int:
        raise NotImplementedError

    def unscale(self, value: int) -> int | float:
        return value

    def to_interval(self, value: Any) -> tuple[int, int]:
        """Inclusive scaled interval ``(a, b)`` of a number, a ``(lo, hi)`` pair or a ``range``.

        Raises InvalidParameterError for wrong types, reversed or empty ranges and values outside
        the attribute's scope.

        Complexity: O(1).
        """
        if isinstance(value, range):
            if value.step != 1:
                raise param_error(self.name, "the record", "a range with step 1", value)
            if len(value) == 0:
                raise param_error(self.name, "the record", "a non-empty range", value)
            a, b = self.scale(value.start), self.scale(value.stop - 1)
        elif isinstance(value, tuple | list):
            if len(value) != 2:
                raise param_error(self.name, "the record", "a number or an inclusive (lo, hi) pair", value)
            a, b = self.scale(value[0]), self.scale(value[1])
            if a > b:
                raise param_error(self.name, "the record", "a range with lo <= hi (not reversed)", value)
        else:
            a = b = self.scale(value)
        lo, hi = self.scaled_lo, self.scaled_hi
        if a < lo or b > hi:
            raise param_error(
                self.name, "the record", f"within the scope [{self.lo}, {self.hi}]", value
            )
        return a, b


@dataclass(frozen=True)
class Integer(_Numeric):
    """An integer attribute with scope ``[lo, hi]`` (R = hi - lo + 1)."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        _check_name(self.name, "Integer")
        lo = check_int(self.lo, "lo", "Integer")
        hi = check_int(self.hi, "hi", "Integer", lo=lo)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def scaled_lo(self) -> int:
        return int(self.lo)

    @property
    def scaled_hi(self) -> int:
        return int(self.hi)

    def scale(self, value: Any) -> int:
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
            raise param_error(self.name, "the record", "an integer (Integer attribute)", value)
        return int(value)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "integer", "name": self.name, "lo": self.lo, "hi": self.hi}


@dataclass(frozen=True)
class Decimal(_Numeric):
    """A decimal attribute with scope ``[lo, hi]`` stored as integers at ``places`` decimals.

    ``Decimal("Latitude", -90, 90, 4)`` maps 25.0999 to 250999 (R = 1,800,001).
    """

    lo: float
    hi: float
    places: int = 0

    def __post_init__(self) -> None:
        _check_name(self.name, "Decimal")
        places = check_int(self.places, "places", "Decimal", lo=0, hi=12)
        object.__setattr__(self, "places", places)
        for attr in ("lo", "hi"):
            v = getattr(self, attr)
            if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
                raise param_error(attr, "Decimal", "a finite number", v)
        if self._scale_raw(self.lo, "lo") > self._scale_raw(self.hi, "hi"):
            raise param_error("hi", "Decimal", f">= lo ({self.lo})", self.hi)

    def _scale_raw(self, value: Any, what: str) -> int:
        if isinstance(value, bool | np.bool_):
            raise param_error(what, self.name, "a finite number (Decimal attribute)", value)
        if isinstance(value, numbers.Integral):
            scaled: int = int(value) * 10**self.places  # int ** int is Any to typeshed
            return scaled
        if isinstance(value, _PyDecimal):
            if not value.is_finite():
                raise param_error(what, self.name, "a finite number (Decimal attribute)", value)
            try:
                return int((value.scaleb(self.places)).to_integral_value())
            except InvalidOperation:  # pragma: no cover - defensive
                raise param_error(what, self.name, "a finite number", value) from None
        if isinstance(value, numbers.Real):
            f = float(value)
            if not math.isfinite(f):
                raise param_error(what, self.name, "a finite number (not NaN or inf)", value)
            # round half away from zero on the decimal representation (25.0999 -> 250999)
            return int(_PyDecimal(repr(f)).scaleb(self.places).to_integral_value(rounding="ROUND_HALF_UP"))
        raise param_error(what, self.name, "a finite number (Decimal attribute)", value)

    @property
    def scaled_lo(self) -> int:
        return self._scale_raw(self.lo, "lo")

    @property
    def scaled_hi(self) -> int:
        return self._scale_raw(self.hi, "hi")

    def scale(self, value: Any) -> int:
        return self._scale_raw(value, "value")

    def unscale(self, value: int) -> float:
        out: float = value / 10**self.places
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "decimal", "name": self.name, "lo": self.lo, "hi": self.hi, "places": self.places}


class Schema:
    """An ordered set of attributes with unique names.

    Parameters
    ----------
    attributes : iterable of Attribute
        E.g. ``[Text("First Name"), Integer("Age", 1, 120), Decimal("Latitude", -90, 90, 4)]``.
    """

    def __init__(self, attributes: Iterable[Attribute]) -> None:
        attrs = list(attributes) if not isinstance(attributes, str | bytes) else None
        if not attrs or not all(isinstance(a, Attribute) for a in attrs):
            raise param_error("attributes", "Schema", "a non-empty list of Text/Integer/Decimal", attributes)
        names = [a.name for a in attrs]
        if len(set(names)) != len(names):
            raise param_error("attributes", "Schema", "attributes with unique names", names)
        self._attrs: tuple[Attribute, ...] = tuple(attrs)
        self._by_name = {a.name: a for a in attrs}

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        return self._attrs

    @property
    def names(self) -> list[str]:
        return [a.name for a in self._attrs]

    def __len__(self) -> int:
        return len(self._attrs)

    def __iter__(self) -> Any:
        return iter(self._attrs)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> Attribute:
        """The attribute called ``name`` (InvalidParameterError if unknown)."""
        try:
            return self._by_name[name]
        except (KeyError, TypeError):
            raise InvalidParameterError(
                f"The 'attribute' parameter must be one of the schema's attributes "
                f"({', '.join(map(repr, self._by_name))}). Got {name!r} instead."
            ) from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self._attrs == other._attrs

    def __hash__(self) -> int:
        return hash(self._attrs)

    def __repr__(self) -> str:
        return f"Schema({list(self._attrs)!r})"

    def check_record(self, record: Any) -> dict[str, Any]:
        """Validate a record (a mapping name -> value); unknown names raise InvalidParameterError."""
        if not isinstance(record, Mapping):
            raise param_error("record", "RangeBloomFilter", "a mapping of attribute name -> value", record)
        for name in record:
            self[name]  # raises for unknown attributes
        return dict(record)

    def to_list(self) -> list[dict[str, Any]]:
        return [a.to_dict() for a in self._attrs]

    @classmethod
    def from_list(cls, items: Any) -> Schema:
        """Inverse of :meth:`to_list` (InvalidParameterError on malformed input)."""
        if not isinstance(items, list):
            raise InvalidParameterError(f"schema description must be a list. Got {items!r} instead.")
        attrs: list[Attribute] = []
        for it in items:
            if not isinstance(it, dict):
                raise InvalidParameterError(f"attribute description must be a dict. Got {it!r} instead.")
            spec: Any = it  # JSON: the attribute constructors validate each field (missing ones too)
            kind = spec.get("type")
            if kind == "text":
                attrs.append(Text(spec.get("name")))
            elif kind == "integer":
                attrs.append(Integer(spec.get("name"), spec.get("lo"), spec.get("hi")))
            elif kind == "decimal":
                attrs.append(Decimal(spec.get("name"), spec.get("lo"), spec.get("hi"), spec.get("places")))
            else:
                raise InvalidParameterError(f"unknown attribute type {kind!r}")
        return cls(attrs)
