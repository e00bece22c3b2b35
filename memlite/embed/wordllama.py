"""WordLlama l2_supercat, 256-d: static token embeddings, mean-pooled. Pure numpy.

Sub-millisecond per sentence and 16 MB of weights shipped inside the wheel. The
quality option is MiniLM (``minilm.py``); this is the light fallback.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memlite.embed.base import EmbedderError, check_texts, empty_matrix, unit_rows

if TYPE_CHECKING:
    import numpy

__all__ = ["WordLlamaEmbedder"]

log = logging.getLogger(__name__)

#: Tokens averaged per text. Static embeddings need no cap for quality, but the
#: batch is padded to its longest text, so one 100 kB text would cost
#: batch x tokens x 256 floats.
MAX_TOKENS = 512
BATCH = 64


class WordLlamaEmbedder:
    """The wordllama 0.4.0.post1 bundled model, loaded without any network access."""

    name = "wordllama-l2supercat-256"
    dim = 256

    def __init__(self) -> None:
        try:
            import wordllama

            # 0.4.0.post1 looks for its bundled tokenizer under "tokenizer/" but
            # ships "tokenizers/", then falls back to HuggingFace. Pointing
            # cache_dir at the package finds both files and never downloads.
            model = wordllama.WordLlama.load(
                cache_dir=Path(wordllama.__file__).parent, disable_download=True
            )
            model.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        except Exception as exc:
            raise EmbedderError(f"{self.name}: could not load the bundled model: {exc}") from exc
        width = int(model.embedding.shape[1])
        if width != self.dim:
            raise EmbedderError(f"{self.name}: bundled model is {width}-d, not {self.dim}-d")
        self._model = model

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        items = check_texts(texts, self.name)
        if not items:
            return empty_matrix(self.dim)
        model = self._model
        if model is None:
            raise EmbedderError(f"{self.name}: embed() after close()")
        try:
            raw = model.embed(items, norm=False, batch_size=BATCH)
            return unit_rows(raw)
        except Exception as exc:
            raise EmbedderError(f"{self.name}: embedding {len(items)} texts failed: {exc}") from exc

    def close(self) -> None:
        self._model = None
