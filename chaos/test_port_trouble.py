"""Scenario 5, port trouble: the port held by another program; a stale pid file naming an
unrelated live process. memlite must say so clearly, never touch the other process, and a
hook must stay fast and lose nothing."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest
from harness import REPO, payload, wait_until

from memlite.hooks import spool

pytestmark = [pytest.mark.chaos, pytest.mark.timeout(120)]


def test_port_held_by_another_program(world, figures):
    holder = socket.socket()
    holder.bind(("127.0.0.1", world.port))
    holder.listen(1)
    try:
        started = time.monotonic()
        result = subprocess.run([sys.executable, "-m", "memlite", "worker", "start"],
                                env=world.env, capture_output=True, text=True, timeout=60,
                                cwd=REPO)
        figures["start_refused_s"] = round(time.monotonic() - started, 2)
        assert result.returncode != 0
        assert "is in use by another program" in result.stderr
        assert world.workers() == set()  # no worker left retrying in a loop
        code, out, took = world.hook("PostToolUse", payload(
            "PostToolUse.Bash", tool_use_id="toolu_port_1"))
        figures["hook_s_port_taken"] = round(took, 3)
        assert (code, out) == (0, b"")
        spooled = sum(len(p.read_text().splitlines())
                      for p in (world.data_dir / "spool").glob("*.jsonl")
                      if spool.is_spool_file(p.name))
        figures["spooled"] = spooled
        assert spooled == 1  # kept on disk, not lost
    finally:
        holder.close()
    world.start_worker()  # the port is free again: the spool is drained
    wait_until(lambda: world.query(
        "SELECT count(*) FROM events WHERE tool_use_id = 'toolu_port_1'")[0][0] == 1,
        15, "the spooled event stored after the port came free")


def test_stale_pid_file_naming_an_unrelated_live_process(world, figures):
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        world.data_dir.mkdir(parents=True, exist_ok=True)
        (world.data_dir / "worker.pid").write_text(
            f'{{"pid": {bystander.pid}, "port": {world.port}, "version": "0.0.1"}}\n')
        pid = world.start_worker()
        assert pid != bystander.pid
        assert bystander.poll() is None  # never signalled: it is not ours
        figures["bystander_alive"] = True
        code, out, took = world.hook("PostToolUse", payload(
            "PostToolUse.Bash", tool_use_id="toolu_stale_1"))
        assert (code, out) == (0, b"")
        figures["hook_s"] = round(took, 3)
        wait_until(lambda: world.query(
            "SELECT count(*) FROM events WHERE tool_use_id = 'toolu_stale_1'")[0][0] == 1,
            10, "event stored")
    finally:
        bystander.kill()
        bystander.wait()
    assert os.path.exists(world.data_dir / "worker.pid")
