"""One settings parser (issue 13 item 5): the hook and the worker accept and refuse exactly
the same values, for every key, from the environment and from settings.json; a hook with
an invalid setting spools the event and logs why, and never sends it anywhere."""

from __future__ import annotations

import io
import json
import sys

import pytest

from memlite.config import SPECS, load_settings, settings_path
from memlite.errors import ConfigError
from memlite.hooks import client, main, spool
from memlite.settings_spec import by_key

# Every kind of value: each key's parser must refuse some of them and may accept others.
JSON_VALUES: list[object] = [
    "abc", "", " ", "1.5", "1e3", "+5", "-1", "0", "99999", "65536", "1023", "37889",
    "true", "off", "maybe", "rules", "AUTO", "none", "a b", "a/b", "x" * 201, "\x00", "é",
    "http://127.0.0.1:11434", "https://localhost/", "http://example.com", "ftp://127.0.0.1",
    "http://[::1", "http://localhost:abc", "TodoWrite, Glob", "Bash,,Read", "a b, c",
    1.5, True, False, None, [], {}, -1, 0, 1, 5, 1023, 1024, 37888, 65535, 65536, 10**12,
    ["TodoWrite"], ["a b"], [1], [""], {"a": 1},
]
ENV_VALUES = [v for v in JSON_VALUES if isinstance(v, str) and "\x00" not in v]
KEYS = [spec.key for spec in SPECS]


@pytest.fixture(autouse=True)
def _made(data_dir):
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)


def worker_side(data_dir, env) -> tuple[str, object]:
    try:
        settings = load_settings(data_dir, env, create=False)
    except ConfigError as exc:
        return "invalid", str(exc)
    return "valid", settings


def test_every_key_is_covered():
    assert set(KEYS) == set(by_key) and len(KEYS) == 18


@pytest.mark.parametrize("origin", ["env", "file"])
@pytest.mark.parametrize("key", KEYS)
def test_hook_and_worker_agree_on_every_value(data_dir, key, origin):
    refused = accepted = 0
    for raw in ENV_VALUES if origin == "env" else JSON_VALUES:
        env = {"MEMLITE_" + key: raw} if origin == "env" else {}
        settings_path(data_dir).write_text(json.dumps({key: raw} if origin == "file" else {}))
        worker, outcome = worker_side(data_dir, env)
        hook = client.hook_settings(str(data_dir), env)
        if worker == "invalid":
            refused += 1
            assert hook.error == outcome and hook.port is None, (key, raw)
            assert key in hook.error and repr(raw) in hook.error
        else:
            accepted += 1
            assert hook.error is None, (key, raw, hook.error)
            assert hook.port == outcome.worker_port
            assert hook.skip_tools == frozenset(outcome.skip_tools)
            assert outcome.sources[key] == origin
    assert refused > 0 and accepted > 0, (key, refused, accepted)


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"a string"', "\udcff".encode(
    "utf-8", "surrogateescape").decode("latin-1")])
def test_an_unreadable_settings_file_is_refused_by_both(data_dir, text):
    settings_path(data_dir).write_bytes(text.encode("latin-1", "replace"))
    worker, outcome = worker_side(data_dir, {})
    hook = client.hook_settings(str(data_dir), {})
    assert worker == "invalid" and hook.error == outcome and hook.port is None


def test_the_old_hook_fallbacks_are_gone(data_dir):
    """An invalid port used to become 37888 in the hook: another install's worker."""
    for raw in ("abc", "99999", "80"):
        with pytest.raises(ValueError, match="WORKER_PORT"):
            client.worker_port({}, {"MEMLITE_WORKER_PORT": raw})
    assert client.worker_port({"WORKER_PORT": 40000}, {}) == 40000


@pytest.mark.parametrize("env_value", ["abc", "99999"])
def test_a_hook_with_an_invalid_port_spools_logs_and_sends_nothing(
        data_dir, monkeypatch, env_value):
    (data_dir / "token").write_text("t" * 43)  # a worker ran once: there is a token
    monkeypatch.setenv("MEMLITE_WORKER_PORT", env_value)
    sent = []
    monkeypatch.setattr(client, "request", lambda *a, **k: sent.append(a) or (200, b"{}"))
    monkeypatch.setattr("memlite.spawn.start_worker",
                        lambda *a, **k: pytest.fail("must not start a worker"))
    payload = {"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "cwd": "/tmp", "tool_input": {"command": "ls"}}
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode())))
    assert main.main(["PostToolUse"]) == 0
    assert sent == []
    ((_, entries),) = list(spool.iter_spool(data_dir))
    assert [e.payload["tool_input"] for e in entries] == [{"command": "ls"}]
    log = (data_dir / main.LOG_FILE).read_text()
    assert f"spooled, not sent: setting WORKER_PORT has an invalid value {env_value!r}" in log
