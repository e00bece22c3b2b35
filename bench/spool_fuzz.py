"""The spool campaign (issue 13): with the worker down, mutated payloads go through the
REAL hook process into the spool, then one drain must take every one of them: stored,
or quarantined with its reason, never lost, and the spool left empty.

Used by ``bench/bench_fuzz.py --spool N`` (1,000 payloads, figures to BENCHMARKS.md) and
by ``tests/test_spool_fuzz.py`` (a smaller campaign in CI).

Each payload is a captured Claude Code fixture of an event the hook handles, with its own
``session_id`` (``fuzz-<n>``: every event can be found again), then one mutation:

* ``lone-surrogate``: a ``\\ud800``-style escape in a value or a key (json.loads makes a
  lone surrogate of it, which UTF-8 refuses);
* ``cwd-long``: a cwd with a component over 255 bytes (ENAMETOOLONG);
* ``cwd-nul``: a cwd holding a NUL;
* ``cwd-denied``: a cwd whose examination fails with EACCES;
* ``cwd-dead-mount``: a cwd on a mount that never answers (the stat blocks);
* ``cwd-missing-mount``: a cwd on a mount that is not there (``/Volumes/gone/...``);
* ``nan``: NaN and infinities (Python's json reads them; the database refuses them);
* ``deep``: nesting 50 to 2,000 levels deep (past the filters' recursion limit);
* ``wrong-types``: fields other than the session id and event name of the wrong type;
* ``huge-string``: a value of 300 kB to 2 MB;
* ``invalid-utf8``: bytes that are not UTF-8 inside the JSON text;
* ``bad-setting``: the hook runs with ``MEMLITE_WORKER_PORT=abc`` or ``99999``.

"Can the hook read it" is decided as the hook does (a JSON object after UTF-8 decoding
with replacement, a routed event, a non-empty string session id, not a skipped tool).

Permission denied and a dead mount cannot be made for real here (the suite may run as
root, and mounting needs privileges): the drain runs in this process, with the project
resolver failing with EACCES, or blocking until released, for those two path prefixes.
Everything else is the real code: the hook process, the spool files, ``drain_spool``
with the storage actor on a real database.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "claude-code" / "v2.1.332" / "hooks"
HOOK = ROOT / "plugin" / "scripts" / "hook.py"
BARE = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
ROUTED = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure",
          "PreCompact", "SubagentStop", "Stop", "SessionEnd")
SKIPPED_TOOLS = ("TodoWrite",)
DENIED = "/srv/memlite-fuzz-denied"
DEAD = "/Volumes/memlite-fuzz-dead"
PROJECT_TIMEOUT = 0.5
_ID = re.compile(r"fuzz-\d+")


def routed_fixtures() -> list[dict[str, Any]]:
    found = []
    for path in sorted(FIXTURES.glob("*.json")):
        payload = json.loads(path.read_text())
        if payload.get("hook_event_name") in ROUTED:
            found.append(payload)
    return found


# --- mutations: each returns (stdin bytes, extra env) ----------------------------------------


def _dumps(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()


def _surrogate(rng: random.Random, p: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    escape = rng.choice(["\\ud800", "\\udfff", "\\udc00x", "\\ud83d", "\\ud800\\ud800"])
    if rng.random() < 0.3:  # in a key
        raw = _dumps({**p, "KEY": 1}).replace(b'"KEY"', f'"k{escape}"'.encode(), 1)
    else:
        key = rng.choice([k for k in p if isinstance(p[k], str) and k not in (
            "session_id", "hook_event_name")] or ["extra"])
        raw = _dumps({**p, key: "SURR"}).replace(b'"SURR"', f'"a{escape}b"'.encode(), 1)
    return raw, {}


def _cwd(path: str) -> Any:
    def mutate(rng: random.Random, p: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
        return _dumps({**p, "cwd": path.format(n=rng.randrange(3))}), {}
    return mutate


def _nan(rng: random.Random, p: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    value = rng.choice(["NaN", "Infinity", "-Infinity", "[NaN, 1, Infinity]"])
    return _dumps({**p, "extra": "NUM"}).replace(b'"NUM"', value.encode(), 1), {}


def _deep(rng: random.Random, p: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    depth = rng.choice([50, 300, 900, 2_000])
    nested = "[" * depth + "]" * depth if rng.random() < 0.5 else \
        '{"a":' * depth + "1" + "}" * depth
    return _dumps({**p, "extra": "DEEP"}).replace(b'"DEEP"', nested.encode(), 1), {}


_WRONG = [None, True, 0, -1, 1.5, 2**70, "", [], [1, "a"], {}, {"a": {"b": None}}]


def _wrong_types(rng: random.Random, p: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    keys = [k for k in p if k not in ("session_id", "hook_event_name")]
    for key in rng.sample(keys, rng.randint(1, len(keys))) if keys else []:
        p[key] = rng.choice(_WRONG)
    return _dumps(p), {}


def _huge(rng: random.Random, p: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    key = rng.choice(["prompt", "tool_response", "last_assistant_message", "extra"])
    return _dumps({**p, key: rng.choice("ab<é😀\n") * rng.choice([300_000, 2_000_000])}), {}


def _invalid_utf8(rng: random.Random, p: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    raw = _dumps({**p, "extra": "BYTES"})
    bad = rng.choice([b"\xff", b"\xfe\xfd", b"\xc3", b"\xed\xa0\x80", b"\x80"])
    return raw.replace(b"BYTES", b"a" + bad + b"b", 1), {}


def _bad_setting(rng: random.Random, p: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    return _dumps(p), {"MEMLITE_WORKER_PORT": rng.choice(["abc", "99999", "80", ""])}


MUTATIONS = {
    "lone-surrogate": _surrogate,
    "cwd-long": _cwd("/tmp/" + "x" * 300 + "/proj{n}"),
    "cwd-nul": _cwd("/tmp/a\x00b{n}"),
    "cwd-denied": _cwd(DENIED + "/proj{n}"),
    "cwd-dead-mount": _cwd(DEAD + "/proj{n}"),
    "cwd-missing-mount": _cwd("/Volumes/memlite-fuzz-gone/proj{n}"),
    "nan": _nan,
    "deep": _deep,
    "wrong-types": _wrong_types,
    "huge-string": _huge,
    "invalid-utf8": _invalid_utf8,
    "bad-setting": _bad_setting,
}


def readable(stdin: bytes) -> bool:
    """Whether the hook can read this event (as ``hooks/main._read_event`` decides)."""
    try:
        value = json.loads(stdin.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return False
    if not isinstance(value, dict) or value.get("hook_event_name") not in ROUTED:
        return False
    sid = value.get("session_id")
    if not isinstance(sid, str) or not sid.strip():
        return False
    tool = value.get("tool_name")
    return not (value["hook_event_name"].startswith("PostToolUse") and isinstance(tool, str)
                and (tool in SKIPPED_TOOLS or tool.startswith("mcp__plugin_memlite_")))


def hook_env(data_dir: Path) -> dict[str, str]:
    """The environment of a hook with the worker down and nothing to start it with."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MEMLITE_", "CLAUDE_PLUGIN"))}
    # No MEMLITE_PYTHON and a bare interpreter: the hook finds no worker Python and
    # starts nothing; no token either (no worker ever ran), so it connects nowhere.
    env.update(MEMLITE_DATA_DIR=str(data_dir), MEMLITE_WORKER_PORT="9",
               MEMLITE_HOOK_SESSION_START_WAIT="0", MEMLITE_OBSERVER="rules",
               MEMLITE_EMBEDDER="none")
    return env


