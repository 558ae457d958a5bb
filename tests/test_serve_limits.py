"""Timeouts and the connection cap of ``bloomkit serve`` (issue 26, item 3): uvicorn with the
guarded protocol of :mod:`bloomkit.serve.limits`, really listening (in a thread of this
process), against raw sockets that send their headers or bodies a byte at a time."""

from __future__ import annotations

import argparse
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

from _serve import SMALL_SCHEMA, free_port  # noqa: E402

from bloomkit.ranges import schema_from_json  # noqa: E402
from bloomkit.serve.app import create_app  # noqa: E402
from bloomkit.serve.cli import add_arguments, allowed, build_server  # noqa: E402
from bloomkit.serve.front import Guard  # noqa: E402
from bloomkit.serve.service import MatchingService  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    svc = MatchingService(tmp_path_factory.mktemp("limits") / "p.sqlite", schema_from_json(SMALL_SCHEMA),
                          snapshot_interval=0)
    port = free_port()
    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args(["--port", str(port), "--header-timeout", "0.4", "--body-timeout", "0.4", "--max-connections",
                         "16", "--keep-alive", "1"])
    origins, hosts = allowed(args.host, args.port, None)
    app = create_app(svc, guard=Guard(origins, hosts, args.body_timeout))
    srv = build_server(app, args)
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield srv, url, port
    srv.should_exit = True
    t.join(10)
    svc.close(snapshot=False)


def _slow(port: int, data: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(data)
    return s


def _answer(s: socket.socket, timeout: float = 5.0) -> bytes:
    """What the server sends until it closes the connection."""
    s.settimeout(timeout)
    out = b""
    try:
        while chunk := s.recv(4096):
            out += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return out


def test_headers_that_do_not_arrive_get_408_and_are_closed(server: Any) -> None:
    srv, url, port = server
    t0 = time.monotonic()
    s = _slow(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1")
    s.sendall(b"\r\nX-Slow: 1")  # a byte now and then does not reset the deadline
    got = _answer(s)
    assert got.startswith(b"HTTP/1.1 408") and 0.3 < time.monotonic() - t0 < 4
    s.close()
    # after a response, an idle keep-alive connection that starts a request and stalls: closed too
    s = _slow(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
    time.sleep(0.2)
    s.sendall(b"GET /healthz HTTP/1.1\r\n")
    got = _answer(s)
    assert got.startswith(b"HTTP/1.1 200") and b"408" in got.split(b"\r\n\r\n", 1)[1]
    s.close()


def test_a_body_that_does_not_arrive_gets_408(server: Any) -> None:
    _, url, port = server
    s = _slow(port, b"POST /search HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 100\r\n\r\n{\"query\"" % port)
    t0 = time.monotonic()
    got = _answer(s)
    assert got.startswith(b"HTTP/1.1 408") and b"did not arrive within 0.4 s" in got
    assert time.monotonic() - t0 < 4  # and the server closed the connection
    s.close()


def test_slow_connections_beyond_the_cap_never_starve_normal_requests(server: Any) -> None:
    srv, url, port = server
    guard = srv.bk_guard
    evicted = guard.evicted
    slow = [_slow(port, b"GET / HTTP/1.1\r\nHost: x") for _ in range(40)]  # 40 > the cap of 16
    time.sleep(0.15)
    with httpx.Client(base_url=url, timeout=5) as c:
        for _ in range(5):
            assert c.get("/healthz").status_code == 200
    assert guard.evicted - evicted >= 40 - 16 and len(guard.open) <= 16
    for s in slow:
        s.close()


def test_defaults_and_the_fd_limit() -> None:
    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args([])
    assert (args.header_timeout, args.body_timeout, args.keep_alive, args.max_connections) == (10.0, 20.0, 5.0, 4096)
    srv = build_server(create_app(MatchingService.__new__(MatchingService)), args, fd_limit=1024)
    assert srv.bk_guard.max_connections == 1024 - 64 and srv.config.timeout_keep_alive == 5
    origins, hosts = allowed("127.0.0.1", 8000, None)
    assert "http://localhost:8000" in origins and "127.0.0.1:8000" in hosts
    assert allowed("0.0.0.0", 8000, None) == (None, None)
    o, h = allowed("0.0.0.0", 80, ["https://Match.example.org", "http://10.0.0.2:8080"])
    assert o == {"https://match.example.org", "http://10.0.0.2:8080"}
    assert h == {"match.example.org", "match.example.org:443", "10.0.0.2:8080"}
    with pytest.raises(ValueError, match="origin"):
        allowed("0.0.0.0", 80, ["match.example.org"])


def test_the_command_refuses_bad_limits(tmp_path: Path) -> None:
    from bloomkit.cli import main

    for bad in (["--header-timeout", "0"], ["--body-timeout", "-1"], ["--max-connections", "0"],
                ["--model-profiles", "0"], ["--origin", "ftp://x"]):
        assert main(["serve", "--demo", "--db", str(tmp_path / "d.sqlite"), *bad]) == 2
