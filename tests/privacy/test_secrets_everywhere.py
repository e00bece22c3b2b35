"""Issue 9, part 2: a secret that reaches memlite is redacted before it is kept or shown.

One real worker observing through the fake CLI (``tests/observer/fake_claude.py``, whose
``FAKE_CLAUDE_LOG`` records every line the observer sent it: the observer's prompts; the
log lives OUTSIDE the data directory). Fourteen fake secrets of different kinds, all
handled by ``privacy.clean`` (checked first, so a later narrowing of the redactor fails
here loudly instead of silently passing), go in through every way in:

* hooks (real processes, ``plugin/scripts/hook.py``): SessionStart, UserPromptSubmit
  (the prompt), PostToolUse Bash (command and an ``env`` dump as output), PostToolUse
  Read (a ``.env`` file's content), PostToolUseFailure (stderr), Stop
  (``last_assistant_message``), SessionEnd;
* the spool: the worker is stopped and a stub answering 503 holds its port, so the hook
  spools (and does not start a worker of its own); then the worker starts and drains it;
* the HTTP API directly, with the token (not through the hook): ``POST /api/events`` and
  ``POST /api/sessions`` with a prompt;

and then out through every way out: ``memlite export`` (stdout and ``--output``), the
dashboard pages, the JSON APIs (feed, sessions, session detail, search with a plain query
and with a SECRET as the query, search index, timeline, batch, context, stats, projects,
debug), the MCP stdio server's ``memory_search`` / ``memory_timeline`` / ``memory_get``.

None of the secrets may appear in any file under the data directory (every file, as
bytes, the database and its WAL included, the token file excepted), in the export, in
any answer, or in the observer's prompts. Canary words sent next to the secrets MUST
appear in the stored data and in the observer's prompts: they prove each path really ran.
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio

REPO = Path(__file__).resolve().parents[2]
for extra in (REPO / "chaos", REPO / "tests" / "mcp"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from harness import Chaos, payload, wait_until  # noqa: E402
from mcp_helpers import connect, text_of  # noqa: E402

from memlite.privacy import clean  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

SECRETS = {
    "aws_access_key_id": "AKIAQZ7X3K5P2M9LWV4R",
    "aws_secret_access_key": "wJalrXUtnFEMIK7MDENGbPxRfiCYzMLTSECRET01",
    "github": "ghp_Zq8Lm2Nx4Pv6Rt0Ws3Yu5Ab7Cd9Ef1Gh2Ij4",
    "anthropic": "sk-ant-api03-Xw9Vq2Lr7Tn4Mp6Kd8Hs1Jf3Gb5",
    "openai": "sk-proj-Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8Ol9",
    "slack": "xoxb-2048204820-Q1w2E3r4T5y6",
    "stripe": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "gitlab": "glpat-Xy7Zk2Qw9Rt4Lm6Np1Vb",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZW1saXRlLXRlc3QifQ.Sf1KxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    "pem_body": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjMemliteFakeKeyBody",
    "url_password": "Hunter2UrlPassw0rd",
    "env_api_key": "ZmFrZWFwaWtleXZhbHVlMTIz",
    "env_db_password": "Tr0ub4dor3DbPassZ",
    "private_span": "PrivateSpanDiaryMarker42",
}
# What we look for: each secret as sent, and lower-cased (the FTS index keeps lower-cased
# tokens, so a leak into it would not show up as the original string).
NEEDLES = sorted({v.encode() for v in SECRETS.values()}
                 | {v.lower().encode() for v in SECRETS.values()})


def secret_text(canary: str) -> str:
    """Every secret, in the shapes people paste them, around a canary word."""
    s = SECRETS
    return (
        f"{canary} begins. key {s['aws_access_key_id']} and "
        f"aws_secret_access_key={s['aws_secret_access_key']}\n"
        f"tokens {s['github']} {s['anthropic']} {s['openai']} {s['slack']} {s['stripe']} "
        f"{s['gitlab']} bearer {s['jwt']}\n"
        f"-----BEGIN RSA PRIVATE KEY-----\n{s['pem_body']}\n-----END RSA PRIVATE KEY-----\n"
        f"db at postgres://admin:{s['url_password']}@db.internal:5432/app\n"
        f"API_KEY={s['env_api_key']}\nDB_PASSWORD={s['env_db_password']}\n"
        f"<private>my diary {s['private_span']}</private> {canary} ends."
    )


def env_dump(canary: str) -> str:
    s = SECRETS
    return "\n".join([
        "HOME=/home/dev", "SHELL=/bin/bash", f"CANARY={canary}",
        f"AWS_ACCESS_KEY_ID={s['aws_access_key_id']}",
        f"AWS_SECRET_ACCESS_KEY={s['aws_secret_access_key']}",
        f"GITHUB_TOKEN={s['github']}", f"ANTHROPIC_API_KEY={s['anthropic']}",
        f"OPENAI_API_KEY={s['openai']}", f"SLACK_BOT_TOKEN={s['slack']}",
        f"STRIPE_SECRET_KEY={s['stripe']}", f"GITLAB_TOKEN={s['gitlab']}",
        f"SESSION_JWT={s['jwt']}",
        f"DATABASE_URL=postgres://admin:{s['url_password']}@db.internal:5432/app",
        f"API_KEY={s['env_api_key']}", f"DB_PASSWORD={s['env_db_password']}", "",
    ])


def dotenv_file(canary: str) -> str:
    return env_dump(canary) + (
        f"# {canary}\nPRIVATE_KEY=\"-----BEGIN PRIVATE KEY-----\n{SECRETS['pem_body']}\n"
        "-----END PRIVATE KEY-----\"\n"
        f"<private>{SECRETS['private_span']}</private>\n")


CANARIES = {  # path -> canary word
    "prompt": "canaryprompthook", "bash": "canarybashhook", "read": "canaryreadhook",
    "failure": "canaryfailurehook", "stop": "canarystophook", "spool": "canaryspoolhook",
    "direct_event": "canarydirectevent", "direct_prompt": "canarydirectprompt",
}
# What the observer is shown: the tool events, and on Stop the prompts and last message.
OBSERVED = ("bash", "read", "failure", "spool", "direct_event", "prompt", "stop")
# ... by the first worker: all of it but the spooled event, drained by the second one.
BEFORE_SPOOL = tuple(path for path in OBSERVED if path != "spool")
# The fake CLI answers its handshake this late, as a real one on a loaded machine: later
# than a stopping worker waits for a summary (SHUTDOWN_SUMMARY_WAIT_SECONDS, 1.5 s). See
# ``wait_observed``: stopping the first worker before it had observed everything made the
# prompt and Stop canaries never reach the observer whenever the CLI was that slow.
CLI_START_DELAY = "2"


def leaks(data: bytes) -> list[str]:
    return [n.decode() for n in NEEDLES if n in data]


def test_the_redactor_handles_every_secret_used_here():
    """The premise: ``clean`` removes each of them (else this file tests nothing)."""
    for canary in ("x",):
        for text in (secret_text(canary), env_dump(canary), dotenv_file(canary)):
            cleaned = json.dumps(clean({"t": text})).encode()
            assert leaks(cleaned) == [], cleaned


class _Unavailable(http.server.BaseHTTPRequestHandler):
    """Holds the worker's port while it is stopped: every request gets 503, so the hook
    spools its event (a worker that is there but failing) and starts no worker itself."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def port_held_by_503(port: int):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Unavailable)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def get(world: Chaos, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", world.port, timeout=15)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {world.token()}"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def data_dir_files(data_dir: Path) -> dict[str, bytes]:
    files = {}
    for root, _dirs, names in os.walk(data_dir):
        for name in names:
            path = Path(root) / name
            if path == data_dir / "token" or path.is_symlink() or not path.is_file():
                continue
            with contextlib.suppress(FileNotFoundError):  # a -shm/-journal going away
                files[str(path.relative_to(data_dir))] = path.read_bytes()
    return files


