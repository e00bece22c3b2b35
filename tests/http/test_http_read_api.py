"""The read routes: search (hostile queries too), the index, timeline, batch, context."""

from __future__ import annotations

import urllib.parse

import pytest
from http_helpers import headers, seed_observation, seed_session

from memlite.storage.pool import ReaderPool

pytestmark = pytest.mark.loop_guard  # issue 17: fail when the event loop is blocked


@pytest.fixture
async def seeded(storage):
    """Two sessions of project alpha and one of beta; observation ids by title."""
    await seed_session(storage, "a-1")
    await seed_session(storage, "a-2")
    await seed_session(storage, "b-1", project="/p/beta")
    ids = {}
    for i, (session, title) in enumerate([
        ("a-1", "parser crash on empty input"), ("a-1", "parser fixed with guard"),
        ("a-2", "release notes drafted"), ("a-1", "benchmark of the parser"),
        ("a-2", "cache invalidation bug"),
    ]):
        ids[title] = await seed_observation(storage, session, title=title, at_ms=1_000 * (i + 1))
    ids["beta"] = await seed_observation(storage, "b-1", title="parser in beta project",
                                         project="/p/beta", at_ms=2_500)
    return ids


async def _get(client, token, path, **params):
    query = urllib.parse.urlencode(params)
    response = await client.get(f"{path}?{query}", headers=headers(token))
    assert response.status_code == 200, await response.get_data()
    return await response.get_json()


async def test_search_finds_observations_and_says_which_mode_answered(client, token, seeded):
    body = await _get(client, token, "/api/search", q="parser", project="/p/alpha")
    titles = [hit["title"] for hit in body["observations"]]
    assert set(titles) == {"parser crash on empty input", "parser fixed with guard",
                           "benchmark of the parser"}
    assert body["mode"] == "hybrid" and body["mode_used"] == "fts"
    assert "embedder" in body["note"]
    hit = body["observations"][0]
    assert {"id", "score", "tokens", "narrative", "facts", "created_at"} <= set(hit)
    assert body["summaries"] == [] and body["prompts"] == []
    fts = await _get(client, token, "/api/search", q="parser", mode="fts")
    assert fts["note"] is None and len(fts["observations"]) == 4  # every project


@pytest.mark.parametrize("q", ['"', '""', "*", "OR", "AND", "NOT", "(", ")", "parser)",
                               "NEAR(a b)", "col:x", "-parser", "^", "🦀", "parser 🦀 OR (",
                               "'; DROP TABLE observations; --", "\\", "\x00", "a" * 1000])
async def test_hostile_queries_are_searched_as_text(client, token, seeded, q):
    for path in ("/api/search", "/api/search/index"):
        await _get(client, token, path, q=q)
    again = await _get(client, token, "/api/search", q="parser")
    assert again["observations"]  # nothing was harmed


async def test_invalid_utf8_in_the_query_string_is_searched_not_fatal(client, token, seeded):
    response = await client.get("/api/search?q=%ff%fe%20parser", headers=headers(token))
    assert response.status_code == 200


async def test_index_is_compact(client, token, seeded):
    body = await _get(client, token, "/api/search/index", q="parser", project="/p/alpha")
    assert body["count"] == 3 and body["mode_used"] == "fts"
    entry = body["results"][0]
    assert set(entry) == {"id", "date", "type", "title", "project", "session_id", "tokens",
                          "files", "score"}
    assert entry["type"] == "discovery" and entry["tokens"] > 0
    assert entry["date"].startswith("1970-01-01T")


async def test_timeline_is_in_time_order_around_the_anchor(client, token, seeded):
    anchor = seeded["release notes drafted"]
    body = await _get(client, token, "/api/timeline", anchor=anchor, before=1, after=1)
    assert [o["title"] for o in body["observations"]] == [
        "parser fixed with guard", "release notes drafted", "benchmark of the parser"]
    assert body["anchor"] == anchor and body["project"] == "/p/alpha"

    wide = await _get(client, token, "/api/timeline", anchor=anchor)
    assert len(wide["observations"]) == 5  # beta is another project
    session = await _get(client, token, "/api/timeline", anchor=anchor, scope="session")
    assert [o["title"] for o in session["observations"]] == [
        "release notes drafted", "cache invalidation bug"]
    alone = await _get(client, token, "/api/timeline", anchor=anchor, before=0, after=0)
    assert [o["id"] for o in alone["observations"]] == [anchor]


