"""Typed reads of SQLite values.

apsw types every column value as ``SQLiteValue`` (None, int, float, bytes or str): which
one it is, the SQL knows (``count(*)`` is an integer, ``meta.value`` text...), not the
type checker. These narrow a value to the type its query promises, and raise
``TypeError`` naming the value when a database breaks that promise, rather than let a
wrong type travel on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apsw import SQLiteValue

__all__ = ["blob", "blob_or_none", "integer", "integer_or_none", "real", "text_or_none"]


def integer(value: SQLiteValue) -> int:
    """An INTEGER value (``count(*)``, a rowid, a ``PRAGMA`` number)."""
    if isinstance(value, int):
        return value
    raise TypeError(f"expected an integer from SQLite, got {value!r}")


def integer_or_none(value: SQLiteValue) -> int | None:
    """An INTEGER value that may be NULL (``MAX(...)`` over no rows)."""
    return None if value is None else integer(value)


def real(value: SQLiteValue) -> float:
    """A REAL value (a ``bm25`` score, a vector distance); an INTEGER one is a number too."""
    if isinstance(value, float):
        return value
    if isinstance(value, int):
        return float(value)
    raise TypeError(f"expected a number from SQLite, got {value!r}")


def text_or_none(value: SQLiteValue) -> str | None:
    """A TEXT value that may be NULL."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"expected text from SQLite, got {value!r}")


def blob(value: SQLiteValue) -> bytes:
    """A BLOB value."""
    if isinstance(value, bytes):
        return value
    raise TypeError(f"expected a blob from SQLite, got {type(value).__name__}")


def blob_or_none(value: SQLiteValue) -> bytes | None:
    """A BLOB value that may be NULL."""
    return None if value is None else blob(value)
