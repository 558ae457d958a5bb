"""Benchmark of ``bloomkit serve`` (issue 16) against a running server.

1. Fill a database with N generated profiles of the report's Table 1 attributes (through
   :class:`bloomkit.serve.MatchingService` in this process: the same group-commit writer the
   HTTP API uses), then start ``bloomkit serve`` (the installed command, uvicorn) on it.
2. Start-up: from the database (snapshot removed: the index is rebuilt) and from the snapshot
   (written at the previous shutdown); time until ``/healthz`` answers, and the server's own
   ``startup.seconds`` (schema design + index load).
3. Memory: the server's RSS against the index + records it reports (``/stats``), and the RSS
   of the same server on an empty database (the runtime's share: Python, numba, pyarrow, ...).
4. Search: 4-attribute queries (a point and three small ranges, ``verify`` on) sent open-loop
   at each of ``--rates`` requests/s for ``--seconds`` (latency measured from each request's scheduled
   time, so queueing counts), after a warm-up, ``--repeats`` times: p50 / p99 / achieved rate,
   the server's CPU time per request and the load average.
5. Publish: ``--clients`` concurrent keep-alive connections posting new profiles for
   ``--seconds``: profiles/s acknowledged (each acknowledged after its commit), CPU per profile.

6. Correctness: ``--queries`` random queries (half derived from stored profiles, so they match
   something; both modes) against a brute-force scan of the database (numpy over every record):
   no false negatives without verify, exactly the brute-force answer with verify.

Issue 26 and 27 phases (not in the default ``--phases``; ``--phases ops`` runs the four):

7. ``lock``: a second ``bloomkit serve`` on the running server's database: its exit status,
   its one line and the seconds until it exits; the first server still answers.
8. ``churn``: two servers with 8 profiles; index + records + maps (``/stats``) and search p50
   (closed loop, ``--churn-searches`` searches, both servers alternately) at 8 profiles, then
   ``--updates`` PUTs to one of them by 8 owners (one connection each, each updating its own
   profile), then the same measures: memory against before, p50 against the untouched server.
9. ``slow``: ``--slow`` connections that send their request headers one byte a second (and
   reconnect when the server closes them: its header timeout) held open while searches are
   sent open-loop at ``--slow-rate`` requests/s for ``--seconds``: p50 / p99 / errors.
10. ``calibration``: ``bloomkit serve --demo --demo-profiles N`` (Table 1 profiles in northern
   Taiwan) and ``--calibration-searches`` random searches per mode (an Age point or range, a
   0.01-degree Latitude range or point, verify on): the false candidates observed (candidates -
   matches) against the sum of the service's ``expected_false_candidates``.

``--phases`` runs a subset (e.g. ``--phases search --dir D`` on the database a previous run
left in ``D``).

    python benchmarks/bench_serve.py --profiles 1000000     # the issue's targets
    python benchmarks/bench_serve.py --quick                 # 20,000 profiles, short phases

The load generator is a minimal asyncio HTTP/1.1 client (uvloop when installed; bodies encoded
ahead; keep-alive, no parsing beyond status and Content-Length) running on the same 2-core
machine as the server: both share the cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bloomkit._bench import markdown_table, versions, write_results
from bloomkit.serve import MatchingService
from bloomkit.serve.demo import table1_profiles, table1_schema

NUMERIC = ("Age", "Year", "Income", "Longitude", "Latitude")
FILL_STEP = 100_000
PLACES = {"Age": 0, "Year": 0, "Income": 0, "Longitude": 4, "Latitude": 4}


# -- a small HTTP/1.1 client ----------------------------------------------------------------------
class Conn:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    async def open(self) -> Conn:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=1 << 22)
        return self

    async def request(self, method: str, path: str, payload: Any = None) -> tuple[int, bytes]:
        """``payload``: JSON-able, or bytes sent as they are (encoded ahead: less client CPU)."""
        body = b"" if payload is None else payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        self.writer.write(head + body)
        status = int((await self.reader.readline()).split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


# -- the server ---------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, db: Path, schema: Path, log: Path, extra: list[str]) -> None:
        self.port = free_port()
        exe = str(Path(sys.executable).with_name("bloomkit"))
        self.cmd = [exe, "serve", "--db", str(db), "--schema", str(schema), "--port", str(self.port), *extra]
        self.log = log

    def start(self) -> float:
        t0 = time.perf_counter()
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(self.cmd, stdout=fh, stderr=subprocess.STDOUT)
        while True:
            if self.proc.poll() is not None:
                raise SystemExit(f"server exited: {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                time.sleep(0.05)
        return time.perf_counter() - t0

    def get(self, path: str) -> Any:
        async def go() -> Any:
            c = await Conn("127.0.0.1", self.port).open()
            st, body = await c.request("GET", path)
            c.close()
            return json.loads(body)
        return arun(go())

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the server process has used so far."""
        with open(f"/proc/{self.proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(600)


# -- load ---------------------------------------------------------------------------------------
def arun(coro: Any) -> Any:
    """Run a coroutine on uvloop when it is installed (a cheaper client: it shares the cores)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def query4(rec: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A 4-attribute query (a point and three small ranges) inside profile ``rec``."""
    age, inc, lon, lat = rec["Age"], rec["Income"], rec["Longitude"], rec["Latitude"]
    o = int(rng.integers(0, 10))
    return {"Age": age[0] + o % (age[1] - age[0] + 1),
            "Income": [inc[0] + 100, inc[0] + 150],
            "Longitude": [round(lon[0] + 0.001, 4), round(lon[0] + 0.003, 4)],
            "Latitude": [round(lat[0] + 0.002, 4), round(lat[0] + 0.004, 4)]}


def random_query(rng: np.random.Generator) -> dict[str, Any]:
    age = int(rng.integers(1, 118))
    inc = int(rng.integers(0, 4900))
    lon = int(rng.integers(-1_800_000, 1_799_000))
    lat = int(rng.integers(-900_000, 899_000))
    return {"Age": [age, age + 2], "Income": [inc, inc + 50], "Longitude": [lon / 1e4, (lon + 30) / 1e4],
            "Latitude": [lat / 1e4, (lat + 30) / 1e4]}


async def open_loop(port: int, bodies: list[bytes], rate: float, seconds: float, conns: int) -> dict[str, Any]:
    """Send ``rate`` searches/s for ``seconds`` over ``conns`` connections (open loop)."""
    pool = [await Conn("127.0.0.1", port).open() for _ in range(conns)]
    free: asyncio.Queue[Conn] = asyncio.Queue()
    for c in pool:
        free.put_nowait(c)
    n = int(rate * seconds)
    lat: list[float] = []
    errors = 0
    t0 = time.perf_counter() + 0.05

    async def one(i: int) -> None:
        nonlocal errors
        sched = t0 + i / rate
        c = await free.get()
        try:
            st, _ = await c.request("POST", "/search", bodies[i % len(bodies)])
            errors += st != 200
        finally:
            free.put_nowait(c)
        lat.append(time.perf_counter() - sched)

    tasks = []
    for i in range(n):
        delay = t0 + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i)))
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    for c in pool:
        c.close()
    a = np.array(lat) * 1e3
    return {"requests": n, "p50_ms": float(np.percentile(a, 50)), "p99_ms": float(np.percentile(a, 99)),
            "max_ms": float(a.max()), "achieved_rps": n / wall, "errors": errors}


