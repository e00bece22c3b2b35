"""The search answers' lean reads (``reads.observation_json_texts``,
``reads.observation_index_rows`` and ``reads.observation_dicts``, used by
``memlite.http.queries``) give what reading the records gives: the same values, the same
compact index entries, and one token count (``reads.TOKENS``: 4 bytes of the stored text
a token) in both answers."""

from __future__ import annotations

import json

import attrs

from memlite.http import queries
from memlite.storage import reads
from memlite.storage.filters import Filters
from memlite.storage.records import Observation


def _stored(db, add_observation) -> list[int]:
    ids = [
        add_observation(title="parser crash", subtitle="on empty input",
                        narrative="the parser fell over " * 20, facts=["one", "two three"],
                        concepts=["parser"], files_read=["src/a.py", "src/b.py"],
                        files_modified=["src/b.py"]),
        add_observation(title="café parser notes 🦀", narrative="naïve résumé\x00after a NUL",
                        facts=["日本語の事実"], files_modified=[f"f{i}.py" for i in range(8)]),
        add_observation(title="parser with nothing else"),
        add_observation(title="parser again", facts=["x"], concepts=["y"]),
    ]
    with db:  # a list written by other code: a number and a nested list among the strings
        db.execute("UPDATE observations SET facts = '[12, \"twelve\", [1, 2]]' WHERE id = ?",
                   (ids[3],))
    return ids


def _tokens(db, oid: int) -> int:
    """What the full record costs, counted here in Python from the stored columns: their
    UTF-8 bytes (the NUL, the accents, the emoji and the Japanese included; the lists as
    stored, the one written by other code too) over 4, rounded up."""
    row = db.execute("SELECT title, subtitle, narrative, facts, concepts, files_read, "
                     "files_modified FROM observations WHERE id = ?", (oid,)).fetchall()[0]
    return max(1, -(-sum(len(text.encode("utf-8")) for text in row) // 4))


def _listed(value):
    """A record's value as JSON gives it back (a tuple is a list)."""
    return list(value) if isinstance(value, tuple) else value


def test_full_dicts_are_the_records_own(db, add_observation):
    ids = _stored(db, add_observation)
    lean = reads.observation_dicts(db, [*ids, 999_999])
    assert sorted(lean) == sorted(ids)  # a missing id is left out
    for obs in reads.get_observations(db, ids):
        assert lean[obs.id] == attrs.asdict(obs)
        assert list(lean[obs.id]) == [f.name for f in attrs.fields(Observation)]


def test_sqlites_json_of_a_record_is_the_records_own(db, add_observation):
    ids = _stored(db, add_observation)
    texts = reads.observation_json_texts(db, [*ids, 999_999])
    assert sorted(texts) == sorted(ids)
    for obs in reads.get_observations(db, ids):
        written = json.loads(texts[obs.id])
        assert list(written) == sorted(written)  # keys sorted, as the API writes them
        expected = {name: _listed(value) for name, value in attrs.asdict(obs).items()}
        if obs.id == ids[3]:  # the list other code wrote: as stored, not made strings
            assert written["facts"] == [12, "twelve", [1, 2]]
            expected["facts"] = written["facts"]
        assert written == {**expected, "tokens": _tokens(db, obs.id)}


def test_a_record_of_many_ids_reads_them_all(db, add_observation):
    """Past ``filters.BOUND_IDS`` ids the list goes as JSON: the same records."""
    ids = [add_observation(title=f"note {i}") for i in range(70)]
    asked = [*ids, 999_999, ids[3]]  # one missing, one twice
    assert sorted(reads.observation_dicts(db, asked)) == sorted(ids)
    assert sorted(reads.observation_dicts(db, asked[:9])) == sorted(ids[:9])
    assert [obs.id for obs in reads.get_observations(db, asked)] == [*ids, ids[3]]


def test_index_rows_hold_the_records_lengths_and_files(db, add_observation):
    ids = _stored(db, add_observation)
    rows = reads.observation_index_rows(db, [*ids, 999_999])
    assert sorted(rows) == sorted(ids)
    for obs in reads.get_observations(db, ids):
        created_at, kind, title, project, session_id, tokens, read, modified = rows[obs.id]
        assert (created_at, kind, title, project, session_id) == (
            obs.created_at, obs.type, obs.title, obs.project, obs.session_id)
        assert (read, modified) == (obs.files_read, obs.files_modified)
        assert tokens == _tokens(db, obs.id)


def test_search_and_index_answers_are_what_the_records_give(db, add_observation):
    ids = _stored(db, add_observation)
    by_id = {obs.id: obs for obs in reads.get_observations(db, ids)}
    args = {"mode": "fts", "filters": Filters(), "limit": 20, "vector": None}
    searched = [hit.value() for hit in queries.search(db, "parser", **args)["observations"]]
    indexed = queries.index(db, "parser", **args)["results"]
    assert sorted(hit["id"] for hit in searched) == sorted(ids)
    assert [hit["id"] for hit in indexed] == [hit["id"] for hit in searched]
    for hit, entry in zip(searched, indexed, strict=True):
        obs = by_id[hit["id"]]
        record = {name: _listed(value) for name, value in attrs.asdict(obs).items()}
        if obs.id == ids[3]:  # the list other code wrote, as stored
            record["facts"] = [12, "twelve", [1, 2]]
        assert {k: v for k, v in hit.items()
                if k not in ("score", "tokens", "fts_rank", "vector_rank")} == record
        assert isinstance(hit["score"], float) and hit["fts_rank"] >= 1
        assert hit["vector_rank"] is None
        assert hit["tokens"] == entry["tokens"] == _tokens(db, obs.id)
        assert entry == {"id": obs.id, "date": obs.created_at, "type": obs.type,
                         "title": obs.title, "project": obs.project,
                         "session_id": obs.session_id, "tokens": _tokens(db, obs.id),
                         "files": list(dict.fromkeys((*obs.files_modified,
                                                      *obs.files_read)))[:5],
                         "score": hit["score"]}
