"""The search's last steps, after the lists are fused: the named day's own record first,
the current observation in place of a superseded one, a superseded one below its
replacement (``memlite.storage.search`` runs them in that order)."""

from __future__ import annotations

import apsw
import attrs

from memlite.storage.filters import Filters, json_ids, passing
from memlite.storage.fusion import demote_superseded
from memlite.storage.query import DATE_SLACK_DAYS, QueryIntent
from memlite.storage.sqlvalue import integer

__all__ = ["current_in_place", "superseded_last", "that_day_first"]


def that_day_first(conn: apsw.Connection, ranked: list[tuple[int, float]],
                    intent: QueryIntent, filters: Filters,
                    depth: int) -> tuple[list[tuple[int, float]], set[int]]:
    """``ranked`` with the observations written on the named day (or month), newest
    first, ahead of it, and the ids of that day's record. Why: "what did we do on 1
    December" has no topic word to search, so the lists hold only stray neighbours (user
    trial, round 4: 1 of 7); the user asks for that day's record. The window is the named
    day itself, without the ranking's slack days (``query.DATE_SLACK_DAYS``).

    The record is history, so an observation replaced by a later session's stays in it
    (what was done that day, even if undone since; like a named file's history), and the
    caller keeps it from being swapped for its replacement. A rules observation that an
    AI one of its own session replaced is a twin, not history: it stays out."""
    assert intent.dated is not None
    since, until = intent.dated
    until -= DATE_SLACK_DAYS * 86_400_000
    clauses, params = attrs.evolve(filters, include_superseded=True).where("o")
    if not filters.include_superseded:
        clauses.append("(o.superseded_by IS NULL OR o.session_id != (SELECT r.session_id "
                       "FROM observations AS r WHERE r.id = o.superseded_by))")
    clauses.append("o.created_at_epoch BETWEEN ? AND ?")
    rows = conn.execute(
        "SELECT o.id FROM observations o WHERE " + " AND ".join(clauses)
        + " ORDER BY o.created_at_epoch DESC, o.id DESC LIMIT ?",
        (*params, since, until, depth))
    day = [r[0] for r in rows]
    if not day:
        return ranked, set()
    top = max((score for _, score in ranked), default=0.0)
    listed = set(day)
    return [(oid, top + len(day) - i) for i, oid in enumerate(day)] + \
        [(oid, score) for oid, score in ranked if oid not in listed], listed


def current_in_place(conn: apsw.Connection, ranked: list[tuple[int, float]], filters: Filters, *,
             keep: set[int]) -> list[tuple[int, float]]:
    """``ranked`` with each superseded observation replaced by the live end of its chain
    (at its rank, unless that one ranks higher already), or dropped when that one fails
    the filters (another type, outside the dates): the current decision answers a
    question the old one matched, and the old one is not shown. Ids in ``keep`` (found
    by the file a query names: that file's history) stay themselves."""
    links: dict[int, int] = {}
    pending = [oid for oid, _ in ranked if oid not in keep]
    for _ in range(8):  # chains are short; a cycle cannot form, but stay bounded
        if not pending:
            break
        rows = conn.execute(
            "SELECT id, superseded_by FROM observations WHERE superseded_by IS NOT NULL "
            "AND id IN (SELECT value FROM json_each(?))", (json_ids(pending),)).fetchall()
        found = {integer(r[0]): integer(r[1]) for r in rows}
        links.update(found)
        pending = [p for p in found.values() if p not in links]
    if not links:
        return ranked

    def head(oid: int) -> int:
        seen = {oid}
        while oid in links and links[oid] not in seen:
            oid = links[oid]
            seen.add(oid)
        return oid

    heads = {oid: head(oid) for oid in links}
    allowed = passing(conn, sorted(set(heads.values())), filters)
    out: list[tuple[int, float]] = []
    shown: set[int] = set()
    for oid, score in ranked:
        current = oid if oid in keep else heads.get(oid, oid)
        if current in shown or (current != oid and current not in allowed):
            continue
        if current in links and current not in keep:  # the chain's end is not live
            continue
        shown.add(current)
        out.append((current, score))
    return out


def superseded_last(conn: apsw.Connection, ranked: list[tuple[int, float]],
                     ) -> list[tuple[int, float]]:
    """``ranked`` with no superseded observation above the one that replaced it."""
    if not ranked:
        return ranked
    rows = conn.execute(
        "SELECT id, superseded_by FROM observations WHERE superseded_by IS NOT NULL AND id IN "
        "(SELECT value FROM json_each(?))", (json_ids([oid for oid, _ in ranked]),))
    links = {r[0]: r[1] for r in rows}
    if not links:
        return ranked
    scores = dict(ranked)
    order = demote_superseded([oid for oid, _ in ranked], links)
    # Scores stay each hit's own; the order is what changed (scores may no longer descend).
    return [(oid, scores[oid]) for oid in order]
