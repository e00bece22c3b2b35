"""Scenario 8, a slow SSE consumer: ``GET /api/stream`` opened by a client that reads the
headers and then never reads again (a raw socket with a 4 KiB ``SO_RCVBUF``), while events
are ingested through ``POST /api/events`` (one keep-alive HTTP connection, sequential
requests: much faster than a hook process per event, and the same ingestion path).

Measured in one test: the ingestion throughput without (baseline) and with the stalled
client, the worker's RSS (``/proc/<pid>/status`` VmRSS) before and after, whether the bus
dropped the stalled subscriber (its ``bus: a subscriber is N events behind; dropping it``
warning in worker.log), and what a normal SSE client, reading all along, received.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time

import pytest
from harness import payload, wait_until

pytestmark = [pytest.mark.chaos, pytest.mark.timeout(120)]

EVENTS = 1500  # per phase: 3,000 in all
RSS_LIMIT_KB = 50 * 1024


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _ingest(world, prefix: str, n: int) -> float:
    """POST ``n`` PostToolUse events over one keep-alive connection; events per second."""
    conn = http.client.HTTPConnection("127.0.0.1", world.port, timeout=30)
    headers = {"Authorization": f"Bearer {world.token()}", "Content-Type": "application/json"}
    base = payload("PostToolUse.Bash", session_id=f"slow-consumer-{prefix}")
    started = time.monotonic()
    try:
        for i in range(n):
            body = dict(base, tool_use_id=f"toolu_{prefix}_{i}")
            conn.request("POST", "/api/events", body=json.dumps(body).encode(), headers=headers)
            response = conn.getresponse()
            response.read()
            assert response.status == 200, response.status
    finally:
        conn.close()
    return n / (time.monotonic() - started)


def _open_stream(world, rcvbuf: int | None = None) -> socket.socket:
    sock = socket.socket()
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", world.port))
    sock.sendall((f"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{world.port}\r\n"
                  f"Authorization: Bearer {world.token()}\r\nAccept: text/event-stream\r\n"
                  "\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1 if rcvbuf is not None else 4096)  # the stalled one: headers only
        assert chunk, "the stream closed before its headers"
        head += chunk
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    return sock


class _Reader(threading.Thread):
    """A normal SSE client: reads all along, counts ``event: event`` messages by prefix."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(daemon=True)
        self.sock = sock
        self.seen: list[str] = []
        self.closed_by_server = False
        self.stop = threading.Event()

    def run(self) -> None:
        buffer = b""
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not chunk:
                self.closed_by_server = True
                return
            buffer += chunk
            while b"\n\n" in buffer:
                message, buffer = buffer.split(b"\n\n", 1)
                self.seen.extend(line.decode() for line in message.split(b"\n")
                                 if line.startswith(b"data: "))


ROUNDS = 5


def test_stalled_sse_client(world, figures):
    """Interleaved rounds (without, with a fresh stalled client, ... ``ROUNDS`` times each)
    so that a drifting machine load weighs on both sides alike."""
    pid = world.start_worker()
    _ingest(world, "warmup", 100)  # imports, caches, the session actor: not measured
    rss_before = _rss_kb(pid)
    normal = _open_stream(world)
    reader = _Reader(normal)
    reader.start()
    stalled: list[socket.socket] = []
    per_round = EVENTS // ROUNDS
    seconds = {"baseline": 0.0, "stalled": 0.0}
    try:
        for n in range(ROUNDS):
            seconds["baseline"] += per_round / _ingest(world, f"baseline{n}", per_round)
            stalled.append(_open_stream(world, rcvbuf=4096))  # never read again
            seconds["stalled"] += per_round / _ingest(world, f"stalled{n}", per_round)
        _ingest(world, "tail", per_round)  # not measured: the last stalled one overflows too
        rss_after = _rss_kb(pid)

        def received() -> int:
            return sum('"type":"event"' in line and "slow-consumer-stalled" in line
                       for line in list(reader.seen))

        with contextlib.suppress(AssertionError):
            wait_until(lambda: received() >= EVENTS, 10, "the normal client got every event")
        log = (world.data_dir / "worker.log").read_text(errors="replace")
        dropped = log.count("bus: a subscriber is")
        # The worker still serves while the stalled clients hang on.
        status, _ = world.api("GET", "/api/health")
        assert status == 200
        figures["normal_client_received"] = received()
        figures["normal_client_closed_by_server"] = reader.closed_by_server
    finally:
        reader.stop.set()
        reader.join(5)
        for sock in stalled:
            sock.close()
        normal.close()
    baseline = EVENTS / seconds["baseline"]
    with_stalled = EVENTS / seconds["stalled"]
    figures["ingest_path"] = "POST /api/events"
    figures["baseline_events_per_s"] = round(baseline)
    figures["stalled_events_per_s"] = round(with_stalled)
    figures["throughput_ratio"] = round(with_stalled / baseline, 2)
    figures["rss_before_mb"] = round(rss_before / 1024, 1)
    figures["rss_delta_mb"] = round((rss_after - rss_before) / 1024, 1)
    figures["stalled_clients"] = len(stalled)
    figures["dropped_subscribers"] = dropped
    stored = world.query("SELECT count(*) FROM events WHERE tool_use_id LIKE 'toolu_stalled%'")
    figures["stored"] = stored[0][0]
    assert stored[0][0] == EVENTS
    assert with_stalled >= 0.8 * baseline, (with_stalled, baseline)
    assert rss_after - rss_before < RSS_LIMIT_KB
    assert dropped == ROUNDS, "every stalled subscriber is dropped, never the normal one"
    assert not reader.closed_by_server
    assert figures.values["normal_client_received"] == EVENTS  # every one: it kept up
