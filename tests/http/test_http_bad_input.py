"""Bad input gets a 4xx with a JSON error saying what was wrong, and the worker goes on."""

from __future__ import annotations

import pytest
from http_helpers import headers

from memlite.storage import table_counts

WRITE_ROUTES = ["/api/sessions", "/api/events", "/api/summarize", "/api/sessions/complete",
                "/api/observations/batch"]


async def _error(response, status: int, *words: str) -> dict:
    assert response.status_code == status, await response.get_data()
    assert response.headers["Content-Type"].startswith("application/json")
    body = await response.get_json()
    assert set(body) == {"error", "status"} and body["status"] == status
    for word in words:
        assert word.lower() in body["error"].lower(), (word, body)
    return body


async def _still_serving(client, token, readers) -> None:
    response = await client.post("/api/events", headers=headers(token), json={
        "session_id": "ok", "hook_event_name": "SessionStart"})
    assert response.status_code == 200, await response.get_data()
    async with readers.borrow() as conn:
        counts = await conn.async_run(table_counts, conn)
    assert counts["events"] == 1  # only the good request stored anything


@pytest.mark.parametrize("path", WRITE_ROUTES)
@pytest.mark.parametrize(("body", "words"), [
    (b'{"session_id": "s-1",', ["not valid JSON", "line 1"]),
    (b"", ["empty"]),
    (b"   ", ["empty"]),
    (b"[1, 2]", ["JSON object", "array"]),
    (b'"text"', ["JSON object", "string"]),
    (b"null", ["JSON object", "null"]),
    (b"42", ["JSON object", "number"]),
    (b'{"session_id": "\xff\xfe"}', ["UTF-8"]),
    (b'{"a": NaN}', ["NaN"]),
    (b'{"a": Infinity}', ["Infinity"]),
    (b'{"a": "\\ud800"}', ["surrogate"]),
    (b"[" * 100_000 + b"]" * 100_000, ["JSON"]),
    (b'{"a": ' + b"9" * 5000 + b"}", ["JSON"]),
    ('{"a": "caf\u00e9"}'.encode("utf-16"), ["UTF-8"]),
], ids=["truncated", "empty", "blank", "array", "string", "null", "number", "bad-utf8",
        "nan", "infinity", "lone-surrogate", "deep", "huge-int", "utf16"])
async def test_malformed_bodies(client, token, readers, path, body, words):
    response = await client.post(path, headers=headers(token, Content_Type="application/json"),
                                 data=body)
    await _error(response, 400, *words)
    await _still_serving(client, token, readers)


@pytest.mark.parametrize("path", WRITE_ROUTES + ["/api/settings"])
async def test_a_20_mb_body_is_413(client, token, readers, path):
    method = client.put if path == "/api/settings" else client.post
    big = b'{"session_id": "s", "x": "' + b"a" * (20 * 1024 * 1024) + b'"}'
    response = await method(path, headers=headers(token), data=big)
    await _error(response, 413, "too large", str(8 * 1024 * 1024))
    await _still_serving(client, token, readers)


@pytest.mark.parametrize(("payload", "words"), [
    ({"hook_event_name": "PostToolUse"}, ["session_id"]),
    ({"session_id": 12, "hook_event_name": "PostToolUse"}, ["session_id"]),
    ({"session_id": ["x"], "hook_event_name": "PostToolUse"}, ["session_id"]),
    ({"session_id": "s-1"}, ["hook_event_name"]),
    ({"session_id": "s-1", "hook_event_name": 7}, ["hook_event_name"]),
])
async def test_missing_fields_and_wrong_types(client, token, readers, payload, words):
    response = await client.post("/api/events", headers=headers(token), json=payload)
    await _error(response, 400, *words)
    await _still_serving(client, token, readers)


async def test_prompt_of_the_wrong_type(client, token):
    response = await client.post("/api/sessions", headers=headers(token), json={
        "session_id": "s-1", "hook_event_name": "UserPromptSubmit", "prompt": 42})
    await _error(response, 400, "prompt")


