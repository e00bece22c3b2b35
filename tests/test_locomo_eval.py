"""LoCoMo (a public set nobody here wrote) on its test half, through memlite's search: the
bars of issue 14, in CI. Only the five test conversations are embedded (~1,300 facts and
~640 questions) to keep it to a minute or two; the dev half is for tuning only
(``python -m bench.eval.tune``), the full report is ``python -m bench.eval.locomo``."""

from __future__ import annotations

import pytest

from bench.eval import locomo
from memlite.embed import load_embedder

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def half(tmp_path_factory):
    items, questions = locomo.load()
    _, test = locomo.split([it.conversation for it in items])
    items = [it for it in items if it.conversation in test]
    questions = [q for q in questions if q.conversation in test]
    embedder = load_embedder("auto")  # the default: what a user gets
    corpus = locomo.build(items, questions, tmp_path_factory.mktemp("locomo"), embedder)
    embedder.close()
    yield items, questions, corpus
    corpus.conn.close()


def scores(rank, questions):
    by_category = {c: locomo.score(rank, [q for q in questions if q.category == c])
                   for c in locomo.CATEGORIES}
    return locomo.score(rank, questions), by_category


def test_the_split_keeps_test_conversations_apart():
    items, questions = locomo.load()
    dev, test = locomo.split([it.conversation for it in items])
    assert dev and test and not dev & test and len(dev | test) == 10
    assert len(questions) == 1302  # categories 1-4 with a relevant observation


def test_default_hybrid_meets_the_bar_on_the_test_half(half):
    items, questions, corpus = half
    hybrid, hybrid_by = scores(locomo.memlite_ranker(corpus, "hybrid"), questions)
    bm25, bm25_by = scores(locomo.bm25_ranker(items), questions)
    fts, _ = scores(locomo.memlite_ranker(corpus, "fts"), questions)
    semantic, _ = scores(locomo.memlite_ranker(corpus, "semantic"), questions)
    # The bar; measured 0.808 (BENCHMARKS.md), 0.778 before the date intent, the
    # de-duplication of near-identical matches and the same-session follow-up slot.
    assert hybrid.hit5 >= 0.78, (hybrid, bm25)
    for category, s in hybrid_by.items():
        assert s.hit5 > bm25_by[category].hit5, (category, s, bm25_by[category])
    # Fusion never costs what either list finds alone.
    assert hybrid.hit5 >= max(fts.hit5, semantic.hit5), (hybrid, fts, semantic)
    assert hybrid.recall5 >= max(fts.recall5, semantic.recall5), (hybrid, fts, semantic)
