"""The read routes: context, search, the compact index, timeline, batch fetch.

Each handler validates its parameters, then does all of its reading in ONE call on a
pooled reader connection (``queries.py``), never through the storage actor; a full-text
search (``mode=fts``) runs on the event loop's own thread within a CPU budget
(``ReaderPool.run_short``), the rest on a reader's thread. ``GET /api/search`` and
``/api/search/index`` with a bearer token are answered in front of Quart by ``fast.py``
(same validation, same search, same bytes); these routes answer every other case. Search runs
``memlite.storage.search``: BM25 with user text quoted token by token (``"``, ``*``,
``OR``, ``(`` or emoji are searched for, never parsed), cosine neighbours of the query's
embedding (asked of the embedder actor), or both fused. Without a usable embedding the
answer is full text, and ``mode_used`` and ``note`` say so.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import trio
from quart import Blueprint, Response, jsonify

from memlite.actors.embedder import EmbedQuery, GetEmbedderStatus, Reindex
from memlite.claudemem import CLAUDE_MEM_TYPES
from memlite.embed.query_text import embedding_query
from memlite.errors import InputError, MemliteError, NotFound
from memlite.http import queries
from memlite.http.params import int_arg, parse_id, read_json_object, str_arg
from memlite.http.state import HttpState, current_state
from memlite.observer.parse import TYPES
from memlite.storage.search import MODES as SEARCH_MODES
from memlite.storage.search import Filters

__all__ = ["MAX_BATCH_IDS", "OBSERVATION_TYPES", "SEARCH_MODES", "blueprint"]

# What the observer writes, and what an import from claude-mem keeps (security_alert...).
OBSERVATION_TYPES = TYPES | frozenset(CLAUDE_MEM_TYPES)

blueprint = Blueprint("read_api", __name__)

MAX_BATCH_IDS = 1000
MAX_QUERY_CHARS = 1000
QUERY_EMBED_SECONDS = 5.0


@blueprint.get("/api/context")
async def context() -> Response:
    """The SessionStart context block for ``project`` (a path: the cwd or any folder of it).

    Answer: ``{"project", "context", "chars", "budget", "layers", "omitted", "reason"?}``:
    ``project`` is the resolved identity (git top level), ``context`` the Markdown block
    (``memlite.context``), ``layers`` what went into it (``name``, ``items``, ``chars``,
    ``tokens``), ``omitted`` what did not fit the budget (``layer``, ``count``), ``reason``
    why the block is empty when it is. The hook prints ``context`` as SessionStart's
    ``hookSpecificOutput.additionalContext``.
    """
    from memlite.context import build_context_for, project_root

    project = str_arg("project", required=True)
    assert project is not None
    try:
        project_root(project)
    except ValueError as exc:
        raise InputError(f"query parameter project: {exc}") from None
    settings = current_state().services.settings
    async with current_state().readers.borrow() as conn:
        block = await conn.async_run(build_context_for, conn, project, settings)
    return jsonify(block.to_json())


def _epoch_ms(name: str, args: Mapping[str, str] | None, *, end_of_day: bool) -> int | None:
    raw = str_arg(name, max_len=40, args=args)
    if raw is None:
        return None
    try:
        moment = datetime.fromisoformat(raw.replace(" ", "T", 1))
    except ValueError:
        raise InputError(f"query parameter {name} must be an ISO 8601 date or time such as "
                         f"2026-01-31 or 2026-01-31T14:00:00Z, not {raw!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if end_of_day and len(raw) == 10:  # a bare date: the whole of that day
        moment += timedelta(days=1, milliseconds=-1)
    return int(moment.timestamp() * 1000)


def _filters(args: Mapping[str, str] | None) -> Filters:
    """``project``, ``type`` (comma-separated), ``since``/``until``, ``file``, ``session``."""
    types: tuple[str, ...] = ()
    raw_types = str_arg("type", max_len=200, args=args)
    if raw_types:
        types = tuple(dict.fromkeys(t.strip().lower() for t in raw_types.split(",")
                                    if t.strip()))
        unknown = [t for t in types if t not in OBSERVATION_TYPES]
        if unknown:
            raise InputError(f"query parameter type: {unknown[0]!r} is not an observation "
                             f"type; the types are {', '.join(sorted(OBSERVATION_TYPES))}")
    since = _epoch_ms("since", args, end_of_day=False)
    until = _epoch_ms("until", args, end_of_day=True)
    if since is not None and until is not None and since > until:
        raise InputError("query parameters since and until: since is after until, so the "
                         "date range is empty")
    return Filters(project=str_arg("project", args=args), types=types, since_ms=since,
                   until_ms=until, file=str_arg("file", max_len=500, args=args),
                   session_id=str_arg("session", max_len=200, args=args))


def search_params(args: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Everything a search request asks for, validated (the embedding comes apart).

    ``args``: the query parameters (first value of each name); default the current
    Quart request's. Raises ``InputError`` (a 400) on the first bad one."""
    q = str_arg("q", required=True, max_len=MAX_QUERY_CHARS, args=args)
    assert q is not None
    mode = (str_arg("mode", args=args) or "hybrid").lower()
    if mode not in SEARCH_MODES:
        raise InputError(f"query parameter mode must be one of {', '.join(SEARCH_MODES)}")
    return {"q": q, "mode": mode, "filters": _filters(args),
            "limit": int_arg("limit", 20, low=1, high=100, args=args)}


