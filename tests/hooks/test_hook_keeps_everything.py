"""Every event the hook can read is kept, whatever it holds (issue 13): with the worker
down it lands in the spool, in the form a live request would have been stored in."""

from __future__ import annotations

import io
import json
import sys

import pytest

from memlite.hooks import bootstrap, main, spool


@pytest.fixture
def worker_down(data_dir, monkeypatch):
    """No token (no worker ever ran) and no worker Python: the hook only spools."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    monkeypatch.setattr(bootstrap, "worker_python", lambda: None)

    def run(stdin: bytes, event: str = "PostToolUse") -> list[spool.SpoolRecord]:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        assert main.main([event]) == 0
        entries = [e for _, found in spool.iter_spool(data_dir) for e in found]
        assert all(isinstance(e, spool.SpoolRecord) for e in entries)
        return entries

    return run


BASE = {"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "cwd": "/tmp", "tool_input": {"command": "ls"}}


def test_a_lone_surrogate_is_spooled_as_a_live_request_stores_it(worker_down):
    raw = json.dumps({**BASE, "tool_response": "X"}).replace('"X"', '"a\\ud800b"')
    (entry,) = worker_down(raw.encode())
    assert entry.payload["tool_response"] == "a?b"  # what the worker stores when it is up


def test_nan_and_infinities_are_spooled_as_names(worker_down):
    raw = json.dumps({**BASE, "tool_response": "X"}).replace('"X"', "[NaN, -Infinity, 1]")
    (entry,) = worker_down(raw.encode())
    assert entry.payload["tool_response"] == ["NaN", "-Infinity", 1]


def test_a_payload_too_deep_to_filter_keeps_its_top_level(worker_down, data_dir):
    """It used to raise RecursionError in the filters: the event was lost."""
    deep = '{"a":' * 900 + "1" + "}" * 900
    raw = json.dumps({**BASE, "tool_response": "X"}).replace('"X"', deep)
    (entry,) = worker_down(raw.encode())
    assert entry.payload["tool_response"] == main.UNFILTERABLE  # left out, never unfiltered
    assert entry.payload["tool_input"] == {"command": "ls"}  # the rest is kept
    assert (entry.payload["session_id"], entry.payload["cwd"]) == ("s1", "/tmp")
    assert "nested too deeply to filter: ['tool_response'] left out" in (
        data_dir / main.LOG_FILE).read_text()
