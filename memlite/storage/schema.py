"""The SQL of each schema version, kept apart from the code that applies it.

Conventions (why they are so):

* Tables are ``STRICT``: a wrong type is an error at write time, not a surprise at read time.
* Every timestamp is stored twice: ``*_at`` ISO 8601 UTC for people and the dashboard, and
  ``*_at_epoch`` in milliseconds for ordering and ranges (integers compare and index well).
* JSON columns hold arrays or objects as text and are checked with ``json_valid``.
* Children of a session (prompts, events, observations, summaries) are deleted with it
  (``ON DELETE CASCADE``); ``superseded_by`` becomes NULL when the newer observation goes.
  A child that arrives first creates a stub session (a trigger), never an error.
* FTS5 tables use external content (the row lives once, in its table) and are kept in sync
  by triggers, so every write path (including cascaded deletes) updates the index. The
  observations index reads through a view because its ``files`` column joins two columns.
* ``events.dedup_key`` is what makes capture idempotent: ``t:<tool_use_id>`` when the hook
  has a tool_use_id, otherwise ``h:<content hash>``; it is unique per session.
* The vec0 table is not here: its dimension depends on the embedder (see ``vectors.py``).
"""

from __future__ import annotations

__all__ = ["M001_INIT", "M002_OBSERVER", "M003_SEARCH", "M004_OLD_STATUS", "M004_STATUS"]

_OBS_FTS_COLUMNS = "title, subtitle, narrative, facts, concepts, files"


def _obs_fts_values(alias: str) -> str:
    return (
        f"{alias}.title, {alias}.subtitle, {alias}.narrative, {alias}.facts, {alias}.concepts, "
        f"{alias}.files_read || ' ' || {alias}.files_modified"
    )


def _stub_session_triggers() -> str:
    return "\n".join(
        f"CREATE TRIGGER {table}_stub_session BEFORE INSERT ON {table}\n"
        "WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE id = new.session_id) BEGIN\n"
        "    INSERT INTO sessions (id, started_at, started_at_epoch)\n"
        "    VALUES (new.session_id, new.created_at, new.created_at_epoch);\n"
        "END;"
        for table in ("user_prompts", "events", "observations", "summaries")
    )


_TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2'"

