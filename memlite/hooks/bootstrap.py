"""The worker's Python: the plugin's virtual environment, built in the background.

STANDARD LIBRARY ONLY (the hook imports it). The hook runs on a bare interpreter with
``-I -S``; the worker needs trio, quart, apsw... So the worker runs on:

1. ``$MEMLITE_PYTHON`` when set (tests, development);
2. inside Claude Code (``$CLAUDE_PLUGIN_DATA`` set): ``${CLAUDE_PLUGIN_DATA}/venv/bin/python``
   once ``venv/.memlite-ready`` exists. Until then the first hook that finds it missing
   takes ``venv.lock`` (``O_EXCL``, the builder's pid inside) and starts, detached in its
   own session, :func:`build`. Events are spooled meanwhile (a SessionStart prints
   them out of the spool: ``snapshot.py``); once the venv is ready the builder starts the worker,
   which drains them (:func:`start_worker_when_ready`);
3. otherwise the hook's own interpreter if it is a virtual environment's, else none.

The build (issue 16): lean, pinned, and never silently stuck.

* ``python -m venv --clear`` on Python 3.11 or newer (the hook's own if it is new enough,
  else the newest ``python3.1x`` found: macOS's ``/usr/bin/python3`` is 3.9), then
  ``pip install -c constraints.txt --no-binary claude-agent-sdk <plugin>`` (the host's pip
  with ``--python`` when it has pip 22.3+, so the venv holds no pip): runtime
  dependencies only, at the versions CI tested, and the SDK from its sdist, without the
  385 MB Claude Code binary its wheel bundles (the observer runs the user's own ``claude``:
  ``memlite/observer/clipath.py``). ``--no-compile``: bytecode is written when a module is
  first imported instead of for every file of every package up front.
* ``venv-status.json`` says what is happening: ``building`` (pid, start), ``ready``, or
  ``failed`` with the reason (the last lines of pip's output), the attempt number and when
  the next attempt may start. Backoff: 1, 2, 4... minutes, at most 1 hour; a build whose
  process died (a lock naming a dead pid, or older than ``LOCK_STALE_SECONDS``) counts as
  a failed attempt. The full output is in ``venv-install.log``.
* An update of the plugin that changes pyproject.toml or constraints.txt (the ready
  file records their digest) is noticed by the next hook: the worker keeps running on
  the venv in use while ``venv.next`` is built beside it, then the two are swapped; the
  worker of the new version replaces the old one at the next start (``spawn.py``).
* What the user sees: :func:`notice` gives the one line a SessionStart shows
  (``systemMessage``), and ``memlite doctor`` prints :func:`describe`. Both also work
  before any venv exists: ``python3 -m memlite.hooks.bootstrap status``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

__all__ = ["LOCK_STALE_SECONDS", "READY_FILE", "STATUS_FILE", "build", "describe", "fingerprint",
           "ensure_venv", "notice", "read_status", "source_dir", "start_worker_when_ready",
           "worker_python"]

VENV_DIR = "venv"
READY_FILE = ".memlite-ready"
LOCK_FILE = "venv.lock"
INSTALL_LOG = "venv-install.log"
STATUS_FILE = "venv-status.json"
CONSTRAINTS = "constraints.txt"
LOCK_STALE_SECONDS = 15 * 60
BACKOFF_SECONDS = 60.0
BACKOFF_MAX_SECONDS = 3600.0
MIN_PYTHON = (3, 11)
PYTHON_ENV = "MEMLITE_BOOTSTRAP_PYTHON"
BACKOFF_ENV = "MEMLITE_BOOTSTRAP_BACKOFF"  # seconds, tests only
PIP_ENV = "MEMLITE_BOOTSTRAP_PIP_ARGS"  # extra pip arguments, tests only (e.g. --no-index)
TYPICAL_SECONDS = 45


def source_dir() -> str:
    """The directory to ``pip install``: the one holding memlite's package and pyproject."""
    package = os.path.dirname(os.path.abspath(__file__))  # .../memlite/hooks
    for candidate in (os.path.dirname(os.path.dirname(package)),
                      os.path.dirname(os.path.dirname(os.path.realpath(package)))):
        if os.path.exists(os.path.join(candidate, "pyproject.toml")):
            return candidate
    return os.path.dirname(os.path.dirname(package))


