"""The matching service of document 000, without HTTP: database, index, group commit, snapshot.

:class:`MatchingService` owns

* the :class:`~bloomkit.serve.db.ProfileDB` (system of record, SQLite WAL);
* a :class:`~bloomkit.ranges.ProfileIndex` with stored records, configured at start by the
  two-phase optimizer (Figures 6-7) from the schema file, rebuilt from the database at start
  (or loaded from a checked snapshot, then brought up to date from the database);
* the maps between database ids and index slots (``slot_to_id``: int64 per slot, -1 once the
  slot's profile is gone; ``id_to_slot``: int64 per database id, -1 if not in the index);
* a **writer thread** that drains a queue of writes (publish / update / delete) in batches:
  one transaction and one ``add_many`` per batch (group commit), and acknowledges each write
  only after its transaction committed and the index holds it. A ``ProfileIndex.add`` costs
  ~0.5 ms of CPU, ``add_many`` of 512 profiles ~20 us per profile: batching is what makes
  thousands of publishes per second possible.
* a snapshot thread writing the index, its slot map and the database's write number to one
  file (atomically), at most every ``snapshot_interval`` seconds while writes arrive.

Thread safety: any number of threads may call :meth:`search`, :meth:`stats` and submit writes
(:meth:`publish`, :meth:`update`, :meth:`delete` return futures) at once; only the writer
thread mutates the index and the maps (a map is grown by copy-and-swap, and a slot's database
id is written before the index makes the slot visible, so a search always finds the id of a
slot it sees).
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
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import BloomkitError, FormatError
from ..ranges import Design, Integer, ProfileIndex, Schema, SchemaFile
from .db import ProfileDB, hash_token, loads
from .records import FieldError, canonical_record

__all__ = ["MatchingService", "SearchResult", "WriteError"]

log = logging.getLogger("bloomkit.serve")

_MAGIC = b"BLOOMKIT-SERVE-SNAPSHOT 1\n"
MAX_BATCH = 2048
"""Most writes one transaction (one group commit) takes."""
_REBUILD_CHUNK = 50_000


class WriteError(Exception):
    """A write refused by the writer: ``status`` is the HTTP status (403, 404, 503)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class SearchResult:
    ids: list[int]
    candidates: int
    matches: int
    predicted_fpr: float


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


