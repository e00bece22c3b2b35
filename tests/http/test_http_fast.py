"""The fast path for ``GET /api/search`` and ``/api/search/index`` (``memlite/http/fast.py``).

It must answer the requests it takes without Quart, byte for byte as Quart would, and hand
every other request (bad input, another credential, another Host, a failure) to Quart.
"""

from __future__ import annotations

import urllib.parse

import pytest
from http_helpers import headers, seed_observation, seed_session
from test_http_wire import call, served  # noqa: F401  (a fixture)

from memlite.http import fast
from memlite.http.credentials import cookie_name, cookie_value

pytestmark = pytest.mark.loop_guard

QUERIES = [
    {"q": "parser"},
    {"q": "parser", "mode": "fts"},
    {"q": "parser crash", "mode": "FTS", "limit": "2"},
    {"q": "parser", "mode": "semantic"},
    {"q": "parser", "project": "/p/alpha", "type": "discovery,bugfix"},
    {"q": "parser", "since": "1970-01-01", "until": "2100-01-01T00:00:00Z"},
    {"q": "parser", "session": "a-1", "file": "src/x.py"},
    {"q": " café 🦀 \"OR\" ( ", "mode": "fts"},
    {"q": "parser", "q2": "ignored", "limit": ""},
]


@pytest.fixture
async def seeded(storage):
    await seed_session(storage, "a-1")
    await seed_session(storage, "b-1", project="/p/beta")
    for i, title in enumerate(["parser crash on empty input", "parser fixed with guard",
                               "café parser notes 🦀", "cache invalidation bug"]):
        await seed_observation(storage, "a-1", title=title, at_ms=1_000 * (i + 1))
    await seed_observation(storage, "b-1", title="parser in beta", project="/p/beta",
                           at_ms=2_500)


@pytest.fixture
def quart_calls(app, monkeypatch):
    """Paths of the requests that reached Quart's own request handling."""
    seen: list[str] = []
    original = app.handle_request

    async def counted(request):
        seen.append(request.path)
        return await original(request)

    monkeypatch.setattr(app, "handle_request", counted)
    return seen


def _url(path: str, params: dict[str, str]) -> str:
    return f"{path}?{urllib.parse.urlencode(params)}"


async def _raw(client, url, **kwargs):
    response = await client.get(url, **kwargs)
    return response.status_code, dict(response.headers), await response.get_data()


async def test_search_and_index_skip_quart(client, token, seeded, quart_calls):
    for path in ("/api/search", "/api/search/index"):
        status, _, _ = await _raw(client, _url(path, {"q": "parser"}), headers=headers(token))
        assert status == 200
    assert (await client.get("/api/health", headers=headers())).status_code == 200
    assert quart_calls == []  # old code: every request went through Quart
    await client.get("/api/settings", headers=headers(token))
    assert quart_calls == ["/api/settings"]


async def test_health_is_quarts_answer_without_quart(client, token, monkeypatch, quart_calls):
    import re

    def comparable(answer):
        status, head, body = answer
        body = re.sub(rb'"uptime":[0-9.e+-]+', b'"uptime":0', body)
        return status, {k: v for k, v in head.items() if k.lower() != "content-length"}, body

    fast_answer = await _raw(client, "/api/health", headers=headers())
    with_token = await _raw(client, "/api/health", headers=headers(token))
    assert quart_calls == []
    monkeypatch.setattr(fast, "FAST_ROUTES", {})
    monkeypatch.setattr(fast, "HEALTH", None)
    quart_answer = await _raw(client, "/api/health", headers=headers())
    assert quart_calls == ["/api/health"]
    assert comparable(fast_answer) == comparable(quart_answer) == comparable(with_token)
    assert b'"status":"ok"' in fast_answer[2] and b'"uptime":' in fast_answer[2]
    quart_calls.clear()
    wrong_host = await client.get("/api/health", headers=headers(host="evil.example:37888"))
    assert wrong_host.status_code == 403 and quart_calls == ["/api/health"]


RAW_URLS = ["/api/search?q=%ff%fe%20parser&mode=fts",  # invalid UTF-8 stays percent-encoded
            "/api/search?q=parser&q=cache&mode=fts&mode=semantic",  # first value wins
            "/api/search/index?q=parser+crash;mode=fts"]  # ";" is no separator


async def test_answers_are_byte_for_byte_quarts(client, token, seeded, monkeypatch,
                                                quart_calls):
    urls = [*(_url(path, params) for path in ("/api/search", "/api/search/index")
              for params in QUERIES), *RAW_URLS]
    fast_answers = [await _raw(client, url, headers=headers(token)) for url in urls]
    assert quart_calls == []  # all of them answered by the fast path
    monkeypatch.setattr(fast, "FAST_ROUTES", {})  # every request to Quart now
    for url, answer in zip(urls, fast_answers, strict=True):
        status, head, body = await _raw(client, url, headers=headers(token))
        assert (status, body) == answer[::2], url
        assert head == answer[1], url
    assert sum(b'"observations":[{' in body or b'"results":[{' in body
               for _, _, body in fast_answers) >= 10  # the queries found something


