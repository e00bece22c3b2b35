"""Retrieval eval: recall@5, recall@10 and MRR of fts, semantic and hybrid search.

The labelled set is ``bench/eval/dataset.json`` (see its README). For each embedder the
observations go into a fresh database through memlite's own write path
(``insert_observation``), their vectors through ``upsert_vectors``, and every query runs
through ``memlite.storage.search.search`` exactly as the API runs it, filtered to the
query's project, top 10.

    recall@k  share of a query's relevant observations found in the top k, averaged
    MRR       1 / rank of the first relevant observation (0 when none in the top 10)

The queries are split by id parity into a dev half (odd numbers: fusion weights were
chosen on it, ``--tune`` prints the grid; the queries added in issue 14's fifth round are
all dev, see the set's README) and a test half (even numbers: reported, not tuned on).
Everything is deterministic: the same data and model give the same figures.

Usage::

    python -m bench.eval.run                        # every embedder, Markdown to stdout
    python -m bench.eval.run --embedders wordllama  # one
    python -m bench.eval.run --tune                 # the fusion grid on the dev half
    python -m bench.eval.run --write                # ... and update BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import platform
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import apsw
import attrs

from bench.eval import dataset as dataset_module
from memlite import storage
from memlite.embed import load_embedder, observation_text, query_text
from memlite.storage.search import DEFAULT_FUSION, Filters, Fusion, search
from memlite.storage.vectors import ensure_vector_table, upsert_vectors

__all__ = ["Corpus", "Scores", "build_corpus", "evaluate", "main"]

MODES = ("fts", "semantic", "hybrid")
TOP = 10


@attrs.frozen
class Scores:
    recall5: float
    recall10: float
    mrr: float
    queries: int


@attrs.define
class Corpus:
    """One database with the labelled observations (and their vectors from one model)."""

    conn: apsw.Connection
    ids: dict[str, int]  # dataset key -> observation id
    embedder: Any
    query_vectors: dict[str, bytes]
    embed_seconds: float

    def keys_of(self, ids: Iterable[int]) -> list[str]:
        back = {v: k for k, v in self.ids.items()}
        return [back[i] for i in ids if i in back]


def _epoch_ms(iso: str) -> int:
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def build_corpus(data: dict[str, Any], directory: Path, embedder: Any) -> Corpus:
    """Store ``data``'s observations in a new database under ``directory``, embed them
    (and every query) with ``embedder`` (None: full text only)."""
    conn = storage.connect(directory)
    ids: dict[str, int] = {}
    with conn:
        for obs in sorted(data["observations"], key=lambda o: o["created_at"]):
            stored = storage.insert_observation(conn, storage.NewObservation(
                session_id=obs["session"], project=obs["project"], type=obs["type"],
                title=obs["title"], subtitle=obs.get("subtitle", ""),
                narrative=obs.get("narrative", ""), facts=obs.get("facts", ()),
                concepts=obs.get("concepts", ()), files_read=obs.get("files_read", ()),
                files_modified=obs.get("files_modified", ()), at_ms=_epoch_ms(obs["created_at"])))
            ids[obs["key"]] = stored.id
    vectors: dict[str, bytes] = {}
    seconds = 0.0
    if embedder is not None:
        records = sorted(data["observations"], key=lambda o: (o["project"], o["key"]))
        texts = [observation_text(
            title=o["title"], subtitle=o.get("subtitle", ""), narrative=o.get("narrative", ""),
            facts=o.get("facts", ()), concepts=o.get("concepts", ()),
            files=[*o.get("files_modified", ()), *o.get("files_read", ())]) for o in records]
        started = time.perf_counter()
        matrix = embedder.embed(texts)
        query_matrix = embedder.embed([query_text.embedding_query(q["query"])
                                       for q in data["queries"]])
        seconds = time.perf_counter() - started
        with conn:
            ensure_vector_table(conn, embedder.dim, embedder.name)
            upsert_vectors(conn, [(ids[o["key"]], o["project"], row.astype("<f4").tobytes())
                                  for o, row in zip(records, matrix, strict=True)])
        vectors = {q["id"]: row.astype("<f4").tobytes()
                   for q, row in zip(data["queries"], query_matrix, strict=True)}
    return Corpus(conn=conn, ids=ids, embedder=embedder, query_vectors=vectors,
                  embed_seconds=seconds)


def ranked_keys(corpus: Corpus, query: dict[str, Any], mode: str,
                fusion: Fusion = DEFAULT_FUSION) -> list[str]:
    outcome = search(corpus.conn, query["query"], mode=mode,
                     filters=Filters(project=query["project"]),
                     query_vector=corpus.query_vectors.get(query["id"]), limit=TOP,
                     fusion=fusion)
    if mode != "fts" and outcome.mode_used != mode:
        raise RuntimeError(f"{mode} search fell back to {outcome.mode_used}: {outcome.note}")
    return corpus.keys_of(hit.observation.id for hit in outcome.hits)


def evaluate(corpus: Corpus, queries: Sequence[dict[str, Any]], mode: str,
             fusion: Fusion = DEFAULT_FUSION) -> Scores:
    r5 = r10 = mrr = 0.0
    for query in queries:
        found = ranked_keys(corpus, query, mode, fusion)
        relevant = set(query["relevant"])
        r5 += len(relevant & set(found[:5])) / len(relevant)
        r10 += len(relevant & set(found[:10])) / len(relevant)
        mrr += next((1 / rank for rank, key in enumerate(found, 1) if key in relevant), 0.0)
    n = len(queries) or 1
    return Scores(r5 / n, r10 / n, mrr / n, len(queries))


def split(queries: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(dev, test): odd-numbered query ids tune, even-numbered ones report."""
    def number(q: dict[str, Any]) -> int:
        return int("".join(ch for ch in q["id"] if ch.isdigit()) or 0)
    dev = [q for q in queries if number(q) % 2 == 1]
    return dev, [q for q in queries if number(q) % 2 == 0]


