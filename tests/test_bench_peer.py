"""The peer benchmark's pure helpers: the observation mapping to claude-mem's SessionStore
fields, the npm tarball names, and the HTTP response reader its new-connection timing uses.

The benchmark itself (``bench/bench_peer_http.py``) needs Bun and claude-mem from the npm
registry and is not run here (tests never reach the network)."""

from __future__ import annotations

import socket
import sys
import threading
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import bench_peer_http  # noqa: E402
import peer_claude_mem as peer  # noqa: E402

from memlite.storage import NewObservation  # noqa: E402


def _obs(**over) -> NewObservation:
    fields = dict(session_id="bench-s3", project="/home/dev/project-07", type="bugfix",
                  title="fix the cache key", subtitle="", narrative="the key held the pid",
                  facts=["one", "two"], concepts=["cache"], files_read=["src/a.py"],
                  files_modified=["src/b.py", "src/c.py"], at_ms=1_735_689_600_123)
    return NewObservation(**{**fields, **over})


def test_mapping_keeps_every_field_under_claude_mems_names():
    row = peer.to_claude_mem(_obs())
    assert row == {
        "session": "bench-s3", "project": "project-07", "at": 1_735_689_600_123,
        "obs": {"type": "bugfix", "title": "fix the cache key", "subtitle": None,
                "narrative": "the key held the pid", "facts": ["one", "two"],
                "concepts": ["cache"], "files_read": ["src/a.py"],
                "files_modified": ["src/b.py", "src/c.py"]},
    }


def test_mapping_refuses_an_observation_without_a_time():
    with pytest.raises(ValueError, match="at_ms"):
        peer.to_claude_mem(_obs(at_ms=None))


@pytest.mark.parametrize(("path", "name"), [
    ("/home/dev/project-00", "project-00"), ("/home/dev/shop/", "shop"), ("notes", "notes")])
def test_projects_are_named_by_folder_like_claude_mem(path, name):
    assert peer.project_name(path) == name


def test_the_generator_rows_map_in_order_and_in_full(tmp_path):
    import bench_search

    gen = bench_search.Generator(["alpha", "beta", "gamma", "delta"] * 400, seed=3,
                                 projects=["/p/one"])
    rows = list(gen.observations(120))
    out = tmp_path / "rows.jsonl"
    assert peer.write_jsonl(rows, out) == 120
    lines = out.read_text().splitlines()
    assert len(lines) == 120
    import json

    first, last = json.loads(lines[0]), json.loads(lines[-1])
    assert first["session"] == "bench-s0" and last["session"] == "bench-s2"
    assert first["at"] < last["at"] and first["project"] == "one"
    assert last["obs"]["title"] == rows[-1].title


def test_tarball_names_are_what_npm_pack_writes():
    names = peer.tarball_names()
    assert names[f"claude-mem@{peer.CLAUDE_MEM_VERSION}"] == \
        f"claude-mem-{peer.CLAUDE_MEM_VERSION}.tgz"
    (bun_spec, bun_file), = [(k, v) for k, v in names.items() if k.startswith("@oven/")]
    assert bun_file == bun_spec[1:].split("@")[0].replace("/", "-") + \
        f"-{peer.BUN_VERSION}.tgz"
    assert "npm pack" in peer.fetch_hint(Path("/x")) and bun_spec in peer.fetch_hint(Path("/x"))