async def publish_load(port: int, profiles: list[dict[str, Any]], seconds: float, clients: int,
                       batch: int = 1) -> dict[str, Any]:
    """``clients`` connections publishing for ``seconds``: one profile per ``POST /profiles``
    (``batch`` = 1) or ``batch`` per ``POST /profiles/batch``."""
    if batch == 1:
        bodies = [json.dumps({"attributes": p}).encode() for p in profiles]
    else:
        bodies = [json.dumps({"profiles": [{"attributes": p} for p in profiles[lo:lo + batch]]}).encode()
                  for lo in range(0, len(profiles) - batch + 1, batch)]
    conns = [await Conn("127.0.0.1", port).open() for _ in range(clients)]
    done = 0
    errors = 0
    stop = time.perf_counter() + seconds
    it = iter(bodies)
    path = "/profiles" if batch == 1 else "/profiles/batch"

    async def worker(c: Conn) -> None:
        nonlocal done, errors
        for body in it:
            if time.perf_counter() >= stop:
                return
            st, _ = await c.request("POST", path, body)
            done += batch * (st == 201)
            errors += st != 201

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in conns))
    wall = time.perf_counter() - t0
    for c in conns:
        c.close()
    return {"clients": clients, "batch": batch, "published": done, "seconds": wall, "profiles_per_s": done / wall, "errors": errors}


