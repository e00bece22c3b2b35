"""The supersession replay (``storage.relink``): a database or an import written without
the insert-time rules ends with the links those rules would have made, and no other."""

from __future__ import annotations

import io
import json
import random
import threading
import time

import apsw
import pytest
import trio

from memlite import storage, transfer
from memlite.actors.core import spawn
from memlite.actors.storage import StorageActor, StoreEvent
from memlite.storage import relink, writes
from memlite.storage.migrations import MIGRATIONS, migrate
from memlite.storage.search import Filters, search
from memlite.storage.topics import record_supersession

DAY_MS = 86_400_000
T0 = 1_700_000_000_000

# (project, type, title): changes of mind, same-topic pairs, and bystanders
TITLES = [
    ("/repo/a", "decision", "Use requests for the HTTP client"),
    ("/repo/a", "decision", "Switched the HTTP client from requests to httpx"),
    ("/repo/a", "decision", "Switched HTTP client from httpx to aiohttp"),
    ("/repo/a", "decision", "Reverted HTTP client back to httpx"),
    ("/repo/a", "discovery", "requests per second are capped at 100"),
    ("/repo/a", "decision", "Retry budget 3 for payment webhooks"),
    ("/repo/a", "decision", "Retry budget raised to 5 for payment webhooks"),
    ("/repo/a", "bugfix", "Fix race in session cleanup"),
    ("/repo/a", "bugfix", "Fixed race in session cleanup again"),
    ("/repo/a", "feature", "Metrics polling every 10 seconds"),
    ("/repo/a", "change", "Replace metrics polling with a WebSocket stream"),
    ("/repo/a", "feature", "YAML config support"),
    ("/repo/a", "change", "Dropped YAML config support; TOML only"),
    ("/repo/b", "decision", "Use a Redis lock to prevent overlapping billing cycle runs"),
    ("/repo/b", "decision", "Switched billing cycle lock from Redis to Postgres advisory locks"),
    ("/repo/b", "decision", "Reverted billing cycle lock back to Redis, with a renewal thread"),
    ("/repo/b", "refactor", "fct_events switched from merge to insert_overwrite"),
    ("/repo/b", "refactor", "fct_events uses merge strategy"),
    ("/repo/b", "decision", "Use Redis for billing lock"),
    ("/repo/b", "discovery", "Redis lock TTL is 30 seconds"),
]


def corpus(seed: int, *, ai: bool = True) -> list[storage.NewObservation]:
    """A shuffled sequence of the titles, each at a random day: some are stored after a
    newer one (late), a few name an earlier one in ``supersedes`` (the AI observer)."""
    rng = random.Random(seed)
    rows = rng.sample(TITLES, k=len(TITLES)) + rng.sample(TITLES, k=6)
    out = []
    for n, (project, type_, title) in enumerate(rows):
        supersedes = (rng.randrange(1, n + 1),) if n and rng.random() < 0.1 else ()
        supersedes = supersedes if ai else ()
        out.append(storage.NewObservation(
            session_id=f"s{n % 3}", project=project, type=type_,
            title=f"{title}" if n < len(TITLES) else f"{title} ({n})",
            at_ms=T0 + rng.randrange(0, 30) * DAY_MS + n, supersedes=supersedes))
    return out


def links(conn: apsw.Connection) -> dict[int, int | None]:
    return dict(conn.execute("SELECT id, superseded_by FROM observations ORDER BY id"))


def no_rules(monkeypatch) -> None:
    """Store as a memlite before the rules did: no links but the AI's ``supersedes``."""
    monkeypatch.setattr(writes, "record_supersession", lambda conn, new_id: [])


def written(path, observations, *, version: int | None = None) -> apsw.Connection:
    """A database at ``path`` (schema ``version``: latest by default) holding
    ``observations`` stored through the insert path."""
    path.mkdir(parents=True)
    conn = apsw.Connection(str(path / "memlite.db"))
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, path, MIGRATIONS if version is None else MIGRATIONS[:version])
    with conn:
        for obs in observations:
            storage.insert_observation(conn, obs)
    return conn


