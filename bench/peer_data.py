"""The databases ``bench_peer_http.py`` serves, built once and cached: ``bench_search``'s
synthetic observations written by each product's own storage code (memlite's
``storage.insert_observation`` and its vectors; claude-mem's through
``peer_claude_mem.py``), and a cached memlite database migrated once to this checkout's
schema before a worker gets a copy of it.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import bench_search
import numpy as np
import peer_claude_mem as peer
from search_measure import log

__all__ = ["CHUNK", "PROJECT", "build", "migrated"]

PROJECT = bench_search.PROJECTS[0]  # /home/dev/project-00; claude-mem calls it project-00
CHUNK = 2048


def build(count: int, cache: Path, words: list[str], embedder, bun: Path, package: Path,
          real: bool) -> tuple[Path, Path]:
    """Both products' databases with the same ``count`` observations; cached by count.

    ``real``: memlite's vectors are MiniLM embeddings of each observation's text. Otherwise
    they are random unit vectors of MiniLM's width, recorded under MiniLM's name so that the
    worker takes them as its own: the search does the same work on them (the KNN and its
    index cost the same whatever the values; the query is still embedded by MiniLM), and
    100k real embeddings take hours on a loaded 2-core machine (~15-40 texts/s measured).
    """
    from memlite import storage

    vectors = "minilm" if real else "random"
    directory = cache / f"data-{count}-{vectors}"
    meta = directory / "build.json"
    if meta.exists() and json.loads(meta.read_text()).get("model") == embedder.name:
        return migrated(directory / "memlite" / storage.DB_FILENAME), directory / "claude-mem.db"
    if directory.exists():
        shutil.rmtree(directory)
    (directory / "memlite").mkdir(parents=True)
    log(f"building {count:,} observations for both products")
    gen = bench_search.Generator(words, seed=count, projects=[PROJECT])
    jsonl = directory / "observations.jsonl"
    conn = storage.connect(directory / "memlite")
    t0 = time.perf_counter()
    with jsonl.open("w") as out:
        batch = []
        for obs in gen.observations(count):
            out.write(json.dumps(peer.to_claude_mem(obs)) + "\n")
            batch.append(obs)
            if len(batch) == CHUNK * 4:
                with conn:
                    for item in batch:
                        storage.insert_observation(conn, item)
                batch.clear()
        with conn:
            for item in batch:
                storage.insert_observation(conn, item)
    log(f"  memlite rows in {time.perf_counter() - t0:.1f} s")
    with conn:
        storage.ensure_vector_table(conn, embedder.dim, embedder.name)
    t0, last = time.perf_counter(), 0
    rng = np.random.default_rng(count)
    while True:
        rows = conn.execute(
            "SELECT id, title, subtitle, narrative, facts, concepts, files_modified "
            "FROM observations WHERE project = ? AND id > ? ORDER BY id LIMIT ?",
            (PROJECT, last, CHUNK)).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        if real:
            matrix = embedder.embed(bench_search._texts(rows))
        else:
            matrix = bench_search.unit_rows(rng, len(rows), embedder.dim)
        with conn:
            storage.upsert_vectors(
                conn, ((r[0], PROJECT, matrix[i].tobytes()) for i, r in enumerate(rows)))
        log(f"  {last:,} {vectors} vectors ({last / (time.perf_counter() - t0):.0f}/s)")
    conn.execute("PRAGMA optimize")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    t0 = time.perf_counter()
    info = peer.load(bun, package, directory / "claude-mem.db", jsonl)
    log(f"  claude-mem rows in {time.perf_counter() - t0:.1f} s: {info}")
    jsonl.unlink()
    meta.write_text(json.dumps({"count": count, "model": embedder.name, "vectors": vectors,
                                "peer": info}))
    return directory / "memlite" / storage.DB_FILENAME, directory / "claude-mem.db"


def migrated(db: Path) -> Path:
    """``db`` at this code's schema with no supersession replay left to run (done once,
    on a copy renamed over it).

    A cache built by older code is at an older schema: the worker would migrate its copy
    at start and then replay supersession over every observation in the background
    (migration 5: ~2 ms an observation, 20 s at 10,000, minutes at 100,000), on the CPUs
    the timed requests need. Doing it here, untimed, once, keeps that out of the figures.
    """
    from memlite import storage
    from memlite.storage import relink

    try:
        reader = storage.connect(db, writer=False)
    except Exception:  # an older schema: refused read-only
        reader = None
    if reader is not None:
        try:
            if relink.pending(reader) is None:
                return db
        finally:
            reader.close()
    log(f"migrating {db} to this code's schema and replaying supersession (once)")
    copy = db.with_name("migrating-" + db.name)
    shutil.copy(db, copy)
    conn = storage.connect(copy, writer=True)
    try:
        relink.resume(conn)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    for suffix in ("-wal", "-shm"):
        Path(str(copy) + suffix).unlink(missing_ok=True)
    os.replace(copy, db)
    return db
