"""Issue 9, part 6: what memlite exposes stays on this machine and to this user.

* The worker listens on 127.0.0.1 only (its own listening sockets, from /proc).
* After a real session through the hooks (and a spooled event), the data directory and
  every directory in it are 0700, every file in it 0600 or tighter: the database and its
  WAL/SHM, the token, the spool, worker.log, hooks.log, settings.json, worker.pid.
* No HTTP route takes a filesystem path or a program: the only route argument that
  names a file is ``/static/<name>``, a plain (slash-free) converter, and a fuzz of
  traversal names, encodings, absolute paths, NUL and a symlink planted in the static
  folder gets 404, never the bytes of a file outside it. Settings that could name a
  program or a remote host are refused.
* The MCP tools take no path or program argument; the ``file`` search filter is a
  substring filter over stored paths (``file=../../etc/passwd`` reads nothing).
* ``memlite export --output`` writes the one file the CLI user named (their choice: it
  is their own memory), created 0600; ``memlite import`` refuses a file that is not a
  memlite export without storing or echoing its content.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

REPO = Path(__file__).resolve().parents[2]
for extra in (REPO / "chaos", REPO / "tests" / "mcp", REPO / "tests" / "privacy"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from harness import Chaos, payload, wait_until  # noqa: E402
from mcp_helpers import connect, text_of  # noqa: E402
from test_secrets_everywhere import port_held_by_503  # noqa: E402

from memlite.http import dashboard  # noqa: E402
from memlite.mcp.tools import TOOLS  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

OUTSIDE_MARKER = "CONFINEMENT-OUTSIDE-FILE-7f3a9c"


@pytest.fixture
def world(data_dir: Path):
    chaos = Chaos.create(data_dir, MEMLITE_HOOK_SESSION_START_WAIT="0")
    try:
        yield chaos
    finally:
        chaos.stop()


def get(world: Chaos, raw_path: str, *, token: bool = True) -> tuple[int, bytes]:
    status, body, _ = get_full(world, raw_path, token=token)
    return status, body


def get_full(world: Chaos, raw_path: str, *, token: bool = True) -> tuple[int, bytes, str]:
    """A GET with the path sent byte for byte as given (no normalization here)."""
    conn = http.client.HTTPConnection("127.0.0.1", world.port, timeout=10)
    try:
        conn.putrequest("GET", raw_path, skip_accept_encoding=True)
        if token:
            conn.putheader("Authorization", f"Bearer {world.token()}")
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read(), response.getheader("Location") or ""
    finally:
        conn.close()


def session_through_hooks(world: Chaos, project: Path, session: str = "confine-1") -> None:
    common = {"session_id": session, "cwd": str(project)}
    for event, name, extra in (
        ("SessionStart", "SessionStart.startup", {}),
        ("UserPromptSubmit", "UserPromptSubmit", {"prompt": "read the notes"}),
        ("PostToolUse", "PostToolUse.Read", {
            "tool_use_id": "toolu_confine_read",
            "tool_input": {"file_path": "/etc/passwd"},
            "tool_response": {"type": "text", "file": {
                "filePath": "/etc/passwd", "content": "stored as the tool saw it",
                "numLines": 1, "startLine": 1, "totalLines": 1}}}),
        ("PostToolUse", "PostToolUse.Bash", {"tool_use_id": "toolu_confine_bash"}),
        ("Stop", "Stop", {}),
    ):
        code, _, _ = world.hook(event, payload(name, **common, **extra))
        assert code == 0


# --- the network ------------------------------------------------------------------------


def _listening(pid: int) -> list[tuple[str, str, int]]:
    """(family, local address as /proc shows it, port) of ``pid``'s listening TCP sockets."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = []
    for family in ("tcp", "tcp6"):
        with open(f"/proc/{pid}/net/{family}") as f:
            next(f)
            for line in f:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and inode in inodes:  # TCP_LISTEN
                    address, port = local.split(":")
                    found.append((family, address, int(port, 16)))
    return found


