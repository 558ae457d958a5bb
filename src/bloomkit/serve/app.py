"""The HTTP API of ``bloomkit serve`` (FastAPI; the OpenAPI page is at ``/docs``).

==========================  ===================================================================
``POST /profiles``          ``{"attributes": {...}}`` -> 201 ``{"id", "token"}``
``POST /profiles/batch``    ``{"profiles": [{"attributes": ...}, ...]}`` (<= 1000) -> 201 ``{"profiles": [...]}``
``PUT /profiles/{id}``      ``{"attributes": {...}}`` with ``Authorization: Bearer <token>`` -> 200
``DELETE /profiles/{id}``   with the bearer token -> 204 (403 another profile's token, 404 unknown)
``POST /search``            ``{"query", "mode", "verify", "limit", "after", "records"}`` -> ``{"ids", "candidates",
                            "matches", "next", "predicted_fpr", "expected_false_candidates", "model"[, "profiles"]}``
``GET /stats``              the optimizer's choice (k, (d, s) per attribute), predicted rates, sizes
``GET /healthz``            ``{"status": "ok", "profiles": n}``
``GET /``                   the web page (static files, no build step)
==========================  ===================================================================

Bad input is 422 with FastAPI's ``detail`` list naming the field (``["body", "attributes",
"Age"]``); a body over ``max_body`` bytes is 413 before it is parsed, one nested deeper than 32
levels 422, one that is not ``application/json`` 415, one from another site 403 (see
:mod:`.front`); a missing or malformed bearer token is 401.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from importlib import resources
from typing import Annotated, Any, TypeVar

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from .. import __version__
from .._search_mode import SearchMode
from .front import MAX_LIMIT, Front, Guard, search_answer
from .records import FieldError
from .service import MatchingService, WriteError

__all__ = ["DEFAULT_MAX_BODY", "create_app"]

DEFAULT_MAX_BODY = 1 << 20
"""Largest request body accepted (bytes); larger ones get 413."""
MAX_BATCH_PROFILES = 1000


class ProfileIn(BaseModel):
    """A profile: ``{attribute: value}``; a text, a number, or an inclusive range ``[lo, hi]``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"attributes": {"First Name": "Ming", "Age": [20, 29], "Latitude": [25.0, 25.0999]}}]})
    attributes: dict[str, Any]


class ProfilesIn(BaseModel):
    """Many profiles in one request (validated as a whole: one bad profile publishes none)."""

    model_config = ConfigDict(extra="forbid")
    profiles: list[ProfileIn] = Field(min_length=1, max_length=MAX_BATCH_PROFILES)


class ProfileOut(BaseModel):
    id: int
    token: str = Field(description="the owner's bearer token (shown once; only its hash is stored)")


class SearchIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"query": {"Age": 22, "Latitude": [25.01, 25.02]}, "mode": "subset", "verify": True, "limit": 100}]})
    query: dict[str, Any]
    mode: SearchMode = Field(
        "subset", description="subset: the profile covers every query value / range (the report's test); "
                              "intersect: every query range overlaps the profile's")
    verify: StrictBool = Field(True, description="check candidates against the stored records (no false positives)")
    limit: StrictInt = Field(100, ge=1, le=MAX_LIMIT)
    after: StrictInt = Field(0, ge=0, le=(1 << 63) - 1,
                             description="the cursor: return ids greater than this (the 'next' of the previous page)")
    records: StrictBool = Field(False, description="also return the page's profiles with their attributes")


class ModelOut(BaseModel):
    sd: float = Field(description="standard deviation of the expected false candidates")
    nonmatching: int = Field(description="stored profiles that do not match the query")
    priced: int = Field(description="profiles the model priced (all, or a sample of a large index)")
    reason: str | None = Field(description="why the query is not priced (then 0), else null")


class SearchOut(BaseModel):
    ids: list[int] = Field(description="the page: matching ids greater than 'after', sorted, at most 'limit'")
    candidates: int = Field(description="profiles whose filters matched (before verification)")
    matches: int = Field(description="profiles matching (after verification, if asked), all pages")
    next: int | None = Field(description="the 'after' of the next page; null on the last one")
    predicted_fpr: float = Field(description="the model's chance that a profile which does not match this query "
                                             "passes its filter test (expected_false_candidates / nonmatching)")
    expected_false_candidates: float | None = Field(
        description="how many profiles that do not match are expected among the candidates (document 000's "
                    "model for this query against the stored profiles and their fill)")
    model: ModelOut | None
    profiles: list[dict[str, Any]] | None = Field(None, description="with 'records': the page's {id, attributes}")


