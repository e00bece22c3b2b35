"""Search latency of two versions of the search engine, interleaved query by query on the
same database in the same process: a fair comparison on a noisy, shared machine.

    python bench/bench_search_ab.py --rev 18c3e61 --db /tmp/memlite-bench-search/100k-1p

``--rev`` is a git revision whose ``memlite/storage/search.py`` is "old" (it must import
only modules that still exist); "new" is the working tree's. The database is one that
``bench/bench_search.py`` built (its queries and wordllama query vectors are reused).
Prints p50/p95 per mode and the ``SELECT 1`` floor of the same connection.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_search as B  # noqa: E402

from memlite import storage  # noqa: E402
from memlite.embed import load_embedder  # noqa: E402
from memlite.storage import search as new  # noqa: E402


def old_module(rev: str):
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:memlite/storage/search.py"],
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp(prefix="memlite-ab-")) / "old_search.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_search", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", required=True)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    old = old_module(args.rev)
    conn = storage.connect(args.db, writer=False)
    qs = B.queries(B.vocabulary())
    vectors = B.query_vectors(qs, "wordllama", load_embedder("wordllama"))
    project = conn.execute("SELECT project FROM observations LIMIT 1").fetchall()[0][0]
    for mode in ("fts", "hybrid"):
        times: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(args.rounds):
            for (_, text), vector in zip(qs, vectors, strict=True):
                for label, module in (("old", old), ("new", new)):
                    started = time.perf_counter()
                    module.search(conn, text, mode=mode, query_vector=vector, limit=20,
                                  filters=module.Filters(project=project))
                    times[label].append(time.perf_counter() - started)
        print(f"| {mode} | " + " | ".join(
            f"{B.percentile(t, 0.5) * 1000:.1f} ms / {B.percentile(t, 0.95) * 1000:.1f} ms"
            for t in times.values()) + " |")
    started = time.perf_counter()
    for _ in range(1000):
        conn.execute("SELECT 1").fetchall()
    print(f"floor SELECT 1: {(time.perf_counter() - started) * 1000:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
