"""Compact int8 copies of the observation vectors, with a change sequence, for the
in-memory index (``memlite.storage.vector_index``).

sqlite-vec's KNN is exact: it reads every float vector of the partition, 58 ms for one
project of 100,000 observations. The in-memory index answers in a few ms from sign bits,
then rescores its candidates exactly; it needs two things vec0 does not give:

* the vectors of a few hundred candidates, fast (a vec0 lookup by id reads a whole chunk
  per row: ~0.5 ms each); here one int8 row of ``dim`` bytes per observation, read by
  primary key. Cosine is scale-free, so int8 with a per-vector scale rescoring differs
  from the float cosine by about 1e-3;
* what changed since the index was built: ``seq`` grows with every write (an upsert sets
  a new code and seq; a deleted observation leaves a tombstone, code NULL, with a new
  seq), so a reader refreshes with ``seq > last`` instead of rereading the project.

``epoch`` (in ``meta``) is a new random token each time the table is created, so an index
built on a dropped table (model change, ``memlite reindex``) is never reused.

The table is written in the same transaction as vec0 (``vectors.upsert_vectors``, the
delete trigger), so the two never disagree. Tombstones stay (about 30 bytes each) until
the vector table is recreated.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import apsw
import numpy as np

from memlite.storage.sqlvalue import blob as blob_value
from memlite.storage.sqlvalue import text_or_none

__all__ = ["CODES_TABLE", "codes_epoch", "create_codes_table", "quantize", "write_code"]

CODES_TABLE = "observation_vector_codes"
EPOCH_KEY = "vector_codes_epoch"


def quantize(vector: bytes | Sequence[float]) -> bytes:
    """Symmetric int8 code of a float32 vector (its own scale: max |x| maps to 127)."""
    if isinstance(vector, bytes | bytearray | memoryview):
        x = np.frombuffer(vector, dtype=np.float32)
    else:
        x = np.asarray(vector, dtype=np.float32)
    peak = float(np.max(np.abs(x))) if x.size else 0.0
    if not np.isfinite(peak) or peak == 0.0:
        return np.zeros(x.shape, dtype=np.int8).tobytes()
    code: bytes = np.clip(np.rint(x * (127.0 / peak)), -127, 127).astype(np.int8).tobytes()
    return code


def create_codes_table(conn: apsw.Connection, vector_table: str) -> None:
    """(Re)create the codes table, fill it from ``vector_table`` and set a new epoch.

    Run inside the caller's transaction, right after the vec0 table was (re)created or
    found without codes (a database from before this table existed)."""
    conn.execute(f"DROP TABLE IF EXISTS {CODES_TABLE}")
    conn.execute(
        f"CREATE TABLE {CODES_TABLE} (observation_id INTEGER PRIMARY KEY,"
        " project TEXT NOT NULL, seq INTEGER NOT NULL, code BLOB)")
    conn.execute(f"CREATE UNIQUE INDEX {CODES_TABLE}_seq ON {CODES_TABLE} (seq)")
    conn.execute(f"CREATE INDEX {CODES_TABLE}_project ON {CODES_TABLE} (project, seq)")
    seq = 0
    rows = conn.execute(
        f"SELECT observation_id, project, embedding FROM {vector_table}").fetchall()
    for oid, project, embedding in rows:
        seq += 1
        conn.execute(f"INSERT INTO {CODES_TABLE} (observation_id, project, seq, code)"
                     " VALUES (?, ?, ?, ?)", (oid, project, seq, quantize(blob_value(embedding))))
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (EPOCH_KEY, secrets.token_hex(8)))


def codes_exist(conn: apsw.Connection) -> bool:
    return bool(conn.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?",
                             (CODES_TABLE,)).fetchall())


def codes_epoch(conn: apsw.Connection) -> str | None:
    """The current codes table's epoch, or None when there is no codes table."""
    rows = conn.execute("SELECT value FROM meta WHERE key = ?", (EPOCH_KEY,)).fetchall()
    return text_or_none(rows[0][0]) if rows else None


NEXT_SEQ = f"(SELECT COALESCE(MAX(seq), 0) + 1 FROM {CODES_TABLE})"

TOMBSTONE_SQL = (f"UPDATE {CODES_TABLE} SET code = NULL, seq = {NEXT_SEQ} "
                 "WHERE observation_id = old.id;")
"""The delete trigger's statement: the index drops the observation at its next refresh."""


def write_code(conn: apsw.Connection, observation_id: int, project: str,
               vector: bytes | Sequence[float]) -> None:
    """Store the code of one observation's vector with a new seq (upsert)."""
    conn.execute(
        f"INSERT INTO {CODES_TABLE} (observation_id, project, seq, code) "
        f"VALUES (?, ?, {NEXT_SEQ}, ?) ON CONFLICT (observation_id) DO UPDATE SET "
        "project = excluded.project, seq = excluded.seq, code = excluded.code",
        (observation_id, project, quantize(vector)))
