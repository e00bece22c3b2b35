"""Tag stripping: the regions that must never be stored (see ``memlite.privacy``).

STANDARD LIBRARY ONLY (the hook imports it).
"""

from __future__ import annotations

import re

from memlite.redact.engine import folded

__all__ = ["TAG_NAMES", "strip_tags"]

TAG_NAMES = ("private", "memlite-context", "system-reminder", "system_instruction",
             "system-instruction", "persisted-output")

# every name holds one of these (lower case): a text without any has no tag, and the
# tag pattern is not run over it (a megabyte of ``<`` tried it at every one: 5 ms per 100 kB)
_STEMS = ("private", "memlite-context", "system", "persisted-output")
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
    lower = folded(text)  # ``(?i:…)`` matches what folds to the name: long s, dotless i
    if not any(stem in lower for stem in _STEMS):
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
