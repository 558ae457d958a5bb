"""``bloomkit serve``: arguments and start-up (imported by :mod:`bloomkit.cli`; FastAPI and
uvicorn are imported only when the command runs).

Synopsis::

    bloomkit serve --db PATH --schema SCHEMA.json [--host 127.0.0.1] [--port 8000] [options]
    bloomkit serve --demo [--db bloomkit-demo.sqlite] [--demo-profiles 10000] [options]

Start-up takes the database's lock first (:mod:`.lock`: a second server on the same database
or snapshot stops here, in well under a second, naming the holder) and checks that the port
is free, before the heavy imports. A bad schema file, a database of another schema, a
database that cannot be opened or holds a damaged row, a port in use or a missing ``serve``
extra print one line ``bloomkit: error: ...`` and exit with status 2 (raised as BloomkitError
/ OSError, which :func:`bloomkit.cli.main` turns into that line).
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._engine.lazy import extra_hint
from ..errors import BloomkitError, InvalidParameterError

__all__ = ["add_arguments", "allowed", "run"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class ServeError(BloomkitError):
    """The service cannot start (one line for the user)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``bloomkit serve``."""
    p.add_argument("--db", help="the SQLite database (created if missing; default with --demo: bloomkit-demo.sqlite)")
    p.add_argument("--schema", help="the schema file (JSON: num_bits, attributes with min/max/places/typical_range)")
    p.add_argument("--demo", action="store_true",
                   help="Table 1 of the report as the schema; fill an empty database with generated profiles")
    p.add_argument("--demo-profiles", type=int, default=10_000, help="profiles --demo generates (default 10000)")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every interface)")
    p.add_argument("--port", type=int, default=8000, help="the TCP port to listen on (default 8000)")
    p.add_argument("--origin", action="append", metavar="URL",
                   help="an origin the page is served from, e.g. https://match.example.org (repeatable): "
                        "writes from other origins are refused (403) and requests naming another Host get 421. "
                        "Default: http://127.0.0.1:PORT, http://localhost:PORT when listening on loopback; "
                        "otherwise same-origin writes by the request's Host")
    p.add_argument("--snapshot", help="the snapshot file (default: <db>.snapshot)")
    p.add_argument("--snapshot-interval", type=float, default=60.0,
                   help="seconds between snapshots while writes arrive (0: no snapshots; default 60)")
    p.add_argument("--max-body", type=int, default=None, help="largest request body in bytes (default 1 MiB; larger bodies get 413)")
    p.add_argument("--header-timeout", type=float, default=10.0,
                   help="seconds a connection may take to send its request headers (then 408, closed; default 10)")
    p.add_argument("--body-timeout", type=float, default=20.0,
                   help="seconds a request may take to send its body after the headers (then 408, closed; default 20)")
    p.add_argument("--keep-alive", type=float, default=5.0,
                   help="seconds an idle keep-alive connection stays open (default 5)")
    p.add_argument("--max-connections", type=int, default=4096,
                   help="open connections at most (default 4096, and below the open-files limit): beyond it the "
                        "connection waiting longest for its headers is closed")
    p.add_argument("--model-profiles", type=int, default=None,
                   help="profiles the per-query model prices exactly (default 65536; a larger index prices a sample of about "
                        "as many: its cost stays near the search's)")
    p.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])


def _host_names(host: str, port: int) -> set[str]:
    """The Host headers of a loopback server: its names with the port, and without (clients
    that leave out a port they should send; no other site can name this machine so)."""
    return {f"{h}:{port}" for h in LOOPBACK_NAMES} | set(LOOPBACK_NAMES)


def allowed(host: str, port: int, origins: list[str] | None) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """(allowed origins, allowed Host headers) of a server on ``host:port`` given ``--origin``
    values: the origins given (and their hosts); by default the loopback names when listening
    on loopback, else None (no Host check, writes same-origin by the request's Host)."""
    if origins:
        clean, hosts = set(), set()
        for o in origins:
            u = urlsplit(o)
            if u.scheme not in ("http", "https") or not u.netloc or u.path not in ("", "/") or u.query or u.fragment:
                raise InvalidParameterError(f"--origin must be an origin like https://match.example.org or "
                                            f"http://127.0.0.1:8000. Got {o!r} instead.")
            clean.add(f"{u.scheme}://{u.netloc.lower()}")
            hosts.add(u.netloc.lower())
            default = {"http": 80, "https": 443}[u.scheme]
            if u.port is None:
                hosts.add(f"{u.netloc.lower()}:{default}")
            elif u.port == default:
                hosts.add(u.netloc.lower().rsplit(":", 1)[0])
        return frozenset(clean), frozenset(hosts)
    try:
        loop = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loop = False
    if loop:
        names = _host_names(host, port)
        return frozenset(f"http://{n}" for n in names if n.endswith(f":{port}") or port == 80), frozenset(names)
    return None, None


def _check_port(host: str, port: int) -> None:
    """A clear line now if the port is taken (uvicorn would log and exit 1 after start-up)."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise ServeError(f"--host {host!r} is not an address of this machine ({e.strerror})") from None
    fam, _, _, _, addr = infos[0]
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            raise ServeError(f"cannot listen on {host}:{port}: {e.strerror or e}; stop what uses that port, or "
                             "choose another with --port") from None


def _protocol_base() -> type:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:  # pragma: no cover - the serve extra installs httptools
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol


def build_server(app: Any, args: argparse.Namespace, *, fd_limit: int | None = None) -> Any:
    """The uvicorn server of ``app`` with the connection limits of ``args`` (:mod:`.limits`)."""
    import uvicorn

    from .limits import ConnectionGuard, guarded_protocol, raise_fd_limit

    soft = raise_fd_limit() if fd_limit is None else fd_limit
    cap = args.max_connections if not soft else max(16, min(args.max_connections, soft - 64))
    guard = ConnectionGuard(cap, args.header_timeout)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False,
                            http=guarded_protocol(_protocol_base(), guard), timeout_keep_alive=max(1, round(args.keep_alive)))
    server = uvicorn.Server(config)
    server.bk_guard = guard  # type: ignore[attr-defined]
    return server


def _check_extra() -> None:
    """The serve extra's web stack is installed (found, not imported: the lock comes first), or
    ServeError naming the extra, before a database is opened or demo profiles are built."""
    import importlib.util

    for module in ("uvicorn", "fastapi"):
        try:
            found = sys.modules.get(module, True) is not None and importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ServeError(f"bloomkit serve needs the 'serve' extra ({extra_hint('serve')}): "
                             f"No module named {module!r}")


def run(args: argparse.Namespace) -> int:
    """Start the service and serve until interrupted (SIGINT / SIGTERM); returns 0."""
    if args.demo == bool(args.schema):
        raise InvalidParameterError("bloomkit serve needs exactly one of --schema FILE and --demo")
    if args.db is None and not args.demo:
        raise InvalidParameterError("bloomkit serve needs --db PATH (the SQLite database)")
    if not 0 <= args.port <= 65535:
        raise InvalidParameterError(f"--port must be in 0..65535. Got {args.port} instead.")
    for name in ("header_timeout", "body_timeout", "keep_alive"):
        v = getattr(args, name)
        if not 0 < v <= 86400:
            raise InvalidParameterError(f"--{name.replace('_', '-')} must be in (0, 86400] seconds. Got {v} instead.")
    if args.max_connections < 1:
        raise InvalidParameterError(f"--max-connections must be at least 1. Got {args.max_connections} instead.")
    if args.model_profiles is not None and args.model_profiles < 1:
        raise InvalidParameterError(f"--model-profiles must be at least 1. Got {args.model_profiles} instead.")
    _check_extra()
    origins, hosts = allowed(args.host, args.port, args.origin)
    db = Path(args.db or "bloomkit-demo.sqlite")
    snap = Path(args.snapshot) if args.snapshot else Path(f"{db}.snapshot")
    from .lock import ServeLock, holder_info

    url = f"http://{args.host}:{args.port}/"
    lock = ServeLock(db, snap, holder_info(url))  # first: a second server stops here, naming the holder
    try:
        _check_port(args.host, args.port)
        return _serve(args, db, snap, lock, origins, hosts, url)
    finally:
        lock.release()  # (the service releases it at close; this covers a failed start)


def _serve(args: argparse.Namespace, db: Path, snap: Path, lock: Any, origins: frozenset[str] | None,
           hosts: frozenset[str] | None, url: str) -> int:
    try:
        from .app import DEFAULT_MAX_BODY, create_app
    except ImportError as e:
        raise ServeError(f"bloomkit serve needs the 'serve' extra ({extra_hint('serve')}): {e}") from None
    from ..ranges import schema_from_file
    from .demo import table1_profiles, table1_schema
    from .front import Guard
    from .service import MODEL_PROFILES, MatchingService

    schema_file = table1_schema() if args.demo else schema_from_file(args.schema)
    t0 = time.perf_counter()
    service = MatchingService(db, schema_file, snapshot_path=snap, snapshot_interval=args.snapshot_interval, lock=lock,
                              model_profiles=args.model_profiles or MODEL_PROFILES)
    try:
        st = service.stats()["startup"]
        for w in st["warnings"]:
            print(f"bloomkit serve: warning: {w}", file=sys.stderr)
        if st["snapshot_moved_to"]:
            print(f"bloomkit serve: the snapshot {str(snap)!r} was refused ({st['snapshot_refused']}); kept as "
                  f"{st['snapshot_moved_to']!r}, the index was rebuilt from the database", file=sys.stderr)
        if args.demo and len(service.index) == 0 and args.demo_profiles > 0:
            futures = [service.publish(p) for p in table1_profiles(args.demo_profiles, region=(120.9, 121.7, 24.6, 25.3))]
            for f in futures:
                f.result()
            print(f"bloomkit serve: published {len(futures)} demo profiles of Table 1 (northern Taiwan)", file=sys.stderr)
        st = service.stats()
        print(f"bloomkit serve: {st['profiles']} profiles from the {st['startup']['source']} in "
              f"{time.perf_counter() - t0:.2f} s; k = {st['num_hashes']}, m = {st['num_bits']}, predicted f_T = "
              f"{st['predicted_fpr']:.3g}; {url}", file=sys.stderr, flush=True)
        guard = Guard(origins, hosts, args.body_timeout)
        app = create_app(service, max_body=args.max_body or DEFAULT_MAX_BODY, close_service=True, guard=guard)
        build_server(app, args).run()
    finally:
        service.close()  # no-op if the application closed it at shutdown
    return 0
