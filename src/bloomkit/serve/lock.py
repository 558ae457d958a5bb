"""One writer per database: the exclusive locks a ``bloomkit serve`` holds for its life.

A server locks ``<database>.lock`` and ``<snapshot>.lock`` (beside the files, paths resolved:
a symlink or another spelling of the path is the same lock) with ``flock(LOCK_EX | LOCK_NB)``
before it opens anything, and writes who it is into them (pid, host, start time, URL). A
second server on the same database, or on another database with the same snapshot file, finds
a lock taken and stops at once with one line naming the holder; the first server is not
touched. The kernel drops a lock when its process ends, however it ends (kill -9 included), so
a lock file left behind never blocks a restart.

``flock`` locks are per open file description: two :class:`ServeLock` of one path in one
process exclude each other too (the tests use this). On a system without ``fcntl`` (Windows)
nothing is locked, and :attr:`ServeLock.enforced` is False.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import IO, Any

from ..errors import BloomkitError
from .db import DatabaseError, fs_problem

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["InUseError", "LockFileError", "ServeLock", "holder_info"]


class InUseError(BloomkitError):
    """The database or snapshot is locked by another server (``bloomkit serve`` exits 2)."""


class LockFileError(DatabaseError):
    """The lock file cannot be created (a read-only file system, no permission, ...)."""


def holder_info(url: str | None = None) -> dict[str, Any]:
    """Who holds a lock: this process's pid, host, start time and (optionally) its URL."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S"),
            "url": url}


def _describe(info: dict[str, Any] | None) -> str:
    if not info:
        return "another process (it has not written its details yet)"
    parts = [f"pid {info.get('pid')}"]
    if info.get("host"):
        parts.append(f"on {info['host']}")
    if info.get("since"):
        parts.append(f"since {info['since']}")
    if info.get("url"):
        parts.append(str(info["url"]))
    return "bloomkit serve (" + ", ".join(parts) + ")"


class ServeLock:
    """Exclusive locks on a database and its snapshot file, held until :meth:`release`.

    Parameters
    ----------
    database, snapshot : the files (they need not exist; the lock files are created beside them).
    info : what a refused server reports about this one (:func:`holder_info`).

    Raises
    ------
    InUseError
        One line: which file is held, by whom, and what to do.
    """

    def __init__(self, database: str | Path, snapshot: str | Path, info: dict[str, Any] | None = None) -> None:
        self.info = info or holder_info()
        self._files: list[IO[str]] = []
        self.enforced = fcntl is not None
        targets = [("database", Path(database)), ("snapshot", Path(snapshot))]
        try:
            for what, path in targets:
                self._take(what, path)
        except BaseException:
            self.release()
            raise

    @staticmethod
    def lock_path(path: Path) -> Path:
        """The lock file of ``path``: ``<resolved path>.lock``."""
        p = path.resolve()
        return p.with_name(p.name + ".lock")

    def _take(self, what: str, path: Path) -> None:
        lock = self.lock_path(path)
        try:
            fh = open(lock, "a+", encoding="utf-8")  # noqa: SIM115 - held open for the server's life
        except OSError as e:
            problem = fs_problem(path)
            why, todo = problem if problem is not None else (e.strerror or str(e), f"bloomkit serve writes beside the {what}")
            raise LockFileError(f"cannot create the lock file {str(lock)!r} of the {what} {str(path)!r}: {why}; "
                                f"{todo}") from None
        if fcntl is not None:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                fh.seek(0)
                try:
                    info = json.loads(fh.read() or "null")
                except ValueError:
                    info = None
                fh.close()
                raise InUseError(
                    f"the {what} {str(path)!r} is in use by {_describe(info)}: one server per database; stop "
                    f"that one first, or give this one another --db" + (" and --snapshot" if what == "snapshot" else "")
                    + f" (lock file {str(lock)!r})") from None
        self._files.append(fh)
        try:  # who holds it: informational (a full disk must not stop here, the database says why)
            fh.seek(0)
            fh.truncate()
            fh.write(json.dumps({**self.info, what: str(path)}) + "\n")
            fh.flush()
        except OSError:
            pass

    def set_url(self, url: str) -> None:
        """Record the server's URL in its lock files (known once it listens)."""
        self.info["url"] = url
        for fh in self._files:
            try:
                fh.seek(0)
                old = json.loads(fh.read() or "{}")
                fh.seek(0)
                fh.truncate()
                fh.write(json.dumps({**old, "url": url}) + "\n")
                fh.flush()
            except (OSError, ValueError):  # informational only
                pass

    def release(self) -> None:
        """Drop the locks (idempotent). The lock files stay (removing them would race a
        server starting meanwhile); they say nothing once unlocked."""
        for fh in self._files:
            try:
                fh.seek(0)
                fh.truncate()
                fh.close()  # closing the descriptor drops its flock
            except OSError:
                pass
        self._files = []
