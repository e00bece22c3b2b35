"""What every chaos scenario uses: a real worker of a private data directory, hooks run as
processes, the database read from outside, and a /proc census of what is still alive.

Everything is stopped by pid. A process is "ours" when its environment names this
scenario's data directory (``MEMLITE_DATA_DIR=...``): that survives reparenting, so an
orphan whose parent (the worker) was SIGKILLed is still found. ``Figures`` collects what a
scenario measured; ``chaos/conftest.py`` prints them and writes ``chaos/RESULTS.md``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import attrs
from ports import free_port
from procroot import PROC  # noqa: E402

from memlite.lifecycle import pid_alive, read_pidfile
from memlite.storage.db import db_path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "claude-code" / "v2.1.332" / "hooks"
HOOK = REPO / "plugin" / "scripts" / "hook.py"
FAKE_CLI_WORKER = REPO / "tests" / "observer" / "memlite_fake_cli_worker.py"
FAKE_CLI = REPO / "tests" / "observer" / "fake_claude.py"
BARE = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

__all__ = ["Chaos", "Figures", "free_port", "payload", "wait_until"]


def wait_until(predicate: Callable[[], object], timeout: float, what: str) -> float:
    """Poll a condition on real processes; returns the seconds it took."""
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"timed out after {timeout} s: {what}")
        time.sleep(0.02)
    return time.monotonic() - started


def payload(name: str, **changes: Any) -> dict[str, Any]:
    """A hook's stdin as the real CLI sends it (``tests/fixtures``), with ``changes``."""
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    data.update(changes)
    return data


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _state(pid: int) -> str:
    stat = _read(f"{PROC}/{pid}/stat")
    return stat[stat.rindex(b")") + 2:].split()[0].decode() if stat else ""


@attrs.define
class Figures:
    """What one scenario measured, in the order it was recorded."""

    scenario: str
    values: dict[str, Any] = attrs.field(factory=dict)

    def __setitem__(self, key: str, value: Any) -> None:
        self.values[key] = value


@attrs.define
class Chaos:
    """One scenario's world: a data directory, a port, an environment, its workers.

    ``fake_cli``: the worker observes with the claude backend over ``fake_claude.py``
    (``FAKE_CLAUDE_MODE`` etc. in ``env`` choose its behaviour); else the rules backend.
    """

    data_dir: Path
    env: dict[str, str]
    fake_cli: bool = False

    @classmethod
    def create(cls, data_dir: Path, *, fake_cli: bool = False, **env: str) -> Chaos:
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("MEMLITE_", "CLAUDE_PLUGIN", "FAKE_CLAUDE"))}
        base.update(MEMLITE_DATA_DIR=str(data_dir), MEMLITE_WORKER_PORT=str(free_port()),
                    MEMLITE_PYTHON=sys.executable, MEMLITE_EMBEDDER="none",
                    MEMLITE_OBSERVER="claude" if fake_cli else "rules")
        base.update(env)
        return cls(data_dir=data_dir, env=base, fake_cli=fake_cli)

    @property
    def port(self) -> int:
        return int(self.env["MEMLITE_WORKER_PORT"])

    # --- the worker -------------------------------------------------------------------

    def start_worker(self, timeout: float = 30) -> int:
        """Start (or find) the worker and wait until it is ready; returns its pid."""
        if self.fake_cli:
            from memlite.spawn import start_worker, worker_command

            argv = [sys.executable, str(FAKE_CLI_WORKER),
                    *worker_command(self.data_dir, python=sys.executable)[3:]]
            with _environ(self.env):
                info = start_worker(self.data_dir, argv=argv, timeout=timeout).info
            assert info is not None
            return info.pid
        result = subprocess.run([sys.executable, "-m", "memlite", "worker", "start", "--json"],
                                env=self.env, capture_output=True, text=True,
                                timeout=timeout + 10, cwd=REPO)
        assert result.returncode == 0, result.stderr
        return int(json.loads(result.stdout)["pid"])

    def worker_pid(self) -> int | None:
        info = read_pidfile(self.data_dir)
        return info.pid if info is not None and pid_alive(info.pid) else None

    def kill_worker(self, sig: int = signal.SIGKILL) -> int | None:
        pid = self.worker_pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        return pid

    def stop(self, grace: float = 5.0) -> None:
        """Stop every process of this data directory, by pid: SIGTERM, then SIGKILL."""
        from memlite.spawn import stop_worker

        if self.data_dir.exists():
            with contextlib.suppress(Exception):
                stop_worker(self.data_dir, grace=grace)
        left = self.processes()
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while (left := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    # --- hooks, requests ----------------------------------------------------------------

    def hook(self, event_name: str, data: dict[str, Any] | bytes,
             timeout: float = 30) -> tuple[int, bytes, float]:
        """Run the hook as Claude Code does (a process, stdin); ``(exit, stdout, seconds)``."""
        stdin = data if isinstance(data, bytes) else json.dumps(data).encode()
        started = time.monotonic()
        result = subprocess.run([BARE, "-I", "-S", str(HOOK), event_name], input=stdin,
                                env=self.env, capture_output=True, timeout=timeout, cwd=REPO)
        return result.returncode, result.stdout, time.monotonic() - started

    def token(self) -> str:
        return (self.data_dir / "token").read_text().strip()

    def api(self, method: str, path: str, body: Any = None,
            timeout: float = 10) -> tuple[int, Any]:
        from memlite.workerapi import call

        return call(self.port, self.token(), method, path, body, timeout=timeout)

    # --- the database, from outside ---------------------------------------------------------

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Read-only: never the writer, never a checkpoint of ours."""
        conn = apsw.Connection(str(db_path(self.data_dir)), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            conn.setbusytimeout(5000)
            return [tuple(row) for row in conn.execute(sql, params)]
        finally:
            conn.close()

    def integrity(self) -> str:
        return str(self.query("PRAGMA integrity_check")[0][0])

    # --- the census ----------------------------------------------------------------------

    def processes(self) -> set[int]:
        """Live (not zombie) processes whose environment names this data directory,
        except this test process itself."""
        marker = f"MEMLITE_DATA_DIR={self.data_dir}".encode()
        found = set()
        for entry in os.listdir(PROC):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            pid = int(entry)
            if marker in _read(f"{PROC}/{pid}/environ").split(b"\0") and \
                    _state(pid) not in ("", "Z", "X"):
                found.add(pid)
        return found

    def workers(self) -> set[int]:
        """Live worker processes of this data directory (by command line)."""
        wanted = os.path.realpath(self.data_dir)
        found = set()
        for pid in self.processes():
            args = _read(f"{PROC}/{pid}/cmdline").decode("utf-8", "replace").split("\0")
            if "worker" in args and "run" in args and wanted in args:
                found.add(pid)
        return found


@contextlib.contextmanager
def _environ(env: dict[str, str]):  # type: ignore[no-untyped-def]
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
