"""Multi-attribute items: parallel Bloom filters with a verification table (document 004).

:class:`ParallelBloomFilter` stores items of p attributes in p*q arrays of m counters plus an
exact multiset of verification values; :mod:`bloomkit.multiattr.model` holds the analytic model,
Theorems 1-2 and the sizing rule; :class:`ConcatenatedBloomFilter` is the document's SBF
baseline; :mod:`bloomkit.multiattr.batches` states what a batch of items may be.
"""

from __future__ import annotations

from . import model
from .baselines import ConcatenatedBloomFilter, concat_keys
from .batches import as_columns
from .hashing import HASH_MD5
from .pbf import ParallelBloomFilter
from .table import VerificationTable

__all__ = [
    "HASH_MD5",
    "ConcatenatedBloomFilter",
    "ParallelBloomFilter",
    "VerificationTable",
    "as_columns",
    "concat_keys",
    "model",
]
