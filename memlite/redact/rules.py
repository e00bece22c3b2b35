"""The secret rules of the redactor, in order (see ``memlite.privacy`` for the kinds).

STANDARD LIBRARY ONLY (the hook imports it). Every pattern is bounded (explicit caps, no
nested quantifiers over overlapping classes); a token rule starts with a look-behind so a
trigger repeated inside one run (``eyJeyJeyJ…``) fails at once instead of rescanning.
"""

from __future__ import annotations

import re

from memlite.redact import judge
from memlite.redact.engine import Lazy, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["RULES", "assignment_value"]

_NOT_TOKEN_BEFORE = r"(?<![A-Za-z0-9_\-])"
_NOT_TOKEN_AFTER = r"(?![A-Za-z0-9_\-])"
_REDACTED = ("[REDACTED", '"[REDACTED', "'[REDACTED", '\\"[REDACTED')
# a value: an escaped-quoted, quoted or bare run, each capped
_VALUE = (r"(\\\"[^\"\\\n]{1,2000}\\\"|\\'[^'\\\n]{1,2000}\\'|\"(?:[^\"\\\n]|\\.){1,2000}\""
          r"|'[^'\n]{1,2000}'|[^\s\"'`&;,)}\]<>\\\[{(][^\s\"'`&;,)}\]<>\\]{0,1999})")
# a bare value that went on past a backslash (``C:\Users\me``, not a ``\n`` escape)
_BARE_ON = Lazy(r"[^\s\"'&;,)}\]<>]{1,2000}")


def _whole(kind: str, check: Callable[[str], bool] | None = None, skip: int = 0
           ) -> Callable[[re.Match[str]], str]:
    """Replace the whole match, unless ``check(body)`` says it is a stand-in."""
    marker = f"[REDACTED:{kind}]"

    def sub(match: re.Match[str]) -> str:
        if check is not None and check(match.group(0)[skip:]):
            return match.group(0)
        return marker
    sub.blunt = marker  # type: ignore[attr-defined]
    return sub


def _keep_prefix(kind: str, judge_value: Callable[[str], bool] | None = None
                 ) -> Callable[[re.Match[str]], str]:
    """Replace group 2 (the value), keeping group 1 (the name) and group 3 (a suffix).

    ``judge_value``: the value must pass it too (else the text is kept).
    """
    def sub(match: re.Match[str]) -> str:
        value = match.group(2)
        if value.startswith(_REDACTED) or judge.placeholder(value):
            return match.group(0)
        if judge_value is not None and not judge_value(_unquote(value)):
            return match.group(0)
        tail = match.group(3) if match.re.groups >= 3 else ""
        return f"{match.group(1)}[REDACTED:{kind}]{tail or ''}"
    sub.blunt = f"[REDACTED:{kind}]"  # type: ignore[attr-defined]
    return sub


def _unquote(value: str) -> str:
    for quote in ('\\"', "\\'", '"', "'", "`"):
        if len(value) >= 2 * len(quote) and value.startswith(quote) and value.endswith(quote):
            return value[len(quote):-len(quote)]
    return value


def _openai(match: re.Match[str]) -> str:
    body = match.group(0)[3:]
    if judge.looks_random(body) and not judge.fake_token(body):
        return "[REDACTED:openai]"
    return match.group(0)


def _slack(match: re.Match[str]) -> str:
    body = match.group(0)[5:]
    if any(c.isdigit() for c in body) and not judge.fake_token(body):
        return "[REDACTED:slack]"
    return match.group(0)


def _url_password(match: re.Match[str]) -> str:
    value = match.group(2)
    if value.startswith("[REDACTED") or judge.placeholder(value):
        return match.group(0)
    return f"{match.group(1)}[REDACTED:password]@"


_P_COMMANDS = Lazy(r"\b(?:mysql\w{0,10}|mariadb\w{0,10}|sshpass|(?:docker|podman|nerdctl|buildah"
                   r"|skopeo|oras|crane|regctl|helm(?:[ \t]+registry)?)[ \t]+login)\b")


def _line_before(text: str, start: int) -> str:
    """The text of the line up to ``start`` (at most 300 characters; ``\\n`` escapes too)."""
    begin = max(0, start - 300)
    chunk = text[begin:start]
    cut = max(chunk.rfind("\n"), chunk.rfind("\\n"))
    return chunk[cut + 1:] if cut >= 0 else chunk


