"""Issue 17: the actor layer never depends on the web layer, and every actor module
states its Mailbox, Lifecycle, Failure and Timeouts.

The composition root (the supervision tree plus the HTTP front) is ``memlite/tree.py``,
outside ``memlite/actors/``; importing every actor module (in a fresh interpreter, so
nothing imported by other tests hides a dependency) must not load Quart, Hypercorn, the
HTTP package or the tree.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ACTORS = Path(__file__).resolve().parents[2] / "memlite" / "actors"
WEB = ("quart", "hypercorn", "memlite.http", "memlite.tree")
NOT_ACTORS = {"__init__", "core", "reply", "graces", "storage_messages", "session_messages",
              "supervisor_events", "supervisor_child"}


def test_importing_the_actors_loads_no_web_code():
    modules = sorted(f"memlite.actors.{p.stem}" for p in ACTORS.glob("*.py"))
    script = ("import json, sys\n" + "".join(f"import {m}\n" for m in modules) +
              f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({WEB!r}))))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    assert json.loads(done.stdout) == []


@pytest.mark.parametrize("path", sorted(p for p in ACTORS.glob("*.py")
                                        if p.stem not in NOT_ACTORS), ids=lambda p: p.stem)
def test_every_actor_module_states_mailbox_lifecycle_failure_and_timeouts(path):
    tree = ast.parse(path.read_text())
    text = "\n".join(filter(None, [ast.get_docstring(tree)] + [
        ast.get_docstring(node) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]))
    missing = [word for word in ("Mailbox", "Lifecycle", "Failure", "Timeouts")
               if f"{word}:" not in text and f"{word}\n" not in text]
    assert not missing, f"{path.name} does not state: {missing}"


@pytest.mark.parametrize(("module", "name"), [
    ("memlite.actors.core", "Actor"), ("memlite.actors.bus", "Unsubscribe"),
    ("memlite.actors.idle", "Touch"), ("memlite.actors.reaper", "ReapNow"),
    ("memlite.actors.storage", "StoreEvent"), ("memlite.actors.storage", "StartSession"),
    ("memlite.actors", "Actor")])
def test_test_only_messages_are_not_exported(module, name):
    import importlib

    assert name not in importlib.import_module(module).__all__


def test_one_stop_logic_only_the_supervisor_seals_a_child():
    """Issue 17, "one supervisor implementation": stopping a child (sealing its mailbox,
    then cancelling it past its grace) is ``supervisor.py``'s alone; the session
    supervisor asks it (``stop_child``) instead of keeping a copy."""
    sealers = sorted(p.name for p in [*ACTORS.glob("*.py"), ACTORS.parent / "tree.py"]
                     if "._seal()" in p.read_text() and p.stem not in {"core", "supervisor"})
    assert sealers == []
