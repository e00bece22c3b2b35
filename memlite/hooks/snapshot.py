"""Context snapshots: the memory a SessionStart prints when the worker does not answer.

STANDARD LIBRARY ONLY (the hook imports it). See docs/delivery.md for the design.

The worker keeps one snapshot per project in ``<data dir>/snapshots/<sha256(root)[:32]>.json``
(0600, directory 0700), written atomically (a temp file in the same directory, fsync'd,
then ``os.replace``): a reader sees the old snapshot or the new one, never half of one.
It holds the rendered block (``text``) and its rendered items per layer, so the hook can
re-pack them with the project's spooled activity::

    {"v": 1, "project": "/abs/root", "written_at_ms": 1764600000000, "budget": 9000,
     "raw_cap": 50, "warning": "", "text": "<memlite-context>…",
     "items": {"summaries": [...], "index": [...], "details": [...], "raw": [...]}}

``fallback_context`` is the hook's side: the project of ``cwd`` (git top level, found the
way ``memlite.project`` finds it, without attrs), its snapshot, and the events of that
project still in the spool (not yet seen by any worker) rendered as the raw layer
(``memlite.context_text``), newest first and ahead of the snapshot's own raw items, all
packed within the budget. A snapshot is never required: without one (a first install,
the worker never ran) the spooled activity alone is the memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable, Mapping

from memlite.context_text import (
    LAYER_ORDER,
    pack_items,
    raw_event_line,
    raw_session_items,
    tool_target,
    with_warning,
)
from memlite.hooks.spool_write import is_spool_file

TYPE_CHECKING = False  # no ``typing`` at run time (tests/hooks/test_session_start_cold.py)
if TYPE_CHECKING:  # the same function, as the checker knows it (no stubs for the C modules)
    from hashlib import sha256
else:
    try:  # the C module itself: ``hashlib`` also loads OpenSSL, 3-45 ms of a hook's start
        from _sha256 import sha256  # Python <= 3.11
    except ImportError:  # pragma: no cover - depends on the Python version
        try:
            from _sha2 import sha256  # Python >= 3.12
        except ImportError:
            from hashlib import sha256

__all__ = ["SNAPSHOT_DIR", "SNAPSHOT_VERSION", "fallback_context", "path_for", "project_root",
           "read", "remove", "spooled_items", "write"]

SNAPSHOT_DIR = "snapshots"
SNAPSHOT_VERSION = 1
DEFAULT_BUDGET = 9000
DEFAULT_RAW_CAP = 50
MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024
MAX_SPOOL_BYTES = 8 * 1024 * 1024
"""The hook reads at most this much of the spool (newest files first); the worker drains
the spool whenever it runs, so it is rarely more than one session's worth."""
MAX_SPOOL_FILES = 2_000
"""... and at most this many of its files, newest first. Each hook process spools to a
file of its own, so a worker down for a long time leaves one file per event: 20,000 of
them took this hook 0.8-1.2 s to read (a quiet machine, user trial 17), 2,000 take a
tenth of it, and the block shows at most ``DEFAULT_RAW_CAP`` events anyway."""
TOOL_EVENTS = ("PostToolUse", "PostToolUseFailure")


# --- where ---------------------------------------------------------------------------------


