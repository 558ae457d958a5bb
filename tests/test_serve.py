"""``bloomkit serve`` over HTTP: the installed command under uvicorn in a subprocess, SQLite on
disk (issue 16). Publish / update / delete / search, every refusal (401, 403, 404, 413, 422),
and the answers against a brute-force scan of the database."""

from __future__ import annotations

import concurrent.futures as cf
import json
import sqlite3
from typing import Any

import httpx
import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from _serve import SMALL_SCHEMA, Server, brute_force, db_records  # noqa: E402

NAMES = ["ming", "wei", "hua", "mei", "jun"]
CITIES = ["Hsinchu", "Taipei", "Tainan"]


def random_profile(rng: np.random.Generator) -> dict[str, Any]:
    """A profile of SMALL_SCHEMA; some attributes left out, ranges and points mixed."""
    p: dict[str, Any] = {"Name": str(rng.choice(NAMES)), "City": str(rng.choice(CITIES))}
    age = int(rng.integers(1, 111))
    p["Age"] = [age, age + int(rng.integers(0, 10))] if rng.random() < 0.8 else age
    inc = int(rng.integers(0, 4500))
    p["Income"] = [inc, inc + int(rng.integers(0, 500))]
    if rng.random() < 0.7:
        lat = int(rng.integers(249_000, 252_000))
        p["Latitude"] = [lat / 1e4, (lat + int(rng.integers(0, 1000))) / 1e4]
    if rng.random() < 0.1:
        del p["City"]
    return p


def random_query(rng: np.random.Generator) -> dict[str, Any]:
    q: dict[str, Any] = {}
    age = int(rng.integers(1, 115))
    q["Age"] = age if rng.random() < 0.5 else [age, age + int(rng.integers(0, 5))]
    inc = int(rng.integers(0, 4900))
    q["Income"] = [inc, inc + int(rng.integers(0, 100))]
    lat = int(rng.integers(249_000, 253_000))
    q["Latitude"] = [lat / 1e4, (lat + int(rng.integers(0, 50))) / 1e4]
    if rng.random() < 0.3:
        q["City"] = str(rng.choice(CITIES))
    return q


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    srv = Server(tmp_path_factory.mktemp("serve"), "--max-body", "4096").start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def client(server: Server) -> Any:
    with server.client() as c:
        yield c


