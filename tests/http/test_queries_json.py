"""The read routes' records as JSON: built field by field (no ``attrs.asdict`` walk), the
same dicts, keys in the same order, for every record type a search returns."""

from __future__ import annotations

import json

import attrs

from memlite.http import queries
from memlite.storage.records import Observation, Prompt, SearchHit, Summary


def _observation() -> Observation:
    return Observation(
        id=7, session_id="s-1", project="/p/alpha", branch=None, commit_sha="abc123",
        type="bugfix", title="parser crash", subtitle="empty input", narrative="fixed it",
        facts=("one", "two"), concepts=("parser",), files_read=("src/a.py",),
        files_modified=("src/b.py", "src/c.py"), source_event_ids=(3, 4), superseded_by=None,
        backend="rules", content_hash="h", created_at="2026-12-01T00:00:00Z",
        created_at_epoch=1_796_000_000_000)


def test_records_become_the_dicts_attrs_would_make():
    summary = Summary(id=1, session_id="s-1", project="/p", request="r", investigated="i",
                      learned="l", completed="c", next_steps="n", created_at="t",
                      created_at_epoch=5)
    prompt = Prompt(id=2, session_id="s-1", prompt_number=1, prompt_text="why",
                    created_at="t", created_at_epoch=6)
    for record in (_observation(), summary, prompt):
        body = queries._flat(record)
        assert body == attrs.asdict(record)
        assert list(body) == [f.name for f in attrs.fields(type(record))]
        assert json.dumps(body) == json.dumps(attrs.asdict(record))


def test_search_hits_carry_every_field_and_their_scores():
    summary = Summary(id=1, session_id="s-1", project="/p", request="r", investigated="i",
                      learned="l", completed="c", next_steps="n", created_at="t",
                      created_at_epoch=5)
    body = queries._hit_json(SearchHit(summary, -1.2500004))
    assert body == {**attrs.asdict(summary), "score": -1.25}
    obs = _observation()
    assert queries.observation_json(obs) is not queries.observation_json(obs)  # fresh dicts
