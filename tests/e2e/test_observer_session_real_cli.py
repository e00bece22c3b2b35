"""A whole session observed by the AI observer, with the REAL CLI on both sides, offline.

Second tier of the observer tests (issue 5): the fake Messages API
(``fake_anthropic_observer.py``) serves both the observed Claude Code session (scripted:
a Read, a Write, a Bash, then text) and the worker's observer conversation (the bundled
CLI too, started by the worker with MEMLITE_OBSERVER=claude and the worker's environment:
the fake's URL, the dummy key, the isolated HOME). The observer answers each ``<event>``
with an ``<observation>`` titled after the event's file or command, and the summary
request with a ``<summary>`` tagged ``AI-SUMMARY``. Session 1's events go from the hooks
to AI observations and a summary; session 2's first request carries them in its context.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import FakeApi, run_claude
from procroot import PROC  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

HERE = Path(__file__).resolve().parent
MARKER = "memlite-obs-e2e-5c1d"
TITLES = ("AI-OBS Read hello.py", "AI-OBS Write NOTES.md", f"AI-OBS Bash {MARKER}")
SUMMARY_TAG = "AI-SUMMARY"
OBSERVER_MARKER = "You are memlite's observer."


@pytest.fixture
def observer_api(tmp_path: Path) -> Iterator[Any]:
    """Starts ``fake_anthropic_observer.py``; stopped by its pid at the end."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(script: dict[str, Any]) -> FakeApi:
        script_path = tmp_path / "obs-api.script.json"
        script_path.write_text(json.dumps(script))
        port_file, log = tmp_path / "obs-api.port", tmp_path / "obs-api.jsonl"
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "fake_anthropic_observer.py"), "--script",
             str(script_path), "--log", str(log), "--port-file", str(port_file)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        deadline = time.monotonic() + 15
        while not port_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("fake_anthropic_observer.py did not start")
            time.sleep(0.02)
        return FakeApi(proc, int(port_file.read_text()), log)

    yield start
    for proc in procs:  # by handle (pid), never by name
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _script(project: Path) -> dict:
    return {
        "s1": [
            {"tool": "Read", "input": {"file_path": str(project / "hello.py")}},
            {"tool": "Write", "input": {"file_path": str(project / "NOTES.md"),
                                        "content": "greeting renamed\n"}},
            {"tool": "Bash", "input": {"command": f"echo {MARKER}",
                                       "description": "print the marker"}},
            {"text": "Read hello.py, wrote NOTES.md and ran the marker command."},
        ],
        "s2": [{"text": "I see what the last session did."}],
    }


def _query(data_dir: Path, sql: str) -> list[tuple]:
    from memlite.storage import connect

    conn = connect(data_dir, writer=False)
    try:
        return [tuple(row) for row in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def _state(data_dir: Path) -> dict[str, Any]:
    return {
        "completed": _query(data_dir, "SELECT count(*) FROM sessions "
                                      "WHERE status = 'completed'")[0][0],
        "unfinished": _query(data_dir, "SELECT count(*) FROM events "
                                       "WHERE status IN ('pending', 'processing')")[0][0],
        "ai_titles": sorted(r[0] for r in _query(
            data_dir, "SELECT title FROM observations WHERE backend != 'rules'")),
        "summaries": _query(data_dir, "SELECT request, completed FROM summaries"),
    }


def _wait_observed(data_dir: Path, timeout: float = 30.0) -> tuple[dict[str, Any], float]:
    """Until session 1 is completed, no event is pending or processing, the three AI
    observations and the AI summary are stored (bounded: ``timeout`` seconds)."""
    from memlite.errors import MemliteError

    started, state = time.monotonic(), {}
    while time.monotonic() - started < timeout:
        try:
            state = _state(data_dir)
        except (MemliteError, OSError):
            state = {}  # no database yet
        if state and state["completed"] >= 1 and state["unfinished"] == 0 \
                and set(TITLES) <= set(state["ai_titles"]) \
                and any(SUMMARY_TAG in r[0] for r in state["summaries"]):
            return state, time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"session 1 was not observed within {timeout} s: {state}; see "
                         f"{data_dir / 'worker.log'} and {data_dir / 'hooks.log'}")


