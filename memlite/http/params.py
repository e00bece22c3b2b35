"""Reading what a request sends: one JSON object body, typed query parameters, ids.

Everything a caller can get wrong raises ``InputError`` (a 400 with a message that names
the body, field or parameter at fault); the errors module turns it into JSON.

Bodies are parsed strictly whatever their ``Content-Type`` (hooks send raw bytes): UTF-8
only (a leading BOM is tolerated), no ``NaN``/``Infinity``, no lone surrogates (SQLite
could not store them), a JSON object at the top. ``MAX_CONTENT_LENGTH`` (see app.py)
bounds the size before any of this runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from quart import request

from memlite.errors import InputError

__all__ = [
    "MAX_ID",
    "int_arg",
    "parse_id",
    "parse_json_object",
    "read_json_object",
    "str_arg",
]

MAX_ID = 2**63 - 1  # SQLite's INTEGER range; a larger number cannot name a row
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "an array"}.get(type(value), type(value).__name__)


def _reject_constant(name: str) -> Any:
    raise InputError(f"request body is not valid JSON: {name} is not a JSON number")


def parse_json_object(raw: bytes) -> dict[str, Any]:
    """Parse ``raw`` as one JSON object (see the module docstring for the rules)."""
    if not raw.strip():
        raise InputError("request body is empty: expected a JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"request body is not valid UTF-8 (bad byte at offset {exc.start})") from None
    text = text.removeprefix("\ufeff")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"request body is not valid JSON: {exc.msg} at line {exc.lineno} "
                         f"column {exc.colno}") from None
    except RecursionError:
        raise InputError("request body is not valid JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python will convert
        raise InputError(f"request body is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InputError(f"request body must be a JSON object, not {_json_type(value)}")
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InputError("request body holds a lone UTF-16 surrogate (\\ud800-\\udfff "
                             "without its pair)") from None
    return value


async def read_json_object() -> dict[str, Any]:
    """The request's body as a JSON object (413 past ``MAX_CONTENT_LENGTH``)."""
    return parse_json_object(await request.get_data(cache=False))


def int_arg(name: str, default: int, *, low: int, high: int,
            args: Mapping[str, str] | None = None) -> int:
    """Query parameter ``name`` as a whole number in ``[low, high]`` (``default`` if absent).

    ``args``: the query parameters to read (first value of each name); default the
    current request's (``http/fast.py`` passes its own, outside a Quart request)."""
    raw = (request.args if args is None else args).get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip(), 10)
    except ValueError:
        raise InputError(
            f"query parameter {name} must be a whole number, not {raw[:40]!r}") from None
    if not low <= value <= high:
        raise InputError(f"query parameter {name} must be between {low} and {high}")
    return value


def str_arg(name: str, *, required: bool = False, max_len: int = 1000,
            args: Mapping[str, str] | None = None) -> str | None:
    """Query parameter ``name`` stripped, or None when absent/blank (400 if required);
    ``args`` as for ``int_arg``."""
    raw = (request.args if args is None else args).get(name)
    value = raw.strip() if raw is not None else ""
    if not value:
        if required:
            raise InputError(f"query parameter {name} is required")
        return None
    if len(value) > max_len:
        raise InputError(f"query parameter {name} is longer than {max_len} characters")
    return value


def parse_id(raw: object, what: str, *, text: bool = True) -> int:
    """A row id: a whole number 1..2^63-1, given as digits (``text``) or as a JSON number."""
    if isinstance(raw, bool):
        raise InputError(f"{what} must be a whole number, not {_json_type(raw)}")
    if isinstance(raw, str) and text:
        text = raw.strip()
        if not text.isascii() or not text.isdigit():
            raise InputError(f"{what} must be a whole number, not {raw[:40]!r}")
        raw = int(text) if len(text) <= 100 else MAX_ID + 1  # bounded conversion cost
    if not isinstance(raw, int):
        raise InputError(f"{what} must be a whole number, not {_json_type(raw)}")
    if not 1 <= raw <= MAX_ID:
        raise InputError(f"{what} must be between 1 and {MAX_ID}")
    return raw
