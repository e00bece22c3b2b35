"""The embedder interface, its error, and the text we embed for one observation.

Nothing here imports numpy: ``import memlite.embed`` has to stay cheap because the
worker imports it at start and the stdlib-only hooks sit next to it. The models
import their heavy libraries in their constructors.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memlite.errors import MemliteError

if TYPE_CHECKING:
    import numpy

__all__ = [
    "EMBEDDER_CHOICES",
    "Embedder",
    "EmbedderError",
    "MAX_INPUT_CHARS",
    "MAX_TEXT_CHARS",
    "OLLAMA_DEFAULT_MODEL",
    "OLLAMA_DEFAULT_URL",
    "observation_text",
]

#: Values of the ``embedder`` setting. ``auto`` prefers MiniLM, then wordllama.
EMBEDDER_CHOICES = ("auto", "minilm", "wordllama", "ollama", "none")

OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434"
OLLAMA_DEFAULT_MODEL = "bge-m3"

#: Upper bound on the text built for one observation, so that one huge record
#: cannot stall (or blow up the padding of) a whole batch.
MAX_TEXT_CHARS = 2_000

#: Upper bound on any one text handed to ``embed()``. The models truncate sooner
#: (in tokens); this bounds the tokenizer's work on a 100 kB paste.
MAX_INPUT_CHARS = 32_000

_SURROGATE = re.compile("[\ud800-\udfff]")

# Per-field caps inside MAX_TEXT_CHARS: a long narrative must not push the
# concepts and file names (short, high-signal) out of the text; together they fit.
_FIELD_CAPS = {
    "title": 200,
    "subtitle": 200,
    "facts": 550,
    "narrative": 650,
    "concepts": 150,
    "files": 245,
}
assert sum(_FIELD_CAPS.values()) + len(_FIELD_CAPS) - 1 <= MAX_TEXT_CHARS


class EmbedderError(MemliteError):
    """An embedding model failed to load or to embed.

    The message names the model (or URL) and what failed, and says what to do
    when there is something to do (``ollama pull <model>``).
    """


@runtime_checkable
class Embedder(Protocol):
    """A sentence embedding model.

    Attributes:
        name: stable model id recorded in the database next to each vector
            (``"minilm-l6-v2-int8"``, ``"wordllama-l2supercat-256"``, ``"ollama:<model>"``).
        dim: the vector width.
    """

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """Embed ``texts``: float32, shape ``(len(texts), dim)``, each row of unit L2 norm.

        An empty sequence gives shape ``(0, dim)``. Raises :class:`EmbedderError`.
        """
        ...

    def close(self) -> None:
        """Release the model (sessions, sockets). Safe to call twice."""
        ...


def observation_text(
    title: str,
    subtitle: str,
    narrative: str,
    facts: Iterable[str] | str | None,
    concepts: Iterable[str] | str | None,
    files: Iterable[str] | str | None,
) -> str:
    """The text embedded for one observation, at most :data:`MAX_TEXT_CHARS` long.

    Order: title, subtitle, facts, narrative, concepts, then each file as
    ``basename path`` so that a query naming just ``db.py`` still matches.
    List fields may be sequences of strings or the JSON array text stored in the
    database.
    """
    file_words = []
    for path in dict.fromkeys(_strings(files)):  # read and modified lists overlap
        base = os.path.basename(path.rstrip("/\\")) or path
        file_words.append(base if base == path else f"{base} {path}")
    fields = {
        "title": (title or "").strip(),
        "subtitle": (subtitle or "").strip(),
        "facts": "\n".join(_strings(facts)),
        "narrative": (narrative or "").strip(),
        "concepts": ", ".join(_strings(concepts)),
        "files": "\n".join(file_words),
    }
    parts = [_clip(text, _FIELD_CAPS[key]) for key, text in fields.items() if text]
    return _clip("\n".join(parts), MAX_TEXT_CHARS)


def _strings(value: Iterable[Any] | str | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                decoded = json.loads(text)
            except ValueError:
                return [text]
            if isinstance(decoded, list):
                value = decoded
            else:
                return [text]
        else:
            return [text] if text else []
    return [str(item).strip() for item in value if item is not None and str(item).strip()]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip()


def unit_rows(matrix: numpy.ndarray) -> numpy.ndarray:
    """``matrix`` as float32 with each row scaled to unit L2 norm.

    A row with no direction (all zeros: text with no known tokens) becomes the
    constant unit vector, so every stored vector has a defined cosine distance.
    """
    import numpy as np

    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-d matrix, got shape {out.shape}")
    out = np.array(out, dtype=np.float32, copy=True)
    if not np.isfinite(out).all():
        raise ValueError("embedding contains NaN or infinity")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    empty = norms[:, 0] < 1e-12
    if empty.any():
        out[empty] = 1.0
        norms[empty] = np.sqrt(out.shape[1], dtype=np.float32)
    out /= norms
    return out


def empty_matrix(dim: int) -> numpy.ndarray:
    import numpy as np

    return np.zeros((0, dim), dtype=np.float32)


def check_texts(texts: Sequence[str], model: str) -> list[str]:
    """``texts`` as a list of encodable str, or :class:`EmbedderError` naming the bad item.

    Each text is cut to :data:`MAX_INPUT_CHARS` (the models truncate far sooner,
    in tokens; this bounds the tokenizer's work) and lone surrogates, which the
    Rust tokenizer and JSON encoders reject, become U+FFFD.
    """
    if isinstance(texts, str):
        raise EmbedderError(f"{model}: embed() takes a sequence of texts, not one str")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise EmbedderError(f"{model}: text {i} is {type(text).__name__}, not str")
        text = text[:MAX_INPUT_CHARS]
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = _SURROGATE.sub("\ufffd", text)
        items[i] = text
    return items
