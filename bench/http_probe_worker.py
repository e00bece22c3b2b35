"""A memlite worker whose HTTP request path is timed step by step (``bench_http_ab.py
--profile``); for measuring only, never shipped.

Run as ``python bench/http_probe_worker.py`` with the worker's environment plus
``PROBE_OUT=<file>``; it wraps (by monkeypatching, before ``memlite worker run``):
Hypercorn's socket read (the moment a request's bytes arrive) and writes, the app's
outermost ASGI callable, the auth guard, the ``after_request`` hook, the search routes'
parameter parsing, search call and ``jsonify`` (each only where the code being measured
has it: older revisions named them differently), and ``queries.search`` / ``index`` (wall
and thread CPU time). Each request to ``/api/search*`` or ``/api/health`` records
``perf_counter_ns`` marks and the process's CPU time from its bytes' arrival to the app's
return. ``GET /probe/clear`` drops what was recorded (after a warm-up), ``GET
/probe/dump`` writes it to ``PROBE_OUT`` as JSON. Requests are assumed one at a time
(one client, one connection).

Inside Hypercorn (round 8): the request parsed by h11 and the idle timer stopped
(``Updated(idle=False)``), the ASGI scope built and the request's task spawned, the
response head through Hypercorn's ``app_send``, the write called, the write lock taken,
the write's checkpoint returned, and the recycle after the response (``Updated(idle=
True)``); and each garbage collection inside a request (``gc.callbacks``: its time and
generation).
"""

from __future__ import annotations

import contextvars
import json
import os
import sys
import time

pc, process_ns, thread_ns = time.perf_counter_ns, time.process_time_ns, time.thread_time_ns
RECORDS: list[dict] = []
CURRENT: contextvars.ContextVar[dict | None] = contextvars.ContextVar("probe", default=None)
LAST = {"recv": 0, "cpu": 0, "rec": None}


def mark(name: str) -> None:
    record = CURRENT.get()
    if record is not None:
        record["marks"].append((name, pc()))


def early(name: str) -> None:
    """A mark in Hypercorn: in the request's task, as ``mark``; before the app is called
    (Hypercorn's reading task), kept for the request whose bytes arrived last (requests
    come one at a time)."""
    if CURRENT.get() is not None:
        mark(name)
    else:
        EARLY.append((name, pc()))


EARLY: list[tuple[str, int]] = []


GC: dict[str, int] = {"start": 0}


def _gc_timed(phase: str, info: dict) -> None:
    """``gc.callbacks``: the time of each collection, added to the current request."""
    if phase == "start":
        GC["start"] = pc()
        return
    record = LAST["rec"]
    if record is not None and record.get("open"):
        record["gc"] = record.get("gc", 0) + pc() - GC["start"]
        record.setdefault("gc_generations", []).append(info["generation"])


