"""Search over HTTP against the leading peer (claude-mem), in one run, on loopback.

Figures, not pass/fail (issue 14: "over HTTP, memlite's search must beat the leading
peer's in the same run"). For each size N (default 10,000 and 100,000 observations):

* **Data**: the same synthetic observations ``bench_search.py`` makes (its ``Generator``,
  seed N), all in ONE project, written into each product through its own storage code:
  memlite's ``storage.insert_observation`` plus its vectors (``upsert_vectors``, embedded
  with the default model, MiniLM, from ``memlite.embed.observation_text``: what the
  worker's embedder would store), and claude-mem 13.25.3's own ``SessionStore`` methods,
  driven under Bun by ``bench/peer_claude_mem_load.js``. Both databases are cached under
  ``--cache`` (keyed by N) and copied into each worker's data directory per run.
* **Servers, all at once**: memlite's worker (``memlite worker start``,
  ``EMBEDDER=minilm``, waited until its embedder is ``ready``), claude-mem's worker
  (``worker-service.cjs --daemon`` under Bun, Chroma off: see ``peer_claude_mem.py``),
  with ``--peer-chroma`` a second claude-mem worker WITH its Chroma vector search
  (``peer_chroma.py``: its data directory is prepared once per size and cached, the
  worker waited until its start-up backfill check is complete), a bare Hypercorn app
  (``bench_http_path.BARE``) and a bare ``Bun.serve`` app: the two floors.
* **Pairs, like with like**: memlite's hybrid search against claude-mem + Chroma (both
  embed the query and search vectors), memlite's ``mode=fts`` against claude-mem's
  full-text search; without ``--peer-chroma``, memlite's hybrid against claude-mem's
  full text as well (unlike work: said so in the report).
* **Breakdown**: before the servers start, ``search_breakdown.py`` times each piece of
  memlite's search in process on the same database (CPU time).
* **Requests**: the 50 queries of ``bench_search.py`` (25 keyword, 25 questions), limit
  20, interleaved request by request across every server: the floors' ``GET /``, both
  ``GET /api/health``, memlite's ``GET /api/search?q=&limit=20`` (its default mode,
  hybrid: BM25 + the query's MiniLM embedding + fusion) and ``/api/search/index`` (what its
  MCP tool calls), claude-mem's ``GET /api/search?query=&limit=20`` with ``format=json``
  and without (what its MCP ``search`` tool sends; FTS5 phrase match), each on a **new**
  connection (``Connection: close``) and on a **kept** one. One more row, not paired:
  memlite's full-text ``/api/search`` with limit 7 (about claude-mem's mean count), what
  an answer of the same size costs. One warm-up round, then
  ``--rounds`` timed rounds. Latency is the client's. The pairs run without a project
  filter (the one project holds every row, so the rows searched are the same); memlite's
  project-filtered search gets its own row, and claude-mem's is probed on two queries at
  the end (at 100k it takes seconds to minutes per query).
* **Hits**: one untimed pass counts what each search returns per query (memlite's
  ``count``; claude-mem's observations with ``format=json``), so the reader sees what each
  latency buys.

Every process started is stopped by its pid. The npm tarballs live in ``--cache``; when
missing they are fetched with ``npm pack`` (the command is printed).

Usage::

    python bench/bench_peer_http.py --sizes 10000,100000 --peer-chroma 10000 --write
"""

from __future__ import annotations

import argparse
import os
import re
import select
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
import peer_chroma  # noqa: E402
import peer_claude_mem as peer  # noqa: E402
import search_breakdown  # noqa: E402
from bench_http import Client, _free_port  # noqa: E402
from bench_http_path import BARE, _wait_port  # noqa: E402
from benchmarks_md import write_section  # noqa: E402
from peer_data import PROJECT, build  # noqa: E402
from peer_http_report import (  # noqa: E402
    CHROMA_JSON,
    CHROMA_MCP,
    EQUAL_COUNT,
    SECTION,
    report,
)
from peer_servers import (  # noqa: E402
    EMBEDDER,
    MemliteWorker,
    Plain,
    _rss_mb,
    get_json,
)

CACHE = Path("/tmp/memlite-bench-peer")


def log(message: str) -> None:
    bench_search.log(message)


def _p(samples: list[float], q: float) -> float:
    return bench_search.percentile(samples, q)


