"""The matching service of document 000, without HTTP: database, index, group commit, snapshot.

:class:`MatchingService` owns

* the :class:`~bloomkit.serve.db.ProfileDB` (system of record, SQLite WAL);
* the exclusive lock of the database and its snapshot (:mod:`.lock`: one writer per database);
* a :class:`~bloomkit.ranges.ProfileIndex` with stored records, configured at start by the
  two-phase optimizer (Figures 6-7) from the schema file, rebuilt from the database at start
  (or loaded from a checked snapshot of this very database, then brought up to date from it);
  compacted (a new index, slots renumbered) when removed profiles would make it grow, so memory
  stays O(live profiles) under any number of updates;
* the maps between database ids and index slots (``slot_to_id``: int64 per slot, -1 once the
  slot's profile is gone, paired with its index in one view; the id -> slot map: sorted arrays
  of the live ids);
* a **writer thread** that drains a queue of writes (publish / update / delete) in batches:
  one transaction and one ``add_many`` per batch (group commit), and acknowledges each write
  only after its transaction committed and the index holds it. A ``ProfileIndex.add`` costs
  ~0.5 ms of CPU, ``add_many`` of 512 profiles ~20 us per profile: batching is what makes
  thousands of publishes per second possible.
* a snapshot thread writing the index, its slot map and the database's write number to one
  file (atomically), at most every ``snapshot_interval`` seconds while writes arrive.

Thread safety: any number of threads may call :meth:`search`, :meth:`stats` and submit writes
(:meth:`publish`, :meth:`update`, :meth:`delete` return futures) at once; only the writer
thread mutates the index and the maps (the slot map is grown by copy-and-swap, a compaction
swaps in a new index and map together, and a slot's database id is written before the index
makes the slot visible, so a search always finds the id of a slot it sees).
"""

from __future__ import annotations

import base64
import concurrent.futures as cf
import gc
import hashlib
import json
import logging
import os
import queue
import shutil
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._search_mode import SEARCH_MODES
from ..errors import BloomkitError, FormatError, InvalidParameterError
from ..ranges import Design, Numeric, ProfileIndex, SchemaFile
from ..ranges.index import FalseCandidates
from .db import DatabaseError, ProfileDB, database_error, hash_token, loads
from .lock import ServeLock
from .records import FieldError, canonical_record, index_tables
from .slots import IdMap, View
from .snapshot import peek_head, snapshot_parts, split_snapshot

__all__ = ["MODEL_PROFILES", "MatchingService", "RecordError", "SearchResult", "WriteError"]

log = logging.getLogger("bloomkit.serve")

MAX_BATCH = 2048
"""Most writes one transaction (one group commit) takes."""
_REBUILD_CHUNK = 50_000
LOW_SPACE = 16 << 20
"""Free bytes on the database's file system under which start-up warns."""
MODEL_PROFILES = 65_536
"""Profiles the per-query model prices exactly by default (a larger index prices a sample of
about this many: the model then costs about what the search does, 1-3 ms here)."""


class WriteError(Exception):
    """A write refused by the writer: ``status`` is the HTTP status (403, 404, 503)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class SearchResult:
    """One page of a search: ``ids`` (sorted, after the cursor), the counts over all matches,
    the model of the query (None when not asked), the cursor of the next page (None on the
    last) and, if asked, ``{"id", "attributes"}`` of the page's profiles."""

    ids: list[int]
    candidates: int
    matches: int
    model: FalseCandidates | None = None
    next: int | None = None
    records: list[dict[str, Any]] | None = None

    @property
    def predicted_fpr(self) -> float:
        """The model's chance that a profile which does not match this query is a candidate."""
        return 0.0 if self.model is None else self.model.fpr


@dataclass
class _Write:
    kind: str  # "publish" | "update" | "delete"
    future: cf.Future[Any]
    pid: int = 0
    token: str = ""
    record: dict[str, Any] | None = None
    text: str = ""  # the record's JSON


@dataclass
class _Counters:
    batches: int = 0
    writes: int = 0
    largest_batch: int = 0
    snapshots: int = 0
    snapshot_seconds: float = 0.0
    compactions: int = 0
    compaction_seconds: float = 0.0
    startup: dict[str, Any] = field(default_factory=dict)


