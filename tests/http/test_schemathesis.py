"""Schemathesis against a REAL worker on loopback: the schema is the worker's own
``GET /api/openapi.json``; every documented operation (but the SSE stream) gets 25
positive and 12 negative generated inputs. No 5xx, every answer within 5 s, and status
codes, content types and bodies as documented. The campaign is ``bench/bench_fuzz.py``'s
(which runs it bigger and writes BENCHMARKS.md)."""

from __future__ import annotations

import http.client

import pytest

from bench.bench_fuzz import EXCLUDED, api_campaign, start_worker, stop_worker, worker_env
from memlite.http.openapi import SPEC

EXAMPLES = 25
METHODS = {"get", "put", "post", "delete", "patch"}

pytestmark = pytest.mark.slow


@pytest.fixture
def running(data_dir):
    info = start_worker(worker_env(data_dir))
    try:
        yield info["port"], (data_dir / "token").read_text().strip()
    finally:
        stop_worker(data_dir)


def _status(port: int, path: str, hdrs: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path, headers=hdrs)
        return conn.getresponse().status
    finally:
        conn.close()


def test_the_served_schema_needs_the_token(running):
    port, token = running
    assert _status(port, "/api/openapi.json", {}) == 401
    assert _status(port, "/api/openapi.json", {"Authorization": f"Bearer {token}"}) == 200


def test_generated_requests_get_documented_answers(running):
    port, token = running
    figures = api_campaign(port, token, EXAMPLES, negative=EXAMPLES // 2)
    documented = {(method.upper(), path) for path, item in SPEC["paths"].items()
                  for method in set(item) & METHODS}
    # schemathesis does not fuzz the URL it loaded the schema from
    expected = documented - EXCLUDED - {("GET", "/api/openapi.json")}
    print(f"\nschemathesis: {figures['operations']} operations, {figures['inputs']} inputs, "
          f"{len(figures['failures'])} failures, {figures['server_errors']} 5xx, slowest "
          f"{figures['slowest'] * 1000:.0f} ms, {figures['seconds']:.1f} s, statuses "
          f"{dict(sorted(figures['statuses'].items()))}")
    assert set(figures["covered"]) == expected
    assert figures["operations"] == len(expected)
    assert figures["inputs"] >= figures["operations"] * EXAMPLES
    assert figures["server_errors"] == 0
    assert figures["slowest"] < 5.0
    assert not figures["failures"], figures["failures"][:5]
    assert figures["statuses"][200] > 0 and figures["statuses"][400] > 0