def test_the_worker_listens_on_loopback_only(world):
    pid = world.start_worker()
    listening = _listening(pid)
    assert (("tcp", "0100007F", world.port)) in listening, listening  # 127.0.0.1:<port>
    assert all(family == "tcp" and address == "0100007F" for family, address, _ in listening), \
        f"a listener not bound to 127.0.0.1 only: {listening}"
    if os.path.exists("/usr/bin/ss") or os.path.exists("/bin/ss"):
        out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, timeout=10)
        mine = [line for line in out.stdout.splitlines() if f"pid={pid}," in line]
        assert mine, out.stdout
        for line in mine:
            local = line.split()[3]
            assert local.startswith("127.0.0.1:"), line
    # And a foreign Host is refused even on loopback (DNS rebinding).
    conn = http.client.HTTPConnection("127.0.0.1", world.port, timeout=10)
    try:
        conn.request("GET", "/api/feed", headers={
            "Host": f"evil.example:{world.port}", "Authorization": f"Bearer {world.token()}"})
        assert conn.getresponse().status == 403
    finally:
        conn.close()


# --- files -------------------------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _loose(data_dir: Path) -> dict[str, str]:
    found = {}
    for root, dirs, names in os.walk(data_dir):
        for name in dirs:
            path = Path(root) / name
            if _mode(path) != 0o700:
                found[str(path.relative_to(data_dir))] = oct(_mode(path))
        for name in names:
            path = Path(root) / name
            with contextlib.suppress(FileNotFoundError):
                if not path.is_symlink() and _mode(path) & 0o077:
                    found[str(path.relative_to(data_dir))] = oct(_mode(path))
    return found