def test_the_peer_worker_runs_without_chroma_or_telemetry(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_CHROMA_ENABLED", "true")  # a user's own setting
    env = peer.worker_env(tmp_path, 41234)
    assert env["CLAUDE_MEM_CHROMA_ENABLED"] == "false"
    assert env["DO_NOT_TRACK"] == "1" and env["HOME"] == str(tmp_path)
    assert env["CLAUDE_MEM_WORKER_PORT"] == "41234"
    assert env["CLAUDE_MEM_DATA_DIR"] == str(tmp_path / ".claude-mem")


def _serve_once(payload: bytes) -> tuple[int, threading.Event]:
    """A loopback server that answers one connection with ``payload`` and keeps it open."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    done = threading.Event()

    def run() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        for i in range(0, len(payload), 7):  # in small pieces
            conn.sendall(payload[i:i + 7])
        done.wait(10)  # hold the socket open: the reader must not wait for EOF
        conn.close()
        server.close()

    threading.Thread(target=run, daemon=True).start()
    return server.getsockname()[1], done


@pytest.mark.parametrize("payload", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world",
    b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
])
def test_a_response_is_read_to_its_end_without_waiting_for_the_server_to_close(payload):
    port, done = _serve_once(payload)
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        status, body = bench_peer_http.read_response(sock)
    finally:
        done.set()
        sock.close()
    assert (status, body) == ((200 if b"200" in payload[:12] else 404), b"hello world")


def _tarball(path: Path, files: dict[str, bytes]) -> None:
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_cached_tarballs_are_unpacked_without_the_network(tmp_path, monkeypatch):
    monkeypatch.setattr(peer.shutil, "which", lambda _: pytest.fail("npm was called"))
    cm_file, bun_file = peer.tarball_names().values()
    _tarball(tmp_path / cm_file, {"package.json": b'{"version": "13.25.3"}'})
    _tarball(tmp_path / bun_file, {"bin/bun": b"#!/bin/sh\n"})
    package, bun = peer.ensure_packages(tmp_path)
    assert (package / "package.json").read_bytes() == b'{"version": "13.25.3"}'
    assert bun.name == "bun" and bun.stat().st_mode & 0o100
    assert peer.ensure_packages(tmp_path) == (package, bun)  # unpacked once, reused


def test_missing_tarballs_without_npm_say_how_to_fetch_them(tmp_path, monkeypatch):
    monkeypatch.setattr(peer.shutil, "which", lambda _: None)
    with pytest.raises(RuntimeError, match="npm pack claude-mem@13.25.3"):
        peer.ensure_packages(tmp_path / "cache")


# --- the peer with Chroma (``--peer-chroma``) and the report's pairs ----------------------


def test_chroma_documents_follow_claude_mems_backfill_format():
    import sqlite3

    import peer_chroma_fill

    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.execute("CREATE TABLE observations (id, memory_session_id, project, text, type, "
                 "title, subtitle, facts, narrative, concepts, files_read, files_modified, "
                 "created_at_epoch)")
    conn.execute("INSERT INTO observations VALUES (7, 'mem-1', 'shop', NULL, 'bugfix', 'fix', "
                 "'', '[\"a\", \"b\"]', 'the story', '[\"cache\"]', '[]', "
                 "'[\"src/x.py\", \"src/y.py\"]', 1000)")
    docs = peer_chroma_fill.docs_of(conn.execute("SELECT * FROM observations").fetchone())
    assert [d[0] for d in docs] == ["obs_7_narrative", "obs_7_fact_0", "obs_7_fact_1"]
    assert [d[1] for d in docs] == ["the story", "a", "b"]
    narrative, fact = docs[0][2], docs[2][2]
    assert narrative == {"sqlite_id": 7, "doc_type": "observation", "memory_session_id": "mem-1",
                         "project": "shop", "platform_source": "claude",
                         "created_at_epoch": 1000, "type": "bugfix", "title": "fix",
                         "concepts": "cache", "files_modified": "src/x.py,src/y.py",
                         "field_type": "narrative"}
    assert fact["field_type"] == "fact" and fact["fact_index"] == 1
    assert "subtitle" not in fact and "files_read" not in fact  # empty: left out


def test_chromas_model_cache_gets_every_file_it_checks(tmp_path):
    import json

    import peer_chroma

    folder = peer_chroma.model_dir(tmp_path)
    onnx = folder / "onnx"
    assert sorted(p.name for p in onnx.iterdir()) == sorted(peer_chroma.MODEL_FILES)
    vocab = (onnx / "vocab.txt").read_text().splitlines()
    ids = json.loads((onnx / "tokenizer.json").read_text())["model"]["vocab"]
    assert [ids[word] for word in vocab] == list(range(len(vocab)))  # one per line, by id
    home = tmp_path / "home"
    peer_chroma.prepare_home(home, tmp_path)
    assert (home / ".cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/model.onnx").is_file()


def _result(chroma: bool, memlite_ms: float, peer_ms: float) -> dict:
    import peer_http_report as report

    qs = [(0, "q")]
    rows = [*report.FLOORS, *bench_peer_http._search_paths(qs, chroma)]
    samples = {(row, conn): [(memlite_ms if row.startswith("memlite") else peer_ms) / 1000]
               for row in rows for conn in ("new", "kept")}
    return {"samples": samples}


def test_pairs_are_like_with_like_when_the_peer_ran_chroma():
    import peer_http_report as report

    pairs = report.pairs(_result(True, 5, 9))
    assert ("memlite search", report.CHROMA_JSON) in pairs
    assert ("memlite search, mode=fts", "claude-mem search, format=json") in pairs
    assert ("memlite search", "claude-mem search, format=json") not in pairs
    lines = report.verdict(_result(True, 5, 9))
    assert all("**met**" in line for line in lines)
    assert all("**not met**" in line for line in report.verdict(_result(True, 9, 5)))
    unlike = report.verdict(_result(False, 5, 9))
    assert any("Unlike work" in line for line in unlike)


def test_the_equal_count_row_is_reported_as_context_not_a_bar():
    import peer_http_report as report

    result = _result(False, 5, 9)
    assert any(row == report.EQUAL_COUNT for row, _ in result["samples"])
    assert "limit=7" in next(p for p in bench_peer_http._search_paths([(0, "q")])[
        report.EQUAL_COUNT])
    (line,) = report.equal_count(result)
    assert "new 5.00 ms against 9.00 ms, kept 5.00 ms against 9.00 ms" in line
    assert "not the bar" in line and "**" not in line
    assert report.equal_count({"samples": {}}) == []


def test_an_idle_connection_the_server_closed_is_reopened_untimed():
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    answered = threading.Event()

    def serve() -> None:
        for _ in range(2):
            conn, _ = server.accept()
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            answered.set()
            conn.close()  # as a keep-alive timeout would

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = bench_peer_http.Client(port, "")
    try:
        assert bench_peer_http.kept_plain(client, "/")[1] == 200
        assert answered.wait(10)
        for _ in range(200):  # the close reaches this side
            if bench_peer_http._closed_by_server(client.sock):
                break
            threading.Event().wait(0.01)
        assert bench_peer_http.kept_plain(client, "/")[1] == 200
        assert client.reconnects == 1
    finally:
        client.close()
        server.close()
        thread.join(10)


def test_a_cached_database_is_replayed_once_before_it_is_timed(tmp_path):
    """``migrated``: a cache with a supersession replay still to run (as a schema-4 cache
    migrated by today's code has) is replayed once, untimed, so the timed worker has none
    to run in the background; a ready cache is left as it is."""
    import bench_search
    from peer_data import migrated

    from memlite import storage
    from memlite.storage import relink

    db = tmp_path / "memlite.db"
    conn = storage.connect(db)
    gen = bench_search.Generator(["alpha", "beta", "gamma", "delta"] * 400, seed=5,
                                 projects=["/p/one"])
    with conn:
        for obs in gen.observations(30):
            storage.insert_observation(conn, obs)
        relink.schedule(conn)
        assert relink.pending(conn) is not None
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert migrated(db) == db
    conn = storage.connect(db, writer=False)
    try:
        assert relink.pending(conn) is None
        assert conn.execute("SELECT count(*) FROM observations").fetchall() == [(30,)]
    finally:
        conn.close()
    assert sorted(p.name for p in tmp_path.iterdir() if "migrating" in p.name) == []
    before = db.stat().st_mtime_ns
    assert migrated(db) == db  # ready: not copied again
    assert db.stat().st_mtime_ns == before
