"""Connection limits of ``bloomkit serve``: a header timeout and a connection cap, in uvicorn's
HTTP protocol (the body timeout is the ASGI front's, :class:`~.front.Guard`).

uvicorn closes idle keep-alive connections (``--keep-alive``, its ``timeout_keep_alive``) but
waits for a request's headers without limit, and its ``limit_concurrency`` answers 503 to
every new request once the limit is reached: a few hundred connections that send their
headers a byte at a time hold the server's file descriptors until normal clients are refused.
:func:`guarded_protocol` subclasses uvicorn's protocol (httptools, or h11 without it) so that

* a connection whose request headers are not complete ``header_timeout`` seconds after it
  opened (or after its previous response) is answered 408 and closed;
* at most ``max_connections`` are open: a new connection beyond the cap closes the connection
  that has waited longest for its headers (a slow or idle one; never a request being served),
  and is itself refused (503, closed) only when every open connection is serving a request.

So slow clients cost a bounded number of descriptors for a bounded time, and a normal request
always finds room. :func:`raise_fd_limit` lifts the process's descriptor limit to its hard
limit at start, so the cap (below it) is what binds.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import Any

__all__ = ["ConnectionGuard", "guarded_protocol", "raise_fd_limit"]

_408 = b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: 42\r\n\r\nthe request headers did not arrive in time"
_503 = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: 33\r\n\r\ntoo many connections; retry later"


class ConnectionGuard:
    """The open connections of one server and their state (waiting for headers or serving).

    Parameters
    ----------
    max_connections : the cap (>= 1).
    header_timeout : seconds a connection may wait for complete request headers.
    """

    def __init__(self, max_connections: int, header_timeout: float) -> None:
        self.max_connections = int(max_connections)
        self.header_timeout = float(header_timeout)
        self.open: set[Any] = set()
        self.waiting: OrderedDict[Any, float] = OrderedDict()  # protocol -> since (oldest first)
        self.evicted = 0
        self.refused = 0
        self.timed_out = 0

    def opened(self, proto: Any) -> bool:
        """Register a new connection; False if it must be refused (every other one is busy)."""
        self.open.add(proto)
        if len(self.open) > self.max_connections:
            victim = next((p for p in self.waiting if p is not proto), None)
            if victim is None:
                self.refused += 1
                return False
            self.evicted += 1
            self.waiting.pop(victim, None)
            victim.bk_close(b"")
        self.wait(proto)
        return True

    def wait(self, proto: Any) -> None:
        self.waiting[proto] = time.monotonic()
        self.waiting.move_to_end(proto)

    def serving(self, proto: Any) -> None:
        self.waiting.pop(proto, None)

    def closed(self, proto: Any) -> None:
        self.open.discard(proto)
        self.waiting.pop(proto, None)

    def stats(self) -> dict[str, int]:
        return {"open": len(self.open), "waiting_for_headers": len(self.waiting), "evicted": self.evicted,
                "refused": self.refused, "header_timeouts": self.timed_out}


def guarded_protocol(base: type, guard: ConnectionGuard) -> type:
    """A subclass of uvicorn's HTTP protocol class ``base`` that applies ``guard``."""

    class Guarded(base):  # type: ignore[misc]
        bk_guard = guard

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self.bk_timer: asyncio.TimerHandle | None = None
            if not self.bk_guard.opened(self):
                self.bk_close(_503)
                return
            self.bk_arm()

        def bk_arm(self) -> None:
            if self.bk_timer is not None:
                self.bk_timer.cancel()
            self.bk_timer = self.loop.call_later(self.bk_guard.header_timeout, self.bk_timeout)

        def bk_timeout(self) -> None:
            self.bk_timer = None
            if self in self.bk_guard.waiting and not self.transport.is_closing():
                self.bk_guard.timed_out += 1
                self.bk_close(_408)

        def bk_close(self, answer: bytes) -> None:
            self.bk_guard.serving(self)
            if not self.transport.is_closing():
                if answer:
                    try:
                        self.transport.write(answer)
                    except (OSError, RuntimeError):
                        pass
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            if self.cycle is not before and self.cycle is not None:  # a request's headers are complete
                self.bk_guard.serving(self)
                if self.bk_timer is not None:
                    self.bk_timer.cancel()
                    self.bk_timer = None

        def on_response_complete(self) -> None:
            pipelined = bool(self.pipeline)
            super().on_response_complete()
            if not pipelined and not self.transport.is_closing():  # waiting for the next request's headers
                self.bk_guard.wait(self)
                self.bk_arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.bk_timer is not None:
                self.bk_timer.cancel()
                self.bk_timer = None
            self.bk_guard.closed(self)
            super().connection_lost(exc)

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded


def raise_fd_limit() -> int:
    """Lift the soft limit of open files to the hard limit (POSIX); returns the soft limit now
    in force (0 where unknown)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return int(soft) if soft != resource.RLIM_INFINITY else 1 << 20