@pytest.mark.parametrize(("path", "words"), [
    ("/api/observations/abc", ["observation id", "whole number"]),
    ("/api/observations/-1", ["observation id"]),
    ("/api/observations/0", ["observation id", "between"]),
    ("/api/observations/1.5", ["observation id"]),
    ("/api/observations/99999999999999999999999", ["between"]),
    ("/api/summaries/x", ["summary id"]),
    ("/api/observations/\u0663", ["whole number"]),  # an Arabic-Indic digit is not an id
])
async def test_non_integer_ids(client, token, path, words):
    await _error(await client.delete(path, headers=headers(token)), 400, *words)


@pytest.mark.parametrize(("query", "words"), [
    ("", ["anchor", "required"]),
    ("?anchor=x", ["anchor", "whole number"]),
    ("?anchor=1&before=-1", ["before"]),
    ("?anchor=1&after=1000", ["after"]),
    ("?anchor=1&before=two", ["before"]),
    ("?anchor=1&scope=galaxy", ["scope"]),
])
async def test_bad_timeline_parameters(client, token, query, words):
    await _error(await client.get(f"/api/timeline{query}", headers=headers(token)), 400, *words)


@pytest.mark.parametrize(("body", "words"), [
    ({}, ["ids", "required"]),
    ({"ids": "1,2"}, ["ids", "array"]),
    ({"ids": [1, "2"]}, ["ids[1]", "whole number"]),
    ({"ids": [1, True]}, ["ids[1]"]),
    ({"ids": [1.5]}, ["ids[0]"]),
    ({"ids": [0]}, ["ids[0]", "between"]),
    ({"ids": [2**70]}, ["ids[0]", "between"]),
    ({"ids": list(range(1, 1002))}, ["1001", "at most 1000"]),
])
async def test_bad_batches(client, token, body, words):
    response = await client.post("/api/observations/batch", headers=headers(token), json=body)
    await _error(response, 400, *words)


@pytest.mark.parametrize(("query", "words"), [
    ("", ["q", "required"]),
    ("?q=%20%20", ["q", "required"]),
    ("?q=x&mode=psychic", ["mode"]),
    ("?q=x&limit=0", ["limit"]),
    ("?q=x&limit=1e9", ["limit"]),
    ("?q=" + "a" * 1001, ["longer than"]),
])
async def test_bad_search_parameters(client, token, query, words):
    await _error(await client.get(f"/api/search{query}", headers=headers(token)), 400, *words)


async def test_context_needs_a_project(client, token):
    await _error(await client.get("/api/context", headers=headers(token)), 400, "project")


async def test_unknown_route_and_wrong_method_are_json(client, token):
    await _error(await client.get("/api/nothing-here", headers=headers(token)), 404, "route")
    response = await client.delete("/api/settings", headers=headers(token))
    await _error(response, 405, "method")
    assert "PUT" in response.headers["Allow"]


async def test_an_unexpected_error_is_a_json_500_and_the_worker_goes_on(
        app, client, token, readers, monkeypatch):
    from memlite.http import queries

    def explode(*args, **kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(queries, "search", explode)
    response = await client.get("/api/search?q=x", headers=headers(token))
    body = await _error(response, 500, "internal error")
    assert "secret internal detail" not in body["error"]
    await _still_serving(client, token, readers)


async def test_a_dead_actor_is_a_503(app, token, services):
    from memlite.actors.core import Mailbox

    with Mailbox("dead") as mailbox:
        pass  # closed at once: asks raise ActorDied
    services.storage = mailbox.ref
    response = await app.test_client().delete("/api/observations/1", headers=headers(token))
    await _error(response, 503, "retry")
    assert response.headers["Retry-After"] == "1"


def test_a_cut_error_message_never_grows():
    """Issue 13: the cut marker is never longer than the text it replaces."""
    from memlite.http.errors import MAX_MESSAGE, cut_message

    for size in (MAX_MESSAGE, MAX_MESSAGE + 1, MAX_MESSAGE + 5, 10 * MAX_MESSAGE):
        message = "v" * size
        out = cut_message(message)
        assert len(out) <= min(size, MAX_MESSAGE)  # was MAX_MESSAGE + 9 for any longer one
        assert out == message or out.endswith("... (cut)")
