"""bloomkit: Bloom filters that go beyond "is x in the set".

Public names live here; submodules ``ranges``, ``lookup``, ``similarity``, ``folding`` and
``multiattr`` hold the structures of the five source documents.
"""

from __future__ import annotations

from typing import Any

from ._boundary import hash_path
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


def info() -> dict[str, Any]:
    """The running bloomkit: version, which path single keys and Python lists take
    (``"hash_path"``: ``"c-extension"``, or ``"numba (...)"`` with the reason: not built, or
    ``BLOOMKIT_NO_EXTENSION=1``) and the default number of threads of batch operations.

    >>> sorted(info())
    ['extension', 'hash_path', 'num_threads', 'version']
    """
    path = hash_path()
    return {"version": __version__, "hash_path": path, "extension": path == "c-extension",
            "num_threads": get_num_threads()}


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
    "info",
    "load",
    "loads",
    "set_num_threads",
]
