"""Issue 17: the stop budget is one table that adds up, the tree uses it, and every
shield on the way ends within it (the storage batch, an AI being closed)."""

from __future__ import annotations

import socket
import time

import pytest
import trio

from memlite.actors import graces
from memlite.actors import storage as storage_actor
from memlite.actors.core import ChildSpec, Supervisor
from memlite.actors.storage import StorageActor
from memlite.errors import ActorDied, StorageError
from tests.actors.test_storage_actor import store_event


def test_the_table_adds_up_to_the_workers_cap_and_the_promise():
    from memlite import worker
    from memlite.actors import session

    assert sum(graces.root_graces().values()) == pytest.approx(graces.ROOT_STOP)
    assert worker.SHUTDOWN_GRACE_SECONDS == graces.ROOT_STOP
    assert graces.ROOT_STOP + graces.EXIT_MARGIN <= graces.STOP_BOUND
    assert session.SHUTDOWN_SUMMARY_WAIT_SECONDS == graces.SHUTDOWN_SUMMARY_WAIT_SECONDS
    assert graces.HTTP_GRACE > graces.GRACEFUL_TIMEOUT
    # A stopping session actor: its summary wait, its stop grace, then its AI's close.
    assert (graces.SHUTDOWN_SUMMARY_WAIT_SECONDS + graces.SESSION_STOP_GRACE
            + graces.AI_CLOSE_SECONDS) <= graces.SESSIONS_GRACE


def test_the_tree_uses_the_table(data_dir, monkeypatch):
    from memlite import tree as root
    from memlite.config import load_settings

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        monkeypatch.setenv("MEMLITE_WORKER_PORT", str(probe.getsockname()[1]))
    settings = load_settings(data_dir)

    async def build() -> root.WorkerTree:
        with root.listen(settings.worker_port) as listener:
            return root.WorkerTree(settings, token="t" * 32, listener=listener)

    tree = trio.run(build)
    table = graces.root_graces()
    specs = {child.spec.name: child.spec for child in tree.supervisor._children}
    assert list(specs)[::-1] == list(table)  # stop order = the table's order
    for name, spec in specs.items():
        allowed = graces.STORAGE_GRACE if name == "storage" else table[name]
        assert spec.shutdown == pytest.approx(allowed), name
    optional = [child.spec.shutdown for child in tree.optional._children]
    assert sum(optional) <= graces.OPTIONAL_GRACE
    assert graces.GRACEFUL_TIMEOUT == root.GRACEFUL_TIMEOUT


def endless(conn, batch):  # a batch that never finishes by itself (SQLite interrupts it)
    conn.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                 "SELECT count(*) FROM c").fetchall()


async def test_a_storage_batch_in_progress_is_cut_at_the_end_of_the_grace(data_dir,
                                                                          monkeypatch):
    """It was shielded for ``batch_timeout`` (30 s) against a 3 s grace."""
    monkeypatch.setattr(storage_actor, "commit_batch", endless)
    actor = StorageActor(data_dir)  # batch_timeout stays the default 30 s
    sup = Supervisor([ChildSpec(name="storage", start=actor.run, shutdown=0.2)])
    answers: list[BaseException] = []

    async def ask() -> None:
        try:
            await sup.ref("storage").ask(lambda r: store_event(1, r), timeout=60)
        except (StorageError, ActorDied) as exc:
            answers.append(exc)

    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        nursery.start_soon(ask)
        await trio.sleep(0.3)  # the batch has begun (it never ends by itself)
        began = time.monotonic()
        await sup.stop()
        took = time.monotonic() - began
    assert took < 10, took  # the grace plus STORAGE_OVERRUN; old code: batch_timeout (30)
    assert len(answers) == 1  # the sender learned its write was not committed