def _none(rng: random.Random, p: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    return _dumps(p), {}


PLAIN = {"none": _none}  # the floor: the captured payloads as they are


def spool_payloads(data_dir: Path, count: int, *, seed: int = 13,
                   mutations: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the hook ``count`` times with mutated payloads; what each was and how it went."""
    MUTATIONS_ = MUTATIONS if mutations is None else mutations  # noqa: N806
    rng = random.Random(seed)
    fixtures = routed_fixtures()
    env = hook_env(data_dir)
    expected: dict[str, str] = {}  # session id -> mutation, for the events the hook can read
    kinds: Counter[str] = Counter()
    problems: list[str] = []
    durations: list[float] = []
    started = time.monotonic()
    for n in range(count):
        mutation = list(MUTATIONS_)[n % len(MUTATIONS_)] if n < len(MUTATIONS_) \
            else rng.choice(list(MUTATIONS_))
        payload = dict(rng.choice(fixtures))
        payload["session_id"] = f"fuzz-{n}"
        if "tool_use_id" in payload:
            payload["tool_use_id"] = f"toolu_fuzz_{n}"
        stdin, extra = MUTATIONS_[mutation](random.Random(rng.randrange(2**32)), payload)
        kinds[mutation] += 1
        if readable(stdin):
            expected[f"fuzz-{n}"] = mutation
        sent = time.monotonic()
        try:
            result = subprocess.run([BARE, "-I", "-S", str(HOOK), payload["hook_event_name"]],
                                    input=stdin, env={**env, **extra}, capture_output=True,
                                    timeout=30, cwd=ROOT)
        except subprocess.TimeoutExpired:
            problems.append(f"fuzz-{n} ({mutation}): no exit within 30 s")
            continue
        durations.append(time.monotonic() - sent)
        if result.returncode != 0 or b"Traceback" in result.stderr:
            problems.append(f"fuzz-{n} ({mutation}): exit {result.returncode}: "
                            f"{result.stderr[-300:]!r}")
    durations.sort()
    return {"count": count, "expected": expected, "kinds": kinds, "problems": problems,
            "hook_seconds": time.monotonic() - started,
            "hook_p50": durations[len(durations) // 2] if durations else 0.0,
            "hook_max": durations[-1] if durations else 0.0}


@contextlib.contextmanager
def unexaminable_paths():
    """EACCES under ``DENIED``, a stat that never returns under ``DEAD`` (until exit)."""
    from memlite import ingest

    real, timeout = ingest.resolve_project, ingest.PROJECT_TIMEOUT
    release = threading.Event()

    def resolve(cwd: str) -> Any:
        if cwd.startswith(DENIED):
            raise PermissionError(errno.EACCES, "Permission denied", cwd)
        if cwd.startswith(DEAD):
            release.wait(60)
            raise OSError(errno.EIO, "Input/output error", cwd)
        return real(cwd)

    ingest.resolve_project, ingest.PROJECT_TIMEOUT = resolve, PROJECT_TIMEOUT
    try:
        yield
    finally:
        ingest.resolve_project, ingest.PROJECT_TIMEOUT = real, timeout
        release.set()


async def drain_once(data_dir: Path) -> Any:
    """One ``drain_spool`` over ``data_dir`` with a real storage actor and database."""
    import trio

    from memlite.actors.bus import EventBus
    from memlite.actors.core import spawn
    from memlite.actors.session import SessionSupervisor
    from memlite.actors.storage import StorageActor
    from memlite.config import load_settings
    from memlite.drain import drain_spool
    from memlite.services import Services
    from memlite.storage.db import db_path

    settings = load_settings(data_dir, {"MEMLITE_DATA_DIR": str(data_dir),
                                        "MEMLITE_OBSERVER": "rules",
                                        "MEMLITE_EMBEDDER": "none"})
    async with (
        spawn(StorageActor(data_dir).run) as storage,
        spawn(EventBus(buffer=4096).run) as bus,
        spawn(SessionSupervisor(stop_grace=1.0).run) as sessions,
    ):
        services = Services(
            settings=settings, data_dir=data_dir, db_path=db_path(data_dir), token="t" * 43,
            version="fuzz", pid=os.getpid(), started_at=trio.current_time(),
            started_at_wall_ms=int(time.time() * 1000), storage=storage, sessions=sessions,
            bus=bus)
        with unexaminable_paths():
            return await drain_spool(services)


def account(data_dir: Path, expected: dict[str, str]) -> dict[str, Any]:
    """Where every expected event ended: stored, quarantined, or lost."""
    from memlite.hooks import spool
    from memlite.storage import connect

    conn = connect(data_dir, writer=False)
    try:
        stored = {str(r[0]) for r in conn.execute("SELECT DISTINCT session_id FROM events")}
    finally:
        conn.close()
    quarantined: dict[str, str] = {}
    path = spool.spool_dir(data_dir) / spool.QUARANTINE_FILE
    for line in path.read_bytes().splitlines() if path.exists() else []:
        record = json.loads(line)
        for sid in set(_ID.findall(record.get("raw", ""))):
            quarantined[sid] = record.get("reason", "")
    lost = sorted(set(expected) - stored - set(quarantined))
    left = [p.name for p in spool.spool_dir(data_dir).iterdir()
            if p.name.endswith((".jsonl", ".draining")) and p.name != spool.QUARANTINE_FILE] \
        if spool.spool_dir(data_dir).exists() else []
    by_kind: dict[str, Counter[str]] = {}
    for sid, mutation in expected.items():
        where = "stored" if sid in stored else "quarantined" if sid in quarantined else "lost"
        by_kind.setdefault(mutation, Counter())[where] += 1
    return {"stored": len(set(expected) & stored),
            "quarantined": len(set(expected) & set(quarantined)), "lost": lost,
            "left": left, "by_kind": by_kind,
            "reasons": Counter(r.split(":")[0] for r in quarantined.values())}


def spool_campaign(base: Path, count: int, *, seed: int = 13,
                   mutations: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole campaign: spool with the hook, drain once, account for every event.

    ``mutations=PLAIN`` runs the floor: the same with the captured payloads unchanged.
    """
    import trio

    data_dir = base / ("spool-down" if mutations is None else "spool-floor")
    ran = spool_payloads(data_dir, count, seed=seed, mutations=mutations)
    lines = sum(len(p.read_bytes().splitlines())
                for p in (data_dir / "spool").glob("*.jsonl"))
    started = time.monotonic()
    quiet = logging.getLogger("memlite")
    level, quiet.level = quiet.level, logging.ERROR  # one warning per odd event otherwise
    try:
        report = trio.run(drain_once, data_dir)
    finally:
        quiet.setLevel(level)
    drain_seconds = time.monotonic() - started
    found = account(data_dir, ran["expected"])
    return {**ran, **found, "spooled_lines": lines, "drain": report,
            "drain_seconds": drain_seconds}
