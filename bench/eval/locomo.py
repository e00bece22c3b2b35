"""LoCoMo retrieval bench: memlite's real search engine on a public set nobody here wrote.

LoCoMo (Maharana et al., ACL 2024; data and licence in ``bench/eval/locomo_data``) holds 10
long conversations. The memory items are each session's ``observation`` facts, stored as
``"<speaker>: <fact>"`` observations through ``storage.insert_observation`` (one project
per conversation, dated by their session); the queries are the ``question``s of categories
1-4 (multi-hop, temporal, open-domain, single-hop); an item is relevant when one of its
dialog ids is in the question's ``evidence``. Questions with no relevant item (their
evidence has no observation) are left out, as in the baselines of the data's README.

Every query runs through ``memlite.storage.search.search`` filtered to its conversation's
project, top 10, in modes fts, semantic and hybrid; ``bm25`` is a plain standard-library
BM25 (``bench.eval.bm25``) computed in the same run as the baseline.

    hit@5      share of questions with a relevant item in the top 5
    recall@k   share of a question's relevant items in the top k, averaged
    MRR        1 / rank of the first relevant item in the top 10 (0 when none)

Split: conversations at even positions (conv-26, 41, 43, 47, 49) are the dev half, the
others (conv-30, 42, 44, 48, 50) the test half. Ranking and floors were tuned only on dev.

Usage::

    python -m bench.eval.locomo                       # dev and test, Markdown to stdout
    python -m bench.eval.locomo --embedders wordllama
    python -m bench.eval.locomo --write               # ... and update BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pickle
import platform
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import apsw
import attrs

from bench.eval.bm25 import BM25
from memlite import storage
from memlite.embed import load_embedder, query_text
from memlite.storage.search import DEFAULT_FUSION, Filters, Fusion, search
from memlite.storage.vectors import ensure_vector_table, upsert_vectors

__all__ = ["Item", "Question", "Scores", "load", "main", "split"]

TOP = 10
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DATA_ENV = "MEMLITE_LOCOMO"
_HERE = Path(__file__).resolve().parent


@attrs.frozen
class Item:
    key: str  # "<conversation>/<n>"
    conversation: str
    session: int
    text: str
    dia_ids: frozenset[str]
    at_ms: int


@attrs.frozen
class Question:
    conversation: str
    text: str
    category: int
    relevant: frozenset[str]  # item keys


@attrs.frozen
class Scores:
    hit5: float
    recall5: float
    recall10: float
    mrr: float
    queries: int


def data_path() -> Path:
    """``$MEMLITE_LOCOMO``, else the copy under ``bench/eval/locomo_data``."""
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else _HERE / "locomo_data" / "locomo10.json"


def _session_ms(text: str) -> int:
    # "1:56 pm on 8 May, 2023"
    when = datetime.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return int(when.replace(tzinfo=datetime.UTC).timestamp() * 1000)


def load(path: Path | None = None) -> tuple[list[Item], list[Question]]:
    """The memory items and the category 1-4 questions that have a relevant item."""
    raw = json.loads((path or data_path()).read_text(encoding="utf-8"))
    items: list[Item] = []
    questions: list[Question] = []
    for conv in raw:
        name = conv["sample_id"]
        talk = conv["conversation"]
        mine: list[Item] = []
        for key, by_speaker in conv["observation"].items():
            n = int(key.split("_")[1])
            at_ms = _session_ms(talk[f"session_{n}_date_time"])
            for speaker, facts in by_speaker.items():
                for fact, dia in facts:
                    ids = frozenset([dia] if isinstance(dia, str) else dia)
                    mine.append(Item(f"{name}/{len(mine)}", name, n, f"{speaker}: {fact}",
                                     ids, at_ms))
        items += mine
        for qa in conv["qa"]:
            if qa.get("category") not in CATEGORIES or not qa.get("evidence"):
                continue
            evidence = set(qa["evidence"])
            relevant = frozenset(it.key for it in mine if it.dia_ids & evidence)
            if relevant:
                questions.append(Question(name, qa["question"], qa["category"], relevant))
    return items, questions


def split(conversations: Sequence[str]) -> tuple[set[str], set[str]]:
    """(dev, test) conversation names: even positions tune, odd positions report."""
    ordered = sorted(set(conversations))
    return set(ordered[0::2]), set(ordered[1::2])


@attrs.define
class Corpus:
    conn: apsw.Connection
    key_of: dict[int, str]
    query_vectors: dict[str, bytes]


def build(items: Sequence[Item], questions: Sequence[Question], directory: Path,
          embedder: Any) -> Corpus:
    """Store ``items`` in a fresh database through memlite's write path, with vectors."""
    conn = storage.connect(directory)
    key_of: dict[int, str] = {}
    ids: dict[str, int] = {}
    with conn:
        for it in sorted(items, key=lambda i: (i.at_ms, i.key)):
            stored = storage.insert_observation(conn, storage.NewObservation(
                session_id=f"{it.conversation}-s{it.session}", project=it.conversation,
                type="discovery", title=it.text, at_ms=it.at_ms))
            key_of.setdefault(stored.id, it.key)
            ids[it.key] = stored.id
    vectors: dict[str, bytes] = {}
    if embedder is not None:
        matrix = embedder.embed([it.text for it in items])
        with conn:
            ensure_vector_table(conn, embedder.dim, embedder.name)
            seen: set[int] = set()
            rows = []
            for it, row in zip(items, matrix, strict=True):
                if ids[it.key] not in seen:
                    seen.add(ids[it.key])
                    rows.append((ids[it.key], it.conversation, row.astype("<f4").tobytes()))
            upsert_vectors(conn, rows)
        texts = sorted({q.text for q in questions})
        qm = embedder.embed([query_text.embedding_query(t) for t in texts])
        vectors = {t: row.astype("<f4").tobytes() for t, row in zip(texts, qm, strict=True)}
    return Corpus(conn, key_of, vectors)


