"""The worker's Python: the plugin's virtual environment, built in the background.

STANDARD LIBRARY ONLY (the hook imports it). The hook runs on a bare interpreter with
``-I -S``; the worker needs trio, quart, apsw... So the worker runs on:

1. ``$MEMLITE_PYTHON`` when set (tests, development);
2. inside Claude Code (``$CLAUDE_PLUGIN_DATA`` set): ``${CLAUDE_PLUGIN_DATA}/venv/bin/python``
   once ``venv/.memlite-ready`` exists. Until then the first hook that finds it missing
   takes ``venv.lock`` (``O_EXCL``; stale after ``LOCK_STALE_SECONDS``) and starts, detached
   in its own session, :func:`build`: ``python -m venv`` then ``pip install`` of memlite from
   the plugin's source, output in ``venv-install.log``. Events are spooled meanwhile (a
   SessionStart prints them from the spool: ``snapshot.py``); once the venv is ready the
   builder starts the worker, which drains them (:func:`start_worker_when_ready`);
3. otherwise the hook's own interpreter if it is a virtual environment's, else none.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

__all__ = ["LOCK_STALE_SECONDS", "READY_FILE", "build", "ensure_venv", "source_dir",
           "start_worker_when_ready", "worker_python"]

VENV_DIR = "venv"
READY_FILE = ".memlite-ready"
LOCK_FILE = "venv.lock"
INSTALL_LOG = "venv-install.log"
LOCK_STALE_SECONDS = 15 * 60


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
        if os.path.exists(os.path.join(data, VENV_DIR, READY_FILE)):
            return os.path.join(data, VENV_DIR, "bin", "python")
        ensure_venv(data)
        return None
    return sys.executable if _in_venv() else None


def _take_lock(path: str) -> bool:
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            try:
                if time.time() - os.stat(path).st_mtime < LOCK_STALE_SECONDS:
                    return False
                os.unlink(path)  # a build that died: try again
            except FileNotFoundError:
                pass
            continue
        os.close(fd)
        return True
    return False


def ensure_venv(data: str) -> int | None:
    """Start building the venv in the background unless it is ready or being built.

    Returns the builder's pid when this call started it.
    """
    os.makedirs(data, mode=0o700, exist_ok=True)
    if os.path.exists(os.path.join(data, VENV_DIR, READY_FILE)):
        return None
    lock = os.path.join(data, LOCK_FILE)
    if not _take_lock(lock):
        return None
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from memlite.hooks.bootstrap import build; sys.exit(build(sys.argv[2]))")
    root = _import_root()
    with open(os.path.join(data, INSTALL_LOG), "ab") as out:
        child = subprocess.Popen([sys.executable, "-I", "-S", "-c", code, root, data],
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                 start_new_session=True, close_fds=True, cwd=data)
    with open(lock, "w") as f:
        f.write(f"{child.pid}\n")
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
        result = start_worker(directory, argv=worker_command(directory, python=python),
                              wait=False)
        print(f"worker {'already running' if result.info else 'starting'} for {directory}",
              flush=True)
    except Exception as exc:  # noqa: BLE001 - the build itself succeeded
        print(f"could not start the worker: {type(exc).__name__}: {exc}", flush=True)


def build(data: str) -> int:
    """Create ``<data>/venv`` and pip-install memlite into it (run detached by the hook)."""
    venv = os.path.join(data, VENV_DIR)
    python = os.path.join(venv, "bin", "python")
    try:
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} building {venv}",
              flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check",
                        "--no-input", source_dir()], check=True)
        with open(os.path.join(venv, READY_FILE), "w") as f:
            f.write(f"{time.time()}\n")
        print("ready", flush=True)
        start_worker_when_ready(python)
        return 0
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"failed: {exc}", flush=True)
        return 1
    finally:
        try:
            os.unlink(os.path.join(data, LOCK_FILE))
        except FileNotFoundError:
            pass
