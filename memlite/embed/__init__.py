"""Sentence embedders for semantic search: MiniLM (ONNX), wordllama, or a local Ollama.

All of them are plain synchronous objects (the embedder actor runs them in a
thread). Importing this package is cheap: numpy, onnxruntime and tokenizers are
imported only when a model is built, by :func:`load_embedder`.

``auto`` picks the best model that loads here: MiniLM int8 (quality), then
wordllama (tiny and fast), else no embedder at all (keyword search only).
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

from memlite.embed.base import (
    EMBEDDER_CHOICES,
    MAX_INPUT_CHARS,
    MAX_TEXT_CHARS,
    OLLAMA_DEFAULT_MODEL,
    OLLAMA_DEFAULT_URL,
    Embedder,
    EmbedderError,
    observation_text,
)

__all__ = [
    "EMBEDDER_CHOICES",
    "Embedder",
    "EmbedderError",
    "MAX_INPUT_CHARS",
    "MAX_TEXT_CHARS",
    "OLLAMA_DEFAULT_MODEL",
    "OLLAMA_DEFAULT_URL",
    "load_embedder",
    "observation_text",
]

log = logging.getLogger(__name__)


def load_embedder(
    choice: str,
    *,
    ollama_url: str = OLLAMA_DEFAULT_URL,
    ollama_model: str = OLLAMA_DEFAULT_MODEL,
    data_dir: Path | None = None,
) -> Embedder | None:
    """Build the embedder the ``embedder`` setting names.

    Args:
        choice: one of :data:`EMBEDDER_CHOICES`.
        ollama_url: base URL of the Ollama server, for ``"ollama"``.
        ollama_model: the model Ollama embeds with, for ``"ollama"``.
        data_dir: the worker's data directory: MiniLM's converted copy is cached in its
            ``models/`` (``$MEMLITE_MODEL_CACHE`` wins), never in another one.

    Returns:
        The embedder, or ``None`` for ``"none"`` and for ``"auto"`` when no
        local model loads (a warning says why).

    Raises:
        EmbedderError: an explicit choice failed to load, or ``choice`` is unknown.
    """
    if choice not in EMBEDDER_CHOICES:
        raise EmbedderError(
            f"unknown embedder {choice!r}; choose one of {', '.join(EMBEDDER_CHOICES)}"
        )
    if choice == "none":
        return None
    if choice == "ollama":
        from memlite.embed.ollama import OllamaEmbedder

        return OllamaEmbedder(ollama_url, ollama_model)
    if choice == "minilm":
        return _minilm(data_dir)
    if choice == "wordllama":
        return _wordllama()
    try:
        return _minilm(data_dir)
    except EmbedderError as exc:
        first = exc
    try:
        embedder = _wordllama()
    except EmbedderError as exc:
        log.warning(
            "no embedder: MiniLM failed (%s) and wordllama failed (%s); "
            "search falls back to keywords only",
            first,
            exc,
        )
        return None
    log.warning("MiniLM failed (%s); embedding with %s instead", first, embedder.name)
    return embedder


def _minilm(data_dir: Path | None = None) -> Embedder:
    from memlite.embed.minilm import MiniLMEmbedder, model_cache_dir

    return _wrap(partial(MiniLMEmbedder, cache_dir=model_cache_dir(data_dir)))


def _wordllama() -> Embedder:
    from memlite.embed.wordllama import WordLlamaEmbedder

    return _wrap(WordLlamaEmbedder)


def _wrap(factory) -> Embedder:
    """``factory()``, with any unexpected failure (a broken wheel, say) as EmbedderError."""
    try:
        return factory()
    except EmbedderError:
        raise
    except Exception as exc:
        name = getattr(getattr(factory, "func", factory), "name", "embedder")
        raise EmbedderError(f"{name}: failed to load: {exc!r}") from exc
