"""bloomkit: Bloom filters that go beyond "is x in the set".

Public names live here; submodules ``ranges``, ``lookup``, ``similarity``, ``folding`` and
``multiattr`` hold the structures of the five source documents.

``import bloomkit`` imports only this module and :mod:`bloomkit.errors`: each public name is
imported on first use (PEP 562), so a script or command that needs one filter does not pay for
numpy, numba, scipy or pyarrow before it uses them. ``from bloomkit import BloomFilter`` and
``bloomkit.BloomFilter`` work as usual.
"""

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from . import _registry
from .errors import (
    BloomkitError,
    BloomkitWarning,
    FormatError,
    IncompatibleFiltersError,
    InvalidParameterError,
    UpdateNotSupportedError,
)

__version__ = "0.1.0"

# public name -> the module that defines it (imported on first access): the registry's
# "top-level" structures, and these functions
_LAZY = {
    **{e.name: e.module for e in _registry.with_capability("top-level")},
    "load": "_format",
    "loads": "_format",
    "open": "_mapped",
    "verify": "_mapped",
    "get_num_threads": "_engine.parallel",
    "set_num_threads": "_engine.parallel",
}

if _TYPE_CHECKING:  # type checkers and IDEs see the names themselves
    from ._engine.parallel import get_num_threads, set_num_threads
    from ._format import load, loads
    from ._mapped import open, verify  # noqa: A004
    from .bloom import BloomFilter, CountingBloomFilter
    from .scalable import ScalableBloomFilter
    from .splitblock import SplitBlockBloomFilter


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bloomkit' has no attribute {name!r}")
    value = getattr(_import_module(module if module.startswith("bloomkit.") else f".{module}", __name__), name)
    globals()[name] = value  # later accesses are plain lookups
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def info() -> dict[str, _Any]:
    """The running bloomkit: version, which path single keys and Python lists take
    (``"hash_path"``: ``"c-extension"``, or ``"numba (...)"`` with the reason: not built, or
    ``BLOOMKIT_NO_EXTENSION=1``) and the default number of threads of batch operations.

    >>> sorted(info())
    ['extension', 'hash_path', 'num_threads', 'version']
    """
    from ._engine.boundary import hash_path
    from ._engine.parallel import get_num_threads

    path = hash_path()
    return {"version": __version__, "hash_path": path, "extension": path == "c-extension",
            "num_threads": get_num_threads()}


__all__ = [
    "BloomFilter",
    "BloomkitError",
    "BloomkitWarning",
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
    "open",
    "set_num_threads",
    "verify",
]
