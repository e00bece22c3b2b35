"""The dev-only tuning run (``bench.eval.dev``) and the dev-only queries of issue 14's
fifth round: the test half of the own eval is never handed to the ranking while tuning,
and the added queries all land in the dev half. No embedder, no search: cheap."""

from __future__ import annotations

import pytest

from bench.eval import dataset
from bench.eval import dev as dev_run
from bench.eval import run as own


class _Stop(Exception):
    pass


def test_the_dev_run_builds_only_dev_queries(monkeypatch):
    seen: list[dict] = []

    def build_corpus(data, directory, embedder):
        seen.extend(data["queries"])
        raise _Stop

    monkeypatch.setattr(own, "build_corpus", build_corpus)
    monkeypatch.setattr(dev_run, "load_embedder", lambda name: None)
    with pytest.raises(_Stop):
        dev_run.main(["--no-locomo"])
    everything = dataset.load()["queries"]
    dev, test = own.split(everything)
    assert seen and [q["id"] for q in seen] == [q["id"] for q in dev]
    assert not {q["id"] for q in seen} & {q["id"] for q in test}


def test_the_round_5_queries_are_all_dev_and_the_test_half_is_unchanged():
    queries = dataset.load()["queries"]
    dev, test = own.split(queries)
    added = [q for q in queries if int(q["id"][1:]) > 131]
    assert len(added) >= 40
    assert all(int(q["id"][1:]) % 2 == 1 for q in added)
    assert len(test) == 65 and all(int(q["id"][1:]) <= 131 for q in test)
    assert len(dev) == 66 + len(added)