@pytest.mark.parametrize("seed", range(12))
def test_the_replay_makes_the_links_the_insert_time_rules_make(tmp_path, monkeypatch, seed):
    observations = corpus(seed)
    live = written(tmp_path / "live", observations)
    expected = links(live)
    live.close()
    assert any(v is not None for v in expected.values())
    with monkeypatch.context() as patch:
        no_rules(patch)
        old = written(tmp_path / "old", observations)
    assert links(old) != expected  # the rules made links the old database lacks
    with old:
        relink.schedule(old)
    result = relink.resume(old)
    assert result is not None and result.observations == len(observations)
    assert links(old) == expected
    assert relink.pending(old) is None
    old.close()


def old_database(data, fillers: int = 0) -> None:
    """A database of schema 4 (before migration 5) holding a change of mind, unlinked, and
    ``fillers`` bystanders stored after it."""
    with pytest.MonkeyPatch.context() as patch:
        no_rules(patch)
        old = written(data, [
            storage.NewObservation(session_id="s1", project="/repo/a", type="decision",
                                   title="Use requests for the HTTP client", at_ms=T0),
            storage.NewObservation(session_id="s1", project="/repo/a", type="decision",
                                   title="Switched the HTTP client from requests to httpx",
                                   at_ms=T0 + DAY_MS),
            *(storage.NewObservation(session_id="s2", project="/repo/a", type="decision",
                                     title=f"Keep setting {n} at its default",
                                     at_ms=T0 + 2 * DAY_MS + n) for n in range(fillers)),
        ], version=4)
    assert links(old)[1] is None
    old.close()


async def wait_for(condition, seconds: float = 60.0) -> None:
    with trio.fail_after(seconds):
        while not condition():  # noqa: ASYNC110 - polls the database
            await trio.sleep(0.02)


def replay_state(data) -> tuple[tuple[int, int] | None, int | None]:
    conn = storage.connect(data, writer=False)
    try:
        return relink.pending(conn), links(conn)[1]
    finally:
        conn.close()


async def test_the_storage_actor_serves_at_once_and_relinks_an_old_database_behind(
        tmp_path, monkeypatch):
    """Migration 5 only schedules the replay: the worker's storage actor is ready and
    writes before the replay has begun (a starter kills a worker not ready in 20 s, and a
    replay takes minutes at 100k), then the replay links what the rules would have."""
    data = tmp_path / "data"
    old_database(data)
    go = threading.Event()
    real = relink.resume

    def held(conn, **kwargs):
        go.wait(30)
        return real(conn, **kwargs)

    monkeypatch.setattr(relink, "resume", held)
    async with spawn(StorageActor(data).run) as ref:
        stored = await ref.ask(lambda r: StoreEvent(
            session_id="s9", event_name="UserPromptSubmit", payload={"prompt": "hi"},
            reply=r), timeout=30)
        assert stored.created
        assert replay_state(data) == ((0, 2), None)  # served while the replay waits
        go.set()
        await wait_for(lambda: replay_state(data) == (None, 2))
    conn = storage.connect(data)
    try:
        hits = [h.observation.id for h in search(conn, "HTTP client requests", mode="fts",
                                                filters=Filters(project="/repo/a")).hits]
        assert hits == [2]
    finally:
        conn.close()


async def test_writes_go_through_while_a_replay_runs_and_a_stop_keeps_its_progress(
        tmp_path, monkeypatch):
    """A slow replay beside the actor: every write meanwhile is stored (the replay holds the
    write lock for one short chunk at a time); stopping the actor stops the replay with its
    position committed, and the next start finishes it."""
    data = tmp_path / "data"
    old_database(data, fillers=200)

    def slow(conn, oid):
        time.sleep(0.01)
        return record_supersession(conn, oid)

    monkeypatch.setattr(relink, "record_supersession", slow)
    async with spawn(StorageActor(data).run) as ref:
        await wait_for(lambda: (replay_state(data)[0] or (0, 0))[0] > 0)
        for n in range(20):
            stored = await ref.ask(lambda r, n=n: StoreEvent(
                session_id="s9", event_name="UserPromptSubmit", payload={"prompt": f"p{n}"},
                reply=r), timeout=30)
            assert stored.created
    state, _ = replay_state(data)
    assert state is not None and 0 < state[0] < 202  # stopped part way, position kept
    monkeypatch.setattr(relink, "record_supersession", record_supersession)
    async with spawn(StorageActor(data).run):
        await wait_for(lambda: replay_state(data) == (None, 2))
    conn = storage.connect(data, writer=False)
    try:
        assert conn.execute("SELECT count(*) FROM events WHERE session_id = 's9'"
                            ).fetchall() == [(20,)]
    finally:
        conn.close()


