"""Judging a candidate value: placeholder, masked, path, public, random-looking, or secret.

STANDARD LIBRARY ONLY (the hook imports it). Every function here is bounded by the
length of the value it is given, and callers cap that length (2,000 characters).
"""

from __future__ import annotations

from memlite.redact.engine import Lazy

__all__ = ["basic_credentials", "credential_like", "literal_like", "secret_like", "high_entropy",
           "looks_random", "path", "placeholder", "strength", "fake_token"]

PLACEHOLDER_WORDS = frozenset((
    "changeme", "change_me", "change-me", "changeit", "password", "passwd", "secret",
    "token", "example", "placeholder", "dummy", "none", "null", "nil", "undefined", "true",
    "false", "redacted", "hidden", "masked", "str", "string", "int", "bytes", "bool",
    "boolean", "any", "optional", "required", "todo", "tbd", "empty", "secretstr",
    "read", "write", "default", "unset", "off", "on", "yes", "no",
    "stdin", "prompt", "env", "file", "auto"))
# words that mark a value as a stand-in wherever they occur in it
_STAND_IN = ("changeme", "change-me", "change_me", "your", "example", "placeholder",
             "replace", "dummy", "redacted", "xxxx", "***", "...", "\u2026", "\u2022")
PLACEHOLDER = Lazy(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|%[sd]|%\(\w+\)s|\{[^{}]*\}"
                   r"|\$?\{\{.*\}\}|<%.*%>|<[^<>]+>|[*xX.#_\-\u2022]{3,}|\.\.\..*"
                   r"|@[A-Za-z_][\w.\-]*|[A-Za-z_]\w*\(\)")
_PATH = Lazy(r"(?:~|\.{1,2})?/[\w.\-/@+]*|[A-Za-z]:\\[\w.\-\\ ]*"
             r"|[\w.\-/]+\.(?i:pem|key|crt|cer|csr|der|p12|pfx|jks|json|txt|env|ya?ml|pub"
             r"|asc|gpg|ppk|keystore|cfg|conf|ini)")
_RANDOM_RUN = Lazy(r"(?=[A-Za-z0-9]{0,64}[0-9])(?=[A-Za-z0-9]{0,64}[A-Za-z])[A-Za-z0-9]{16}")
_PUBLIC = ("pk_live_", "pk_test_", "arn:", "ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-",
           "sha256:", "sha512-", "sha384-", "sha1-")
_IDENTIFIER_STEMS = frozenset(("id", "ref", "name", "type", "arn", "kind", "existing"))
TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_-.~")
SECRET_PREFIXES = ("api", "secret", "access", "private", "master", "encryption", "signing",
                   "client", "app", "auth", "license", "service", "account", "webhook",
                   "refresh", "session", "bearer", "admin", "root", "db", "pass", "bot",
                   "deploy", "consumer", "integration", "personal", "oauth")


def placeholder(value: str) -> bool:
    """An empty value, a stand-in (``$VAR``, ``<your-key>``, ``changeme``), a masked value
    (``gho_****``, ``sk-...abcd``), a public value (``pk_live_…``, an ARN)."""
    if value[:1] in "\"'`" and value[-1:] == value[:1]:
        value = value[1:-1]
    elif value[:2] in ('\\"', "\\'") and value[-2:] == value[:2]:
        value = value[2:-2]
    value = value.strip()
    if not value:
        return True
    low = value.lower()
    if low in PLACEHOLDER_WORDS or low.startswith(_PUBLIC):
        return True
    if value.startswith(("$(", "${", "`")):
        return True  # a shell expansion, cut at its first space: ``$(cat /run/x)``
    if any(word in low for word in _STAND_IN):
        return True
    return PLACEHOLDER.get().fullmatch(value) is not None


def fake_token(body: str) -> bool:
    """A provider token's body that is a stand-in: ``xoxb-your-bot-token``, ``AKIAXXXX…``,
    ``AKIAIOSFODNN7EXAMPLE`` (AWS's documentation key)."""
    low = body.lower()
    return any(word in low for word in _STAND_IN) or len(set(low)) < 6


def looks_random(text: str) -> bool:
    """A run of 16 letters and digits holding both (a key, not a word)."""
    return _RANDOM_RUN.get().search(text) is not None


def path(value: str) -> bool:
    """A file path (not a secret), unless one of its segments looks random."""
    if _PATH.get().fullmatch(value) is None:
        return False
    return not any(len(part) >= 20 and looks_random(part) for part in value.split("/"))