def assert_no_secret_on_disk(data_dir: Path, when: str) -> dict[str, bytes]:
    files = data_dir_files(data_dir)
    found = {name: leaks(data) for name, data in files.items() if leaks(data)}
    assert found == {}, f"secrets on disk ({when}): {found}"
    return files


def hook_ok(world: Chaos, event: str, data: dict) -> None:
    code, out, _ = world.hook(event, data)
    assert code == 0
    assert leaks(out) == []


def run_hooks(world: Chaos, session: str, project: Path) -> None:
    common = {"session_id": session, "cwd": str(project),
              "transcript_path": str(project / "transcript.jsonl")}
    hook_ok(world, "SessionStart", payload("SessionStart.startup", **common))
    hook_ok(world, "UserPromptSubmit", payload(
        "UserPromptSubmit", **common, prompt=secret_text(CANARIES["prompt"])))
    hook_ok(world, "PostToolUse", payload(
        "PostToolUse.Bash", **common, tool_use_id="toolu_secret_bash",
        tool_input={"command": f"env  # {SECRETS['github']}",
                    "description": f"dump the environment {CANARIES['bash']}"},
        tool_response={"stdout": env_dump(CANARIES["bash"]), "stderr": "",
                        "interrupted": False, "isImage": False}))
    env_path = str(project / ".env")
    hook_ok(world, "PostToolUse", payload(
        "PostToolUse.Read", **common, tool_use_id="toolu_secret_read",
        tool_input={"file_path": env_path},
        tool_response={"type": "text", "file": {
            "filePath": env_path, "content": dotenv_file(CANARIES["read"]),
            "numLines": 20, "startLine": 1, "totalLines": 20}}))
    hook_ok(world, "PostToolUseFailure", payload(
        "PostToolUseFailure.Bash", **common, tool_use_id="toolu_secret_failure",
        tool_input={"command": f"curl -H 'Authorization: Bearer {SECRETS['jwt']}' x"},
        error=secret_text(CANARIES["failure"])))
    hook_ok(world, "Stop", payload(
        "Stop", **common, last_assistant_message=secret_text(CANARIES["stop"])))