async def test_timeline_of_an_unknown_anchor_is_404(client, token, seeded):
    response = await client.get("/api/timeline?anchor=999999", headers=headers(token))
    assert response.status_code == 404
    assert "999999" in (await response.get_json())["error"]


async def test_batch_returns_full_records_in_order_and_names_the_missing(client, token,
                                                                        seeded):
    wanted = [seeded["cache invalidation bug"], 424242, seeded["beta"],
              seeded["cache invalidation bug"]]
    response = await client.post("/api/observations/batch", headers=headers(token),
                                 json={"ids": wanted})
    body = await response.get_json()
    assert [o["title"] for o in body["observations"]] == ["cache invalidation bug",
                                                          "parser in beta project"]
    assert body["missing"] == [424242]
    assert body["observations"][0]["facts"] == ["fact cache invalidation bug"]
    empty = await client.post("/api/observations/batch", headers=headers(token),
                              json={"ids": []})
    assert await empty.get_json() == {"observations": [], "missing": []}
    full = await client.post("/api/observations/batch", headers=headers(token),
                             json={"ids": list(range(1, 1001))})
    assert full.status_code == 200


async def test_context_is_empty_with_a_reason_for_a_project_without_memory(client, token):
    body = await _get(client, token, "/api/context", project="/p/alpha")
    assert body == {"project": "/p/alpha", "context": "", "chars": 0, "budget": 9000,
                    "layers": [], "omitted": [],
                    "reason": "no memory stored yet for project /p/alpha"}


async def test_context_is_the_project_block(client, token, seeded):
    body = await _get(client, token, "/api/context", project="/p/alpha")
    assert body["context"].startswith("<memlite-context>")
    assert "cache invalidation bug" in body["context"]
    assert "parser in beta project" not in body["context"]
    assert body["chars"] == len(body["context"]) <= body["budget"]
    assert [layer["name"] for layer in body["layers"]] == ["index", "details"]
    assert "reason" not in body
    response = await client.get("/api/context?project=relative/path", headers=headers(token))
    assert response.status_code == 400


# --- the reader pool -----------------------------------------------------------------------


async def test_pool_opens_lazily_caps_connections_and_closes(services, storage):
    pool = ReaderPool(services.db_path, size=2)
    assert pool.open_count == 0
    async with pool.borrow() as first, pool.borrow() as second:
        assert first is not second and pool.open_count == 2
    async with pool.borrow():
        assert pool.open_count == 2  # reused, not reopened
    await pool.close()
    assert pool.open_count == 0
    from memlite.errors import StorageError

    with pytest.raises(StorageError, match="closed"):
        async with pool.borrow():
            pass


async def test_pool_waits_for_a_free_connection(services, storage):
    import trio

    pool = ReaderPool(services.db_path, size=1)
    order: list[str] = []

    async def hold() -> None:
        async with pool.borrow():
            order.append("first in")
            await trio.sleep(0.05)
            order.append("first out")

    async def wait() -> None:
        await trio.sleep(0.01)
        async with pool.borrow():
            order.append("second in")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold)
        nursery.start_soon(wait)
    assert order == ["first in", "first out", "second in"] and pool.open_count == 1
    await pool.close()


async def test_pool_drops_a_connection_that_failed(services, storage):
    import apsw

    pool = ReaderPool(services.db_path, size=1)
    with pytest.raises(apsw.SQLError):
        async with pool.borrow() as conn:
            await conn.async_run(conn.execute, "SELECT * FROM no_such_table")
    assert pool.open_count == 0
    async with pool.borrow() as conn:
        assert await conn.async_run(lambda: conn.execute("SELECT 1").fetchall()) == [(1,)]
    await pool.close()
