"""A stand-in for Ollama's ``POST /api/embed`` on 127.0.0.1, in a thread.

Vectors are deterministic functions of the text (a sha256 stream), so tests can
compare them exactly. ``server.mode`` scripts the failure to simulate, and can be
changed while the server runs (after the embedder's probe, say):

* ``"ok"``: one ``dim``-wide vector per input;
* ``"missing_model"``: 404 ``{"error": "model ... not found, try pulling it first"}``,
  also returned for any model not in ``server.models``;
* ``"bad_json"``: 200 with a body that is not JSON;
* ``"wrong_dim"``: vectors one number short;
* ``"wrong_count"``: one vector fewer than inputs;
* ``"server_error"``: 500 ``{"error": "boom"}``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def fake_vector(text: str, dim: int) -> list[float]:
    """``dim`` numbers in [-1, 1) drawn from sha256 of the text (not normalised)."""
    out: list[float] = []
    counter = 0
    while len(out) < dim:
        block = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        out.extend(x / 2**31 for x in struct.unpack("<8i", block))
        counter += 1
    return out[:dim]


class FakeOllama(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *, dim: int = 8, models: tuple[str, ...] = ("bge-m3",)) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.dim = dim
        self.models = models
        self.mode = "ok"
        self.requests: list[dict] = []

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: FakeOllama

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        self.server.requests.append(body)
        fake = self.server
        if self.path != "/api/embed":
            return self._reply(404, {"error": "404 page not found"})
        model, texts = body.get("model"), body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if fake.mode == "missing_model" or model not in fake.models:
            msg = f'model "{model}" not found, try pulling it first'
            return self._reply(404, {"error": msg})
        if fake.mode == "server_error":
            return self._reply(500, {"error": "boom"})
        if fake.mode == "bad_json":
            return self._send(200, b"<html>not json")
        dim = fake.dim - 1 if fake.mode == "wrong_dim" else fake.dim
        vectors = [fake_vector(text, dim) for text in texts]
        if fake.mode == "wrong_count":
            vectors = vectors[:-1]
        self._reply(200, {"model": model, "embeddings": vectors})

    def _reply(self, status: int, payload: dict) -> None:
        self._send(status, json.dumps(payload).encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: tests read ``server.requests`` instead of stderr."""


@contextlib.contextmanager
def serve_fake_ollama(**kwargs) -> Iterator[FakeOllama]:
    """A running :class:`FakeOllama`; shut down, closed and joined on exit."""
    server = FakeOllama(**kwargs)
    thread = threading.Thread(
        target=server.serve_forever, args=(0.02,), name="fake-ollama", daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