def test_a_blank_database_schedules_nothing(db):
    assert relink.pending(db) is None
    assert relink.resume(db) is None


def test_links_already_stored_are_never_changed_or_removed(tmp_path, monkeypatch):
    """A link made otherwise (by hand, by the AI) stays, even where the rules would link
    the row elsewhere, and a row the rules would leave live stays hidden."""
    observations = corpus(3)
    live = written(tmp_path / "live", observations)
    expected = links(live)
    live.close()
    replaced = next(oid for oid, by in expected.items() if by is not None)
    untouched = next(oid for oid, by in expected.items() if by is None and oid > 2)
    with monkeypatch.context() as patch:
        no_rules(patch)
        old = written(tmp_path / "old", observations)
    # by hand: ``replaced`` under another row, ``untouched`` hidden
    other = next(oid for oid in expected if oid not in (replaced, expected[replaced]))
    with old:
        old.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (other, replaced))
        old.execute("UPDATE observations SET superseded_by = 1 WHERE id = ?", (untouched,))
        relink.schedule(old)
    before = {k: v for k, v in links(old).items() if v is not None}
    result = relink.resume(old)
    got = links(old)
    assert got[replaced] == other and got[untouched] == 1
    assert {k: got[k] for k in before} == before  # nothing re-linked or shown again
    assert result is not None
    assert len(before) < sum(v is not None for v in got.values())  # the others were made
    old.close()


def test_an_interrupted_replay_goes_on_where_it_stopped(tmp_path, monkeypatch):
    """Committed in chunks: a start killed half-way (here: a rule that fails) keeps what
    it did, the next start finishes, and the result is the uninterrupted one."""
    observations = corpus(5)
    live = written(tmp_path / "live", observations)
    expected = links(live)
    live.close()
    with monkeypatch.context() as patch:
        no_rules(patch)
        old = written(tmp_path / "old", observations)
    with old:
        relink.schedule(old)
    calls = []

    def failing_at_15(conn, oid):
        calls.append(oid)
        if len(calls) == 15:
            raise RuntimeError("killed")
        return storage.topics.record_supersession(conn, oid)

    assert relink.resume(old, rule=failing_at_15, chunk_seconds=0) is None
    done, upto = relink.pending(old)
    assert done == 14 and upto == len(observations)
    assert old.execute("SELECT name FROM temp.sqlite_schema").fetchall() == []
    assert relink.resume(old, chunk_seconds=0) is not None
    assert links(old) == expected
    old.close()


def test_an_import_of_an_export_without_links_gets_them(tmp_path, monkeypatch, data_dir):
    """An export written by an older memlite has no ``superseded_by``: importing it
    replays the rules over the imported rows, in file order."""
    observations = corpus(7, ai=False)
    # an export lists observations oldest first: the order they are imported in
    observations.sort(key=lambda obs: obs.at_ms)
    live = written(tmp_path / "live", observations)
    expected = links(live)
    live.close()
    with monkeypatch.context() as patch:
        no_rules(patch)
        old = written(tmp_path / "old", observations)
    out = io.StringIO()
    transfer.export(old, out)
    old.close()
    lines = out.getvalue().splitlines()
    exported = [json.loads(line) for line in lines]
    assert all(not r.get("superseded_by") for r in exported if r["kind"] == "observation")
    conn = storage.connect(data_dir)
    try:
        report = transfer.import_lines(conn, lines)
        assert report.added["observation"] == len(observations)
        assert links(conn) == expected
        assert relink.pending(conn) is None
    finally:
        conn.close()
