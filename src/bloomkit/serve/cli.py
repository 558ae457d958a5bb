"""``bloomkit serve``: arguments and start-up (imported by :mod:`bloomkit.cli`; FastAPI and
uvicorn are imported only when the command runs).

::

    bloomkit serve --db PATH --schema SCHEMA.json [--host 127.0.0.1] [--port 8000]
    bloomkit serve --demo [--db bloomkit-demo.sqlite] [--demo-profiles 10000]

A bad schema file, a database of another schema or a missing ``serve`` extra print one line
``bloomkit: error: ...`` and exit with status 2 (raised as BloomkitError / OSError, which
:func:`bloomkit.cli.main` turns into that line).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .._lazy import extra_hint
from ..errors import BloomkitError, InvalidParameterError

__all__ = ["add_arguments", "run"]


class ServeError(BloomkitError):
    """The service cannot start (one line for the user)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``bloomkit serve``."""
    p.add_argument("--db", help="the SQLite database (created if missing; default with --demo: bloomkit-demo.sqlite)")
    p.add_argument("--schema", help="the schema file (JSON: num_bits, attributes with min/max/places/typical_range)")
    p.add_argument("--demo", action="store_true",
                   help="Table 1 of the report as the schema; fill an empty database with generated profiles")
    p.add_argument("--demo-profiles", type=int, default=10_000, help="profiles --demo generates (default 10000)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--snapshot", help="the snapshot file (default: <db>.snapshot)")
    p.add_argument("--snapshot-interval", type=float, default=60.0,
                   help="seconds between snapshots while writes arrive (0: no snapshots; default 60)")
    p.add_argument("--max-body", type=int, default=None, help="largest request body in bytes (default 1 MiB; larger bodies get 413)")
    p.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])


def run(args: argparse.Namespace) -> int:
    """Start the service and serve until interrupted (SIGINT / SIGTERM); returns 0."""
    try:
        import uvicorn

        from .app import DEFAULT_MAX_BODY, create_app
    except ImportError as e:
        raise ServeError(f"bloomkit serve needs the 'serve' extra ({extra_hint('serve')}): {e}") from None
    from ..ranges import schema_from_file
    from .demo import table1_profiles, table1_schema
    from .service import MatchingService

    if args.demo == bool(args.schema):
        raise InvalidParameterError("bloomkit serve needs exactly one of --schema FILE and --demo")
    if args.db is None and not args.demo:
        raise InvalidParameterError("bloomkit serve needs --db PATH (the SQLite database)")
    if not 0 <= args.port <= 65535:
        raise InvalidParameterError(f"--port must be in 0..65535. Got {args.port} instead.")
    schema_file = table1_schema() if args.demo else schema_from_file(args.schema)
    db = Path(args.db or "bloomkit-demo.sqlite")
    t0 = time.perf_counter()
    service = MatchingService(db, schema_file, snapshot_path=args.snapshot, snapshot_interval=args.snapshot_interval)
    try:
        if args.demo and len(service.index) == 0 and args.demo_profiles > 0:
            futures = [service.publish(p) for p in table1_profiles(args.demo_profiles, region=(120.9, 121.7, 24.6, 25.3))]
            for f in futures:
                f.result()
            print(f"bloomkit serve: published {len(futures)} demo profiles of Table 1 (northern Taiwan)", file=sys.stderr)
        st = service.stats()
        print(f"bloomkit serve: {st['profiles']} profiles from the {st['startup']['source']} in "
              f"{time.perf_counter() - t0:.2f} s; k = {st['num_hashes']}, m = {st['num_bits']}, predicted f_T = "
              f"{st['predicted_fpr']:.3g}; http://{args.host}:{args.port}/", file=sys.stderr, flush=True)
        app = create_app(service, max_body=args.max_body or DEFAULT_MAX_BODY, close_service=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False)
    finally:
        service.close()  # no-op if the application closed it at shutdown
    return 0
