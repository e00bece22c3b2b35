"""The rules backend: a plain, deterministic observation per event, and a summary at Stop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from memlite.observer.rules import observe, summarize
from memlite.observer.testruns import failing_tests, runner_of
from memlite.storage.records import Event, NewSummary

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code" / "v2.1.332" / "hooks"
PROJECT = "/home/u/proj"
SESSION = "s-1"
_ids = iter(range(1, 1_000_000))


def event(payload: dict[str, Any], *, id: int | None = None) -> Event:
    text = json.dumps(payload).replace("<PROJECT_DIR>", PROJECT)
    data = json.loads(text)
    return Event(id=id or next(_ids), session_id=SESSION, event_name=data["hook_event_name"],
                 tool_name=data.get("tool_name"), tool_use_id=data.get("tool_use_id"),
                 payload=text, content_hash="h", status="pending", attempts=0,
                 created_at="2026-11-30T06:00:00Z", created_at_epoch=1_764_482_400_000)


def tool(name: str, tool_input: dict[str, Any], response: Any = None, *,
         failed: str | None = None) -> Event:
    payload: dict[str, Any] = {"session_id": SESSION, "tool_name": name,
                               "tool_input": tool_input}
    if failed is None:
        payload.update(hook_event_name="PostToolUse", tool_response=response or {})
    else:
        payload.update(hook_event_name="PostToolUseFailure", error=failed)
    return event(payload)


def bash(command: str, stdout: str = "", *, failed: str | None = None) -> Event:
    return tool("Bash", {"command": command, "description": "d"},
                {"stdout": stdout, "stderr": ""}, failed=failed)


EXPECTED = {
    "PostToolUse.Agent.json": ("discovery", "Subagent: Sub task"),
    "PostToolUse.Read.json": ("discovery", "Read notes.txt"),
    "PostToolUse.mcp.json": ("discovery", "Called memlab_search (plugin_memlab_memlab-mcp)"),
    "PostToolUseFailure.Bash.json": ("discovery",
                                     "Command failed (exit 3): `echo failing >&2; exit 3`"),
}


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.name)
def test_every_fixture(path):
    ev = event(json.loads(path.read_text()))
    obs = observe(ev, project=PROJECT, branch="main", commit_sha="abc")
    if path.name not in EXPECTED:
        assert obs is None  # non-tool events, and `echo hello`
        return
    assert (obs.type, obs.title) == EXPECTED[path.name]
    assert obs.backend == "rules" and obs.source_event_ids == (ev.id,)
    assert obs.session_id == SESSION and obs.project == PROJECT
    assert (obs.branch, obs.commit_sha, obs.at_ms) == ("main", "abc", ev.created_at_epoch)
    if path.name == "PostToolUse.Read.json":
        assert obs.files_read == ("notes.txt",)


@pytest.mark.parametrize(("name", "tool_input", "title"), [
    ("Edit", {"file_path": f"{PROJECT}/x.py", "old_string": "a = 1", "new_string": "a = 2"},
     "Edited x.py"),
    ("MultiEdit", {"file_path": f"{PROJECT}/src/x.py",
                   "edits": [{"old_string": "a", "new_string": "b"}] * 2},
     "Edited src/x.py (2 edits)"),
    ("Write", {"file_path": f"{PROJECT}/new.py", "content": "x\ny\n"}, "Wrote new.py"),
    ("NotebookEdit", {"notebook_path": "/elsewhere/n.ipynb", "new_source": "print(1)"},
     "Edited /elsewhere/n.ipynb"),
])
def test_edits_are_changes(name, tool_input, title):
    obs = observe(tool(name, tool_input), project=PROJECT)
    assert (obs.type, obs.title) == ("change", title)
    assert obs.files_modified == (title.split(" ")[1],)


@pytest.mark.parametrize(("content", "narrative"), [
    ("backend: sqs\nretries: 5\n",
     "Wrote 2 lines to config.yaml. It begins:\nbackend: sqs\nretries: 5"),
    ("no final newline", "Wrote 1 line to config.yaml. It begins:\nno final newline"),
    ("", "Wrote 0 lines to config.yaml."),
    ("\n\n", "Wrote 2 lines to config.yaml."),
    ("\n    def f():\r\n        return 1\n",
     "Wrote 3 lines to config.yaml. It begins:\ndef f():\nreturn 1"),
    ('MARK = "[memlite: cut "\n',  # the marker's words in a file are not a cut
     'Wrote 1 line to config.yaml. It begins:\nMARK = "[memlite: cut "'),
    ("".join(f"key{i}: {i}\n" for i in range(8)),
     "Wrote 8 lines to config.yaml. It begins:\nkey0: 0\nkey1: 1\nkey2: 2\nkey3: 3\n"
     "key4: 4\n…"),
])
def test_write_says_how_many_lines_and_quotes_the_first(content, narrative):
    """What a written file says is often the decision itself: it must be searchable."""
    obs = observe(tool("Write", {"file_path": f"{PROJECT}/config.yaml", "content": content}),
                  project=PROJECT)
    assert obs.narrative == narrative


def test_write_of_a_text_the_hook_cut_says_at_least():
    from memlite.hooks.limits import FIELD_BUDGET, cut

    content = cut("x = 1\n" * 20_000, FIELD_BUDGET)
    obs = observe(tool("Write", {"file_path": f"{PROJECT}/big.py", "content": content}),
                  project=PROJECT)
    assert obs.narrative.startswith("Wrote at least ")
    assert "(cut before it was stored)" in obs.narrative
    assert len(obs.narrative) < 1000


@pytest.mark.parametrize(("old", "new", "fact"), [
    ("def total():\n    return 1\n", "def total():\n    return 2\n",
     "replaced `return 1` with `return 2`"),
    ("def f():\n    return 1", "def f():\n    log()\n    return 1",
     "inserted `log()` after `def f():`"),
    ("import os\nimport re\nimport sys", "import os\nimport sys", "removed `import re`"),
    ("", "x = 1", "inserted `x = 1`"),
    ("    x = 1", "x = 1", "replaced `x = 1` with `x = 1`"),  # whitespace only: whole
    ("class A:\n    def f(self):\n        return total(items, tax=0.2, rounding=True)\n",
     "class A:\n    def f(self):\n        return total(items, tax=0.25, rounding=True)\n",
     "replaced `return total(items, tax=0.2, rounding=True)` with "
     "`return total(items, tax=0.25, rounding=True)`"),
])
def test_edit_facts_leave_out_the_lines_around_the_change(old, new, fact):
    """Claude quotes lines around a change to make it unique; folded and cut at 80
    characters, those lines used to be all the fact said."""
    obs = observe(tool("Edit", {"file_path": "/p/x.py", "old_string": old,
                                "new_string": new}), project="/p")
    assert obs.facts == (fact,)


def test_edit_facts_name_the_change():
    obs = observe(tool("Edit", {"file_path": "/p/x.py", "old_string": "a = 1",
                                "new_string": "a = 2"}), project="/p")
    assert obs.facts == ("replaced `a = 1` with `a = 2`",)


PYTEST = """\
============ short test summary info ============
FAILED tests/test_a.py::test_one - AssertionError: assert 1 == 2
FAILED tests/test_a.py::TestX::test_two[param-1]
ERROR tests/test_b.py - ImportError
=== 2 failed, 1 error, 10 passed in 0.5s ===
"""
JEST = """FAIL src/sum.test.js
  sum
    ✓ adds (2 ms)
    ✕ subtracts numbers (5 ms)
    ✕ divides by zero
