"""``memlite demo``: memlite end to end on a throwaway data directory.

Today the demo exercises the storage layer, the part that exists: it starts the storage
actor on a fresh data directory, records one small coding session the way the hooks will
(a session, its prompt, three raw tool events), stores the observation and the summary the
observer would make from them, then reads everything back through a separate reader
connection and runs one full-text search. Later issues grow it into the whole loop (worker,
hooks, observer, context, dashboard).

Nothing here is invented at read time: every line printed under "read back" comes from the
database through the reader connection.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import trio

from memlite.actors.core import spawn
from memlite.actors.storage import (
    StartSession,
    StorageActor,
    StoreEvent,
    StoreObservation,
    StorePrompt,
    StoreSummary,
)
from memlite.config import load_settings
from memlite.storage import (
    NewObservation,
    NewSummary,
    count_events,
    get_prompts,
    get_session,
    open_reader,
    recent_observations,
    recent_summaries,
    search_observations,
    table_counts,
)
from memlite.storage.db import db_path

__all__ = ["run_demo"]

SESSION_ID = "demo-0001"
PROJECT = "/home/dev/shop"
EVENTS = [
    ("PostToolUse", "Read", "toolu_demo_1",
     {"tool_input": {"file_path": "/home/dev/shop/tests/test_login.py"},
      "tool_response": {"file": {"numLines": 42}}}),
    ("PostToolUseFailure", "Bash", "toolu_demo_2",
     {"tool_input": {"command": "pytest tests/test_login.py"},
      "error": "Exit code 1\nFAILED tests/test_login.py::test_expired_session - KeyError: 'exp'"}),
    ("PostToolUse", "Edit", "toolu_demo_3",
     {"tool_input": {"file_path": "/home/dev/shop/auth/session.py",
                     "old_string": "claims['exp']", "new_string": "claims.get('exp', 0)"},
      "tool_response": {"filePath": "/home/dev/shop/auth/session.py"}}),
]


async def _record(storage) -> None:
    async def ask(make):
        return await storage.ask(make, timeout=10)

    await ask(lambda reply: StartSession(session_id=SESSION_ID, project=PROJECT,
                                         project_name="shop", cwd=PROJECT, branch="main",
                                         source="startup", reply=reply))
    await ask(lambda reply: StorePrompt(session_id=SESSION_ID,
                                        prompt_text="Fix the flaky login test", reply=reply))
    event_ids = []
    for name, tool, tool_use_id, payload in EVENTS:
        result = await ask(lambda reply, n=name, t=tool, u=tool_use_id, p=payload: StoreEvent(
            session_id=SESSION_ID, event_name=n, tool_name=t, tool_use_id=u, payload=p,
            reply=reply))
        event_ids.append(result.id)
    # The same event again, as a retried hook would send it: stored once.
    name, tool, tool_use_id, payload = EVENTS[0]
    again = await ask(lambda reply: StoreEvent(session_id=SESSION_ID, event_name=name,
                                               tool_name=tool, tool_use_id=tool_use_id,
                                               payload=payload, reply=reply))
    assert not again.created
    await ask(lambda reply: StoreObservation(observation=NewObservation(
        session_id=SESSION_ID, project=PROJECT, type="bugfix",
        title="Expired sessions no longer crash the login flow",
        subtitle="auth/session.py read claims['exp'] without a default",
        narrative="test_expired_session failed with KeyError: 'exp'; tokens without an expiry "
                  "claim now count as expired instead of raising.",
        facts=("tokens may lack the exp claim", "test_expired_session covers it"),
        concepts=("problem-solution",),
        files_read=("tests/test_login.py",), files_modified=("auth/session.py",),
        source_event_ids=event_ids, backend="demo"), reply=reply))
    await ask(lambda reply: StoreSummary(summary=NewSummary(
        session_id=SESSION_ID, project=PROJECT, request="Fix the flaky login test",
        investigated="the failing test and auth/session.py",
        learned="session tokens may lack an exp claim",
        completed="expired tokens handled; test passes",
        next_steps="add a test for tokens with exp in the past"), reply=reply))


async def _read_back(data_dir: Path) -> None:
    async with open_reader(db_path(data_dir)) as conn:
        def read():
            return (
                get_session(conn, SESSION_ID),
                get_prompts(conn, SESSION_ID),
                count_events(conn, session_id=SESSION_ID),
                recent_observations(conn, PROJECT, limit=5),
                recent_summaries(conn, PROJECT, limit=3),
                search_observations(conn, "login KeyError", project=PROJECT),
                table_counts(conn),
            )

        session, prompts, n_events, observations, summaries, hits, counts = (
            await conn.async_run(read))
    print("read back (through a separate reader connection):")
    print(f"  session   {session.id}  project={session.project}  branch={session.branch}")
    for prompt in prompts:
        print(f"  prompt    #{prompt.prompt_number}: {prompt.prompt_text}")
    print(f"  events    {n_events} stored (one retried duplicate was ignored)")
    for obs in observations:
        print(f"  obs #{obs.id}    [{obs.type}] {obs.title}")
        print(f"            modified {', '.join(obs.files_modified)}; "
              f"from events {list(obs.source_event_ids)}")
    for summary in summaries:
        print(f"  summary   learned: {summary.learned}; next: {summary.next_steps}")
    print("search 'login KeyError':")
    for rank, hit in enumerate(hits, 1):
        print(f"  {rank}. observation #{hit.item.id}: {hit.item.title}")
    print("tables: " + ", ".join(f"{name} {n}" for name, n in counts.items()))


async def _main(data_dir: Path) -> None:
    started = time.perf_counter()
    async with spawn(StorageActor(data_dir).run) as storage:
        await _record(storage)
    print(f"stored one session in {time.perf_counter() - started:.3f} s "
          f"(storage actor started, migrated, wrote, stopped)")
    await _read_back(data_dir)


def run_demo(*, keep: bool = False) -> int:
    """Run the demo; returns the exit status. ``keep`` leaves the data directory in place."""
    data_dir = Path(tempfile.mkdtemp(prefix="memlite-demo-"))
    try:
        settings = load_settings(data_dir, env={})
        print(f"memlite demo: throwaway data directory {settings.data_dir}")
        trio.run(_main, settings.data_dir)
    finally:
        if keep:
            print(f"kept {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
    return 0
