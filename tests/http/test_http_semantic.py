"""Semantic and hybrid search over HTTP with a real embedder actor (wordllama), the
embedder's status and reindex routes, and bad search filters."""

from __future__ import annotations

import urllib.parse

import pytest
import trio
from http_helpers import headers, seed_observation, seed_session

from memlite.actors.core import spawn
from memlite.actors.embedder import EmbedderActor
from memlite.embed import load_embedder

WAIT = 30.0  # loading wordllama takes seconds on a loaded machine


def wordllama():
    return load_embedder("wordllama")


@pytest.fixture
async def seeded(storage):
    await seed_session(storage, "a-1")
    await seed_session(storage, "b-1", project="/p/beta")
    ids = {}
    for i, (title, narrative) in enumerate([
        ("Fixed double billing", "Invoices were charged twice when the payment webhook "
                                 "retried"),
        ("Parser crash on empty input", "The markdown parser raised on an empty file"),
        ("Dark theme for the website", "Added a dark colour scheme to the docs"),
    ]):
        ids[title] = await seed_observation(storage, "a-1", title=title, narrative=narrative,
                                            at_ms=1_000 * (i + 1))
    ids["beta"] = await seed_observation(storage, "b-1", title="Billing in beta",
                                         project="/p/beta", at_ms=5_000)
    return ids


async def _embedder_status(client, token):
    response = await client.get("/api/embedder", headers=headers(token))
    assert response.status_code == 200
    return await response.get_json()


async def _wait_ready(client, token, embedded: int):
    with trio.fail_after(WAIT):
        while True:
            body = await _embedder_status(client, token)
            if body["state"] == "ready" and body["embedded"] >= embedded:
                return body
            await trio.sleep(0.02)


@pytest.fixture
async def embedder(services, storage, seeded):
    """A real embedder actor (wordllama) in ``services``, started after the seeding."""
    actor = EmbedderActor(storage, services.db_path, load=wordllama, poll=0.05)
    async with spawn(actor.run) as ref:
        services.embedder = ref
        yield ref
        services.embedder = None


async def _search(client, token, **params):
    response = await client.get(f"/api/search?{urllib.parse.urlencode(params)}",
                                headers=headers(token))
    assert response.status_code == 200, await response.get_data()
    return await response.get_json()


async def test_hybrid_and_semantic_search_use_the_vectors(client, token, seeded, embedder):
    status = await _wait_ready(client, token, embedded=len(seeded))
    assert status["model"] == "wordllama-l2supercat-256" and status["dim"] == 256
    assert status["pending"] == 0 and status["error"] is None
    paraphrase = "customers paid two times for one purchase"
    body = await _search(client, token, q=paraphrase, mode="hybrid", project="/p/alpha")
    assert body["mode"] == "hybrid" and body["mode_used"] == "hybrid" and body["note"] is None
    by_id = {o["id"]: o for o in body["observations"]}
    assert by_id[seeded["Fixed double billing"]]["vector_rank"] == 1  # vectors took part
    assert seeded["beta"] not in by_id  # the project filter held
    semantic = await _search(client, token, q=paraphrase, mode="semantic")
    assert semantic["mode_used"] == "semantic"
    assert semantic["observations"][0]["id"] == seeded["Fixed double billing"]
    fts = await _search(client, token, q=paraphrase, mode="fts")
    assert seeded["Fixed double billing"] not in [o["id"] for o in fts["observations"]]


class _Recording:
    """wordllama, remembering every text it is asked to embed."""

    def __init__(self) -> None:
        self.model = wordllama()
        self.name, self.dim = self.model.name, self.model.dim
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return self.model.embed(texts)

    def __getattr__(self, name):  # close() and whatever else the actor asks the model
        return getattr(self.model, name)


async def test_the_query_is_embedded_without_its_framing(client, token, services, storage,
                                                         seeded):
    recording = _Recording()
    actor = EmbedderActor(storage, services.db_path, load=lambda: recording, poll=0.05)
    async with spawn(actor.run) as ref:
        services.embedder = ref
        try:
            await _wait_ready(client, token, embedded=len(seeded))
            body = await _search(client, token, mode="semantic",
                                 q="can you remind me what the story was with "
                                   "double billing these days")
        finally:
            services.embedder = None
    assert body["mode_used"] == "semantic"
    assert body["observations"][0]["id"] == seeded["Fixed double billing"]
    # The topic and its time cue, not the framing (the cue words stay: round 7).
    assert recording.texts[-1] == "double billing these days"


async def test_reindex_answers_202_and_embeds_again(client, token, seeded, embedder):
    await _wait_ready(client, token, embedded=len(seeded))
    response = await client.post("/api/reindex", headers=headers(token))
    assert response.status_code == 202
    assert await response.get_json() == {"started": True}
    await trio.sleep(0.2)
    status = await _wait_ready(client, token, embedded=len(seeded))
    assert status["embedded"] == len(seeded)  # counted from zero again, all of them
    body = await _search(client, token, q="billing", mode="hybrid")
    assert body["mode_used"] == "hybrid"


