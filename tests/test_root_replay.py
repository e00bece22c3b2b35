"""Durable replay through the whole worker tree: events a dead worker left ``processing``
are requeued at start and observed by fresh session actors, exactly once each."""

from __future__ import annotations

import socket
from functools import partial

import trio

from memlite import tree as root
from memlite.config import load_settings
from memlite.observer import rules
from memlite.storage import connect, reads, writes
from memlite.storage.observing import store_observations


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _seed(data_dir) -> list[int]:
    """What a worker killed mid-session leaves: 2 done with observations, 3 processing."""
    conn = connect(data_dir)
    try:
        with conn:
            writes.start_session(conn, session_id="s1", project="/work/p")
            ids = [writes.insert_event(
                conn, session_id="s1", event_name="PostToolUse", tool_name="Edit",
                tool_use_id=f"t{i}", payload={
                    "hook_event_name": "PostToolUse", "tool_name": "Edit", "cwd": "/work/p",
                    "tool_input": {"file_path": f"/work/p/m{i}.py", "old_string": "a",
                                   "new_string": "b"}}).id for i in range(5)]
            for event_id in ids[:2]:
                store_observations(conn, [rules.observe(reads.get_event(conn, event_id),
                                                        project="/work/p")])
            writes.set_event_status(conn, ids[2:], "processing")
    finally:
        conn.close()
    return ids


def _state(data_dir) -> tuple[list[str], list[tuple[int, int]]]:
    conn = connect(data_dir, writer=False)
    try:
        status = [r[0] for r in conn.execute("SELECT status FROM events ORDER BY id")]
        links = [tuple(r) for r in conn.execute(
            "SELECT event_id, count(*) FROM observation_sources GROUP BY event_id")]
    finally:
        conn.close()
    return status, links


async def test_a_restarted_worker_replays_processing_events_exactly_once(data_dir,
                                                                         monkeypatch):
    monkeypatch.setenv("MEMLITE_WORKER_PORT", str(_free_port()))
    ids = _seed(data_dir)
    settings = load_settings(data_dir)
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(root.run_root, settings, shutdown=shutdown))
        for _ in range(400):  # another process's view: poll the database (20 s at most)
            if _state(data_dir)[0] == ["done"] * 5:
                break
            await trio.sleep(0.05)
        shutdown.set()
    status, links = _state(data_dir)
    assert status == ["done"] * 5
    assert sorted(links) == [(i, 1) for i in ids]