def _short_flag(match: re.Match[str]) -> str:
    """``mysql -p'…'``, ``sshpass -p …``, ``docker login -p …``, ``ssh-keygen -N …``."""
    flag, space, value = match.group(1), match.group(2), match.group(3)
    before = _line_before(match.string, match.start())
    if flag == "-p":
        found = _P_COMMANDS.get().search(before)
        if found is None:
            return match.group(0)
        if found.group(0).startswith(("mysql", "mariadb")) and space:
            return match.group(0)  # ``mysql -p shop``: -p prompts, shop is the database
    elif "ssh-keygen" not in before:
        return match.group(0)
    inner = _unquote(value)
    if value.startswith(_REDACTED) or judge.placeholder(inner) or inner.startswith("-"):
        return match.group(0)
    return f"{flag}{space}[REDACTED:password]"


_STDIN_READERS = ("password-stdin", "passwd", "--stdin", "sudo -S", "kinit", "vault login")


def _echo_pipe(match: re.Match[str]) -> str:
    """``echo PASS | docker login --password-stdin``: the pipe's reader takes a secret."""
    text, end = match.string, match.end()
    window = text[end:end + 300]
    cut = window.find("\n")
    after = window if cut < 0 else window[:cut]
    if not any(reader in after for reader in _STDIN_READERS):
        return match.group(0)
    return _ECHO(match)


_ECHO = _keep_prefix("password")


def _long_flag(match: re.Match[str]) -> str:
    """``--password VALUE``, ``--token VALUE`` (a space, not ``=``: that is an assignment)."""
    value = match.group(3)
    inner = _unquote(value)
    if value.startswith(_REDACTED) or inner.startswith("-") or not judge.credential_like(inner):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}[REDACTED:password]"


def _prose(match: re.Match[str]) -> str:
    """``the passphrase is Tr0ub4dor&3``: the value must read as a password."""
    value = match.group(4)
    stripped = value.rstrip(".,;:!?)")
    opening = match.group(3)
    closing = {"\u201c": "\u201d"}.get(opening, opening)
    # "something secure": a quote not closed right after one word is prose
    quoted = bool(opening) and value == stripped and match.string[
        match.end():match.end() + 1] == closing
    if stripped.startswith("[REDACTED") or judge.placeholder(stripped) or judge.path(stripped):
        return match.group(0)
    if quoted:
        if len(stripped) < 6:
            return match.group(0)
    elif ("<" in stripped or ">" in stripped or len(stripped) < 8
          or not judge.secret_like(stripped)):
        return match.group(0)  # ``latin-1``, ``self-describing``, ``valid.</p>``: prose
    return (f"{match.group(1)}{match.group(2)}{match.group(3)}[REDACTED:password]"
            f"{value[len(stripped):]}")


_PGPASS_PORTS = (":5432:", ":5433:", ":6432:", ":*:")
_PGPASS_HOST = Lazy(r"(?:\A|[\s\"'])[A-Za-z0-9.\-_*\[\]]{1,253}\Z")


def _pgpass(match: re.Match[str]) -> str:
    """``host:port:db:user:PASS`` (a ``.pgpass`` line): a host name alone before it."""
    host = _line_before(match.string, match.start())
    if (_PGPASS_HOST.get().search(host) is None or match.group(2) == "*"
            or judge.placeholder(match.group(2))):
        return match.group(0)
    return f"{match.group(1)}[REDACTED:password]"


def _positional(match: re.Match[str]) -> str:
    value = match.group(3)
    if ("/" not in value and judge.high_entropy(value) and judge.looks_random(value)
            and not judge.fake_token(value)):
        return f"{match.group(1)}{match.group(2)}[REDACTED:api_key]{match.group(2)}"
    return match.group(0)