def spool_one(world: Chaos, session: str, project: Path) -> None:
    """The worker stopped, its port answering 503: the hook spools the event."""
    world.stop()
    wait_until(lambda: world.worker_pid() is None, 15, "the worker to stop")
    with port_held_by_503(world.port):
        hook_ok(world, "PostToolUse", payload(
            "PostToolUse.Bash", session_id=session, cwd=str(project),
            tool_use_id="toolu_secret_spool",
            tool_input={"command": f"cat .env  # {SECRETS['aws_access_key_id']}"},
            tool_response={"stdout": dotenv_file(CANARIES["spool"]), "stderr": "",
                           "interrupted": False, "isImage": False}))
    spooled = b"".join(p.read_bytes() for p in (world.data_dir / "spool").glob("*.jsonl"))
    assert CANARIES["spool"].encode() in spooled, "the hook did not spool the event"
    assert leaks(spooled) == []
    assert leaks((world.data_dir / "hooks.log").read_bytes()) == []


def post_directly(world: Chaos, session: str, project: Path) -> None:
    """What a client other than the hook might send: nothing cleaned it before."""
    status, body = world.api("POST", "/api/events", {
        "session_id": session, "hook_event_name": "PostToolUse", "cwd": str(project),
        "tool_name": "Bash", "tool_use_id": "toolu_secret_direct",
        "tool_input": {"command": f"export GITHUB_TOKEN={SECRETS['github']}"},
        "tool_response": {"stdout": secret_text(CANARIES["direct_event"]), "stderr": "",
                          "interrupted": False}})
    assert status == 200, body
    status, body = world.api("POST", "/api/sessions", {
        "session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": str(project),
        "prompt": secret_text(CANARIES["direct_prompt"])})
    assert status == 200, body


def observed(world: Chaos, fake_log: Path, paths: tuple[str, ...]) -> bool:
    """Every stored event is handled (``done`` or ``skipped``; a Stop is done only with its
    summary) and the observer's prompts hold the canary of each of ``paths``."""
    left = world.query("SELECT count(*) FROM events "
                       "WHERE status NOT IN ('done', 'skipped')")[0][0]
    sent = fake_log.read_text() if fake_log.exists() else ""
    return left == 0 and all(CANARIES[p] in sent for p in paths)