async def run_search(state: HttpState, run: Any, params: dict[str, Any]) -> dict[str, Any]:
    """``run`` (``queries.search`` or ``queries.index``) on a pooled reader, while the
    embedder actor embeds the query.

    The two overlap: the search starts on the reader's thread at once and builds its
    full-text list; it waits for the embedding only when it needs it (``VectorSource``
    in ``memlite.storage.search``). Embedding first, then searching, cost the sum of the
    two (MiniLM ~3 ms, the BM25 list as much at 100k observations).
    """
    if params["mode"] == "fts":
        # Full text alone is a short read (~1-3 ms at 10,000 observations): on this
        # thread, no hop to a reader's thread and back; moved to one past a CPU budget
        # (``ReaderPool.run_short``).
        result: dict[str, Any] = await state.readers.run_short(run, **params, vector=None)
        return result
    embedded: concurrent.futures.Future[tuple[bytes | None, str | None]] = \
        concurrent.futures.Future()

    async def embed() -> None:
        try:
            embedded.set_result(await _query_vector(state, params["q"]))
        finally:  # cancelled or failed: the reader thread must not wait for nothing
            if not embedded.done():
                embedded.set_result((None, "the query embedding was cancelled"))

    def vector() -> tuple[bytes | None, str | None]:
        try:
            return embedded.result(timeout=QUERY_EMBED_SECONDS + 1)
        except concurrent.futures.TimeoutError:
            return None, "the embedder did not answer in time"

    async with trio.open_nursery() as nursery:
        nursery.start_soon(embed)
        async with state.readers.borrow() as conn:
            result = await conn.async_run(run, conn, **params, vector=vector)
    return result


async def _query_vector(state: HttpState, q: str) -> tuple[bytes | None, str | None]:
    """The query's embedding from the embedder actor, or None and why not. What is
    embedded is the query without its leading framing, time cue words kept
    (``memlite.embed.query_text``)."""
    embedder = state.services.embedder
    if embedder is None:
        return None, "this server runs no embedder"
    text = embedding_query(q)
    try:
        vector = await embedder.ask(lambda reply: EmbedQuery(text=text, reply=reply),
                                    timeout=QUERY_EMBED_SECONDS)
    except MemliteError as exc:
        return None, f"the embedder did not answer ({exc})"
    if vector is None:
        status = await _embedder_status(embedder)
        state = status.get("state") if status else "unknown"
        return None, {"off": "no embedding model is configured (EMBEDDER=none)",
                      "loading": "the embedding model is still loading",
                      "failed": f"the embedding model failed to load: "
                                f"{(status or {}).get('error')}"}.get(
            str(state), "the query could not be embedded")
    return vector, None


async def _embedder_status(embedder: Any) -> dict[str, Any] | None:
    try:
        status = await embedder.ask(lambda reply: GetEmbedderStatus(reply=reply), timeout=2)
    except MemliteError:
        return None
    return status.to_json()