class MatchingService:
    """Publish profiles, search them by attributes and ranges (document 000's MFPGC job).

    Parameters
    ----------
    db_path : the SQLite file (created if missing).
    schema_file : the schema, m and typical range sizes; the optimizer runs on it at start.
    snapshot_path : the snapshot file (default ``<db_path>.snapshot``).
    snapshot_interval : seconds between snapshots while writes arrive; one is also written after
        a rebuild and at :meth:`close`. 0: none is written (an existing one is still used at
        start if it checks out).

    Attributes
    ----------
    broken : str or None
        Set when the index could not take a committed write (e.g. out of memory): the database
        is right, the index is not; ``/healthz`` answers 503 and a restart rebuilds.
    """

    def __init__(self, db_path: str | Path, schema_file: SchemaFile, *, snapshot_path: str | Path | None = None,
                 snapshot_interval: float = 60.0) -> None:
        self.schema_file = schema_file
        self.schema = schema_file.schema
        self.db_path = Path(db_path)
        self.snapshot_path = Path(snapshot_path) if snapshot_path is not None else Path(f"{db_path}.snapshot")
        self.snapshot_interval = float(snapshot_interval)
        t0 = time.perf_counter()
        self.design: Design = schema_file.design()
        t_design = time.perf_counter() - t0
        self._schema_json = schema_file.to_json()
        self._db = ProfileDB(self.db_path, self._schema_json)  # the writer's connection
        self._queue: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._stats = _Counters()
        self._snap_lock = threading.Lock()
        self._snap_seq = -1
        self._last_snap = time.monotonic()
        source = "snapshot"
        t1 = time.perf_counter()
        try:
            reason = self._load_snapshot()
            if reason:
                source = "database"
                self._rebuild()
        except BaseException:  # a record the rebuild refuses, no memory, Ctrl-C: no connection left open
            self._db.close()
            raise
        self._stats.startup = {"source": source, "seconds": time.perf_counter() - t0, "design_seconds": t_design,
                               "load_seconds": time.perf_counter() - t1, "snapshot_refused": reason or None,
                               "profiles": len(self.index)}
        self._seq = self._db.seq()
        if source == "database" and self.snapshot_interval > 0 and len(self.index):
            self._snap_seq = -1
            self._last_snap = 0.0  # the first batch (or close) writes one
        self._closed = False
        self.broken: str | None = None
        self._applied = 0  # write batches applied to the index (keys the cache of the model's rates)
        self._rates: tuple[int, dict[str, float]] = (-1, {})
        self._writer = threading.Thread(target=self._run_writer, name="bloomkit-serve-writer", daemon=True)
        self._writer.start()

    # -- index construction -----------------------------------------------------------------------
    def _new_index(self, capacity: int = 1024) -> ProfileIndex:
        d = self.design
        return ProfileIndex(self.schema, d.num_bits, d.config, capacity=max(capacity, 1024), store_records=True)

    def _set_maps(self, slot_to_id: np.ndarray) -> None:
        """Install ``slot_to_id`` (-1 for gone slots) and derive ``id_to_slot``."""
        self._slot_to_id = slot_to_id
        live = np.flatnonzero(slot_to_id >= 0)
        top = int(slot_to_id.max()) + 1 if slot_to_id.size else 0
        self._id_to_slot = np.full(max(top, 1024), -1, dtype=np.int64)
        self._id_to_slot[slot_to_id[live]] = live

    def _rebuild(self) -> None:
        """The index from the database: every live profile, read in id order in chunks, each
        chunk added as tables (one per attribute set: slots follow ids within a set)."""
        live = self._db.count()
        self.index = self._new_index(live + live // 16)  # sized once: no doubling copies while it fills
        self._set_maps(np.zeros(0, dtype=np.int64))
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
                    self._add([r[0] for r in rows], [loads(r[1]) for r in rows])
                    del rows
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
        if not data.startswith(_MAGIC):
            raise FormatError("not a bloomkit serve snapshot")
        end = data.index(b"\n", len(_MAGIC))
        head = json.loads(data[len(_MAGIC):end])
        if not isinstance(head, dict) or head.pop("head_sha256", None) != _head_hash(head):
            raise FormatError("the snapshot's header is damaged")
        if head.get("database") != self._db.uuid:
            raise FormatError("the snapshot was taken of another database")
        if head.get("schema") != self._schema_json or head.get("config") != self.design.config.to_dict():
            raise FormatError("the snapshot was taken with another schema or configuration")
        n_map, n_idx = int(head["map_bytes"]), int(head["index_bytes"])
        body = memoryview(data)[end + 1:]
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
            raise FormatError(f"the snapshot (write {seq}) is newer than the database (write {self._db.seq()})")
        self.index = index
        self._set_maps(slot_to_id.copy())
        changed = self._db.changed_since(seq)
        self._apply([(pid, None if rec is None else json.loads(rec)) for pid, rec in changed])
        if len(self.index) != self._db.count():
            raise FormatError(f"after replaying the database the index holds {len(self.index)} profiles, "
                              f"the database {self._db.count()}")

    # -- index updates (the writer thread, or start-up) ------------------------------------------------
    def _grow(self, slots: int, top_id: int) -> None:
        if slots > self._slot_to_id.size:
            new = np.full(max(slots, 2 * self._slot_to_id.size, 1024), -1, dtype=np.int64)
            new[: self._slot_to_id.size] = self._slot_to_id
            self._slot_to_id = new
        if top_id >= self._id_to_slot.size:
            new = np.full(max(top_id + 1, 2 * self._id_to_slot.size), -1, dtype=np.int64)
            new[: self._id_to_slot.size] = self._id_to_slot
            self._id_to_slot = new

    def _add(self, pids: list[int], records: list[dict[str, Any]]) -> None:
        """Add profiles (database ids ``pids``, canonical records) to the index, as tables of
        columns (:func:`_tables`); each slot's id is written before the index shows the slot."""
        if not pids:
            return
        ids = np.asarray(pids, dtype=np.int64)
        self._grow(self.index.next_id + len(pids), int(ids.max()))
        for rows, columns, names in _tables(self.schema, records):
            first = self.index.next_id
            slots = np.arange(first, first + len(rows), dtype=np.int64)
            self._slot_to_id[slots] = ids[rows]
            got = self.index.add_many(columns, attributes=names) if names is not None else self.index.add_many(columns)
            assert got[0] == first
            self._id_to_slot[ids[rows]] = slots

    def _apply(self, changes: list[tuple[int, dict[str, Any] | None]]) -> None:
        """Bring the index to the database's state for ``changes`` (id, record or None):
        the new version is added before the old one is removed (a search racing an update
        sees the profile, once)."""
        old = [pid for pid, _ in changes if pid < self._id_to_slot.size and self._id_to_slot[pid] >= 0]
        old_slots = {pid: int(self._id_to_slot[pid]) for pid in old}
        adds = [(pid, rec) for pid, rec in changes if rec is not None]
        self._add([p for p, _ in adds], [r for _, r in adds])
        for pid, slot in old_slots.items():
            self.index.remove(slot)
            self._slot_to_id[slot] = -1
            if self._id_to_slot[pid] == slot:
                self._id_to_slot[pid] = -1

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
        self._applied += 1
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
            index_bytes = self.index.to_bytes()  # the writer is the only mutator: consistent with the map
            slot_map = self._slot_to_id[: self.index.next_id].astype("<i8").tobytes()
            seq = self._seq
        except BaseException:
            self._snap_lock.release()
            raise
        self._snap_seq, self._last_snap = seq, time.monotonic()
        args = (index_bytes, slot_map, seq, t0)
        if force:
            self._write_snapshot(*args)
        else:
            threading.Thread(target=self._write_snapshot, args=args, name="bloomkit-serve-snapshot", daemon=True).start()

    def _write_snapshot(self, index_bytes: bytes, slot_map: bytes, seq: int, t0: float) -> None:
        from .._format import write_atomic

        try:
            head = {"seq": seq, "database": self._db.uuid, "schema": self._schema_json, "config": self.design.config.to_dict(),
                    "map_bytes": len(slot_map), "index_bytes": len(index_bytes),
                    "map_sha256": hashlib.sha256(slot_map).hexdigest()}
            head["head_sha256"] = _head_hash(head)
            write_atomic(self.snapshot_path, [_MAGIC, json.dumps(head).encode() + b"\n", slot_map, index_bytes])
            self._stats.snapshots += 1
            self._stats.snapshot_seconds = time.perf_counter() - t0
        except (OSError, BloomkitError):
            log.exception("snapshot %s failed", self.snapshot_path)
            self._snap_seq = -1
        finally:
            self._snap_lock.release()

    # -- reads ------------------------------------------------------------------------------------
    def search(self, query: Any, *, mode: str = "subset", verify: bool = True, limit: int = 100) -> SearchResult:
        """Database ids of the profiles matching ``query`` (FieldError for a bad query).

        Complexity: :meth:`ProfileIndex.search` + O(candidates) verification."""
        q = canonical_record(self.schema, query, "query")
        index = self.index
        if verify:
            cand, slots = index.search_candidates(q, mode=mode)
        else:
            cand = slots = index.search(q, mode=mode)
        pids = self._slot_to_id[slots]  # read after the search: holds every slot it saw
        pids = np.unique(pids[pids >= 0])
        rates = self._rates
        if rates[0] != self._applied:  # the model's rates change only with the index: once per batch
            rates = self._rates = (self._applied, index.attribute_fprs())
        fpr = min(1.0, float(sum(rates[1][n] for n in q)))  # = index.predicted_fpr(attributes=q)
        return SearchResult([int(p) for p in pids[:limit]], int(cand.size), int(pids.size), fpr)

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
        info = self.index.info()
        st = self._stats
        return {
            "profiles": len(self.index), "num_bits": d.num_bits, "num_hashes": d.config.num_hashes,
            "k_ini": res.k_ini, "predicted_fpr": d.predicted_fpr, "expected_set_bits": res.expected_set_bits,
            "attributes": attrs,
            "observed": {"fill_ratio": info["fill_ratio"], "predicted_fpr": info["predicted_fpr"],
                         "attribute_fprs": info["attribute_fprs"]},
            "memory": {"index_bytes": info["nbytes"]["filters"], "records_bytes": info["nbytes"]["records"],
                       "maps_bytes": int(self._slot_to_id.nbytes + self._id_to_slot.nbytes)},
            "writes": {"batches": st.batches, "writes": st.writes, "largest_batch": st.largest_batch,
                       "seq": self._seq, "queued": self._queue.qsize()},
            "snapshot": {"path": str(self.snapshot_path), "interval": self.snapshot_interval,
                         "written": st.snapshots, "last_seconds": st.snapshot_seconds, "seq": self._snap_seq},
            "startup": st.startup,
        }

    def close(self, *, snapshot: bool = True) -> None:
        """Finish the queued writes, stop the writer, write a last snapshot (if enabled)."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._writer.join()
        if snapshot:
            self._maybe_snapshot(force=True)
        with self._snap_lock:  # a background snapshot still writing
            pass
        self._db.close()


def _head_hash(head: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(head, sort_keys=True).encode()).hexdigest()


def _check_id(pid: int) -> None:
    if not 1 <= pid < 1 << 63:  # SQLite ids are positive int64: anything else names no profile
        raise WriteError(404, "no such profile")


def _tables(schema: Schema, records: list[dict[str, Any]]) -> list[tuple[np.ndarray, Any, list[str] | None]]:
    """Canonical records as tables for :meth:`ProfileIndex.add_many` (validated by column,
    vectorised: ~10 us per profile in large batches, against ~50 us as a list of records):
    one table per set of attributes the records give, as ``(positions in records, columns by
    name — a text as a list of str or an arrow array, a numeric attribute as "<name>.lo" /
    "<name>.hi" arrays —, attribute names)``. Records that do not make such a table (not
    canonical, or a schema whose names end in ".lo" / ".hi") are given as they are, with names
    None: ``add_many`` validates them one by one and names what is wrong."""
    n_attrs = len(schema.names)
    if all(len(r) == n_attrs for r in records):  # the usual case: every attribute given
        groups: dict[frozenset[str], list[int]] = {frozenset(schema.names): list(range(len(records)))}
    else:
        groups = {}
        for i, r in enumerate(records):
            groups.setdefault(frozenset(r), []).append(i)
    plain = any(n.endswith((".lo", ".hi")) for n in schema.names)
    out: list[tuple[np.ndarray, Any, list[str] | None]] = []
    for given, rows in groups.items():
        part = records if len(rows) == len(records) else [records[i] for i in rows]
        pos = np.asarray(rows, dtype=np.int64)
        try:
            if plain:
                raise ValueError("the table form would be ambiguous")
            columns: dict[str, Any] = {}
            for a in schema:
                if a.name not in given:
                    continue
                values = [r[a.name] for r in part]
                if not a.is_numeric:
                    columns[a.name] = pa.array(values, type=pa.string()) if len(values) > 64 else values
                    continue
                ends = np.array(values)  # canonical: [lo, hi] of ints (Integer) or floats (Decimal)
                if ends.ndim != 2 or ends.shape[1] != 2 or ends.dtype.kind not in ("i" if isinstance(a, Integer) else "if"):
                    raise ValueError("not canonical")
                columns[f"{a.name}.lo"], columns[f"{a.name}.hi"] = ends[:, 0].copy(), ends[:, 1].copy()
            out.append((pos, columns, [a.name for a in schema if a.name in given]))
        except (ValueError, TypeError, KeyError, pa.ArrowException):
            out.append((pos, part, None))
    return out


def _last_per_id(changes: list[tuple[int, dict[str, Any] | None]]) -> list[tuple[int, dict[str, Any] | None]]:
    """The last change of each id, in the order of first appearance."""
    last: dict[int, dict[str, Any] | None] = {}
    for pid, rec in changes:
        last[pid] = rec
    return list(last.items())
