"""The dashboard's JSON: stats, projects, the feed (cursor paging), sessions, one session."""

from __future__ import annotations

import base64
import urllib.parse
from datetime import UTC, datetime, timedelta

import pytest
from http_helpers import headers, seed_observation, seed_session

from memlite.actors.storage import StoreObservations, StoreSummary
from memlite.storage.records import NewObservation, NewSummary
from memlite.storage.timestamps import now_ms

pytestmark = pytest.mark.loop_guard  # issue 17: fail when the event loop is blocked

T0 = 1_780_000_000_000  # 2026-05-28


async def _get(client, token, path, status=200, **params):
    query = urllib.parse.urlencode(params)
    response = await client.get(f"{path}?{query}" if query else path, headers=headers(token))
    body = await response.get_json()
    assert response.status_code == status, body
    return body


async def _store_many(storage, found):
    return [r.id for r in await storage.ask(
        lambda reply: StoreObservations(observations=tuple(found), reply=reply), timeout=10)]


async def _summary(storage, session_id, at_ms, project="/p/alpha", request="req"):
    return await storage.ask(lambda reply: StoreSummary(summary=NewSummary(
        session_id=session_id, project=project, request=request, learned="learned",
        at_ms=at_ms), reply=reply), timeout=5)


def _obs(i, *, at_ms, session="a-1", project="/p/alpha", **more):
    return NewObservation(session_id=session, project=project, type="change",
                          title=f"obs {i}", narrative=f"n {i}", at_ms=at_ms, backend="rules",
                          **more)


@pytest.fixture
async def ties(storage):
    """47 observations and 5 summaries in project alpha, nearly all on 3 milliseconds, plus
    one in beta; ``(kind, id)`` in the order the feed must give, newest first."""
    await seed_session(storage, "a-1")
    await seed_session(storage, "b-1", project="/p/beta")
    epochs = [T0 + 2] * 20 + [T0 + 1] * 20 + [T0] * 7
    ids = await _store_many(storage, [_obs(i, at_ms=at) for i, at in enumerate(epochs)])
    summaries = [await _summary(storage, "a-1", T0 + 1, request=f"s{i}") for i in range(4)]
    summaries.append(await _summary(storage, "a-1", T0 + 5))
    await seed_observation(storage, "b-1", title="beta one", project="/p/beta", at_ms=T0 + 3)
    expected = sorted([(at, 1, i, "observation") for at, i in zip(epochs, ids, strict=True)]
                      + [(T0 + 1, 0, i, "summary") for i in summaries[:4]]
                      + [(T0 + 5, 0, summaries[4], "summary")], reverse=True)
    return [(kind, i) for _, _, i, kind in expected]


async def _walk(client, token, limit, **params):
    seen, pages, cursor = [], 0, None
    while True:
        extra = {"before": cursor} if cursor else {}
        body = await _get(client, token, "/api/feed", limit=limit, **params, **extra)
        seen += [(item["kind"], item["id"]) for item in body["items"]]
        pages += 1
        cursor = body["next"]
        if cursor is None:
            return seen, pages
        assert pages < 100


