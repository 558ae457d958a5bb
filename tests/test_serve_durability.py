"""Durability of ``bloomkit serve`` (issue 16, item 2): kill -9 at any moment loses no
acknowledged write; the snapshot is checked against the database (replayed when stale,
refused when damaged or foreign) and the index is otherwise rebuilt from the database."""

from __future__ import annotations

import random
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from _serve import SMALL_SCHEMA, Server, db_records  # noqa: E402


def _exact(name: str) -> dict[str, Any]:
    return {"query": {"Name": name}, "verify": False, "limit": 10}


def _hammer(url: str, stop: threading.Event, acked: dict[str, tuple[int, str]], deleted: set[str],
            lock: threading.Lock, seed: int) -> None:
    """Publish (and sometimes delete) until ``stop`` or the server dies; record what was
    acknowledged."""
    rnd = random.Random(seed)
    mine: list[str] = []
    with httpx.Client(base_url=url, timeout=10.0) as c:
        n = 0
        while not stop.is_set():
            n += 1
            name = f"w{seed}-{n}"
            try:
                if mine and rnd.random() < 0.2:
                    victim = mine.pop(rnd.randrange(len(mine)))
                    pid, token = acked[victim]
                    with lock:
                        deleted.add("?" + victim)  # in flight: if the server dies now, either outcome is right
                    r = c.delete(f"/profiles/{pid}", headers={"Authorization": f"Bearer {token}"})
                    if r.status_code == 204:
                        with lock:
                            deleted.add(victim)
                            deleted.discard("?" + victim)
                    continue
                r = c.post("/profiles", json={"attributes": {"Name": name, "Age": [20, 29], "Income": rnd.randrange(5000)}})
            except httpx.HTTPError:
                return  # killed
            if r.status_code == 201:
                with lock:
                    acked[name] = (r.json()["id"], r.json()["token"])
                mine.append(name)


def _check_all(srv: Server, acked: dict[str, tuple[int, str]], deleted: set[str]) -> None:
    live = {n for n in acked if n not in deleted and "?" + n not in deleted}
    with srv.client() as c:
        for name in sorted(acked):
            if "?" + name in deleted:
                continue  # its delete was not acknowledged (the server was killed meanwhile)
            ids = c.post("/search", json=_exact(name)).json()["ids"]
            if name in deleted:
                assert acked[name][0] not in ids, f"acknowledged delete of {name} lost"
            else:
                assert acked[name][0] in ids, f"acknowledged publish of {name} lost"
        assert c.get("/healthz").json()["profiles"] == len(db_records(srv.db))
    assert {acked[n][0] for n in live} <= set(db_records(srv.db))


@pytest.mark.parametrize("interval", [pytest.param("0", marks=pytest.mark.slow), "0.3"])
def test_kill9_loses_no_acknowledged_write(tmp_path: Path, interval: str) -> None:
    """Eight clients publish and delete concurrently; kill -9 mid-flight, twice; after
    each restart every acknowledged publish is found and every acknowledged delete is gone.
    With interval 0.3 s the restarts load a (stale) snapshot and replay the database."""
    acked: dict[str, tuple[int, str]] = {}
    deleted: set[str] = set()
    lock = threading.Lock()
    sources = []
    for round_ in range(2):
        srv = Server(tmp_path, "--snapshot-interval", interval).start()
        with srv.client() as c:
            sources.append(c.get("/stats").json()["startup"]["source"])
        _check_all(srv, acked, deleted)
        with srv.client() as c:  # answering (the kernels are warmed up at start): the kill comes mid-flight
            assert c.post("/profiles", json={"attributes": {"Name": f"first{round_}"}}).status_code == 201
        stop = threading.Event()
        threads = [threading.Thread(target=_hammer, args=(srv.url, stop, acked, deleted, lock, 10 * round_ + i))
                   for i in range(8)]
        before = len(acked)
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60  # enough acknowledged writes however loaded the machine is
        while len(acked) - before < 40 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(random.random() * 0.5)
        srv.kill()  # kill -9 while requests are in flight
        stop.set()
        for t in threads:
            t.join(30)
    assert len(acked) > 60 and deleted
    srv = Server(tmp_path, "--snapshot-interval", interval).start()
    try:
        _check_all(srv, acked, deleted)
    finally:
        srv.kill()
    if interval != "0":
        assert "snapshot" in sources[1:], sources


def _stats(srv: Server) -> dict[str, Any]:
    with srv.client() as c:
        out: dict[str, Any] = c.get("/stats").json()
        return out


