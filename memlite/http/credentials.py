"""The install's API token, the dashboard cookie derived from it, and one-time login codes.

The token
    ``token`` in the data directory: 43 URL-safe characters (``secrets.token_urlsafe(32)``,
    256 bits), mode 0600, in a 0700 directory. It is made once, by whoever needs it first
    (the worker at start, ``memlite dashboard``), and never changes unless a person
    deletes the file. Creation is atomic: the token is written and fsync'd under a unique
    temporary name opened with ``O_EXCL``, then published with ``link()``, which fails if
    the file exists. So two starters racing get the same token, and no reader ever sees
    a half-written file.

The cookie
    The dashboard authenticates with an HttpOnly, SameSite=Strict cookie whose value is
    ``HMAC-SHA256(token, "memlite dashboard cookie v1")``: proof of the token that is not
    the token. Its name carries the port (``memlite-37888``), as Jupyter's does, because
    browsers share cookies between ports of one host.

Login codes
    ``memlite dashboard`` asks the worker (with the token) for a one-time URL. Its code is
    random, valid ``LOGIN_CODE_SECONDS`` and single-use; codes live only in the worker's
    memory, so a restart invalidates them.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import re
import secrets
import stat
from pathlib import Path

import trio

from memlite.errors import DataDirError

__all__ = [
    "LOGIN_CODE_SECONDS",
    "TOKEN_FILE",
    "LoginCodes",
    "cookie_name",
    "cookie_value",
    "load_or_create_token",
    "tokens_equal",
]

log = logging.getLogger(__name__)

TOKEN_FILE = "token"
LOGIN_CODE_SECONDS = 300.0
MAX_OUTSTANDING_CODES = 16
_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{32,256}")
_COOKIE_CONTEXT = b"memlite dashboard cookie v1"


def _tighten(path: Path, mode: int) -> None:
    """Remove group/other permission bits from ``path`` if it has any."""
    current = stat.S_IMODE(os.stat(path).st_mode)
    if current & 0o077:
        os.chmod(path, mode)
        log.warning("%s was mode %o; tightened to %o", path, current, mode)


def _read_token(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise DataDirError(f"{path} is not a regular file; move it aside")
        raw = f.read(1024)
    token = raw.decode("ascii", "replace").strip()
    if not _TOKEN_RE.fullmatch(token):
        raise DataDirError(
            f"{path} does not hold a memlite token. Delete it and restart the worker "
            "(`memlite worker restart`) to create a new one."
        )
    return token


def load_or_create_token(data_dir: Path | str) -> str:
    """Return the install's token, creating it (and the 0700 directory) on first use.

    Raises:
        DataDirError: the directory or file cannot be created or read, or the file does
            not hold a token.
    """
    data_dir = Path(data_dir)
    path = data_dir / TOKEN_FILE
    try:
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        _tighten(data_dir, 0o700)
        with contextlib.suppress(FileNotFoundError):
            token = _read_token(path)
            _tighten(path, 0o600)
            return token
        token = secrets.token_urlsafe(32)
        tmp = data_dir / f".{TOKEN_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(token.encode("ascii") + b"\n")
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, path)  # atomic create-if-absent, with the content already there
            except FileExistsError:
                return _read_token(path)  # another starter won the race: use its token
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        dir_fd = os.open(data_dir, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        log.info("created a new API token in %s", path)
        return token
    except OSError as exc:
        raise DataDirError(f"cannot read or create the token file {path}: {exc.strerror}") from None


def tokens_equal(given: str, expected: str) -> bool:
    """Constant-time comparison that accepts any header text (``compare_digest`` on bytes)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"),
                               expected.encode("utf-8", "surrogateescape"))


def cookie_name(port: int) -> str:
    return f"memlite-{port}"


def cookie_value(token: str) -> str:
    """The dashboard cookie's value: an HMAC of the token, never the token itself."""
    return hmac.new(token.encode("utf-8"), _COOKIE_CONTEXT, hashlib.sha256).hexdigest()


class LoginCodes:
    """Single-use login codes, each valid ``ttl`` seconds of Trio time, kept in memory.

    At most ``limit`` codes are outstanding; issuing one more forgets the oldest, so a
    caller holding the token cannot grow the worker's memory without bound.
    """

    def __init__(self, *, ttl: float = LOGIN_CODE_SECONDS, limit: int = MAX_OUTSTANDING_CODES):
        self.ttl = ttl
        self.limit = limit
        self._codes: dict[str, float] = {}  # code -> expiry (trio.current_time())

    def issue(self) -> str:
        now = trio.current_time()
        self._forget_expired(now)
        while len(self._codes) >= self.limit:
            self._codes.pop(next(iter(self._codes)))
        code = secrets.token_urlsafe(32)
        self._codes[code] = now + self.ttl
        return code

    def redeem(self, code: str) -> bool:
        """True once for a valid, unexpired code; False for any other string, ever after."""
        now = trio.current_time()
        self._forget_expired(now)
        match = next((known for known in self._codes if tokens_equal(code, known)), None)
        if match is None:
            return False
        del self._codes[match]
        return True

    def __len__(self) -> int:
        return len(self._codes)

    def _forget_expired(self, now: float) -> None:
        for code in [c for c, expiry in self._codes.items() if expiry <= now]:
            del self._codes[code]