def build_cached(items: Sequence[Item], questions: Sequence[Question], cache: Path,
                 name: str) -> Corpus:
    """``build`` into ``cache/<name>`` once; later calls reopen it (for tuning runs).
    The cache is keyed by nothing but the name: delete it after changing the data,
    the model or how items are stored."""
    directory = cache / name
    meta = directory / "corpus.pickle"
    if meta.is_file():
        key_of, vectors = pickle.loads(meta.read_bytes())
        return Corpus(storage.connect(directory), key_of, vectors)
    corpus = build(items, questions, directory,
                   load_embedder(name) if name != "none" else None)
    meta.write_bytes(pickle.dumps((corpus.key_of, corpus.query_vectors)))
    return corpus


def memlite_ranker(corpus: Corpus, mode: str,
                   fusion: Fusion = DEFAULT_FUSION) -> Callable[[Question], list[str]]:
    def rank(q: Question) -> list[str]:
        outcome = search(corpus.conn, q.text, mode=mode, filters=Filters(project=q.conversation),
                         query_vector=corpus.query_vectors.get(q.text), limit=TOP,
                         fusion=fusion)
        if mode != "fts" and outcome.mode_used != mode:
            raise RuntimeError(f"{mode} search fell back to {outcome.mode_used}: {outcome.note}")
        return [corpus.key_of[h.observation.id] for h in outcome.hits
                if h.observation.id in corpus.key_of]
    return rank


def bm25_ranker(items: Sequence[Item]) -> Callable[[Question], list[str]]:
    by_conv: dict[str, BM25] = {}
    grouped: dict[str, list[Item]] = defaultdict(list)
    for it in items:
        grouped[it.conversation].append(it)
    for conv, its in grouped.items():
        by_conv[conv] = BM25([(it.key, it.text) for it in its])
    return lambda q: by_conv[q.conversation].top(q.text, TOP)


def score(rank: Callable[[Question], list[str]], questions: Sequence[Question]) -> Scores:
    hit5 = r5 = r10 = mrr = 0.0
    for q in questions:
        found = rank(q)[:TOP]
        hit5 += bool(q.relevant & set(found[:5]))
        r5 += len(q.relevant & set(found[:5])) / len(q.relevant)
        r10 += len(q.relevant & set(found)) / len(q.relevant)
        mrr += next((1 / i for i, key in enumerate(found, 1) if key in q.relevant), 0.0)
    n = len(questions) or 1
    return Scores(hit5 / n, r5 / n, r10 / n, mrr / n, len(questions))


