"""Privacy filters applied in the hook, before an event leaves the hook process.

STANDARD LIBRARY ONLY: every hook imports this module (DESIGN §5, §7), so it compiles each
pattern once, on first use (a hook run is one process: most patterns never run).

* :func:`strip_tags` removes the tag families that must never be stored: ``<private>``
  (the user's own marker), ``<memlite-context>`` (our injected context: storing it would
  feed memory back into memory), ``<system-reminder>``, ``<system_instruction>``,
  ``<system-instruction>`` and ``<persisted-output>``. Case-insensitive, across lines,
  nested tags counted; an unclosed tag strips to the end of the text. A tagged region is
  removed, not replaced by a marker.
* :func:`redact` replaces secrets by ``[REDACTED:<kind>]``. The kinds:

  ``private_key``
      PEM private key blocks (``-----BEGIN [RSA |EC |OPENSSH |DSA |ENCRYPTED |PGP ]PRIVATE
      KEY[ BLOCK]-----`` to the matching END line, or to the end of the text when cut),
      also with ``\n`` escapes inside JSON text: this covers the ``private_key`` value of
      a GCP service-account JSON file.
  ``aws_access_key_id``
      ``AKIA``/``ASIA`` + 16 upper-case letters or digits.
  ``aws_secret_access_key``
      a 40-character base64 value after ``aws_secret_access_key`` (any case, ``=``,
      ``:``, JSON or YAML) or ``SecretAccessKey`` (the AWS CLI's JSON).
  ``anthropic``, ``openai``
      ``sk-ant-…``; ``sk-…``, ``sk-proj-…``, ``sk-svcacct-…``, ``sk-admin-…`` whose body
      holds a random-looking run (16+ letters/digits with a digit), so that kebab-case words
      after ``sk-`` ("sk-learn-tutorial-for-beginners") and ``task-sk-2`` survive.
  ``github``
      ``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_`` + 30 or more, ``github_pat_…``.
  ``gitlab``
      ``glpat-…``.
  ``slack``, ``slack_webhook``
      ``xoxa-``, ``xoxb-``, ``xoxp-``, ``xoxr-``, ``xoxs-``, ``xoxe-`` tokens; the path of
      a ``hooks.slack.com/services|workflows|triggers/…`` URL (the host is kept).
  ``stripe``
      ``sk_live_``, ``rk_live_``, ``sk_test_``, ``rk_test_``, ``whsec_`` keys. Publishable
      keys (``pk_live_``, ``pk_test_``) are public by design and survive.
  ``jwt``
      three base64url segments, the first two starting ``eyJ``.
  ``auth_header``
      the credential of an ``Authorization: Bearer|Basic|Token|Bot <value>`` header (also
      in ``-H "..."`` and JSON); ``Bearer $TOKEN`` survives (a shell variable).
  ``password``
      the password of a URL or connection string, ``scheme://user:PASS@host`` (scheme,
      user and host kept), and ``Password=…;``/``Pwd=…;`` in ADO-style strings.
  ``env``
      the value of an assignment to a secret-named key: ``.env`` lines (``*_KEY=``,
      ``*_TOKEN=``, ``*_SECRET=``, ``*_PASS=``, ``PASSWORD=``, ``PASSWD=``, ``PWD=``,
      ``export X=``, quoted values, ``--password=`` flags), YAML ``password: value``
      (the value alone on its line), JSON ``"api_key": "…"`` (quotes kept), camelCase
      names (``apiKey``, ``clientSecret``). An upper-case ``*_KEY`` is a secret; a
      lower-case ``*_key`` only with a secret-ish prefix (``api_key``, ``secret_key``,
      ``access_key``, ``private_key``, …), since ``sort_key``/``cache_key`` are not.
  ``high_entropy``
      a random-looking value (20+ characters, mixed classes, Shannon entropy at least
      3.5 bits/char, not pure hex nor a UUID) in a weaker assignment position: ``key``,
      ``*_key`` (lower case), ``auth``, ``credential(s)``, ``signature``.

  What survives (the near misses, see ``tests/privacy/corpus.py``): git commit ids,
  sha256 digests and UUIDs anywhere, base64 of ordinary text, version strings, words like
  "token" or "password" in prose. In assignment positions a value survives when it is

  - empty, or a **placeholder**: ``$VAR``, ``${VAR}``, ``$(cmd)``, ``%s``, ``{name}``,
    ``{{ tpl }}``, ``<your-password>``, ``your_api_key_here``, ``***``/``xxxx``/``...``,
    a word such as ``changeme``, ``password``, ``secret``, ``example``, ``none``,
    ``null``, ``true``, ``str`` (a type annotation). A placeholder leaks nothing, and
    redacting it would hide what a config file or a command meant;
  - a **file path** (``/…``, ``./…``, ``~/…``, or a name ending ``.pem``, ``.key``,
    ``.json``, …): ``KEY_PATH=/etc/ssl/x.pem`` (the name does not even end in KEY),
    ``SSH_KEY=~/.ssh/id_ed25519``, ``PWD=/home/me/proj`` in an env dump. A path names
    where a secret is, it is not the secret (unless a path segment looks random);
  - **code**, not a literal: ``token=self.token``, ``password = getpass()``,
    ``secret = os.environ["X"]``, ``key=len``, ``token = next_token`` (spaces around
    ``=`` and a plain identifier). A quoted literal in code (``password = "hunter2"``) is
    redacted.

* :func:`clean` applies both to every string value of a JSON value (keys are left as
  they are: they are field names chosen by Claude Code, not user text). A one-word
  string value under a secret-named key (``{"password": "hunter2"}``, as an MCP tool's
  input may carry) is judged like the value of an assignment, since no ``=`` is left.

Each secret pattern runs only where one of its trigger words occurs (found with
``str.find``, see :class:`_Rule`), and every pattern is linear (bounded repetitions, no
nested quantifiers), so a typical string costs a few microseconds, 100 kB of tool output
about 2 ms, and 1 MB of adversarial text well under a second. The corpus and
its precision/recall live in ``tests/privacy`` and ``bench/bench_privacy.py``.
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
        if value.startswith(("[REDACTED", '"[REDACTED', "'[REDACTED")) or _placeholder(value):
            return match.group(0)
        tail = match.group(3) if match.re.groups >= 3 else ""
        return f"{match.group(1)}[REDACTED:{kind}]{tail or ''}"
    return sub


def _whole(kind: str) -> str:
    return f"[REDACTED:{kind}]"


_TOKEN_END = r"(?![A-Za-z0-9_\-])"


class _Pattern:
    """A helper pattern compiled on first use."""

    __slots__ = ("args", "compiled")

    def __init__(self, *args: Any) -> None:
        self.args = args
        self.compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        if self.compiled is None:
            self.compiled = re.compile(*self.args)
        return self.compiled


class _Rule:
    """A pattern tried only where one of its ``words`` occurs (found with ``str.find``).

    Every match of ``pattern`` starts at an occurrence of one of ``words`` (or, with
    ``back``, at most ``back`` characters before one: a URL's scheme before ``://``), so
    the pattern runs only there: finding the words costs a few µs per 100 kB where a
    regex scan costs milliseconds. ``fold``: the words are found in the lower-cased text
    (case-insensitive names). Same result as ``pattern.sub``: leftmost matches, never
    overlapping. Compiled on first use (most rules never run in a hook process).
    """

    __slots__ = ("args", "back", "compiled", "fold", "gate", "replacement", "words")

    def __init__(self, words: tuple[str, ...], pattern: str, replacement: Any, *,
                 fold: bool = False, back: int = 0, flags: int = 0,
                 gate: tuple[str, ...] = ()) -> None:
        self.words = words
        self.gate = gate  # one of these must be in the text (a cheaper first test)
        self.args = (pattern, flags)
        self.replacement = replacement
        self.fold = fold
        self.back = back
        self.compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        if self.compiled is None:
            self.compiled = re.compile(*self.args)
        return self.compiled

    def _match_back(self, pattern: re.Pattern[str], text: str, pos: int,
                    done: int) -> re.Match[str] | None:
        """The leftmost match starting in the run of scheme characters before ``pos``."""
        begin = pos
        start = max(pos - self.back, done)
        while begin > start and text[begin - 1] in _SCHEME_CHARS:
            begin -= 1
        for k in range(begin, pos - 1):
            if (k == begin or text[k - 1] in "+.-") and text[k].isalpha():
                match = pattern.match(text, k)
                if match is not None:
                    return match
        return None

    def apply(self, text: str, lower: str | None) -> str:
        haystack = text
        if self.fold:
            haystack = lower if lower is not None else text.lower()
            if len(haystack) != len(text):  # a character whose lower case is longer
                return self.get().sub(self.replacement, text)
        positions: list[int] = []
        for word in self.words:
            i = haystack.find(word)
            while i >= 0:
                positions.append(i)
                i = haystack.find(word, i + 1)
        if not positions:
            return text
        if len(self.words) > 1:
            positions.sort()
        pattern = self.get()
        replacement = self.replacement
        out: list[str] = []
        last = done = 0
        for pos in positions:
            if pos < done:
                continue
            if self.back:
                match = self._match_back(pattern, text, pos, done)
            else:
                match = pattern.match(text, pos)
            if match is None:
                continue
            done = max(match.end(), pos + 1)
            old = match.group(0)
            new = replacement if isinstance(replacement, str) else replacement(match)
            if new != old:
                out.append(text[last:match.start()])
                out.append(new)
                last = match.end()
        if not out:
            return text
        out.append(text[last:])
        return "".join(out)


_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_PLACEHOLDER_WORDS = frozenset((
    "changeme", "change_me", "change-me", "changeit", "password", "passwd", "secret",
    "token", "example", "placeholder", "dummy", "none", "null", "nil", "undefined", "true",
    "false", "redacted", "hidden", "masked", "str", "string", "int", "bytes", "bool",
    "boolean", "any", "optional", "required", "todo", "tbd", "empty", "secretstr"))
_PLACEHOLDER = _Pattern(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|%[sd]|%\(\w+\)s|\{[^{}]*\}"
                     r"|\{\{.*\}\}|<%.*%>|<[^<>]+>|[*xX.#_\-•]{3,}|(?i:your)[\w\-.]*|\.\.\..*")
_PATH = _Pattern(r"(?:~|\.{1,2})?/[\w.\-/@+]*|[A-Za-z]:\\[\w.\-\\ ]*"
              r"|[\w.\-/]+\.(?i:pem|key|crt|cer|csr|der|p12|pfx|jks|json|txt|env|ya?ml|pub"
              r"|asc|gpg|ppk|keystore|cfg|conf|ini)")
_RANDOM_RUN = _Pattern(r"(?=[A-Za-z0-9]{0,64}[0-9])(?=[A-Za-z0-9]{0,64}[A-Za-z])[A-Za-z0-9]{16}")
_DOTTED = _Pattern(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Za-z_][\w.]*[(\[{].*")


def _placeholder(value: str) -> bool:
    """An empty value or a stand-in: ``$VAR``, ``${VAR}``, ``<your-key>``, ``changeme``…"""
    if value[:1] in "\"'" and value[-1:] == value[:1]:
        value = value[1:-1]
    value = value.strip()
    return (not value or value.lower() in _PLACEHOLDER_WORDS
            or _PLACEHOLDER.get().fullmatch(value) is not None)


def _looks_random(text: str) -> bool:
    return _RANDOM_RUN.get().search(text) is not None


def _path(value: str) -> bool:
    """A file path (not a secret), unless one of its segments looks random."""
    if _PATH.get().fullmatch(value) is None:
        return False
    return not any(len(part) >= 20 and _looks_random(part) for part in value.split("/"))


def _high_entropy(value: str) -> bool:
    """20+ characters of a token alphabet, mixed classes, >= 3.5 bits/char, not hex/UUID."""
    if len(value) < 20 or len(value) > 2000:
        return False
    if value.strip("0123456789abcdefABCDEF-") == "":
        return False  # a sha, a commit id, a UUID: identifiers, not secrets
    classes = 0
    for chars in ("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"):
        if any(c in chars for c in value):
            classes += 1
    if classes < 2 or any(c not in _TOKEN_CHARS for c in value):
        return False
    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    size = len(value)
    entropy = -sum(n / size * _log2(n / size) for n in counts.values())
    return entropy >= 3.5


def _log2(x: float) -> float:
    import math  # noqa: PLC0415 - only when a weak assignment is seen
    return math.log2(x)


_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_-.~")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_SECRET_PREFIXES = ("api", "secret", "access", "private", "master", "encryption", "signing",
                    "client", "app", "auth", "license", "service", "account", "webhook",
                    "refresh", "session", "bearer", "admin", "root", "db", "pass")
_STRONG = frozenset(("token", "secret", "password", "passwd", "pwd", "pass"))


def _strength(prefix: str, keyword: str, sep: str) -> str | None:
    """'strong', 'weak' or None for a name made of ``prefix`` + ``keyword``."""
    word = keyword.lower()
    lower = prefix.lower().lstrip("-.")
    if word.startswith("credential") or word in ("auth", "signature"):
        strong = False
    elif word == "key":
        strong = False
    else:
        strong = True
    if not lower:
        if word == "pass" and sep != "=":
            return None
        return "strong" if strong else "weak"
    camel = prefix[-1:].islower() and keyword[:1].isupper()
    if lower[-1] in "_-." or camel:
        stem = lower.rstrip("_-.")
        if word == "key":
            if (prefix.isupper() and keyword.isupper()) or stem.endswith(_SECRET_PREFIXES):
                return "strong"
            return "weak"
        return "strong" if strong else "weak"
    if word != "key" and strong and prefix.isupper() and keyword.isupper():
        return "strong"  # PGPASSWORD, MYSQLPWD: an upper-case environment variable
    if lower.endswith(_SECRET_PREFIXES) and word in ("key", "token", "secret", "password"):
        return "strong"  # apikey, APITOKEN, clientsecret, dbpassword
    return None


def _assignment(match: re.Match[str]) -> str:
    whole = match.group(0)
    keyword, sep_text, value = match.group(1), match.group(2), match.group(3)
    text, start = match.string, match.start()
    i = start
    while i > 0 and start - i < 80 and text[i - 1] in _NAME_CHARS:
        i -= 1
    prefix = text[i:start]
    sep = "=" if "=" in sep_text else ":"
    strength = _strength(prefix, keyword, sep)
    if strength is None:
        return whole
    quoted = value[:1] in "\"'"
    inner = value[1:-1] if quoted else value
    if strength == "weak" and len(inner) < 20:
        return whole  # cheap exit for ``key=len``, ``auth: none``...
    if inner.startswith("[REDACTED") or _placeholder(inner) or _path(inner):
        return whole
    end = match.end()
    if not quoted:
        spaced = sep_text[:1] in " \t" or sep_text[-1:] in " \t"
        name = (prefix + keyword).lower().lstrip("-.")
        low = inner.lower()
        if (_DOTTED.get().fullmatch(inner) or low == name or low.endswith("." + name)
                or (spaced and inner.replace("_", "").isalpha() and sep == "=")):
            return whole  # code: an expression, not a literal
        if sep == ":":  # YAML/header: the value alone on its line (prose has more words)
            window = text[end:end + 256]  # bounded: "key: key: key: ..." stays linear
            line_end = window.find("\n")
            rest = (window if line_end < 0 else window[:line_end]).strip()
            if (rest and not rest.startswith("#")) or (line_end < 0 and len(window) == 256):
                return whole
    if strength == "weak":
        if not _high_entropy(inner):
            return whole
        kind = "high_entropy"
    elif (keyword.lower() in ("password", "pwd") and text[end:end + 1] == ";"
          and not quoted):
        kind = "password"  # ADO-style connection string
    else:
        kind = "env"
    if sep == ":" and quoted:
        return f"{keyword}{sep_text}{value[0]}[REDACTED:{kind}]{value[0]}"
    return f"{keyword}{sep_text}[REDACTED:{kind}]"


def _openai(match: re.Match[str]) -> str:
    return "[REDACTED:openai]" if _looks_random(match.group(0)[3:]) else match.group(0)


def _url_password(match: re.Match[str]) -> str:
    value = match.group(2)
    if value.startswith("[REDACTED") or _placeholder(value):
        return match.group(0)
    return f"{match.group(1)}[REDACTED:password]@"


_KEYWORDS = ("key", "token", "secret", "pass", "pwd", "credential", "auth", "signature")
_PEM = r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----"

# Order matters: specific before generic (a redacted value is left alone by later rules).
_RULES: list[_Rule] = [
    _Rule(("-----BEGIN",), _PEM + r".*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----"
          r"|\Z)", _whole("private_key"), flags=re.DOTALL),
    _Rule(("AKIA", "ASIA"), r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])",
          _whole("aws_access_key_id")),
    _Rule(("aws_secret_access_key", "secretaccesskey"),
          r"((?i:aws_secret_access_key|secretaccesskey)[\"']?[ \t]*[:=][ \t]*[\"']?)"
          r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])()", _keep_prefix("aws_secret_access_key"),
          fold=True, gate=("=", ":")),
    _Rule(("sk-ant-",), r"sk-ant-[A-Za-z0-9_\-]{16,}" + _TOKEN_END, _whole("anthropic"),
          gate=("sk-",)),
    _Rule(("sk-",), r"(?<![A-Za-z0-9_\-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?"
          r"[A-Za-z0-9_\-]{20,}" + _TOKEN_END, _openai),
    _Rule(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
          r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"
          r"(?![A-Za-z0-9_])", _whole("github"), gate=("_",)),
    _Rule(("glpat-",), r"glpat-[A-Za-z0-9_\-]{20,}" + _TOKEN_END, _whole("gitlab")),
    _Rule(("hooks.slack.com/",),
          r"(hooks\.slack\.com/(?:services|workflows|triggers)/)([A-Za-z0-9/_\-]{8,})()",
          _keep_prefix("slack_webhook")),
    _Rule(("xox",), r"(?<![A-Za-z0-9])xox[abeprs]-[A-Za-z0-9\-]{10,}", _whole("slack")),
    _Rule(("sk_live_", "rk_live_", "sk_test_", "rk_test_", "whsec_"),
          r"(?<![A-Za-z0-9])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})"
          r"(?![A-Za-z0-9])", _whole("stripe"), gate=("_",)),
    _Rule(("eyJ",), r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
          _whole("jwt")),
    _Rule(("authorization",),
          r"((?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:bearer|basic|token|bot)[ \t]+)"
          r"([A-Za-z0-9._~+/\-]{8,}=*)()", _keep_prefix("auth_header"), fold=True,
          gate=("=", ":")),
    _Rule(("://",), r"(\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@\"'<>]{1,200}:)"
          r"([^\s/\"'<>]{1,500})@", _url_password, back=24),
    _Rule(_KEYWORDS,
          r"(?i)(key|token|secret|passw(?:or)?d|pwd|pass|credentials?|auth|signature)"
          r"([\"']?[ \t]*(?:=(?!=)|:(?![/\\:=]))[ \t]*)"
          r"(\"(?:[^\"\\\n]|\\.){1,2000}\"|'[^'\n]{1,2000}'|[^\s\"'&;,)}\]<>]{1,2000})",
          _assignment, fold=True, gate=("=", ":")),
]


def redact(text: str) -> str:
    """Replace the secrets in ``text`` by ``[REDACTED:<kind>]``."""
    lower: str | None = None
    for rule in _RULES:
        if rule.gate and not any(gate in text for gate in rule.gate):
            continue
        if rule.fold and lower is None:
            lower = text.lower()
        new = rule.apply(text, lower if rule.fold else None)
        if new is not text:
            text = new
            lower = None
    return text


def _clean_str(text: str) -> str:
    return redact(strip_tags(text))


_FIELD_WORDS = ("key", "token", "secret", "password", "passwd", "pwd", "pass", "credential",
                "credentials", "auth", "signature")


def _secret_field(key: str, value: str) -> str:
    """The string ``value`` of a dict item, redacted when ``key`` names a secret.

    ``{"password": "hunter2"}`` has no ``=`` or ``:`` left in its value for
    :func:`redact` to see, so the key decides, with the rules of an assignment: a strong
    name redacts a one-word value that is no placeholder or path; a weak one only a
    random-looking value.
    """
    lower = key.lower()
    for word in _FIELD_WORDS:
        if lower.endswith(word):
            strength = _strength(key[:-len(word)], key[-len(word):], "=")
            break
    else:
        return value
    if (strength is None or not value or len(value) > 2000 or value.split(None, 1)[0] != value
            or value.startswith("[REDACTED") or _placeholder(value) or _path(value)):
        return value
    if strength == "weak":
        return "[REDACTED:high_entropy]" if _high_entropy(value) else value
    return "[REDACTED:env]"


def clean(value: Any) -> Any:
    """Tags stripped, then secrets redacted, in every string value of a JSON value.

    A string value whose key names a secret (``{"api_key": "..."}``) is judged as an
    assignment is (see ``env``/``high_entropy`` above).
    """
    if isinstance(value, str):
        return _clean_str(value)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(item, str):
                item = _clean_str(item)
                out[key] = _secret_field(key, item) if isinstance(key, str) else item
            else:
                out[key] = clean(item)
        return out
    if isinstance(value, list):
        return [clean(item) for item in value]
    return value