def test_snapshot_replay_damage_and_foreign(tmp_path: Path) -> None:
    """The snapshot logic of MatchingService, in process (the kill -9 test above loads stale
    snapshots of the real command): a stale snapshot is replayed from the database; a damaged,
    truncated or foreign one is refused, kept aside, and the index rebuilt with the same answers."""
    from bloomkit.ranges import schema_from_json
    from bloomkit.serve.service import MatchingService

    def start(where: Path, schema: dict[str, Any] = SMALL_SCHEMA) -> MatchingService:
        return MatchingService(where / "profiles.sqlite", schema_from_json(schema), snapshot_interval=3600)

    def names(svc: MatchingService, name: str) -> list[int]:
        return svc.search({"Name": name}, verify=False, limit=10).ids

    svc = start(tmp_path)
    a, b = (svc.publish({"Name": n, "Age": age}).result() for n, age in (("a", 5), ("b", 6)))
    svc.close()  # graceful: the last snapshot is written
    snap = tmp_path / "profiles.sqlite.snapshot"
    assert snap.exists()

    # stale snapshot: later writes (a deleted, c published) come from the database
    svc = start(tmp_path)
    assert svc.stats()["startup"]["source"] == "snapshot"
    svc.delete(a[0], a[1]).result()
    c = svc.publish({"Name": "c", "Age": 7}).result()
    svc.close(snapshot=False)  # as if killed: no new snapshot
    svc = start(tmp_path)
    st = svc.stats()
    assert st["startup"]["source"] == "snapshot" and st["profiles"] == 2
    assert (names(svc, "a"), names(svc, "b"), names(svc, "c")) == ([], [b[0]], [c[0]])
    svc.close(snapshot=False)

    # damaged snapshot: refused, kept aside, rebuilt from the database, same answers
    raw = bytearray(snap.read_bytes())
    head_end = raw.index(b"\n", raw.index(b"\n") + 1)
    seq_at = raw.index(b'"seq": ') + len(b'"seq": ')
    for pos in (len(raw) // 2, len(raw) - 5, head_end + 3, seq_at):  # index, map, header's seq
        bad = bytearray(raw)
        bad[pos] = (bad[pos] ^ 0x55) if pos != seq_at else ord("9" if bad[pos] != ord("9") else "1")  # still a number
        snap.write_bytes(bytes(bad))
        svc = start(tmp_path)
        st = svc.stats()["startup"]
        assert st["source"] == "database" and st["snapshot_refused"], pos
        assert Path(st["snapshot_moved_to"]).read_bytes() == bytes(bad)
        assert (names(svc, "c"), names(svc, "a")) == ([c[0]], [])
        svc.close(snapshot=False)
    snap.write_bytes(bytes(raw[: len(raw) // 3]))  # truncated
    svc = start(tmp_path)
    assert svc.stats()["startup"]["source"] == "database"
    svc.close(snapshot=False)

    # a snapshot of another database (another schema) is refused too
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    o = start(other_dir, {"num_bits": 128, "attributes": [{"name": "Name", "type": "text"}]})
    o.publish({"Name": "zz"}).result()
    o.close()
    snap.write_bytes((other_dir / "profiles.sqlite.snapshot").read_bytes())
    svc = start(tmp_path)
    st = svc.stats()
    assert st["startup"]["source"] == "database" and "another database" in st["startup"]["snapshot_refused"]
    assert st["profiles"] == 2
    svc.close()

    # ... even one of a copy of this database's schema (same schema, same configuration)
    third = tmp_path / "third"
    third.mkdir()
    t = start(third)
    for name in ("x", "y"):
        t.publish({"Name": name, "Age": 9}).result()
    t.close()
    snap.write_bytes((third / "profiles.sqlite.snapshot").read_bytes())
    svc = start(tmp_path)
    st = svc.stats()
    assert st["startup"]["source"] == "database" and "another database" in st["startup"]["snapshot_refused"]
    assert (names(svc, "x"), names(svc, "b")) == ([], [b[0]])
    svc.close()
    assert len(list(tmp_path.glob("profiles.sqlite.snapshot.refused-*"))) == 7  # none overwritten


def test_background_snapshot_is_refreshed(tmp_path: Path) -> None:
    srv = Server(tmp_path, "--snapshot-interval", "0.2").start()
    snap = Path(f"{srv.db}.snapshot")
    with srv.client() as c:
        for i in range(5):
            assert c.post("/profiles", json={"attributes": {"Name": f"s{i}", "Age": 9}}).status_code == 201
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and c.get("/stats").json()["snapshot"]["seq"] < 5:
            time.sleep(0.1)
        s = c.get("/stats").json()["snapshot"]
    assert s["written"] >= 1 and s["seq"] >= 5 and snap.exists()
    srv.kill()
    srv = Server(tmp_path, "--snapshot-interval", "0.2").start()
    st = _stats(srv)
    assert st["startup"]["source"] == "snapshot" and st["profiles"] == 5
    srv.kill()


def test_database_of_another_schema_exits_2(tmp_path: Path) -> None:
    srv = Server(tmp_path).start()
    srv.stop()
    other = dict(SMALL_SCHEMA, num_bits=512)
    bad = Server(tmp_path, schema=other)
    r = subprocess.run(bad.cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bloomkit: error:") and "another schema" in lines[0]
