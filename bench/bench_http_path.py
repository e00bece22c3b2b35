"""The HTTP request path against Hypercorn's floor: health and search, new connection or kept.

Figures, not pass/fail. In one run, interleaved request by request so that load hits all
alike:

* a **bare Hypercorn** app (``hypercorn.trio.serve`` of a 15-line ASGI app answering a
  small JSON body; the floor any Hypercorn server pays) on its own loopback port;
* a **real worker** (``memlite worker start``, ``EMBEDDER=wordllama`` so that the copied
  benchmark databases need no reindex) over ``bench_search.py``'s cached databases:
  ``10k-20p`` (10,000 observations, 20 projects) and ``100k-1p`` (100,000 in one project),
  copied into the worker's data directory.

Routes: ``GET /`` (bare) and ``GET /api/health`` (worker) on a **new connection** per
request (``Connection: close``, what a hook or a client without a pool pays) and on a
**kept** connection; ``GET /api/search?q=...&project=...`` (hybrid, limit 20, the 50
queries of ``bench_search.py``) on both. Latency is the client's, from connect (new) or
send (kept) to the last byte.

Usage::

    python bench/bench_http_path.py [--rounds 2] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_search  # noqa: E402
from bench_http import Client, _free_port, _memlite  # noqa: E402
from benchmarks_md import percentile as _p  # noqa: E402
from benchmarks_md import write_section  # noqa: E402

SECTION = "## HTTP request path (issue 14)"

BARE = """
import sys, trio
from hypercorn.config import Config
from hypercorn.trio import serve
BODY = b'{"status":"ok"}'
async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            kind = message["type"].rsplit(".", 1)[1]
            await send({"type": f"lifespan.{kind}.complete"})
            if kind == "shutdown":
                return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(BODY)).encode())]})
    await send({"type": "http.response.body", "body": BODY})