def _in_venv() -> bool:
    # Under -S, sys.prefix is the base prefix even in a venv: look for pyvenv.cfg.
    home = os.path.dirname(os.path.dirname(sys.executable))
    return os.path.exists(os.path.join(home, "pyvenv.cfg"))


def worker_python() -> str | None:
    """The interpreter for the worker, or None while the plugin's venv is being built."""
    explicit = os.environ.get("MEMLITE_PYTHON", "").strip()
    if explicit:
        return explicit
    data = os.environ.get("CLAUDE_PLUGIN_DATA", "").strip()
    if data:
        ready = os.path.join(data, VENV_DIR, READY_FILE)
        if os.path.exists(ready):
            if _stale(ready):  # the plugin was updated: rebuild beside it, keep using it
                ensure_venv(data)
            return os.path.join(data, VENV_DIR, "bin", "python")
        ensure_venv(data)
        return None
    return sys.executable if _in_venv() else None


# --- what the venv was built from ---------------------------------------------------------


def fingerprint(source: str | None = None) -> str:
    """A digest of what a build installs: pyproject.toml and constraints.txt of ``source``."""
    digest = hashlib.sha256()
    source = source or source_dir()
    for name in ("pyproject.toml", CONSTRAINTS):
        try:
            with open(os.path.join(source, name), "rb") as f:
                digest.update(f.read())
        except OSError:
            digest.update(b"-")
    return digest.hexdigest()[:16]


def _stale(ready: str) -> bool:
    """True if the ready venv was built from other pins than this plugin's (an update).

    A ready file without a fingerprint (an older build, or a hand-made venv) is kept.
    """
    try:
        with open(ready, encoding="ascii", errors="replace") as f:
            lines = f.read().split()
    except OSError:
        return False
    built = next((w[len("fingerprint="):] for w in lines if w.startswith("fingerprint=")), None)
    return built is not None and built != fingerprint()


# --- status ---------------------------------------------------------------------------------


def read_status(data: str) -> dict[str, object]:
    """``venv-status.json`` (empty if none or unreadable)."""
    try:
        with open(os.path.join(data, STATUS_FILE), encoding="utf-8") as f:
            status = json.load(f)
    except (OSError, ValueError):
        return {}
    return status if isinstance(status, dict) else {}


def _write_status(data: str, **status: object) -> None:
    path = os.path.join(data, STATUS_FILE)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(status, f)
        os.replace(tmp, path)
    except OSError:
        pass


def _attempt(status: dict[str, object], default: int) -> int:
    """``int(status["attempt"] or default)``: the status file is ours (an int there), but it
    is read back from disk, so a hand-edited value still goes through ``int()``."""
    value = status.get("attempt") or default
    if not isinstance(value, (int, float, str)):
        raise TypeError(f"attempt: expected a number, got {type(value).__name__}")
    return int(value)


def _backoff(attempt: int) -> float:
    base = float(os.environ.get(BACKOFF_ENV, "") or BACKOFF_SECONDS)
    return min(base * float(2 ** max(0, attempt - 1)), BACKOFF_MAX_SECONDS)


def _failed(data: str, attempt: int, reason: str) -> None:
    now = time.time()
    _write_status(data, state="failed", attempt=attempt, error=reason, time=now,
                  retry_at=now + _backoff(attempt))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


# --- starting a build -----------------------------------------------------------------------


def _lock_holder(path: str) -> int | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _take_lock(data: str) -> bool:
    """Create ``venv.lock``; a lock whose builder died is cleared as a failed attempt."""
    path = os.path.join(data, LOCK_FILE)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            try:
                age = time.time() - os.stat(path).st_mtime
            except FileNotFoundError:
                continue
            holder = _lock_holder(path)
            dead = holder is not None and not _alive(holder)
            if not dead and age < LOCK_STALE_SECONDS and (holder is not None or age < 5):
                return False
            status = read_status(data)
            if status.get("state") == "building":
                attempt = _attempt(status, 1)
                _failed(data, attempt, "the build stopped before it finished (its process "
                        f"{holder} is gone)" if dead else
                        f"the build took more than {LOCK_STALE_SECONDS // 60} minutes")
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            continue
        os.close(fd)
        return True
    return False