@pytest.mark.parametrize("limit", [1, 3, 7, 20, 52, 200])
async def test_feed_pages_are_exact_with_equal_timestamps(client, token, ties, limit):
    seen, pages = await _walk(client, token, limit, project="/p/alpha")
    assert seen == ties  # every item once, in (time, kind, id) order: no gap, no repeat
    assert pages == -(-len(ties) // limit)  # the last page says so: no empty extra page


async def test_new_rows_at_the_top_do_not_shift_later_pages(client, token, storage, ties):
    first = await _get(client, token, "/api/feed", project="/p/alpha", limit=10)
    await _store_many(storage, [_obs(100 + i, at_ms=T0 + 2) for i in range(3)]
                      + [_obs(200, at_ms=T0 + 50)])
    rest = []
    cursor = first["next"]
    while cursor:
        body = await _get(client, token, "/api/feed", project="/p/alpha", limit=10,
                          before=cursor)
        rest += [(item["kind"], item["id"]) for item in body["items"]]
        cursor = body["next"]
    assert [(i["kind"], i["id"]) for i in first["items"]] + rest == ties


async def test_feed_items_carry_the_full_record_and_hide_superseded(client, token, storage):
    await seed_session(storage, "a-1")
    old = await seed_observation(storage, "a-1", title="rules guess", at_ms=T0)
    [new] = await _store_many(storage, [_obs(1, at_ms=T0 + 10, supersedes=(old,),
                                             facts=("f1",), files_modified=("x.py",))])
    summary = await _summary(storage, "a-1", T0 + 5)
    body = await _get(client, token, "/api/feed")
    assert [(i["kind"], i["id"]) for i in body["items"]] == [
        ("observation", new), ("summary", summary)]
    assert body["next"] is None
    obs = body["items"][0]
    assert obs["facts"] == ["f1"] and obs["files_modified"] == ["x.py"]
    assert obs["session_id"] == "a-1" and obs["created_at"].startswith("2026-05-28T")
    assert body["items"][1]["learned"] == "learned"


async def test_feed_and_sessions_filter_by_project_and_hostile_projects_match_nothing(
        client, token, ties):
    beta = await _get(client, token, "/api/feed", project="/p/beta")
    assert [i["title"] for i in beta["items"]] == ["beta one"]
    everything, _ = await _walk(client, token, 200)
    assert len(everything) == len(ties) + 1
    for hostile in ["'; DROP TABLE observations; --", "%", "_", "/p/%", "<script>", "\u202e",
                    "🦀", "x" * 4096]:
        assert (await _get(client, token, "/api/feed", project=hostile))["items"] == []
        assert (await _get(client, token, "/api/sessions", project=hostile))["sessions"] == []
    assert len((await _get(client, token, "/api/feed", limit=200))["items"]) == len(ties) + 1


def _cursor(text):
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(("path", "params", "names"), [
    ("/api/feed", {"before": "not a cursor"}, "before"),
    ("/api/feed", {"before": "!!!"}, "before"),
    ("/api/feed", {"before": _cursor("1.2.3")}, "before"),
    ("/api/feed", {"before": _cursor("1.1.-3")}, "before"),
    ("/api/feed", {"before": _cursor("1.1.99999999999999999999")}, "before"),
    ("/api/feed", {"before": _cursor("99999999999999999.1.1")}, "before"),
    ("/api/feed", {"before": base64.urlsafe_b64encode(b"\xff\xfe").decode()}, "before"),
    ("/api/feed", {"limit": "0"}, "limit"),
    ("/api/feed", {"limit": "201"}, "limit"),
    ("/api/feed", {"limit": "ten"}, "limit"),
    ("/api/feed", {"project": "x" * 4097}, "project"),
    ("/api/sessions", {"limit": "-1"}, "limit"),
    ("/api/sessions", {"before": "zz"}, "before"),
    ("/api/sessions", {"before": _cursor("abc.s")}, "before"),
])
async def test_bad_parameters_are_a_400_that_names_them(client, token, path, params, names):
    body = await _get(client, token, path, status=400, **params)
    assert names in body["error"]


async def test_sessions_newest_first_with_counts_latest_summary_and_cursor(client, token,
                                                                           storage):
    for i in range(5):
        await seed_session(storage, f"s-{i}", project="/p/alpha" if i % 2 else "/p/beta")
    await seed_observation(storage, "s-1", title="one", at_ms=T0)
    await seed_observation(storage, "s-1", title="two", at_ms=T0 + 1)
    await _summary(storage, "s-1", T0 + 2, request="older")
    await _summary(storage, "s-1", T0 + 3, request="newest")
    first = await _get(client, token, "/api/sessions", limit=2)
    ids = [s["id"] for s in first["sessions"]]
    cursor = first["next"]
    while cursor:
        page = await _get(client, token, "/api/sessions", limit=2, before=cursor)
        ids += [s["id"] for s in page["sessions"]]
        cursor = page["next"]
    everything = await _get(client, token, "/api/sessions")
    assert ids == [s["id"] for s in everything["sessions"]] and sorted(ids) == [
        f"s-{i}" for i in range(5)]
    epochs = [s["started_at_epoch"] for s in everything["sessions"]]
    assert epochs == sorted(epochs, reverse=True)
    s1 = next(s for s in everything["sessions"] if s["id"] == "s-1")
    assert (s1["observations"], s1["summaries"], s1["summary"]["request"]) == (2, 2, "newest")
    assert s1["project"] == "/p/alpha" and s1["started_at"] and s1["completed_at"] is None
    assert next(s for s in everything["sessions"] if s["id"] == "s-0")["summary"] is None
    alpha = await _get(client, token, "/api/sessions", project="/p/alpha")
    assert sorted(s["id"] for s in alpha["sessions"]) == ["s-1", "s-3"]


async def test_one_session_is_its_whole_timeline_and_unknown_is_404(client, token, storage):
    await seed_session(storage, "a-1")
    old = await seed_observation(storage, "a-1", title="first", at_ms=T0 + 5)
    [new] = await _store_many(storage, [_obs(1, at_ms=T0 + 9, supersedes=(old,))])
    early = await seed_observation(storage, "a-1", title="early", at_ms=T0)
    await _summary(storage, "a-1", T0 + 10)
    body = await _get(client, token, "/api/sessions/a-1")
    assert body["session"]["id"] == "a-1" and body["session"]["observations"] == 3
    assert [(o["id"], o["superseded"]) for o in body["observations"]] == [
        (early, False), (old, True), (new, False)]
    assert [s["request"] for s in body["summaries"]] == ["req"]
    assert body["prompts"] == []
    missing = await _get(client, token, "/api/sessions/nope", status=404)
    assert "nope" in missing["error"]
    await _get(client, token, "/api/sessions/" + urllib.parse.quote("'; DROP TABLE x; --"),
               status=404)


async def test_stats_count_the_database_and_bucket_the_last_seven_days(client, token,
                                                                       storage):
    await seed_session(storage, "a-1")
    await seed_session(storage, "b-1", project="/p/beta")
    today = datetime.fromtimestamp(now_ms() / 1000, tz=UTC).replace(
        hour=0, minute=0, second=0, microsecond=0)
    day_ms = lambda days: int((today - timedelta(days=days)).timestamp() * 1000)  # noqa: E731
    await _store_many(storage, [
        _obs(1, at_ms=day_ms(0) + 1), _obs(2, at_ms=day_ms(0) + 2),
        _obs(3, at_ms=day_ms(6)), _obs(4, at_ms=day_ms(7) + 86_399_999),
        NewObservation(session_id="b-1", project="/p/beta", type="bugfix", title="b",
                       at_ms=day_ms(3), backend="rules")])
    await _summary(storage, "a-1", day_ms(1))
    body = await _get(client, token, "/api/stats")
    assert (body["sessions"], body["observations"], body["summaries"], body["projects"]) == (
        2, 5, 1, 2)
    assert body["types"] == {"change": 4, "bugfix": 1}
    assert [d["observations"] for d in body["activity"]] == [1, 0, 0, 1, 0, 0, 2]
    assert body["activity"][-1]["day"] == today.date().isoformat()
    assert body["uptime_seconds"] >= 0
    assert body["observer"] == {"ok": False, "line": "this server runs no observer"}
    assert body["spool"] == {"waiting": False, "quarantined": 0, "latest": None, "files": []}


async def test_stats_show_the_spool_and_its_quarantine(client, token, data_dir):
    from memlite.hooks import spool

    spool.append(data_dir, "Stop", {"session_id": 42}, now_ms=1)
    (claimed,) = spool.claim(data_dir)
    (record,) = spool.read_claimed(claimed)
    spool.reject(data_dir, record, "InputError: field 'session_id' must be a string",
                 now_ms=7)
    spool.append(data_dir, "Stop", {"session_id": "s"}, now_ms=8)
    body = await _get(client, token, "/api/stats")
    assert body["spool"] == {
        "waiting": True, "quarantined": 1,
        "latest": {"reason": "InputError: field 'session_id' must be a string",
                   "source": claimed.name, "line": 1, "event": "Stop", "rejectedAt": 7},
        "files": [str(data_dir / "spool" / "quarantine.jsonl")]}


async def test_projects_newest_activity_first_with_counts(client, token, storage):
    await seed_session(storage, "a-1")
    await seed_session(storage, "a-2")
    await seed_session(storage, "b-1", project="/p/beta/")
    await seed_observation(storage, "a-1", title="a", at_ms=T0)
    await seed_observation(storage, "b-1", title="b", project="/p/beta/", at_ms=T0)
    body = await _get(client, token, "/api/projects")
    by_name = {p["name"]: p for p in body["projects"]}
    assert set(by_name) == {"alpha", "beta"}
    assert (by_name["alpha"]["observations"], by_name["alpha"]["sessions"]) == (1, 2)
    assert by_name["alpha"]["project"] == "/p/alpha"
    lasts = [p["last_at_epoch"] for p in body["projects"]]
    assert lasts == sorted(lasts, reverse=True)
    assert body["projects"][0]["last_at"].endswith("Z")


@pytest.mark.parametrize("path", ["/api/stats", "/api/projects", "/api/feed", "/api/sessions",
                                  "/api/sessions/a-1"])
async def test_every_dashboard_route_needs_the_token(client, token, path):
    response = await client.get(path, headers=headers())
    assert response.status_code == 401
    wrong = await client.get(path, headers=headers("x" * 43))
    assert wrong.status_code == 401


async def test_a_stub_session_goes_by_the_project_of_what_it_recorded(client, token, storage):
    await seed_observation(storage, "stub-1", title="before SessionStart", at_ms=T0)
    await seed_session(storage, "b-1", project="/p/beta")
    alpha = await _get(client, token, "/api/sessions", project="/p/alpha")
    assert [(s["id"], s["project"], s["project_name"]) for s in alpha["sessions"]] == [
        ("stub-1", "/p/alpha", "alpha")]
    beta = await _get(client, token, "/api/sessions", project="/p/beta")
    assert [s["id"] for s in beta["sessions"]] == ["b-1"]
    one = await _get(client, token, "/api/sessions/stub-1")
    assert one["session"]["project"] == "/p/alpha"
