"""memlite's MCP server through mcp's own Client over stdio, with a real worker.

The server under test is the plugin's launcher (``plugin/scripts/memlite-mcp`` -> the lean
standard-library server) unless a test says otherwise; the worker runs on a free port in
the test's data directory, seeded with five observations in two projects.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import trio
from mcp_helpers import REPO, connect, text_of, worker_pids

pytestmark = pytest.mark.timeout(120)

WORKFLOW = ("memory_search", "memory_timeline", "memory_get")


def ids_in(text: str) -> list[int]:
    return [int(m) for m in re.findall(r"#(\d+)\b", text)]


async def call(client, name: str, args: dict) -> tuple[str, bool]:
    result = await client.call_tool(name, args)
    return text_of(result), bool(result.is_error)


async def test_three_tools_whose_descriptions_teach_the_workflow(mcp_env):
    async with connect(mcp_env) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == sorted(WORKFLOW)
    for tool in tools.values():
        text = tool.description
        assert all(name in text for name in WORKFLOW if name != tool.name), (tool.name, text)
        assert tool.input_schema["type"] == "object"
    assert "COMPACT INDEX" in tools["memory_search"].description
    assert tools["memory_search"].input_schema["required"] == ["query"]
    assert tools["memory_timeline"].input_schema["required"] == ["anchor"]
    assert tools["memory_get"].input_schema["properties"]["ids"]["maxItems"] == 100


async def test_search_timeline_get_round_trip(mcp_env, worker, seeded):
    async with connect(mcp_env) as client:
        text, error = await call(client, "memory_search", {"query": "parser",
                                                           "project": "/p/alpha"})
        assert not error, text
        found = ids_in(text)
        assert set(found) == {seeded["alpha"], seeded["change"], seeded["bugfix"]}, text
        assert "taught the parser empty input" in text and "tokens)" in text
        assert "beta project" not in text

        text, error = await call(client, "memory_timeline", {"anchor": seeded["change"],
                                                             "before": 5, "after": 5})
        assert not error, text
        order = ids_in(text)
        assert order == [seeded["alpha"], seeded["change"], seeded["bugfix"], seeded["later"]]
        assert f">> #{seeded['change']}" in text

        text, error = await call(client, "memory_timeline", {"anchor": seeded["change"],
                                                             "scope": "session"})
        assert not error and seeded["later"] not in ids_in(text), text

        text, error = await call(client, "memory_get", {"ids": [seeded["bugfix"],
                                                                seeded["change"], 987654]})
        assert not error, text
        records = json.loads(text[text.index("\n") + 1:])
        assert [r["id"] for r in records] == [seeded["bugfix"], seeded["change"]]
        assert records[1]["narrative"].startswith("Narrative of: taught the parser")
        assert records[1]["files_modified"] == ["memlite/parser.py", "tests/test_parser.py"]
        assert "no observation with id 987654" in text


async def test_filters(mcp_env, worker, seeded):
    async with connect(mcp_env) as client:
        text, error = await call(client, "memory_search", {"query": "parser", "type": "bugfix"})
        assert not error and ids_in(text) == [seeded["bugfix"]], text
        text, error = await call(client, "memory_search", {
            "query": "parser", "since": "2026-01-11", "until": "2026-01-11"})
        assert not error and ids_in(text) == [seeded["change"]], text
        text, error = await call(client, "memory_search", {
            "query": "parser", "since": "2026-01-12T00:00:00Z"})
        assert not error and set(ids_in(text)) == {seeded["bugfix"], seeded["beta"]}, text
        text, error = await call(client, "memory_search", {"query": "parser", "limit": 1})
        assert not error and len(ids_in(text)) == 1, text
        text, error = await call(client, "memory_search", {"query": "parser",
                                                           "file": "tests/test_parser.py"})
        assert not error and ids_in(text) == [seeded["change"]], text
        text, error = await call(client, "memory_search", {"query": "parser", "mode": "fts",
                                                           "type": "bugfix,change"})
        expected = {seeded["bugfix"], seeded["change"], seeded["beta"]}
        assert not error and set(ids_in(text)) == expected, text
        # Hybrid may add neighbours by meaning, but never one of another type.
        text, error = await call(client, "memory_search", {"query": "parser",
                                                           "type": "bugfix,change"})
        assert not error and expected <= set(ids_in(text)), text
        assert seeded["alpha"] not in ids_in(text), text
        text, error = await call(client, "memory_search", {"query": "parser",
                                                           "project": "/no/such/project"})
        assert not error and "No memory matches" in text, text


BAD_CALLS = [
    ("memory_search", {"query": "x", "since": "2026-02-01", "until": "2026-01-01"}, "after"),
    ("memory_search", {"query": "x", "since": "yesterday"}, "ISO 8601"),
    ("memory_search", {"query": "x", "type": "no-such-type"}, "not an observation type"),
    ("memory_search", {"query": "x", "mode": "psychic"}, "hybrid, fts or semantic"),
    ("memory_search", {}, "query is required"),
    ("memory_search", {"query": "   "}, "query is required"),
    ("memory_search", {"query": 42}, "must be a string"),
    ("memory_search", {"query": "x" * 5000}, "longer than"),
    ("memory_search", {"query": "x", "limit": 0}, "between 1 and 100"),
    ("memory_search", {"query": "x", "limit": 10**6}, "between 1 and 100"),
    ("memory_search", {"query": "x", "limit": "many"}, "whole number"),
    ("memory_search", {"query": "x", "project": ["a"]}, "must be a string"),
    ("memory_timeline", {}, "anchor is required"),
    ("memory_timeline", {"anchor": 0}, "between 1"),
    ("memory_timeline", {"anchor": 2**70}, "between 1"),
    ("memory_timeline", {"anchor": "abc"}, "whole number"),
    ("memory_timeline", {"anchor": 999999}, "no observation 999999"),
    ("memory_timeline", {"anchor": 1, "scope": "galaxy"}, "project or session"),
    ("memory_timeline", {"anchor": 1, "before": -1}, "between 0 and 100"),
    ("memory_get", {"ids": list(range(1, 10_001))}, "at most 100 ids"),
    ("memory_get", {"ids": []}, "ids is required"),
    ("memory_get", {"ids": None}, "ids is required"),
    ("memory_get", {"ids": ["x"]}, "whole number"),
    ("memory_get", {"ids": [True]}, "whole number"),
    ("memory_get", {"ids": [-5]}, "between 1"),
    ("memory_forget", {"ids": [1]}, "unknown tool"),
]


async def test_search_finds_by_meaning_once_the_worker_embedded_memory(mcp_env, worker, seeded):
    """The worker here runs the default model (EMBEDDER=auto: MiniLM); a question with no
    word in common with the observation finds it by meaning, and fts says it cannot."""
    question = {"query": "the program blew up on smiley symbols in headings",
                "project": "/p/alpha"}
    async with connect(mcp_env) as client:
        with trio.fail_after(60):  # the worker loads the model, then embeds the five
            while True:
                text, error = await call(client, "memory_search", question)
                assert not error, text
                if ids_in(text)[:1] == [seeded["bugfix"]]:
                    break
                await trio.sleep(0.2)
        assert "answered with full text" not in text
        text, error = await call(client, "memory_search", {**question, "mode": "fts"})
        assert not error and "No memory matches" in text, text


async def test_bad_input_is_a_clear_error_and_the_server_keeps_answering(mcp_env, worker,
                                                                          seeded):
    async with connect(mcp_env) as client:
        for name, args, expected in BAD_CALLS:
            text, error = await call(client, name, args)
            assert error, (name, args, text)
            assert expected in text, (name, args, text)
        # Any query string is a valid search (never an error).
        for query in ['"', "*", "-", "OR", "((", "parser)", "NOT AND", "🦀 emoji", "a\x00b",
                      "\\", "'; DROP TABLE observations; --", "\ud7ff"]:
            text, error = await call(client, "memory_search", {"query": query})
            assert not error, (query, text)
        text, error = await call(client, "memory_search", {"query": "parser"})
        assert not error and seeded["change"] in ids_in(text)
        assert len((await client.list_tools()).tools) == 3


async def test_worker_down_the_server_starts_it(mcp_env, seeded, data_dir):
    assert worker_pids(data_dir) == set()
    async with connect(mcp_env) as client:
        text, error = await call(client, "memory_search", {"query": "greeting"})
    assert not error and ids_in(text) == [seeded["later"]], text
    assert worker_pids(data_dir), "the MCP server should have started the worker"
    assert "starting it" in (data_dir / "mcp.log").read_text()


@pytest.mark.skipif(not (os.path.exists("/usr/bin/python3")
                         or os.path.exists("/usr/local/bin/python3")),
                    reason="needs a system python3 for the launcher's fallback")
async def test_without_the_plugin_venv_it_starts_and_says_still_installing(mcp_env, seeded,
                                                                           data_dir):
    env = {k: v for k, v in mcp_env.items() if k != "MEMLITE_PYTHON"}
    async with connect(env) as client:
        assert len((await client.list_tools()).tools) == 3
        text, error = await call(client, "memory_search", {"query": "parser"})
        assert error and "memlite is still installing" in text, text
        text, error = await call(client, "memory_get", {"ids": [1]})
        assert error and "still installing" in text
    assert worker_pids(data_dir) == set()


async def test_a_failed_plugin_venv_build_is_said_not_still_installing(mcp_env, seeded,
                                                                        data_dir, tmp_path):
    """After a failed build the tools say why and where the log is, not "in a minute"
    (seen in a round-6 trial: a build that could not reach the package index)."""
    plugin_data = tmp_path / "plugin-data"
    plugin_data.mkdir()
    (plugin_data / "venv-status.json").write_text(json.dumps({
        "state": "failed", "attempt": 2, "time": 1.0, "retry_at": 4102444800.0,
        "error": "pip install failed: No matching distribution found for trio"}))
    # retry_at is far ahead: no build starts here (ensure_venv waits out the backoff)
    env = {k: v for k, v in mcp_env.items() if k != "MEMLITE_PYTHON"}
    env["CLAUDE_PLUGIN_DATA"] = str(plugin_data)
    async with connect(env) as client:
        text, error = await call(client, "memory_search", {"query": "parser"})
    assert error and "still installing" not in text, text
    assert "memlite cannot start" in text and "No matching distribution found" in text, text
    assert "venv-install.log" in text, text
    assert worker_pids(data_dir) == set()


@pytest.mark.parametrize("impl", ["lean", "mcpserver"])
async def test_memlite_mcp_cli_both_implementations(mcp_env, worker, seeded, impl):
    argv = (sys.executable, "-m", "memlite", "mcp", "--impl", impl)
    async with connect(mcp_env, *argv) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert names == sorted(WORKFLOW)
        text, error = await call(client, "memory_search", {"query": "emoji"})
        assert not error and ids_in(text) == [seeded["bugfix"]], text
        text, error = await call(client, "memory_get", {"ids": list(range(1, 10_001))})
        assert error and "at most 100 ids" in text
        text, error = await call(client, "memory_get", {"ids": [seeded["bugfix"]]})
        assert not error and "fixed parser crash on emoji titles" in text


def test_raw_protocol_handshake_era_and_garbage(mcp_env):
    """The 2025 handshake, a line of garbage, unknown methods: answered, never a crash;
    stdout carries nothing but JSON-RPC lines."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "this is not json",
        [1, 2],
        {"jsonrpc": "2.0", "id": 2, "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": "wrong"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "memory_get", "arguments": "not an object"}},
        {"jsonrpc": "2.0", "id": 5, "method": "server/discover", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}},
        {"jsonrpc": "2.0", "id": 6, "method": "ping"},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
    ]
    stdin = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    done = subprocess.run([str(REPO / "plugin" / "scripts" / "memlite-mcp")],
                          input=stdin.encode() + b"\xff\xfe garbage bytes\n", env=mcp_env,
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {r.get("id"): r for r in replies if r.get("id") is not None}
    assert 2 in by_id, replies
    assert by_id[1]["result"]["protocolVersion"] == "2025-06-18"
    assert by_id[1]["result"]["serverInfo"]["name"] == "memlite"
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["error"]["code"] == -32602
    assert by_id[4]["result"]["isError"] is True
    assert by_id[5]["error"]["code"] == -32022
    assert "2026-07-28" in by_id[5]["error"]["data"]["supported"]
    assert by_id[6]["result"] == {}
    assert len(by_id[7]["result"]["tools"]) == 3
    codes = [r["error"]["code"] for r in replies if r.get("id") is None]
    assert codes.count(-32700) == 2 and -32600 in codes, replies


async def test_mcp_enabled_false_lists_no_tools(mcp_env):
    env = {**mcp_env, "MEMLITE_MCP_ENABLED": "false"}
    async with connect(env) as client:
        assert (await client.list_tools()).tools == []
        text, error = await call(client, "memory_search", {"query": "x"})
        assert error and "MCP_ENABLED=false" in text


def test_a_lone_surrogate_in_an_argument_is_searched_not_an_encoding_error(mcp_env, worker,
                                                                          seeded):
    """JSON may escape a lone surrogate (``"\\udcff"``), which no UTF-8 request can carry:
    the search runs (as U+FFFD) instead of failing with UnicodeEncodeError, and a filter
    holding one is refused by its own rule. (The SDK's client cannot send one: raw lines.)"""
    calls = [{"query": "parser \udcff"}, {"query": "\ud800"},
             {"query": "parser", "type": "bug\udcff"}]
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
               "params": {"name": "memory_search", "arguments": args}}
              for n, args in enumerate(calls)]
    stdin = "".join(json.dumps(x) + "\n" for x in lines)  # ASCII: "\udcff" escapes
    done = subprocess.run([str(REPO / "plugin" / "scripts" / "memlite-mcp")],
                          input=stdin.encode(), env=mcp_env, capture_output=True, timeout=60)
    by_id = {r.get("id"): r["result"] for r in map(json.loads, done.stdout.splitlines())
             if r.get("id", 0) >= 10}
    texts = [by_id[10 + n]["content"][0]["text"] for n in range(len(calls))]
    assert not by_id[10]["isError"] and seeded["bugfix"] in ids_in(texts[0]), texts[0]
    assert not by_id[11]["isError"], texts[1]
    assert by_id[12]["isError"] and "not an observation type" in texts[2], texts[2]
    assert not any("UnicodeEncodeError" in t for t in texts), texts
