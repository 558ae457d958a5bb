"""``bloomkit serve``: the matching service of document 000 (issue 16).

Users publish their attributes (texts, numbers, numeric ranges) as profiles; a caller reaches
every profile matching a multi-attribute query without knowing ids (the MFPGC platform of the
report). The pieces:

* :mod:`.service` — :class:`MatchingService`: SQLite (WAL) as the system of record, a
  :class:`~bloomkit.ranges.ProfileIndex` configured by the two-phase optimizer and rebuilt at
  start (or loaded from a checked snapshot), group commit of writes;
* :mod:`.app` — the HTTP API (FastAPI) and the web page (``static/``), behind
  :mod:`.front` — the body limit and the lean path of ``POST /search`` / ``POST /profiles``;
* :mod:`.db` — the database; :mod:`.records` — validation of records and queries;
* :mod:`.demo` — Table 1 profiles for ``--demo``; :mod:`.cli` — the command.

Needs the optional extra ``serve`` (FastAPI, uvicorn) for the HTTP part: ``pip install
'bloomkit[serve]'``. :mod:`.service` itself needs only bloomkit.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MatchingService", "SearchResult", "WriteError"]


def __getattr__(name: str) -> Any:  # lazy: `bloomkit serve --help` loads argparse code only
    if name in __all__:
        from . import service

        return getattr(service, name)
    raise AttributeError(f"module 'bloomkit.serve' has no attribute {name!r}")
