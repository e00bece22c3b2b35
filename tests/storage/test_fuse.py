"""``fuse``: the weighted reciprocal-rank fusion of the search's lists (full text,
vectors, files), with its recency tie-break, depth and ``k``; a pure function, no
database."""

from __future__ import annotations

import pytest

from memlite.storage.search import Fusion, fuse

PLAIN = Fusion(k=60.0, recency_weight=0.0)


def test_fuse_sums_reciprocal_ranks():
    fused = dict(fuse([1, 2, 3], [3, 4], fusion=PLAIN))
    k = 60.0
    assert fused[1] == pytest.approx(1 / (k + 1))
    assert fused[3] == pytest.approx(1 / (k + 3) + 1 / (k + 1))
    assert fused[4] == pytest.approx(1 / (k + 2))
    assert [oid for oid, _ in fuse([1, 2, 3], [3, 4], fusion=PLAIN)] == [3, 1, 2, 4]


def test_fuse_uses_the_default_k():
    k = Fusion().k
    assert dict(fuse([1], []))[1] == pytest.approx(Fusion().fts_weight / (k + 1))


def test_fuse_a_document_in_both_lists_beats_the_top_of_one():
    assert fuse([10, 20], [30, 20])[0][0] == 20


def test_fuse_weights():
    only_vectors = fuse([1], [2], fusion=Fusion(k=60.0, fts_weight=0.0, recency_weight=0.0))
    assert only_vectors[0] == (2, pytest.approx(1 / 61))
    assert dict(only_vectors)[1] == 0.0
    heavy_fts = fuse([1], [2], fusion=Fusion(k=60.0, fts_weight=2.0, vector_weight=1.0))
    assert [oid for oid, _ in heavy_fts] == [1, 2]
    assert heavy_fts[0][1] == pytest.approx(2 / 61)


def test_fuse_file_lists_weigh_the_asked_role_above_the_other():
    fusion = Fusion(k=60.0, file_weight=2.0, other_role_weight=0.25, recency_weight=0.0)
    fused = dict(fuse([1], [2], fusion=fusion, file_ids=[3], other_file_ids=[4]))
    assert fused[3] == pytest.approx(2 / 61)
    assert fused[4] == pytest.approx(0.5 / 61)
    assert [oid for oid, _ in fuse([1], [2], fusion=fusion, file_ids=[3], other_file_ids=[4])
            ] == [3, 1, 2, 4]


def test_fuse_depth_cuts_each_list():
    fused = dict(fuse([1, 2, 3], [4, 5, 6], fusion=Fusion(depth=2)))
    assert set(fused) == {1, 2, 4, 5}


def test_fuse_ties_go_to_the_lower_id():
    assert [oid for oid, _ in fuse([9, 7], [7, 9], fusion=PLAIN)] == [7, 9]
    assert [oid for oid, _ in fuse([5], [3], fusion=PLAIN)] == [3, 5]
    assert fuse([], []) == []


def test_fuse_recency_breaks_a_tie_for_the_newer_and_adds_no_new_ids():
    fusion = Fusion(k=60.0, recency_weight=0.1)
    fused = fuse([5], [3], fusion=fusion, newest_first=[5, 3, 99])
    assert [oid for oid, _ in fused] == [5, 3]  # 99 was in neither list
    assert dict(fused)[5] == pytest.approx(1 / 61 + 0.1 / 61)
    assert dict(fused)[3] == pytest.approx(1 / 61 + 0.1 / 62)
    # Light: it never lifts a one-list hit over a two-list hit.
    assert fuse([1, 2], [2, 1], fusion=fusion, newest_first=[2, 1])[0][0] == 2
    assert fuse([1, 7], [1, 8], fusion=fusion, newest_first=[8, 7, 1])[0][0] == 1
    off = fuse([5], [3], fusion=PLAIN, newest_first=[5, 3])
    assert [oid for oid, _ in off] == [3, 5]


def test_fuse_k_flattens_or_sharpens_ranks():
    sharp = dict(fuse([1, 2], [], fusion=Fusion(k=0.0, recency_weight=0.0)))
    assert sharp[1] == pytest.approx(1.0) and sharp[2] == pytest.approx(0.5)
