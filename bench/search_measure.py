"""What ``bench_search.py`` measures, and its progress log: search latency per mode, a
profile of the hybrid search, the query embedding's cost, and the SessionStart context's.
The names (with ``benchmarks_md``'s ``percentile`` and ``ms``) are also read as
``bench_search.*`` by the benches built on its databases.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import apsw
import numpy as np
from benchmarks_md import ms, percentile
from synthetic import Generator, unit_rows

from memlite import storage
from memlite.config import load_settings
from memlite.context import build_context_for
from memlite.embed import load_embedder, observation_text
from memlite.storage.search import Filters, search

PROJECTS = [f"/home/dev/project-{i:02d}" for i in range(20)]
MODES = ("fts", "semantic", "hybrid")


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] load {load_average()}: {message}", file=sys.stderr,
          flush=True)


# --- measuring ------------------------------------------------------------------------------


def timed(fn: Callable[[], object], n: int) -> list[float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def query_vectors(qs: list[tuple[str, str]], vectors: str, embedder) -> list[bytes]:
    if vectors == "wordllama":
        matrix = embedder.embed([text for _, text in qs])
    else:
        dim = int(vectors.split("-")[1])
        matrix = unit_rows(np.random.default_rng(99), len(qs), dim)
    return [row.tobytes() for row in matrix]


def measure_search(conn: apsw.Connection, qs: list[tuple[str, str]], qvecs: list[bytes],
                   projects: list[str] | None, modes=MODES, rounds: int = 3,
                   ) -> dict[str, dict[str, float]]:
    """p50/p95 per mode over ``rounds`` x every query (after one warm-up round).

    ``projects`` None means no project filter; otherwise query i filters on
    ``projects[i % len(projects)]``."""
    results = {}
    for mode in modes:
        samples: dict[str, list[float]] = {"short": [], "long": []}
        hits = 0
        for round_ in range(rounds + 1):
            for i, ((kind, text), vec) in enumerate(zip(qs, qvecs, strict=True)):
                filters = Filters(project=projects[i % len(projects)]) if projects else Filters()
                start = time.perf_counter()
                outcome = search(conn, text, mode=mode, filters=filters, query_vector=vec,
                                 limit=20)
                elapsed = time.perf_counter() - start
                if round_:
                    samples[kind].append(elapsed)
                    hits += len(outcome.hits)
                assert outcome.mode_used == mode, (mode, outcome.note)
        every = samples["short"] + samples["long"]
        results[mode] = {
            "p50": percentile(every, 0.5), "p95": percentile(every, 0.95),
            "short_p50": percentile(samples["short"], 0.5),
            "long_p50": percentile(samples["long"], 0.5),
            "long_p95": percentile(samples["long"], 0.95),
            "mean_hits": hits / len(every),
        }
    return results


def profile_hybrid(conn, qs, qvecs, project: str | None, top: int = 14) -> str:
    """cProfile of the long hybrid queries (cumulative time)."""
    prof = cProfile.Profile()
    prof.enable()
    for (kind, text), vec in zip(qs, qvecs, strict=True):
        if kind == "long":
            search(conn, text, mode="hybrid", filters=Filters(project=project),
                   query_vector=vec, limit=20)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def measure_embedding(qs, words: list[str], count: int = 1000) -> dict:
    """Throughput over ``count`` observation texts (batches of 32) and single-query latency."""
    gen = Generator(words, seed=1, projects=PROJECTS[:1])
    texts = [observation_text(o.title, o.subtitle, o.narrative, o.facts, o.concepts,
                              (*o.files_read, *o.files_modified))
             for o in gen.observations(count)]
    out = {}
    for choice in ("wordllama", "minilm"):
        try:
            embedder = load_embedder(choice)
        except Exception as exc:  # report it rather than fail the whole run
            out[choice] = {"error": str(exc)}
            continue
        embedder.embed(texts[:32])  # warm up
        start = time.perf_counter()
        for i in range(0, len(texts), 32):
            embedder.embed(texts[i:i + 32])
        rate = len(texts) / (time.perf_counter() - start)
        for _, text in qs[:5]:
            embedder.embed([text])
        single: list[float] = []
        for _ in range(2):
            for _, text in qs:
                start = time.perf_counter()
                embedder.embed([text])
                single.append(time.perf_counter() - start)
        tokenizer = getattr(embedder, "_tokenizer", None)  # MiniLM's, for the note
        tokens = (sum(len(tokenizer.ids(text)) for text in texts) / len(texts)
                  if tokenizer is not None and hasattr(tokenizer, "ids") else None)
        out[choice] = {"name": embedder.name, "dim": embedder.dim, "rate": rate,
                       "tokens": tokens,
                       "single_p50": percentile(single, 0.5),
                       "single_p95": percentile(single, 0.95),
                       "mean_chars": sum(map(len, texts)) / len(texts)}
        embedder.close()
        log(f"  {choice}: {rate:,.0f} texts/s, one query {ms(out[choice]['single_p50'])}")
    return out


def measure_context(directory: Path, project: str) -> dict:
    conn = storage.connect(directory, writer=False)
    with tempfile.TemporaryDirectory(prefix="memlite-bench-settings-") as tmp:
        settings = load_settings(Path(tmp), env={})
    count = conn.execute("SELECT count(*) FROM observations WHERE project = ?",
                         (project,)).fetchall()[0][0]
    block = build_context_for(conn, project, settings)
    timed(lambda: build_context_for(conn, project, settings), 20)
    samples = timed(lambda: build_context_for(conn, project, settings), 300)
    conn.close()
    return {"p50": percentile(samples, 0.5), "p95": percentile(samples, 0.95),
            "project_count": count, "chars": block.chars,
            "settings": (settings.summary_count, settings.observation_count,
                         settings.full_observation_count, settings.context_max_chars)}
