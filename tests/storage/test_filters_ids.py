"""The id lists of the search's reads (``filters.id_list``) and the supersession check
of the in-memory full-text list (``filters.superseded_among``)."""

from __future__ import annotations

import pytest

from memlite.storage.filters import BOUND_IDS, id_list, superseded_among


@pytest.mark.parametrize("count", [1, 2, 3, 5, 20, 33, BOUND_IDS])
def test_a_short_list_is_bound_padded_to_a_power_of_two(db, count):
    ids = list(range(1, count + 1))
    listed, params = id_list(ids)
    assert params[:count] == ids and set(params[count:]) <= {1}
    assert len(params) & (len(params) - 1) == 0 and len(params) < 2 * count + 1
    assert listed.count("?") == len(params)
    got = db.execute(f"SELECT value FROM json_each('[0,1,2,99999]') WHERE value IN {listed}",
                     params).fetchall()
    assert sorted(r[0] for r in got) == ([1, 2] if count > 1 else [1])


@pytest.mark.parametrize("ids", [[], list(range(BOUND_IDS + 1))])
def test_an_empty_or_long_list_goes_as_json(ids):
    listed, params = id_list(ids)
    assert listed == "(SELECT value FROM json_each(?))"
    assert params == ["[" + ",".join(map(str, ids)) + "]"]


def test_only_superseded_ids_are_named(db, add_observation):
    ids = [add_observation(title=f"decision {i}") for i in range(BOUND_IDS + 6)]
    with db:
        db.execute("UPDATE observations SET superseded_by = ? WHERE id IN (?, ?)",
                   (ids[-1], ids[0], ids[BOUND_IDS + 2]))
    assert superseded_among(db, ids) == {ids[0], ids[BOUND_IDS + 2]}  # as JSON
    assert superseded_among(db, [ids[0], ids[1], 999_999]) == {ids[0]}  # bound
    assert superseded_among(db, [ids[1], 999_999]) == set()
    assert superseded_among(db, []) == set()
    plan = db.execute("EXPLAIN QUERY PLAN SELECT id FROM observations INDEXED BY "
                      "observations_superseded_ids WHERE superseded_by IS NOT NULL "
                      "AND id IN (1, 2)").fetchall()
    assert "observations_superseded_ids" in str(plan)