config = Config()
config.bind = [f"127.0.0.1:{sys.argv[1]}"]
config.accesslog = None
trio.run(serve, app, config)
"""


def fresh(port: int, path: str, token: str | None) -> tuple[float, int]:
    """One request on a new connection; (seconds, status)."""
    t0 = time.perf_counter()
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}"
                 "Connection: close\r\n\r\n".encode())
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    sock.close()
    return time.perf_counter() - t0, int(data[9:12])


def kept(client: Client, path: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    status, _ = client.call("GET", path)
    return time.perf_counter() - t0, status


def _wait_port(port: int, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def measure_db(name: str, db_dir: Path, base: Path, bare_port: int, qs, project: str,
               rounds: int, samples: dict) -> None:
    data = base / f"data-{name}"
    data.mkdir()
    shutil.copy(db_dir / "memlite.db", data / "memlite.db")
    env = {**os.environ, "MEMLITE_DATA_DIR": str(data), "MEMLITE_EMBEDDER": "wordllama",
           "MEMLITE_WORKER_PORT": str(_free_port())}
    info = json.loads(_memlite("worker", "start", "--json", env=env))
    try:
        port = info["port"]
        token = (data / "token").read_text().strip()
        # Wait for the embedder: a search answered without vectors is not the one measured.
        client = Client(port, token)
        end = time.monotonic() + 120
        while time.monotonic() < end:
            _, body = client.call("GET", "/api/embedder")
            if json.loads(body).get("state") == "ready":
                break
            time.sleep(0.5)
        bare = Client(bare_port, "x")
        paths = [f"/api/search?{urllib.parse.urlencode({'q': t, 'project': project, 'limit': 20})}"
                 for _, t in qs]
        for round_ in range(rounds + 1):
            for path in paths:
                for key, fn in (
                    ("bare new", lambda: fresh(bare_port, "/", None)),
                    ("health new", lambda: fresh(port, "/api/health", token)),
                    ("bare kept", lambda: kept(bare, "/")),
                    ("health kept", lambda: kept(client, "/api/health")),
                    (f"search {name} new", lambda p=path: fresh(port, p, token)),
                    (f"search {name} kept", lambda p=path: kept(client, p)),
                ):
                    elapsed, status = fn()
                    if status != 200:
                        raise RuntimeError(f"{key}: HTTP {status}")
                    if round_:
                        samples.setdefault(key, []).append(elapsed)
        client.close()
        bare.close()
    finally:
        _memlite("worker", "stop", env=env)


def in_process(name: str, db_dir: Path, qs, project: str, rounds: int, samples: dict) -> None:
    """The server's own work without HTTP: the handler's reader borrow, thread hop,
    ``queries.search`` (hybrid, wordllama query vector) and JSON encoding, in this
    process. ``search <db> new`` minus this is what the HTTP request path costs."""
    import trio

    from memlite.embed import load_embedder
    from memlite.http import queries
    from memlite.http.rawjson import RawJson
    from memlite.storage.db import db_path
    from memlite.storage.pool import ReaderPool
    from memlite.storage.search import Filters

    model = load_embedder("wordllama")

    async def run() -> None:
        pool = ReaderPool(db_path(db_dir))
        try:
            for round_ in range(rounds + 1):
                for _, text in qs:
                    t0 = time.perf_counter()
                    vector = model.embed([text])[0].astype("<f4").tobytes()
                    async with pool.borrow() as conn:
                        found = await conn.async_run(
                            queries.search, conn, text, mode="hybrid", limit=20,
                            filters=Filters(project=project), vector=vector)
                    json.dumps({"query": text, "project": project, **found},
                               default=RawJson.value)  # the records SQLite wrote
                    if round_:
                        samples.setdefault(f"search {name} in-process", []).append(
                            time.perf_counter() - t0)
        finally:
            await pool.close()

    trio.run(run)
    model.close()


def main(args) -> None:
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    words = bench_search.vocabulary()
    qs = bench_search.queries(words)
    from memlite.embed import load_embedder
    wordllama = load_embedder("wordllama")
    dbs = [("10k", *bench_search.cached("10k-20p", 10_000, bench_search.PROJECTS, "wordllama",
                                         words, wordllama, False), bench_search.PROJECTS[0]),
           ("100k", *bench_search.cached("100k-1p", 100_000, bench_search.PROJECTS[:1],
                                          "wordllama", words, wordllama, False),
            bench_search.PROJECTS[0])]
    bare_port = _free_port()
    bare = subprocess.Popen([sys.executable, "-c", BARE, str(bare_port)])
    samples: dict[str, list[float]] = {}
    try:
        _wait_port(bare_port)
        with tempfile.TemporaryDirectory(prefix="memlite-bench-http-") as tmp:
            for name, directory, _, project in dbs:
                measure_db(name, directory, Path(tmp), bare_port, qs, project, args.rounds,
                           samples)
                in_process(name, directory, qs, project, args.rounds, samples)
    finally:
        bare.terminate()
        bare.wait(10)
    load1 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = [f"| {key} | {len(v)} | {_p(v, 0.5) * 1000:.2f} ms | {_p(v, 0.95) * 1000:.2f} ms |"
            for key, v in samples.items()]
    u = platform.uname()
    section = "\n".join([
        SECTION, "",
        f"Measured {datetime.date.today().isoformat()} by `python bench/bench_http_path.py "
        f"--rounds {args.rounds}` on `{u.system} {u.machine}, {os.cpu_count()} CPUs`, "
        f"Python {platform.python_version()}; load average at the start {load0}, at the end "
        f"{load1} (a shared machine: compare rows of this run only).",
        "",
        "`bare` is a bare Hypercorn app (a 15-line ASGI app, same Hypercorn, its own "
        "process): the floor. `health` and `search` are a real worker (`EMBEDDER=wordllama`) "
        "over `bench_search.py`'s `10k-20p` (10,000 observations, 20 projects) and "
        "`100k-1p` (100,000 in one project) databases; search is hybrid, limit 20, project "
        "filter, the 50 queries of `bench_search.py`, query embedding included. `new` opens "
        "a connection per request (`Connection: close`), `kept` reuses one. Requests are "
        "interleaved; the bare and health rows pool both databases' runs. `in-process` is "
        "the server's own work for the same searches without HTTP (reader borrow, thread "
        "hop, `queries.search`, the query's wordllama embedding, JSON encoding), run in the "
        "bench's process after the worker's rows: the HTTP request path costs the "
        "difference.",
        "",
        "| request | n | p50 | p95 |",
        "|---|---:|---:|---:|",
        *rows,
    ])
    print(section)
    if args.write:
        write_section(SECTION, section)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write", action="store_true")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse_args())