def empty_rss(work: Path, schema: Path) -> float:
    """RSS (MB) of ``bloomkit serve`` on an empty database of the schema after one publish and
    one search (the kernels these use compiled): the runtime without profiles."""
    db = work / "empty.sqlite"
    for f in work.glob("empty.sqlite*"):
        f.unlink()
    srv = Server(db, schema, work / "serve-empty.log", ["--snapshot-interval", "0"])
    srv.start()

    async def go() -> None:
        c = await Conn("127.0.0.1", srv.port).open()
        await c.request("POST", "/profiles", {"attributes": table1_profiles(1, seed=3)[0]})
        await c.request("POST", "/search", {"query": {"Age": 30}})
        c.close()

    arun(go())
    rss = srv.rss_mb()
    srv.stop()
    return rss


# -- brute force --------------------------------------------------------------------------------
class Scan:
    """Every live record of the database as numpy columns (scaled integers, texts)."""

    def __init__(self, db: Path) -> None:
        con = sqlite3.connect(str(db))
        rows = con.execute("SELECT id, record FROM profiles WHERE record IS NOT NULL ORDER BY id").fetchall()
        con.close()
        self.ids = np.array([r[0] for r in rows], dtype=np.int64)
        recs = [json.loads(r[1]) for r in rows]
        self.lo = {n: np.array([round(r[n][0] * 10 ** PLACES[n]) for r in recs], dtype=np.int64) for n in NUMERIC}
        self.hi = {n: np.array([round(r[n][1] * 10 ** PLACES[n]) for r in recs], dtype=np.int64) for n in NUMERIC}

    def match(self, q: dict[str, Any], mode: str) -> list[int]:
        ok = np.ones(self.ids.size, dtype=bool)
        for n, v in q.items():
            a, b = (v, v) if not isinstance(v, list) else v
            sa, sb = round(a * 10 ** PLACES[n]), round(b * 10 ** PLACES[n])
            lo, hi = self.lo[n], self.hi[n]
            ok &= ((lo <= sa) & (sb <= hi)) if mode == "subset" else ((lo <= sb) & (sa <= hi))
        return self.ids[ok].tolist()


async def correctness(port: int, scan: Scan, queries: list[dict[str, Any]]) -> dict[str, Any]:
    c = await Conn("127.0.0.1", port).open()
    fn = fp = nonempty = 0
    cand = []
    for q in queries:
        for mode in ("subset", "intersect"):
            truth = scan.match(q, mode)
            st1, b1 = await c.request("POST", "/search", {"query": q, "mode": mode, "verify": False, "limit": 10_000})
            st2, b2 = await c.request("POST", "/search", {"query": q, "mode": mode, "verify": True, "limit": 10_000})
            assert st1 == st2 == 200, (b1, b2)
            loose, exact = json.loads(b1), json.loads(b2)
            fn += len(set(truth) - set(loose["ids"]))
            fp += exact["ids"] != truth
            nonempty += bool(truth)
            cand.append(loose["candidates"] - len(truth))
    c.close()
    return {"queries": len(queries), "modes": 2, "false_negatives": fn, "verified_mismatches": fp,
            "queries_with_matches": nonempty, "mean_false_candidates": float(np.mean(cand))}


