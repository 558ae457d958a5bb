"""The read-only mapping protocol shared by the lookup tables (Geometric and Bloomier).

Each table defines ``get(key, default)`` and keeps its key count in ``_count``; ``[]``, ``in``
and ``len`` follow from those, the same way for both.
"""

from __future__ import annotations

from typing import Any


class LookupMapping:
    """``[]`` / ``in`` / ``len`` over ``get`` (value 0 means "found absent")."""

    _count: int

    def get(self, key: Any, default: int = 0) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def __getitem__(self, key: Any) -> int:
        """Value of ``key``; KeyError when it is found absent. Complexity: as :meth:`get`."""
        v = self.get(key, 0)
        if v == 0:
            raise KeyError(key)
        return v

    def __contains__(self, key: Any) -> bool:
        """True when ``key`` gets a non-zero value (false positives at the table's rate)."""
        return self.get(key, 0) != 0

    def __len__(self) -> int:
        """Number of keys stored."""
        return self._count
