"""The ASGI front of ``bloomkit serve``: the body limit, and the two hot endpoints served lean.

Every HTTP request passes through :class:`Front` first. It reads the body (413 over the limit,
declared or streamed), then:

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
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .records import FieldError
from .service import MatchingService, WriteError

__all__ = ["MAX_LIMIT", "Front", "render_json"]

MAX_LIMIT = 10_000
"""Largest ``limit`` of a search."""
_SEARCH_KEYS = frozenset(("query", "mode", "verify", "limit"))
_MODES = ("subset", "intersect")
_JSON_HEADER = (b"content-type", b"application/json")


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


def search_args(data: Any) -> tuple[Any, str, bool, int] | None:
    """``(query, mode, verify, limit)`` of a search request body the ``SearchIn`` model accepts
    as it is (no coercion), else None."""
    if type(data) is not dict or "query" not in data or not _SEARCH_KEYS.issuperset(data):
        return None
    query, mode = data["query"], data.get("mode", "subset")
    verify, limit = data.get("verify", True), data.get("limit", 100)
    if type(query) is not dict or type(mode) is not str or mode not in _MODES or type(verify) is not bool \
            or type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
        return None
    return query, mode, verify, limit


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
    """

    def __init__(self, app: ASGIApp, service: MatchingService, max_body: int) -> None:
        self.app, self.service, self.max_body = app, service, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = await self._read(scope, receive, send)
        if body is None:
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

    async def _read(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body, or None after answering 413 (declared or streamed over the limit)."""
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

    async def _search(self, body: bytes, send: Send) -> bool:
        args = search_args(_load(body))
        if args is None:
            return False
        query, mode, verify, limit = args
        try:  # on the event loop: a search is well under a millisecond, less than a thread hop costs
            r = self.service.search(query, mode=mode, verify=verify, limit=limit)
        except FieldError as e:
            await _send_error(send, e)
            return True
        await _send_json(send, 200, {"ids": r.ids, "candidates": r.candidates, "matches": r.matches,
                                     "predicted_fpr": r.predicted_fpr})
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
