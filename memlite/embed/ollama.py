"""A local Ollama server's ``/api/embed``, over stdlib ``urllib``.

The width is discovered by embedding one probe text at construction, so a model
that is not pulled (or a server that is not running) fails at load, not at the
first observation.
"""

from __future__ import annotations

import http.client
import json
import logging
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memlite.embed.base import (
    OLLAMA_DEFAULT_MODEL,
    OLLAMA_DEFAULT_URL,
    EmbedderError,
    check_texts,
    empty_matrix,
    unit_rows,
)

if TYPE_CHECKING:
    import numpy

__all__ = ["OllamaEmbedder"]

log = logging.getLogger(__name__)

DEFAULT_URL = OLLAMA_DEFAULT_URL
DEFAULT_MODEL = OLLAMA_DEFAULT_MODEL
TIMEOUT = 30.0
BATCH = 64
_PROBE = "memlite embedding probe"


class OllamaEmbedder:
    """Embeds through ``POST {url}/api/embed``; ``name`` is ``"ollama:<model>"``."""

    def __init__(
        self, url: str = DEFAULT_URL, model: str = DEFAULT_MODEL, *, timeout: float = TIMEOUT
    ) -> None:
        if not model:
            raise EmbedderError("ollama: no model name given")
        self.url = url.rstrip("/")
        self.model = model
        self.name = f"ollama:{model}"
        self.timeout = timeout
        self.dim = 0
        probe = self._post([_PROBE])
        self.dim = len(probe[0])
        if self.dim == 0:
            raise EmbedderError(f"{self.name} at {self.url}: the probe embedding is empty")

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        import numpy as np

        items = check_texts(texts, self.name)
        if not items:
            return empty_matrix(self.dim)
        rows: list[list[float]] = []
        for start in range(0, len(items), BATCH):
            rows.extend(self._post(items[start : start + BATCH]))
        try:
            return unit_rows(np.asarray(rows, dtype=np.float32))
        except ValueError as exc:
            raise EmbedderError(f"{self.name} at {self.url}: unusable vectors: {exc}") from exc

    def close(self) -> None:
        """Nothing to release: each request opens and closes its own connection."""

    def _post(self, texts: list[str]) -> list[list[float]]:
        """One ``/api/embed`` call, checked: one vector per text, all of width ``dim``."""
        where = f"{self.name} at {self.url}"
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        request = urllib.request.Request(
            f"{self.url}/api/embed",
            data=body,
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = _error_text(exc)
            exc.close()
            if exc.code == 404:
                raise EmbedderError(
                    f"{where}: model not found ({detail}); run `ollama pull {self.model}`"
                ) from exc
            raise EmbedderError(f"{where}: HTTP {exc.code} ({detail})") from exc
        except urllib.error.URLError as exc:
            raise EmbedderError(
                f"{where}: cannot connect ({exc.reason}); is `ollama serve` running?"
            ) from exc
        except (TimeoutError, OSError, http.client.HTTPException) as exc:
            raise EmbedderError(f"{where}: request failed: {exc!r}") from exc
        try:
            payload: Any = json.loads(raw)
        except ValueError as exc:
            raise EmbedderError(f"{where}: response is not JSON: {raw[:80]!r}") from exc
        vectors = payload.get("embeddings") if isinstance(payload, dict) else None
        if not isinstance(vectors, list):
            raise EmbedderError(f'{where}: response has no "embeddings" list: {raw[:80]!r}')
        if len(vectors) != len(texts):
            raise EmbedderError(f"{where}: sent {len(texts)} texts, got {len(vectors)} vectors")
        width = self.dim or (len(vectors[0]) if isinstance(vectors[0], list) else -1)
        for vector in vectors:
            if not isinstance(vector, list) or len(vector) != width:
                got = len(vector) if isinstance(vector, list) else type(vector).__name__
                raise EmbedderError(f"{where}: expected vectors of {width} numbers, got {got}")
            if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in vector):
                raise EmbedderError(f"{where}: a vector holds something other than numbers")
        return vectors


def _error_text(exc: urllib.error.HTTPError) -> str:
    """Ollama's ``{"error": "..."}`` body, or the HTTP reason."""
    try:
        body = exc.read(2_000)
        message = json.loads(body).get("error")
    except Exception:
        message = None
    return str(message) if message else str(exc.reason)
