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


def _fill(unit: str, size: int) -> str:
    return (unit * (size // max(len(unit), 1) + 1))[:size]


def _cookie(size: int) -> str:
    array = json.dumps([{"id": i, "k": "v" * 7} for i in range(size // 40 + 1)])
    blob = base64.urlsafe_b64encode(array.encode()).decode()
    return ("Cookie: state=" + blob)[:size]


def inputs(size: int) -> dict[str, str]:
    """name -> a text of about ``size`` characters."""
    out: dict[str, str] = {}
    words = sorted({word for rule in RULES for word in rule.words})
    for word in words:
        out[f"{word!r} run"] = _fill(word, size)
        for sep in ("=", ": ", " ", '"', "\\\"", ".", "-", "_", "("):
            out[f"{word!r}{sep!r} run"] = _fill(word + sep, size)
        out[f"{word!r} + one long run"] = word + _fill("a", size - len(word))
        out[f"{word!r}= + one long run"] = word + "=" + _fill("aB3", size - len(word) - 1)
        out[f"{word!r} + 30 then space"] = _fill(word + "Ab1" * 10 + " ", size)
        out[f"{word!r} upper run"] = _fill(word.upper() + "=X1", size)
    out.update({
        "plain a": _fill("a", size),
        "prose": _fill("lorem ipsum dolor sit amet ", size),
        "eyJ run": _fill("eyJ", size),
        "jwt almost": _fill("eyJ" + "a" * 20 + ".", size),
        "jwt two parts": _fill("eyJaaaaaaaaaaa.eyJbbbbbbbbbbb ", size),
        "jwt dotted run": _fill("eyJabcdefgh.", size),
        "cookie b64 json array": _cookie(size),
        "sk- long run": "sk-" + _fill("a-", size),
        "sk-proj long run": "sk-proj-" + _fill("aZ9", size),
        "token: repeated": _fill("token: ", size),
        "token=a lines": _fill("token=a\n", size),
        "token=value lines": _fill("token=abcd1234XYZ\n", size),
        "nested quotes": _fill("\"'\"'`", size),
        "escaped quotes": _fill("\\\"", size),
        "password escaped quote": _fill("password=\\\"", size),
        "json escaped pairs": _fill("\\\"password\\\": \\\"", size),
        "escape runs": _fill("\\n", size),
        "token= escapes": _fill("token=\\n", size),
        "url long user": "x://" + _fill("u", size),
        "url colon run": "x://u:" + _fill(":", size),
        "url scheme run": _fill("a://", size),
        "url empty user run": _fill("redis://:", size),
        "pgpass colons": _fill("a:1:b:c:", size),
        "pgpass lines": _fill("h:5432:db:u:pw1\n", size),
        "netrc machine run": _fill("machine h login u ", size),
        "name value run": _fill("name: A_TOKEN\n", size),
        "mysql -p run": _fill("mysql -p", size),
        "docker login -p run": _fill("docker login -p x ", size),
        "echo pipe run": _fill("echo x | ", size),
        "--password run": _fill("--password ", size),
        "-u user: run": _fill("-u a:", size),
        "password is run": _fill("the password is ", size),
        "client( run": _fill("Client(\"", size),
        "authorization bearer run": _fill("Authorization: Bearer ", size),
        "pem begin run": _fill("-----BEGIN RSA PRIVATE KEY-----", size),
        "tags unclosed": _fill("<private>", size),
        "angle brackets": _fill("<", size),
        "dotted i run": _fill("\u0130TOKEN=\u0130", size),
        "kelvin key run": _fill("\u212aEY=x\u212a", size),
        "german sharp s": _fill("PA\u00dfWORD=\u00df1a ", size),
    })
    return out
