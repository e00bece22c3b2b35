"""A value already written as JSON, placed as it is in an answer (``RawJson``).

Why: ``/api/search`` answers with 20 full observation records. Turning each row into a
dict (its four JSON list columns decoded) only for orjson to write it out again cost
~0.1 ms of a ~0.5 ms full-text search at 10,000 observations; SQLite writes the row as a
JSON object itself, in C (``reads.observation_json_texts``), and the answer embeds that text.

The encoders know it: ``jsonbody.encode`` hands orjson the text as an
``orjson.Fragment`` (written out byte for byte), and the standard library's encoder (the
fallback, and Quart's indented form) gets the decoded value. Kept apart from
``jsonbody`` so that the read functions (``queries``) do not import Quart.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["RawJson"]


class RawJson:
    """JSON text (UTF-8 bytes of one valid JSON value) to embed in an answer as is."""

    __slots__ = ("text",)

    def __init__(self, text: bytes) -> None:
        self.text = text

    def value(self) -> Any:
        """The value the text holds (for an encoder that cannot embed text)."""
        return json.loads(self.text)

    def __repr__(self) -> str:
        return f"RawJson({self.text!r})"
