"""An operable ``bloomkit serve`` (issue 26): one writer per database, snapshots that never
outlive their data, bounded memory under churn, clear start-up errors naming file, row and
field. In process (MatchingService, the lock, the database); the command-line refusals are in
test_serve.py and the file-system cases (read-only, full) at the end, under a private mount
namespace."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _serve import SMALL_SCHEMA, bloomkit_command, brute_force, db_records

from bloomkit.ranges import schema_from_json
from bloomkit.serve.db import DatabaseError
from bloomkit.serve.lock import InUseError, ServeLock, holder_info
from bloomkit.serve.service import MatchingService, RecordError

SF = schema_from_json(SMALL_SCHEMA)


def _svc(tmp: Path, name: str = "p.sqlite", **kw: Any) -> MatchingService:
    kw.setdefault("snapshot_interval", 3600)
    return MatchingService(tmp / name, SF, **kw)


def _publish(svc: MatchingService, recs: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [f.result() for f in [svc.publish(r) for r in recs]]


def test_one_server_per_database_and_snapshot(tmp_path: Path) -> None:
    a = _svc(tmp_path)
    try:
        _publish(a, [{"Name": "a", "Age": 5}])
        with pytest.raises(InUseError, match=r"the database '.*p.sqlite' is in use by bloomkit serve \(pid "
                                             rf"{os.getpid()}.*stop that one first"):
            _svc(tmp_path)
        # another spelling of the path is the same lock
        with pytest.raises(InUseError, match="in use"):
            MatchingService(tmp_path / "." / "p.sqlite", SF)
        # another database, the same snapshot file
        with pytest.raises(InUseError, match=r"the snapshot '.*p.sqlite.snapshot' is in use.*--snapshot"):
            _svc(tmp_path, "other.sqlite", snapshot_path=tmp_path / "p.sqlite.snapshot")
        assert not (tmp_path / "other.sqlite").exists()  # refused before anything was created
        assert a.search({"Name": "a"}).ids == [1]  # the first one is untouched
        assert a.publish({"Name": "b"}).result()[0] == 2
    finally:
        a.close()
    b = _svc(tmp_path)  # released at close
    assert b.search({"Name": "b"}).ids == [2]
    b.close()
    lock = ServeLock(tmp_path / "x.sqlite", tmp_path / "x.snap", holder_info("http://127.0.0.1:1/"))
    with pytest.raises(InUseError, match=r"http://127.0.0.1:1/"):
        ServeLock(tmp_path / "x.sqlite", tmp_path / "y.snap")
    lock.release()
    ServeLock(tmp_path / "x.sqlite", tmp_path / "y.snap").release()


def test_a_missing_database_beside_its_snapshot_is_refused(tmp_path: Path) -> None:
    a = _svc(tmp_path)
    _publish(a, [{"Name": f"n{i}", "Age": i} for i in range(1, 30)])
    a.close()
    snap = tmp_path / "p.sqlite.snapshot"
    keep = snap.read_bytes()
    for f in tmp_path.glob("p.sqlite*"):
        if f != snap and not f.name.endswith(".lock"):
            f.unlink()
    with pytest.raises(DatabaseError, match=r"the database '.*p.sqlite' does not exist, but its snapshot .* does "
                                            r"\(of database [0-9a-f]{32}, write \d+, 29 profiles\): restore"):
        _svc(tmp_path)
    assert snap.read_bytes() == keep and not (tmp_path / "p.sqlite").exists()


def _refused_copies(snap: Path) -> list[Path]:
    return sorted(snap.parent.glob(snap.name + ".refused-*"))


def test_a_snapshot_of_another_or_emptied_database_is_kept_aside(tmp_path: Path) -> None:
    """Issue 26, item 2: a database replaced by another (its snapshot refused: another
    database) or emptied behind the service's back (refused: counts differ): the snapshot is
    moved aside, never overwritten, and the start-up says so."""
    a = _svc(tmp_path)
    _publish(a, [{"Name": f"n{i}", "Age": i % 120 + 1} for i in range(300)])
    a.close()
    snap = tmp_path / "p.sqlite.snapshot"
    original = snap.read_bytes()
    # emptied: every row deleted with sqlite3 (same database, same write number)
    con = sqlite3.connect(str(tmp_path / "p.sqlite"))
    con.execute("DELETE FROM profiles")
    con.commit()
    con.close()
    b = _svc(tmp_path)
    st = b.stats()["startup"]
    assert st["source"] == "database" and "after replaying" in st["snapshot_refused"] and st["profiles"] == 0
    moved = _refused_copies(snap)
    assert [str(p) for p in moved] == [st["snapshot_moved_to"]] and moved[0].read_bytes() == original
    _publish(b, [{"Name": "new"}])
    b.close()
    assert moved[0].read_bytes() == original and snap.read_bytes() != original
    # replaced: a new database file under the same name (another identity)
    second = snap.read_bytes()
    for f in tmp_path.glob("p.sqlite*"):
        if not f.name.startswith("p.sqlite.snapshot") and not f.name.endswith(".lock"):
            f.unlink()
    snap.write_bytes(second)
    shutil.copy(tmp_path / "p.sqlite.snapshot", tmp_path / "keep")
    (tmp_path / "p.sqlite").touch()  # an empty file: SQLite makes a new database of it
    c = _svc(tmp_path)
    st = c.stats()["startup"]
    assert "another database" in st["snapshot_refused"] and len(_refused_copies(snap)) == 2
    c.close()
    assert Path(st["snapshot_moved_to"]).read_bytes() == second


def test_memory_stays_bounded_under_updates(tmp_path: Path) -> None:
    """Issue 26, item 3: 8 owners update their profiles many times; the index compacts, so
    index + records + maps stay within 2x their size at 8 profiles, and every answer is right."""
    svc = _svc(tmp_path, snapshot_interval=0)
    rng = np.random.default_rng(3)
    owners = _publish(svc, [{"Name": f"o{i}", "City": "c", "Age": [20, 29], "Latitude": [25.0, 25.1]} for i in range(8)])
    mem0 = svc.stats()["memory"]
    base = mem0["index_bytes"] + mem0["records_bytes"] + mem0["maps_bytes"]
    for _ in range(140):  # each owner updates once per round: 1,120 updates, a new slot each
        futs = []
        for i in range(8):
            age = int(rng.integers(1, 110))
            futs.append(svc.update(owners[i][0], owners[i][1], {"Name": f"o{i}", "City": "c" * int(rng.integers(1, 40)),
                                                                 "Age": [age, age + 9]}))
        for f in futs:
            f.result()
    mem = svc.stats()["memory"]
    assert mem["compactions"] >= 1 and mem["slots_used"] <= mem["slots"] <= 1024
    assert mem["index_bytes"] + mem["records_bytes"] + mem["maps_bytes"] <= 2 * base, (mem0, mem)
    assert len(svc.index) == 8
    records = db_records(tmp_path / "p.sqlite")
    for age in range(1, 120, 7):
        for mode in ("subset", "intersect"):
            q = {"Age": age}
            assert svc.search(q, mode=mode, limit=100).ids == brute_force(SMALL_SCHEMA, records, q, mode)
    svc.index._check()
    svc.close()
    again = _svc(tmp_path, snapshot_interval=0)  # rebuilt from the database: the same answers
    assert again.search({"Name": "o3"}).ids == [owners[3][0]]
    again.close()


def test_ids_and_answers_survive_compactions_with_deletes_and_publishes(tmp_path: Path) -> None:
    svc = _svc(tmp_path, snapshot_interval=0.05)
    rng = np.random.default_rng(9)
    live: dict[int, tuple[str, dict[str, Any]]] = {}
    for _ in range(10):
        recs = [{"Name": f"x{int(rng.integers(50))}", "Age": int(rng.integers(1, 120))} for _ in range(300)]
        for (pid, tok), r in zip(_publish(svc, recs), recs, strict=True):
            live[pid] = (tok, r)
        doomed = rng.choice(sorted(live), 280, replace=False).tolist()
        for f in [svc.delete(p, live[p][0]) for p in doomed]:
            f.result()
        for p in doomed:
            del live[p]
    st = svc.stats()["memory"]
    assert st["compactions"] >= 1 and len(svc.index) == len(live) == 200
    for name in {r["Name"] for _, r in live.values()}:
        want = sorted(p for p, (_, r) in live.items() if r["Name"] == name)
        assert svc.search({"Name": name}, limit=1000).ids == want
    svc.close()
    again = _svc(tmp_path, snapshot_interval=0.05)  # from the (compacted) snapshot
    assert again.stats()["startup"]["source"] == "snapshot" and len(again.index) == 200
    assert again.search({"Name": "x7"}, limit=1000).ids == sorted(p for p, (_, r) in live.items() if r["Name"] == "x7")
    again.close()


def _poke(db: Path, pid: int, record: str) -> None:
    con = sqlite3.connect(str(db))
    con.execute("UPDATE profiles SET record = ? WHERE id = ?", (record, pid))
    con.commit()
    con.close()


@pytest.mark.parametrize("record, what, field", [
    ('{"Name": "x", "Age": [20, 29}', "not valid JSON", None),
    ('[1, 2]', "not a JSON object", None),
    ('{"Name": "x", "Age": [30, 20]}', "Age", "Age"),
    ('{"Name": "x", "Nope": 3}', "unknown attribute 'Nope'", "Nope"),
])
def test_a_bad_row_names_file_row_and_field(tmp_path: Path, record: str, what: str, field: str | None) -> None:
    svc = _svc(tmp_path, snapshot_interval=0)
    _publish(svc, [{"Name": "x", "Age": [20, 29]} for _ in range(12)])
    svc.close()
    _poke(tmp_path / "p.sqlite", 7, record)
    with pytest.raises(RecordError) as e:
        _svc(tmp_path, snapshot_interval=0)
    msg = str(e.value)
    assert "p.sqlite', table profiles, row id 7, column record" in msg and what in msg and "WHERE id = 7" in msg
    assert e.value.pid == 7 and e.value.field == field


def test_a_bad_row_written_after_the_snapshot_names_the_row(tmp_path: Path) -> None:
    svc = _svc(tmp_path)
    _publish(svc, [{"Name": "x", "Age": [20, 29]} for _ in range(5)])
    svc.close()  # snapshot at write 5
    con = sqlite3.connect(str(tmp_path / "p.sqlite"))
    con.execute("UPDATE meta SET value = '6' WHERE key = 'seq'")
    con.execute("UPDATE profiles SET record = ?, seq = 6 WHERE id = 3", ('{"Age": [1, 2, 3]}',))
    con.commit()
    con.close()
    with pytest.raises(RecordError, match=r"row id 3, column record, attribute 'Age'"):
        _svc(tmp_path)
    assert not _refused_copies(tmp_path / "p.sqlite.snapshot")  # the snapshot is not to blame


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "p.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.raises(DatabaseError, match=r"cannot open the database '.*p.sqlite': it is not a SQLite database.*"
                                            r"restore the database from a backup"):
        _svc(tmp_path)
    with pytest.raises(DatabaseError, match="directory .* does not exist"):
        MatchingService(tmp_path / "no" / "such" / "p.sqlite", SF, snapshot_path=tmp_path / "s.snap")


def _unshare() -> str | None:
    """Why a private mount namespace with tmpfs cannot be had here (None if it can)."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        return "needs Linux with unshare"
    r = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True)
    return None if r.returncode == 0 else "cannot mount a tmpfs in a private namespace (not root?)"


