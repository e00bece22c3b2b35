"""Reading records: the JSON list columns' decoder (``records.decode_list``) and
``reads.to_record``, which every search runs 20-60 times."""

from __future__ import annotations

import json

import pytest

from memlite.storage import records
from memlite.storage.reads import columns, to_record
from memlite.storage.records import Observation, decode_list


@pytest.mark.parametrize("text, expected", [
    (None, ()), ("", ()), ("[]", ()), ('["a"]', ("a",)),
    ('["a", "b c", "é🦀"]', ("a", "b c", "é🦀")),
    ("[1, 2.5, true]", ("1", "2.5", "True")), ("null", ()), ('{"a": 1}', ()), ('"text"', ()),
    (' ["a"] ', ("a",)), ('[\n"a"\n]', ("a",)),
    # What orjson reads otherwise or refuses goes through json.loads: the same answers.
    ("[123456789012345678901234567890]", ("123456789012345678901234567890",)),
    ('["\\ud800"]', ("\ud800",)), ("[NaN]", ("nan",)),
    ('["a", ["b"], null]', ("a", "['b']", "None")),
    ('["\\u00e9\\n"]', ("é\n",)), ("5", ()),
])
def test_decode_list_answers_as_json_loads_does(text, expected):
    assert decode_list(text) == expected


@pytest.mark.parametrize("text", ['["a"] trailing', '["a",', "[", "nope"])
def test_decode_list_still_refuses_what_json_loads_refuses(text):
    with pytest.raises(json.JSONDecodeError):
        decode_list(text)


def test_a_well_formed_array_of_strings_skips_json_loads(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("json.loads called")

    monkeypatch.setattr(records.json, "loads", refuse)
    assert decode_list('["src/a.py", "src/b.py"]') == ("src/a.py", "src/b.py")
    assert decode_list("[]") == ()


def test_to_record_builds_the_same_observation_from_a_row():
    names = columns(Observation).split(", ")
    row = {name: None for name in names}
    row.update(id=7, session_id="s", project="/p", type="bugfix", title="t", subtitle="",
               narrative="n", facts='["f1", "f2"]', concepts="[]", files_read='["a.py"]',
               files_modified="[]", source_event_ids="[3, 4]", backend="rules",
               content_hash="h", created_at="2026-01-01T00:00:00Z", created_at_epoch=1)
    obs = to_record(Observation, [row[name] for name in names])
    assert obs.facts == ("f1", "f2") and obs.concepts == () and obs.files_read == ("a.py",)
    assert obs.source_event_ids == (3, 4) and obs.id == 7
    row["source_event_ids"] = "[]"
    assert to_record(Observation, [row[name] for name in names]).source_event_ids == ()