def high_entropy(value: str) -> bool:
    """20+ characters of a token alphabet, mixed classes with a digit, >= 3.5 bits/char, not
    hex/UUID."""
    if len(value) < 20 or len(value) > 2000:
        return False
    if value.strip("0123456789abcdefABCDEF-") == "":
        return False  # a sha, a commit id, a UUID: identifiers, not secrets
    classes = 0
    for chars in ("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"):
        if any(c in chars for c in value):
            classes += 1
    if classes < 2 or any(c not in TOKEN_CHARS for c in value):
        return False
    if not any(c.isdigit() for c in value):
        return False  # ``CertificatePublicKeyTypes``: 20 random characters hold a digit
    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    size = len(value)
    import math  # noqa: PLC0415 - only when a weak assignment is seen
    entropy = -sum(n / size * math.log2(n / size) for n in counts.values())
    return entropy >= 3.5


def basic_credentials(value: str) -> bool:
    """base64 of ``user:password`` (a Docker ``auths`` entry, an HTTP Basic value)."""
    if len(value) < 8 or len(value) > 1000 or len(value) % 4:
        return False
    import base64  # noqa: PLC0415 - only when an ``auth`` value is seen
    import binascii  # noqa: PLC0415
    try:
        decoded = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and password and decoded.isprintable())


def literal_like(value: str) -> bool:
    """Could be a credential at all: 3+ characters, some ASCII letter or digit, not a
    short number (``token=11098``), a colour (``#ddd0c0``), or an identifier path
    (``io.example/protocolVersion``, no random-looking run)."""
    if len(value) < 3 or not any(c.isascii() and c.isalnum() for c in value):
        return False
    if value.isdigit() and len(value) < 6:
        return False
    if value[0] == "#":
        return False
    return not ("/" in value and "." in value and " " not in value
                and not looks_random(value))


def secret_like(value: str) -> bool:
    """Stricter than :func:`credential_like`: 8+ characters with a letter and a digit (or
    random-looking); for a position that says little (two literals side by side)."""
    return (len(value) >= 8 and credential_like(value) and any(c.isdigit() for c in value)
            and any(c.isalpha() for c in value)) or high_entropy(value)


def credential_like(value: str) -> bool:
    """A one-word value that reads as a password, not an English word or an identifier.

    Used where the position alone is weak (a command-line flag, prose, a positional
    argument): a digit or a symbol, or inner upper case, or 16+ characters; never a
    placeholder or a path.
    """
    if not value or len(value) > 200 or placeholder(value) or path(value):
        return False
    if value[0] == "$":
        return False  # ``$(cmd ...`` cut at a space, ``$VAR``: a shell expansion
    if any(c.isdigit() for c in value) or any(not c.isalnum() for c in value):
        return len(value) >= 4 and not value.replace(".", "").isdigit()
    return len(value) >= 16 or any(c.isupper() for c in value[1:])


def strength(prefix: str, keyword: str, sep: str) -> str | None:
    """'strong', 'weak' or None for a name made of ``prefix`` + ``keyword``."""
    word = keyword.lower()
    lower = prefix.lower().lstrip("-.")
    if "public" in lower or "publishable" in lower:
        return None  # PublicKey, STRIPE_PUBLISHABLE_KEY: public by design
    strong = not (word.startswith("credential") or word in ("auth", "signature", "key"))
    if not lower:
        if word == "pass" and sep != "=":
            return None
        return "strong" if strong else "weak"
    camel = prefix[-1:].islower() and keyword[:1].isupper()
    if lower[-1] in "_-." or camel:
        stem = lower.rstrip("_-.")
        last = stem.replace("-", "_").replace(".", "_").rsplit("_", 1)[-1]
        if last in _IDENTIFIER_STEMS or (camel and prefix.lower() in _IDENTIFIER_STEMS):
            return "weak"  # id-token, secretRef-like names: identifiers
        if word == "key":
            if (prefix.isupper() and keyword.isupper()) or stem.endswith(SECRET_PREFIXES):
                return "strong"
            return "weak"
        return "strong" if strong else "weak"
    if word != "key" and strong and prefix.isupper() and keyword.isupper():
        return "strong"  # PGPASSWORD, MYSQLPWD: an upper-case environment variable
    if lower.endswith(SECRET_PREFIXES) and word in ("key", "token", "secret", "password"):
        return "strong"  # apikey, APITOKEN, clientsecret, dbpassword
    return None