"""
GO = "=== RUN   TestParse\n--- FAIL: TestParse (0.00s)\n" \
     "    --- FAIL: TestParse/empty (0.00s)\nFAIL\n"
CARGO = "running 2 tests\ntest parser::ok ... ok\ntest parser::tests::bad ... FAILED\n\n" \
        "test result: FAILED. 1 passed; 1 failed"


@pytest.mark.parametrize(("command", "output", "names"), [
    ("uv run pytest -q", PYTEST,
     ("tests/test_a.py::test_one", "tests/test_a.py::TestX::test_two[param-1]",
      "tests/test_b.py")),
    ("npx jest", JEST, ("subtracts numbers", "divides by zero")),
    ("go test ./...", GO, ("TestParse", "TestParse/empty")),
    ("cargo test", CARGO, ("parser::tests::bad",)),
])
def test_failing_test_runs_are_discoveries_naming_the_tests(command, output, names):
    assert failing_tests(output) == names
    obs = observe(bash(command, failed=f"Exit code 1\n{output}"), project=PROJECT)
    assert obs.type == "discovery" and obs.facts == names
    assert obs.title.startswith(f"Tests failed: {names[0]}")
    assert f"({runner_of(command)})" in obs.title


def test_failing_names_count_even_when_the_pipe_hid_the_exit_code():
    obs = observe(bash("pytest | tail -5", PYTEST), project=PROJECT)
    assert obs.title.startswith("Tests failed:") and len(obs.facts) == 3
    assert "(+0 more)" not in obs.title


def test_a_failed_test_run_without_names_and_a_passing_one():
    failed = observe(bash("pytest -q", failed="Exit code 2\ncollection error"), project="/p")
    assert failed.title == "Test run failed: `pytest -q`"
    passed = observe(bash("python -m pytest -q", "10 passed in 0.1s"), project="/p")
    assert (passed.type, passed.title) == ("discovery", "Tests passed: `python -m pytest -q`")


@pytest.mark.parametrize("command", ["ls", "ls -la src", "pwd", "echo hi", "cd src && ls",
                                     "FOO=1 echo $FOO", "echo a 2>&1 >/dev/null"])
def test_low_signal_bash_is_dropped(command):
    assert observe(bash(command), project="/p") is None


@pytest.mark.parametrize(("command", "kind"), [
    ("git commit -m 'fix pager'", "change"), ("rm -rf build", "change"),
    ("npm install left-pad", "change"), ("sed -i 's/a/b/' x.py", "change"),
    ("echo x > notes.txt", "change"), ("cd src && git add -A", "change"),
    ("git -C /p/sub commit -m 'fix pager'", "change"),
    ("git -c user.name=u -c user.email=e commit -qam 'fix pager'", "change"),
    ("git --no-pager -C sub reset --hard", "change"),
    ("git -C sub log --oneline", "discovery"),
    ("git log --oneline -5", "discovery"), ("rg TODO", "discovery"),
    ("curl -s localhost:8000/health", "discovery"),
])
def test_other_bash_by_command(command, kind):
    obs = observe(bash(command, "out"), project="/p")
    assert (obs.type, obs.title) == (kind, f"Ran `{command}`")


def test_a_long_command_cut_in_the_title_is_kept_whole_in_the_narrative():
    """User trial, round 4: a commit whose message said "Switch the payments HTTP client
    from requests to httpx" kept only both ends of the command in its title (cut at 120
    characters) and the tool's output in the narrative, so the message, the one thing
    worth finding, was in no searchable field."""
    message = "Switch the payments HTTP client from requests to httpx for async and HTTP/2"
    command = f"git -c user.email=a@b -c user.name=u commit -qam '{message}'"
    obs = observe(bash(command, "[main 1a2b3c] x"), project="/p")
    assert "memlite: cut" in obs.title
    assert message in obs.narrative and "[main 1a2b3c] x" in obs.narrative
    short = observe(bash("git commit -m 'fix pager'", "[main 1] fix"), project="/p")
    assert short.narrative == "[main 1] fix"  # nothing cut: no repetition


@pytest.mark.parametrize(("name", "tool_input", "response", "kind", "title", "files"), [
    ("Grep", {"pattern": "def main", "path": "/p/src"},
     {"filenames": ["/p/src/a.py", "/p/src/b.py"]}, "discovery",
     "Searched for `def main` in src", ("src/a.py", "src/b.py")),
    ("Glob", {"pattern": "**/*.py"}, {"filenames": ["/p/a.py"]}, "discovery",
     "Listed `**/*.py`", ("a.py",)),
    ("WebFetch", {"url": "https://trio.rtfd.io", "prompt": "cancel scopes"},
     {"result": "Cancel scopes..."}, "discovery", "Fetched https://trio.rtfd.io", ()),
    ("WebSearch", {"query": "trio fail_after"}, {"results": []}, "discovery",
     "Searched the web for `trio fail_after`", ()),
    ("ExitPlanMode", {"plan": "# Add a pager\n1. ..."}, {}, "decision", "Plan: Add a pager", ()),
    ("SomeNewTool", {"x": 1}, "ok", "discovery", "Used SomeNewTool", ()),
])
def test_other_tools(name, tool_input, response, kind, title, files):
    obs = observe(tool(name, tool_input, response), project="/p")
    assert (obs.type, obs.title, obs.files_read) == (kind, title, files)


@pytest.mark.parametrize("ev", [
    tool("TodoWrite", {"todos": []}), tool("LS", {"path": "/p"}),
    tool("Edit", {"file_path": "/p/x.py"}, failed="String not found"),
    tool("Read", {"file_path": "/p/x.py"}, failed="No such file"),
    tool("Edit", {}), tool("Read", {}),
    event({"session_id": SESSION, "hook_event_name": "PostToolUse"}),
], ids=["todo", "ls-tool", "failed-edit", "failed-read", "no-path", "no-read-path", "no-tool"])
def test_nothing_worth_keeping(ev):
    assert observe(ev, project="/p") is None


def test_a_broken_payload_does_not_raise():
    ev = Event(id=1, session_id=SESSION, event_name="PostToolUse", tool_name="Bash",
               tool_use_id=None, payload="not json", content_hash="h", status="pending",
               attempts=0, created_at="", created_at_epoch=0)
    assert observe(ev, project="/p") is None


def test_summarize_a_session():
    events = [event(json.loads((FIXTURES / "UserPromptSubmit.json").read_text())),
              tool("Read", {"file_path": f"{PROJECT}/a.py"}),
              tool("Edit", {"file_path": f"{PROJECT}/b.py", "old_string": "x",
                            "new_string": "y"}),
              bash("pytest -q", failed=f"Exit code 1\n{PYTEST}"),
              event(json.loads((FIXTURES / "Stop.json").read_text()))]
    summary = summarize(events, ["", "Do the lab steps", "and more"], project=PROJECT)
    assert summary == NewSummary(
        session_id=SESSION, project=PROJECT, request="Do the lab steps",
        investigated="read a.py",
        learned="Tests failed: tests/test_a.py::test_one, "
                "tests/test_a.py::TestX::test_two[param-1], tests/test_b.py (pytest)",
        completed="modified b.py; FINAL-ANSWER from fake API. [saw 5 tool results; last: "
                  "PostToolUse:Agent hook additional context: MEMLAB-POSTTOOL-CONTEXT "
                  "label=plugin:]",
        next_steps="fix the failing tests: tests/test_a.py::test_one, "
                   "tests/test_a.py::TestX::test_two[param-1], tests/test_b.py",
        at_ms=1_764_482_400_000)


def test_a_summary_is_dated_by_its_last_event_not_by_when_it_is_made():
    """A session spooled while the worker was down keeps its own time (issue 13)."""
    events = [bash("ls"), event(json.loads((FIXTURES / "Stop.json").read_text()))]
    events = [attrs.evolve(e, created_at_epoch=1_600_000_000_000 + i) for i, e in
              enumerate(events)]
    assert summarize(events, ["list"], project="/p").at_ms == 1_600_000_000_001


def test_summarize_nothing_is_none():
    assert summarize([], [], project="/p") is None
    assert summarize([bash("ls")], ["  "], project="/p", session_id="s") is None
    assert summarize([], ["hi"], project="/p", session_id="s").request == "hi"
