"""The system of record of ``bloomkit serve``: one SQLite file in WAL mode.

Tables (every statement uses bound parameters only; no identifier is built from input)::

    meta(key TEXT PRIMARY KEY, value TEXT)          schema file (JSON), write sequence, a random
                                                    uuid (a snapshot names the database it came from)
    profiles(id INTEGER PRIMARY KEY AUTOINCREMENT,  ids never reused
             token BLOB,                            sha256 of the owner's bearer token
             record TEXT,                           the canonical record (JSON); NULL once deleted
             seq INTEGER NOT NULL)                  the write (batch) that last changed the row

A deleted profile keeps its row with ``token`` and ``record`` set to NULL and a new ``seq``
(a tombstone: its attributes are gone, and a snapshot of the index taken before the delete
learns of it by :meth:`ProfileDB.changed_since`).

Durability: ``journal_mode=WAL`` and ``synchronous=FULL``: a commit returns after the WAL is
fsynced, so an acknowledged write survives kill -9 *and* a power failure. (With WAL,
``synchronous=NORMAL`` would already survive kill -9 — the WAL's pages are in the OS cache once
``COMMIT`` returns — but not a power loss; group commit makes FULL's one fsync per batch cheap.)

Thread safety: one :class:`ProfileDB` per thread (SQLite connections are not shared): the
service's writer thread owns the writing one; start-up code reads through its own.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import BloomkitError, InvalidParameterError

__all__ = ["DatabaseError", "ProfileDB", "fs_problem", "hash_token", "loads"]


class DatabaseError(BloomkitError):
    """The database cannot be opened or read: one line naming the file, what is wrong and
    what to do (``bloomkit serve`` prints it and exits 2)."""


_LOW_SPACE = 1 << 20  # bytes free under which a failure is put down to a full file system


def fs_problem(path: Path) -> tuple[str, str] | None:
    """(what is wrong, what to do) with the file system of ``path``, if something visibly is:
    its directory missing, read-only, not writable, or full. None otherwise."""
    d = path.resolve().parent
    if not d.is_dir():
        return (f"its directory {str(d)!r} does not exist", "create it, or give another --db")
    try:
        st = os.statvfs(d)
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        st = None
    if st is not None and st.f_flag & os.ST_RDONLY:
        return ("the file system is read-only",
                "bloomkit serve writes the database, its WAL (-wal, -shm files) and the snapshot: put the "
                "database on a writable file system (copy it there) and start again")
    if not os.access(d, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return (f"no permission to write {str(path if path.exists() else d)!r}",
                "run bloomkit serve as a user who may write there, or copy the database to a directory you own")
    if st is not None and st.f_bavail * st.f_frsize < _LOW_SPACE:
        return (f"the file system is full ({st.f_bavail * st.f_frsize} bytes free)",
                "free space on it, or move the database and its snapshot to another file system, then start again")
    return None


def database_error(path: Path, e: BaseException, doing: str = "open") -> DatabaseError:
    """The one line for a failure of SQLite (or the OS) on the database ``path``."""
    msg = str(e) or type(e).__name__
    problem = fs_problem(path)
    if problem is not None:
        what, todo = problem
    elif "not a database" in msg or "malformed" in msg:
        what, todo = ("it is not a SQLite database, or it is damaged",
                      "give the right --db, or restore the database from a backup (sqlite3 .recover may save its rows)")
    elif "full" in msg:
        what, todo = "the disk is full", "free space, or move the database to another file system, then start again"
    else:
        what, todo = "SQLite failed", "check the file, its directory and the disk, then start again"
    return DatabaseError(f"cannot {doing} the database {str(path)!r}: {what} (SQLite: {msg}); {todo}")

loads: Callable[[str | bytes], Any]
"""JSON decoding of the stored records: orjson (the serve extra; ~2.5x faster than json here)."""
try:
    import orjson

    loads = orjson.loads
except ImportError:  # pragma: no cover - the serve extra installs it
    loads = json.loads

_DDL = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS profiles (id INTEGER PRIMARY KEY AUTOINCREMENT, token BLOB, "
    "record TEXT, seq INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS profiles_seq ON profiles (seq)",
)


def hash_token(token: str) -> bytes:
    """sha256 of a bearer token (tokens are 192 random bits: a fast hash is enough)."""
    return hashlib.sha256(token.encode("utf-8")).digest()


class ProfileDB:
    """A connection to the service's database (created if missing).

    Parameters
    ----------
    path : path of the SQLite file.
    schema : the schema file's JSON (:meth:`bloomkit.ranges.SchemaFile.to_json`): stored in a new
        database; an existing database must hold the same one (InvalidParameterError otherwise:
        its records would not fit another schema).
    """

    def __init__(self, path: str | Path, schema: dict[str, Any]) -> None:
        self.path = Path(path)
        try:
            self.conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=30.0)
        except sqlite3.Error as e:
            raise database_error(self.path, e) from None
        try:
            self._open(schema)
        except sqlite3.Error as e:
            self.conn.close()
            raise database_error(self.path, e) from None
        except BaseException:
            self.conn.close()
            raise

    def _open(self, schema: dict[str, Any]) -> None:
        c = self.conn
        mode = c.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise InvalidParameterError(f"database {str(self.path)!r} cannot use WAL mode (got {mode!r})")
        c.execute("PRAGMA synchronous=FULL")
        c.execute("BEGIN IMMEDIATE")
        try:
            for stmt in _DDL:
                c.execute(stmt)
            row = c.execute("SELECT value FROM meta WHERE key = ?", ("schema",)).fetchone()
            text = json.dumps(schema, sort_keys=True)
            if row is None:
                c.execute("INSERT INTO meta (key, value) VALUES (?, ?)", ("schema", text))
                c.execute("INSERT INTO meta (key, value) VALUES (?, ?)", ("seq", "0"))
            else:
                try:
                    stored = json.loads(row[0])
                except ValueError:
                    raise DatabaseError(f"database {str(self.path)!r}, table meta, row 'schema': not valid JSON; "
                                        "restore the database from a backup") from None
                if stored != json.loads(text):
                    raise InvalidParameterError(
                        f"database {str(self.path)!r} holds profiles of another schema; use the schema it was "
                        f"created with ({row[0][:200]}) or a new database")
            c.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", ("uuid", secrets.token_hex(16)))
            self.uuid: str = c.execute("SELECT value FROM meta WHERE key = ?", ("uuid",)).fetchone()[0]
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.conn.close()

    # -- reads ------------------------------------------------------------------------------------
    def seq(self) -> int:
        """The number of the last committed write batch."""
        return int(self.conn.execute("SELECT value FROM meta WHERE key = ?", ("seq",)).fetchone()[0])

    def count(self) -> int:
        """Live (not deleted) profiles."""
        return int(self.conn.execute("SELECT count(*) FROM profiles WHERE record IS NOT NULL").fetchone()[0])

    def live(self, batch: int = 50_000) -> Iterator[list[tuple[int, str]]]:
        """Every live profile ``(id, record JSON)`` in id order, ``batch`` rows at a time."""
        last = 0
        while True:
            rows = self.conn.execute(
                "SELECT id, record FROM profiles WHERE id > ? AND record IS NOT NULL ORDER BY id LIMIT ?",
                (last, batch)).fetchall()
            if not rows:
                return
            yield rows
            last = rows[-1][0]

    def row(self, pid: int) -> str | None:
        """The record JSON of row ``pid`` (None if deleted or absent)."""
        got = self.conn.execute("SELECT record FROM profiles WHERE id = ?", (pid,)).fetchone()
        return None if got is None else got[0]

    def changed_since(self, seq: int) -> list[tuple[int, str | None]]:
        """``(id, record JSON or None if deleted)`` of every row written after batch ``seq``."""
        return self.conn.execute("SELECT id, record FROM profiles WHERE seq > ? ORDER BY id", (seq,)).fetchall()

    # -- the writer's transaction -----------------------------------------------------------------
    def begin(self) -> int:
        """Start a write transaction; returns its batch number (seq + 1)."""
        self.conn.execute("BEGIN IMMEDIATE")
        seq = self.seq() + 1
        self.conn.execute("UPDATE meta SET value = ? WHERE key = ?", (str(seq), "seq"))
        return seq

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def insert(self, records: Sequence[str], tokens: Sequence[bytes], seq: int) -> list[int]:
        """Insert profiles (in a transaction); returns their ids in order."""
        cur = self.conn.cursor()
        ids = []
        for rec, tok in zip(records, tokens, strict=True):
            cur.execute("INSERT INTO profiles (token, record, seq) VALUES (?, ?, ?)", (tok, rec, seq))
            assert cur.lastrowid is not None
            ids.append(int(cur.lastrowid))
        return ids

    def authorize(self, pid: int, token: str) -> int:
        """200 if ``token`` owns live profile ``pid``, 403 if it does not, 404 if there is no such
        profile (constant-time comparison of the hashes)."""
        row = self.conn.execute("SELECT token FROM profiles WHERE id = ? AND record IS NOT NULL", (pid,)).fetchone()
        if row is None:
            return 404
        return 200 if hmac.compare_digest(bytes(row[0]), hash_token(token)) else 403

    def update(self, pid: int, record: str, seq: int) -> None:
        self.conn.execute("UPDATE profiles SET record = ?, seq = ? WHERE id = ?", (record, seq, pid))

    def delete(self, pid: int, seq: int) -> None:
        """Erase a profile's record and token, keeping a tombstone row."""
        self.conn.execute("UPDATE profiles SET record = NULL, token = NULL, seq = ? WHERE id = ?", (seq, pid))
