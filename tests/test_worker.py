"""The worker process lifecycle, with real processes: start, stop, status, races, signals.

Every worker runs on a free port in the test's own data directory. Daemonized workers
live in their own session and are re-parented away from pytest once their starter exits,
so the conftest leak check cannot see them: ``workers`` finds them by their command line
(``worker run --data-dir <this test's dir>``), SIGKILLs any left by pid and fails the test.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
from ports import free_port
from procroot import PROC  # noqa: E402

from memlite import __version__, worker
from memlite.config import load_settings
from memlite.errors import PortInUse
from memlite.lifecycle import (
    LOCK_FILE,
    PID_FILE,
    is_our_worker,
    lock_holder,
    pid_alive,
    probe_ready,
    read_pidfile,
)
from memlite.spawn import start_worker, worker_env

REPO = Path(__file__).resolve().parent.parent
IN_USE = "is in use by another program; set MEMLITE_WORKER_PORT to a free port"


def worker_pids(data_dir: Path) -> set[int]:
    """Live processes whose command line is a worker of ``data_dir``."""
    wanted = os.path.realpath(data_dir)
    found = set()
    for entry in os.listdir(PROC):
        if not entry.isdigit():
            continue
        try:
            with open(f"{PROC}/{entry}/cmdline", "rb") as f:
                args = [a.decode() for a in f.read().split(b"\0")]
        except OSError:
            continue
        if "worker" in args and "run" in args and wanted in args and pid_alive(int(entry)):
            found.add(int(entry))
    return found


def wait_until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    """Poll a condition on a real process, with a hang guard."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout} s"
        time.sleep(0.02)


@pytest.fixture
def env(data_dir) -> dict[str, str]:
    """The environment of every memlite subprocess: this test's data dir, a free port."""
    return {**os.environ, "MEMLITE_WORKER_PORT": str(free_port())}


@pytest.fixture(autouse=True)
def workers(data_dir):
    """Fail the test (after SIGKILLing them by pid) if it leaves workers of its data dir."""
    yield
    left = worker_pids(data_dir)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not any(pid_alive(pid) for pid in left), timeout=5)
    assert not left, f"test left workers running: {sorted(left)}"