@blueprint.get("/api/search")
async def search() -> Response:
    """``?q=&mode=fts|semantic|hybrid&project=&type=&since=&until=&file=&session=&limit=``.

    Observations through the search engine (``memlite.storage.search``: BM25, vectors,
    or both fused; default hybrid) with the filters; summaries and prompts by full text
    in the same project. Answer: ``{"query", "mode", "mode_used", "note", "project",
    "observations", "summaries", "prompts"}``; each observation is the full record plus
    ``score`` (higher is better), ``tokens``, ``fts_rank`` and ``vector_rank``; summaries
    and prompts carry ``score`` as BM25 (lower is better). ``mode_used`` says what ran:
    ``fts`` when vectors were asked for but none could be used, and ``note`` says why.
    """
    params = search_params()
    return jsonify(search_body(await run_search(current_state(), queries.search, params),
                               params))


@blueprint.get("/api/search/index")
async def search_index() -> Response:
    """The compact index (MCP ``memory_search``), same parameters as ``/api/search``:
    ``{"query", "mode", "mode_used", "note", "count", "results": [{"id", "date", "type",
    "title", "project", "session_id", "tokens", "files", "score"}]}``."""
    params = search_params()
    return jsonify(index_body(await run_search(current_state(), queries.index, params),
                              params))


def search_body(found: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """``/api/search``'s answer around what ``queries.search`` found."""
    return {"query": params["q"], "project": params["filters"].project, **found}


def index_body(found: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """``/api/search/index``'s answer around what ``queries.index`` found."""
    return {"query": params["q"], **found}


@blueprint.get("/api/embedder")
async def embedder_status() -> Response:
    """The embedder's state: ``{"state", "model", "dim", "pending", "embedded",
    "skipped", "per_second", "error"}``; ``state`` is ``off`` when none runs."""
    embedder = current_state().services.embedder
    status = await _embedder_status(embedder) if embedder is not None else None
    if status is None:
        status = {"state": "off", "model": None, "dim": None, "pending": 0, "embedded": 0,
                  "skipped": 0, "per_second": None, "error": None}
    return jsonify(status)


@blueprint.post("/api/reindex")
async def reindex() -> Response:
    """Drop every vector and embed all observations again (``memlite reindex``).

    Answer 202 ``{"started": true}``; follow progress at ``/api/embedder``. 409 when no
    embedding model is loaded.
    """
    embedder = current_state().services.embedder
    if embedder is None:
        raise InputError("this server runs no embedder", status=409)
    try:
        await embedder.ask(lambda reply: Reindex(reply=reply), timeout=5)
    except MemliteError as exc:
        raise InputError(str(exc), status=409) from None
    return jsonify({"started": True}), 202


@blueprint.get("/api/timeline")
async def timeline() -> Response:
    """``?anchor=<id>&before=5&after=5&scope=project|session``: observations around one.

    Answer: ``{"anchor", "scope", "project", "session_id", "observations"}`` in time order
    (oldest first, the anchor among them); 404 when the anchor does not exist.
    """
    anchor = parse_id(str_arg("anchor", required=True), "query parameter anchor")
    before = int_arg("before", 5, low=0, high=100)
    after = int_arg("after", 5, low=0, high=100)
    scope = (str_arg("scope") or "project").lower()
    if scope not in ("project", "session"):
        raise InputError("query parameter scope must be project or session")
    async with current_state().readers.borrow() as conn:
        found = await conn.async_run(queries.timeline, conn, anchor, before=before,
                                     after=after, scope=scope)
    if found is None:
        raise NotFound(f"no observation {anchor}")
    return jsonify(found)


@blueprint.post("/api/observations/batch")
async def observations_batch() -> Response:
    """``{"ids": [1, 2, ...]}`` (at most 1000) -> ``{"observations": [...], "missing": [...]}``.

    Records come back in the order asked, each once; ids that name nothing are listed in
    ``missing`` rather than failing the batch.
    """
    body = await read_json_object()
    ids = body.get("ids")
    if not isinstance(ids, list):
        raise InputError('field ids is required and must be an array of observation ids')
    if len(ids) > MAX_BATCH_IDS:
        raise InputError(f"field ids has {len(ids)} ids; at most {MAX_BATCH_IDS} per request")
    wanted = list(dict.fromkeys(
        parse_id(raw, f"ids[{i}]", text=False) for i, raw in enumerate(ids)))
    async with current_state().readers.borrow() as conn:
        found = await conn.async_run(queries.batch, conn, wanted)
    return jsonify(found)