def _body_doc(model: type[BaseModel]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


M = TypeVar("M", bound=BaseModel)


async def _parse(model: type[M], request: Request) -> M:
    """The request's JSON body as ``model``, or FastAPI's 422 (``loc`` starting with "body")."""
    try:
        return model.model_validate_json(await request.body())
    except ValidationError as e:
        raise RequestValidationError([{**err, "loc": ("body", *err["loc"]), "input": _echo(err.get("input"))}
                                      for err in e.errors(include_url=False)]) from None


def _echo(value: Any) -> Any:
    """The ``input`` a 422 echoes, as JSON can carry it: a body that is not UTF-8 with
    replacement characters, a value holding NaN or inf as its repr (not a 500)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError):
        return repr(value)
    return value


def _bearer(authorization: str | None) -> str:
    if authorization is None:
        raise WriteError(401, "missing 'Authorization: Bearer <token>' header")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise WriteError(401, "the Authorization header must be 'Bearer <token>'")
    return token.strip()


def create_app(service: MatchingService, *, max_body: int = DEFAULT_MAX_BODY, close_service: bool = False,
               guard: Guard | None = None) -> Front:
    """The ASGI application of ``service``: the :class:`~.front.Front` (hosts, origins, body
    limits, the lean ``POST /search`` and ``POST /profiles``) before the FastAPI application
    (its ``app``).

    With ``close_service`` the application closes the service when the server shuts down
    (queued writes finish, a last snapshot is written): uvicorn re-raises SIGTERM / SIGINT
    after its graceful shutdown, so code after ``uvicorn.run`` may never run."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if close_service:
            await asyncio.to_thread(service.close)

    app = FastAPI(title="bloomkit matching service", version=__version__, lifespan=lifespan,
                  description="Publish profiles and search them by attributes and numeric ranges "
                              "(document 000: grouping / overlapping Bloom filters, the MFPGC job).")
    static = resources.files("bloomkit.serve") / "static"

    @app.exception_handler(FieldError)
    async def _field_error(request: Request, exc: FieldError) -> JSONResponse:
        return JSONResponse({"detail": exc.detail()}, status_code=422)

    @app.exception_handler(WriteError)
    async def _write_error(request: Request, exc: WriteError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse({"detail": str(exc)}, status_code=exc.status, headers=headers)

    # The two hot endpoints: the Front serves their well-formed requests; these routes document
    # them and answer what the Front passes on (pydantic's 422 for a malformed envelope).
    @app.post("/profiles", status_code=201, response_model=ProfileOut, openapi_extra=_body_doc(ProfileIn))
    async def publish(request: Request) -> JSONResponse:
        body = await _parse(ProfileIn, request)
        pid, token = await asyncio.wrap_future(service.publish(body.attributes))
        return JSONResponse({"id": pid, "token": token}, status_code=201)

    @app.post("/profiles/batch", status_code=201)
    async def publish_many(body: ProfilesIn) -> dict[str, list[dict[str, Any]]]:
        """Publish up to 1000 profiles at once: ``{"profiles": [{"attributes": ...}, ...]}`` ->
        201 ``{"profiles": [{"id", "token"}, ...]}`` in order; a bad profile is 422 naming it
        (``["body", "profiles", i, "attributes", name]``) and none is published."""
        futures = service.publish_many([p.attributes for p in body.profiles])
        done = await asyncio.gather(*(asyncio.wrap_future(f) for f in futures))
        return {"profiles": [{"id": pid, "token": token} for pid, token in done]}

    @app.put("/profiles/{profile_id}")
    async def update(profile_id: int, body: ProfileIn,
                     authorization: Annotated[str | None, Header()] = None) -> dict[str, int]:
        token = _bearer(authorization)
        pid = await asyncio.wrap_future(service.update(profile_id, token, body.attributes))
        return {"id": pid}

    @app.delete("/profiles/{profile_id}", status_code=204)
    async def delete(profile_id: int, authorization: Annotated[str | None, Header()] = None) -> Response:
        token = _bearer(authorization)
        await asyncio.wrap_future(service.delete(profile_id, token))
        return Response(status_code=204)

    @app.post("/search", response_model=SearchOut, openapi_extra=_body_doc(SearchIn))
    async def search(request: Request) -> JSONResponse:
        body = await _parse(SearchIn, request)
        r = service.search(body.query, mode=body.mode, verify=body.verify, limit=body.limit, after=body.after,
                           records=body.records)
        return JSONResponse(search_answer(r))

    @app.get("/stats")
    async def stats() -> dict[str, Any]:
        return service.stats()

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        if service.broken:
            return JSONResponse({"status": "broken", "detail": service.broken}, status_code=503)
        return JSONResponse({"status": "ok", "profiles": len(service.index)})

    @app.get("/schema")
    def schema() -> dict[str, Any]:
        """The schema file the service runs on (what the web page builds its form from)."""
        return service.schema_file.to_json()

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(str(static / "index.html"), media_type="text/html")

    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    return Front(app, service, max_body, guard)