def _named_pair(match: re.Match[str]) -> str:
    """k8s/ECS ``name: DB_PASSWORD`` then ``value: …``: the name decides."""
    name, value = match.group(2), match.group(5)
    low = name.lower()
    for word in ("password", "passwd", "passphrase", "secret", "token", "pwd", "key",
                 "credentials", "credential", "auth", "pass"):
        if low.endswith(word):
            strength = judge.strength(name[:-len(word)], name[-len(word):], "=")
            break
    else:
        return match.group(0)
    inner = _unquote(value)
    if (strength is None or value.startswith(_REDACTED) or judge.placeholder(inner)
            or judge.path(inner) or (strength == "weak" and not judge.high_entropy(inner))):
        return match.group(0)
    quote = value[:len(value) - len(value.lstrip("\\\"'"))]
    return (f"{match.group(1)}{name}{match.group(3)}{match.group(4)}"
            f"{quote}[REDACTED:env]{quote}")


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_TYPE_NAME = Lazy(r"(?:[A-Z][a-z]+){2,8}(?:\[[\w\[\], |.]{0,80}\])?")
_DOTTED = Lazy(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Za-z_][\w.]*[(\[{].*")


def assignment_value(keyword: str, prefix: str, sep: str, value: str,
                     after: str) -> str | None:
    """The kind to redact ``value`` as (assigned to ``prefix + keyword``), or None.

    ``after``: up to 256 characters that follow the value (for ``:``, a YAML/header value
    must be alone on its line: prose has more words).
    """
    strength = judge.strength(prefix, keyword, "=" if sep == "=" else ":")
    if strength is None:
        return None
    quoted = value[:1] in "\"'" or value[:2] in ('\\"', "\\'")
    inner = _unquote(value) if quoted else value
    if value.startswith(_REDACTED) or judge.placeholder(inner) or judge.path(inner):
        return None
    if not judge.literal_like(inner):
        return None  # ``'>'``, ``"#ddd0c0"``, ``11098``, an emoji: not a credential
    bare = inner.strip("_-").lower()
    if len(bare) >= 3 and bare in (prefix + keyword).lower():
        return None  # ``_DESCRIPTOR_KEY = 'DESCRIPTOR'``: a constant named after itself
    if strength == "weak" and _DOTTED.get().fullmatch(inner):
        return None  # ``"Key": "access_logs.s3.enabled"``: a dotted name
    if not quoted:
        name = (prefix + keyword).lower().lstrip("-.")
        low = inner.lower()
        if (_DOTTED.get().fullmatch(inner) or low == name or low.endswith("." + name)
                or (inner.isidentifier() and keyword.lower() in low)):
            return None  # code: an expression (``token=new_token``), not a literal
        if sep == ":":
            cut = len(after)
            for end in ("\n", "\\n", "\\r"):
                i = after.find(end)
                if 0 <= i < cut:
                    cut = i
            rest = after[:cut].strip()
            if (rest and not rest.startswith(("#", "\\"))) or (
                    cut == len(after) == 256):
                return None  # prose, or ``key: Type,`` in code: not a lone YAML value
            if _TYPE_NAME.get().fullmatch(inner):
                return None  # ``private_key: PrivateKeyTypes``: an annotation
    if strength == "weak":
        if keyword.lower() == "auth" and judge.basic_credentials(inner):
            return "password"  # a Docker ``auths`` entry: base64 of user:password
        return "high_entropy" if judge.high_entropy(inner) else None
    return "env"


_ESCAPES = frozenset("nrt\"'\\/u")


def _assignment(match: re.Match[str]) -> str:
    whole = match.group(0)
    keyword, sep_text, value = match.group(1), match.group(2), match.group(3)
    text, start = match.string, match.start()
    i = start
    while i > 0 and start - i < 80 and text[i - 1] in _NAME_CHARS:
        i -= 1
    if i > 0 and text[i - 1] == "\\" and text[i] in "nrt":
        i += 1  # ``\npassword`` in JSON-escaped text: the name starts after the escape
    prefix = text[i:start]
    end = match.end()
    if text[end:end + 1] == "\\" and text[end + 1:end + 2] not in _ESCAPES and (
            value[:1] not in "\"'\\"):
        longer = _BARE_ON.get().match(text, match.start(3))
        if longer is not None and judge.path(longer.group(0)):
            return whole  # a Windows path: ``PWD=C:\Users\me``
    stripped = sep_text.strip(" \t\"'\\")
    sep = "=" if "=" in stripped else ("," if stripped == "," else ":")
    quoted = value[:1] in "\"'" or value[:2] in ('\\"', "\\'")
    if sep == ",":  # ("X-Api-Key", "…"): two literals, a credential-looking value only
        if not quoted or not judge.secret_like(_unquote(value)):
            return whole
    elif not quoted and sep == "=":
        spaced = sep_text[:1] in " \t" or sep_text[-1:] in " \t"
        if spaced and value.replace("_", "").isalpha():
            return whole  # ``token = next_token``: code
    kind = assignment_value(keyword, prefix, sep, value, text[end:end + 256])
    if kind is None:
        return whole
    if (kind == "env" and keyword.lower() in ("password", "pwd") and not quoted
            and text[end:end + 1] == ";"):
        kind = "password"  # ADO-style connection string
    if quoted and sep != "=":
        quote = value[:2] if value[0] == "\\" else value[0]
        return f"{keyword}{sep_text}{quote}[REDACTED:{kind}]{quote}"
    return f"{keyword}{sep_text}[REDACTED:{kind}]"


_KEYWORDS = ("key", "token", "secret", "pass", "pwd", "credential", "auth", "signature")
_PEM = r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----"
_SEP = (r"(?:\\?[\"'])?[ \t]*(?:=(?!=)|=>|:(?![/\\:=]))[ \t]*"
        r"|\\?[\"'][ \t]*,[ \t]*(?=\\?[\"'])")
_HEADER_SEP = r"(?:\\?[\"'])?(?:[ \t]*[:=,][ \t]*|[ \t]+)(?:\\?[\"'])?"

# Order matters: specific before generic (a redacted value is left alone by later rules).
RULES: list[Rule] = [
    Rule("private_key", ("-----BEGIN",),
         _PEM + r".*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----|\Z)",
         "[REDACTED:private_key]", flags=re.DOTALL),
    Rule("aws_access_key_id", ("AKIA", "ASIA"),
         r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])",
         _whole("aws_access_key_id", judge.fake_token, 4)),
    Rule("aws_secret_access_key", ("aws_secret_access_key", "secretaccesskey"),
         r"((?i:aws_secret_access_key|secretaccesskey)(?:\\?[\"'])?[ \t]*[:=][ \t]*"
         r"(?:\\?[\"'])?)([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])()",
         _keep_prefix("aws_secret_access_key", lambda v: not judge.fake_token(v)),
         fold=True, gate=("=", ":")),
    Rule("anthropic", ("sk-ant-",),
         _NOT_TOKEN_BEFORE + r"sk-ant-[A-Za-z0-9_\-]{16,400}" + _NOT_TOKEN_AFTER,
         _whole("anthropic", judge.fake_token, 7), gate=("sk-",)),
    Rule("openai", ("sk-",),
         r"sk-(?<![A-Za-z0-9_\-]sk-)(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,400}"
         + _NOT_TOKEN_AFTER, _openai, blunt="[REDACTED:openai]"),
    Rule("github", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
         r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})"
         r"(?![A-Za-z0-9_])", _whole("github", judge.fake_token, 4), gate=("_",)),
    Rule("gitlab", ("glpat-", "gldt-", "glrt-"),
         _NOT_TOKEN_BEFORE + r"gl(?:pat|dt|rt)-[A-Za-z0-9_\-]{20,100}" + _NOT_TOKEN_AFTER,
         _whole("gitlab", judge.fake_token, 5)),
    Rule("slack_webhook", ("hooks.slack.com/",),
         r"(hooks\.slack\.com/(?:services|workflows|triggers)/)([A-Za-z0-9/_\-]{8,300})()",
         _keep_prefix("slack_webhook")),
    Rule("slack", ("xox",), r"(?<![A-Za-z0-9])xox[abeprs]-[A-Za-z0-9\-]{10,300}", _slack,
         blunt="[REDACTED:slack]"),
    Rule("stripe", ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "whsec_"),
         r"(?<![A-Za-z0-9])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}"
         r"|whsec_[A-Za-z0-9]{24,255})(?![A-Za-z0-9])", _whole("stripe", judge.fake_token, 8),
         gate=("_",)),
    Rule("pypi", ("pypi-AgE",), _NOT_TOKEN_BEFORE + r"pypi-AgE[A-Za-z0-9_\-]{50,1000}",
         "[REDACTED:pypi]"),
    Rule("npm", ("npm_",), r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])",
         _whole("npm", judge.fake_token, 4)),
    Rule("twilio", ("SK",), r"SK(?<![A-Za-z0-9]SK)[0-9a-f]{32}(?![A-Za-z0-9])",
         _whole("twilio", judge.fake_token, 2)),
    Rule("sendgrid", ("SG.",),
         r"(?<![A-Za-z0-9_.\-])SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _NOT_TOKEN_AFTER,
         "[REDACTED:sendgrid]"),
    Rule("google_api_key", ("AIza",),
         _NOT_TOKEN_BEFORE + r"AIza[0-9A-Za-z_\-]{35}" + _NOT_TOKEN_AFTER,
         _whole("google_api_key", judge.fake_token, 4)),
    Rule("vault", ("hvs.", "hvb.", "hvr."),
         r"(?<![A-Za-z0-9_.\-])hv[sbr]\.[A-Za-z0-9_\-]{24,300}" + _NOT_TOKEN_AFTER,
         _whole("vault", judge.fake_token, 4)),
    Rule("huggingface", ("hf_",), r"(?<![A-Za-z0-9_])hf_[A-Za-z]{34}(?![A-Za-z0-9_])",
         _whole("huggingface", judge.fake_token, 3)),
    Rule("jwt", ("eyJ",),
         r"eyJ(?<![A-Za-z0-9_\-]eyJ)[A-Za-z0-9_\-]{8,4000}\.eyJ[A-Za-z0-9_\-]{8,8000}"
         r"\.[A-Za-z0-9_\-]{8,2000}", "[REDACTED:jwt]"),
    Rule("auth_header", ("authorization",),
         r"((?i:authorization)" + _HEADER_SEP + r"(?i:bearer|basic|token|bot|digest|apikey"
         r"|sso-key)[ \t]+)([A-Za-z0-9._~+/\-]{8,2000}=*)()", _keep_prefix("auth_header"),
         fold=True),
    Rule("bearer", ("bearer ",),
         r"((?i:bearer)[ \t]+)([A-Za-z0-9._~+/\-]{20,2000}=*)()",
         _keep_prefix("auth_header", judge.looks_random), fold=True),
    Rule("header", ("api-key", "auth-token", "access-token", "vault-token", "private-token"),
         r"((?i:api-key|auth-token|access-token|vault-token|private-token)" + _HEADER_SEP
         + r")([A-Za-z0-9._~+/=\-]{8,500})()",
         _keep_prefix("auth_header", judge.credential_like), fold=True),
    Rule("url_password", ("://",), r"(\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@\"'<>]{0,200}:)"
         r"([^\s/\"'<>]{1,500})@", _url_password, back=24, blunt="[REDACTED:password]"),
    Rule("short_flag", ("-p", "-N", "-P"),
         r"(-(?<![\w\-]-)[pNP])([ \t]?)(\\?[\"'][^\"'\n\\]{0,500}\\?[\"']|[^\s\"'\\;|&]{1,500})",
         _short_flag, gate=("mysql", "mariadb", "sshpass", "login", "ssh-keygen"),
         blunt="[REDACTED:password]"),
    Rule("long_flag", ("--",),
         r"(--(?<![\w\-]--)(?:[a-z0-9]{1,30}-){0,4}(?:password|passwd|passphrase|token|secret"
         r"|api-key|apikey|access-key|secret-key|pass))([ \t]+)"
         r"(\\?[\"'][^\"'\n\\]{1,500}\\?[\"']|[^\s\"'\\;|&]{1,500})", _long_flag,
         blunt="[REDACTED:password]"),
    Rule("echo_pipe", ("echo ", "printf "),
         r"((?:echo|printf)[ \t]+(?:-[neE]{1,3}[ \t]+)?)(\\?[\"'][^\"'\n\\]{1,500}\\?[\"']"
         r"|[^\s\"'|;&\\]{1,500})([ \t]*\|)", _echo_pipe, gate=_STDIN_READERS,
         blunt="[REDACTED:password]"),
    Rule("curl_user", ("-u", "--user"),
         r"((?:-u|--user)(?<![\w\-]-u)(?<![\w\-]--user)(?:[ \t]+|=)(?:\\?[\"'])?"
         r"[^\s:\"'\\\[\]]{1,200}:)"
         r"([^\s\"'\\]{1,500})()", _keep_prefix("password", judge.credential_like), gate=(":",)),
    Rule("openssl_pass", ("-pass",), r"(-pass(?<![\w\-]-pass)(?:in|out)?[ \t]+pass:)"
         r"([^\s\"'\\]{1,500})()", _keep_prefix("password"), gate=(" pass:",)),
    Rule("netrc", ("machine",),
         r"((?i:machine)[ \t]+[^\s\\]{1,253}(?:\s|\\n){1,20}(?:(?i:login)[ \t]+[^\s\\]{1,200}"
         r"(?:\s|\\n){1,20})?(?i:password)[ \t]+)([^\s\"'\\]{1,500})()",
         _keep_prefix("password"), fold=True, gate=("password",)),
    Rule("pgpass", _PGPASS_PORTS,
         r"(:(?:5432|5433|6432|\*):[^:\s\\]{1,100}:[^:\s\\]{1,100}:)([^\s\\:]{1,500})"
         r"(?=$|\\n|\r)", _pgpass, flags=re.MULTILINE, blunt="[REDACTED:password]"),
    Rule("named_pair", ("name",),
         r"((?i:name)(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?)([A-Za-z0-9_.\-]{1,100})"
         r"((?:\\?[\"'])?[ \t]*,?[ \t]*(?:\r?\n|\\n)?[ \t]*(?:-[ \t]+)?(?:\\?[\"'])?"
         r"(?i:value)(?:\\?[\"'])?[ \t]*[:=][ \t]*)()" + _VALUE, _named_pair, fold=True,
         gate=("value",),
         blunt="[REDACTED:env]"),
    Rule("prose", ("password", "passphrase", "passcode", "passwd", "passwords", "passphrases",
                   "passcodes", "passwds", "pwd", "pin", "secret", "token", "api key"),
         r"((?i:pass(?:word|phrase|code|wd)s?|pwd|pin|secret|token|api key))"
         r"((?:[ \t]+(?i:is|was|are|to|as|becomes|now|will be|should be|set to"
         r"|changed to|reads)){1,3}[ \t]+)([`\"'\u201c]?)([^\s`\"'\u201d]{1,200})",
         _prose, fold=True, blunt="[REDACTED:password]", follow=" \t"),
    Rule("positional", ("client(", "api(", "sdk(", "key(", "token(", "auth("),
         r"((?i:client|api|sdk|key|token|auth)\([ \t]*(?:[a-z_]{1,20}[ \t]*=[ \t]*)?)(\\?[\"'])"
         r"([A-Za-z0-9_\-.+/=:]{20,300})\2", _positional, fold=True, gate=("\"", "'"),
         blunt="[REDACTED:api_key]"),
    Rule("assignment", _KEYWORDS + ("password", "passwd", "passphrase", "credentials"),
         r"((?i:key|token|secret|passw(?:or)?d|passphrase|pwd|pass|credentials?|auth|signature))"
         r"(" + _SEP + r")" + _VALUE, _assignment, fold=True, gate=("=", ":", ","),
         blunt="[REDACTED:env]", follow="\\\"' \t=:"),
]
RULES_BY_NAME = {rule.name: rule for rule in RULES}
_ALWAYS = frozenset(i for i, rule in enumerate(RULES) if not rule.words)
_WORDS = tuple(sorted({word.lower() for rule in RULES for word in rule.words}))
_RULES_OF = {word: frozenset(i for i, rule in enumerate(RULES)
                             if any(w.lower() == word for w in rule.words))
             for word in _WORDS}
# a word holding another (``password`` holds ``pass``) is looked for only when that one
# occurs: ~30 ``in`` scans of the text instead of ~70
_ROOTS = tuple(w for w in _WORDS if not any(o != w and o in w for o in _WORDS))
_HOLDERS = {w: tuple(o for o in _WORDS if o != w and w in o) for w in _ROOTS}


def redact(text: str) -> str:
    """Replace the secrets in ``text`` by ``[REDACTED:<kind>]``.

    A few ``in`` scans of the lower-cased text find which trigger words occur (about
    1 ms per 100 kB for all of them), and only the rules of those words run.
    """
    lower = text.lower()
    chosen = set(_ALWAYS) if ":" in text else set()
    present: set[str] = set()
    for root in _ROOTS:
        if root in lower:
            present.add(root)
            chosen |= _RULES_OF[root]
            for word in _HOLDERS[root]:
                if word in lower:
                    present.add(word)
                    chosen |= _RULES_OF[word]
    if not chosen:
        return text
    for index in sorted(chosen):
        rule = RULES[index]
        new = rule.apply(text, lower if rule.fold else None, present)
        if new is not text:
            text = new
            lower = text.lower()
    return text