# --- measuring ------------------------------------------------------------------------------


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """One HTTP/1.1 response off ``sock``, by its Content-Length or chunks (not by EOF: Bun
    keeps a socket open after answering ``Connection: close`` until the client closes it)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the headers")
        data += chunk
    header, _, body = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)", header)
    if length:
        while len(body) < int(length[1]):
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the body's end")
            body += chunk
        return int(header[9:12]), body[:int(length[1])]
    if not re.search(rb"(?im)^transfer-encoding:\s*chunked", header):
        while chunk := sock.recv(65536):
            body += chunk
        return int(header[9:12]), body
    out = b""
    while True:
        while b"\r\n" not in body:
            body += sock.recv(65536)
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        while len(body) < size + 2:
            body += sock.recv(65536)
        out, body = out + body[:size], body[size + 2:]
        if size == 0:
            return int(header[9:12]), out


def fresh(port: int, path: str, token: str | None, timeout: float = 60,
          ) -> tuple[float, int]:
    """One request on a new connection (``Connection: close``); (seconds, status)."""
    t0 = time.perf_counter()
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}"
                 "Connection: close\r\n\r\n".encode())
    status, _ = read_response(sock)
    sock.close()
    return time.perf_counter() - t0, status


def _closed_by_server(sock: socket.socket) -> bool:
    """True when the server has closed this idle connection (its keep-alive timeout)."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def kept_plain(client: Client, path: str) -> tuple[float, int]:
    """One request on the kept connection. A connection the server closed while idle
    (Hypercorn's and Express's keep-alive timeouts are 5 s; a round across every row,
    claude-mem + Chroma's among them, can take longer) is reopened first, untimed, and
    counted in ``client.reconnects``."""
    if _closed_by_server(client.sock):
        client.sock.close()
        client._connect()
    t0 = time.perf_counter()
    status, _ = client.call("GET", path)
    return time.perf_counter() - t0, status


def count_hits(mem: MemliteWorker, peer_port: int, qs,
               chroma_port: int | None = None) -> dict[str, float]:
    """Mean observations per query for each search (untimed) and memlite's mode used."""
    mem_hits = peer_hits = chroma_hits = fts_hits = 0
    modes = set()
    for _, text in qs:
        found = get_json(mem.port, "/api/search?" + urllib.parse.urlencode(
            {"q": text, "limit": 20}), mem.token)
        mem_hits += len(found["observations"])
        modes.add(found.get("mode_used"))
        fts_hits += len(get_json(mem.port, "/api/search?" + urllib.parse.urlencode(
            {"q": text, "limit": 20, "mode": "fts"}), mem.token)["observations"])
        query = "/api/search?" + urllib.parse.urlencode(
            {"query": text, "limit": 20, "format": "json"})
        peer_hits += len(get_json(peer_port, query)["observations"])
        if chroma_port is not None:
            chroma_hits += len(get_json(chroma_port, query)["observations"])
    return {"memlite": mem_hits / len(qs), "peer": peer_hits / len(qs),
            "memlite_fts": fts_hits / len(qs), "peer_chroma": chroma_hits / len(qs),
            "memlite_modes": sorted(str(m) for m in modes)}


def _search_paths(qs, chroma: bool = False) -> dict[str, list[str]]:
    """Per search row, the request path of each query.

    The pairs run WITHOUT a project filter: the one project holds every observation, so
    each search sees the same rows either way, and claude-mem's project-filtered search is
    unusable at this size (see ``probe_peer_project``). memlite's project-filtered search
    (what its hooks and MCP tools send) is a row of its own.
    """
    def paths(route: str, key: str, limit: int = 20, **extra) -> list[str]:
        return [f"{route}?" + urllib.parse.urlencode({key: t, "limit": limit, **extra})
                for _, t in qs]

    rows = {
        "memlite search": paths("/api/search", "q"),
        "claude-mem search, format=json": paths("/api/search", "query", format="json"),
        "memlite search/index (MCP tool)": paths("/api/search/index", "q"),
        "claude-mem search (MCP tool)": paths("/api/search", "query"),
        "memlite search, project filter": paths("/api/search", "q", project=PROJECT),
        "memlite search, mode=fts": paths("/api/search", "q", mode="fts"),
        "memlite search/index, mode=fts": paths("/api/search/index", "q", mode="fts"),
        EQUAL_COUNT: paths("/api/search", "q", limit=7, mode="fts"),
    }
    if chroma:
        rows[CHROMA_JSON] = paths("/api/search", "query", format="json")
        rows[CHROMA_MCP] = paths("/api/search", "query")
    return rows



