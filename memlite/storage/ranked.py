"""Which summaries a new session is shown: those of sessions that did work come first.

``ranked_summaries`` replaces "the latest SUMMARY_COUNT" for the SessionStart context block
(``memlite.context``): a chat-only session ("what did we do last time?") gets a summary too,
but it says nothing a next session can build on, and two or three of them would push every
summary of real work out of the block.
"""

from __future__ import annotations

import apsw

from memlite.storage.reads import columns, to_record
from memlite.storage.records import Summary

__all__ = ["RANKED_SUMMARIES", "ranked_summaries"]

#: How many of a project's newest summaries are ranked (bounds SessionStart's work).
RANKED_SUMMARIES = 200

_RANKED_SQL = """
WHERE id IN (SELECT id FROM summaries WHERE project = ?1
             ORDER BY created_at_epoch DESC, id DESC LIMIT ?3)
ORDER BY (EXISTS (SELECT 1 FROM observations AS o WHERE o.session_id = summaries.session_id
                  AND NOT (o.backend = 'rules' AND o.type = 'decision'
                           AND o.concepts LIKE '%"user-note"%'))
          OR EXISTS (SELECT 1 FROM events AS e WHERE e.session_id = summaries.session_id
                     AND e.event_name IN ('PostToolUse', 'PostToolUseFailure'))) DESC,
         created_at_epoch DESC, id DESC
LIMIT ?2
"""


def ranked_summaries(conn: apsw.Connection, project: str, *,
                     limit: int) -> tuple[Summary, ...]:
    """The ``limit`` summaries a new session is shown: those of sessions that did work
    first, newest first, then the others (newest first).

    A session "did work" when it has an observation or a tool event; a note ("remember:
    X", ``storage.notes``) is not work: the block shows it in its own layer, so a session
    that only said "remember ..." is still chat-only here. A chat-only session
    ("what did we do last time?") still gets a summary, but it says nothing a next
    session can build on; ranked by time alone, two or three such questions would push
    every summary of real work out of SUMMARY_COUNT. Only the newest ``RANKED_SUMMARIES``
    are considered: the work stays bounded, and older memory is for search.
    """
    sql = f"SELECT {columns(Summary)} FROM summaries {_RANKED_SQL}"
    return tuple(to_record(Summary, row)
                 for row in conn.execute(sql, (project, limit, RANKED_SUMMARIES)))