# -- issue 26 / 27 phases --------------------------------------------------------------------------
def second_server(srv: Server, db: Path, schema: Path) -> dict[str, Any]:
    """A second server on ``srv``'s database: exit status, its line, seconds to exit."""
    exe = str(Path(sys.executable).with_name("bloomkit"))
    t0 = time.perf_counter()
    r = subprocess.run([exe, "serve", "--db", str(db), "--schema", str(schema), "--port", str(free_port())],
                       capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - t0
    healthy = srv.get("/healthz")["status"] == "ok"
    return {"phase": "second server on the same database", "exit_status": r.returncode, "refused_in_s": took,
            "first_server_ok": healthy, "line": r.stderr.strip().splitlines()[-1][:160] if r.stderr.strip() else ""}


async def closed_loop_p50(port: int, bodies: list[bytes], n: int) -> float:
    c = await Conn("127.0.0.1", port).open()
    lat = []
    for i in range(n):
        t0 = time.perf_counter()
        st, _ = await c.request("POST", "/search", bodies[i % len(bodies)])
        lat.append(time.perf_counter() - t0)
        assert st == 200
    c.close()
    return float(np.median(lat) * 1e3)


async def updates(port: int, owners: list[tuple[int, str]], total: int) -> dict[str, Any]:
    """``total`` PUTs by the owners, one connection each, each updating its own profile (to
    another generated profile: the attributes keep their distribution)."""
    per = total // len(owners)
    fresh = table1_profiles(per * len(owners), seed=11)

    async def owner(i: int, pid: int, token: str) -> int:
        r, w = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        ok = 0
        for j in range(per):
            body = json.dumps({"attributes": fresh[j * len(owners) + i]}).encode()
            w.write(f"PUT /profiles/{pid} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                    f"Authorization: Bearer {token}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            status = int((await r.readline()).split()[1])
            length = 0
            while (line := await r.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await r.readexactly(length)
            ok += status == 200
        w.close()
        return ok

    t0 = time.perf_counter()
    done = sum(await asyncio.gather(*(owner(i, p, t) for i, (p, t) in enumerate(owners))))
    return {"updates": done, "seconds": time.perf_counter() - t0}


def churn(work: Path, schema: Path, n_updates: int, n_searches: int) -> list[dict[str, Any]]:
    """Two servers of 8 profiles: one gets ``n_updates`` PUTs, the other (the reference) none;
    memory and search p50 of both, before and after, measured alternately (the machine's load
    changes meanwhile: the churned / reference ratio is what compares)."""
    servers = {}
    owners = {}
    for name in ("churned", "reference"):
        db = work / f"{name}.sqlite"
        for f in work.glob(f"{name}.sqlite*"):
            f.unlink()
        srv = servers[name] = Server(db, schema, work / f"serve-{name}.log", ["--snapshot-interval", "60"])
        srv.start()

        async def publish8(port: int) -> list[tuple[int, str]]:
            c = await Conn("127.0.0.1", port).open()
            out = []
            for p in table1_profiles(8, seed=5):
                st, body = await c.request("POST", "/profiles", {"attributes": p})
                out.append((json.loads(body)["id"], json.loads(body)["token"]))
            c.close()
            return out

        owners[name] = arun(publish8(srv.port))
    rng = np.random.default_rng(3)
    bodies = [json.dumps({"query": {"Age": int(rng.integers(1, 120)), "University": "NTHU"}, "verify": True}).encode()
              for _ in range(200)]
    for srv in servers.values():
        arun(closed_loop_p50(srv.port, bodies, 500))  # warm-up

    def measure(label: str) -> dict[str, Any]:
        p50: dict[str, list[float]] = {n: [] for n in servers}
        for _ in range(5):
            for n, srv in servers.items():
                p50[n].append(arun(closed_loop_p50(srv.port, bodies, n_searches)))
        srv = servers["churned"]
        st = srv.get("/stats")
        m = st["memory"]
        churned, ref = statistics.median(p50["churned"]), statistics.median(p50["reference"])
        return {"phase": f"churn: {label}", "profiles": st["profiles"],
                "index_records_maps_bytes": m["index_bytes"] + m["records_bytes"] + m["maps_bytes"],
                "slots": m["slots"], "compactions": m["compactions"], "search_p50_ms": churned,
                "reference_p50_ms": ref, "p50_over_reference": churned / ref, "rss_mb": srv.rss_mb(),
                "reference_rss_mb": servers["reference"].rss_mb(), "load_1min": os.getloadavg()[0]}

    arun(updates(servers["churned"].port, owners["churned"], 2000))  # warm-up: the first compactions
    before = measure("8 profiles (after 2,000 warm-up updates)")
    up = arun(updates(servers["churned"].port, owners["churned"], n_updates))
    after = measure(f"after {up['updates']} more updates ({up['updates'] / up['seconds']:.0f}/s)")
    after["memory_ratio"] = after["index_records_maps_bytes"] / before["index_records_maps_bytes"]
    after["p50_ratio_vs_before"] = after["p50_over_reference"] / before["p50_over_reference"]
    for srv in servers.values():
        srv.stop()
    return [before, after]


async def slow_connections(port: int, n: int, seconds: float) -> dict[str, int]:
    """``n`` connections sending request headers a byte a second, reopened when the server
    closes them (its header timeout), for ``seconds``."""
    counts = {"opened": 0, "closed_by_server": 0}
    stop = time.perf_counter() + seconds
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100_000

    async def one(delay: float) -> None:
        await asyncio.sleep(delay)
        while time.perf_counter() < stop:
            try:
                r, w = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.5)
                continue
            counts["opened"] += 1
            closed = asyncio.ensure_future(r.read())  # data or EOF: the server gave up on us
            for b in head:
                if time.perf_counter() >= stop or closed.done():
                    break
                try:
                    w.write(bytes([b]))
                except (ConnectionError, OSError, RuntimeError):
                    break
                await asyncio.wait([closed], timeout=1.0)
            counts["closed_by_server"] += closed.done()
            closed.cancel()
            w.close()

    await asyncio.gather(*(one(i * 1.0 / n) for i in range(n)))  # connected within the first second
    return counts


def _slow_process(port: int, n: int, seconds: float, out: Any) -> None:
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass
    out.put(arun(slow_connections(port, n, seconds)))


def slow_phase(port: int, bodies: list[bytes], n: int, rate: float, seconds: float) -> dict[str, Any]:
    """Search latency at ``rate`` with ``n`` slow connections held by another process (the
    measuring client's event loop is not the one juggling them)."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_slow_process, args=(port, n, seconds + 5.0, out))
    proc.start()
    time.sleep(4.0)  # all of them connected and trickling
    r = arun(open_loop(port, bodies, rate, seconds, 4))
    counts = out.get(timeout=seconds + 120)
    proc.join(30)
    return {**r, **counts}


def calibration(work: Path, profiles: int, searches: int) -> list[dict[str, Any]]:
    """The service's expected false candidates against the observed, on --demo data."""
    db = work / f"demo{profiles}.sqlite"
    exe = str(Path(sys.executable).with_name("bloomkit"))
    srv = Server(db, work / "unused.json", work / "serve-demo.log", [])
    srv.cmd = [exe, "serve", "--demo", "--demo-profiles", str(profiles), "--db", str(db), "--port", str(srv.port)]
    srv.start()
    while True:
        try:
            if srv.get("/healthz")["profiles"] >= profiles:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(1.0)
    rng = np.random.default_rng(27)
    rows = []

    async def go(mode: str) -> dict[str, Any]:
        c = await Conn("127.0.0.1", srv.port).open()
        obs = exp = var = 0.0
        trials = 0
        for _ in range(searches):
            age = int(rng.integers(1, 115))
            lat = int(rng.integers(246_000, 253_000))
            q = {"Age": age if rng.random() < 0.5 else [age, age + int(rng.integers(1, 6))],
                 "Latitude": [lat / 1e4, (lat + 99) / 1e4] if rng.random() < 0.75 else lat / 1e4}
            st, body = await c.request("POST", "/search", {"query": q, "mode": mode, "verify": True, "limit": 1})
            b = json.loads(body)
            obs += b["candidates"] - b["matches"]
            exp += b["expected_false_candidates"]
            var += b["model"]["sd"] ** 2
            trials += b["model"]["nonmatching"]
        c.close()
        return {"phase": f"calibration, {mode}", "profiles": profiles, "searches": searches,
                "observed_false_candidates": int(obs), "expected": exp, "trials": trials, "ratio": obs / exp,
                "poisson_sd_of_ratio": var**0.5 / exp}

    for mode in ("subset", "intersect"):
        rows.append(arun(go(mode)))
    srv.stop()
    return rows


def fill(db: Path, n: int, seed: int) -> float:
    """Publish ``n`` profiles through the service's group-commit writer; profiles/s."""
    svc = MatchingService(db, table1_schema(), snapshot_interval=3600)
    t0 = time.perf_counter()
    for lo in range(0, n, FILL_STEP):
        futs = [svc.publish(p) for p in table1_profiles(min(FILL_STEP, n - lo), seed + lo)]
        for f in futs:
            f.result()
    rate = n / (time.perf_counter() - t0)
    svc.close()  # writes the snapshot
    return rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profiles", type=int, default=100_000)
    ap.add_argument("--rates", default="500", help="search rates (requests/s), comma-separated")
    ap.add_argument("--phases", default="startup,memory,search,correctness,publish",
                    help="comma-separated subset of startup,memory,search,correctness,publish (default: all)")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--conns", type=int, default=32, help="connections of the search load")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--updates", type=int, default=100_000, help="PUTs of the churn phase")
    ap.add_argument("--churn-searches", type=int, default=500)
    ap.add_argument("--slow", type=int, default=1000, help="slow connections of the slow phase")
    ap.add_argument("--slow-rate", type=float, default=50.0)
    ap.add_argument("--calibration-profiles", type=int, default=100_000)
    ap.add_argument("--calibration-searches", type=int, default=1000)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one)")
    ap.add_argument("--out", default="benchmarks/results")
    args = ap.parse_args()
    if args.quick:
        args.profiles, args.seconds, args.repeats, args.queries = 20_000, 3.0, 1, 200
        args.updates, args.calibration_profiles, args.calibration_searches = 20_000, 20_000, 200
    try:  # the slow phase holds --slow connections open from this process
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass
    work = Path(args.dir or tempfile.mkdtemp(prefix="bench_serve_"))
    work.mkdir(parents=True, exist_ok=True)
    db, schema = work / "profiles.sqlite", work / "table1.json"
    schema.write_text(json.dumps(table1_schema().to_json()))
    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(7)

    t0 = time.perf_counter()
    if not db.exists():
        rate = fill(db, args.profiles, seed=1)
        rows.append({"phase": "fill (in-process writer)", "profiles": args.profiles, "profiles_per_s": rate,
                     "seconds": time.perf_counter() - t0})
    snap = Path(f"{db}.snapshot")
    keep = b""

    # start-up from the database (no snapshot), then from the snapshot that start wrote
    starts: dict[str, list[dict[str, Any]]] = {"database": [], "snapshot": []}
    phases = set(args.phases.replace("ops", "lock,churn,slow,calibration").split(","))
    for how in ("database", "snapshot", "database", "snapshot") if "startup" in phases else ():
        if how == "database":
            snap.unlink(missing_ok=True)
        else:
            snap.write_bytes(keep)
        srv = Server(db, schema, work / "serve.log", ["--snapshot-interval", "3600"])
        wall = srv.start()
        st = srv.get("/stats")
        assert st["startup"]["source"] == how, st["startup"]
        starts[how].append({"wall_s": wall, "server_s": st["startup"]["seconds"]})
        while how == "database" and srv.get("/stats")["snapshot"]["written"] < 1:  # written after a rebuild
            time.sleep(0.5)
        srv.proc.send_signal(signal.SIGKILL)  # no shutdown snapshot: keep the one we control
        srv.proc.wait()
        if how == "database":
            keep = snap.read_bytes()
    for how, runs in starts.items():
        if not runs:
            continue
        rows.append({"phase": f"start-up from {how}", "profiles": args.profiles,
                     "wall_s_median": statistics.median(r["wall_s"] for r in runs),
                     "server_s_median": statistics.median(r["server_s"] for r in runs),
                     "runs": json.dumps([round(r["wall_s"], 2) for r in runs])})

    srv = Server(db, schema, work / "serve.log", ["--snapshot-interval", "3600"])
    srv.start()
    if "lock" in phases:
        rows.append(second_server(srv, db, schema))
        print(markdown_table(rows[-1:]), flush=True)
    st = srv.get("/stats")
    mem = st["memory"]
    payload = mem["index_bytes"] + mem["records_bytes"]
    rss = srv.rss_mb()
    rows.append({"phase": "memory", "profiles": st["profiles"], "rss_mb": rss, "index_mb": mem["index_bytes"] / 2**20,
                 "records_mb": mem["records_bytes"] / 2**20, "maps_mb": mem["maps_bytes"] / 2**20,
                 "rss_over_index_records": rss * 2**20 / payload})
    if "memory" in phases:  # the same server with no profiles: the runtime's own share of the RSS
        empty = empty_rss(work, schema)
        rows.append({"phase": "memory of an empty server (one publish, one search)", "rss_mb": empty,
                     "rss_minus_empty_over_index_records": (rss - empty) * 2**20 / payload})
    print(markdown_table(rows), flush=True)

    def timed(coro: Any, count: str) -> dict[str, Any]:
        """The load's result with the server's CPU time per request (or profile) and the load average."""
        c0 = srv.cpu_s()
        r: dict[str, Any] = arun(coro)
        r["server_cpu_ms_each"] = (srv.cpu_s() - c0) * 1e3 / max(r[count], 1)
        r["load_1min"] = os.getloadavg()[0]
        return r

    # search load
    sample = table1_profiles(min(FILL_STEP, args.profiles), seed=1)[:2000]  # the first chunk fill published
    bodies = [json.dumps({"query": query4(p, rng), "mode": "subset", "verify": True, "limit": 100}).encode()
              for p in sample]
    if "search" in phases:
        arun(open_loop(srv.port, bodies, 100.0, 2.0, args.conns))  # warm-up
    for rate in [float(x) for x in args.rates.split(",")] if "search" in phases else []:
        runs = [timed(open_loop(srv.port, bodies, rate, args.seconds, args.conns), "requests") for _ in range(args.repeats)]
        for i, r in enumerate(runs):
            rows.append({"phase": f"search 4 attrs verify, {rate:g}/s, run {i + 1}", "profiles": st["profiles"], **r})
        rows.append({"phase": f"search {rate:g}/s (median of runs)", "profiles": st["profiles"],
                     "p50_ms": statistics.median(r["p50_ms"] for r in runs),
                     "p99_ms": statistics.median(r["p99_ms"] for r in runs),
                     "achieved_rps": statistics.median(r["achieved_rps"] for r in runs)})
        print(markdown_table(rows[-len(runs) - 1:]), flush=True)
    if "memory" in phases and "search" in phases:
        rows.append({"phase": "memory after the searches", "profiles": st["profiles"], "rss_mb": srv.rss_mb(),
                     "rss_over_index_records": srv.rss_mb() * 2**20 / payload})

    if "slow" in phases:
        for n_slow in (0, args.slow):  # the same load without, then with the slow connections
            c0 = srv.cpu_s()
            r = slow_phase(srv.port, bodies, n_slow, args.slow_rate, args.seconds) if n_slow else \
                arun(open_loop(srv.port, bodies, args.slow_rate, args.seconds, 4))
            r["server_cpu_ms_each"] = (srv.cpu_s() - c0) * 1e3 / r["requests"]
            r["load_1min"] = os.getloadavg()[0]
            rows.append({"phase": f"search {args.slow_rate:g}/s with {n_slow} slow connections",
                         "profiles": st["profiles"], **r})
        print(markdown_table(rows[-2:]), flush=True)

    # correctness against the database
    if "correctness" in phases:
        scan = Scan(db)
        queries = [query4(sample[int(rng.integers(len(sample)))], rng) if i % 2 else random_query(rng)
                   for i in range(args.queries)]
        rows.append({"phase": "correctness vs brute force", "profiles": int(scan.ids.size),
                     **arun(correctness(srv.port, scan, queries))})
        print(markdown_table(rows[-1:]), flush=True)

    # publish throughput
    fresh = iter(table1_profiles(int(args.seconds * 20_000 * (args.repeats + 1) * 2), seed=10**9))
    for clients, batch in ((args.clients, 1), (4, 250)) if "publish" in phases else ():
        w0 = srv.get("/stats")["writes"]
        take = [next(fresh) for _ in range(2000)]
        arun(publish_load(srv.port, take, 1.0, clients, batch))  # warm-up
        pubs = []
        for _ in range(args.repeats):
            take = [next(fresh) for _ in range(int(args.seconds * 20_000))]
            pubs.append(timed(publish_load(srv.port, take, args.seconds, clients, batch), "published"))
        for i, r in enumerate(pubs):
            rows.append({"phase": f"publish, {clients} clients x {batch} per request, run {i + 1}", **r})
        w1 = srv.get("/stats")["writes"]
        rows.append({"phase": f"publish {batch} per request (median of runs)",
                     "profiles_per_s": statistics.median(r["profiles_per_s"] for r in pubs),
                     "mean_batch": (w1["writes"] - w0["writes"]) / max(w1["batches"] - w0["batches"], 1),
                     "largest_batch": w1["largest_batch"]})
        print(markdown_table(rows[-len(pubs) - 1:]), flush=True)
    srv.stop()
    if "churn" in phases:
        rows += churn(work, schema, args.updates, args.churn_searches)
        print(markdown_table(rows[-2:]), flush=True)
    if "calibration" in phases:
        rows += calibration(work, args.calibration_profiles, args.calibration_searches)
        print(markdown_table(rows[-2:]), flush=True)

    meta = {"profiles": args.profiles, "rates": args.rates, "seconds": args.seconds, "repeats": args.repeats,
            "clients": args.clients, "conns": args.conns, "load": os.getloadavg(),
            "note": "server and load generator share this 2-core machine (and other jobs run on it)",
            "versions": versions(["bloomkit", "numpy", "numba", "fastapi", "uvicorn", "starlette", "pydantic", "orjson", "uvloop"])}
    path = write_results(f"bench_serve_{args.profiles}", rows, meta, args.out)
    print(markdown_table(rows))
    print(f"results: {path}")


if __name__ == "__main__":
    main()
