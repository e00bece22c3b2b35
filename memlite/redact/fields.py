"""``clean``: tags stripped and secrets redacted in every string of a JSON value.

STANDARD LIBRARY ONLY (the hook imports it). Where the hook has structure (a decoded
JSON payload), a value is judged by its key as well as by its text: ``{"password": "x"}``
has no ``=`` or ``:`` left in its string for the text rules to see.
"""

from __future__ import annotations

from memlite.redact import judge
from memlite.redact.rules import redact
from memlite.redact.tags import strip_tags

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["clean"]

_FIELD_WORDS = ("key", "token", "secret", "password", "passwd", "passphrase", "pwd", "pass",
                "credential", "credentials", "auth", "signature")


def _clean_str(text: str) -> str:
    return redact(strip_tags(text))


def _strength_of(key: str) -> str | None:
    lower = key.lower()
    for word in _FIELD_WORDS:
        if lower.endswith(word):
            return judge.strength(key[:-len(word)], key[-len(word):], "=")
    return None


def _secret_field(key: str, value: str, strength: str | None) -> str:
    """The string ``value`` of a dict item, redacted when its key names a secret.

    A strong name redacts a one-word value that is no placeholder or path; a weak one
    only a random-looking value, or base64 of ``user:password`` under ``auth`` (a Docker
    ``auths`` entry).
    """
    if (strength is None or not value or len(value) > 2000 or value.split(None, 1)[0] != value
            or value.startswith("[REDACTED") or judge.placeholder(value) or judge.path(value)):
        return value
    if strength == "weak":
        if key.lower().endswith("auth") and judge.basic_credentials(value):
            return "[REDACTED:password]"
        return "[REDACTED:high_entropy]" if judge.high_entropy(value) else value
    return "[REDACTED:env]"


def clean(value: Any) -> Any:
    """Tags stripped, then secrets redacted, in every string value of a JSON value.

    A string value whose key names a secret (``{"api_key": "..."}``) is judged as an
    assignment is; so is the ``value`` of a ``{"name": "DB_PASSWORD", "value": "..."}``
    pair (Kubernetes and ECS environment entries).
    """
    if isinstance(value, str):
        return _clean_str(value)
    if isinstance(value, dict):
        out = {}
        pair_name = value.get("name") if "value" in value else None
        for key, item in value.items():
            if isinstance(item, str):
                item = _clean_str(item)
                if isinstance(key, str):
                    strength = _strength_of(key)
                    if key == "value" and isinstance(pair_name, str):
                        strength = _strength_of(pair_name)
                    item = _secret_field(key, item, strength)
                out[key] = item
            else:
                out[key] = clean(item)
        return out
    if isinstance(value, list):
        return [clean(item) for item in value]
    return value