def ensure_venv(data: str) -> int | None:
    """Start building the venv in the background unless it is ready, being built, or
    waiting out the backoff after a failed attempt.

    Returns the builder's pid when this call started it.
    """
    os.makedirs(data, mode=0o700, exist_ok=True)
    ready = os.path.join(data, VENV_DIR, READY_FILE)
    if os.path.exists(ready) and not _stale(ready):
        return None
    lock = os.path.join(data, LOCK_FILE)
    if not _take_lock(data):
        return None
    status = read_status(data)
    retry_at = status.get("retry_at")
    if status.get("state") == "failed" and isinstance(retry_at, (int, float)) \
            and time.time() < retry_at:
        os.unlink(lock)
        return None
    attempt = _attempt(status, 0) + 1 if status.get("state") == "failed" else 1
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from memlite.hooks.bootstrap import build; sys.exit(build(sys.argv[2], "
            "int(sys.argv[3])))")
    root = _import_root()
    # Before the start: a build that fails at once writes "failed" after this, not before.
    _write_status(data, state="building", attempt=attempt, time=time.time())
    with open(os.path.join(data, INSTALL_LOG), "ab") as out:
        child = subprocess.Popen([sys.executable, "-I", "-S", "-c", code, root, data,
                                  str(attempt)],
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                 start_new_session=True, close_fds=True, cwd=data)
    with open(lock, "w") as f:
        f.write(f"{child.pid}\n")
    # Detached, and meant to outlive us: hand it to subprocess's own list of children to
    # reap, without a ResourceWarning (a long-lived caller, e.g. a test, reaps it there).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        child.__del__()
    return child.pid


def _import_root() -> str:
    """The sys.path entry this memlite was imported from."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def start_worker_when_ready(python: str) -> None:
    """First run: the venv is ready, so start the worker now (it drains the spool: the
    events of the sessions that ran while the venv was being built), rather than wait for
    some later hook to find it down. Never raises: a failure leaves that to the next hook.
    """
    try:
        from memlite.hooks import client
        from memlite.spawn import start_worker, worker_command

        directory = client.data_dir()
        result = start_worker(Path(directory), argv=worker_command(Path(directory), python=python),
                              wait=False)
        print(f"worker {'already running' if result.info else 'starting'} for {directory}",
              flush=True)
    except Exception as exc:  # noqa: BLE001 - the build itself succeeded
        print(f"could not start the worker: {type(exc).__name__}: {exc}", flush=True)


# --- the build ------------------------------------------------------------------------------


def _version(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
        major, minor = out.split()
        return int(major), int(minor)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def base_python() -> tuple[str | None, str]:
    """A Python >= 3.11 to make the venv with, and what was looked at (for the reason)."""
    looked = []
    explicit = os.environ.get(PYTHON_ENV, "").strip()
    candidates = [explicit] if explicit else [sys.executable]
    if not explicit:
        names = [f"python3.{minor}" for minor in range(14, MIN_PYTHON[1] - 1, -1)]
        dirs = ["/opt/homebrew/bin", "/usr/local/bin", os.path.expanduser("~/.local/bin")]
        candidates += [p for n in names for p in [shutil.which(n)] if p]
        candidates += [os.path.join(d, n) for n in names for d in dirs]
    for python in candidates:
        if not python or not os.access(python, os.X_OK):
            if python == explicit and explicit:
                looked.append(f"{python} (not found)")
            continue
        version = _version(python)
        looked.append(f"{python} ({'.'.join(map(str, version)) if version else '?'})")
        if version is not None and version >= MIN_PYTHON:
            return python, ""
    return None, ", ".join(looked) or sys.executable


def _tail(path: str, lines: int = 3) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 4000))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    kept = [line.strip() for line in text.splitlines()
            if line.strip() and "Location 'file:" not in line]
    return " | ".join(kept[-lines:])[:400]


def host_pip(base: str) -> bool:
    """True if ``base`` has a pip that can install into another environment
    (``pip --python``, pip 22.3 or newer): then the venv needs no pip of its own."""
    try:
        out = subprocess.run([base, "-m", "pip", "--version"], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    parts = out.split()[1].split(".") if len(out.split()) > 1 else []
    try:
        return (int(parts[0]), int(parts[1])) >= (22, 3)
    except (IndexError, ValueError):
        return False


def pip_command(pip: list[str], source: str) -> list[str]:
    """The install (``pip`` is how pip is run): runtime dependencies of ``source`` at the
    constrained versions, the SDK from its sdist (no bundled CLI), no bytecode up front."""
    command = [*pip, "install", "--disable-pip-version-check", "--no-input", "--no-compile",
               "--no-binary", "claude-agent-sdk"]
    constraints = os.path.join(source, CONSTRAINTS)
    if os.path.exists(constraints):
        command += ["-c", constraints]
    command += os.environ.get(PIP_ENV, "").split()
    return [*command, source]


CONVERTER_PACKAGES = ("onnx", "protobuf", "ml-dtypes")
"""What ``memlite.embed.quantize`` needs beyond the venv (numpy and typing-extensions are
in it): installed for the one conversion into a throwaway directory, never into the venv."""


def prepare_model(data: str, base: str, python: str) -> None:
    """After the venv is ready: make the embedder's int8-in-memory copy of MiniLM once.

    ``memlite.embed.quantize`` needs ``onnx`` (~36 MB with protobuf and ml-dtypes) for this
    one conversion and never again, so it is not a runtime dependency: the host's pip puts
    it (at the constrained versions) in a temporary directory beside the venv, the venv's
    Python runs the conversion with that directory on ``PYTHONPATH`` (the copy lands in
    the model cache, ``<data dir>/models``), and the directory goes. The worker started
    just before runs the shipped file (bigger in memory, same ranking) until its next
    start. Never raises: without the copy, memory works the same, only heavier.
    """
    tmp = tempfile.mkdtemp(prefix="converter-", dir=data)
    try:
        command = [base, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                   "--no-compile", "--no-deps", "--target", tmp, *CONVERTER_PACKAGES]
        constraints = os.path.join(source_dir(), CONSTRAINTS)
        if os.path.exists(constraints):
            command += ["-c", constraints]
        command += os.environ.get(PIP_ENV, "").split()
        subprocess.run(command, check=True, timeout=600)
        env = {**os.environ, "PYTHONPATH": tmp}
        done = subprocess.run([python, "-c", "from memlite.embed.minilm import MiniLMEmbedder;"
                               " print(MiniLMEmbedder().name)"], env=env, timeout=900,
                              capture_output=True, text=True, check=False)
        print(f"embedding model: {done.stdout.strip() or done.stderr.strip()[-300:]}",
              flush=True)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"embedding model not converted ({exc}): the shipped file is used", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build(data: str, attempt: int = 1) -> int:
    """Create ``<data>/venv`` and pip-install memlite into it (run detached by the hook)."""
    final = os.path.join(data, VENV_DIR)
    # An update builds beside the venv in use (its worker keeps running), then swaps.
    update = os.path.exists(os.path.join(final, READY_FILE))
    venv = final + ".next" if update else final
    python = os.path.join(venv, "bin", "python")
    log = os.path.join(data, INSTALL_LOG)
    started = time.time()
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} building {venv} "
          f"(attempt {attempt})", flush=True)
    try:
        base, looked = base_python()
        if base is None:
            _failed(data, attempt, f"memlite needs Python {'.'.join(map(str, MIN_PYTHON))} "
                    f"or newer; found {looked}. Install one (macOS: `brew install "
                    f"python@3.12`) or set {PYTHON_ENV}")
            print(f"failed: no Python >= 3.11 ({looked})", flush=True)
            return 1
        # The host's pip installs into the venv when it can: no pip (nor, on 3.11,
        # setuptools) inside it, and no ensurepip run. Else the venv's own pip, which is
        # removed afterwards: neither is a runtime dependency.
        outside = host_pip(base)
        subprocess.run([base, "-m", "venv", "--clear", *(["--without-pip"] if outside else []),
                        venv], check=True)
        pip = [base, "-m", "pip", "--python", python] if outside else [python, "-m", "pip"]
        subprocess.run(pip_command(pip, source_dir()), check=True)
        if not outside:
            subprocess.run([python, "-m", "pip", "uninstall", "--yes", "--quiet", "pip",
                            "setuptools"], check=False)
        with open(os.path.join(venv, READY_FILE), "w") as f:
            f.write(f"{time.time()}\nfingerprint={fingerprint()}\n")
        if update:  # two renames; the old tree goes once nothing new can start from it
            old = final + ".old"
            shutil.rmtree(old, ignore_errors=True)
            os.replace(final, old)
            os.replace(venv, final)
            shutil.rmtree(old, ignore_errors=True)
        took = time.time() - started
        _write_status(data, state="ready", attempt=attempt, time=time.time(), seconds=took)
        print(f"ready in {took:.1f} s", flush=True)
        start_worker_when_ready(os.path.join(final, "bin", "python"))
        if outside:
            prepare_model(data, base, os.path.join(final, "bin", "python"))
        return 0
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"failed: {exc}", flush=True)
        _failed(data, attempt, f"{exc}: {_tail(log)}")
        return 1
    finally:
        try:
            os.unlink(os.path.join(data, LOCK_FILE))
        except FileNotFoundError:
            pass


# --- what the user sees ---------------------------------------------------------------------


def describe(data: str) -> tuple[str, str]:
    """``(level, text)`` for ``memlite doctor``: level is ok, warn or FAIL."""
    status = read_status(data)
    if os.path.exists(os.path.join(data, VENV_DIR, READY_FILE)):
        where = os.path.join(data, VENV_DIR)
        if status.get("state") == "failed":  # an update's build; the venv in use still works
            return "warn", (f"plugin Python environment {where} works, but rebuilding it "
                            f"for this plugin version failed: {status.get('error')}")
        if status.get("state") == "building":
            return "ok", f"plugin Python environment {where} ready; an update is being built"
        took = status.get("seconds")
        extra = f", built in {took:.0f} s" if isinstance(took, (int, float)) else ""
        return "ok", f"plugin Python environment ready ({where}{extra})"
    log = os.path.join(data, INSTALL_LOG)
    if status.get("state") == "building":
        since = time.time() - float(status.get("time") or time.time())  # type: ignore[arg-type]
        return "warn", (f"plugin Python environment is being built ({since:.0f} s so far, "
                        f"usually under {TYPICAL_SECONDS} s; log: {log})")
    if status.get("state") == "failed":
        wait = float(status.get("retry_at") or 0) - time.time()  # type: ignore[arg-type]
        when = f"retry in {wait / 60:.0f} min" if wait > 0 else "retry at the next session"
        return "FAIL", (f"plugin Python environment: attempt {status.get('attempt')} failed: "
                        f"{status.get('error')} ({when}; log: {log})")
    return "warn", "plugin Python environment not built yet (the next session starts it)"


def notice(data: str | None = None) -> str | None:
    """The SessionStart hook's reply while memory is unavailable because the venv is not
    ready: ``{"systemMessage": <one line>}`` as JSON, or None when there is nothing to say.

    For ``memlite/hooks/main.py``: print it (it is the whole stdout) when the worker
    cannot start because :func:`worker_python` is None.
    """
    data = data if data is not None else os.environ.get("CLAUDE_PLUGIN_DATA", "").strip()
    if not data or os.path.exists(os.path.join(data, VENV_DIR, READY_FILE)):
        return None
    level, text = describe(data)
    if level == "FAIL":
        line = f"memlite: memory is off: {text}"
    else:
        line = (f"memlite: setting up on first use (about {TYPICAL_SECONDS} s); this "
                "session is being recorded, memory is available from the next one")
    return json.dumps({"systemMessage": line[:600]})


def main(argv: list[str]) -> int:
    """``python3 -m memlite.hooks.bootstrap status [<plugin data dir>]``."""
    if len(argv) < 2 or argv[1] != "status":
        print("usage: python3 -m memlite.hooks.bootstrap status [<plugin data dir>]",
              file=sys.stderr)
        return 2
    data = argv[2] if len(argv) > 2 else os.environ.get("CLAUDE_PLUGIN_DATA", "").strip()
    if not data:
        print("no plugin data directory (give one, or set CLAUDE_PLUGIN_DATA)", file=sys.stderr)
        return 2
    level, text = describe(data)
    print(f"{level:>4}  {text}")
    return 1 if level == "FAIL" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
