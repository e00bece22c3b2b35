"""Privacy filters applied in the hook, before an event leaves the hook process.

STANDARD LIBRARY ONLY: every hook imports this module (DESIGN §5, §7), so it compiles each
pattern once, on first use (a hook run is one process: most patterns never run).

* :func:`strip_tags` removes the tag families that must never be stored: ``<private>``
  (the user's own marker), ``<memlite-context>`` (our injected context: storing it would
  feed memory back into memory), ``<system-reminder>``, ``<system_instruction>``,
  ``<system-instruction>`` and ``<persisted-output>``. Case-insensitive, across lines,
  nested tags counted; an unclosed tag strips to the end of the text.
* :func:`redact` replaces common secrets by ``[REDACTED:<kind>]`` (cloud keys, API
  tokens, JWTs, PEM private keys, passwords in URLs, ``.env``-style assignments).
* :func:`clean` applies both to every string value of a JSON value (keys are left as
  they are: they are field names chosen by Claude Code, not user text).

Each secret pattern runs only if a cheap substring trigger is present, so a typical
payload costs a few microseconds per string. A later issue grows the patterns into a
measured corpus; the API stays ``strip_tags``, ``redact``, ``clean``.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing import at run time: it costs a hook ~5 ms
    from collections.abc import Callable
    from typing import Any

__all__ = ["TAG_NAMES", "clean", "redact", "strip_tags"]

TAG_NAMES = ("private", "memlite-context", "system-reminder", "system_instruction",
             "system-instruction", "persisted-output")

_TAG = re.compile(r"<(/?)\s*(?:" + "|".join(re.escape(n) for n in TAG_NAMES)
                  + r")\b[^<>]{0,200}>", re.IGNORECASE)


def strip_tags(text: str, *, orphan_close_hides_before: bool = False) -> str:
    """Remove every tagged region of the families in ``TAG_NAMES``.

    Nesting is counted across the families. An opening tag that is never closed strips
    to the end; a closing tag without an opening one is removed, and with
    ``orphan_close_hides_before`` (used on the tail of a cut string, whose opening tag
    may have been cut away) everything before it goes too.
    """
    if "<" not in text:
        return text
    out: list[str] = []
    pos = 0
    depth = 0
    found = False
    for match in _TAG.finditer(text):
        found = True
        if not match.group(1):  # opening
            if depth == 0:
                out.append(text[pos:match.start()])
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                pos = match.end()
        else:  # an orphan closing tag
            if orphan_close_hides_before:
                out.clear()
            else:
                out.append(text[pos:match.start()])
            pos = match.end()
    if not found:
        return text
    if depth == 0:
        out.append(text[pos:])
    return "".join(out)


def _keep_prefix(kind: str) -> Callable[[re.Match[str]], str]:
    """Replace group 2 (the value), keeping group 1 (the name) and group 3 (a suffix)."""
    def sub(match: re.Match[str]) -> str:
        value = match.group(2)
        if value.startswith(("[REDACTED", '"[REDACTED', "'[REDACTED")):
            return match.group(0)
        tail = match.group(3) if match.re.groups >= 3 else ""
        return f"{match.group(1)}[REDACTED:{kind}]{tail or ''}"
    return sub


def _whole(kind: str) -> str:
    return f"[REDACTED:{kind}]"


_TOKEN_END = r"(?![A-Za-z0-9_\-])"


class _lazy:  # noqa: N801 - a pattern compiled on first use (most never are in a hook run)
    __slots__ = ("args", "compiled")

    def __init__(self, *args: Any) -> None:
        self.args = args
        self.compiled: re.Pattern[str] | None = None

    def sub(self, replacement: Any, text: str) -> str:
        if self.compiled is None:
            self.compiled = re.compile(*self.args)
        return self.compiled.sub(replacement, text)

# (kind, triggers, pattern, replacement). Order matters: specific before generic.
_RULES: list[tuple[tuple[str, ...], Any, str | Callable[[re.Match[str]], str]]] = [
    (("-----BEGIN",), _lazy(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE "
        r"KEY( BLOCK)?-----|\Z)", re.DOTALL), _whole("private_key")),
    (("AKIA", "ASIA"), _lazy(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"),
     _whole("aws_access_key_id")),
    (("ws_secret", "WS_SECRET"), _lazy(
        r"((?i:aws_secret_access_key)[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9/+=]{40})()"),
     _keep_prefix("aws_secret_access_key")),
    (("sk-ant-",), _lazy(r"sk-ant-[A-Za-z0-9_\-]{16,}" + _TOKEN_END), _whole("anthropic")),
    (("sk-",), _lazy(r"(?<![A-Za-z0-9_\-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?"
                          r"[A-Za-z0-9_\-]{20,}" + _TOKEN_END), _whole("openai")),
    (("gh", "github_pat_"), _lazy(
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
     _whole("github")),
    (("glpat-",), _lazy(r"glpat-[A-Za-z0-9_\-]{20,}" + _TOKEN_END), _whole("gitlab")),
    (("xox",), _lazy(r"xox[abprs]-[A-Za-z0-9\-]{10,}"), _whole("slack")),
    (("_live_",), _lazy(r"(?:sk|rk)_live_[A-Za-z0-9]{16,}"), _whole("stripe")),
    (("eyJ",), _lazy(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
     _whole("jwt")),
    (("://",), _lazy(r"(\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@\"'<>]{1,200}:)"
                          r"([^\s@/\"'<>]{1,500})(@)"), _keep_prefix("password")),
    (("=",), _lazy(
        r"((?<![A-Za-z0-9_])(?:[A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD)|PASSWORD|"
        r"PASSWD|SECRET|TOKEN|APIKEY|password|passwd|secret|token|api_key|apikey|access_token|"
        r"auth_token|client_secret|secret_key)\s*=\s*)"
        r"(\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'&;,)]+)()"), _keep_prefix("env")),
]


def redact(text: str) -> str:
    """Replace the secrets in ``text`` by ``[REDACTED:<kind>]``."""
    for triggers, pattern, replacement in _RULES:
        for trigger in triggers:
            if trigger in text:
                text = pattern.sub(replacement, text)
                break
    return text


def _clean_str(text: str) -> str:
    return redact(strip_tags(text))


def clean(value: Any) -> Any:
    """Tags stripped, then secrets redacted, in every string value of a JSON value."""
    if isinstance(value, str):
        return _clean_str(value)
    if isinstance(value, dict):
        return {key: clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clean(item) for item in value]
    return value