def tune(corpus: Corpus, queries: Sequence[dict[str, Any]]) -> list[tuple[Fusion, Scores]]:
    """A few fusion settings on ``queries``, best recall@5 (then MRR) first. The
    calibration proper, on both dev halves (LoCoMo's too), is ``bench.eval.tune``."""
    grid = [attrs.evolve(DEFAULT_FUSION, k=k, fts_weight=fw, coverage_power=cp)
            for k, fw, cp in itertools.product((5.0, 10.0), (0.75, 1.0), (0.0, 1.0))]
    results = [(fusion, evaluate(corpus, queries, "hybrid", fusion)) for fusion in grid]
    return sorted(results, key=lambda item: (-item[1].recall5, -item[1].mrr))


def _row(half: str, name: str, mode: str, s: Scores) -> str:
    return f"| {half} | {name} | {mode} | {s.recall5:.3f} | {s.recall10:.3f} | {s.mrr:.3f} |"


def bm25_ranker(data: dict[str, Any]) -> Any:
    """The plain stdlib BM25 (``bench.eval.bm25``) per project, over the same fields full
    text indexes: the baseline every report prints beside memlite's rankings."""
    from bench.eval.bm25 import BM25

    grouped: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for o in data["observations"]:
        text = " ".join([o["title"], o.get("subtitle", ""), o.get("narrative", ""),
                         *o.get("facts", ()), *o.get("concepts", ()),
                         *o.get("files_read", ()), *o.get("files_modified", ())])
        grouped[o["project"]].append((o["key"], text))
    index = {project: BM25(docs) for project, docs in grouped.items()}
    return lambda query: index[query["project"]].top(query["query"], TOP)


def evaluate_keys(rank: Any, queries: Sequence[dict[str, Any]]) -> Scores:
    """``evaluate`` for a ranker that maps a query to its top keys (the BM25 baseline)."""
    r5 = r10 = mrr = 0.0
    for query in queries:
        found = rank(query)
        relevant = set(query["relevant"])
        r5 += len(relevant & set(found[:5])) / len(relevant)
        r10 += len(relevant & set(found[:10])) / len(relevant)
        mrr += next((1 / rank_ for rank_, key in enumerate(found, 1) if key in relevant), 0.0)
    n = len(queries) or 1
    return Scores(r5 / n, r10 / n, mrr / n, len(queries))


