"""Adversarial inputs for the redactor, each built to any size (shared by the tests and
``bench/bench_privacy.py``).

For every trigger word of every rule: long runs of the word, the word with each
separator repeated, the word followed by one huge run of what its pattern accepts; then
nested quotes, JSON escapes, non-ASCII case folding (characters whose lower case is
longer, the Kelvin sign that lower-cases to ``k``), and the shapes a real session
produces in bulk (a base64url JSON array in a cookie, many ``eyJ``, ``sk-`` followed by
a long run, repeated ``token: ``).
"""

from __future__ import annotations

import base64
import json

from memlite.redact import RULES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


def _fill(unit: str, size: int) -> str:
    return (unit * (size // max(len(unit), 1) + 1))[:size]


def _cookie(size: int) -> str:
    array = json.dumps([{"id": i, "k": "v" * 7} for i in range(size // 40 + 1)])
    blob = base64.urlsafe_b64encode(array.encode()).decode()
    return ("Cookie: state=" + blob)[:size]


def inputs(size: int, *, per_word: bool = True) -> Iterator[tuple[str, str]]:
    """(name, a text of about ``size`` characters), one at a time (a megabyte each).

    ``per_word=False``: only the named shapes and each word's plain run.
    """
    for name, make in _makers(per_word):
        yield name, make(size)


def _makers(per_word: bool) -> list[tuple[str, Callable[[int], str]]]:
    out: list[tuple[str, Callable[[int], str]]] = []
    words = sorted({word for rule in RULES for word in rule.words})
    for word in words:
        out.append((f"{word!r} run", lambda n, w=word: _fill(w, n)))
        if not per_word:
            continue
        for sep in ("=", ": ", " ", '"', "\\\"", ".", "-", "_", "("):
            out.append((f"{word!r}{sep!r} run", lambda n, w=word + sep: _fill(w, n)))
        out.append((f"{word!r} + one long run", lambda n, w=word: w + _fill("a", n - len(w))))
        out.append((f"{word!r}= + one long run",
                    lambda n, w=word: w + "=" + _fill("aB3", n - len(w) - 1)))
        out.append((f"{word!r} + 30 then space",
                    lambda n, w=word: _fill(w + "Ab1" * 10 + " ", n)))
        out.append((f"{word!r} upper run", lambda n, w=word: _fill(w.upper() + "=X1", n)))
    units = {
        "plain a": "a",
        "prose": "lorem ipsum dolor sit amet ",
        "eyJ run": "eyJ",
        "jwt almost": "eyJ" + "a" * 20 + ".",
        "jwt two parts": "eyJaaaaaaaaaaa.eyJbbbbbbbbbbb ",
        "jwt dotted run": "eyJabcdefgh.",
        "token: repeated": "token: ",
        "token=a lines": "token=a\n",
        "token=value lines": "token=abcd1234XYZ\n",
        "nested quotes": "\"'\"'`",
        "escaped quotes": "\\\"",
        "password escaped quote": "password=\\\"",
        "json escaped pairs": "\\\"password\\\": \\\"",
        "escape runs": "\\n",
        "token= escapes": "token=\\n",
        "url scheme run": "a://",
        "url empty user run": "redis://:",
        "pgpass colons": "a:5432:b:c:",
        "pgpass lines": "h:5432:db:u:pw1\n",
        "netrc machine run": "machine h login u password ",
        "name value run": "name: A_TOKEN\nvalue: ",
        "mysql -p run": "mysql -p",
        "docker login -p run": "docker login -p x ",
        "echo pipe run": "echo x | --password-stdin ",
        "--password run": "--password ",
        "-u user: run": "-u a:",
        "password is run": "the password is ",
        "client( run": "Client(\"",
        "authorization bearer run": "Authorization: Bearer ",
        "pem begin run": "-----BEGIN RSA PRIVATE KEY-----",
        "tags unclosed": "<private>",
        "angle brackets": "<",
        "dotted capital i run": "\u0130TOKEN=\u0130",
        "kelvin sign run": "\u212aEY=x\u212a",
        "sharp s run": "PA\u00dfWORD=\u00df1a ",
    }
    for name, unit in units.items():
        out.append((name, lambda n, u=unit: _fill(u, n)))
    out += [
        ("cookie b64 json array", _cookie),
        ("sk- long run", lambda n: "sk-" + _fill("a-", n)),
        ("sk-proj long run", lambda n: "sk-proj-" + _fill("aZ9", n)),
        ("url long user", lambda n: "x://" + _fill("u", n)),
        ("url colon run", lambda n: "x://u:" + _fill(":", n)),
    ]
    return out
