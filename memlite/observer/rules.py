"""The ``rules`` backend: plain observations without any AI.

When no AI is available (no CLI, not logged in, quota spent, OBSERVER=rules, the daily
token budget used up), :func:`observe` turns each event into a plain, deterministic
observation (``backend="rules"``) so the next session still has context. When the AI
comes back, its observation of the same events supersedes this one (``supersede.py``).

=========================================  =========  ===================================
event                                      type       title / fields
=========================================  =========  ===================================
Edit, MultiEdit, NotebookEdit of x.py      change     "Edited x.py", files_modified,
                                                      facts = the lines changed
Write of x.py                              change     "Wrote x.py", files_modified,
                                                      its first lines quoted
Bash test run that failed (failure event   discovery  "Tests failed: a, b (pytest)",
or exit code ≠ 0, or failing names found)             facts = failing test names
Bash test run that passed                  discovery  "Tests passed: `pytest -q`"
other Bash that failed                     discovery  "Command failed (exit 3): `…`"
Bash that changes things (git commit, rm,  change     "Ran `git commit -m …`"
mv, installs, sed -i, ``>`` redirection)
other Bash (git log, grep, curl…)          discovery  "Ran `…`"
Bash of only ls/pwd/echo/cd/… (succeeded)  —          None (low signal)
Read / Grep / Glob                         discovery  "Read x.py" / "Searched for `p`" /
                                                      "Listed `p`", files_read
WebFetch / WebSearch                       discovery  "Fetched <url>" / "Searched the web
                                                      for `q`"
Agent / Task                               discovery  "Subagent: <description>"
ExitPlanMode                               decision   "Plan: <first line>"
mcp__server__tool, any other tool          discovery  "Called tool (server)"
TodoWrite, TodoRead, LS, BashOutput, …     —          None (low signal)
a failed non-Bash tool, non-tool events    —          None
=========================================  =========  ===================================

None means "nothing worth keeping": the caller marks the event skipped. Every
observation carries its event's id in ``source_event_ids`` and its time in ``at_ms``.
:func:`summarize` makes the Stop summary from the session's events and prompts.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from memlite.hooks.limits import cut, marker
from memlite.observer.shape import (
    EDIT_TOOLS,
    exit_code,
    normalise_path,
    payload_of,
    tool_input,
    tool_output,
)
from memlite.observer.testruns import failing_tests, runner_of
from memlite.storage.records import Event, NewObservation, NewSummary

__all__ = ["LOW_SIGNAL_TOOLS", "observe", "summarize"]

LOW_SIGNAL_TOOLS = frozenset({"TodoWrite", "TodoRead", "LS", "BashOutput", "KillShell",
                              "KillBash", "ListMcpResourcesTool", "ReadMcpResourceTool",
                              "AskUserQuestion", "SlashCommand", "Skill", "EnterPlanMode"})
_QUIET = frozenset({"ls", "pwd", "echo", "cd", "clear", "true", "false", "date", "whoami",
                    "which", "type", "history", "printf", "sleep", "exit", "hostname", ""})
_CHANGES = re.compile(
    r"^(git (commit|add|rm|mv|checkout|switch|merge|rebase|reset|push|pull|stash|"
    r"cherry-pick|revert|tag|apply|restore|init|clone)|mv|cp|rm|rmdir|mkdir|touch|chmod|"
    r"chown|ln|patch|tee|truncate|sed -i|(npm|pnpm|yarn|bun) (install|i|add|remove|"
    r"uninstall)|(pip3?|uv( pip)?|poetry|cargo|go) (install|add|remove|sync|lock|get)|make)\b")
_SPLIT = re.compile(r"&&|\|\||[;|\n]")
_REDIRECT = re.compile(r"(?<![0-9&])>>?\s*(?!&|/dev/null)\S")
_PREFIX = re.compile(r"^((\w+=\S*|sudo|time|nice|env|command|exec)\s+)+")
# git's own options before its subcommand (`git -C dir commit`, `git -c k=v commit`,
# `git --no-pager log`): dropped so the subcommand decides change or discovery.
_GIT_OPTIONS = re.compile(r"^git\s+((-[Cc]\s+\S+|--[\w-]+(=\S*)?|-[pP])\s+)+")
MAX_TITLE = 200
MAX_NARRATIVE = 1200


def _segments(command: str) -> list[str]:
    return [_GIT_OPTIONS.sub("git ", _PREFIX.sub("", part.strip()))
            for part in _SPLIT.split(command)]


def _one_line(text: str, limit: int = 120) -> str:
    return cut(" ".join(text.split()), limit)


def _bash(payload: dict[str, Any]) -> dict[str, Any] | None:
    command = str(tool_input(payload).get("command") or "").strip()
    description = str(tool_input(payload).get("description") or "")
    output = tool_output(payload)
    code = exit_code(payload)
    failed = payload.get("hook_event_name") == "PostToolUseFailure" or bool(code)
    runner = runner_of(command)
    shown = f"`{_one_line(command)}`"
    tail = cut(output, MAX_NARRATIVE)
    if runner:
        names = failing_tests(output)
        if failed or names:
            listed = ", ".join(names[:3]) + (f" (+{len(names) - 3} more)" if len(names) > 3
                                             else "")
            title = f"Tests failed: {listed} ({runner})" if names else \
                f"Test run failed: {shown}"
            return {"type": "discovery", "title": title, "subtitle": description,
                    "facts": names, "narrative": f"{command}\n{tail}".strip()}
        return {"type": "discovery", "title": f"Tests passed: {shown}",
                "subtitle": description, "narrative": tail}
    if failed:
        exit_text = f"exit {code}" if code is not None else "failed"
        return {"type": "discovery", "title": f"Command failed ({exit_text}): {shown}",
                "subtitle": description, "narrative": f"{command}\n{tail}".strip()}
    parts = _segments(command)
    if all(part.split(" ", 1)[0] in _QUIET for part in parts) and not _REDIRECT.search(command):
        return None
    changes = any(_CHANGES.match(part) for part in parts) or bool(_REDIRECT.search(command))
    # A command the title had to cut (a commit's message, a long pipeline) is kept whole
    # in the narrative, which full text and the embedding both read.
    whole = command if shown != f"`{' '.join(command.split())}`" else ""
    return {"type": "change" if changes else "discovery", "title": f"Ran {shown}",
            "subtitle": description, "narrative": cut(f"{whole}\n{tail}".strip(),
                                                      MAX_NARRATIVE)}


def _edit(tool: str, data: dict[str, Any], project: str) -> dict[str, Any] | None:
    path = normalise_path(str(data.get("file_path") or data.get("notebook_path") or ""),
                          project)
    if not path:
        return None
    if tool == "Write":
        return {"type": "change", "title": f"Wrote {path}", "files_modified": [path],
                "narrative": _written(str(data.get("content") or ""), path)}
    edits = data.get("edits") if isinstance(data.get("edits"), list) else [data]
    facts = []
    for edit in edits[:5]:
        if isinstance(edit, dict) and ("old_string" in edit or "new_source" in edit):
            facts.append(_edit_fact(str(edit.get("old_string") or ""),
                                    str(edit.get("new_string") or edit.get("new_source") or "")))
    count = f" ({len(edits)} edits)" if len(edits) > 1 else ""
    return {"type": "change", "title": f"Edited {path}{count}", "files_modified": [path],
            "facts": facts}


def _edit_fact(old: str, new: str) -> str:
    """One edit as a fact: the lines it changed, each side folded to one line of 80
    characters. The lines the old and new text share at their start and end are left
    out (Claude quotes a few lines around a change to make it unique, so a change inside
    a function otherwise reads "replaced `def f(): ...` with `def f(): ...`" and the cut
    hides what changed); an insertion names the line it follows."""
    before, after = old.splitlines(), new.splitlines()
    start = 0
    while start < min(len(before), len(after)) and \
            before[start].strip() == after[start].strip():
        start += 1
    end = 0
    while end < min(len(before), len(after)) - start and \
            before[-1 - end].strip() == after[-1 - end].strip():
        end += 1
    gone = _one_line("\n".join(before[start:len(before) - end]), 80)
    came = _one_line("\n".join(after[start:len(after) - end]), 80)
    if gone and came:
        return f"replaced `{gone}` with `{came}`"
    if came:
        follows = _one_line(before[start - 1], 60) if start else ""
        return f"inserted `{came}`" + (f" after `{follows}`" if follows else "")
    if gone:
        return f"removed `{gone}`"
    # Only whitespace changed (or nothing): the whole of each side.
    old, new = _one_line(old, 80), _one_line(new, 80)
    return f"replaced `{old}` with `{new}`" if old else f"inserted `{new}`"


WRITE_HEAD_LINES = 5
"""Non-blank lines of a written file a ``Write`` observation quotes (each cut to 120
characters): what a new file or a rewritten config says is often the decision itself
("backend: sqs"), and without it neither full text nor the embedding could find it. An
``Edit`` names its change the same way (its facts: "replaced `a` with `b`")."""

_CUT_MARK = re.compile(re.escape(marker(0)).replace("0", r"\d+"))
"""``hooks.limits.marker``, any count: where the hook cut a long text before it was stored."""


def _written(content: str, path: str) -> str:
    """A ``Write``'s narrative: how many lines, then the file's first non-blank lines.
    A last line without a final newline counts as a line; an empty file has none; a
    text the hook cut (``hooks.limits``) holds fewer lines than the file."""
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    head = list(itertools.islice((_one_line(line) for line in io.StringIO(content)
                                  if line.strip()), WRITE_HEAD_LINES + 1))
    plural = "" if lines == 1 else "s"
    said = f"Wrote {lines} line{plural} to {path}." if not _CUT_MARK.search(content) else \
        f"Wrote at least {lines} line{plural} to {path} (cut before it was stored)."
    if not head:
        return said
    more = "\n…" if len(head) > WRITE_HEAD_LINES else ""
    return f"{said} It begins:\n" + "\n".join(head[:WRITE_HEAD_LINES]) + more


def _files(payload: dict[str, Any], project: str, limit: int = 20) -> list[str]:
    response = payload.get("tool_response")
    names = response.get("filenames") if isinstance(response, dict) else None
    return [normalise_path(str(n), project) for n in (names or [])[:limit]]


def _tool(tool: str, payload: dict[str, Any], project: str) -> dict[str, Any] | None:
    data = tool_input(payload)
    if tool in EDIT_TOOLS:
        return _edit(tool, data, project)
    if tool == "Read":
        path = normalise_path(str(data.get("file_path") or ""), project)
        return {"type": "discovery", "title": f"Read {path}", "files_read": [path]} \
            if path else None
    if tool in ("Grep", "Glob"):
        pattern = _one_line(str(data.get("pattern") or ""), 100)
        where = normalise_path(str(data.get("path") or ""), project)
        verb = "Searched for" if tool == "Grep" else "Listed"
        title = f"{verb} `{pattern}`" + (f" in {where}" if where and where != "." else "")
        return {"type": "discovery", "title": title, "files_read": _files(payload, project)}
    output = cut(tool_output(payload), MAX_NARRATIVE)
    if tool == "WebFetch":
        return {"type": "discovery", "title": f"Fetched {_one_line(str(data.get('url')))}",
                "subtitle": _one_line(str(data.get("prompt") or ""), 300),
                "narrative": output}
    if tool == "WebSearch":
        return {"type": "discovery", "narrative": output,
                "title": f"Searched the web for `{_one_line(str(data.get('query')))}`"}
    if tool in ("Agent", "Task"):
        what = _one_line(str(data.get("description") or data.get("prompt") or "task"))
        return {"type": "discovery", "title": f"Subagent: {what}", "narrative": output}
    if tool == "ExitPlanMode":
        plan = str(data.get("plan") or "").strip()
        first = _one_line(plan.splitlines()[0].lstrip("# ") if plan else "plan", 150)
        return {"type": "decision", "title": f"Plan: {first}",
                "narrative": cut(plan, MAX_NARRATIVE)}
    if tool.startswith("mcp__"):
        _, server, name = (tool.split("__", 2) + ["", ""])[:3]
        return {"type": "discovery", "title": f"Called {name or tool} ({server})",
                "narrative": output}
    return {"type": "discovery", "title": f"Used {_one_line(tool, 80)}", "narrative": output}


def observe(event: Event, *, project: str, branch: str | None = None,
            commit_sha: str | None = None) -> NewObservation | None:
    """A plain observation of one stored event, or None when it is not worth keeping."""
    payload = payload_of(event)
    name = payload.get("hook_event_name") or event.event_name
    tool = str(payload.get("tool_name") or event.tool_name or "")
    if name not in ("PostToolUse", "PostToolUseFailure") or not tool \
            or tool in LOW_SIGNAL_TOOLS:
        return None
    if tool == "Bash":
        fields = _bash(payload)
    elif name == "PostToolUseFailure":
        fields = None  # the edit, read or fetch did not happen: nothing to remember
    else:
        fields = _tool(tool, payload, project)
    if fields is None:
        return None
    fields["title"] = fields["title"][:MAX_TITLE]
    return NewObservation(session_id=event.session_id, project=project, backend="rules",
                          source_event_ids=(event.id,), branch=branch,
                          commit_sha=commit_sha, at_ms=event.created_at_epoch, **fields)


def _listing(paths: Iterable[str], limit: int = 12) -> str:
    unique = list(dict.fromkeys(p for p in paths if p))
    more = f" (+{len(unique) - limit} more)" if len(unique) > limit else ""
    return ", ".join(unique[:limit]) + more


def summarize(events: Sequence[Event], prompts: Sequence[str], *, project: str,
              session_id: str | None = None) -> NewSummary | None:
    """The Stop summary without AI, from the session's events and its prompts.

    request is the first non-empty prompt; investigated lists files read and searches;
    learned lists failures; completed lists files changed and Claude's last answer;
    next_steps names the tests still failing. None when there is nothing to say.
    """
    observations = [o for o in (observe(e, project=project) for e in events) if o]
    read = _listing(f for o in observations for f in o.files_read)
    searched = _listing(o.title for o in observations
                        if o.title.startswith(("Searched", "Fetched", "Listed")))
    modified = _listing(f for o in observations for f in o.files_modified)
    failures = [o for o in observations if o.title.startswith(("Tests failed", "Test run "
                                                               "failed", "Command failed"))]
    last = next((str(payload_of(e).get("last_assistant_message") or "") for e in
                 reversed(events) if e.event_name == "Stop"), "")
    request = next((p.strip() for p in prompts if p and p.strip()), "")
    investigated = "; ".join(p for p in (f"read {read}" if read else "", searched) if p)
    learned = "; ".join(o.title for o in failures[-5:])
    completed = "; ".join(p for p in (f"modified {modified}" if modified else "",
                                      cut(last.strip(), 600)) if p)
    runs = [o for o in observations if o.title.startswith(("Tests ", "Test run "))]
    next_steps = f"fix the failing tests: {_listing(runs[-1].facts, 8)}" \
        if runs and runs[-1].facts else ""
    if not any((request, investigated, learned, completed, next_steps)):
        return None
    session = session_id or (events[0].session_id if events else "")
    return NewSummary(session_id=session, project=project, request=cut(request, 1000),
                      investigated=investigated, learned=learned, completed=completed,
                      next_steps=next_steps, at_ms=_when(events))


def _when(events: Sequence[Event]) -> int | None:
    """A summary is dated by its session's last event, not by when it was made: a session
    spooled while the worker was down keeps its own time (issue 13)."""
    return max((e.created_at_epoch for e in events), default=None)
