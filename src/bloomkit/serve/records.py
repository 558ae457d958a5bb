"""Validation of the service's JSON input against the schema: records and queries.

A record (``POST /profiles``, ``PUT``) and a query (``POST /search``) are JSON objects
``{attribute: value}``: a text attribute takes a string, a numeric one a number (a point) or an
inclusive range ``[lo, hi]``. The canonical form (what the database stores and the index is
built from, at start-up as after each write) gives every numeric value as ``[lo, hi]`` in the
attribute's units, at its precision (a decimal rounded to its ``places``), so a rebuilt index
answers exactly as the live one did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParameterError
from ..ranges import Numeric, Schema, Text

__all__ = ["FieldError", "canonical_record"]


@dataclass
class FieldError(Exception):
    """One bad field: ``loc`` is its path in the request body (FastAPI's 422 ``detail`` form)."""

    loc: tuple[str | int, ...]
    msg: str

    def detail(self) -> list[dict[str, Any]]:
        return [{"loc": ["body", *self.loc], "msg": self.msg, "type": "value_error"}]


def canonical_record(schema: Schema, data: Any, field: str, *, allow_empty: bool = False) -> dict[str, Any]:
    """The canonical form of ``data`` (a record or a query), or FieldError naming the field:
    an unknown attribute, a value of the wrong type, outside the attribute's scope, or a
    reversed range.

    Complexity: O(attributes).
    """
    if not isinstance(data, dict):
        raise FieldError((field,), "must be an object {attribute: value}")
    if not data and not allow_empty:
        raise FieldError((field,), "must give at least one attribute")
    out: dict[str, Any] = {}
    for name, value in data.items():
        if name not in schema:
            raise FieldError((field, name), f"unknown attribute {name!r}; the schema has {', '.join(map(repr, schema.names))}")
        attr = schema[name]
        owner = f"the {field}"
        try:
            if isinstance(attr, Text):
                out[name] = attr.check_text(value, owner)
                continue
            assert isinstance(attr, Numeric)
            if isinstance(value, list) and len(value) == 2 and not all(isinstance(v, int | float) for v in value):
                raise InvalidParameterError(f"The {name!r} attribute of {owner} must be a number or a [lo, hi] "
                                            f"pair of numbers. Got {value!r} instead.")
            if not isinstance(value, int | float | list):
                raise InvalidParameterError(f"The {name!r} attribute of {owner} must be a number or a [lo, hi] "
                                            f"pair of numbers. Got {type(value).__name__} {value!r} instead.")
            a, b = attr.to_interval(value, owner)
        except InvalidParameterError as e:
            raise FieldError((field, name), str(e)) from None
        out[name] = [attr.unscale(a), attr.unscale(b)]
    return out
