"""The no-/proc run (``.ci/noproc``) really hides /proc from memlite, and memlite copes.

Outside that run (``TEST_EXPECT_NO_PROC`` unset) the /proc-hiding is simulated in
this process for the functions that only ask ``procs.have_proc()``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from memlite import lifecycle, procs

NO_PROC = os.environ.get("TEST_EXPECT_NO_PROC") == "1"


@pytest.mark.skipif(not NO_PROC, reason="only in the no-/proc run (.ci/noproc)")
def test_memlite_sees_no_proc_but_the_census_does():
    assert not procs.have_proc() and os.listdir("/proc") == []
    assert os.path.exists(os.path.join(os.environ["TEST_REAL_PROC"], "self", "stat"))
    assert procs.start_time(os.getpid()) is None  # neither /proc nor ps can answer
    assert procs.cmdline(os.getpid()) is None


def test_pid_alive_without_proc(monkeypatch):
    """The old pid_alive said False for every live process when /proc was missing."""
    monkeypatch.setattr(procs, "have_proc", lambda: False)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert lifecycle.pid_alive(os.getpid()) and lifecycle.pid_alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not lifecycle.pid_alive(child.pid)


def test_worker_is_recognised_by_its_lock_alone(data_dir, monkeypatch):
    """No /proc, no ps: the worker is still ours by ``worker.alive``, a stranger is not."""
    monkeypatch.setattr(procs, "cmdline", lambda pid: None)
    data_dir.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from memlite import lifecycle; from pathlib import Path\n"
         "fd = lifecycle.hold_alive_lock(Path(sys.argv[1])); print(fd is not None, flush=True)\n"
         "time.sleep(30)", str(data_dir)],
        stdout=subprocess.PIPE, text=True)
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert holder.stdout.readline().strip() == "True"
        assert lifecycle.alive_lock_pid(data_dir) == holder.pid
        assert lifecycle.is_our_worker(holder.pid, data_dir)
        assert not lifecycle.is_our_worker(stranger.pid, data_dir)
        assert lifecycle.hold_alive_lock(data_dir) is None  # a second worker cannot take it
    finally:
        for proc in (holder, stranger):
            proc.kill()
            proc.wait()
        holder.stdout.close()
    assert lifecycle.alive_lock_pid(data_dir) is None  # released by the kernel on SIGKILL
    assert not lifecycle.is_our_worker(holder.pid, data_dir)


def test_group_and_lock_helpers(tmp_path):
    lock = tmp_path / "x.lock"
    assert not procs.lock_held(lock)
    child = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\nfcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('ok', flush=True)\ntime.sleep(30)", str(lock)],
        stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert child.stdout.readline().strip() == "ok"
        assert procs.lock_held(lock)
        assert procs.group_alive(child.pid)
        assert child.pid in procs.group_pids(child.pid)
        assert procs.kill_group(child.pid)
        assert child.wait(timeout=5) == -9
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    assert not procs.lock_held(lock) and not procs.group_alive(child.pid)


def test_debug_memory_without_proc(monkeypatch):
    """/api/debug/sessions still reports the peak resident size where /proc is missing."""
    from memlite.http import api

    def no_proc(*_args, **_kwargs):
        raise FileNotFoundError("/proc/self/status")

    monkeypatch.setattr(api, "open", no_proc, raising=False)
    memory = api._memory()
    assert memory["rss_bytes"] is None and memory["peak_rss_bytes"] > 10_000_000