def test_data_directory_0700_and_every_file_0600_after_a_real_session(world, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    old_umask = os.umask(0o022)  # an ordinary umask: the modes must not come from it
    try:
        world.env["MEMLITE_HOOK_SESSION_START_WAIT"] = "0"
        world.start_worker()
        session_through_hooks(world, project)
        status, body = world.api("PUT", "/api/settings", {"SUMMARY_COUNT": 4})
        assert status == 200, body
        # A spooled event (the port answers 503 while the worker is stopped).
        world.stop()
        wait_until(lambda: world.worker_pid() is None, 15, "the worker to stop")
        with port_held_by_503(world.port):
            code, _, _ = world.hook("PostToolUse", payload(
                "PostToolUse.Bash", session_id="confine-1", cwd=str(project),
                tool_use_id="toolu_confine_spooled"))
            assert code == 0
        spooled = list((world.data_dir / "spool").glob("*.jsonl"))
        assert spooled, "nothing was spooled"
        assert _mode(world.data_dir / "spool") == 0o700
        assert {p.name: oct(_mode(p)) for p in spooled if _mode(p) & 0o077} == {}
        assert _loose(world.data_dir) == {}
        world.start_worker()  # drains the spool
        wait_until(lambda: world.query("SELECT count(*) FROM events WHERE tool_use_id = "
                                       "'toolu_confine_spooled'")[0][0] == 1, 15, "drain")
        code, _, _ = world.hook("SessionEnd", payload("SessionEnd.other",
                                                      session_id="confine-1",
                                                      cwd=str(project)))
        assert code == 0
        names = {p.name for p in world.data_dir.iterdir()}
        for expected in ("memlite.db", "token", "worker.log", "hooks.log", "settings.json",
                         "worker.pid", "spool"):
            assert expected in names, f"{expected} missing: {sorted(names)}"
        assert _mode(world.data_dir) == 0o700
        for name in ("memlite.db", "memlite.db-wal", "memlite.db-shm", "token", "worker.log",
                     "hooks.log", "settings.json", "worker.pid"):
            path = world.data_dir / name
            if path.exists():
                assert _mode(path) & 0o077 == 0, f"{name} is {oct(_mode(path))}"
        assert _loose(world.data_dir) == {}
        world.stop()
        assert _loose(world.data_dir) == {}
    finally:
        os.umask(old_umask)


# --- HTTP routes --------------------------------------------------------------------------


def _app():
    from types import SimpleNamespace

    from memlite.http import create_app

    return create_app(SimpleNamespace(settings=SimpleNamespace(worker_port=1),
                                      db_path="/nonexistent"),
                      readers=SimpleNamespace(close=lambda: None))


def test_no_route_takes_a_path_or_a_program():
    from werkzeug.routing import PathConverter, UnicodeConverter

    arguments = {}
    for rule in _app().url_map.iter_rules():
        for name, converter in rule._converters.items():
            assert not isinstance(converter, PathConverter), rule.rule
            assert type(converter) is UnicodeConverter, (rule.rule, converter)
            arguments.setdefault(name, set()).add(rule.rule)
    assert set(arguments) == {"observation_id", "summary_id", "session_id", "name"}
    assert arguments["name"] == {"/static/<name>"}  # the only one that names a file
    assert dashboard.STATIC_NAME.match("../token") is None
    assert dashboard.STATIC_NAME.match("app.js") is not None


def test_static_route_serves_its_own_files_and_nothing_else(world, tmp_path):
    world.start_worker()
    outside = tmp_path / "outside.js"
    outside.write_text(f"// {OUTSIDE_MARKER}\n")
    link = dashboard.STATIC_DIR / f"zz-confine-{os.getpid()}.js"
    link_css = dashboard.STATIC_DIR / f"zz-confine-{os.getpid()}.css"
    token = world.token().encode()
    db = str(world.data_dir / "memlite.db")
    status, body = get(world, "/static/app.js", token=False)
    assert status == 200 and body == (dashboard.STATIC_DIR / "app.js").read_bytes()
    names = [
        "../token", "..%2ftoken", "..%2Ftoken", "%2e%2e%2ftoken", "%2e%2e/%2e%2e/etc/passwd",
        "..%252f..%252fetc%252fpasswd", "..%5c..%5cetc%5cpasswd", "....//....//etc/passwd",
        "/etc/passwd", "%2fetc%2fpasswd", f"%2f{db.lstrip('/').replace('/', '%2f')}",
        f"..%2f..%2f..%2f..%2f..%2f..%2f..%2f..%2f{str(outside).lstrip('/').replace('/', '%2f')}",
        "app.js%00.png", "app.js%00", "%00", "..", ".", "%2e%2e", "app.js/", "app.js/..",
        "APP.JS", "app.py", "__init__.py", "..%2fapp.py", "..%2f__init__.py",
        "..%2ftemplates%2fbase.html", "~root%2f.bashrc", f"{link.name}", f"{link_css.name}",
    ]
    link.symlink_to(outside)
    link_css.symlink_to(dashboard.STATIC_DIR / ".." / "app.py")
    try:
        for name in names:
            for raw in (f"/static/{name}", f"/static//{name}", f"/static/./{name}"):
                status, body, location = get_full(world, raw)
                if status == 308:  # werkzeug merges "//" and "/./": follow it, once
                    prefix = f"http://127.0.0.1:{world.port}/static/"
                    assert location.startswith(prefix), (raw, location)
                    status, body, _ = get_full(world, location[len(prefix) - 8:])
                assert status in (400, 404), (raw, status, body[:200])
                assert OUTSIDE_MARKER.encode() not in body, raw
                assert token not in body, raw
                assert b"SQLite format" not in body and b"root:" not in body, raw
                assert b"from __future__" not in body, raw
    finally:
        link.unlink()
        link_css.unlink()


def test_settings_cannot_name_a_program_or_a_remote_host(world):
    world.start_worker()
    for update in ({"OBSERVER_MODEL": "../../bin/sh"}, {"OBSERVER_MODEL": "/bin/sh"},
                   {"OBSERVER_MODEL": "a b"}, {"OLLAMA_URL": "http://evil.example:11434"},
                   {"OLLAMA_URL": "file:///etc/passwd"}, {"OBSERVER_CLI": "/bin/sh"},
                   {"CLI_PATH": "/bin/sh"}):
        status, body = world.api("PUT", "/api/settings", update)
        assert status == 400, (update, body)


# --- MCP -----------------------------------------------------------------------------------


def test_mcp_tools_take_no_path_or_program():
    suspicious = ("path", "file", "dir", "folder", "command", "cmd", "program", "exec",
                  "script", "shell", "url", "binary")
    for tool in TOOLS:
        schema = tool["inputSchema"]
        assert schema.get("additionalProperties") in (None, False)
        for name in schema["properties"]:
            if tool["name"] == "memory_search" and name == "file":
                continue  # the search FILTER (a substring of stored paths): checked below
            assert not any(word in name.lower() for word in suspicious), (tool["name"], name)


async def _mcp_file_filter(env: dict[str, str]) -> list[tuple[dict, str, bool]]:
    answers = []
    async with connect(env) as client:
        for args in ({"query": "passwd", "file": "../../etc/passwd"},
                     {"query": "passwd", "file": "/etc/passwd"},
                     {"query": "passwd", "file": "/etc/shadow"},
                     {"query": "notes", "file": "../../../../../../etc/passwd", "mode": "fts"},
                     {"query": "passwd", "path": "/etc/passwd"},
                     {"query": "passwd", "command": "cat /etc/passwd"}):
            result = await client.call_tool("memory_search", args)
            answers.append((args, text_of(result), bool(result.is_error)))
        result = await client.call_tool("memory_get", {"ids": [1], "path": "/etc/passwd"})
        answers.append(({"get": 1}, text_of(result), bool(result.is_error)))
    return answers


def test_mcp_file_filter_is_a_substring_filter_not_a_read(world, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    world.start_worker()
    session_through_hooks(world, project)
    wait_until(lambda: world.query("SELECT count(*) FROM observations")[0][0] > 0, 30,
               "an observation")
    secret_line = b""
    with contextlib.suppress(OSError):
        secret_line = Path("/etc/passwd").read_bytes().splitlines()[0]
    for args, text, _is_error in trio.run(_mcp_file_filter, world.env):
        assert "root:x:0:0" not in text, (args, text)
        if secret_line:
            assert secret_line.decode() not in text, (args, text)


# --- export / import ------------------------------------------------------------------------


def _memlite(world: Chaos, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "memlite", *args], env=world.env,
                          capture_output=True, timeout=60, cwd=REPO)


def test_export_writes_only_the_file_asked_for_and_import_refuses_foreign_files(world,
                                                                                 tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    world.start_worker()
    session_through_hooks(world, project)
    out_dir = tmp_path / "exports"
    out_dir.mkdir()
    target = out_dir / "memory.jsonl"
    before = {p.name for p in tmp_path.iterdir()}
    old_umask = os.umask(0o022)
    try:
        result = _memlite(world, "export", "--output", str(target))
    finally:
        os.umask(old_umask)
    assert result.returncode == 0, result.stderr
    assert [p.name for p in out_dir.iterdir()] == ["memory.jsonl"]
    assert {p.name for p in tmp_path.iterdir()} == before
    assert _mode(target) == 0o600, oct(_mode(target))  # the memory: private like the db
    first = json.loads(target.read_text().splitlines()[0])
    assert first["kind"] == "memlite-export"
    world.stop()

    counts = world.query("SELECT (SELECT count(*) FROM sessions), "
                         "(SELECT count(*) FROM observations), "
                         "(SELECT count(*) FROM user_prompts)")[0]
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(f'{{"kind": "session", "id": "{OUTSIDE_MARKER}"}}\n'
                       f"root:x:0:0:{OUTSIDE_MARKER}:/root:/bin/bash\n")
    candidates = [foreign, tmp_path / "project"]
    if Path("/etc/passwd").is_file():
        candidates.append(Path("/etc/passwd"))
    for path in candidates:
        started = time.monotonic()
        result = _memlite(world, "import", str(path))
        assert result.returncode != 0, (path, result.stdout, result.stderr)
        said = result.stdout + result.stderr
        assert OUTSIDE_MARKER.encode() not in said and b"root:x:0:0" not in said, said
        assert time.monotonic() - started < 60
    assert world.query("SELECT (SELECT count(*) FROM sessions), "
                       "(SELECT count(*) FROM observations), "
                       "(SELECT count(*) FROM user_prompts)")[0] == counts
    # Its own export goes back in (idempotent: nothing new), so the refusals above are
    # about the files, not about import being broken.
    result = _memlite(world, "import", str(target))
    assert result.returncode == 0, result.stdout + result.stderr