async def test_without_an_embedder(client, token, seeded):
    response = await client.post("/api/reindex", headers=headers(token))
    assert response.status_code == 409
    assert "no embedder" in (await response.get_json())["error"]
    status = await _embedder_status(client, token)
    assert status["state"] == "off" and status["model"] is None
    body = await _search(client, token, q="billing", mode="semantic")
    assert body["mode_used"] == "fts" and "no embedder" in body["note"]
    assert {o["id"] for o in body["observations"]} == {seeded["Fixed double billing"],
                                                       seeded["beta"]}


async def test_an_embedder_with_no_model_says_so(client, token, services, storage, seeded):
    async with spawn(EmbedderActor(storage, services.db_path, load=lambda: None,
                                   poll=0.05).run) as ref:
        services.embedder = ref
        with trio.fail_after(WAIT):
            while (await _embedder_status(client, token))["state"] != "off":  # noqa: ASYNC110
                await trio.sleep(0.02)
        response = await client.post("/api/reindex", headers=headers(token))
        assert response.status_code == 409
        assert "no embedding model" in (await response.get_json())["error"]
        body = await _search(client, token, q="billing", mode="hybrid")
        assert body["mode_used"] == "fts" and "EMBEDDER=none" in body["note"]
        services.embedder = None


@pytest.mark.parametrize(("params", "words"), [
    ({"type": "bogus"}, ["type", "bogus", "bugfix"]),
    ({"type": "bugfix,nope"}, ["nope"]),
    ({"since": "2026-02-01", "until": "2026-01-01"}, ["since", "until", "after"]),
    ({"since": "yesterday"}, ["since", "ISO 8601", "yesterday"]),
    ({"until": "2026-13-45"}, ["until", "ISO 8601"]),
    ({"mode": "fuzzy"}, ["mode", "hybrid"]),
    ({"limit": "0"}, ["limit"]),
])
async def test_bad_filters_are_400_with_a_clear_message(client, token, seeded, params, words):
    for path in ("/api/search", "/api/search/index"):
        query = urllib.parse.urlencode({"q": "billing", **params})
        response = await client.get(f"{path}?{query}", headers=headers(token))
        assert response.status_code == 400, await response.get_data()
        body = await response.get_json()
        for word in words:
            assert word.lower() in body["error"].lower(), (word, body)


async def test_filters_over_http(client, token, seeded):
    nowhere = await _search(client, token, q="billing", project="/no/such/project")
    assert nowhere["observations"] == [] and nowhere["project"] == "/no/such/project"
    same_day = await _search(client, token, q="billing", since="1970-01-01",
                             until="1970-01-01", mode="fts")  # a bare until: the whole day
    assert {o["id"] for o in same_day["observations"]} == {seeded["Fixed double billing"],
                                                           seeded["beta"]}
    typed = await _search(client, token, q="billing", type="Discovery, bugfix", mode="fts")
    assert len(typed["observations"]) == 2
    later = await _search(client, token, q="billing", since="1970-01-01T00:00:02Z", mode="fts")
    assert [o["id"] for o in later["observations"]] == [seeded["beta"]]


async def test_imported_claude_mem_types_can_be_filtered(client, token, storage):
    """Issue 13: security_alert / security_note / sensitive are kept on import; search must
    accept them as a type filter instead of answering 400."""
    await seed_session(storage, "c-1")
    alert = await seed_observation(storage, "c-1", title="Billing key in the log",
                                   at_ms=9_000, type="security_alert")
    await seed_observation(storage, "c-1", title="Billing retries", at_ms=9_001)
    found = await _search(client, token, q="billing", type="security_alert", mode="fts")
    assert [o["id"] for o in found["observations"]] == [alert]


async def test_the_query_is_embedded_while_full_text_runs(client, token, services, storage,
                                                           seeded, monkeypatch):
    """The search starts on its reader before the query's embedding is back: the model,
    asked for the query, sees the full-text list already built (sequential code would
    embed first, and the model's wait below would run out)."""
    import threading

    import memlite.storage.search as engine

    fts_done = threading.Event()
    seen: list[bool] = []
    real_fts_list = engine.fts_list

    def fts_list(*args, **kwargs):
        listed = real_fts_list(*args, **kwargs)
        fts_done.set()
        return listed

    class Waiting:
        """wordllama, but a query (one text) waits for the full-text list first."""

        def __init__(self):
            self.inner = wordllama()
            self.name, self.dim = self.inner.name, self.inner.dim

        def embed(self, texts):
            if texts == [query]:
                seen.append(fts_done.wait(timeout=3))
            return self.inner.embed(texts)

        def close(self):
            self.inner.close()

    query = "customers paid two times for one purchase"
    monkeypatch.setattr(engine, "fts_list", fts_list)
    async with spawn(EmbedderActor(storage, services.db_path, load=Waiting, poll=0.05).run) as ref:
        services.embedder = ref
        await _wait_ready(client, token, embedded=len(seeded))
        body = await _search(client, token, q=query, mode="hybrid", project="/p/alpha")
        services.embedder = None
    assert seen == [True]
    assert body["mode_used"] == "hybrid" and body["note"] is None
    assert body["observations"][0]["id"] == seeded["Fixed double billing"]
