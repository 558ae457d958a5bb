"""The lean front of ``bloomkit serve`` (:mod:`bloomkit.serve.front`) answers exactly as the
FastAPI application behind it: the same status and JSON for valid searches, for every kind of
bad query (the service's 422 naming the attribute) and bad envelope (pydantic's 422, which the
front leaves to FastAPI), and for publishes. In process, through ASGI (no server)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from _serve import SMALL_SCHEMA  # noqa: E402

from bloomkit.ranges import schema_from_json  # noqa: E402
from bloomkit.serve import MatchingService  # noqa: E402
from bloomkit.serve.app import create_app  # noqa: E402

SEARCHES: list[Any] = [
    {"query": {"Age": 25}},
    {"query": {"Age": [20, 29], "Name": "ming"}, "mode": "intersect", "verify": False, "limit": 3},
    {"query": {"Latitude": [25.0, 25.05]}, "mode": "subset", "verify": True, "limit": 10_000},
    {"query": {"Latitude": 25.00005, "Income": [100, 200]}},                     # a tie at the 5th decimal
    {"query": {"Name": "Zoë", "Age": 30.0}},                                      # float for an integer
    {"query": {"Agee": 3}}, {"query": {"Age": 121}}, {"query": {"Age": [30, 20]}}, {"query": {"Age": "x"}},
    {"query": {"Age": True}}, {"query": {"Age": [1, 2, 3]}}, {"query": {"Age": None}}, {"query": {"Name": 5}},
    {"query": {"Latitude": [25.0, 95.0]}}, {"query": {}}, {"query": {"Age": 10**30}}, {"query": {"Age": 1e400}},
    {"query": {"Age": 3}, "limit": 0}, {"query": {"Age": 3}, "limit": 5.0}, {"query": {"Age": 3}, "limit": True},
    {"query": {"Age": 3}, "limit": "5"}, {"query": {"Age": 3}, "limit": 10**6}, {"query": {"Age": 3}, "verify": 1},
    {"query": {"Age": 3}, "verify": "yes"}, {"query": {"Age": 3}, "mode": "superset"},
    {"query": {"Age": 3}, "mode": None}, {"query": {"Age": 3}, "other": 1}, {"query": [1, 2]}, {"query": None},
    {"mode": "subset"}, [1, 2], "query", None,
]
RAW = [b"{not json", b'{"query": {"Age": NaN}}', b'{"query": {"Name": "\\ud800"}}', b'{"query": {"Name": "\\ud83d\\ude00"}}',
       b'\xff\xfe{}', b"", b'{"query": {"Age": 3}, "query": {"Age": 200}}']
PUBLISHES: list[Any] = [
    {"attributes": {"Name": "ming", "Age": [20, 29], "Latitude": [25.0, 25.0999]}},
    {"attributes": {"Age": 3}, "extra": 1}, {"attrs": {"Age": 3}}, {"attributes": [1, 2]}, [1, 2],
    {"attributes": {"Age": 300}}, {"attributes": {}}, {"attributes": {"Nope": 1}},
]


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> Any:
    svc = MatchingService(tmp_path_factory.mktemp("front") / "p.sqlite", schema_from_json(SMALL_SCHEMA),
                          snapshot_interval=0)
    for f in [svc.publish({"Name": n, "Age": [a, a + 9], "Income": [a * 10, a * 10 + 500], "Latitude": [25.0, 25.1]})
              for n in ("ming", "wei", "Zoë") for a in range(1, 100, 3)]:
        f.result()
    front = create_app(svc, max_body=4096)
    yield front, front.app
    svc.close(snapshot=False)


def _ask(app: Any, path: str, bodies: list[bytes]) -> list[tuple[int, Any]]:
    async def go() -> list[tuple[int, Any]]:
        out = []
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            for b in bodies:
                r = await c.post(path, content=b, headers={"Content-Type": "application/json"})
                out.append((r.status_code, r.json() if r.content else None))
        return out

    return asyncio.run(go())


def test_search_answers_and_errors_equal_fastapis(apps: Any) -> None:
    front, fastapi_app = apps
    bodies = [json.dumps(b).encode() for b in SEARCHES] + RAW
    lean, full = _ask(front, "/search", bodies), _ask(fastapi_app, "/search", bodies)
    for body, a, b in zip(bodies, lean, full, strict=True):
        assert a == b, body
    statuses = [s for s, _ in lean]
    assert statuses.count(200) >= 5 and statuses.count(422) >= 25
    assert any(s == 200 and r["ids"] for s, r in lean)


def test_publish_answers_and_errors_equal_fastapis(apps: Any) -> None:
    front, fastapi_app = apps
    bodies = [json.dumps(b).encode() for b in PUBLISHES] + RAW
    lean, full = _ask(front, "/profiles", bodies), _ask(fastapi_app, "/profiles", bodies)
    for body, (sa, ra), (sb, rb) in zip(bodies, lean, full, strict=True):
        assert sa == sb, body
        if sa == 201:  # a new profile each: the same form, another id and token
            assert set(ra) == set(rb) == {"id", "token"} and ra["id"] != rb["id"]
        else:
            assert ra == rb, body


def test_front_body_limit_and_other_routes(apps: Any) -> None:
    front, _ = apps
    big = json.dumps({"query": {"Name": "y" * 5000}}).encode()
    assert _ask(front, "/search", [big])[0][0] == 413
    assert _ask(front, "/profiles/batch", [json.dumps({"profiles": [{"attributes": {"Age": 1}}]}).encode()])[0][0] == 201


@pytest.mark.parametrize("parts", [[b" " * 5000], [b" " * 1000] * 5, [b" " * 4096, b" "]])
def test_front_413_for_a_streamed_body_however_it_arrives(apps: Any, parts: list[bytes]) -> None:
    """No Content-Length: the size read is counted whether the body comes in one message (a
    streamed body the server had whole already) or in several."""
    front, _ = apps
    msgs = [{"type": "http.request", "body": p, "more_body": i + 1 < len(parts)} for i, p in enumerate(parts)]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return msgs.pop(0) if msgs else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/search", "headers": [(b"content-type", b"application/json")],
             "query_string": b"", "http_version": "1.1", "scheme": "http", "server": ("t", 80), "root_path": ""}
    asyncio.run(front(scope, receive, send))
    assert sent[0]["status"] == 413 and b"larger than 4096" in sent[1]["body"]
