"""The app on a real socket: Hypercorn's trio ``serve`` on 127.0.0.1:0 inside the test's
nursery, spoken to with ``http.client`` and raw sockets from threads."""

from __future__ import annotations

import http.client
import json
import logging
import socket
from functools import partial

import pytest
import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from memlite.actors.bus import Publish
from memlite.http import create_app


@pytest.fixture
async def served(services, nursery):
    """(port, app) of the app served on a free loopback port; stopped by shutdown."""
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = logging.getLogger("tests.hypercorn")
    # Owns its reader pool (closed by after_serving). Built on a thread: ~8 ms of CPU on a
    # quiet machine, past the loop guard's 20 ms on a loaded one.
    app = await trio.to_thread.run_sync(create_app, services)
    done = trio.Event()

    async def run(task_status=trio.TASK_STATUS_IGNORED):
        try:
            await serve(app, config, shutdown_trigger=services.shutdown.wait,
                        task_status=task_status)
        finally:
            done.set()

    [url] = await nursery.start(run)
    port = int(url.rsplit(":", 1)[1])
    yield port, app, done
    services.shutdown.set()
    with trio.fail_after(5):
        await done.wait()
    assert app.extensions["memlite"].readers.open_count == 0


def _request(port: int, method: str, path: str, *, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, http.client.HTTPMessage, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


async def call(port, method, path, **kwargs):
    return await trio.to_thread.run_sync(partial(_request, port, method, path, **kwargs))


def _raw(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)  # the request says "Connection: close": the server ends it
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


async def test_health_auth_and_host_checks_on_the_wire(served, token):
    port, _, _ = served
    status, headers, body = await call(port, "GET", "/api/health")
    assert status == 200 and json.loads(body)["status"] == "ok"  # http.client sends our Host
    assert headers["X-Content-Type-Options"] == "nosniff"
    status, _, _ = await call(port, "GET", "/api/health", headers={"Host": "evil.example"})
    assert status == 403
    status, _, _ = await call(port, "GET", "/api/settings")
    assert status == 401
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    status, _, body = await call(port, "POST", "/api/events", headers=auth, body=json.dumps(
        {"session_id": "w-1", "hook_event_name": "SessionStart"}).encode())
    assert status == 200, body
    status, _, body = await call(port, "POST", "/api/events", body=b"{}", headers={
        **auth, "Origin": "http://evil.example"})
    assert status == 403


async def test_login_link_uses_the_real_port(served, token):
    port, _, _ = served
    status, _, body = await call(port, "POST", "/api/auth/login-link",
                                 headers={"Authorization": f"Bearer {token}"})
    assert status == 200
    url = json.loads(body)["url"]
    assert url.startswith(f"http://127.0.0.1:{port}/login?code=")
    status, headers, _ = await call(port, "GET", url.split(str(port), 1)[1])
    assert status == 303 and "HttpOnly" in headers["Set-Cookie"]


async def test_garbage_and_huge_bodies_do_not_stop_the_worker(served, token):
    port, _, _ = served
    garbage = b"NOT HTTP AT ALL\r\nConnection: close\r\n\r\n"
    assert (await trio.to_thread.run_sync(_raw, port, garbage)).startswith(b"HTTP/1.1 400")
    # 20 MB announced: refused from the headers, before the body is read.
    announced = (f"POST /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                 f"Authorization: Bearer {token}\r\nContent-Length: {20 * 1024 * 1024}\r\n"
                 "Connection: close\r\n\r\n").encode() + b"x" * 65536
    reply = await trio.to_thread.run_sync(_raw, port, announced)
    assert reply.startswith(b"HTTP/1.1 413") and b'"status":413' in reply, reply[:300]
    big = b"x" * (20 * 1024 * 1024)
    try:
        status, _, body = await call(port, "POST", "/api/events", body=big, headers={
            "Authorization": f"Bearer {token}"})
    except (BrokenPipeError, ConnectionResetError):
        pass  # sent in full: the server answered 413 and closed while we were still sending
    else:
        assert status == 413 and json.loads(body)["status"] == 413
    bad_utf8 = (f"POST /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Authorization: Bearer {token}\r\nContent-Length: 4\r\n"
                "Connection: close\r\n\r\n").encode() + b"\xff\xfe{}"
    reply = await trio.to_thread.run_sync(_raw, port, bad_utf8)
    assert reply.startswith(b"HTTP/1.1 400") and b"UTF-8" in reply, reply
    status, _, _ = await call(port, "GET", "/api/health")
    assert status == 200


def _open_stream(port: int, token: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall((f"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                  f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n").encode())
    return sock


def _read_until(sock: socket.socket, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


async def test_sse_on_the_wire_and_shutdown_is_not_held(served, token, services, bus):
    port, _, done = served
    sock = await trio.to_thread.run_sync(_open_stream, port, token)
    try:
        head = await trio.to_thread.run_sync(_read_until, sock, b": connected")
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
        bus.send_nowait(Publish(event={"type": "observation", "id": 3}))
        data = await trio.to_thread.run_sync(_read_until, sock, b'"id":3')
        assert b"event: observation" in data
        started = trio.current_time()
        services.shutdown.set()
        with trio.fail_after(2):
            await done.wait()
        # Hypercorn's graceful_timeout is 3 s: the stream ended by itself well before it.
        assert trio.current_time() - started < 1.0
        rest = await trio.to_thread.run_sync(_read_until, sock, b"event: shutdown")
        assert b"event: shutdown" in rest
    finally:
        sock.close()


async def test_a_client_that_goes_away_unsubscribes(served, token, bus):
    from memlite.actors.bus import GetStatistics

    port, _, _ = served
    sock = await trio.to_thread.run_sync(_open_stream, port, token)
    await trio.to_thread.run_sync(_read_until, sock, b": connected")
    sock.close()
    with trio.fail_after(5):
        while True:
            bus.send_nowait(Publish(event={"type": "ping"}))
            stats = await bus.ask(lambda reply: GetStatistics(reply=reply), timeout=2)
            if stats.subscribers == 0:
                break
            await trio.sleep(0.01)
