"""The snapshot writer: what it writes is what /api/context serves, and it follows the memory.

A real database (sync connection) behind the ``read`` callable; the rounds are driven with
``Refresh`` or the bus, the files checked on disk and through the hook's own reader.
"""

from __future__ import annotations

import os

import trio

from memlite.actors.bus import EventBus, Publish
from memlite.actors.core import spawn
from memlite.actors.snapshots import Refresh, Snapshotter
from memlite.config import load_settings
from memlite.context import build_context_for
from memlite.context_text import LAYER_ORDER
from memlite.hooks import snapshot
from memlite.storage import (
    NewObservation,
    NewSummary,
    connect,
    insert_event,
    insert_observation,
    insert_prompt,
    insert_summary,
    start_session,
)
from memlite.storage.writes import delete_observation, delete_summary


def _git_project(root) -> str:  # type: ignore[no-untyped-def]
    (root / ".git").mkdir(parents=True)
    return str(root)


def _reader(conn):  # type: ignore[no-untyped-def]
    async def read(fn, *args):  # type: ignore[no-untyped-def]
        return fn(conn, *args)
    return read


def _seed(conn, project: str,  # type: ignore[no-untyped-def]
          session: str = "s1") -> tuple[int, int]:
    start_session(conn, session_id=session, project=project, at_ms=1_000)
    insert_prompt(conn, session_id=session, prompt_text="fix the parser", at_ms=1_001)
    insert_event(conn, session_id=session, event_name="PostToolUse", tool_name="Edit",
                 tool_use_id=f"{session}-t1",
                 payload={"tool_input": {"file_path": f"{project}/parser.py"}})
    obs = insert_observation(conn, NewObservation(
        session_id=session, project=project, type="bugfix", title="parser accepts empty input",
        backend="rules"))
    summary = insert_summary(conn, NewSummary(session_id=session, project=project,
                                              request="fix the parser", completed="fixed"))
    return int(getattr(obs, "id", obs)), int(getattr(summary, "id", summary))


async def test_a_round_writes_what_api_context_serves_and_a_sweep_follows_deletions(
        data_dir, tmp_path):
    settings = load_settings()
    conn = connect(data_dir)
    try:
        project, other = _git_project(tmp_path / "p"), _git_project(tmp_path / "q")
        obs_id, summary_id = _seed(conn, project)
        writer = Snapshotter(data_dir, _reader(conn), lambda: settings)
        assert await writer.round(sweep=False) == [project]
        snap = snapshot.read(data_dir, project)
        assert snap is not None
        assert snap["text"] == build_context_for(conn, project, settings).text  # the same block
        assert "parser accepts empty input" in snap["text"]
        assert set(snap["items"]) == set(LAYER_ORDER) and snap["budget"] == 9000
        assert oct(os.stat(snapshot.path_for(data_dir, project)).st_mode & 0o777) == "0o600"
        assert oct(os.stat(data_dir / "snapshots").st_mode & 0o777) == "0o700"
        assert not [n for n in os.listdir(data_dir / "snapshots") if n.endswith(".tmp")]
        # Nothing changed: no project to write. Another project changes: only it.
        assert await writer.round(sweep=False) == []
        _seed(conn, other, session="s2")
        assert await writer.round(sweep=False) == [other]
        # Deleting memory adds no row: the sweep finds it; a project with none left loses
        # its snapshot, so a deleted memory never comes back through the hook.
        delete_observation(conn, obs_id, actor="test")
        delete_summary(conn, summary_id, actor="test")
        conn.execute("UPDATE events SET status = 'done'")
        assert await writer.round(sweep=False) == []
        assert snapshot.read(data_dir, project) is not None
        assert project in await writer.round(sweep=True)
        assert snapshot.read(data_dir, project) is None
        assert not os.path.exists(snapshot.path_for(data_dir, project))  # noqa: ASYNC240
    finally:
        conn.close()


async def _until(predicate, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def] # noqa: ASYNC109
    with trio.fail_after(timeout):
        while not predicate():  # noqa: ASYNC110 - polls the file system
            await trio.sleep(0.01)


async def test_bus_events_start_a_debounced_round_and_stopping_runs_a_last_one(
        data_dir, tmp_path):
    settings = load_settings()
    conn = connect(data_dir)
    try:
        project = _git_project(tmp_path / "p")
        async with spawn(EventBus().run) as bus:
            writer = Snapshotter(data_dir, _reader(conn), lambda: settings, bus=bus,
                                 debounce=0.2, sweep=3600)
            async with spawn(writer.run) as ref:
                # The start-up round, and the one after subscribing to the bus.
                await _until(lambda: writer.rounds >= 2)
                await trio.sleep(0.3)
                assert snapshot.read(data_dir, project) is None
                rounds = writer.rounds
                _seed(conn, project)
                for _ in range(20):  # a burst: one round
                    bus.send_nowait(Publish(event={"type": "event"}))
                await _until(lambda: snapshot.read(data_dir, project) is not None)
                assert "fix the parser" in snapshot.read(data_dir, project)["text"]
                await trio.sleep(0.5)
                assert writer.rounds == rounds + 1
                insert_observation(conn, NewObservation(
                    session_id="s1", project=project, type="change", title="late commit",
                    backend="rules"))
                assert await ref.ask(lambda reply: Refresh(reply=reply), timeout=5) == [project]
                insert_observation(conn, NewObservation(
                    session_id="s1", project=project, type="change", title="while stopping",
                    backend="rules"))
                ref._seal()  # a graceful stop, as the supervisor's
                # Its last round writes what the others committed meanwhile.
                await _until(lambda: "while stopping" in snapshot.read(data_dir, project)["text"])
    finally:
        conn.close()


def test_the_hook_reads_only_whole_snapshots_of_its_own_project(data_dir, tmp_path):
    project = _git_project(tmp_path / "p")
    path = snapshot.write(data_dir, project, text="<memlite-context>x</memlite-context>",
                          items={}, budget=9000)
    assert snapshot.read(data_dir, project)["text"] == "<memlite-context>x</memlite-context>"
    assert snapshot.read(data_dir, str(tmp_path / "elsewhere")) is None
    with open(path, "wb") as f:
        f.write(b'{"v": 1, "project": "' + project.encode() + b'", "te')  # torn by hand
    assert snapshot.read(data_dir, project) is None
    assert snapshot.fallback_context(str(data_dir), project) is None


def test_snapshot_names_are_the_sha256_of_the_root(data_dir):
    import hashlib

    root = "/home/me/src/ünïcode project"
    expected = hashlib.sha256(root.encode()).hexdigest()[:32] + ".json"
    assert os.path.basename(snapshot.path_for(data_dir, root)) == expected
