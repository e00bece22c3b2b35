"""The best match's next observation in its session, for ``fusion.admit_followup``.

A problem and its fix are written down minutes apart in one session, often in words that
share nothing with each other or with the question ("API client has no request timeout",
then "Added a 15s timeout to the API client": fine; "Overview renders slowly", then
"Switched to a canvas drawing library": not). ``admit_followup`` takes the best match's
follow-up from either list's top matches; this adds the observation written right after
the best match even when it is in neither list. One lookup on an index (~50 us at
100,000 observations in one project).
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from memlite.storage.filters import Filters
from memlite.storage.sqlvalue import integer

__all__ = ["next_in_session", "with_next_in_session"]

Fact = tuple[int, str, str]  # (created_at_epoch ms, session_id, type)


def next_in_session(conn: apsw.Connection, oid: int, fact: Fact, filters: Filters,
                    window_ms: int) -> tuple[int, Fact] | None:
    """The observation written next after ``oid`` (``fact``: its created, session, type)
    in its session, within ``window_ms`` and passing ``filters``: ``(id, fact)``, or
    None."""
    created, session, _ = fact
    clauses, params = filters.where("o")
    clauses += ["o.session_id = ?", "o.created_at_epoch BETWEEN ? AND ?", "o.id != ?",
                "(o.created_at_epoch > ? OR o.id > ?)"]
    params += [session, created, created + window_ms, oid, created, oid]
    row = conn.execute(
        "SELECT o.id, o.created_at_epoch, o.session_id, o.type FROM observations o WHERE "
        + " AND ".join(clauses) + " ORDER BY o.created_at_epoch, o.id LIMIT 1",
        params).fetchone()
    if row is None:
        return None
    return integer(row[0]), (integer(row[1]), str(row[2]), str(row[3]))


def with_next_in_session(conn: apsw.Connection, ranked: Sequence[tuple[int, float]],
                         listed: Sequence[int], facts: dict[int, Fact],
                         created: dict[int, int], filters: Filters, window_ms: int
                         ) -> tuple[list[tuple[int, float]], list[int], int | None]:
    """``(ranked, listed, next id)`` with the best match's next observation in its
    session made eligible for ``admit_followup``: added to ``listed``, and to the end of
    ``ranked`` when absent (score 0); ``facts`` and ``created`` learn it. The id is None
    when there is none."""
    ranked, listed = list(ranked), list(listed)
    following = next_in_session(conn, ranked[0][0], facts[ranked[0][0]], filters,
                                window_ms)
    if following is None:
        return ranked, listed, None
    oid, fact = following
    facts[oid], created[oid] = fact, fact[0]
    if oid not in listed:
        listed.append(oid)
    if all(other != oid for other, _ in ranked):
        ranked.append((oid, 0.0))
    return ranked, listed, oid
