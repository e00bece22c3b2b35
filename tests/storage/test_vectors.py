"""The sqlite-vec table: created per model and dimension, never mixing two spaces."""

from __future__ import annotations

import pytest
import sqlite_vec

from memlite import storage


def unit(dim: int, hot: int) -> list[float]:
    return [1.0 if i == hot else 0.0 for i in range(dim)]


def vector_count(conn) -> int:
    return conn.execute("SELECT count(*) FROM observation_vectors").fetchall()[0][0]


def test_create_then_same_model_is_a_no_op(db):
    assert storage.vector_table_info(db) is None
    assert storage.ensure_vector_table(db, 4, "wordllama-256") is True
    assert storage.vector_table_info(db) == (4, "wordllama-256")
    assert storage.ensure_vector_table(db, 4, "wordllama-256") is False


@pytest.mark.parametrize("change", [(8, "m"), (4, "other-model")], ids=["dim", "model"])
def test_a_new_dimension_or_model_recreates_the_table_empty(db, add_observation, change):
    storage.ensure_vector_table(db, 4, "m")
    obs = add_observation()
    storage.upsert_vectors(db, [(obs, "/repo/a", unit(4, 0))])
    assert storage.ensure_vector_table(db, *change) is True  # reindex needed
    assert storage.vector_table_info(db) == change
    assert vector_count(db) == 0
    assert storage.observations_missing_vectors(db) == [(obs, "/repo/a")]
    dim = change[0]
    storage.upsert_vectors(db, [(obs, "/repo/a", unit(dim, 1))])
    (hit,) = storage.nearest_observations(db, unit(dim, 1), project="/repo/a")
    assert hit.observation_id == obs


def test_recreated_when_the_table_went_missing(db):
    storage.ensure_vector_table(db, 4, "m")
    db.execute("DROP TABLE observation_vectors")
    assert storage.ensure_vector_table(db, 4, "m") is True


def test_knn_is_per_project_and_ordered(db, add_observation):
    storage.ensure_vector_table(db, 4, "m")
    a1, a2 = add_observation(title="a1"), add_observation(title="a2")
    b1 = add_observation(title="b1", project="/repo/b")
    storage.upsert_vectors(db, [
        (a1, "/repo/a", unit(4, 0)),
        (a2, "/repo/a", [0.6, 0.8, 0.0, 0.0]),
        (b1, "/repo/b", sqlite_vec.serialize_float32(unit(4, 0))),  # bytes work too
    ])
    hits = storage.nearest_observations(db, unit(4, 0), project="/repo/a", k=5)
    assert [h.observation_id for h in hits] == [a1, a2]
    assert hits[0].distance == pytest.approx(0.0, abs=1e-6)
    assert hits[1].distance == pytest.approx(0.4, abs=1e-6)  # cosine distance
    storage.upsert_vectors(db, [(a2, "/repo/a", unit(4, 0))])  # replace, not duplicate
    assert vector_count(db) == 3


def test_deleting_observations_deletes_their_vectors(db, add_observation):
    storage.ensure_vector_table(db, 4, "m")
    obs = [add_observation(title=f"o{i}") for i in range(3)]
    storage.upsert_vectors(db, [(o, "/repo/a", unit(4, i)) for i, o in enumerate(obs)])
    storage.delete_observation(db, obs[0], actor="test")
    assert vector_count(db) == 2
    storage.delete_session(db, "s1", actor="test")  # cascade reaches the vectors too
    assert vector_count(db) == 0


def test_wrong_dimension_is_refused(db):
    with pytest.raises(ValueError, match="dimension"):
        storage.ensure_vector_table(db, 0, "m")
    with pytest.raises(ValueError, match="dimension"):
        storage.ensure_vector_table(db, "384); DROP TABLE events; --", "m")
    with pytest.raises(ValueError, match="model"):
        storage.ensure_vector_table(db, 4, "")
    assert storage.vector_table_info(db) is None
