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


# -- who may ask, hostile bodies, paging (issues 25 and 26) -----------------------------------------

from bloomkit.serve.front import MAX_DEPTH, Guard  # noqa: E402


def _call(app: Any, method: str, path: str, content: bytes | None = None, headers: dict[str, str] | None = None,
          base: str = "http://127.0.0.1:8000") -> tuple[int, Any]:
    async def go() -> tuple[int, Any]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base) as c:
            r = await c.request(method, path, content=content, headers=headers or {})
            return r.status_code, (r.json() if r.content else None)

    return asyncio.run(go())


def test_writes_need_json_and_the_served_origin(apps: Any) -> None:
    """Issue 26, item 4: a text/plain or form post (what a page of another site can send
    without asking) is 415; an Origin of another site is 403, whatever the content type."""
    front, _ = apps
    svc = front.service
    n0 = len(svc.index)
    body = json.dumps({"attributes": {"Name": "xsite", "Age": 5}}).encode()
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None):
        headers = {} if ctype is None else {"Content-Type": ctype}
        for path in ("/profiles", "/search", "/profiles/batch"):
            status, out = _call(front, "POST", path, body, headers)
            assert status == 415 and "application/json" in out["detail"], (ctype, path)
        assert _call(front, "PUT", "/profiles/1", body, {**headers, "Authorization": "Bearer x"})[0] == 415
    js = {"Content-Type": "application/json; charset=utf-8"}
    for origin in ("http://evil.example", "null", "http://127.0.0.1:8000.evil.example"):
        status, out = _call(front, "POST", "/profiles", body, {**js, "Origin": origin})
        assert status == 403 and "cross-site" in out["detail"], origin
        assert _call(front, "DELETE", "/profiles/1", None, {"Origin": origin, "Authorization": "Bearer x"})[0] == 403
    assert _call(front, "POST", "/profiles", body, {**js, "Sec-Fetch-Site": "cross-site"})[0] == 403
    assert len(svc.index) == n0  # nothing got through
    assert _call(front, "POST", "/profiles", body, {**js, "Origin": "http://127.0.0.1:8000"})[0] == 201  # same origin
    assert _call(front, "POST", "/profiles", body, js)[0] == 201  # no Origin: not a browser
    assert _call(front, "GET", "/healthz", None, {"Origin": "http://evil.example"})[0] == 200  # reads: not writes


def test_hosts_and_origins_as_configured(apps: Any) -> None:
    front, _ = apps
    guarded = type(front)(front.app, front.service, front.max_body,
                          Guard(frozenset({"https://match.example.org"}), frozenset({"match.example.org"})))
    js = {"Content-Type": "application/json"}
    q = json.dumps({"query": {"Age": 25}}).encode()
    status, out = _call(guarded, "GET", "/healthz")  # Host 127.0.0.1:8000: another server's name
    assert status == 421 and "match.example.org" in out["detail"]
    base = "https://match.example.org"
    assert _call(guarded, "GET", "/healthz", base=base)[0] == 200
    assert _call(guarded, "POST", "/search", q, {**js, "Origin": base}, base=base)[0] == 200
    assert _call(guarded, "POST", "/search", q, {**js, "Origin": "http://match.example.org"}, base=base)[0] == 403


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_000, 10_000, 100_000])
def test_deeply_nested_bodies_are_refused_before_parsing(depth: int) -> None:
    """Issue 25, item 8: JSON nested 1,000 - 100,000 deep is 4xx with a message, never 500."""
    svc = MatchingService.__new__(MatchingService)  # never reached: the front refuses first
    front = create_app(svc, max_body=1 << 20)
    deep = b"[" * depth + b"]" * depth
    bodies = {"/search": b'{"query": {"Age": ' + deep + b"}}", "/profiles": b'{"attributes": {"Name": ' + deep + b"}}",
              "/profiles/batch": b'{"profiles": ' + deep + b"}"}
    for path, body in bodies.items():
        status, out = _call(front, "POST", path, body, {"Content-Type": "application/json"})
        assert status == 422 and out["detail"][0]["type"] == "json_too_deep", path
        assert f"deeper than {MAX_DEPTH}" in out["detail"][0]["msg"]
    status, _ = _call(front, "PUT", "/profiles/3", b'{"attributes": ' + deep + b"}",
                      {"Content-Type": "application/json", "Authorization": "Bearer x"})
    assert status == 422


def test_a_slow_body_gets_408_and_the_connection_closed(apps: Any) -> None:
    front, _ = apps
    slow = type(front)(front.app, front.service, front.max_body, Guard(body_timeout=0.3))
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(0.2)  # a byte now and then
        return {"type": "http.request", "body": b" ", "more_body": True}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/search", "headers": [(b"content-type", b"application/json")],
             "query_string": b"", "http_version": "1.1", "scheme": "http", "server": ("t", 80), "root_path": ""}
    asyncio.run(slow(scope, receive, send))
    assert sent[0]["status"] == 408 and (b"connection", b"close") in sent[0]["headers"]


def test_paging_past_10000_matches_with_a_cursor_while_profiles_are_published(tmp_path: Any) -> None:
    """Issue 25, item 7: the cursor ``after`` pages past 10,000 matches; publishes between the
    pages neither repeat nor skip a profile (ids only grow); ``records`` gives the attributes."""
    svc = MatchingService(tmp_path / "p.sqlite", schema_from_json(SMALL_SCHEMA), snapshot_interval=0)
    try:
        ids = [f.result()[0] for f in [svc.publish({"Name": f"p{i % 50}", "Age": [20, 29], "Income": [i % 4000, i % 4000 + 900]})
                                       for i in range(12_000)]]
        front = create_app(svc)
        js = {"Content-Type": "application/json"}
        q = {"query": {"Age": 25}, "limit": 10_000}
        status, page1 = _call(front, "POST", "/search", json.dumps(q).encode(), js)
        assert status == 200 and page1["matches"] == 12_000 and len(page1["ids"]) == 10_000
        assert page1["next"] == page1["ids"][-1] and page1["ids"] == ids[:10_000]
        late = [f.result()[0] for f in [svc.publish({"Name": "late", "Age": 25}) for _ in range(300)]]
        status, page2 = _call(front, "POST", "/search", json.dumps({**q, "after": page1["next"]}).encode(), js)
        assert status == 200 and page2["next"] is None and page2["matches"] == 12_300
        assert page2["ids"] == ids[10_000:] + late  # the rest, then the new ones, each once
        status, small = _call(front, "POST", "/search", json.dumps({"query": {"Name": "p7"}, "limit": 3, "records": True,
                                                                    "after": ids[7]}).encode(), js)
        assert [p["id"] for p in small["profiles"]] == small["ids"] == [ids[57], ids[107], ids[157]]
        assert small["profiles"][0]["attributes"] == {"Name": "p7", "Age": [20, 29], "Income": [57, 957]}
        for bad in ({"after": -1}, {"after": "3"}, {"after": 2**63}, {"records": "yes"}):
            assert _call(front, "POST", "/search", json.dumps({**q, **bad}).encode(), js)[0] == 422, bad
    finally:
        svc.close(snapshot=False)