def publish(client: httpx.Client, attrs: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/profiles", json={"attributes": attrs})
    assert r.status_code == 201, r.text
    out: dict[str, Any] = r.json()
    return out


def search(client: httpx.Client, query: dict[str, Any], **kw: Any) -> dict[str, Any]:
    r = client.post("/search", json={"query": query, **kw})
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def test_publish_search_update_delete(client: httpx.Client, server: Server) -> None:
    me = publish(client, {"Name": "ming", "Age": [20, 29], "Latitude": [25.0, 25.0999]})
    assert set(me) == {"id", "token"} and isinstance(me["id"], int) and len(me["token"]) >= 32
    r = search(client, {"Age": 22, "Latitude": [25.01, 25.02], "Name": "ming"})
    assert me["id"] in r["ids"] and r["candidates"] >= 1
    m = r["model"]  # the per-query model; with every stored profile matching there is nothing to price
    assert (m["reason"] is None) == (m["nonmatching"] > 0)
    assert m["reason"] is None or (r["predicted_fpr"] == r["expected_false_candidates"] == 0.0)
    other = search(client, {"Age": 90, "Name": "ming"})
    assert other["ids"] == [] and other["model"]["reason"] is None and other["model"]["nonmatching"] >= 1
    assert 0 < other["predicted_fpr"] < 1 and other["expected_false_candidates"] > 0
    assert set(r) == {"ids", "candidates", "matches", "next", "predicted_fpr", "expected_false_candidates",
                      "model"}  # no attributes of anyone unless asked ("records")
    # the database holds the canonical record and the token's hash only
    con = sqlite3.connect(str(server.db))
    tok, rec = con.execute("SELECT token, record FROM profiles WHERE id = ?", (me["id"],)).fetchone()
    con.close()
    assert json.loads(rec) == {"Name": "ming", "Age": [20, 29], "Latitude": [25.0, 25.0999]}
    assert me["token"].encode() not in bytes(tok) and len(bytes(tok)) == 32
    # update: the old attributes no longer match, the new ones do
    auth = {"Authorization": f"Bearer {me['token']}"}
    r2 = client.put(f"/profiles/{me['id']}", json={"attributes": {"Name": "ming", "Age": [60, 69]}}, headers=auth)
    assert r2.status_code == 200 and r2.json() == {"id": me["id"]}
    assert me["id"] not in search(client, {"Age": 22, "Name": "ming"})["ids"]
    assert me["id"] in search(client, {"Age": 65, "Name": "ming"})["ids"]
    # delete
    assert client.delete(f"/profiles/{me['id']}", headers=auth).status_code == 204
    assert me["id"] not in search(client, {"Age": 65, "Name": "ming"}, verify=False, limit=10_000)["ids"]
    assert client.delete(f"/profiles/{me['id']}", headers=auth).status_code == 404
    assert client.put(f"/profiles/{me['id']}", json={"attributes": {"Age": 1}}, headers=auth).status_code == 404


def test_tokens_are_per_profile(client: httpx.Client) -> None:
    a = publish(client, {"Name": "wei", "Age": 30})
    b = publish(client, {"Name": "hua", "Age": 31})
    other = {"Authorization": f"Bearer {b['token']}"}
    assert client.delete(f"/profiles/{a['id']}", headers=other).status_code == 403
    assert client.put(f"/profiles/{a['id']}", json={"attributes": {"Age": 5}}, headers=other).status_code == 403
    assert a["id"] in search(client, {"Name": "wei", "Age": 30})["ids"]  # untouched
    for bad in ({}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer"}):
        r = client.delete(f"/profiles/{a['id']}", headers=bad)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    unknown = {"Authorization": f"Bearer {a['token']}"}
    for pid in (10**9, 0, -3, 2**70):
        assert client.delete(f"/profiles/{pid}", headers=unknown).status_code in (404, 422)
    assert client.delete("/profiles/10000000", headers=unknown).status_code == 404
    assert client.delete("/profiles/abc", headers=unknown).status_code == 422


@pytest.mark.parametrize("attrs, loc", [
    ({"Agee": 3}, ["body", "attributes", "Agee"]),                       # unknown attribute
    ({"Age": 121}, ["body", "attributes", "Age"]),                       # out of scope
    ({"Age": [30, 20]}, ["body", "attributes", "Age"]),                  # reversed range
    ({"Age": "thirty"}, ["body", "attributes", "Age"]),                  # wrong type
    ({"Age": 30.5}, ["body", "attributes", "Age"]),                      # not an integer
    ({"Age": True}, ["body", "attributes", "Age"]),                       # bool is no number
    ({"Age": [1, 2, 3]}, ["body", "attributes", "Age"]),                 # not a pair
    ({"Age": [1, "2"]}, ["body", "attributes", "Age"]),                  # pair of non-numbers
    ({"Age": None}, ["body", "attributes", "Age"]),
    ({"Name": 5}, ["body", "attributes", "Name"]),                       # text must be a string
    ({"Latitude": [25.0, 95.0]}, ["body", "attributes", "Latitude"]),    # out of scope
    ({}, ["body", "attributes"]),                                        # nothing to publish
])
def test_publish_422_names_the_field(client: httpx.Client, attrs: dict[str, Any], loc: list[str]) -> None:
    r = client.post("/profiles", json={"attributes": attrs})
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == loc
    r = client.post("/search", json={"query": attrs})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "query", *loc[2:]]


@pytest.mark.parametrize("body, loc", [
    ({"attributes": {"Age": 3}, "extra": 1}, ["body", "extra"]),
    ({"attrs": {"Age": 3}}, ["body", "attributes"]),
    ({"attributes": [1, 2]}, ["body", "attributes"]),
    ([1, 2], ["body"]),
])
def test_publish_422_envelope(client: httpx.Client, body: Any, loc: list[str]) -> None:
    r = client.post("/profiles", json=body)
    assert r.status_code == 422
    assert any(d["loc"][: len(loc)] == loc for d in r.json()["detail"])


def test_put_422(client: httpx.Client) -> None:
    a = publish(client, {"Name": "jun", "Age": 40})
    auth = {"Authorization": f"Bearer {a['token']}"}
    r = client.put(f"/profiles/{a['id']}", json={"attributes": {"Age": 500}}, headers=auth)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "attributes", "Age"]
    assert a["id"] in search(client, {"Name": "jun", "Age": 40})["ids"]


