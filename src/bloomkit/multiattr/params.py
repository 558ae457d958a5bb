"""The parameter constraints of :class:`~bloomkit.multiattr.ParallelBloomFilter`: its
``__init__`` and the loader check with the same objects (:mod:`bloomkit._validation`)."""

from __future__ import annotations

from .._validation import KEY_TYPES, Int, ListOf, Optional, Options, Str
from . import model
from .hashing import HASHES

__all__ = [
    "ATTRIBUTES", "ATTRIBUTE_KEY_TYPES", "COUNTER_BITS", "HASH", "MAX_TOTAL_COUNTERS", "NUM_ATTRIBUTES",
    "NUM_COUNTERS", "PBF_NUM_HASHES", "STATE", "VERIFICATION",
]

NUM_ATTRIBUTES = Int(1, 64)
"""p, attributes per item."""
PBF_NUM_HASHES = Int(1, 62)
"""q, hash functions (arrays) per attribute (V_a of the attenuated method needs 2^q < 2^62)."""
NUM_COUNTERS = Int(1, 1 << 32)
"""m, counters per array."""
MAX_TOTAL_COUNTERS = 1 << 40
"""Largest p*q*m."""
COUNTER_BITS = Options(4, 8, 16, 32)
VERIFICATION = Options(*model.VERIFICATIONS)
HASH = Options(*HASHES)
ATTRIBUTES = Optional(ListOf(Str(1, 256), 1, 64, unique=True))
"""Optional attribute names (tables are read by these names)."""
ATTRIBUTE_KEY_TYPES = ListOf(KEY_TYPES, 1, 64)
"""The saved key types: one list per attribute."""
STATE = Options("exact", "upper", "union")
"""Counter states: "exact" (only adds / removes), "upper" (after an intersection: counters are
upper bounds of the stored items' counts, removal stays safe), "union" (after a union: counters
are maxima, a removal could zero a counter another item needs, so it is refused)."""