def wait_observed(world: Chaos, fake_log: Path, paths: tuple[str, ...], what: str) -> None:
    """Wait until ``observed``; a timeout says what was seen.

    Before the first worker is stopped it must have observed everything, the Stop's
    summary included: a stopping worker gives a summary 1.5 s, then stores the rules one,
    which the observer never sees, and no later worker summarizes that Stop again. A turn
    cut by the stop also kills its CLI, so the summary needs a new one, which on a loaded
    machine (or with ``CLI_START_DELAY``) is not up within 1.5 s: the prompt and Stop
    canaries then never reached the observer and the wait after the restart timed out.
    """
    try:
        wait_until(lambda: observed(world, fake_log, paths), 90, what)
    except AssertionError as error:
        raise AssertionError(f"{error}\n{what_was_seen(world, fake_log)}") from None


def what_was_seen(world: Chaos, fake_log: Path) -> str:
    """A failing wait says what it saw: the events' states, which canaries reached the
    observer, and the tails of the worker's and the fake CLI's logs."""
    rows = world.query("SELECT id, session_id, event_name, status, attempts FROM events "
                       "ORDER BY id")
    sent = fake_log.read_text() if fake_log.exists() else ""
    lines = []  # one per line the fake CLI logged: what it was and which canaries it held
    for line in sent.splitlines():
        try:
            record = json.loads(line)
        except ValueError:  # a line being written
            continue
        text = json.dumps(record.get("data"))
        lines.append(f"  pid {record.get('pid')} {record.get('kind')} {len(text)} chars "
                     f"{[p for p in CANARIES if CANARIES[p] in text]}")
    worker_log = world.data_dir / "worker.log"
    tail = worker_log.read_text(errors="replace")[-20000:] if worker_log.exists() else ""
    return (f"events (id, session, event, status, attempts): {rows}\n"
            f"canaries seen by the observer: {[p for p in OBSERVED if CANARIES[p] in sent]}\n"
            "fake CLI log:\n" + "\n".join(lines) + f"\nworker.log tail:\n{tail}")


async def _mcp_answers(env: dict[str, str], ids: list[int]) -> list[str]:
    texts = []
    async with connect(env) as client:
        for args in ({"query": "environment"}, {"query": "fake turn", "mode": "fts"},
                     {"query": SECRETS["aws_access_key_id"]}, {"query": "REDACTED"}):
            result = await client.call_tool("memory_search", args)
            texts.append(("search", args["query"], text_of(result)))
        for anchor in ids[:2]:
            result = await client.call_tool("memory_timeline", {"anchor": anchor})
            texts.append(("timeline", "", text_of(result)))
        result = await client.call_tool("memory_get", {"ids": ids})
        texts.append(("get", "", text_of(result)))
    return texts


@pytest.fixture
def fake_world(data_dir: Path, tmp_path: Path):
    fake_log = tmp_path / "fake-cli.log"  # outside the data directory
    world = Chaos.create(data_dir, fake_cli=True, FAKE_CLAUDE_MODE="ok",
                         FAKE_CLAUDE_LOG=str(fake_log), MEMLITE_HOOK_SESSION_START_WAIT="0",
                         FAKE_CLAUDE_INIT_DELAY=CLI_START_DELAY)
    try:
        yield world, fake_log
    finally:
        world.stop()