@pytest.mark.parametrize("extra, loc", [
    ({"mode": "superset"}, ["body", "mode"]),
    ({"verify": "yes"}, ["body", "verify"]),
    ({"limit": 0}, ["body", "limit"]),
    ({"limit": 10**6}, ["body", "limit"]),
    ({"limit": "5"}, ["body", "limit"]),
    ({"other": 1}, ["body", "other"]),
])
def test_search_422(client: httpx.Client, extra: dict[str, Any], loc: list[str]) -> None:
    r = client.post("/search", json={"query": {"Age": 3}, **extra})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == loc


def test_malformed_json_is_422(client: httpx.Client) -> None:
    r = client.post("/search", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422


def test_body_limit_413(client: httpx.Client) -> None:
    big = {"attributes": {"Name": "x" * 5000}}
    assert client.post("/profiles", json=big).status_code == 413
    assert client.post("/search", json={"query": {"Name": "y" * 5000}}).status_code == 413

    def chunks() -> Any:  # no Content-Length: the streamed size is counted
        for _ in range(10):
            yield b" " * 1000

    r = client.post("/search", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert client.get("/healthz").status_code == 200


def test_stats_and_health(client: httpx.Client) -> None:
    s = client.get("/stats").json()
    assert s["num_bits"] == 256 and s["num_hashes"] >= 1 and 0 < s["predicted_fpr"] < 1
    by = {a["name"]: a for a in s["attributes"]}
    assert by["Latitude"]["typical_range"] == 1000 and by["Latitude"]["group_size"] >= 1
    assert by["Name"]["group_size"] is None and by["Age"]["positions"] >= 1
    assert abs(sum(a["predicted_fpr"] for a in s["attributes"]) - s["predicted_fpr"]) < 1e-12
    assert s["startup"]["source"] in ("database", "snapshot")
    h = client.get("/healthz").json()
    assert h["status"] == "ok" and h["profiles"] == s["profiles"]
    assert client.get("/schema").json() == SMALL_SCHEMA
    assert "openapi" in client.get("/openapi.json").json()
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert client.get("/static/app.js").status_code == 200


def test_matches_brute_force(client: httpx.Client, server: Server) -> None:
    """Concurrent publishes (group commit), then 150 random queries in both modes: without
    verify no false negative; with verify exactly the brute-force answer of the database."""
    rng = np.random.default_rng(16)
    profiles = [random_profile(rng) for _ in range(1500)]
    with cf.ThreadPoolExecutor(8) as ex:
        ids = list(ex.map(lambda p: publish(client, p)["id"], profiles))
    assert len(set(ids)) == len(ids)
    records = db_records(server.db)
    assert set(ids) <= set(records)
    checked = 0
    for i in range(150):
        q = random_query(rng)
        if i % 3 == 0:  # a query some profile matches
            p = profiles[int(rng.integers(len(profiles)))]
            q = {k: (v[0] if isinstance(v, list) else v) for k, v in p.items() if k in ("Age", "Latitude", "City")}
        for mode in ("subset", "intersect"):
            truth = brute_force(SMALL_SCHEMA, records, q, mode)
            loose = search(client, q, mode=mode, verify=False, limit=10_000)
            exact = search(client, q, mode=mode, verify=True, limit=10_000)
            assert set(truth) <= set(loose["ids"]), (q, mode)
            assert exact["ids"] == truth, (q, mode)
            assert exact["candidates"] == loose["candidates"] == len(loose["ids"])
            checked += bool(truth)
    assert checked >= 40
    q = {"Income": [0, 5000]}
    r = search(client, q, mode="intersect", limit=7)
    assert len(r["ids"]) == 7 and r["matches"] >= 1500 and r["ids"] == sorted(r["ids"])


def test_batch_publish(client: httpx.Client) -> None:
    profiles = [{"attributes": {"Name": f"batch{i}", "Age": [30 + i, 40 + i]}} for i in range(20)]
    r = client.post("/profiles/batch", json={"profiles": profiles})
    assert r.status_code == 201, r.text
    out = r.json()["profiles"]
    assert len(out) == 20 and len({p["id"] for p in out}) == 20
    for i, p in enumerate(out):
        assert search(client, {"Name": f"batch{i}", "Age": 35 + i})["ids"] == [p["id"]]
    auth = {"Authorization": f"Bearer {out[3]['token']}"}
    assert client.delete(f"/profiles/{out[3]['id']}", headers=auth).status_code == 204
    # one bad profile: 422 naming it, and none of the batch is published
    bad = [{"attributes": {"Name": "nobatch0", "Age": 3}}, {"attributes": {"Name": "nobatch1", "Age": 300}}]
    r = client.post("/profiles/batch", json={"profiles": bad})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "profiles", 1, "attributes", "Age"]
    assert search(client, {"Name": "nobatch0"})["ids"] == []
    for body in ({"profiles": []}, {"profiles": [{"attributes": {"Age": 1}}] * 1001}, {"profiles": [{"Age": 1}]}):
        assert client.post("/profiles/batch", json=body).status_code in (413, 422)


def test_demo_fills_table1_profiles(tmp_path_factory: pytest.TempPathFactory) -> None:
    """``bloomkit serve --demo``: the report's Table 1 schema (k = 15, Income (5, 1) at m = 512)
    and generated profiles a search finds."""
    srv = Server(tmp_path_factory.mktemp("demo"), "--demo", "--demo-profiles", "300", schema=None).start()
    try:
        with srv.client() as c:
            st = c.get("/stats").json()
            assert st["profiles"] == 300 and st["num_bits"] == 512 and st["num_hashes"] == 15
            inc = next(a for a in st["attributes"] if a["name"] == "Income")
            assert (inc["group_size"], inc["positions"]) == (5, 1)
            rec = db_records(srv.db)
            pid, p = next(iter(rec.items()))
            q = {"Age": p["Age"][0], "Latitude": p["Latitude"], "University": p["University"]}
            assert pid in search(c, q)["ids"]
    finally:
        srv.stop()


def test_a_second_server_on_the_same_database_exits_2_naming_the_holder(client: httpx.Client, server: Server) -> None:
    """Issue 26, item 1: refused at once (before the heavy imports), one line, exit 2; the first
    server answers as before."""
    import subprocess
    import time

    before = search(client, {"Name": "ming"}, verify=False, limit=10_000)["ids"]
    second = Server(server.tmp, db=server.db)
    t0 = time.monotonic()
    r = subprocess.run(second.cmd, capture_output=True, text=True, timeout=60)
    took = time.monotonic() - t0
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"bloomkit: error: the database {str(server.db)!r} is in use by bloomkit serve (pid "
                               f"{server.proc.pid}") and server.url in lines[0] and "stop that one first" in lines[0]
    assert took < 5, took
    assert client.get("/healthz").json()["status"] == "ok"
    assert search(client, {"Name": "ming"}, verify=False, limit=10_000)["ids"] == before
