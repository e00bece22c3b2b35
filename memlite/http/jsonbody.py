"""The API's JSON encoder: orjson, for Quart's ``jsonify`` and the fast path alike.

Why: the standard library's ``json`` (Quart's default provider: sorted keys, ASCII
escapes, compact) took 0.17 ms to encode a search's answer of 20 full records at 10,000
observations, and 0.06 ms the compact index's; orjson takes 0.02 and 0.006 ms (measured
in one run, issue 14's round 10). The fast path (``fast.py``) and Quart's routes encode
with the same function (``encode``), so their bodies stay the same bytes.

What a client sees differently from the standard library's encoding:

* characters beyond ASCII are written as UTF-8, not as ``\\uXXXX`` escapes (the body is
  UTF-8 JSON either way, as RFC 8259 asks; every reader decodes the same strings);
* a float that is not finite is written ``null`` (``json`` wrote ``NaN``, which is not
  JSON);
* keys are still sorted, as strings (non-string keys, which no route returns today, are
  written as strings first);
* a float's shortest form may be spelt differently (``1e-06`` is ``1e-6``), the same
  number.

What orjson refuses (a string holding a lone surrogate, an integer beyond 64 bits) is
encoded by the standard library as before, so no answer fails for its encoding.

A ``rawjson.RawJson`` value (a record SQLite wrote as JSON) is embedded as its text by
orjson, and as its decoded value by the standard library.
"""

from __future__ import annotations

from typing import Any

import orjson
from quart.json.provider import DefaultJSONProvider

from memlite.http.rawjson import RawJson

__all__ = ["JsonProvider", "encode"]

# Dates and dataclasses go to the provider's ``default``, as with the standard library.
_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
            | orjson.OPT_PASSTHROUGH_DATACLASS)
_COMPACT = (",", ":")


def encode(provider: DefaultJSONProvider, value: Any) -> bytes:
    """``value`` as ``jsonify`` sends it: compact JSON, keys sorted, a final newline."""
    def default(o: Any) -> Any:
        return orjson.Fragment(o.text) if type(o) is RawJson else provider.default(o)

    try:
        return orjson.dumps(value, default=default, option=_OPTIONS | orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return (DefaultJSONProvider.dumps(provider, value, separators=_COMPACT)
                + "\n").encode("utf-8")


class JsonProvider(DefaultJSONProvider):
    """Quart's provider with ``encode``'s encoding for compact dumps (what ``jsonify``
    asks for outside debug mode); any other form (``indent``...) as the default one."""

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        if kwargs == {"separators": _COMPACT}:
            return encode(self, obj)[:-1].decode("utf-8")
        return super().dumps(obj, **kwargs)

    @staticmethod
    def default(o: Any) -> Any:
        """The standard library's fallback: a ``RawJson`` as its value, the rest as
        Quart's default (dates, dataclasses...)."""
        if isinstance(o, RawJson):
            return o.value()
        return DefaultJSONProvider.default(o)