def install() -> None:
    import gc

    gc.callbacks.append(_gc_timed)
    import hypercorn.trio.tcp_server as tcp
    import trio
    from hypercorn.events import Closed, RawData

    async def read_data(self) -> None:  # Hypercorn 0.18's loop, timed at each read
        while True:
            try:
                with trio.fail_after(self.config.read_timeout or float("inf")):
                    data = await self.stream.receive_some(tcp.MAX_RECV)
            except (trio.ClosedResourceError, trio.BrokenResourceError, trio.TooSlowError):
                break
            if data:
                LAST["recv"], LAST["cpu"] = pc(), process_ns()
                EARLY.clear()
            await self.protocol.handle(RawData(bytes(data)))
            if data == b"":
                break
        await self.protocol.handle(Closed())

    tcp.TCPServer._read_data = read_data
    protocol_send = tcp.TCPServer.protocol_send

    async def timed_send(self, event) -> None:
        if isinstance(event, RawData) and event.data:
            mark("write called")
            stream_send_all = self.stream.send_all

            async def send_all(data) -> None:
                mark("lock held, send_all")
                await stream_send_all(data)

            self.stream.send_all = send_all
            try:
                await protocol_send(self, event)
            finally:
                del self.stream.send_all
            mark("bytes written (the write's checkpoint returned)")
            return
        await protocol_send(self, event)
        if not isinstance(event, RawData):
            early(f"{type(event).__name__}{getattr(event, 'idle', '')} handled")

    tcp.TCPServer.protocol_send = timed_send

    import hypercorn.protocol.h11 as h11p
    import hypercorn.protocol.http_stream as hs
    import hypercorn.trio.task_group as tg

    def wrap_early(owner, name: str, before: str | None, after: str) -> None:
        original = getattr(owner, name)

        async def wrapped(*args, **kwargs):
            if before:
                early(before)
            try:
                return await original(*args, **kwargs)
            finally:
                early(after)

        setattr(owner, name, wrapped)

    wrap_early(h11p.H11Protocol, "_check_protocol", "h11 Request parsed", "protocol checked")
    wrap_early(tg.TaskGroup, "spawn_app", "ASGI scope built", "app task spawned")
    wrap_early(hs.HTTPStream, "app_send", None, "Hypercorn's app_send returned")

    import memlite.http.app as app_module

    shield = app_module._shield_response_end

    def outermost(app) -> None:
        shield(app)
        inner = app.asgi_app

        async def asgi_app(scope, receive, send) -> None:
            if scope["type"] != "http":
                return await inner(scope, receive, send)
            if scope["path"] in ("/probe/dump", "/probe/clear"):
                if scope["path"] == "/probe/dump":
                    await trio.Path(os.environ["PROBE_OUT"]).write_text(json.dumps(RECORDS))
                RECORDS.clear()
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-length", b"2")]})
                await send({"type": "http.response.body", "body": b"ok"})
                return None
            record = {"recv": LAST["recv"], "cpu0": LAST["cpu"], "marks": list(EARLY),
                      "open": True}
            EARLY.clear()
            CURRENT.set(record)
            LAST["rec"] = record
            mark("app called")

            async def send_marked(message) -> None:
                last = not message.get("more_body")
                mark(f"{message['type']}{' (last)' if last else ''} sent by the app")
                await send(message)

            await inner(scope, receive, send_marked)
            mark("app returned")
            record["open"] = False
            if scope["path"].startswith("/api/search") or scope["path"] == "/api/health":
                record["path"] = scope["path"]
                record["cpu"] = process_ns() - record["cpu0"]
                RECORDS.append(record)
            return None

        app.asgi_app = asgi_app

    app_module._shield_response_end = outermost
    headers = app_module._security_headers

    async def after_request(response):
        mark("after_request hook")
        return await headers(response)

    app_module._security_headers = after_request

    import memlite.http.auth as auth

    guard = auth.guard

    async def timed_guard():
        mark("guard in")
        try:
            return await guard()
        finally:
            mark("guard out")

    auth.guard = timed_guard

    import memlite.http.read_api as read_api

    def wrap_async(name: str, before: str, after: str) -> None:
        original = getattr(read_api, name, None)
        if original is None:
            return

        async def wrapped(*args):
            mark(before)
            try:
                return await original(*args)
            finally:
                mark(after)

        setattr(read_api, name, wrapped)

    wrap_async("_search_params", "params in", "params out")  # before round 7
    wrap_async("_run_search", "run_search in", "run_search out")  # before round 7
    wrap_async("run_search", "run_search in", "run_search out")
    jsonify = read_api.jsonify

    def timed_jsonify(*args, **kwargs):
        mark("jsonify in")
        try:
            return jsonify(*args, **kwargs)
        finally:
            mark("jsonify out")

    read_api.jsonify = timed_jsonify

    import memlite.http.queries as queries

    for name in ("search", "index"):
        original = getattr(queries, name)

        def timed(*args, _original=original, **kwargs):
            record = LAST["rec"]  # the reader thread has no context of the request
            t0, c0 = pc(), thread_ns()
            record["marks"].append(("search in", t0))
            try:
                return _original(*args, **kwargs)
            finally:
                record["search_wall"] = pc() - t0
                record["search_cpu"] = thread_ns() - c0
                record["marks"].append(("search out", pc()))

        setattr(queries, name, timed)


if __name__ == "__main__":
    install()
    from memlite.cli import main

    sys.exit(main(["worker", "run"]))
