"""The search modes of a profile index, spelled once: :class:`bloomkit.ranges.ProfileIndex`
validates with them, the CLI offers them, the service's API and page accept them.

``"subset"`` (the report's test): a profile matches when its filter holds every query value
and range (document 000, Section V); ``"intersect"``: every query range overlaps the profile's.
This module imports nothing (the CLI's parser and the service read it without numpy).

>>> SEARCH_MODES
('subset', 'intersect')
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["DEFAULT_MODE", "SEARCH_MODES", "SearchMode"]

SearchMode = Literal["subset", "intersect"]
SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)
DEFAULT_MODE: SearchMode = "subset"
