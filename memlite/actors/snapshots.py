"""The snapshot writer: keeps each project's context snapshot as fresh as its memory.

A SessionStart hook that gets no answer from the worker (down, idled out, starting,
hung) prints the project's snapshot plus its spooled activity (``memlite.hooks.snapshot``,
docs/delivery.md). This actor writes those snapshots: the block ``/api/context`` would
serve, built by ``memlite.context.snapshot_parts`` on a reader connection, then written
atomically (temp file, fsync, ``os.replace``; 0600) on a worker thread.

Which projects: those whose memory may have changed since the last round: a project with
an event, observation or summary newer than the round's high-water marks (one indexed
query on the rowids). A "sweep" round also takes every project that already has a
snapshot file: one runs after every deletion through the API (the HTTP layer publishes
``{"type": "deleted"}``), and every ``sweep`` seconds for what leaves no trace (an event
marked done without a new observation, a delete made outside the worker); a project
left with no memory loses its snapshot.

The actor's contract (mailbox, lifecycle, failure, timeouts) is in :class:`Snapshotter`.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, assert_never

import attrs
import trio

from memlite.actors.bus import Subscribe
from memlite.actors.core import ActorRef, Mailbox, Reply
from memlite.errors import ActorError
from memlite.hooks import snapshot

__all__ = ["DEBOUNCE_SECONDS", "Refresh", "SWEEP_SECONDS", "Snapshotter", "changed_projects",
           "high_marks", "refresh_after", "write_project"]

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.5
SWEEP_SECONDS = 300.0
MAX_PROJECTS_PER_ROUND = 200

Read = Callable[..., Awaitable[Any]]


@attrs.frozen(kw_only=True)
class Refresh:
    """Run a round now. Answer: the project roots whose snapshot was written or removed."""

    reply: Reply[list[str]] | None = None
    sweep: bool = False


Inbox = Refresh


def high_marks(conn: Any) -> tuple[int, int, int]:
    """The high-water rowids of events, observations and summaries."""
    row = conn.execute("SELECT (SELECT coalesce(max(id), 0) FROM events), "
                       "(SELECT coalesce(max(id), 0) FROM observations), "
                       "(SELECT coalesce(max(id), 0) FROM summaries)").fetchall()[0]
    return int(row[0]), int(row[1]), int(row[2])


def changed_projects(conn: Any, marks: tuple[int, int, int]
                     ) -> tuple[list[str], tuple[int, int, int]]:
    """Projects with an event, observation or summary above ``marks``; and the new marks."""
    new = high_marks(conn)
    rows = conn.execute(
        "SELECT DISTINCT s.project FROM events AS e JOIN sessions AS s ON s.id = e.session_id "
        "WHERE e.id > ? AND s.project IS NOT NULL "
        "UNION SELECT DISTINCT project FROM observations WHERE id > ? "
        "UNION SELECT DISTINCT project FROM summaries WHERE id > ? LIMIT ?",
        (*marks, MAX_PROJECTS_PER_ROUND)).fetchall()
    return [str(r[0]) for r in rows if r[0]], new


def _snapshotted(data_dir: Path) -> list[str]:
    """Project roots that have a snapshot file now."""
    directory = Path(data_dir) / snapshot.SNAPSHOT_DIR
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    roots = []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            value = json.loads((directory / name).read_bytes())
        except (OSError, ValueError):
            continue
        if isinstance(value, dict) and isinstance(value.get("project"), str):
            roots.append(value["project"])
    return roots


class Snapshotter:
    """Writes per-project context snapshots after the memory changes.

    Args:
        data_dir: where ``snapshots/`` lives.
        read: ``await read(fn, *args)`` runs ``fn(conn, *args)`` on a reader connection.
        settings: returns the live settings (counts and budget of the block).
        bus: the event bus (wake-ups); None: only ``Refresh`` and the sweep run rounds.
        debounce: seconds between a wake-up and its round.
        sweep: seconds between sweep rounds.

    Mailbox:
        ``Refresh`` (size 64): run a round now (``sweep=True``: over every snapshot too) and
        answer the projects written (``reply`` None: no answer). Any event on the bus (a
        stored hook event, observation or summary) makes the actor send itself a ``Refresh``
        ``debounce`` seconds later (one at a time), so a busy session costs one round per
        ``debounce``.
    Lifecycle:
        ``run`` reports its ref at once, then runs a start-up sweep round (snapshots written
        by an older worker are refreshed, projects touched while no worker ran are written),
        subscribes to the bus (retrying while the bus is not up yet) and serves until the
        mailbox closes. Then it runs one last round, so what the session actors committed
        while stopping is in the snapshots. The root starts it right after storage, so it is
        stopped after every writer but storage.
    Failure:
        A round that fails (a read error, a full disk) is logged; the marks are not
        advanced, so the next round tries the same projects again. One project that fails
        does not stop the others. A dropped bus subscription is opened again.
    Timeouts:
        The bus subscription ask: 2 s (retried every 50 ms while the bus starts). The final
        round is bounded by the child's shutdown grace (the supervisor cancels it past
        that).
    """

    def __init__(self, data_dir: Path, read: Read, settings: Callable[[], Any], *,
                 bus: ActorRef | None = None, debounce: float = DEBOUNCE_SECONDS,
                 sweep: float = SWEEP_SECONDS) -> None:
        self.data_dir = Path(data_dir)
        self.read = read
        self.settings = settings
        self.bus = bus
        self.debounce = debounce
        self.sweep = sweep
        self.marks = (0, 0, 0)
        self.rounds = 0
        self.written = 0
        self._scheduled = False
        self._sweep_next = False

    async def run(self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        with Mailbox("snapshots", size=64) as mailbox:
            task_status.started(mailbox.ref)
            # The directory says "a worker with snapshots ran here" to the hook, even
            # before there is anything to write (hooks/main.py ``_before_snapshots``).
            await trio.to_thread.run_sync(
                lambda: os.makedirs(self.data_dir / snapshot.SNAPSHOT_DIR, mode=0o700,
                                    exist_ok=True))
            async with trio.open_nursery() as nursery:
                if self.bus is not None:
                    nursery.start_soon(self._listen, mailbox.ref, nursery)
                await self.round(sweep=True)
                await self._serve(mailbox)
                nursery.cancel_scope.cancel()
            await self.round(sweep=False)  # what stopping sessions committed

    async def _serve(self, mailbox: Mailbox) -> None:
        next_sweep = trio.current_time() + self.sweep
        while True:
            message: Inbox | None = None
            with trio.move_on_at(next_sweep):
                try:
                    message = await mailbox.receive()
                except trio.EndOfChannel:
                    return  # the mailbox closed: stopped
            if message is None:  # the sweep is due
                next_sweep = trio.current_time() + self.sweep
                await self.round(sweep=True)
            else:
                await self._handle(message)

    async def _handle(self, message: Inbox) -> None:
        match message:
            case Refresh(reply=reply, sweep=sweep):
                done = await self.round(sweep=sweep)
                if reply is not None:
                    with reply:
                        reply.send_nowait(done)
            case _:
                assert_never(message)

    async def _listen(self, me: ActorRef, nursery: trio.Nursery) -> None:
        """On a bus event, ask for a round ``debounce`` seconds later (one at a time);
        subscribe again if the bus drops us."""
        assert self.bus is not None
        bus = self.bus
        while True:
            try:
                channel: trio.MemoryReceiveChannel[dict[str, Any]] = await bus.ask(
                    lambda reply: Subscribe(reply=reply), timeout=2)
            except ActorError:
                await trio.sleep(0.05)  # the bus is not up (yet), or restarting
                continue
            with channel:
                # A round for what was committed while we were not subscribed (the marks
                # find it), then one per burst of events.
                self._schedule(me, nursery)
                async for event in channel:
                    if event.get("type") == "deleted":
                        self._sweep_next = True  # deletions leave no row for the marks
                    self._schedule(me, nursery)
            await trio.sleep(0.1)

    def _schedule(self, me: ActorRef, nursery: trio.Nursery) -> None:
        if not self._scheduled:
            self._scheduled = True
            nursery.start_soon(self._later, me)

    async def _later(self, me: ActorRef) -> None:
        await trio.sleep(self.debounce)
        self._scheduled = False
        sweep, self._sweep_next = self._sweep_next, False
        try:
            me.send_nowait(Refresh(sweep=sweep))
        except ActorError:
            pass  # full (a round is queued anyway) or stopping (the last round follows)

    async def round(self, *, sweep: bool) -> list[str]:
        """Write the snapshots of changed projects (and of every snapshot on a sweep)."""
        self.rounds += 1
        try:
            projects, marks = await self.read(changed_projects, self.marks)
            if sweep:
                known = await trio.to_thread.run_sync(_snapshotted, self.data_dir)
                projects = list(dict.fromkeys([*projects, *known]))
        except Exception:  # noqa: BLE001 - a failed round is retried by the next one
            log.exception("snapshots: could not list changed projects")
            return []
        done, failed = [], False
        for root in projects:
            try:
                await self._write(root)
                done.append(root)
            except Exception:  # noqa: BLE001 - one project must not stop the others
                failed = True
                log.exception("snapshots: could not write the snapshot of %s", root)
        if not failed:
            self.marks = marks
        return done

    async def _write(self, root: str) -> None:
        if await self.read(write_project, self.data_dir, root, self.settings()):
            self.written += 1


def write_project(conn: Any, data_dir: Path, root: str, settings: Any) -> bool:
    """Build project ``root``'s block on ``conn`` and write its snapshot (or remove it when
    the project has no memory left); True when one was written. Sync: the actor runs it on
    a reader connection's thread, ``memlite import`` after an import (no worker runs then,
    and the next worker-down SessionStart must already see the imported memory)."""
    from memlite.context import snapshot_parts

    parts = snapshot_parts(conn, root, settings)
    if not parts.block.text:
        snapshot.remove(data_dir, root)
        return False
    snapshot.write(data_dir, root, text=parts.block.text, items=parts.items,
                   budget=parts.block.budget, raw_cap=parts.raw_cap, warning=parts.warning)
    return True


def refresh_after(conn: Any, data_dir: Path, settings: Any,
                  marks: tuple[int, int, int]) -> list[str]:
    """Write the snapshot of every project with rows above ``marks`` (see ``high_marks``): the
    projects an offline write (an import) touched. Returns them."""
    projects, _ = changed_projects(conn, marks)
    return [root for root in projects if write_project(conn, data_dir, root, settings)]
