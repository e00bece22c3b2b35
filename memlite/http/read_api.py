"""The read routes: context, search, the compact index, timeline, batch fetch.

Each handler validates its parameters, then does all of its reading in ONE call on a
pooled reader connection (``queries.py``), never through the storage actor. Search is
FTS5/BM25 with user text quoted token by token (``memlite.storage.fts``), so ``"``, ``*``,
``OR``, ``(`` or emoji are searched for, never parsed. Semantic search needs the embedder
(a later issue): ``mode=semantic|hybrid`` is answered with full-text search and says so in
``mode_used`` and ``note``, never with made-up vectors.
"""

from __future__ import annotations

from quart import Blueprint, Response, jsonify

from memlite.errors import InputError, NotFound
from memlite.http import queries
from memlite.http.params import int_arg, parse_id, read_json_object, str_arg
from memlite.http.state import current_state

__all__ = ["MAX_BATCH_IDS", "SEARCH_MODES", "blueprint"]

blueprint = Blueprint("read_api", __name__)

MAX_BATCH_IDS = 1000
SEARCH_MODES = ("fts", "semantic", "hybrid")
MAX_QUERY_CHARS = 1000
_NO_VECTORS = ("semantic search needs the embedder, which is not built yet: "
               "answered with full-text search (BM25)")


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


def _search_params() -> tuple[str, str | None, int]:
    q = str_arg("q", required=True, max_len=MAX_QUERY_CHARS)
    assert q is not None
    return q, str_arg("project"), int_arg("limit", 20, low=1, high=100)


@blueprint.get("/api/search")
async def search() -> Response:
    """``?q=&mode=fts|semantic|hybrid&project=&limit=`` over observations, summaries, prompts.

    Answer: ``{"query", "mode", "mode_used", "note", "project", "observations",
    "summaries", "prompts"}``; each hit is the full record plus ``score`` (BM25, lower is
    better) and, for observations, ``tokens``.
    """
    q, project, limit = _search_params()
    mode = (str_arg("mode") or "hybrid").lower()
    if mode not in SEARCH_MODES:
        raise InputError(f"query parameter mode must be one of {', '.join(SEARCH_MODES)}")
    async with current_state().readers.borrow() as conn:
        found = await conn.async_run(queries.search, conn, q, project=project, limit=limit)
    return jsonify({"query": q, "mode": mode, "mode_used": "fts",
                    "note": None if mode == "fts" else _NO_VECTORS, "project": project,
                    **found})


@blueprint.get("/api/search/index")
async def search_index() -> Response:
    """``?q=&project=&limit=``: ``{"query", "mode_used", "count", "results": [{"id", "date",
    "type", "title", "project", "session_id", "tokens", "score"}]}``."""
    q, project, limit = _search_params()
    async with current_state().readers.borrow() as conn:
        results = await conn.async_run(queries.index, conn, q, project=project, limit=limit)
    return jsonify({"query": q, "mode_used": "fts", "count": len(results), "results": results})


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
