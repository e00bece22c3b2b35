"""``memlite reindex`` end to end: a real worker with the real wordllama model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from ports import free_port

from memlite import storage
from memlite.reindex import bar
from memlite.spawn import stop_worker

pytestmark = pytest.mark.timeout(120)

WORKER_ENV = "MEMLITE_WORKER_PORT"


@pytest.fixture
def seeded(data_dir):
    conn = storage.connect(data_dir)
    with conn:
        for i in range(300):
            storage.insert_observation(conn, storage.NewObservation(
                session_id=f"s{i % 5}", project=f"/p/{i % 3}", type="change",
                title=f"changed the parser, step {i}", narrative="tokens " * (i % 40)))
    conn.close()
    return 300


@pytest.fixture
def env(data_dir):
    yield {**os.environ, WORKER_ENV: str(free_port()), "MEMLITE_EMBEDDER": "wordllama"}
    stop_worker(data_dir, grace=5.0)


def run(env, *args):
    return subprocess.run([sys.executable, "-m", "memlite", *args], env=env,
                          capture_output=True, text=True, timeout=90)


def vectors(data_dir) -> tuple[int, str | None]:
    conn = storage.connect(data_dir, writer=False)
    try:
        info = storage.vector_table_info(conn)
        count = conn.execute("SELECT count(*) FROM observation_vectors").fetchall()[0][0]
    finally:
        conn.close()
    return count, info[1] if info else None


def test_reindex_starts_the_worker_and_embeds_everything(data_dir, seeded, env):
    result = run(env, "reindex", "--json")
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout)
    assert final["state"] == "ready" and final["pending"] == 0
    assert final["embedded"] == seeded and final["model"] == "wordllama-l2supercat-256"
    assert f"reindexed {seeded:,} observations" in result.stderr
    assert "vectors" in result.stderr  # the progress line (not a tty: one line per 10%)
    assert vectors(data_dir) == (seeded, "wordllama-l2supercat-256")
    again = run(env, "reindex", "--json")  # a second run redoes all of it, not nothing
    assert again.returncode == 0 and json.loads(again.stdout)["embedded"] == seeded


def test_reindex_without_a_model_says_why(data_dir, seeded, env):
    env["MEMLITE_EMBEDDER"] = "none"
    result = run(env, "reindex")
    assert result.returncode == 2
    assert "refused to reindex" in result.stderr and "nothing to reindex" in result.stderr
    assert result.stdout == ""


def test_bar():
    assert bar(0, 0, None).startswith("[" + "#" * 30 + "]")
    assert bar(5, 10, 2.0) == "[" + "#" * 15 + "." * 15 + "]       5/10 vectors  2/s"
