"""Observation vectors in a sqlite-vec ``vec0`` table whose dimension the embedder chooses.

The table is ``observation_vectors(observation_id, project PARTITION KEY, embedding
float[dim] cosine)``. Partitioning by project keeps a KNN inside one project fast (about
4 ms at 100k rows against 80 ms unpartitioned, STACK.md §3). The dimension and the model
name live in ``meta``; vectors from two models are never mixed in one table: a different
model or dimension drops the table and the caller re-embeds every observation.

A trigger created with the table deletes an observation's vector when the observation is
deleted (directly or by a session's cascade), so no path can leave an orphan behind.

Every vector also gets an int8 code in ``observation_vector_codes`` (same transaction),
which the in-memory index of a large project reads (``vector_codes``, ``vector_index``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import apsw
import sqlite_vec

from memlite.storage.records import VectorHit
from memlite.storage.sqlvalue import text_or_none
from memlite.storage.vector_codes import (
    TOMBSTONE_SQL,
    codes_exist,
    create_codes_table,
    write_code,
)

__all__ = [
    "MAX_DIM",
    "VECTOR_TABLE",
    "ensure_vector_table",
    "nearest_observations",
    "observations_missing_vectors",
    "upsert_vectors",
    "vector_table_info",
]

VECTOR_TABLE = "observation_vectors"
MAX_DIM = 8192  # sqlite-vec's own limit for a float vector column

Embedding = bytes | Sequence[float]


def _meta(conn: apsw.Connection, key: str) -> str | None:
    rows = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
    return text_or_none(rows[0][0]) if rows else None


def _set_meta(conn: apsw.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def _table_exists(conn: apsw.Connection) -> bool:
    rows = conn.execute(
        "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", (VECTOR_TABLE,)
    ).fetchall()
    return bool(rows)


def vector_table_info(conn: apsw.Connection) -> tuple[int, str] | None:
    """``(dim, model)`` of the current vector table, or None when there is none."""
    dim, model = _meta(conn, "vector_dim"), _meta(conn, "vector_model")
    if dim is None or model is None or not _table_exists(conn):
        return None
    return int(dim), model


def ensure_vector_table(conn: apsw.Connection, dim: int, model: str, *,
                        recreate: bool = False) -> bool:
    """Make sure the vector table holds ``dim``-sized vectors from ``model``.

    ``recreate`` drops and recreates the table even when it is right (``memlite reindex``).
    Run it inside a transaction (the storage actor does): the drop, the create and the
    ``meta`` update must land together.

    Returns:
        True when the table was created or recreated, i.e. existing observations have no
        vector in it and the embedder should reindex; False when it was already right.

    Raises:
        ValueError: ``dim`` is not an integer in 1..MAX_DIM or ``model`` is empty.
    """
    if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= MAX_DIM:
        raise ValueError(f"vector dimension must be an integer in 1..{MAX_DIM}, not {dim!r}")
    if not model:
        raise ValueError("the embedding model name must not be empty")
    if not recreate and vector_table_info(conn) == (dim, model):
        if not codes_exist(conn):  # a database from before the in-memory index
            create_codes_table(conn, VECTOR_TABLE)
            _create_trigger(conn)
        return False
    conn.execute(f"DROP TRIGGER IF EXISTS {VECTOR_TABLE}_delete")
    conn.execute(f"DROP TABLE IF EXISTS {VECTOR_TABLE}")
    # ``dim`` is interpolated (DDL takes no parameters); it was checked to be an int above.
    conn.execute(
        f"CREATE VIRTUAL TABLE {VECTOR_TABLE} USING vec0 ("
        " observation_id INTEGER PRIMARY KEY,"
        " project TEXT PARTITION KEY,"
        f" embedding float[{dim}] distance_metric=cosine)"
    )
    create_codes_table(conn, VECTOR_TABLE)
    _create_trigger(conn)
    _set_meta(conn, "vector_dim", str(dim))
    _set_meta(conn, "vector_model", model)
    return True


def _create_trigger(conn: apsw.Connection) -> None:
    conn.execute(f"DROP TRIGGER IF EXISTS {VECTOR_TABLE}_delete")
    conn.execute(
        f"CREATE TRIGGER {VECTOR_TABLE}_delete AFTER DELETE ON observations BEGIN"
        f" DELETE FROM {VECTOR_TABLE} WHERE observation_id = old.id; {TOMBSTONE_SQL} END"
    )


def _blob(embedding: Embedding) -> bytes:
    if isinstance(embedding, bytes | bytearray | memoryview):
        return bytes(embedding)
    packed: bytes = sqlite_vec.serialize_float32(list(embedding))  # untyped package
    return packed


def upsert_vectors(
    conn: apsw.Connection,
    rows: Iterable[tuple[int, str, Embedding] | tuple[int, str, Embedding, str]],
) -> int:
    """Store ``(observation_id, project, embedding[, content_hash])`` rows, replacing
    existing vectors. Returns the number stored.

    A row is stored only if its observation still exists and, when ``content_hash`` is
    given, is still the observation that was embedded: the embedder works off the write
    path, so an observation can be deleted while its batch is embedded, and its id (a
    plain rowid) can be reused by the next one; neither may end up with that vector.

    Insert rows grouped by project where possible: vec0 writes one partition at a time
    and interleaved partitions are ~10x slower (STACK.md §3).
    """
    count = 0
    for row in rows:
        observation_id, project, embedding = row[0], row[1], row[2]
        expected = row[3] if len(row) > 3 else None
        current = conn.execute("SELECT content_hash FROM observations WHERE id = ?",
                               (observation_id,)).fetchall()
        if not current or (expected is not None and current[0][0] != expected):
            continue
        # vec0 has no UPSERT; delete-then-insert inside the caller's transaction.
        conn.execute(
            f"DELETE FROM {VECTOR_TABLE} WHERE observation_id = ?", (observation_id,)
        )
        conn.execute(
            f"INSERT INTO {VECTOR_TABLE} (observation_id, project, embedding) VALUES (?, ?, ?)",
            (observation_id, project, _blob(embedding)),
        )
        write_code(conn, observation_id, project, embedding)
        count += 1
    return count


def nearest_observations(
    conn: apsw.Connection, embedding: Embedding, *, project: str, k: int = 10
) -> list[VectorHit]:
    """The ``k`` observations of ``project`` closest to ``embedding``, closest first."""
    rows = conn.execute(
        f"SELECT observation_id, distance FROM {VECTOR_TABLE} "
        "WHERE embedding MATCH ? AND k = ? AND project = ? ORDER BY distance",
        (_blob(embedding), k, project),
    )
    return [VectorHit(int(oid), float(distance)) for oid, distance in rows]


def observations_missing_vectors(
    conn: apsw.Connection, *, limit: int = 256
) -> list[tuple[int, str]]:
    """``(observation_id, project)`` of observations with no vector yet, grouped by project."""
    return [
        (int(oid), project)
        for oid, project in conn.execute(
            f"SELECT id, project FROM observations WHERE id NOT IN "
            f"(SELECT observation_id FROM {VECTOR_TABLE}) ORDER BY project, id LIMIT ?",
            (limit,),
        )
    ]