def report(data: dict[str, Any], embedders: Sequence[str], *, do_tune: bool) -> str:
    dev, test = split(data["queries"])
    halves = {"dev": dev, "test": test}
    lines = [
        "## Retrieval (issue 6)",
        "",
        f"Measured {datetime.date.today()} on {platform.node() or 'this machine'} "
        f"({platform.machine()}, Python {platform.python_version()}) by "
        "`python -m bench.eval.run --write`.",
        f"Labelled set `bench/eval/dataset.json`: {len(data['observations'])} observations "
        f"over {len(data['projects'])} projects, {len(data['queries'])} queries "
        f"({len(dev)} dev / {len(test)} test, by id parity); each query searches its own "
        f"project, top {TOP}. `bm25 (stdlib)` is a plain standard-library BM25 over the "
        "same fields, computed in the same run. Only the test half counts; the dev half is "
        f"what ranking was tuned on. Fusion (`memlite.storage.fusion.Fusion`): {DEFAULT_FUSION}.",
        "",
        "| half | embedder | mode | recall@5 | recall@10 | MRR |",
        "|---|---|---|---|---|---|",
    ]
    per_category: dict[str, dict[str, Scores]] = defaultdict(dict)
    categories = sorted({q["category"] for q in test})  # "dated" is dev-only
    tuned: list[str] = []
    rows: dict[str, list[str]] = {"dev": [], "test": []}
    baseline = bm25_ranker(data)
    for half, queries in halves.items():
        rows[half].append(_row(half, "-", "bm25 (stdlib)", evaluate_keys(baseline, queries)))
    for category in categories:
        per_category["bm25 (stdlib)"][category] = evaluate_keys(
            baseline, [q for q in test if q["category"] == category])
    with tempfile.TemporaryDirectory(prefix="memlite-eval-") as tmp:
        fts_corpus = build_corpus(data, Path(tmp) / "fts", None)
        for half, queries in halves.items():
            rows[half].append(_row(half, "-", "fts", evaluate(fts_corpus, queries, "fts")))
        fts_corpus.conn.close()
        for name in embedders:
            embedder = load_embedder(name)
            corpus = build_corpus(data, Path(tmp) / name, embedder)
            for half, queries in halves.items():
                for mode in ("semantic", "hybrid"):
                    rows[half].append(_row(half, name, mode, evaluate(corpus, queries, mode)))
            for category in categories:
                chosen = [q for q in test if q["category"] == category]
                for mode in MODES:
                    label = "fts" if mode == "fts" else f"{name} {mode}"
                    per_category[label][category] = evaluate(corpus, chosen, mode)
            if do_tune:
                tuned.append(f"Fusion grid, {name}, dev half (best 8 by recall@5, and the "
                             "default):")
                grid = tune(corpus, dev)
                for fusion, scores in [*grid[:8], *[g for g in grid if g[0] == DEFAULT_FUSION]]:
                    tuned.append(f"  k={fusion.k:g} fts={fusion.fts_weight:g} "
                                 f"coverage={fusion.coverage_power:g}: r@5 "
                                 f"{scores.recall5:.3f} r@10 {scores.recall10:.3f} "
                                 f"MRR {scores.mrr:.3f}")
            corpus.conn.close()
    lines += rows["dev"] + rows["test"]
    counts = ", ".join(f"{c} {sum(1 for q in test if q['category'] == c)}" for c in categories)
    lines += ["", f"Recall@5 by query category, test half ({counts}):", "",
              "| ranking | " + " | ".join(categories) + " |",
              "|---|" + "---|" * len(categories)]
    for name, scores in per_category.items():
        lines.append(f"| {name} | " + " | ".join(f"{scores[c].recall5:.2f}"
                                                 for c in categories) + " |")
    if tuned:
        lines += ["", "```", *tuned, "```"]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", default="minilm,wordllama",
                        help="comma-separated: minilm, wordllama, ollama")
    parser.add_argument("--tune", action="store_true", help="print the fusion grid (dev)")
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    data = dataset_module.load()
    section = report(data, [e for e in args.embedders.split(",") if e], do_tune=args.tune)
    print(section)
    if args.write:
        from bench.benchmarks_md import write_section

        write_section("## Retrieval (issue 6)", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
