"""What the database accepts, made from anything a hook read (STANDARD LIBRARY ONLY).

Python's ``json`` reads things that cannot be stored: a ``\\ud800`` escape becomes a
lone UTF-16 surrogate, which UTF-8 refuses, and ``NaN``/``Infinity`` are not JSON for
SQLite. The hook applies ``storable`` to every event before it sends or spools it, and
the spool drain applies it again (to lines an older hook wrote), so a live request and a
spooled one are stored the same way. Cheap to import: the hook runs it on every event.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # no ``typing`` at run time: the hook's start stays lean
if TYPE_CHECKING:
    from typing import overload

__all__ = ["storable"]


def _storable_str(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")  # lone surrogate -> "?"
    return text


if TYPE_CHECKING:  # a dict stays a dict (what ``_prepare`` relies on)
    @overload
    def storable(value: dict[str, object]) -> dict[str, object]: ...
    @overload
    def storable(value: object) -> object: ...


def storable(value: object) -> object:
    """``value`` with what the database refuses made plain: a lone surrogate becomes
    ``?`` (as the hook's UTF-8 encoding of a live request does), NaN and infinities
    become the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``. Keys too."""
    if isinstance(value, str):
        return _storable_str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {_storable_str(k) if isinstance(k, str) else k: storable(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [storable(item) for item in value]
    return value
