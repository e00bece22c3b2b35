"""End to end: "remember: X" in a session with no tool call reaches the next session.

Round 7, trial 18: a quick session ("remember: ...", then /exit) is chat-only, and with
three sessions of work after it the next SessionStart did not show it. Here every event
goes through the hook, as a process, into a real worker (rules observer); the next
SessionStart hook's output must carry the note, first, redacted like the prompt.
"""

from __future__ import annotations

import json

from gitrepo import git_project
from hookrun import HOOK_TIMEOUT, fixture_bytes, query, run_hook, wait_until

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _hook(env, name, **changes):
    event = json.loads(fixture_bytes(name))["hook_event_name"]
    result, elapsed = run_hook(env, fixture_bytes(name, **changes), event)
    assert result.returncode == 0 and elapsed < HOOK_TIMEOUT, (name, result)
    return result


def _session(env, sid, cwd, prompt, reads=()):
    _hook(env, "SessionStart.startup", session_id=sid, cwd=cwd)
    _hook(env, "UserPromptSubmit", session_id=sid, cwd=cwd, prompt=prompt)
    for k, path in enumerate(reads):
        _hook(env, "PostToolUse.Read", session_id=sid, cwd=cwd, tool_use_id=f"toolu_{sid}_{k}",
              tool_input={"file_path": f"{cwd}/{path}"})
    _hook(env, "Stop", session_id=sid, cwd=cwd, last_assistant_message=f"done {sid}")
    _hook(env, "SessionEnd.other", session_id=sid, cwd=cwd)


def test_a_remembered_rule_is_the_first_thing_the_next_session_reads(
        worker, hook_env, data_dir, tmp_path):
    cwd = git_project(tmp_path / "payments")
    _session(hook_env, "chat-remember", cwd,
             f"remember: we never deploy on Fridays (the token {SECRET} is for CI only)")
    for k in range(3):
        _session(hook_env, f"work-{k}", cwd, f"fix the refund cron, part {k}",
                 reads=(f"src/refund_{k}.py", f"src/cron_{k}.py"))
    wait_until(lambda: query(data_dir, "SELECT count(*) FROM summaries")[0][0] == 4, 60)
    result = _hook(hook_env, "SessionStart.startup", session_id="next", cwd=cwd)
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    notes = context.index("## What the user asked memlite to remember")
    rule = context.index("We never deploy on Fridays")
    assert notes < rule < context.index("## Recent session summaries")
    assert SECRET not in context and SECRET not in json.dumps(
        query(data_dir, "SELECT * FROM observations"))
    assert "[REDACTED" in context[rule:rule + 200]
    # The chat-only session's own summary still ranks after the three of work (trial
    # 18's shape): the rule is in the block once, as the note.
    assert "fix the refund cron, part 2" in context
    assert context.count("never deploy on Fridays") == 1