M001_INIT = f"""
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,          -- Claude Code's session id
    project            TEXT,                      -- git top-level directory: the identity
    project_name       TEXT,                      -- for display
    cwd                TEXT,
    branch             TEXT,
    commit_sha         TEXT,
    source             TEXT,                      -- startup | resume | clear | compact
    transcript_path    TEXT,
    status             TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed')),
    started_at         TEXT NOT NULL,
    started_at_epoch   INTEGER NOT NULL,
    completed_at       TEXT,
    completed_at_epoch INTEGER,
    prompt_count       INTEGER NOT NULL DEFAULT 0,
    sdk_session_id     TEXT                       -- the observer's conversation
) STRICT;
CREATE INDEX sessions_project_started ON sessions (project, started_at_epoch);
CREATE INDEX sessions_status ON sessions (status);

CREATE TABLE user_prompts (
    id               INTEGER PRIMARY KEY,
    session_id       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    prompt_number    INTEGER NOT NULL,
    prompt_text      TEXT NOT NULL,               -- '' means the prompt was private
    created_at       TEXT NOT NULL,
    created_at_epoch INTEGER NOT NULL,
    UNIQUE (session_id, prompt_number)
) STRICT;

CREATE TABLE events (
    id               INTEGER PRIMARY KEY,
    session_id       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    event_name       TEXT NOT NULL,
    tool_name        TEXT,
    tool_use_id      TEXT,
    payload          TEXT NOT NULL,               -- JSON, written by json.dumps only
    content_hash     TEXT NOT NULL,
    dedup_key        TEXT NOT NULL
                     GENERATED ALWAYS AS (coalesce('t:' || tool_use_id, 'h:' || content_hash)),
    status           TEXT NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'processing', 'done', 'skipped')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL,
    created_at_epoch INTEGER NOT NULL,
    updated_at_epoch INTEGER NOT NULL,
    UNIQUE (session_id, dedup_key)
) STRICT;
-- One index serves the queue's questions (pending events, of one session or of all);
-- (session_id, dedup_key) above serves the foreign key and per-session counts.
CREATE INDEX events_status ON events (status, session_id, id);

CREATE TABLE observations (
    id               INTEGER PRIMARY KEY,
    session_id       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    project          TEXT NOT NULL,
    branch           TEXT,
    commit_sha       TEXT,
    type             TEXT NOT NULL,
    title            TEXT NOT NULL,
    subtitle         TEXT NOT NULL DEFAULT '',
    narrative        TEXT NOT NULL DEFAULT '',
    facts            TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(facts)),
    concepts         TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(concepts)),
    files_read       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(files_read)),
    files_modified   TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(files_modified)),
    source_event_ids TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(source_event_ids)),
    superseded_by    INTEGER REFERENCES observations (id) ON DELETE SET NULL,
    backend          TEXT NOT NULL,               -- 'ai' or 'rules'
    content_hash     TEXT NOT NULL UNIQUE,
    created_at       TEXT NOT NULL,
    created_at_epoch INTEGER NOT NULL
) STRICT;
CREATE INDEX observations_project_created ON observations (project, created_at_epoch);
CREATE INDEX observations_session ON observations (session_id);
-- Needed by the foreign key: deleting an observation looks up the ones it superseded.
CREATE INDEX observations_superseded_by ON observations (superseded_by)
    WHERE superseded_by IS NOT NULL;

CREATE TABLE summaries (
    id               INTEGER PRIMARY KEY,
    session_id       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    project          TEXT NOT NULL,
    request          TEXT NOT NULL DEFAULT '',
    investigated     TEXT NOT NULL DEFAULT '',
    learned          TEXT NOT NULL DEFAULT '',
    completed        TEXT NOT NULL DEFAULT '',
    next_steps       TEXT NOT NULL DEFAULT '',
    created_at       TEXT NOT NULL,
    created_at_epoch INTEGER NOT NULL
) STRICT;
CREATE INDEX summaries_project_created ON summaries (project, created_at_epoch);
CREATE INDEX summaries_session ON summaries (session_id);

-- A child row that arrives before its SessionStart (a spool drained after a restart, a
-- worker started mid-session) gets a stub session, filled in when SessionStart comes: the
-- durable queue must never refuse an event. Done in SQL so every write path gets it, and
-- because it is several times cheaper than a separate statement per row.
{_stub_session_triggers()}

CREATE TABLE audit_log (
    id       INTEGER PRIMARY KEY,
    at       TEXT NOT NULL,
    at_epoch INTEGER NOT NULL,
    actor    TEXT NOT NULL,                       -- who: 'user', 'api', 'worker', ...
    action   TEXT NOT NULL,
    target   TEXT NOT NULL,
    detail   TEXT NOT NULL DEFAULT '{{}}' CHECK (json_valid(detail))
) STRICT;
CREATE INDEX audit_log_at ON audit_log (at_epoch);

-- Full-text search: external content, kept in sync by triggers.
CREATE VIEW observations_fts_source AS
    SELECT id, title, subtitle, narrative, facts, concepts,
           files_read || ' ' || files_modified AS files
    FROM observations;
CREATE VIRTUAL TABLE observations_fts USING fts5 (
    {_OBS_FTS_COLUMNS},
    content = 'observations_fts_source', content_rowid = 'id', {_TOKENIZE}
);
CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts (rowid, {_OBS_FTS_COLUMNS})
    VALUES (new.id, {_obs_fts_values("new")});
END;
CREATE TRIGGER observations_fts_delete AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts (observations_fts, rowid, {_OBS_FTS_COLUMNS})
    VALUES ('delete', old.id, {_obs_fts_values("old")});
END;
CREATE TRIGGER observations_fts_update
AFTER UPDATE OF title, subtitle, narrative, facts, concepts, files_read, files_modified
ON observations BEGIN
    INSERT INTO observations_fts (observations_fts, rowid, {_OBS_FTS_COLUMNS})
    VALUES ('delete', old.id, {_obs_fts_values("old")});
    INSERT INTO observations_fts (rowid, {_OBS_FTS_COLUMNS})
    VALUES (new.id, {_obs_fts_values("new")});
END;

CREATE VIRTUAL TABLE summaries_fts USING fts5 (
    request, investigated, learned, completed, next_steps,
    content = 'summaries', content_rowid = 'id', {_TOKENIZE}
);
CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts (rowid, request, investigated, learned, completed, next_steps)
    VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps);
END;
CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries BEGIN
    INSERT INTO summaries_fts (summaries_fts, rowid,
                               request, investigated, learned, completed, next_steps)
    VALUES ('delete', old.id,
            old.request, old.investigated, old.learned, old.completed, old.next_steps);
END;
CREATE TRIGGER summaries_fts_update
AFTER UPDATE OF request, investigated, learned, completed, next_steps ON summaries BEGIN
    INSERT INTO summaries_fts (summaries_fts, rowid,
                               request, investigated, learned, completed, next_steps)
    VALUES ('delete', old.id,
            old.request, old.investigated, old.learned, old.completed, old.next_steps);
    INSERT INTO summaries_fts (rowid, request, investigated, learned, completed, next_steps)
    VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps);
END;

CREATE VIRTUAL TABLE prompts_fts USING fts5 (
    prompt_text, content = 'user_prompts', content_rowid = 'id', {_TOKENIZE}
);
CREATE TRIGGER prompts_fts_insert AFTER INSERT ON user_prompts BEGIN
    INSERT INTO prompts_fts (rowid, prompt_text) VALUES (new.id, new.prompt_text);
END;
CREATE TRIGGER prompts_fts_delete AFTER DELETE ON user_prompts BEGIN
    INSERT INTO prompts_fts (prompts_fts, rowid, prompt_text)
    VALUES ('delete', old.id, old.prompt_text);
END;
CREATE TRIGGER prompts_fts_update AFTER UPDATE OF prompt_text ON user_prompts BEGIN
    INSERT INTO prompts_fts (prompts_fts, rowid, prompt_text)
    VALUES ('delete', old.id, old.prompt_text);
    INSERT INTO prompts_fts (rowid, prompt_text) VALUES (new.id, new.prompt_text);
END;
"""