class _Tokens:
    """Bearer tokens: 24 bytes of ``os.urandom`` each, urlsafe base64 (as
    ``secrets.token_urlsafe(24)``), read from the OS 256 tokens at a time: one ``urandom`` call
    costs ~0.2 ms on this machine, more than the rest of a publish's validation."""

    _N = 256

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buf = b""
        self._pos = 0

    def __call__(self) -> str:
        with self._lock:
            if self._pos >= len(self._buf):
                self._buf, self._pos = os.urandom(24 * self._N), 0
            raw = self._buf[self._pos:self._pos + 24]
            self._pos += 24
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


_token = _Tokens()


def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


class RecordError(DatabaseError):
    """A row of the database that start-up cannot use (damaged JSON, a value the schema refuses):
    names the file, the row and the field, and says what to do."""

    def __init__(self, db: Path, pid: int, what: str, field: str | None = None) -> None:
        where = f"database {str(db)!r}, table profiles, row id {pid}, column record"
        if field is not None:
            where += f", attribute {field!r}"
        super().__init__(
            f"{where}: {what.rstrip('.')}; fix the row (sqlite3 {str(db)!r} \"UPDATE profiles SET record = '<JSON>' WHERE id = {pid}\") "
            f"or delete the profile (\"UPDATE profiles SET record = NULL, token = NULL WHERE id = {pid}\"), then start again")
        self.pid, self.field = pid, field