def memlite(*args: str, env: dict[str, str], timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memlite", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def start_json(env: dict[str, str]) -> dict:
    result = memlite("worker", "start", "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def stop(env: dict[str, str], data_dir: Path) -> None:
    result = memlite("worker", "stop", env=env)
    assert result.returncode == 0, result.stderr
    assert worker_pids(data_dir) == set()


def test_start_status_stop(env, data_dir):
    port = int(env["MEMLITE_WORKER_PORT"])
    started = memlite("worker", "start", env=env)
    assert started.returncode == 0, started.stderr
    assert started.stderr == ""
    info = read_pidfile(data_dir)
    assert info is not None and info.port == port and info.version == __version__
    url = f"http://127.0.0.1:{port}/"
    assert started.stdout == f"worker started: pid {info.pid}, port {port}, url {url}\n"
    assert worker_pids(data_dir) == {info.pid}
    assert (data_dir / PID_FILE).stat().st_mode & 0o777 == 0o600
    assert set(json.loads((data_dir / PID_FILE).read_text())) == {"pid", "port", "startedAt",
                                                                  "version"}
    assert not (data_dir / LOCK_FILE).exists()
    assert (data_dir / "worker.log").exists()
    assert probe_ready(port, pid=info.pid)

    status = memlite("worker", "status", env=env)
    assert status.returncode == 0
    assert status.stdout.startswith(f"worker running: pid {info.pid}, port {port}, "
                                    f"version {__version__}, uptime ")
    record = json.loads(memlite("worker", "status", "--json", env=env).stdout)
    assert record["running"] and record["answering"] and record["pid"] == info.pid
    assert record["uptimeSeconds"] >= 0

    again = memlite("worker", "start", env=env)
    assert again.stdout == f"worker already running: pid {info.pid}, port {port}, url {url}\n"

    stopped = memlite("worker", "stop", env=env)
    assert (stopped.returncode, stopped.stdout) == (0, f"worker stopped: pid {info.pid}\n")
    assert not pid_alive(info.pid)
    assert not (data_dir / PID_FILE).exists()
    status = memlite("worker", "status", env=env)
    assert (status.returncode, status.stdout) == (1, "worker not running\n")
    assert memlite("worker", "stop", env=env).stdout == "worker not running\n"


def test_restart_gives_a_new_worker(env, data_dir):
    first = start_json(env)
    restarted = memlite("worker", "restart", "--json", env=env)
    assert restarted.returncode == 0, restarted.stderr
    second = json.loads(restarted.stdout)
    assert second["started"] and second["pid"] != first["pid"]
    assert not pid_alive(first["pid"])
    assert worker_pids(data_dir) == {second["pid"]}
    stop(env, data_dir)


def test_twenty_concurrent_starts_make_one_worker(env, data_dir):
    starters = [subprocess.Popen([sys.executable, "-m", "memlite", "worker", "start", "--json"],
                                 cwd=REPO, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
                for _ in range(20)]
    outputs = [p.communicate(timeout=60) for p in starters]
    assert [p.returncode for p in starters] == [0] * 20, [err for _, err in outputs]
    reports = [json.loads(out) for out, _ in outputs]
    pids = {r["pid"] for r in reports}
    assert len(pids) == 1
    assert sum(r["started"] for r in reports) == 1
    assert worker_pids(data_dir) == pids
    assert not (data_dir / LOCK_FILE).exists()
    stop(env, data_dir)


def test_stale_pidfile_of_a_dead_process_is_replaced(env, data_dir):
    dead = subprocess.Popen(["true"])
    dead.wait()
    data_dir.mkdir(parents=True)
    (data_dir / PID_FILE).write_text(json.dumps(
        {"pid": dead.pid, "port": 1, "startedAt": "2020-01-01T00:00:00+00:00",
         "version": __version__}))
    assert memlite("worker", "status", env=env).returncode == 1
    report = start_json(env)
    assert report["started"] and report["pid"] != dead.pid
    assert read_pidfile(data_dir).pid == report["pid"]
    stop(env, data_dir)


def test_pidfile_naming_an_unrelated_process_never_signals_it(env, data_dir):
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        data_dir.mkdir(parents=True)
        (data_dir / PID_FILE).write_text(json.dumps(
            {"pid": stranger.pid, "port": 1, "startedAt": "2020-01-01T00:00:00+00:00",
             "version": "0.0.0-old"}))
        assert not is_our_worker(stranger.pid, data_dir)
        assert memlite("worker", "stop", env=env).stdout == "worker not running\n"
        assert not (data_dir / PID_FILE).exists()  # the stale file was cleaned up

        (data_dir / PID_FILE).write_text(json.dumps(
            {"pid": stranger.pid, "port": 1, "startedAt": "2020-01-01T00:00:00+00:00",
             "version": "0.0.0-old"}))
        report = start_json(env)
        assert report["started"] and report["replaced"] is None
        assert report["pid"] != stranger.pid
        assert stranger.poll() is None, "the unrelated process was signalled"
        stop(env, data_dir)
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()


def test_another_version_is_replaced_exactly_once(env, data_dir):
    old = start_json({**env, "MEMLITE_WORKER_VERSION_OVERRIDE": "0.0.0-old"})
    assert old["version"] == "0.0.0-old"

    new = start_json(env)
    assert new["started"] and new["version"] == __version__
    assert new["replaced"]["pid"] == old["pid"]
    assert not pid_alive(old["pid"])
    assert worker_pids(data_dir) == {new["pid"]}
    log = (data_dir / "worker.log").read_text()
    assert f" {old['pid']} INFO memlite.worker: SIGTERM: shutting down" in log  # not SIGKILL

    again = start_json(env)
    assert (again["pid"], again["started"], again["replaced"]) == (new["pid"], False, None)
    stop(env, data_dir)


def test_a_newer_worker_is_kept(env, data_dir):
    newer = start_json({**env, "MEMLITE_WORKER_VERSION_OVERRIDE": "99.0.0"})
    report = start_json(env)
    assert (report["pid"], report["started"], report["version"]) == (newer["pid"], False,
                                                                     "99.0.0")
    stop(env, data_dir)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP],
                         ids=lambda s: s.name)
def test_signal_stops_the_worker_cleanly(env, data_dir, sig):
    proc = subprocess.Popen([sys.executable, "-m", "memlite", "worker", "run"], cwd=REPO,
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        wait_until(lambda: (info := read_pidfile(data_dir)) is not None
                   and info.pid == proc.pid and probe_ready(info.port))
        began = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=5)
        assert time.monotonic() - began < 5
        assert proc.returncode == 0, err
        assert out == b""  # the worker never writes to stdout
        assert not (data_dir / PID_FILE).exists()
        assert f"{sig.name}: shutting down" in (data_dir / "worker.log").read_text()
    finally:
        proc.kill()
        proc.wait()


def test_worker_run_refuses_a_second_worker(env, data_dir):
    first = start_json(env)
    second = memlite("worker", "run", env=env)
    assert second.returncode == 4
    assert f"already running (pid {first['pid']}" in second.stderr
    assert read_pidfile(data_dir).pid == first["pid"]
    stop(env, data_dir)


def test_port_taken_by_another_program(env, data_dir):
    port = int(env["MEMLITE_WORKER_PORT"])
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        began = time.monotonic()
        result = memlite("worker", "start", env=env)
        elapsed = time.monotonic() - began
    assert result.returncode != 0
    assert elapsed < 2, elapsed
    assert result.stdout == ""
    assert f"port {port} on 127.0.0.1 {IN_USE}" in result.stderr
    assert not (data_dir / PID_FILE).exists()
    assert not (data_dir / LOCK_FILE).exists()


def test_concurrent_starts_on_a_taken_port_all_fail_fast(env, data_dir):
    port = int(env["MEMLITE_WORKER_PORT"])
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        starters = [subprocess.Popen([sys.executable, "-m", "memlite", "worker", "start"],
                                     cwd=REPO, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True) for _ in range(5)]
        outputs = [p.communicate(timeout=30) for p in starters]
    assert all(p.returncode != 0 for p in starters)
    assert all(IN_USE in err and out == "" for out, err in outputs)


@pytest.mark.parametrize("lock", ["dead-holder", "older-than-30s", "never-written"])
def test_stale_spawn_lock_is_broken(env, data_dir, lock):
    data_dir.mkdir(parents=True)
    path = data_dir / LOCK_FILE
    if lock == "dead-holder":
        dead = subprocess.Popen(["true"])
        dead.wait()
        path.write_text(json.dumps({"pid": dead.pid, "time": time.time()}))
    elif lock == "older-than-30s":  # held by a live process (us), but for too long
        path.write_text(json.dumps({"pid": os.getpid(), "time": time.time() - 60}))
    else:  # its creator died between O_EXCL and writing
        path.write_text("")
        os.utime(path, (time.time() - 60, time.time() - 60))
    began = time.monotonic()
    report = start_json(env)
    assert report["started"]
    assert time.monotonic() - began < 10
    assert not (data_dir / LOCK_FILE).exists()
    stop(env, data_dir)


def test_live_fresh_lock_makes_start_wait_then_time_out(env, data_dir):
    data_dir.mkdir(parents=True)
    (data_dir / LOCK_FILE).write_text(json.dumps({"pid": os.getpid(), "time": time.time()}))
    result = memlite("worker", "start", "--timeout", "0.5", env=env)
    assert result.returncode == 2
    assert f"spawn lock held by pid {os.getpid()}" in result.stderr
    assert worker_pids(data_dir) == set()


def test_start_without_waiting_hands_the_lock_to_the_worker(env, data_dir):
    """What a hook does: spawn and leave; the worker itself releases the lock once ready."""
    result = start_worker(data_dir, env=worker_env(env), wait=False)
    assert (result.info, result.started) == (None, True)
    holder = lock_holder(data_dir)
    assert holder["by"] == os.getpid() and holder["pid"] != os.getpid()
    wait_until(lambda: not (data_dir / LOCK_FILE).exists())
    info = read_pidfile(data_dir)
    assert info is not None and info.pid == holder["pid"]
    again = start_worker(data_dir, env=worker_env(env), wait=False)
    assert (again.info, again.started) == (info, False)
    stop(env, data_dir)


def test_lifecycle_modules_import_only_the_standard_library():
    """Hooks import these: no site-packages (``-S``), and nothing but stdlib and memlite."""
    code = ("import sys, memlite.lifecycle, memlite.spawn; "
            "print(sorted({m.split('.')[0] for m in sys.modules} "
            "- set(sys.stdlib_module_names) - {'memlite', '__main__'}))")
    result = subprocess.run([sys.executable, "-S", "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=30)
    assert (result.returncode, result.stdout, result.stderr) == (0, "[]\n", "")


@pytest.mark.parametrize("name", ["memlite.lifecycle", "memlite.spawn", "memlite.worker"])
def test_all_is_sorted_and_complete(name):
    module = importlib.import_module(name)
    assert module.__all__ == sorted(module.__all__)
    assert all(hasattr(module, item) for item in module.__all__)


# --- the worker's trio main, in-process with a fake root ----------------------------------


@pytest.fixture
def settings(data_dir):
    return load_settings()


@pytest.fixture
def fake_root(monkeypatch):
    """Replace the root of the task tree with a script; records when it saw shutdown."""
    seen: list[float] = []

    def install(behaviour: str) -> list[float]:
        async def run_root(settings, *, shutdown, task_status=trio.TASK_STATUS_IGNORED):
            if behaviour == "in-use":
                raise OSError(errno.EADDRINUSE, "Address already in use")
            task_status.started(settings.worker_port)
            if behaviour == "idle":
                return
            await shutdown.wait()
            seen.append(trio.current_time())
            if behaviour == "stuck":
                await trio.sleep_forever()

        monkeypatch.setattr(worker, "run_root", run_root)
        return seen

    return install


def send_self(*signals: signal.Signals) -> Callable[[int], None]:
    def on_ready(port: int) -> None:
        for sig in signals:
            os.kill(os.getpid(), sig)

    return on_ready


async def test_serve_returns_when_the_root_stops_by_itself(settings, fake_root):
    fake_root("idle")
    ready: list[int] = []
    await worker.serve(settings, on_ready=ready.append)
    assert ready == [settings.worker_port]


async def test_serve_reports_a_taken_port(settings, fake_root):
    fake_root("in-use")
    with pytest.raises(PortInUse, match=f"port {settings.worker_port} on 127.0.0.1 {IN_USE}"):
        await worker.serve(settings, on_ready=send_self())


async def test_a_signal_lets_the_root_stop_by_itself(settings, fake_root, autojump_clock):
    seen = fake_root("graceful")
    await worker.serve(settings, on_ready=send_self(signal.SIGHUP))
    assert trio.current_time() == seen[0]


async def test_a_stuck_root_is_cancelled_after_the_grace(settings, fake_root, autojump_clock):
    seen = fake_root("stuck")
    await worker.serve(settings, on_ready=send_self(signal.SIGTERM))
    assert trio.current_time() - seen[0] == pytest.approx(worker.SHUTDOWN_GRACE_SECONDS, abs=1e-9)


async def test_a_second_signal_cancels_at_once(settings, fake_root, autojump_clock):
    seen = fake_root("stuck")
    await worker.serve(settings, on_ready=send_self(signal.SIGHUP, signal.SIGINT))
    assert trio.current_time() == seen[0]


@pytest.fixture
def restore_umask():
    mask = os.umask(0o022)
    os.umask(mask)
    yield
    os.umask(mask)


def test_run_exits_0_and_removes_its_pid_file_when_the_root_stops(data_dir, fake_root,
                                                                  restore_umask):
    fake_root("idle")
    assert worker.run(data_dir) == 0
    assert not (data_dir / PID_FILE).exists()
    log = (data_dir / "worker.log").read_text()
    assert "ready: http://127.0.0.1:" in log
    assert "the root stopped by itself" in log
    assert log.rstrip().endswith("exited")