def probe_peer_project(port: int, qs, timeout: float) -> list[tuple[str, float | None]]:
    """claude-mem's search WITH its project filter, once per probe query (untimed interleave).

    At 100k observations in one project it takes seconds to minutes per query: under Bun's
    SQLite (3.51.1) the plan of its observation query walks ``idx_observations_project``
    and evaluates the FTS5 ``MATCH`` once per row of the project (``EXPLAIN QUERY PLAN``:
    ``SEARCH o USING INDEX idx_observations_project``, then ``SCAN observations_fts
    VIRTUAL TABLE INDEX 32:=M6``); without the filter it starts from the FTS5 index. So
    only two queries are probed, each cut at ``timeout`` (None: cut)."""
    out = []
    for _, text in (qs[0], qs[len(qs) // 2]):
        path = "/api/search?" + urllib.parse.urlencode(
            {"query": text, "project": peer.project_name(PROJECT), "limit": 20})
        try:
            elapsed, status = fresh(port, path, None, timeout=timeout)
            out.append((text, elapsed if status == 200 else None))
        except TimeoutError:
            out.append((text, None))
    return out


def _group_rss_mb(pid: int) -> float | None:
    """Resident memory of the process group ``pid`` leads (the peer's worker and its
    chroma-mcp children), by ``ps``; None where that fails."""
    try:
        out = subprocess.run(["ps", "-o", "rss=", "-g", str(pid)], capture_output=True,
                             text=True, timeout=10, check=False).stdout
        return sum(int(x) for x in out.split()) / 1024 or None
    except (OSError, ValueError):
        return None


def start_chroma_peer(bun: Path, package: Path, home: Path, cache: Path) -> peer.PeerWorker:
    """claude-mem's worker with Chroma on ``home`` (its data already in place)."""
    return peer.PeerWorker(bun, package, None, home, _free_port(),
                           extra_env=peer_chroma.env(cache))


def measure_size(count: int, dbs: tuple[Path, Path], base: Path, floors: dict, bun: Path,
                 package: Path, model_cache: Path, qs, rounds: int,
                 probe_timeout: float, chroma_dir: Path | None = None,
                 cache: Path = CACHE) -> dict:
    mem_db, peer_db = dbs
    mem = MemliteWorker(mem_db, base / f"memlite-{count}", model_cache)
    cm = cmc = None
    try:
        cm = peer.PeerWorker(bun, package, peer_db, base / f"claude-mem-{count}", _free_port())
        if chroma_dir is not None:
            home = base / f"claude-mem-chroma-{count}"
            peer_chroma.copy_into(chroma_dir, home, cache)
            cmc = start_chroma_peer(bun, package, home, cache)
        mem_status = mem.wait_ready()
        cm_health = cm.wait_ready(get_json)
        if cmc is not None:
            cmc.wait_ready(get_json)
            # Its start-up backfill check (watermarks rebuilt from Chroma) must be over:
            # nothing left to embed, and chroma-mcp connected.
            peer_chroma.wait_log(cmc.home, "Smart backfill complete", cmc.proc, timeout=900)
        log(f"  workers ready (memlite {mem_status['model']}, "
            f"claude-mem {cm_health.get('version')}{', + Chroma' if cmc else ''})")
        hits = count_hits(mem, cm.port, qs, cmc.port if cmc else None)
        # row -> (port, token or None, paths: one per query)
        targets = {
            "bare Hypercorn": (floors["hc"], None, ["/"] * len(qs)),
            "bare Bun": (floors["bun"], None, ["/"] * len(qs)),
            "memlite health": (mem.port, mem.token, ["/api/health"] * len(qs)),
            "claude-mem health": (cm.port, None, ["/api/health"] * len(qs)),
        }
        for row, paths in _search_paths(qs, cmc is not None).items():
            token = mem.token if row.startswith("memlite") else None
            port = mem.port if token else cmc.port if "Chroma" in row else cm.port
            targets[row] = (port, token, paths)
        clients = {}
        for row, (port, token, _) in targets.items():
            clients[row] = Client(port, token or "")
            if token is None:
                clients[row].prefix = f"Host: 127.0.0.1:{port}\r\n"
        samples: dict[tuple[str, str], list[float]] = {}
        for round_ in range(rounds + 1):
            for i in range(len(qs)):
                for row, (port, token, paths) in targets.items():
                    for conn, (elapsed, status) in (
                            ("new", fresh(port, paths[i], token)),
                            ("kept", kept_plain(clients[row], paths[i]))):
                        if status != 200:
                            raise RuntimeError(f"{row} {conn} {paths[i]}: HTTP {status}")
                        if round_:
                            samples.setdefault((row, conn), []).append(elapsed)
            log(f"  round {round_} done")
        reopened = {row: client.reconnects for row, client in clients.items()
                    if client.reconnects}
        for client in clients.values():
            client.close()
        rss = {"memlite": _rss_mb(mem.pid), "claude-mem": _rss_mb(cm.pid)}
        if cmc is not None:
            rss["claude-mem + Chroma"] = _group_rss_mb(cmc.pid)
        # Last: a cut probe leaves the peer busy on it (one JS thread) until it is stopped.
        probe = probe_peer_project(cm.port, qs, probe_timeout)
        log(f"  claude-mem project-filter probe: {probe}")
        return {"probe": probe, "probe_timeout": probe_timeout, "samples": samples,
                "hits": hits, "model": mem_status["model"],
                "peer_version": cm_health.get("version"), "rss_mb": rss,
                "reopened": reopened}
    finally:
        for worker in (cmc, cm):
            if worker is not None:
                worker.stop()
        mem.stop()


def main(args) -> None:
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    cache = Path(args.cache)
    try:
        package, bun = peer.ensure_packages(cache / "npm")
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        raise SystemExit(2) from None
    print(peer.fetch_hint(cache / "npm"), file=sys.stderr)
    from memlite.embed import load_embedder

    model_cache = cache / "models"
    os.environ["MEMLITE_MODEL_CACHE"] = str(model_cache)
    embedder = load_embedder(EMBEDDER, data_dir=cache)
    words = bench_search.vocabulary()
    qs = bench_search.queries(words)
    sizes = [int(s) for s in args.sizes.split(",")]
    dbs = {n: build(n, cache, words, embedder, bun, package, n <= args.real_upto)
           for n in sizes}
    breakdown = {}
    for n in sizes:
        if n <= args.real_upto:
            log(f"in-process breakdown of memlite's search at {n:,}")
            breakdown[n] = search_breakdown.measure(dbs[n][0].parent, embedder,
                                                    [text for _, text in qs])
    del embedder
    chroma_dirs: dict[int, Path | None] = {n: None for n in sizes}
    chroma_sizes = {int(x) for x in args.peer_chroma.split(",") if x.strip()}
    for n in sizes:
        if n in chroma_sizes:
            peer_db = dbs[n][1]
            chroma_dirs[n] = peer_chroma.prepared(
                cache, peer_db.parent, peer_db,
                lambda home: start_chroma_peer(bun, package, home, cache))
    results: dict[int, dict] = {}
    with tempfile.TemporaryDirectory(prefix="memlite-bench-peer-") as tmp:
        base = Path(tmp)
        floors = {"hc": _free_port(), "bun": _free_port()}
        (base / "bare.js").write_text(peer.BARE_BUN)
        servers = [Plain([sys.executable, "-c", BARE, str(floors["hc"])]),
                   Plain([str(bun), str(base / "bare.js"), str(floors["bun"])],
                         env={**os.environ, "HOME": str(base)})]
        try:
            for port in floors.values():
                _wait_port(port)
            for n in sizes:
                log(f"measuring {n:,}")
                results[n] = measure_size(n, dbs[n], base, floors, bun, package, model_cache,
                                          qs, args.rounds, args.probe_timeout,
                                          chroma_dirs[n], cache)
                results[n]["vectors"] = ("MiniLM embeddings of each observation"
                                         if n <= args.real_upto else
                                         "random unit vectors of MiniLM's width (384), "
                                         "stored under its name")
        finally:
            for server in servers:
                server.stop()
    load1 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    for n, rows in breakdown.items():
        results[n]["breakdown"] = rows
    section = report(args, results, load0, load1)
    print(section)
    if args.write:
        write_section(SECTION, section)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cache", default=str(CACHE))
    parser.add_argument("--probe-timeout", type=float, default=120,
                        help="cut claude-mem's project-filtered probe queries after this "
                             "many seconds (default 120)")
    parser.add_argument("--real-upto", type=int, default=10_000,
                        help="sizes up to this get real MiniLM vectors, larger ones random "
                             "unit vectors of its width (default 10000)")
    parser.add_argument("--peer-chroma", default="", metavar="SIZES",
                        help="comma-separated sizes at which claude-mem ALSO runs WITH its "
                             "Chroma vector search (uv and chroma-mcp from PyPI; see "
                             "bench/peer_chroma.py), paired with memlite's hybrid search")
    parser.add_argument("--write", action="store_true")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse_args())