class MatchingService:
    """Publish profiles, search them by attributes and ranges (document 000's MFPGC job).

    Parameters
    ----------
    db_path : the SQLite file (created if missing; but a missing database whose snapshot
        exists is an error: the snapshot would be lost).
    schema_file : the schema, m and typical range sizes; the optimizer runs on it at start.
    snapshot_path : the snapshot file (default ``<db_path>.snapshot``).
    snapshot_interval : seconds between snapshots while writes arrive; one is also written after
        a rebuild and at :meth:`close`. 0: none is written (an existing one is still used at
        start if it checks out).
    lock : the :class:`~.lock.ServeLock` of the database and snapshot, if the caller took it
        already (``bloomkit serve`` does, before its imports); otherwise one is taken here.
        Either way the service releases it at :meth:`close`.
    model_profiles : the most profiles the per-query model prices exactly; a larger index
        prices a sample of about this many (:meth:`ProfileIndex.expected_false_candidates`).

    Raises
    ------
    InUseError : another server holds the database or the snapshot.
    DatabaseError : the database cannot be opened (read-only or full file system, not a
        database, ...), does not exist while its snapshot does, or holds a row start-up
        cannot use (:class:`RecordError`): one line naming the file, row and field.

    Attributes
    ----------
    broken : str or None
        Set when the index could not take a committed write (e.g. out of memory): the database
        is right, the index is not; ``/healthz`` answers 503 and a restart rebuilds.
    """

    def __init__(self, db_path: str | Path, schema_file: SchemaFile, *, snapshot_path: str | Path | None = None,
                 snapshot_interval: float = 60.0, lock: ServeLock | None = None,
                 model_profiles: int = MODEL_PROFILES) -> None:
        self.schema_file = schema_file
        self.schema = schema_file.schema
        self.db_path = Path(db_path)
        self.snapshot_path = Path(snapshot_path) if snapshot_path is not None else Path(f"{db_path}.snapshot")
        self.snapshot_interval = float(snapshot_interval)
        self.model_profiles = int(model_profiles)
        self._lock = lock if lock is not None else ServeLock(self.db_path, self.snapshot_path)
        try:
            self._start()
        except BaseException:
            self._lock.release()
            raise

    def _start(self) -> None:
        t0 = time.perf_counter()
        self._check_missing_database()
        self.design: Design = self.schema_file.design()
        t_design = time.perf_counter() - t0
        self._schema_json = self.schema_file.to_json()
        self._db = ProfileDB(self.db_path, self._schema_json)  # the writer's connection
        warnings = []
        try:
            free = shutil.disk_usage(self.db_path.resolve().parent).free
        except OSError:
            free = LOW_SPACE
        if free < LOW_SPACE:
            warnings.append(f"the file system of {str(self.db_path)!r} has {free} bytes free: writes will fail "
                            "(503) until space is freed")
            log.warning("%s", warnings[-1])
        self._queue: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._stats = _Counters()
        self._snap_lock = threading.Lock()
        self._snap_seq = -1
        self._last_snap = time.monotonic()
        source = "snapshot"
        moved = None
        t1 = time.perf_counter()
        try:
            reason = self._load_snapshot()
            if reason:
                source = "database"
                if self.snapshot_path.exists() and reason.startswith("snapshot refused") and self.snapshot_interval > 0:
                    moved = self._move_snapshot_aside(reason)
                self._rebuild()
        except BaseException:  # a record the rebuild refuses, no memory, Ctrl-C: no connection left open
            self._db.close()
            raise
        t_warm = time.perf_counter()
        self._warm_up()
        self._stats.startup = {"source": source, "seconds": time.perf_counter() - t0, "design_seconds": t_design,
                               "warm_up_seconds": time.perf_counter() - t_warm,
                               "load_seconds": time.perf_counter() - t1, "snapshot_refused": reason or None,
                               "snapshot_moved_to": moved, "profiles": len(self.index), "warnings": warnings}
        self._seq = self._db.seq()
        if source == "database" and self.snapshot_interval > 0 and len(self.index):
            self._snap_seq = -1
            self._last_snap = 0.0  # the first batch (or close) writes one
        self._closed = False
        self.broken: str | None = None
        self._writer = threading.Thread(target=self._run_writer, name="bloomkit-serve-writer", daemon=True)
        self._writer.start()

    @property
    def index(self) -> ProfileIndex:
        """The current index (replaced whole by a compaction)."""
        return self._view.index

    def _warm_up(self) -> None:
        """Run every kernel a publish, a search (both modes, its model), a delete and a
        compaction use, on a scratch index of this design, so that they are compiled (or
        loaded from numba's cache) before the service answers: the first requests after a
        start take as long as any other (a compile takes seconds; a load from the cache, ms)."""
        recs = []
        for i in range(40):  # 40: the batch path of 32+ profiles, then one by one
            rec: dict[str, Any] = {}
            for a in self.schema:
                if isinstance(a, Numeric):
                    lo = a.unscale(a.scaled_lo)
                    rec[a.name] = [lo, a.unscale(min(a.scaled_lo + i, a.scaled_hi))]
                else:
                    rec[a.name] = f"w{i % 3}"
            recs.append(rec)
        idx = self._new_index(64)
        idx.add_many(recs[:36])
        for r in recs[36:]:
            idx.add(r)
        for mode in SEARCH_MODES:
            idx.search_candidates(recs[5], mode=mode)
            idx.expected_false_candidates(recs[5], mode=mode)
        idx.remove(3)
        idx.compacted()

    # -- start-up checks --------------------------------------------------------------------------
    def _check_missing_database(self) -> None:
        """A missing database beside an existing snapshot: refuse (creating a new, empty
        database would take the snapshot's place; the snapshot holds no owners' tokens, so it
        cannot stand in for the database)."""
        snap = self.snapshot_path
        if self.db_path.exists() or not snap.exists() or snap.stat().st_size == 0:
            return
        head = peek_head(snap)
        about = "" if head is None else (f" (of database {head.get('database')}, write {head.get('seq')}"
                                         + (f", {head['profiles']} profiles" if "profiles" in head else "") + ")")
        raise DatabaseError(
            f"the database {str(self.db_path)!r} does not exist, but its snapshot {str(snap)!r} does{about}: restore "
            f"the database file from a backup, or move the snapshot away to start a new, empty database")

    def _move_snapshot_aside(self, reason: str) -> str | None:
        """Keep a refused snapshot (it may be the last copy of its profiles) under a new name."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for i in range(1000):
            new = self.snapshot_path.with_name(f"{self.snapshot_path.name}.refused-{stamp}" + (f"-{i}" if i else ""))
            if not new.exists():
                break
        try:
            os.rename(self.snapshot_path, new)
        except OSError as e:
            log.error("the refused snapshot %s could not be moved aside (%s); snapshots are off", self.snapshot_path, e)
            self.snapshot_interval = 0.0  # never overwrite it
            return None
        log.warning("snapshot %s refused (%s); moved to %s, the index is rebuilt from the database",
                    self.snapshot_path, reason, new)
        return str(new)

    # -- index construction -----------------------------------------------------------------------
    def _new_index(self, capacity: int = 1024) -> ProfileIndex:
        d = self.design
        return ProfileIndex(self.schema, d.num_bits, d.config, capacity=max(capacity, 1024), store_records=True)

    def _set_view(self, index: ProfileIndex, slot_to_id: np.ndarray) -> None:
        """Install ``index`` and its ``slot_to_id`` (-1 for gone slots) and derive the id map."""
        self._view = View(index, slot_to_id)
        self._ids = IdMap(slot_to_id)

    def _decode(self, rows: list[tuple[int, Any]]) -> list[dict[str, Any]]:
        """The records of database rows ``(id, JSON)``; RecordError naming the first bad row."""
        try:
            out = [loads(r[1]) for r in rows]
        except (ValueError, TypeError):
            for pid, text in rows:
                try:
                    loads(text)
                except (ValueError, TypeError) as e:
                    raise RecordError(self._db.path, pid, f"not valid JSON ({e})") from None
            raise
        for (pid, _), rec in zip(rows, out, strict=True):
            if not isinstance(rec, dict):
                raise RecordError(self._db.path, pid, f"not a JSON object ({type(rec).__name__})")
        return out

    def _diagnose(self, pids: list[int], records: list[dict[str, Any]], error: BaseException) -> BaseException:
        """The RecordError of the first record of a chunk the index refused (or ``error``)."""
        for pid, rec in zip(pids, records, strict=True):
            try:
                canonical_record(self.schema, rec, "record")
            except FieldError as e:
                return RecordError(self._db.path, pid, e.msg, str(e.loc[-1]) if len(e.loc) > 1 else None)
        return error

    def _rebuild(self) -> None:
        """The index from the database: every live profile, read in id order in chunks, each
        chunk added as tables (one per attribute set: slots follow ids within a set)."""
        try:
            live = self._db.count()
        except sqlite3.Error as e:
            raise database_error(self.db_path, e, "read") from None
        self._set_view(self._new_index(live + live // 16), np.full(0, -1, dtype=np.int64))  # sized once
        # A million records make tens of millions of short-lived objects: without the cyclic
        # collector running over them again and again, decoding takes a third of the time.
        # (Start-up runs alone: the writer thread starts after.)
        gc_was = gc.isenabled()
        gc.disable()
        chunks = self._db.live(_REBUILD_CHUNK)
        try:  # the next chunk is read while this one is added (SQLite reads without the GIL)
            with cf.ThreadPoolExecutor(1, thread_name_prefix="bloomkit-serve-rebuild") as ex:
                ahead = ex.submit(next, chunks, None)
                while (rows := ahead.result()) is not None:
                    ahead = ex.submit(next, chunks, None)
                    self._add([r[0] for r in rows], self._decode(rows))
                    del rows
        except sqlite3.Error as e:
            raise database_error(self.db_path, e, "read") from None
        finally:
            if gc_was:
                gc.enable()

    def _load_snapshot(self) -> str:
        """Load the snapshot and replay the database's later writes; '' on success, else why
        not (the caller rebuilds)."""
        path = self.snapshot_path
        if self.snapshot_interval <= 0 and not path.exists():
            return "snapshots disabled"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return "no snapshot file"
        except OSError as e:
            return f"snapshot unreadable: {e}"
        try:
            self._read_snapshot(data)
        except (FormatError, ValueError, KeyError, TypeError, IndexError, OverflowError) as e:
            log.warning("snapshot %s refused (%s); rebuilding from the database", path, e)
            return f"snapshot refused: {e}"
        return ""

    def _read_snapshot(self, data: bytes) -> None:
        head, body = split_snapshot(data)
        if head.get("database") != self._db.uuid:
            raise FormatError("the snapshot was taken of another database")
        if head.get("schema") != self._schema_json or head.get("config") != self.design.config.to_dict():
            raise FormatError("the snapshot was taken with another schema or configuration")
        n_map, n_idx = int(head["map_bytes"]), int(head["index_bytes"])
        if len(body) != n_map + n_idx or n_map % 8:
            raise FormatError("the snapshot is truncated")
        if hashlib.sha256(body[:n_map]).hexdigest() != head["map_sha256"]:
            raise FormatError("the snapshot's slot map is damaged")
        slot_to_id = np.frombuffer(body[:n_map], dtype="<i8").astype(np.int64)
        index = ProfileIndex.from_bytes(bytes(body[n_map:]))
        if not index.store_records or index.schema != self.schema or index.config != self.design.config \
                or index.num_bits != self.design.num_bits:
            raise FormatError("the snapshot's index does not match the schema file")
        live = np.flatnonzero(slot_to_id >= 0)
        if slot_to_id.size != index.next_id or live.size != len(index) \
                or not np.array_equal(index.search({}), live) \
                or np.unique(slot_to_id[live]).size != live.size:
            raise FormatError("the snapshot's slot map does not match its index")
        seq = int(head["seq"])
        if seq > self._db.seq():
            raise FormatError(f"the snapshot (write {seq}) is newer than the database (write {self._db.seq()}): "
                              "the database was replaced by an older copy")
        full = np.full(max(index.capacity, slot_to_id.size), -1, dtype=np.int64)
        full[: slot_to_id.size] = slot_to_id
        self._set_view(index, full)
        changed = self._db.changed_since(seq)  # a bad row here is the database's fault: RecordError, not a refusal
        recs = self._decode([(pid, rec) for pid, rec in changed if rec is not None])
        it = iter(recs)
        self._apply([(pid, None if rec is None else next(it)) for pid, rec in changed])
        if len(self.index) != self._db.count():
            raise FormatError(f"after replaying the database the index holds {len(self.index)} profiles, "
                              f"the database {self._db.count()} (rows were removed behind its back)")

    # -- index updates (the writer thread, or start-up) ------------------------------------------------
    def _room(self, n: int) -> None:
        """Make room for ``n`` new profiles: compact the index (a new one, renumbered slots;
        searches running on the old one finish unaffected) when it would otherwise grow while
        at least half of its used slots hold removed profiles, so that memory after any number
        of updates is O(live profiles); else grow the slot map (copy and swap)."""
        view = self._view
        index = view.index
        live = len(index)
        if index.next_id + n > index.capacity and index.next_id - live >= (live + n) // 2:
            t0 = time.perf_counter()
            new, old_ids = index.compacted(capacity=max(1024, 3 * (live + n) // 2 + 64))
            new_map = np.full(new.capacity, -1, dtype=np.int64)
            new_map[:live] = view.slot_to_id[old_ids]
            renumber = np.full(view.slot_to_id.size, -1, dtype=np.int64)
            renumber[old_ids] = np.arange(live, dtype=np.int64)
            self._ids.remap(renumber)
            self._view = View(new, new_map)
            st = self._stats
            st.compactions += 1
            st.compaction_seconds = time.perf_counter() - t0
            return
        need = index.next_id + n
        if need > view.slot_to_id.size:
            grown = np.full(max(need, 2 * view.slot_to_id.size, 1024), -1, dtype=np.int64)
            grown[: view.slot_to_id.size] = view.slot_to_id
            self._view = View(index, grown)

    def _add(self, pids: list[int], records: list[dict[str, Any]]) -> None:
        """Add profiles (database ids ``pids``, canonical records) to the index, as tables of
        columns (:func:`.records.index_tables`); each slot's id is written before the index shows the slot."""
        if not pids:
            return
        ids = np.asarray(pids, dtype=np.int64)
        self._room(len(pids))
        view = self._view
        index = view.index
        for rows, columns, names in index_tables(self.schema, records):
            first = index.next_id
            slots = np.arange(first, first + len(rows), dtype=np.int64)
            view.slot_to_id[slots] = ids[rows]
            try:
                got = index.add_many(columns, attributes=names) if names is not None else index.add_many(columns)
            except (BloomkitError, ValueError, TypeError) as e:
                view.slot_to_id[slots] = -1
                raise self._diagnose([pids[i] for i in rows], [records[i] for i in rows], e) from None
            assert got[0] == first
            self._ids.set(ids[rows], slots)

    def _apply(self, changes: list[tuple[int, dict[str, Any] | None]]) -> None:
        """Bring the index to the database's state for ``changes`` (distinct ids, record or
        None): the new versions are added before the old ones are removed (a search racing an
        update sees the profile, once)."""
        if not changes:
            return
        adds = [(pid, rec) for pid, rec in changes if rec is not None]
        self._room(len(adds))  # a compaction renumbers slots: before the old ones are looked up
        pids = np.array([pid for pid, _ in changes], dtype=np.int64)
        old = self._ids.get(pids)
        self._add([p for p, _ in adds], [r for _, r in adds])
        view = self._view
        for slot in old[old >= 0].tolist():
            view.index.remove(slot)
            view.slot_to_id[slot] = -1
        dead = np.array([pid for pid, rec in changes if rec is None], dtype=np.int64)
        if dead.size:
            self._ids.set(dead, np.full(dead.size, -1, dtype=np.int64))

    # -- writes -----------------------------------------------------------------------------------
    def _submit(self, w: _Write) -> cf.Future[Any]:
        if self._closed:
            raise WriteError(503, "the service is shutting down")
        self._queue.put(w)
        return w.future

    def publish(self, record: Any) -> cf.Future[Any]:
        """Validate ``record`` (FieldError) and queue it; the future gives ``(id, token)`` once
        it is committed and searchable."""
        return self._publish(canonical_record(self.schema, record, "attributes"))

    def _publish(self, rec: dict[str, Any]) -> cf.Future[Any]:
        return self._submit(_Write("publish", cf.Future(), record=rec, text=_dumps(rec), token=_token()))

    def publish_many(self, records: list[Any]) -> list[cf.Future[Any]]:
        """Validate every record first (FieldError ``("profiles", i, "attributes", name)``:
        nothing is queued if one is bad), then queue them all."""
        recs = []
        for i, r in enumerate(records):
            try:
                recs.append(canonical_record(self.schema, r, "attributes"))
            except FieldError as e:
                raise FieldError(("profiles", i, *e.loc), e.msg) from None
        return [self._publish(r) for r in recs]

    def update(self, pid: int, token: str, record: Any) -> cf.Future[Any]:
        """Replace a profile's attributes; the future gives ``pid`` or raises WriteError (403, 404)."""
        rec = canonical_record(self.schema, record, "attributes")
        _check_id(pid)
        return self._submit(_Write("update", cf.Future(), pid=pid, token=token, record=rec, text=_dumps(rec)))

    def delete(self, pid: int, token: str) -> cf.Future[Any]:
        """Delete a profile; the future gives ``pid`` or raises WriteError (403, 404)."""
        _check_id(pid)
        return self._submit(_Write("delete", cf.Future(), pid=pid, token=token))

    def _run_writer(self) -> None:
        self._maybe_snapshot()  # after a rebuild: a first snapshot at once
        while True:
            try:
                w = self._queue.get(timeout=1.0)
            except queue.Empty:
                self._maybe_snapshot()  # writes stopped: the last ones still get a snapshot
                continue
            if w is None:
                return
            batch = [w]
            stop = False
            while len(batch) < MAX_BATCH:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            try:
                self._write_batch(batch)
            except BaseException as e:  # never leave a caller waiting
                log.exception("write batch failed")
                for b in batch:
                    if not b.future.done():
                        b.future.set_exception(WriteError(503, f"the write failed: {e}"))
            self._maybe_snapshot()
            if stop:
                return

    def _write_batch(self, batch: list[_Write]) -> None:
        db = self._db
        pubs = [w for w in batch if w.kind == "publish"]
        results: dict[int, Any] = {}
        changes: list[tuple[int, dict[str, Any] | None]] = []
        seq = db.begin()
        try:
            ids = db.insert([w.text for w in pubs], [hash_token(w.token) for w in pubs], seq)
            for w, pid in zip(pubs, ids, strict=True):
                results[id(w)] = (pid, w.token)
                changes.append((pid, w.record))
            for w in batch:
                if w.kind == "publish":
                    continue
                status = db.authorize(w.pid, w.token)
                if status != 200:
                    results[id(w)] = WriteError(status, "no such profile" if status == 404 else
                                                "the token does not own this profile")
                    continue
                if w.kind == "update":
                    db.update(w.pid, w.text, seq)
                else:
                    db.delete(w.pid, seq)
                changes.append((w.pid, w.record))
                results[id(w)] = w.pid
            db.commit()
        except BaseException:
            db.rollback()
            raise
        # committed: from here the writes are durable; make them searchable, then acknowledge
        try:
            self._apply(_last_per_id(changes))
        except BaseException as e:
            self.broken = f"the index could not take committed writes ({e!r}); restart to rebuild it"
            raise
        self._seq = seq  # the index holds every write up to this batch (what a snapshot records)
        st = self._stats
        st.batches += 1
        st.writes += len(batch)
        st.largest_batch = max(st.largest_batch, len(batch))
        for w in batch:
            r = results[id(w)]
            if isinstance(r, WriteError):
                w.future.set_exception(r)
            else:
                w.future.set_result(r)

    # -- snapshots --------------------------------------------------------------------------------
    def _maybe_snapshot(self, force: bool = False) -> None:
        if self.snapshot_interval <= 0 or self._seq == self._snap_seq or self.broken:
            return
        if not force and time.monotonic() - self._last_snap < self.snapshot_interval:
            return
        if not self._snap_lock.acquire(blocking=force):
            return  # the previous snapshot is still being written
        try:
            t0 = time.perf_counter()
            view = self._view  # the writer is the only mutator: index and map are consistent
            index_bytes = view.index.to_bytes()
            slot_map = view.slot_to_id[: view.index.next_id].astype("<i8").tobytes()
            seq, profiles = self._seq, len(view.index)
        except BaseException:
            self._snap_lock.release()
            raise
        self._snap_seq, self._last_snap = seq, time.monotonic()
        args = (index_bytes, slot_map, seq, profiles, t0)
        if force:
            self._write_snapshot(*args)
        else:
            threading.Thread(target=self._write_snapshot, args=args, name="bloomkit-serve-snapshot", daemon=True).start()

    def _write_snapshot(self, index_bytes: bytes, slot_map: bytes, seq: int, profiles: int, t0: float) -> None:
        from .._format import write_atomic

        try:
            head = {"seq": seq, "database": self._db.uuid, "profiles": profiles, "schema": self._schema_json,
                    "config": self.design.config.to_dict(), "map_bytes": len(slot_map),
                    "index_bytes": len(index_bytes), "map_sha256": hashlib.sha256(slot_map).hexdigest()}
            write_atomic(self.snapshot_path, snapshot_parts(head, slot_map, index_bytes))
            self._stats.snapshots += 1
            self._stats.snapshot_seconds = time.perf_counter() - t0
        except (OSError, BloomkitError):
            log.exception("snapshot %s failed", self.snapshot_path)
            self._snap_seq = -1
        finally:
            self._snap_lock.release()

    # -- reads ------------------------------------------------------------------------------------
    def search(self, query: Any, *, mode: str = "subset", verify: bool = True, limit: int = 100, after: int = 0,
               records: bool = False, model: bool = True) -> SearchResult:
        """The profiles matching ``query`` (FieldError for a bad query): the first ``limit``
        database ids greater than ``after`` (a cursor: ids only grow, so paging with the last
        id of a page neither repeats nor skips a profile, whatever is published meanwhile),
        with their records if asked, the counts, and the per-query model
        (:meth:`ProfileIndex.expected_false_candidates`, unless ``model`` is False).

        Complexity: :meth:`ProfileIndex.search` + O(candidates) verification + the model
        (O(profiles priced x query attributes))."""
        q = canonical_record(self.schema, query, "query")
        view = self._view  # one index and its map (a compaction replaces both)
        index = view.index
        if verify:
            cand, slots = index.search_candidates(q, mode=mode)
        else:
            cand = slots = index.search(q, mode=mode)
        pids = view.slot_to_id[slots]  # read after the search: holds every slot it saw
        keep = pids >= 0
        pids, slots = pids[keep], slots[keep]
        pids, first = np.unique(pids, return_index=True)  # racing an update: both versions seen, reported once
        slots = slots[first]
        at = int(np.searchsorted(pids, after, side="right"))
        page, page_slots = pids[at : at + limit], slots[at : at + limit]
        nxt = int(page[-1]) if at + limit < pids.size else None
        recs = None
        if records:
            recs = []
            for pid, slot in zip(page.tolist(), page_slots.tolist(), strict=True):
                try:
                    recs.append({"id": pid, "attributes": index.record(slot)})
                except InvalidParameterError:  # removed since the search saw it
                    recs.append({"id": pid, "attributes": None})
        fc = index.expected_false_candidates(q, mode=mode, max_profiles=self.model_profiles) if model else None
        return SearchResult([int(p) for p in page], int(cand.size), int(pids.size), fc, nxt, recs)

    def stats(self) -> dict[str, Any]:
        """The optimizer's choice and predicted rates, sizes, counters (JSON-able)."""
        d, res = self.design, self.design.result
        sizes = self.schema_file.range_sizes
        attrs = []
        for a, choice in zip(self.schema, res.attributes, strict=True):
            k, dd, s = d.config.resolve(a)
            attrs.append({"name": a.name, "type": a.to_dict()["type"], "typical_range": sizes.get(a.name, 1),
                          "num_hashes": k, "group_size": dd if a.is_numeric else None,
                          "positions": s if a.is_numeric else None, "predicted_fpr": choice.fpr})
        view = self._view
        info = view.index.info()
        st = self._stats
        return {
            "profiles": len(view.index), "num_bits": d.num_bits, "num_hashes": d.config.num_hashes,
            "k_ini": res.k_ini, "predicted_fpr": d.predicted_fpr, "expected_set_bits": res.expected_set_bits,
            "attributes": attrs,
            "observed": {"fill_ratio": info["fill_ratio"], "predicted_fpr": info["predicted_fpr"],
                         "attribute_fprs": info["attribute_fprs"]},
            "memory": {"index_bytes": info["nbytes"]["filters"], "records_bytes": info["nbytes"]["records"],
                       "maps_bytes": int(view.slot_to_id.nbytes + self._ids.nbytes),
                       "slots": view.index.capacity, "slots_used": view.index.next_id,
                       "compactions": st.compactions, "last_compaction_seconds": st.compaction_seconds},
            "writes": {"batches": st.batches, "writes": st.writes, "largest_batch": st.largest_batch,
                       "seq": self._seq, "queued": self._queue.qsize()},
            "snapshot": {"path": str(self.snapshot_path), "interval": self.snapshot_interval,
                         "written": st.snapshots, "last_seconds": st.snapshot_seconds, "seq": self._snap_seq},
            "startup": st.startup,
        }

    def close(self, *, snapshot: bool = True) -> None:
        """Finish the queued writes, stop the writer, write a last snapshot (if enabled),
        release the database's lock."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._writer.join()
        try:
            if snapshot:
                self._maybe_snapshot(force=True)
            with self._snap_lock:  # a background snapshot still writing
                pass
            self._db.close()
        finally:
            self._lock.release()


def _check_id(pid: int) -> None:
    if not 1 <= pid < 1 << 63:  # SQLite ids are positive int64: anything else names no profile
        raise WriteError(404, "no such profile")


def _last_per_id(changes: list[tuple[int, dict[str, Any] | None]]) -> list[tuple[int, dict[str, Any] | None]]:
    """The last change of each id, in the order of first appearance."""
    last: dict[int, dict[str, Any] | None] = {}
    for pid, rec in changes:
        last[pid] = rec
    return list(last.items())