def path_for(data_dir: str | os.PathLike[str], root: str) -> str:
    name = sha256(root.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return os.path.join(os.fspath(data_dir), SNAPSHOT_DIR, name + ".json")


def _read_small(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(64 * 1024).decode("utf-8", "replace").strip()
    except OSError:
        return None


def project_root(cwd: object) -> str | None:
    """The project identity of ``cwd``: its git top level (the main checkout for a linked
    worktree), else the resolved ``cwd``. None for an empty or relative path, and for one
    that cannot be made a file name (a NUL, a lone surrogate): no worker can store such an
    event under a project either (it is quarantined), and one of them in the spool must
    not make every project's worker-down SessionStart fail.

    Mirrors ``memlite.project.resolve_project(cwd).root`` (a parity test holds them
    together) without importing it: that module needs attrs.
    """
    if not isinstance(cwd, str) or not cwd.strip() or not os.path.isabs(cwd):
        return None
    try:
        start = os.path.realpath(cwd)
    except ValueError:  # embedded NUL; UnicodeEncodeError for a lone surrogate
        return None
    directory = start
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.isdir(dot_git):
            return directory
        if os.path.isfile(dot_git):
            return _root_from_git_file(dot_git) or start
        parent = os.path.dirname(directory)
        if parent == directory:
            return start
        directory = parent


def _root_from_git_file(dot_git: str) -> str | None:
    text = _read_small(dot_git)
    if not text or not text.startswith("gitdir:"):
        return None
    git_dir = text[len("gitdir:"):].strip()
    if not os.path.isabs(git_dir):
        git_dir = os.path.join(os.path.dirname(dot_git), git_dir)
    git_dir = os.path.normpath(git_dir)
    common = _read_small(os.path.join(git_dir, "commondir"))
    if common is None:  # a submodule
        return os.path.dirname(dot_git)
    common_dir = os.path.normpath(os.path.join(git_dir, common))
    if os.path.basename(common_dir) == ".git":
        return os.path.dirname(common_dir)
    return os.path.dirname(dot_git)


# --- the worker's side ---------------------------------------------------------------------


def write(data_dir: str | os.PathLike[str], root: str, *, text: str,
          items: Mapping[str, Iterable[str]], budget: int, raw_cap: int = DEFAULT_RAW_CAP,
          warning: str = "", now_ms: int | None = None) -> str:
    """Write ``root``'s snapshot atomically (0600); returns its path. Raises ``OSError``."""
    path = path_for(data_dir, root)
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(directory, 0o700)
    record = {"v": SNAPSHOT_VERSION, "project": root,
              "written_at_ms": int(time.time() * 1000) if now_ms is None else now_ms,
              "budget": budget, "raw_cap": raw_cap, "warning": warning, "text": text,
              "items": {name: list(items.get(name, ())) for name in LAYER_ORDER}}
    data = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "backslashreplace")
    temp = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    return path


def remove(data_dir: str | os.PathLike[str], root: str) -> bool:
    """Delete ``root``'s snapshot (its memory is gone); True if there was one."""
    try:
        os.unlink(path_for(data_dir, root))
    except FileNotFoundError:
        return False
    return True


def read(data_dir: str | os.PathLike[str], root: str) -> dict[str, object] | None:
    """``root``'s snapshot, or None (missing, unreadable, another version, another root)."""
    try:
        with open(path_for(data_dir, root), "rb") as f:
            raw = f.read(MAX_SNAPSHOT_BYTES + 1)
        if len(raw) > MAX_SNAPSHOT_BYTES:
            return None
        value = json.loads(raw)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or value.get("v") != SNAPSHOT_VERSION \
            or value.get("project") != root or not isinstance(value.get("text"), str):
        return None
    return value


# --- the hook's side: spooled activity -----------------------------------------------------


def _spool_lines(data_dir: str) -> list[bytes]:
    """Lines of the spool's live and claimed files, oldest file first, bounded in bytes."""
    directory = os.path.join(data_dir, "spool")
    try:
        names = [n for n in os.listdir(directory) if is_spool_file(n)]
    except OSError:
        return []
    stamped = []
    for name in names:
        with contextlib.suppress(OSError):
            stamped.append((os.stat(os.path.join(directory, name)).st_mtime, name))
    chunks: list[bytes] = []
    left = MAX_SPOOL_BYTES
    newest = sorted(stamped, reverse=True)[:MAX_SPOOL_FILES]
    for _, name in newest:  # newest first, until the byte cap
        if left <= 0:
            break
        try:
            with open(os.path.join(directory, name), "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size > left:
                    f.seek(size - left)
                    f.readline()  # skip the partial line
                # Not read(left): that allocates the whole budget (8 MB) for every small
                # file, a third of the time with thousands of them.
                data = f.read(min(size, left))
        except OSError:
            continue
        left -= len(data)
        chunks.append(data)
    return [line for data in reversed(chunks) for line in data.split(b"\n") if line.strip()]


def _iso(ms: object) -> str:
    if isinstance(ms, bool) or not isinstance(ms, int):
        return ""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + "Z"


class _Spooled:
    """One spooled session as the raw layer shows it: when it started and was last
    active (ISO times), its prompts, its tool events and Claude's last answer."""

    __slots__ = ("answer", "events", "last", "prompts", "started")

    def __init__(self, at: str) -> None:
        self.started = self.last = at
        self.prompts: list[str] = []
        self.events: list[tuple[str, str, str, str]] = []  # (at, event, tool, target)
        self.answer = ""


def spooled_items(data_dir: str | os.PathLike[str], root: str, *,
                  limit: int = DEFAULT_RAW_CAP) -> list[str]:
    """The raw-layer items of ``root``'s spooled sessions, newest session first.

    A session shows its prompts, Claude's last answer (from Stop) and its tool events
    (newest first, at most ``limit`` events in all); a session with none of these (a bare
    SessionStart, such as the one being started now) shows nothing.
    """
    roots: dict[str, str | None] = {}
    sessions: dict[str, _Spooled] = {}
    for raw in _spool_lines(os.fspath(data_dir)):
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        payload = record.get("payload") if isinstance(record, dict) else None
        if not isinstance(payload, dict):
            continue
        session_id, cwd = payload.get("session_id"), payload.get("cwd")
        if not isinstance(session_id, str) or not isinstance(cwd, str):
            continue
        if cwd not in roots:
            roots[cwd] = project_root(cwd)
        if roots[cwd] != root:
            continue
        event = record.get("event") or payload.get("hook_event_name")
        at = _iso(record.get("spooledAt"))
        s = sessions.setdefault(session_id, _Spooled(at))
        s.last = at or s.last
        if event == "UserPromptSubmit" and isinstance(payload.get("prompt"), str):
            s.prompts.append(payload["prompt"])
        elif event in TOOL_EVENTS:
            s.events.append((at, str(event), str(payload.get("tool_name") or "?"),
                             tool_target(payload.get("tool_input"))))
        elif event == "Stop" and isinstance(payload.get("last_assistant_message"), str):
            s.answer = payload["last_assistant_message"]
    items: list[str] = []
    budget = max(limit, 0)
    for session_id, s in sorted(sessions.items(), key=lambda kv: kv[1].last, reverse=True):
        events = list(reversed(s.events))[:budget]
        budget -= len(events)
        if not (events or s.prompts or s.answer.strip()):
            continue
        lines = [raw_event_line(at, name, tool, target, root) for at, name, tool, target
                 in events]
        items.extend(raw_session_items(session_id, s.started, s.prompts[:5], lines,
                                       s.answer))
    return items


# --- the hook's side: the block ------------------------------------------------------------


def fallback_context(data_dir: str, cwd: object, budget: int | None = None) -> str | None:
    """The block for ``cwd``'s project from its snapshot and spooled activity, or None.

    ``budget`` is CONTEXT_MAX_CHARS as set now (the hook reads it with the worker's own
    parser, ``client.hook_settings``), else the one the snapshot was packed with; the
    raw-layer cap is the snapshot's (the worker's OBSERVATION_COUNT).
    """
    root = project_root(cwd)
    if root is None:
        return None
    snap = read(data_dir, root)
    packed_at = snap.get("budget") if snap else None
    chosen = budget or packed_at  # a setting changed since the snapshot was packed wins
    if isinstance(chosen, bool) or not isinstance(chosen, int) or not 100 <= chosen <= 10000:
        chosen = DEFAULT_BUDGET
    budget = chosen
    cap = snap.get("raw_cap") if snap else None
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
        cap = DEFAULT_RAW_CAP
    spooled = spooled_items(data_dir, root, limit=cap)
    if snap is not None and not spooled and budget == packed_at:
        text = snap["text"]  # a str: ``read`` checked it
        return text if isinstance(text, str) and text else None
    items = snap.get("items") if snap else None
    items = items if isinstance(items, dict) else {}
    candidates = {name: [i for i in items.get(name, ()) if isinstance(i, str)]
                  for name in LAYER_ORDER}
    candidates["raw"] = [*spooled, *candidates["raw"]]
    warning = snap.get("warning") if snap else ""
    warning = warning if isinstance(warning, str) else ""
    text, _, _ = pack_items(root, candidates, budget - (len(warning) + 1 if warning else 0))
    return with_warning(text, warning) or None