@pytest.mark.parametrize("params, status", [
    ({}, 400), ({"q": "  "}, 400), ({"q": "x", "mode": "magic"}, 400),
    ({"q": "x", "limit": "0"}, 400), ({"q": "x", "limit": "abc"}, 400),
    ({"q": "x", "type": "nonsense"}, 400), ({"q": "x", "since": "yesterday"}, 400),
    ({"q": "x", "since": "2026-02-01", "until": "2026-01-01"}, 400),
    ({"q": "x" * 1001}, 400),
])
async def test_bad_input_goes_to_quart_with_its_error(client, token, seeded, quart_calls,
                                                      params, status):
    response = await client.get(_url("/api/search", params), headers=headers(token))
    assert response.status_code == status
    body = await response.get_json()
    assert body["status"] == status and body["error"]
    assert quart_calls == ["/api/search"]


async def test_refusals_stay_quarts(client, token, seeded, quart_calls, app):
    url = _url("/api/search", {"q": "parser"})
    assert (await client.get(url, headers=headers())).status_code == 401
    assert (await client.get(url, headers=headers("wrong"))).status_code == 401
    assert (await client.get(url, headers=headers(token, host="evil.example:37888"))
            ).status_code == 403
    assert (await client.get(url, headers={**headers(token), "Authorization": f"Basic {token}"})
            ).status_code == 401
    assert (await client.post(url, headers=headers(token))).status_code == 405
    with_body = await client.get(url, headers={**headers(token), "Content-Length": "10"},
                                 data=b"x" * 10)
    assert with_body.status_code == 200
    port = app.extensions["memlite"].port
    cookie = {"Cookie": f"{cookie_name(port)}={cookie_value(token)}"}
    assert (await client.get(url, headers={**headers(), **cookie})).status_code == 200
    assert len(quart_calls) == 7  # all of them, the cookie's 200 included


async def test_a_failed_search_is_answered_by_quart(client, token, seeded, monkeypatch,
                                                    quart_calls):
    from memlite.http import queries

    def explode(*args, **kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(queries, "index", explode)
    response = await client.get(_url("/api/search/index", {"q": "parser"}),
                                headers=headers(token))
    assert response.status_code == 500
    assert "secret" not in (await response.get_json())["error"]
    assert quart_calls == ["/api/search/index"]


async def test_each_request_counts_once(client, token, seeded, services):
    before = services.activity.requests
    for path in ("/api/search", "/api/search/index"):
        await client.get(_url(path, {"q": "parser"}), headers=headers(token))
    await client.get(_url("/api/search", {"q": ""}), headers=headers(token))  # Quart's 400
    await client.get("/api/health", headers=headers())
    assert services.activity.requests == before + 4


async def test_on_a_real_socket_the_answer_is_quarts(served, token, seeded,  # noqa: F811
                                                     monkeypatch):
    port, app, _ = served
    host = {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {token}"}
    url = _url("/api/search", {"q": "parser", "mode": "fts"})
    status, head, body = await call(port, "GET", url, headers=host)
    monkeypatch.setattr(fast, "FAST_ROUTES", {})
    status2, head2, body2 = await call(port, "GET", url, headers=host)
    assert (status, body) == (status2, body2) == (200, body)
    assert b'"observations":[{' in body
    same = {k.lower(): v for k, v in head.items() if k.lower() != "date"}
    assert same == {k.lower(): v for k, v in head2.items() if k.lower() != "date"}
    wrong_host = {**host, "Host": f"localhost:{port + 1}"}
    assert (await call(port, "GET", url, headers=wrong_host))[0] == 403


async def test_a_response_head_and_body_leave_in_one_write(served, token, seeded,  # noqa: F811
                                                           monkeypatch):
    """``oneshot``: Hypercorn wrote the head and the body of a response apart (two socket
    writes, each waking the client); now one."""
    from hypercorn.events import RawData
    from hypercorn.trio.tcp_server import TCPServer

    from memlite.http import oneshot

    assert oneshot.installed()
    writes: list[bytes] = []
    original = TCPServer.protocol_send

    async def counted(self, event):
        if isinstance(event, RawData) and event.data:
            writes.append(event.data)
        await original(self, event)

    monkeypatch.setattr(TCPServer, "protocol_send", counted)
    port, _, _ = served
    host = {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {token}"}
    for path in (_url("/api/search", {"q": "parser", "mode": "fts"}), "/api/health",
                 "/api/nothing-here"):
        writes.clear()
        status, _, body = await call(port, "GET", path, headers=host)
        assert len(writes) == 1, (path, writes)
        assert writes[0].startswith(f"HTTP/1.1 {status} ".encode())
        assert writes[0].endswith(body) and body
