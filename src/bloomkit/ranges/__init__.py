"""Grouping / overlapping Bloom filters for numeric ranges in multi-attribute records.

Document 000 (MFPGC report, NSC 97-2221-E-009-059): a numeric range is inserted by grouping
successive values (group size d) and/or overlapping the positions of successive values
(s of the k positions generated per key). The package holds the schema, the filter, the
analytic models (Eqs. 3-14, 36), the optimizers (Figures 5-7), the simulation program of
Section V and a bit-sliced index of many profile filters (the MFPGC use case).

Sizing: :func:`design` (or ``RangeBloomFilter.for_requirements`` /
``ProfileIndex.for_requirements``) runs the two-phase optimizer for a schema and the typical
inserted range sizes. Bulk input (records or tables by column name): :mod:`.records`. Schema
files (JSON: schema, m and typical range sizes; what ``bloomkit serve`` reads):
:func:`schema_from_file`.
"""

from __future__ import annotations

from . import model
from .config import AttributeConfig, Design, RangeConfig, design
from .filter import RangeBloomFilter
from .index import ProfileIndex
from .layout import Layout
from .optimize import (
    PHASE1_RULES,
    SCHEMES,
    AttributeChoice,
    MultiResult,
    SingleResult,
    optimize_multi,
    optimize_multi_grid,
    optimize_single,
    optimize_single_bruteforce,
    phase1_config,
    phase1_k_ini,
)
from .schema import Attribute, Decimal, Integer, Numeric, Schema, Text
from .schemafile import SchemaFile, schema_from_file, schema_from_json

__all__ = [
    "PHASE1_RULES",
    "SCHEMES",
    "Attribute",
    "AttributeChoice",
    "AttributeConfig",
    "Decimal",
    "Design",
    "Integer",
    "Layout",
    "MultiResult",
    "Numeric",
    "ProfileIndex",
    "RangeBloomFilter",
    "RangeConfig",
    "Schema",
    "SchemaFile",
    "SingleResult",
    "Text",
    "design",
    "model",
    "optimize_multi",
    "optimize_multi_grid",
    "optimize_single",
    "optimize_single_bruteforce",
    "phase1_config",
    "phase1_k_ini",
    "schema_from_file",
    "schema_from_json",
]