def test_no_secret_is_kept_shown_or_sent_to_the_observer(fake_world, tmp_path):
    world, fake_log = fake_world
    project = tmp_path / "project"
    project.mkdir()
    world.start_worker()
    run_hooks(world, "secret-session-hooks", project)
    post_directly(world, "secret-session-direct", project)
    wait_observed(world, fake_log, BEFORE_SPOOL, "the first worker observed everything")
    spool_one(world, "secret-session-hooks", project)
    world.start_worker()  # drains the spool before it serves
    spool_dir = world.data_dir / "spool"
    assert not list(spool_dir.glob("*.jsonl")) and not list(spool_dir.glob("*.draining"))
    wait_observed(world, fake_log, OBSERVED, "the spooled event observed")
    hook_ok(world, "SessionEnd", payload("SessionEnd.other", session_id="secret-session-hooks",
                                         cwd=str(project)))

    # Every path ran: each canary was stored (with its secrets redacted, not dropped).
    stored = "\n".join(row[0] for row in world.query("SELECT payload FROM events"))
    stored += "\n".join(row[0] for row in world.query("SELECT prompt_text FROM user_prompts"))
    for path, canary in CANARIES.items():
        assert canary in stored, f"nothing from the {path} path was stored"
    assert "[REDACTED:" in stored
    sent = fake_log.read_text()
    for path in OBSERVED:
        assert CANARIES[path] in sent, f"the observer never saw the {path} event"
    assert "[REDACTED:" in sent

    answers: dict[str, bytes] = {}
    observation_ids = [row[0] for row in world.query("SELECT id FROM observations")]
    assert observation_ids, "the observer wrote nothing"
    for path in ("/", "/feed", "/sessions", "/sessions/secret-session-hooks", "/search",
                 "/context", "/settings", "/cleanup", "/static/app.js",
                 "/api/feed", "/api/sessions", "/api/sessions/secret-session-hooks",
                 "/api/sessions/secret-session-direct", "/api/stats", "/api/projects",
                 "/api/debug/sessions", "/api/settings", "/api/search?q=environment",
                 "/api/search?q=REDACTED", "/api/search/index?q=environment",
                 f"/api/context?project={project}",
                 f"/api/timeline?anchor={observation_ids[0]}"):
        status, body = get(world, path)
        assert status == (303 if path == "/" else 200), (path, body[:300])
        answers[path] = body
    status, body = world.api("POST", "/api/observations/batch", {"ids": observation_ids})
    assert status == 200
    answers["/api/observations/batch"] = json.dumps(body).encode()
    # A secret AS the query: the answer repeats the caller's own query back (that is not
    # a leak); nothing else in it, and the query is not stored or logged (checked below).
    for secret in (SECRETS["aws_access_key_id"], SECRETS["github"]):
        for route in ("/api/search", "/api/search/index"):
            status, body = get(world, f"{route}?q={secret}")
            assert status == 200
            answer = json.loads(body)
            assert answer.pop("query") == secret
            answers[f"{route}?q=<secret>"] = json.dumps(answer).encode()

    mcp = trio.run(_mcp_answers, world.env, observation_ids)
    for kind, query, text in mcp:
        data = text.encode()
        if query == SECRETS["aws_access_key_id"]:
            data = data.replace(query.encode(), b"")  # a repeat of the caller's own query
        answers[f"mcp {kind} {query!r}"] = data
    assert any("fake turn" in text for _, _, text in mcp), mcp

    out = subprocess.run([sys.executable, "-m", "memlite", "export"], env=world.env,
                         capture_output=True, timeout=60, cwd=REPO)
    assert out.returncode == 0, out.stderr
    answers["export stdout"] = out.stdout + out.stderr
    assert b'"kind": "prompt"' in out.stdout or b'"kind":"prompt"' in out.stdout
    assert CANARIES["prompt"].encode() in out.stdout
    export_file = tmp_path / "export.jsonl"
    out = subprocess.run([sys.executable, "-m", "memlite", "export", "--output",
                          str(export_file)], env=world.env, capture_output=True, timeout=60,
                         cwd=REPO)
    assert out.returncode == 0, out.stderr
    answers["export --output"] = export_file.read_bytes()

    found = {name: leaks(data) for name, data in answers.items() if leaks(data)}
    assert found == {}, f"secrets in answers: {found}"

    files = assert_no_secret_on_disk(world.data_dir, "worker running")
    assert "memlite.db" in files and "worker.log" in files and "hooks.log" in files
    assert leaks(fake_log.read_bytes()) == [], "a secret reached the observer's prompt"
    world.stop()
    files = assert_no_secret_on_disk(world.data_dir, "worker stopped")
    everything = b"".join(files.values())  # the walk reads the database: the canaries are there
    assert all(canary.encode() in everything for canary in CANARIES.values())
    assert leaks(fake_log.read_bytes()) == []
