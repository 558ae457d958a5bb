"""Attribute schema of a multi-attribute record (document 000, Section II).

An attribute is Text, Integer(lo, hi) or Decimal(lo, hi, places). Decimal values are scaled to
integers with the given precision ("Latitude 23.2621448 can be represented by 232621 with
accuracy to the four decimal places", Section II). A record gives each attribute a value: a
text, a number, or an inclusive numeric range (a ``(lo, hi)`` pair or a Python ``range`` with
step 1). Inserted keys are the strings ``"name:value"`` (Section II: "inserting Latitude
23.0000 is to set array positions h_i("Latitude:230000")"); for numeric attributes ``value``
is the scaled integer of the first number of the group (Figure 2: "Ages 0-4 are all
represented by Age 0").

Limits (the same for constructors and for files, :data:`SCHEMA`): at most
:data:`MAX_ATTRIBUTES` attributes, names of 1-256 characters without ``":"``, scaled scope
bounds within ``+-MAX_SCALED`` (2**52, so every key value of a range and its overlapping
neighbours fits 64 bits), at most 12 decimal places.

Columns (:meth:`Text.texts`, :meth:`Numeric.intervals`) are validated vectorised, with the
same answers and the same messages as the one-value methods (:meth:`Text.check_text`,
:meth:`Numeric.to_interval`), which the vectorised code falls back to for anything unusual.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sized
from dataclasses import dataclass
from decimal import Decimal as _PyDecimal
from decimal import InvalidOperation
from typing import Any

import numpy as np
import pyarrow as pa

from .._engine.columns import sized_items
from .._validation import Check, Int, Str, check_int, param_error, safe_repr
from ..errors import InvalidParameterError

__all__ = ["MAX_ATTRIBUTES", "MAX_SCALED", "SCHEMA", "Attribute", "Decimal", "Integer", "Numeric", "Schema", "Text"]

MAX_ATTRIBUTES = 1024
"""Most attributes a schema may have."""
MAX_SCALED = 1 << 52
"""Largest absolute scaled value of a numeric attribute's scope."""
MAX_PLACES = 12
_NAME = Str(1, 256)
_PLACES = Int(0, MAX_PLACES)
_BOUND = Int(-MAX_SCALED, MAX_SCALED)

Where = Callable[[int], str]
"""Position of a value in a batch -> the owner named in messages ("record 17 of ...")."""


def _check_name(name: Any, owner: str) -> str:
    out: str = _NAME(name, "name", owner)
    if ":" in out:
        raise param_error("name", owner, "a non-empty str without ':'", out)
    return out


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
    """An atomic text attribute (n = 1 in Section IV). Values are ``str`` (UTF-8 encodable)."""

    def __post_init__(self) -> None:
        _check_name(self.name, "Text")

    def check_text(self, value: Any, owner: str = "the record") -> str:
        """Return ``value`` if it is a ``str`` (InvalidParameterError otherwise). Complexity: O(len)."""
        if not isinstance(value, str):
            raise param_error(self.name, owner, "a str (Text attribute)", value)
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise param_error(self.name, owner, "a str encodable as UTF-8 (no lone surrogates)", value) from None
        return value

    def texts(self, column: Any, where: Where) -> pa.Array | list[str]:
        """A canonical batch of texts (list, numpy ``U``, arrow string) as an arrow string array
        (a list of str for short lists).

        Complexity: O(total length).
        """
        if isinstance(column, list):
            if len(column) <= 8:  # short lists (one record): checked one by one, kept as str
                return [self.check_text(v, where(i)) for i, v in enumerate(column)]
            try:
                if all(type(v) is str for v in column):
                    return pa.array(column, type=pa.string())
            except UnicodeEncodeError:
                pass
            for i, v in enumerate(column):  # raises with the position of the first bad value
                self.check_text(v, where(i))
            raise AssertionError("unreachable: a text column that fails as a whole has a bad value")
        if isinstance(column, np.ndarray) and column.dtype.kind == "U" and column.ndim == 1:
            return pa.array(column, type=pa.string())
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks() if column.num_chunks else pa.array([], pa.string())
        if isinstance(column, pa.Array) and (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            return column
        kind = getattr(column, "dtype", getattr(column, "type", type(column).__name__))
        raise param_error(self.name, where(0), f"a str (Text attribute); the column holds {kind}", _first(column))

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "name": self.name}


def _is_int(tp: type) -> bool:
    return issubclass(tp, numbers.Integral) and not issubclass(tp, bool | np.bool_)