# Version 2 (the AI observer). Why each part:
#
# * ``observation_sources`` links an observation to each event it came from, per kind of
#   backend ('ai' or 'rules'), and ``batch`` names the one store that wrote it. The
#   trigger refuses a second store (another batch) for an event already observed by the
#   same kind of backend: durable replay can never give an event two AI observations
#   (or two rules ones), whatever the model answers the second time. A rules observation
#   and the AI one that supersedes it are different kinds, so both stay linked.
# * ``events.pruned_at_epoch``: the raw payload of an old done event is replaced by '{}'
#   (bounded disk); the row, its dedup key and its links stay.
# * ``sessions.observer_failures`` / ``observer_error``: observation failures in a row,
#   so SessionStart context (another process may build it) can say the AI is failing.
M002_OBSERVER = """
CREATE TABLE observation_sources (
    event_id       INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    kind           TEXT NOT NULL CHECK (kind IN ('ai', 'rules')),
    observation_id INTEGER NOT NULL REFERENCES observations (id) ON DELETE CASCADE,
    batch          TEXT NOT NULL,
    PRIMARY KEY (event_id, kind, observation_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX observation_sources_observation ON observation_sources (observation_id);

INSERT OR IGNORE INTO observation_sources (event_id, kind, observation_id, batch)
    SELECT j.value, CASE o.backend WHEN 'rules' THEN 'rules' ELSE 'ai' END, o.id,
           'm002:' || o.id
    FROM observations AS o, json_each(o.source_event_ids) AS j
    WHERE j.value IN (SELECT id FROM events);

CREATE TRIGGER observation_sources_one_store BEFORE INSERT ON observation_sources
WHEN EXISTS (SELECT 1 FROM observation_sources
             WHERE event_id = new.event_id AND kind = new.kind AND batch != new.batch)
BEGIN
    SELECT RAISE(ABORT, 'memlite: event already observed by this kind of backend');
END;

ALTER TABLE events ADD COLUMN pruned_at_epoch INTEGER;
CREATE INDEX events_prunable ON events (updated_at_epoch)
    WHERE status IN ('done', 'skipped') AND pruned_at_epoch IS NULL;

ALTER TABLE sessions ADD COLUMN observer_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN observer_error TEXT;
"""


# Full text filtered to one project: the FTS match gives rowids of every project; this
# index answers "is it in the project, and current?" without reading the row (measured
# at 100k observations over 20 projects: 14 ms -> 4.7 ms per search, BENCHMARKS.md).
M003_SEARCH = """
CREATE INDEX observations_project_live ON observations (project, superseded_by);
"""


# Version 4: a session may be ``failed`` (its observer agent gave up), as claude-mem records
# it; an import keeps that instead of calling the session ``completed``. Only the CHECK
# widens, so every existing row still satisfies it and the table is not rebuilt (a rebuild
# would need foreign keys off, which cannot change inside the migration's transaction; the
# widening is SQLite's documented sqlite_schema edit, see ``migrations.m004``).
M004_OLD_STATUS = "CHECK (status IN ('active', 'completed'))"
M004_STATUS = "CHECK (status IN ('active', 'completed', 'failed'))"


# Version 6: which of a few ids are superseded, without reading their rows. The in-memory
# full-text copy (``bm25_index``) answers a search's project and gives ids that exist;
# only supersession is left to check on its best 20-40. Seeking each id in the table costs
# ~2-3 µs (a big table's pages, even for the rowid alone); in this index, which holds only
# the superseded rows, ~0.5 µs (``fts_lists._fts_indexed``: 0.05 -> 0.01 ms a search at
# 10,000 observations).
M006_SUPERSEDED_IDS = """
CREATE INDEX observations_superseded_ids ON observations (id)
    WHERE superseded_by IS NOT NULL;
"""