def _context_of_first_request(api: FakeApi, marker: str) -> str:
    first = api.message_requests(marker)[0]
    text = json.dumps(first)
    assert "<memlite-context>" in text, text[:3000]
    start = text.index("<memlite-context>")
    return json.loads('"' + text[start:text.index("</memlite-context>", start)] + '"')


def test_session_is_observed_by_the_ai_and_shown_to_the_next_session(
        claude_bin, observer_api, claude_env, git_project, plugin_dir, memlite_data):
    api = observer_api(_script(git_project))
    env = {**claude_env(api), "MEMLITE_OBSERVER": "claude"}
    timings: dict[str, float] = {}

    out1, timings["session1"] = run_claude(
        claude_bin, "SCRIPT=s1 Look at hello.py, note the change, run the marker command",
        cwd=git_project, env=env, plugin_dir=plugin_dir)
    assert out1[-1]["type"] == "result" and not out1[-1]["is_error"], out1[-1]
    assert (git_project / "NOTES.md").read_text() == "greeting renamed\n"
    state, timings["observed_after"] = _wait_observed(memlite_data)

    # The observer was the bundled CLI talking to the fake with memlite's system prompt,
    # with no tools, one <event> per turn, then the summary request.
    observer = [b for b in api.message_requests()
                if OBSERVER_MARKER in json.dumps(b.get("system") or "")]
    assert observer, "no request carried memlite's observer prompt"
    assert all(not b.get("tools") for b in observer)
    sent = json.dumps(observer)
    assert "hello.py" in sent and "NOTES.md" in sent and MARKER in sent
    assert "The session has stopped. Answer one <summary>" in sent
    # The scripted AI observations, with no rules observation left in the way.
    assert set(TITLES) <= set(state["ai_titles"]), state
    live_rules = _query(memlite_data, "SELECT title FROM observations WHERE backend = "
                                      "'rules' AND superseded_by IS NULL")
    assert live_rules == [], live_rules
    summary = next(r for r in state["summaries"] if SUMMARY_TAG in r[0])
    assert summary == (f"{SUMMARY_TAG} request: look at the greeter",
                       f"{SUMMARY_TAG} completed NOTES.md"), summary

    out2, timings["session2"] = run_claude(
        claude_bin, "SCRIPT=s2 What did we do last time?", cwd=git_project, env=env,
        plugin_dir=plugin_dir)
    assert out2[-1]["type"] == "result" and not out2[-1]["is_error"], out2[-1]
    context = _context_of_first_request(api, "SCRIPT=s2")
    for title in TITLES:
        assert title in context, (title, context)
    assert SUMMARY_TAG in context, context
    assert "raw, not yet compressed" not in context, context
    # Stopping the worker leaves no observer CLI behind (its processes carry the
    # registry directory of this data dir in their environment).
    from memlite.observer import registry
    from memlite.spawn import stop_worker

    observers_before = registry.observer_pids(memlite_data)
    env_before = _processes_with_env(
        f"MEMLITE_OBSERVER_REGISTRY={registry.registry_dir(memlite_data)}")
    assert stop_worker(memlite_data, grace=10.0) is not None
    assert registry.observer_pids(memlite_data) == []
    assert _processes_with_env(
        f"MEMLITE_OBSERVER_REGISTRY={registry.registry_dir(memlite_data)}") == []
    print(f"\ne2e observer timings (s): {timings}; AI titles {state['ai_titles']}; "
          f"observers alive before stop: {observers_before} "
          f"(with the registry env: {env_before})"
          f"; session 2 context: {len(context)} chars\n{context}")


def _processes_with_env(entry: str) -> list[int]:
    """Pids of live processes whose environment holds ``entry`` exactly."""
    needle, found = entry.encode(), []
    for pid in filter(str.isdigit, os.listdir(PROC)):
        try:
            with open(f"{PROC}/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            continue
    return found
