"""storage/sqlvalue.py: a SQLite value is narrowed to the type its query promises, and a
database that breaks the promise fails there, naming the value (issue 17: typed storage)."""

from __future__ import annotations

import apsw
import pytest

from memlite.storage.sqlvalue import (
    blob,
    blob_or_none,
    integer,
    integer_or_none,
    real,
    text_or_none,
)


def test_values_of_the_promised_type_pass_through():
    conn = apsw.Connection(":memory:")
    [(count, text, nothing, data, score)] = conn.execute(
        "SELECT count(*), 'a', NULL, x'0102', 0.5 FROM (SELECT 1)").fetchall()
    assert integer(count) == 1 and integer_or_none(nothing) is None
    assert real(score) == 0.5 and real(count) == 1.0 and isinstance(real(count), float)
    assert blob_or_none(nothing) is None and blob_or_none(data) == b"\x01\x02"
    assert text_or_none(text) == "a" and text_or_none(nothing) is None
    assert blob(data) == b"\x01\x02"


@pytest.mark.parametrize(("narrow", "value", "message"), [
    (integer, "12", "expected an integer from SQLite, got '12'"),
    (integer, None, "expected an integer from SQLite, got None"),
    (integer, 1.5, "expected an integer from SQLite, got 1.5"),
    (text_or_none, 3, "expected text from SQLite, got 3"),
    (blob, "x", "expected a blob from SQLite, got str"),
    (real, "0.5", "expected a number from SQLite, got '0.5'"),
    (integer_or_none, "1", "expected an integer from SQLite, got '1'"),
])
def test_a_broken_promise_fails_naming_the_value(narrow, value, message):
    with pytest.raises(TypeError, match=message):
        narrow(value)
