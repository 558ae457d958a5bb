"""bloomkit: Bloom filters that go beyond "is x in the set".

Public names live here; submodules ``ranges``, ``lookup``, ``similarity``, ``folding`` and
``multiattr`` hold the structures of the five source documents.
"""

from __future__ import annotations

from ._format import load, loads
from ._parallel import get_num_threads, set_num_threads
from .bloom import BloomFilter, CountingBloomFilter
from .errors import (
    BloomkitError,
    FormatError,
    IncompatibleFiltersError,
    InvalidParameterError,
    UpdateNotSupportedError,
)
from .scalable import ScalableBloomFilter
from .splitblock import SplitBlockBloomFilter

__version__ = "0.1.0"

__all__ = [
    "BloomFilter",
    "BloomkitError",
    "CountingBloomFilter",
    "FormatError",
    "IncompatibleFiltersError",
    "InvalidParameterError",
    "ScalableBloomFilter",
    "SplitBlockBloomFilter",
    "UpdateNotSupportedError",
    "__version__",
    "get_num_threads",
    "load",
    "loads",
    "set_num_threads",
]