def _is_real(tp: type) -> bool:
    return issubclass(tp, numbers.Real) and not issubclass(tp, bool | np.bool_)


@dataclass(frozen=True)
class Numeric(Attribute):
    """Base class of the numeric attributes (:class:`Integer`, :class:`Decimal`): a scope
    ``[lo, hi]`` of scaled integers, values given as numbers, ``(lo, hi)`` pairs or ranges."""

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

    def scale(self, value: Any, what: str = "value", owner: str | None = None) -> int:
        raise NotImplementedError

    def unscale(self, value: int) -> int | float:
        return value

    def _scale_array(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(scaled int64 values, ok mask) of a 1-D numeric array; entries not ok are scaled
        one by one with :meth:`scale` (which refuses what is wrong)."""
        raise NotImplementedError

    def to_interval(self, value: Any, owner: str = "the record") -> tuple[int, int]:
        """Inclusive scaled interval ``(a, b)`` of a number, a ``(lo, hi)`` pair or a ``range``.

        Raises InvalidParameterError for wrong types, reversed or empty ranges and values outside
        the attribute's scope.

        Complexity: O(1).
        """
        if isinstance(value, range):
            if value.step != 1:
                raise param_error(self.name, owner, "a range with step 1", value)
            if len(value) == 0:
                raise param_error(self.name, owner, "a non-empty range", value)
            a, b = self.scale(value.start, owner=owner), self.scale(value.stop - 1, owner=owner)
        elif isinstance(value, tuple | list) or (isinstance(value, np.ndarray) and value.ndim == 1):
            if len(value) != 2:
                raise param_error(self.name, owner, "a number or an inclusive (lo, hi) pair", value)
            a, b = self.scale(value[0], owner=owner), self.scale(value[1], owner=owner)
            if a > b:
                raise param_error(self.name, owner, "a range with lo <= hi (not reversed)", value)
        else:
            a = b = self.scale(value, owner=owner)
        if a < self.scaled_lo or b > self.scaled_hi:
            raise param_error(self.name, owner, f"within the scope [{self.lo}, {self.hi}]", value)
        return a, b

    def _scale_column(self, x: np.ndarray, where: Where, pairs: np.ndarray | None = None, side: int = 0) -> np.ndarray:
        """Scaled int64 of a 1-D array; values the vectorised path cannot take are redone one
        by one (raising for bad ones, naming the position)."""
        out, ok = self._scale_array(x)
        if not ok.all():
            for i in np.flatnonzero(~ok).tolist():
                if pairs is not None:
                    self.to_interval(tuple(pairs[i].tolist()), where(i))  # raises for a bad pair
                v = self.scale(x[i].item(), owner=where(i))
                out[i] = max(-2 * MAX_SCALED, min(2 * MAX_SCALED, v))  # out of scope: refused below
        return out

    def intervals(self, column: Any, where: Where) -> tuple[np.ndarray, np.ndarray]:
        """Scaled ``(a, b)`` int64 arrays of a column of values (numbers, ``(lo, hi)`` pairs or
        ranges): a canonical batch (list, numpy 1-D, or numpy (n, 2) pairs).

        The answers and errors are those of :meth:`to_interval` value by value.

        Complexity: O(n) vectorised for numeric arrays and homogeneous lists.
        """
        arr: np.ndarray | None = None
        if isinstance(column, np.ndarray) and column.dtype.kind in "iuf" and (
                column.ndim == 1 or (column.ndim == 2 and column.shape[1] == 2)):
            arr = column
        elif isinstance(column, list) and len(column) > 8:  # short lists: one by one below
            kinds = {type(v) for v in column}
            check = _is_int if isinstance(self, Integer) else _is_real
            try:
                if all(check(t) for t in kinds):
                    arr = np.array(column, dtype=np.int64 if all(_is_int(t) for t in kinds) else np.float64)
                elif kinds <= {tuple, list}:
                    arr = np.array(column)
                    if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iuf":
                        arr = None
            except (OverflowError, ValueError, TypeError):
                arr = None
        if arr is None:
            if isinstance(column, list | tuple):
                pairs = [self.to_interval(v, where(i)) for i, v in enumerate(column)]
                ab = np.array(pairs, dtype=np.int64).reshape(-1, 2)
                return ab[:, 0].copy(), ab[:, 1].copy()
            if _is_arrow(column):
                kind = column.type
            else:
                kind = getattr(column, "dtype", type(column).__name__)
            raise param_error(self.name, where(0), f"numbers or (lo, hi) pairs; the column holds {kind}", _first(column))
        if arr.ndim == 1:
            a = self._scale_column(arr, where)
            b = a
        else:
            a = self._scale_column(np.ascontiguousarray(arr[:, 0]), where, arr, 0)
            b = self._scale_column(np.ascontiguousarray(arr[:, 1]), where, arr, 1)
        self.check_intervals(a, b, lambda i: arr[i].tolist(), where)
        return a, b

    def bounds(self, lo: Any, hi: Any, where: Where) -> tuple[np.ndarray, np.ndarray]:
        """Scaled ``(a, b)`` of two columns of range ends (the ``Name.lo`` / ``Name.hi`` form).

        Complexity: O(n) vectorised for numeric arrays.
        """
        a, a2 = self.intervals(lo, where)
        b, b2 = self.intervals(hi, where)
        if not (np.array_equal(a, a2) and np.array_equal(b, b2)):
            raise param_error(self.name, where(0), "given by two columns of numbers (lo and hi), not of pairs",
                              "a column of pairs")
        self.check_intervals(a, b, lambda i: (_item(lo, i), _item(hi, i)), where)
        return a, b

    def check_intervals(self, a: np.ndarray, b: np.ndarray, value_of: Callable[[int], Any], where: Where) -> None:
        """Raise, as :meth:`to_interval` would, for the first reversed or out-of-scope interval."""
        bad = (a < self.scaled_lo) | (b > self.scaled_hi) | (a > b)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            v = value_of(i)
            self.to_interval(tuple(v) if isinstance(v, list) else v, where(i))
            raise param_error(self.name, where(i), f"a range within [{self.lo}, {self.hi}] with lo <= hi", v)


def _is_arrow(x: Any) -> bool:
    return isinstance(x, pa.Array | pa.ChunkedArray)


def _first(column: Any) -> Any:
    """The first value of a column, as Python (for messages)."""
    if not len(column):
        return None
    v = column[0]
    return v.as_py() if hasattr(v, "as_py") else v


def _item(column: Any, i: int) -> Any:
    v = column[i]
    return v.item() if isinstance(v, np.generic) else v


@dataclass(frozen=True)
class Integer(Numeric):
    """An integer attribute with scope ``[lo, hi]`` (R = hi - lo + 1), ``|lo|, |hi| <= 2**52``."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        _check_name(self.name, "Integer")
        lo = _BOUND(self.lo, "lo", "Integer")
        hi = check_int(self.hi, "hi", "Integer", lo=lo, hi=MAX_SCALED)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def scaled_lo(self) -> int:
        return int(self.lo)

    @property
    def scaled_hi(self) -> int:
        return int(self.hi)

    def scale(self, value: Any, what: str = "value", owner: str | None = None) -> int:
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
            raise param_error(self.name, owner or "the record", "an integer (Integer attribute)", value)
        return int(value)

    def _scale_array(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if x.dtype.kind in "iu":
            ok = (x <= MAX_SCALED) if x.dtype.kind == "u" else (np.abs(x) <= MAX_SCALED)
            return np.where(ok, x, 0).astype(np.int64), ok
        return np.zeros(x.shape, np.int64), np.zeros(x.shape, bool)  # floats: refused one by one

    def to_dict(self) -> dict[str, Any]:
        return {"type": "integer", "name": self.name, "lo": self.lo, "hi": self.hi}


@dataclass(frozen=True)
class Decimal(Numeric):
    """A decimal attribute with scope ``[lo, hi]`` stored as integers at ``places`` decimals.

    ``Decimal("Latitude", -90, 90, 4)`` maps 25.0999 to 250999 (R = 1,800,001). A float is
    scaled from its shortest decimal representation, rounding half away from zero.
    """

    lo: float
    hi: float
    places: int = 0

    def __post_init__(self) -> None:
        _check_name(self.name, "Decimal")
        object.__setattr__(self, "places", _PLACES(self.places, "places", "Decimal"))
        for attr in ("lo", "hi"):
            v = getattr(self, attr)
            if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real):
                raise param_error(attr, "Decimal", "a finite number", v)
            try:
                fv = float(v)
            except OverflowError:  # an int beyond the float range
                fv = math.inf
            if not math.isfinite(fv):
                raise param_error(attr, "Decimal", "a finite number", v)
            if abs(fv) * 10.0**self.places > MAX_SCALED:
                raise param_error(attr, "Decimal", f"a number with |{attr}| * 10**places <= 2**52", v)
        if self.scaled_lo > self.scaled_hi:
            raise param_error("hi", "Decimal", f">= lo ({self.lo})", self.hi)

    def scale(self, value: Any, what: str = "value", owner: str | None = None) -> int:
        where = owner or "the record"
        if isinstance(value, bool | np.bool_):
            raise param_error(self.name, where, "a finite number (Decimal attribute)", value)
        if isinstance(value, numbers.Integral):
            scaled: int = int(value) * 10**self.places  # int ** int is Any to typeshed
            return scaled
        if isinstance(value, _PyDecimal):
            if not value.is_finite():
                raise param_error(self.name, where, "a finite number (Decimal attribute)", value)
            try:
                return int((value.scaleb(self.places)).to_integral_value())
            except InvalidOperation:  # pragma: no cover - defensive
                raise param_error(self.name, where, "a finite number", value) from None
        if isinstance(value, numbers.Real):
            f = float(value)
            if not math.isfinite(f):
                raise param_error(self.name, where, "a finite number (not NaN or inf)", value)
            # round half away from zero on the decimal representation (25.0999 -> 250999)
            return int(_PyDecimal(repr(f)).scaleb(self.places).to_integral_value(rounding="ROUND_HALF_UP"))
        raise param_error(self.name, where, "a finite number (Decimal attribute)", value)

    def _scale_array(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = self.places
        if x.dtype.kind in "iu":
            lim = MAX_SCALED // 10**p
            ok = (x <= lim) if x.dtype.kind == "u" else (np.abs(x) <= lim)
            return np.where(ok, x, 0).astype(np.int64) * np.int64(10**p), ok
        if x.dtype.kind != "f":
            return np.zeros(x.shape, np.int64), np.zeros(x.shape, bool)
        with np.errstate(invalid="ignore", over="ignore"):
            y = x.astype(np.float64) * float(10**p)
            ay = np.abs(y)
            frac = ay - np.floor(ay)
            # |y - exact scaled decimal| <= ~1.5 ulp(y): values that far from a tie round the
            # same as the decimal method; ties, NaN / inf and huge values are redone one by one
            ok = np.isfinite(y) & (ay < MAX_SCALED) & (np.abs(frac - 0.5) > ay * 1e-15 + 1e-300)
            out = np.where(ok, np.copysign(np.floor(ay + 0.5), y), 0.0).astype(np.int64)
        return out, ok

    def scale_float(self, f: float) -> int | None:
        """:meth:`scale` of a float by the rule of the vectorised path (one multiplication by
        ``10**places``, rounded half away from zero), or None where that rule does not decide:
        NaN, inf, ``|f| * 10**places >= 2**52`` and values within ~1.5 ulp of a tie (then
        :meth:`scale` does, from the decimal representation). Complexity: O(1).

        >>> Decimal("Lat", -90, 90, 4).scale_float(25.0999)
        250999
        """
        y = f * float(10**self.places)
        ay = abs(y)
        if not ay < MAX_SCALED:  # also NaN and inf
            return None
        if not abs(ay - math.floor(ay) - 0.5) > ay * 1e-15 + 1e-300:  # the tie guard of _scale_array
            return None
        return int(math.copysign(math.floor(ay + 0.5), y))

    @functools.cached_property
    def scaled_lo(self) -> int:
        return self.scale(self.lo, "lo", "Decimal")

    @functools.cached_property
    def scaled_hi(self) -> int:
        return self.scale(self.hi, "hi", "Decimal")

    def unscale(self, value: int) -> float:
        out: float = value / 10**self.places
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "decimal", "name": self.name, "lo": self.lo, "hi": self.hi, "places": self.places}


_KEYS = {"text": ("type", "name"), "integer": ("type", "name", "lo", "hi"),
         "decimal": ("type", "name", "lo", "hi", "places")}


class Schema:
    """An ordered set of attributes with unique names.

    Parameters
    ----------
    attributes : iterable of Attribute
        E.g. ``[Text("First Name"), Integer("Age", 1, 120), Decimal("Latitude", -90, 90, 4)]``.
    """

    def __init__(self, attributes: Iterable[Attribute]) -> None:
        attrs: list[Attribute] | None = None
        if isinstance(attributes, list | tuple):
            attrs = list(attributes)
        elif not isinstance(attributes, str | bytes) and isinstance(attributes, Iterable) and isinstance(attributes, Sized):
            attrs = sized_items(attributes, "attributes", "Schema", "attributes")
        if not attrs or not all(isinstance(a, Attribute) for a in attrs) or len(attrs) > MAX_ATTRIBUTES:
            raise param_error("attributes", "Schema", f"a list of 1 to {MAX_ATTRIBUTES} Text/Integer/Decimal", attributes)
        names = [a.name for a in attrs]
        if len(set(names)) != len(names):
            raise param_error("attributes", "Schema", "attributes with unique names", names)
        self._attrs: tuple[Attribute, ...] = tuple(attrs)
        self._by_name = {a.name: a for a in attrs}
        self._pos = {a.name: i for i, a in enumerate(attrs)}

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        return self._attrs

    @property
    def names(self) -> list[str]:
        return [a.name for a in self._attrs]

    def index(self, name: str) -> int:
        """Position of the attribute called ``name`` in the schema."""
        return self._pos[self[name].name]

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
                f"({', '.join(map(repr, self._by_name))}). Got {safe_repr(name)} instead."
            ) from None

    def names_of(self, attributes: Any, name: str, owner: str) -> list[str]:
        """The schema names of ``attributes`` (a collection of attribute names), each checked."""
        if isinstance(attributes, str | bytes):
            raise param_error(name, owner, "a collection of attribute names (a list, not one str)", attributes)
        return [self[a].name for a in sized_items(attributes, name, owner, "attribute names")]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self._attrs == other._attrs

    def __hash__(self) -> int:
        return hash(self._attrs)

    def __repr__(self) -> str:
        return f"Schema({list(self._attrs)!r})"

    def check_record(self, record: Any, owner: str = "the record") -> dict[str, Any]:
        """Validate a record's shape (a mapping name -> value; unknown names raise
        InvalidParameterError naming ``owner``); the values are checked by the attributes."""
        if not isinstance(record, Mapping):
            raise param_error("record", owner, "a mapping of attribute name -> value", record)
        for name in record:
            if name not in self._by_name:
                raise InvalidParameterError(
                    f"The {_short(name)} attribute of {owner} is not in the schema "
                    f"({', '.join(map(repr, self._by_name))})."
                )
        return dict(record)

    def to_list(self) -> list[dict[str, Any]]:
        return [a.to_dict() for a in self._attrs]

    @classmethod
    def from_list(cls, items: Any, name: str = "schema", owner: str = "Schema") -> Schema:
        """Inverse of :meth:`to_list`, strict: every attribute description has exactly the keys
        of its type (``type``, ``name``, and ``lo``, ``hi`` / ``places``), of the right types
        and in the limits of the module docstring; InvalidParameterError naming the field."""
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_ATTRIBUTES:
            raise param_error(name, owner, f"a list of 1 to {MAX_ATTRIBUTES} attribute descriptions", items)
        attrs: list[Attribute] = []
        for i, it in enumerate(items):
            where = f"{name}[{i}]"
            if not isinstance(it, dict):
                raise param_error(where, owner, "an attribute description (a dict)", it)
            kind = it.get("type")
            keys = _KEYS.get(kind) if isinstance(kind, str) else None
            if keys is None:
                raise param_error(f"{where}.type", owner, "one of 'text', 'integer', 'decimal'", kind)
            if set(it) != set(keys):
                odd = sorted(set(it) ^ set(keys), key=str)[0]
                raise param_error(where, owner, f"a {kind} attribute with exactly the keys {', '.join(keys)}",
                                  f"a description {'with' if odd in it else 'without'} {odd!r}")
            try:
                if kind == "text":
                    attrs.append(Text(it["name"]))
                elif kind == "integer":
                    attrs.append(Integer(it["name"], it["lo"], it["hi"]))
                else:
                    attrs.append(Decimal(it["name"], it["lo"], it["hi"], it["places"]))
            except InvalidParameterError as e:
                raise InvalidParameterError(f"{where} of {owner}: {e}") from None
        try:
            return cls(attrs)
        except InvalidParameterError as e:
            raise InvalidParameterError(f"{name} of {owner}: {e}") from None

    @classmethod
    def coerce(cls, value: Any, name: str = "schema", owner: str = "Schema") -> Schema:
        """A Schema as given, or built from its :meth:`to_list` description (the :data:`SCHEMA`
        constraint of constructors and loaders)."""
        if isinstance(value, Schema):
            return value
        return cls.from_list(value, name, owner)


def _short(value: Any) -> str:
    r = repr(value)
    return r if len(r) <= 80 else r[:80] + "..."


SCHEMA = Check(Schema.coerce, "a Schema or a list of attribute descriptions")
"""The constraint of a ``schema`` parameter (constructors and loaders alike)."""