def table(rankers: dict[str, Callable[[Question], list[str]]],
          questions: Sequence[Question], half: str) -> list[str]:
    """Markdown rows: hit@5 per category and overall, then recall@5/@10 and MRR overall."""
    lines = []
    for name, rank in rankers.items():
        cats = [score(rank, [q for q in questions if q.category == c]) for c in CATEGORIES]
        overall = score(rank, questions)
        lines.append(f"| {half} | {name} | " + " | ".join(f"{s.hit5:.3f}" for s in cats)
                     + f" | **{overall.hit5:.3f}** | {overall.recall5:.3f} | "
                     f"{overall.recall10:.3f} | {overall.mrr:.3f} |")
    return lines


HEADER = ("| half | ranking | " + " | ".join(f"{c} hit@5" for c in CATEGORIES.values())
          + " | all hit@5 | recall@5 | recall@10 | MRR |")


def report(embedders: Sequence[str]) -> str:
    items, questions = load()
    dev, test = split([it.conversation for it in items])
    halves = {"dev": [q for q in questions if q.conversation in dev],
              "test": [q for q in questions if q.conversation in test]}
    lines = [
        "## Retrieval on LoCoMo (issue 14)",
        "",
        f"Measured {datetime.date.today()} on {platform.node() or 'this machine'} "
        f"({platform.machine()}, Python {platform.python_version()}) by "
        "`python -m bench.eval.locomo --write`. Public set, not written here "
        "(`bench/eval/locomo_data`, CC BY-NC 4.0): "
        f"{len(items)} observation facts over 10 conversations, {len(questions)} questions "
        f"of categories 1-4 ({len(halves['dev'])} dev in {', '.join(sorted(dev))}; "
        f"{len(halves['test'])} test in {', '.join(sorted(test))}). Each question searches "
        "its own conversation through `memlite.storage.search.search`; `bm25` is a plain "
        "stdlib BM25 (k1 1.2, b 0.75, stopwords) computed in the same run. Only the test "
        "half counts; the dev half is what ranking was tuned on.",
        "",
        HEADER,
        "|---|---|" + "---|" * (len(CATEGORIES) + 4),
    ]
    with tempfile.TemporaryDirectory(prefix="memlite-locomo-") as tmp:
        rankers: dict[str, Callable[[Question], list[str]]] = {"bm25 (stdlib)":
                                                                 bm25_ranker(items)}
        corpora = []
        costs = []
        for name in embedders:
            embedder = _embedder(name)
            started = time.perf_counter()
            corpus = build(items, questions, Path(tmp) / name, embedder)
            took = time.perf_counter() - started
            corpora.append(corpus)
            costs.append(f"`{name}` = {embedder.name}, {embedder.dim}-d: {len(items)} facts and "
                         f"{len(corpus.query_vectors)} questions embedded and stored in "
                         f"{took:.0f} s")
            if "memlite fts" not in rankers:
                rankers["memlite fts"] = memlite_ranker(corpus, "fts")
            rankers[f"{name} semantic"] = memlite_ranker(corpus, "semantic")
            rankers[f"{name} hybrid"] = memlite_ranker(corpus, "hybrid")
        for half in ("dev", "test"):
            lines += table(rankers, halves[half], half)
        for corpus in corpora:
            corpus.conn.close()
    lines += ["", "Embedding cost in this run (same machine, same load): " + "; ".join(costs)
              + "."]
    return "\n".join(lines) + "\n"


def _embedder(name: str) -> Any:
    """``load_embedder(name)``, plus ``minilm-shipped``: the MiniLM file as shipped (float
    weights in memory) rather than memlite's int8 copy, to compare the two."""
    if name == "minilm-shipped":
        from memlite.embed.minilm import MiniLMEmbedder

        return MiniLMEmbedder(prepare=False)
    return load_embedder(name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", default="minilm,minilm-shipped,wordllama",
                        help="comma-separated: minilm, minilm-shipped, wordllama")
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    section = report([e for e in args.embedders.split(",") if e])
    print(section)
    if args.write:
        from bench.benchmarks_md import write_section

        write_section("## Retrieval on LoCoMo (issue 14)", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
