"""Schema files: a schema, m and the typical inserted range sizes in one JSON document.

The file of ``bloomkit serve --schema`` (issue 16) and of anything else that sizes a ranges
structure from a description a person writes::

    {"num_bits": 512,
     "attributes": [
        {"name": "Name", "type": "text"},
        {"name": "Age", "type": "integer", "min": 1, "max": 120, "typical_range": 10},
        {"name": "Latitude", "type": "decimal", "min": -90, "max": 90, "places": 4,
         "typical_range": 1000}]}

``num_bits`` is m (default 512, the report's Section V); ``min`` / ``max`` the scope of a
numeric attribute (R = max - min + 1 scaled values), ``places`` the decimals of a decimal one;
``typical_range`` is n_i of Section IV, the typical number of (scaled) values of a published
range (default 1: points; 1000 at four places is 0.1 degree). :meth:`SchemaFile.design` runs
the two-phase optimizer (Figures 6-7) on it. Every key is checked: an unknown key, a missing
one, a wrong type or a value out of its limits raises InvalidParameterError naming the field
(``attributes[2].max``), so a command can print one line and exit.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validation import Int, check_path, param_error
from ..errors import InvalidParameterError
from .config import MAX_DESIGN_BITS, Design, design
from .schema import Attribute, Decimal, Integer, Numeric, Schema, Text

__all__ = ["MAX_SCHEMA_FILE_BYTES", "SchemaFile", "schema_from_file", "schema_from_json"]

MAX_SCHEMA_FILE_BYTES = 1 << 20
"""Largest schema file :func:`schema_from_file` reads."""
_NUM_BITS = Int(2, MAX_DESIGN_BITS)
_TOP = {"num_bits", "attributes"}
_KEYS = {"text": ({"name", "type"}, set()),
         "integer": ({"name", "type", "min", "max"}, {"typical_range"}),
         "decimal": ({"name", "type", "min", "max", "places"}, {"typical_range"})}
_OWNER = "the schema file"


@dataclass(frozen=True)
class SchemaFile:
    """What a schema file says: the schema, m and the typical range size n_i of each numeric
    attribute (in scaled units)."""

    schema: Schema
    num_bits: int
    range_sizes: dict[str, int]

    def design(self) -> Design:
        """The two-phase optimizer's choice of k and (d, s) per attribute for this file
        (:func:`~bloomkit.ranges.design` with ``num_bits``).

        Complexity: one optimizer run."""
        return design(self.schema, self.range_sizes, num_bits=self.num_bits)

    def to_json(self) -> dict[str, Any]:
        """The file's JSON form (:func:`schema_from_json` reads it back). Complexity: O(attributes)."""
        items: list[dict[str, Any]] = []
        for a in self.schema:
            it: dict[str, Any] = {"name": a.name, "type": a.to_dict()["type"]}
            if isinstance(a, Numeric):
                it.update({"min": a.lo, "max": a.hi})
                if isinstance(a, Decimal):
                    it["places"] = a.places
                it["typical_range"] = self.range_sizes.get(a.name, 1)
            items.append(it)
        return {"num_bits": self.num_bits, "attributes": items}


def _attribute(it: Any, where: str) -> tuple[Attribute, int | None]:
    if not isinstance(it, dict):
        raise param_error(where, _OWNER, "an attribute description (an object)", it)
    kind = it.get("type")
    if not isinstance(kind, str) or kind not in _KEYS:
        raise param_error(f"{where}.type", _OWNER, "one of 'text', 'integer', 'decimal'", kind)
    required, optional = _KEYS[kind]
    for key in it:
        if key not in required | optional:
            raise param_error(where, _OWNER, f"a {kind} attribute with the keys {', '.join(sorted(required | optional))}",
                              f"the unknown key {key!r}")
    missing = sorted(required - set(it))
    if missing:
        raise param_error(f"{where}.{missing[0]}", _OWNER, f"given (a {kind} attribute needs it)", None)
    try:
        if kind == "text":
            return Text(it["name"]), None
        attr: Numeric
        if kind == "integer":
            attr = Integer(it["name"], it["min"], it["max"])
        else:
            attr = Decimal(it["name"], it["min"], it["max"], it["places"])
    except InvalidParameterError as e:
        msg = str(e).replace("'lo' parameter", "'min' parameter").replace("'hi' parameter", "'max' parameter")
        raise InvalidParameterError(f"{where} of {_OWNER}: {msg}") from None
    n = it.get("typical_range", 1)
    if attr.scope_size >= 2:
        n = Int(1, attr.scope_size - 1)(n, f"{where}.typical_range", _OWNER)
    elif n != 1:
        raise param_error(f"{where}.typical_range", _OWNER, "1 (the scope has one value)", n)
    return attr, n


def schema_from_json(data: Any) -> SchemaFile:
    """A :class:`SchemaFile` from the parsed JSON of a schema file (see the module docstring).

    Raises InvalidParameterError naming the field for anything wrong.

    Examples
    --------
    >>> f = schema_from_json({"attributes": [{"name": "Age", "type": "integer", "min": 1,
    ...                                       "max": 120, "typical_range": 10}]})
    >>> f.num_bits, f.range_sizes
    (512, {'Age': 10})

    Complexity: O(attributes).
    """
    if not isinstance(data, dict):
        raise param_error("schema", _OWNER, "an object with 'attributes' (and optionally 'num_bits')", data)
    for key in data:
        if key not in _TOP:
            raise param_error("schema", _OWNER, "an object with the keys 'num_bits' and 'attributes'",
                              f"the unknown key {key!r}")
    m = _NUM_BITS(data.get("num_bits", 512), "num_bits", _OWNER)
    items = data.get("attributes")
    if not isinstance(items, list) or not items:
        raise param_error("attributes", _OWNER, "a non-empty list of attribute descriptions", items)
    attrs: list[Attribute] = []
    sizes: dict[str, int] = {}
    for i, it in enumerate(items):
        attr, n = _attribute(it, f"attributes[{i}]")
        attrs.append(attr)
        if n is not None:
            sizes[attr.name] = n
    try:
        schema = Schema(attrs)
    except InvalidParameterError as e:
        raise InvalidParameterError(f"attributes of {_OWNER}: {e}") from None
    return SchemaFile(schema, m, sizes)


def schema_from_file(path: str | os.PathLike[str]) -> SchemaFile:
    """Read a schema file (JSON, at most :data:`MAX_SCHEMA_FILE_BYTES`).

    Raises InvalidParameterError (with the path) for a file that is not JSON or not a valid
    schema, OSError if it cannot be read.

    Complexity: O(file size).
    """
    p = Path(check_path(path, "path", "schema_from_file"))
    with p.open("rb") as fh:
        raw = fh.read(MAX_SCHEMA_FILE_BYTES + 1)
    if len(raw) > MAX_SCHEMA_FILE_BYTES:
        raise InvalidParameterError(f"schema file {str(p)!r} is larger than {MAX_SCHEMA_FILE_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidParameterError(f"schema file {str(p)!r} is not valid JSON: {e}") from None
    except RecursionError:
        raise InvalidParameterError(f"schema file {str(p)!r} is nested too deeply") from None
    try:
        return schema_from_json(data)
    except InvalidParameterError as e:
        raise InvalidParameterError(f"schema file {str(p)!r}: {e}") from None