@pytest.mark.skipif(_unshare() is not None, reason=str(_unshare()))
@pytest.mark.parametrize("case", ["read-only", "full"])
def test_read_only_and_full_file_systems_exit_2_saying_so(tmp_path: Path, case: str) -> None:
    """Issue 26, item 5: the installed command on a database on a read-only tmpfs, and on a
    full one (in a private mount namespace: nothing outside the test sees the mounts)."""
    svc = _svc(tmp_path, snapshot_interval=0)
    _publish(svc, [{"Name": "x", "Age": 3}])
    svc.close()
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SMALL_SCHEMA))
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    db = mnt / ("p.sqlite" if case == "read-only" else "new.sqlite")  # an existing one read-only, a new one full
    cmd = " ".join([*bloomkit_command(), "serve", "--db", str(db), "--schema", str(schema), "--port", "0"])
    setup = f"mount -t tmpfs -o size=256k tmpfs {mnt} && cp {tmp_path / 'p.sqlite'} {mnt}/ && "
    if case == "read-only":
        setup += f"mount -o remount,ro {mnt} && "
    else:
        setup += f"(yes 0123456789abcdef > {mnt}/filler 2>/dev/null; true) && "  # fills it
    r = subprocess.run(["unshare", "-m", "sh", "-c", setup + "exec " + cmd], capture_output=True, text=True, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("bloomkit: error:"), r.stderr
    assert str(db) in lines[0]
    if case == "read-only":
        assert "read-only" in lines[0] and "writable file system" in lines[0]
    else:
        assert "full" in lines[0] and "free space" in lines[0]
