"""The database: schema, migrations, writes, reads, full-text and vector search.

Everything here is a plain synchronous function over an ``apsw.Connection``. The storage
actor (``memlite.actors.storage``) runs the writes, a batch at a time, in one transaction
on the only writer connection; search, context and the dashboard run the reads on their
own reader connections (``open_reader``). Modules:

* ``db``: locating, checking and opening ``memlite.db`` (sync and async).
* ``migrations`` / ``schema``: numbered migrations and the SQL they apply.
* ``records``: the frozen records that go in and come out.
* ``writes`` / ``reads``: one function per logical change or question.
* ``fts``: safe full-text queries (BM25); ``vectors``: the sqlite-vec table and KNN.
"""

from memlite.storage.db import (
    DB_FILENAME,
    connect,
    db_path,
    open_reader,
    open_writer,
    prepare_path,
)
from memlite.storage.fts import fts_query, search_observations, search_prompts, search_summaries
from memlite.storage.migrations import (
    MIGRATIONS,
    Migration,
    latest_version,
    migrate,
    migration,
    schema_version,
)
from memlite.storage.reads import (
    audit_entries,
    count_events,
    count_observations,
    get_event,
    get_observation,
    get_observations,
    get_prompts,
    get_session,
    get_summary,
    pending_events,
    recent_observations,
    recent_sessions,
    recent_summaries,
    session_observations,
    table_counts,
)
from memlite.storage.records import (
    AuditEntry,
    Event,
    InsertResult,
    NewObservation,
    NewSummary,
    Observation,
    Prompt,
    SearchHit,
    Session,
    Summary,
    VectorHit,
)
from memlite.storage.vectors import (
    ensure_vector_table,
    nearest_observations,
    observations_missing_vectors,
    upsert_vectors,
    vector_table_info,
)
from memlite.storage.writes import (
    complete_session,
    delete_observation,
    delete_session,
    delete_summary,
    insert_event,
    insert_observation,
    insert_prompt,
    insert_summary,
    record_audit,
    requeue_processing_events,
    set_event_status,
    set_sdk_session_id,
    start_session,
)

__all__ = [
    "AuditEntry",
    "DB_FILENAME",
    "Event",
    "InsertResult",
    "MIGRATIONS",
    "Migration",
    "NewObservation",
    "NewSummary",
    "Observation",
    "Prompt",
    "SearchHit",
    "Session",
    "Summary",
    "VectorHit",
    "audit_entries",
    "complete_session",
    "connect",
    "count_events",
    "count_observations",
    "db_path",
    "delete_observation",
    "delete_session",
    "delete_summary",
    "ensure_vector_table",
    "fts_query",
    "get_event",
    "get_observation",
    "get_observations",
    "get_prompts",
    "get_session",
    "get_summary",
    "insert_event",
    "insert_observation",
    "insert_prompt",
    "insert_summary",
    "latest_version",
    "migrate",
    "migration",
    "nearest_observations",
    "observations_missing_vectors",
    "open_reader",
    "open_writer",
    "pending_events",
    "prepare_path",
    "recent_observations",
    "recent_sessions",
    "recent_summaries",
    "record_audit",
    "requeue_processing_events",
    "schema_version",
    "search_observations",
    "search_prompts",
    "search_summaries",
    "session_observations",
    "set_event_status",
    "set_sdk_session_id",
    "start_session",
    "table_counts",
    "upsert_vectors",
    "vector_table_info",
]
