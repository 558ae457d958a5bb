"""Helpers of the ``bloomkit serve`` tests: the installed command in a subprocess, on a free
loopback port, with a database on disk; brute-force answers from the database."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

SMALL_SCHEMA = {
    "num_bits": 256,
    "attributes": [
        {"name": "Name", "type": "text"},
        {"name": "City", "type": "text"},
        {"name": "Age", "type": "integer", "min": 1, "max": 120, "typical_range": 10},
        {"name": "Income", "type": "integer", "min": 0, "max": 5000, "typical_range": 500},
        {"name": "Latitude", "type": "decimal", "min": -90, "max": 90, "places": 4, "typical_range": 1000},
    ],
}


def bloomkit_command() -> list[str]:
    """The installed ``bloomkit`` console script of this environment."""
    exe = Path(sys.executable).with_name("bloomkit")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("bloomkit")
    if found is None:
        pytest.skip("the bloomkit command is not installed (pip install -e .)")
    return [found]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    """``bloomkit serve`` in a subprocess (stderr captured to a file)."""

    def __init__(self, tmp: Path, *args: str, schema: dict[str, Any] | None = SMALL_SCHEMA, db: Path | None = None) -> None:
        self.tmp = tmp
        self.db = db or tmp / "profiles.sqlite"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [*bloomkit_command(), "serve", "--db", str(self.db), "--port", str(self.port)]
        if schema is not None:
            path = tmp / "schema.json"
            path.write_text(json.dumps(schema))
            cmd += ["--schema", str(path)]
        self.cmd = cmd + list(args)
        self.log = tmp / f"serve-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120.0) -> Server:
        with self.log.open("wb") as fh:
            self.proc = subprocess.Popen(self.cmd, stdout=fh, stderr=subprocess.STDOUT,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"bloomkit serve exited with {self.proc.returncode}: {self.log.read_text()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise AssertionError(f"bloomkit serve did not answer in {timeout} s: {self.log.read_text()}")

    def client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60.0, **kw)

    def kill(self) -> None:
        """kill -9."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> int:
        """SIGTERM (graceful: queued writes finish, a snapshot is written); the exit status."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()
        return int(self.proc.returncode)


def db_records(db: Path) -> dict[int, dict[str, Any]]:
    """Every live profile of the database: id -> canonical record."""
    con = sqlite3.connect(str(db))
    try:
        rows = con.execute("SELECT id, record FROM profiles WHERE record IS NOT NULL").fetchall()
    finally:
        con.close()
    return {int(i): json.loads(r) for i, r in rows}


def _scaled(schema: dict[str, Any], name: str, v: float) -> int:
    places = next(a.get("places", 0) for a in schema["attributes"] if a["name"] == name)
    return round(v * 10**places)


def brute_force(schema: dict[str, Any], records: dict[int, dict[str, Any]], query: dict[str, Any], mode: str) -> list[int]:
    """The ids whose record satisfies ``query`` exactly: texts equal; subset: every query value
    or range inside the profile's range; intersect: the ranges overlap."""
    out = []
    for pid, rec in records.items():
        ok = True
        for name, q in query.items():
            if name not in rec:
                ok = False
                break
            v = rec[name]
            if isinstance(q, str):
                ok = v == q
            else:
                qa, qb = (q, q) if not isinstance(q, list) else q
                a, b = (_scaled(schema, name, x) for x in v)
                sa, sb = _scaled(schema, name, qa), _scaled(schema, name, qb)
                ok = (a <= sa and sb <= b) if mode == "subset" else (a <= sb and sa <= b)
            if not ok:
                break
        if ok:
            out.append(pid)
    return sorted(out)
