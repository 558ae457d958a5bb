"""The ASGI front of ``bloomkit serve``: who may ask, the body limits, and the two hot endpoints
served lean.

Every HTTP request passes through :class:`Front` first (:class:`Guard` holds its settings):

* **Host**: a request whose ``Host`` header names another server is 421 (a page of another
  site whose name resolves to this machine, "DNS rebinding", cannot read or write).
* **No cross-site writes**: a request with a body, or any POST / PUT / PATCH / DELETE, must
  come from the served origin: an ``Origin`` header other than the allowed ones (default: the
  origin the page is served from) or ``Sec-Fetch-Site: cross-site`` is 403; a body must be
  ``Content-Type: application/json`` (415 otherwise: a form or ``text/plain`` post, the
  "simple requests" a browser sends cross-site without asking, never reaches the service).
* **Body limits**: 413 over ``max_body`` bytes (declared or streamed), 408 (and the connection
  closed) when the whole body has not arrived ``body_timeout`` seconds after the headers, 422
  when the JSON nests deeper than :data:`MAX_DEPTH` (checked on the bytes, before any parser
  recurses into it).

Then:

* ``POST /search`` and ``POST /profiles`` whose body is a well-formed request (valid JSON, the
  envelope exactly as the pydantic models ``SearchIn`` / ``ProfileIn`` of :mod:`.app` accept it)
  are answered here: ``json.loads``, a few type checks, the service, the JSON answer. FastAPI's
  middleware, routing and pydantic validation cost ~0.7 ms of CPU per request on this machine
  (a search at 1M profiles: 2.0-2.35 ms of server CPU through FastAPI, 1.4-1.5 ms here with
  the same index), more than the AND kernel of the search itself.
* everything else — other routes, and any hot request this module does not accept as
  well-formed — is passed on (body replayed) to the FastAPI application, which answers it as it
  always did: its 422 for a malformed envelope (``["body", "limit"]``, ``json_invalid``, ...).

So the two paths cannot disagree on what is an error: the fast path serves only requests the
models accept, with the same service call and the same answer bytes (Starlette's
``JSONResponse`` encoding); the service's own refusals (a :class:`~.records.FieldError` naming
an attribute, a :class:`~.service.WriteError`) are rendered alike by both. The OpenAPI page
still documents both endpoints (the FastAPI routes exist and answer the requests passed on).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._search_mode import SEARCH_MODES
from .records import FieldError
from .service import MatchingService, SearchResult, WriteError

__all__ = ["MAX_DEPTH", "MAX_LIMIT", "Front", "Guard", "json_too_deep", "render_json", "search_answer"]

MAX_LIMIT = 10_000
"""Largest ``limit`` of a search (page through more matches with ``after``)."""
MAX_DEPTH = 32
"""Deepest JSON nesting a request body may have (the API's own bodies nest at most 5 deep)."""
_SEARCH_KEYS = frozenset(("query", "mode", "verify", "limit", "after", "records"))
_MODES = SEARCH_MODES
_JSON_HEADER = (b"content-type", b"application/json")
_WRITE_METHODS = frozenset(("POST", "PUT", "PATCH", "DELETE"))
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_MAX_ID = (1 << 63) - 1


@dataclass(frozen=True)
class Guard:
    """Who may ask, and how long a body may take (see the module docstring).

    Parameters
    ----------
    origins : the allowed ``Origin`` values of writes (e.g. ``{"http://127.0.0.1:8000"}``);
        None: the origin named by the request's own Host header (same-origin only).
    hosts : the allowed ``Host`` header values (``host:port``, lower case); None: any.
    body_timeout : seconds from the headers to the end of the body (408 after).
    """

    origins: frozenset[str] | None = None
    hosts: frozenset[str] | None = None
    body_timeout: float = 20.0


def json_too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """True if the JSON text ``body`` nests arrays / objects deeper than ``limit`` (brackets
    inside strings do not count). Bytes operations and one numpy pass, no recursion: a body
    100,000 levels deep is answered in microseconds, never by a RecursionError.

    >>> json_too_deep(b'{"a": [[1, 2]]}', 3), json_too_deep(b'{"a": [[1, 2]]}', 2), json_too_deep(b'"[[[["', 1)
    (False, True, False)

    Complexity: O(len(body))."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    if len(brackets) <= limit:
        return False
    v = np.frombuffer(brackets, dtype=np.uint8)
    return bool(np.cumsum(np.where((v == 0x5B) | (v == 0x7B), 1, -1)).max() > limit)


def search_answer(r: SearchResult) -> dict[str, Any]:
    """The JSON of a search result (both paths: the front's and FastAPI's)."""
    m = r.model
    out: dict[str, Any] = {"ids": r.ids, "candidates": r.candidates, "matches": r.matches, "next": r.next,
                           "predicted_fpr": r.predicted_fpr,
                           "expected_false_candidates": None if m is None else m.expected,
                           "model": None if m is None else {"sd": m.variance**0.5, "nonmatching": m.nonmatching,
                                                             "priced": m.priced, "reason": m.reason}}
    if r.records is not None:
        out["profiles"] = r.records
    return out


def render_json(content: Any) -> bytes:
    """``content`` encoded exactly as Starlette's ``JSONResponse`` does."""
    return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


async def _send_json(send: Send, status: int, content: Any, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = render_json(content)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-length", str(len(body)).encode()), _JSON_HEADER, *(headers or ())]})
    await send({"type": "http.response.body", "body": body})


async def _send_error(send: Send, exc: FieldError | WriteError) -> None:
    """The answer to a refused request: 422 ``{"detail": [...]}`` naming the field, or the
    write's status with ``{"detail": message}`` (401 with ``WWW-Authenticate: Bearer``)."""
    if isinstance(exc, FieldError):
        await _send_json(send, 422, {"detail": exc.detail()})
        return
    headers = [(b"www-authenticate", b"Bearer")] if exc.status == 401 else None
    await _send_json(send, exc.status, {"detail": str(exc)}, headers)


def _load(body: bytes) -> Any:
    """The JSON of ``body``, or None where the fast path leaves the request to FastAPI:
    not UTF-8 / not JSON, or a surrogate escape (``\\ud800``: json accepts a lone one,
    pydantic's parser does not). (json, not orjson: orjson reads an integer beyond 64 bits as
    a float, pydantic as an int — the two paths would word the 422 differently.)"""
    if b"\\ud" in body or b"\\uD" in body:
        return None
    try:
        return json.loads(body.decode("utf-8"))
    except ValueError:  # JSONDecodeError, UnicodeDecodeError
        return None


def search_args(data: Any) -> tuple[Any, str, bool, int, int, bool] | None:
    """``(query, mode, verify, limit, after, records)`` of a search request body the
    ``SearchIn`` model accepts as it is (no coercion), else None."""
    if type(data) is not dict or "query" not in data or not _SEARCH_KEYS.issuperset(data):
        return None
    query, mode = data["query"], data.get("mode", "subset")
    verify, limit = data.get("verify", True), data.get("limit", 100)
    after, records = data.get("after", 0), data.get("records", False)
    if type(query) is not dict or type(mode) is not str or mode not in _MODES or type(verify) is not bool \
            or type(limit) is not int or not 1 <= limit <= MAX_LIMIT or type(after) is not int \
            or not 0 <= after <= _MAX_ID or type(records) is not bool:
        return None
    return query, mode, verify, limit, after, records


def publish_args(data: Any) -> Any:
    """The attributes of a publish request body the ``ProfileIn`` model accepts, else None."""
    if type(data) is not dict or len(data) != 1 or type(data.get("attributes")) is not dict:
        return None
    return data["attributes"]


class Front:
    """ASGI application in front of the FastAPI app (see the module docstring).

    Parameters
    ----------
    app : the FastAPI application (documentation, every other route, the 422 of the models).
    service : the matching service.
    max_body : largest request body in bytes (413 above).
    guard : hosts, origins and the body timeout (default: any host, same-origin writes, 20 s).
    """

    def __init__(self, app: ASGIApp, service: MatchingService, max_body: int, guard: Guard | None = None) -> None:
        self.app, self.service, self.max_body = app, service, max_body
        self.guard = guard or Guard()
        self.big_index = 50_000  # searches of an index this large run in a worker thread (kernels drop the GIL)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not await self._admit(scope, send):
            return
        body = await self._read(scope, receive, send)
        if body is None:
            return
        if body and json_too_deep(body):
            await _send_json(send, 422, {"detail": [{"loc": ["body"], "msg": f"JSON nested deeper than {MAX_DEPTH} "
                                                     "levels", "type": "json_too_deep"}]})
            return
        if scope["method"] == "POST":
            path = scope["path"]
            if path == "/search" and await self._search(body, send):
                return
            if path == "/profiles" and await self._publish(body, send):
                return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _admit(self, scope: Scope, send: Send) -> bool:
        """The Host, Origin and Content-Type checks; False after answering 421 / 403 / 415."""
        guard = self.guard
        host = origin = ctype = site = None
        has_body = False
        for name, value in scope.get("headers", ()):
            if name == b"host":
                host = value.decode("latin-1").lower()
            elif name == b"origin":
                origin = value.decode("latin-1")
            elif name == b"content-type":
                ctype = value.decode("latin-1")
            elif name == b"sec-fetch-site":
                site = value.decode("latin-1").lower()
            elif name == b"content-length":
                has_body = value.strip() not in (b"0", b"")
            elif name == b"transfer-encoding":
                has_body = True
        if guard.hosts is not None and host not in guard.hosts:
            await _send_json(send, 421, {"detail": f"this server does not answer to the host {host!r} "
                                                   f"(it answers to {', '.join(sorted(guard.hosts))}; see --origin)"})
            return False
        method = scope["method"]
        if method not in _WRITE_METHODS and not has_body:
            return True
        allowed = guard.origins if guard.origins is not None else (
            frozenset() if host is None else frozenset((f"{scope.get('scheme', 'http')}://{host}",)))
        if site == "cross-site" or (origin is not None and origin not in allowed):
            await _send_json(send, 403, {"detail": f"cross-site request refused: Origin {origin!r} is not this "
                                                   "service's (see --origin)" if origin is not None else
                                                   "cross-site request refused (Sec-Fetch-Site: cross-site)"})
            return False
        if (has_body or method in ("POST", "PUT", "PATCH")) and \
                (ctype is None or ctype.split(";", 1)[0].strip().lower() != "application/json"):
            await _send_json(send, 415, {"detail": "a request body must be JSON: send it with "
                                                   f"'Content-Type: application/json' (got {ctype!r})"})
            return False
        return True

    async def _read(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body, or None after answering 413 (declared or streamed over the limit)
        or 408 (not all there ``body_timeout`` seconds after the headers; the connection is
        then closed)."""
        limit = self.max_body
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = limit + 1
                if declared > limit:
                    await _send_json(send, 413, {"detail": f"request body larger than {limit} bytes"})
                    return None
        timeout = self.guard.body_timeout
        try:
            async with asyncio.timeout(timeout):
                msg = await receive()
                if msg["type"] == "http.request" and not msg.get("more_body", False):  # the usual case: one message
                    body: bytes = msg.get("body", b"")  # (a streamed body that arrived whole is one message too)
                    if len(body) <= limit:
                        return body
                chunks: list[bytes] = []
                size = 0
                while msg["type"] == "http.request":  # otherwise the client went away
                    chunks.append(msg.get("body", b""))
                    size += len(chunks[-1])
                    if size > limit:
                        await _send_json(send, 413, {"detail": f"request body larger than {limit} bytes"})
                        return None
                    if not msg.get("more_body", False):
                        break
                    msg = await receive()
                return b"".join(chunks)
        except TimeoutError:
            await _send_json(send, 408, {"detail": f"the request body did not arrive within {timeout:g} s"},
                             [(b"connection", b"close")])
            return None

    async def _search(self, body: bytes, send: Send) -> bool:
        args = search_args(_load(body))
        if args is None:
            return False
        query, mode, verify, limit, after, records = args
        svc = self.service
        try:  # a small index on the event loop (less than a thread hop costs), a large one in a thread
            if len(svc.index) < self.big_index:
                r = svc.search(query, mode=mode, verify=verify, limit=limit, after=after, records=records)
            else:
                r = await asyncio.to_thread(svc.search, query, mode=mode, verify=verify, limit=limit, after=after,
                                            records=records)
        except FieldError as e:
            await _send_error(send, e)
            return True
        await _send_json(send, 200, search_answer(r))
        return True

    async def _publish(self, body: bytes, send: Send) -> bool:
        attributes = publish_args(_load(body))
        if attributes is None:
            return False
        try:
            pid, token = await asyncio.wrap_future(self.service.publish(attributes))
        except (FieldError, WriteError) as e:
            await _send_error(send, e)
            return True
        await _send_json(send, 201, {"id": pid, "token": token})
        return True
