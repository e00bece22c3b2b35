"""Settings: defaults on first use, env overrides, and clear refusals that lose nothing."""

from __future__ import annotations

import json
import stat

import pytest

from memlite.config import SPECS, ensure_data_dir, load_settings, save_settings, settings_path
from memlite.errors import ConfigError, DataDirError


def test_first_use_creates_private_dir_and_file_with_every_default(data_dir, monkeypatch):
    monkeypatch.delenv("MEMLITE_OBSERVER")  # the suite's rules-only default (conftest)
    monkeypatch.delenv("MEMLITE_EMBEDDER")  # and its no-model default
    settings = load_settings()
    assert settings.data_dir == data_dir
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    path = settings_path(data_dir)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    stored = json.loads(path.read_text())
    assert set(stored) == {spec.key for spec in SPECS}
    assert settings.worker_port == 37888
    assert settings["OBSERVATION_COUNT"] == 50
    assert settings.full_observation_count == 5
    assert settings.summary_count == 3
    assert settings.context_max_chars == 9000
    assert settings.mcp_enabled is True
    assert settings.observer == "auto"
    assert settings.idle_shutdown_minutes == 30
    assert settings.session_idle_minutes == 30
    assert settings.observer_idle_minutes == 5
    assert settings["EMBEDDER"] == "auto"
    assert set(settings.sources.values()) == {"default"}


def test_env_overrides_file_which_overrides_default(data_dir, monkeypatch):
    load_settings()
    path = settings_path(data_dir)
    stored = json.loads(path.read_text())
    stored["WORKER_PORT"] = 40000
    stored["SUMMARY_COUNT"] = 7
    path.write_text(json.dumps(stored))
    monkeypatch.setenv("MEMLITE_WORKER_PORT", "41000")
    monkeypatch.setenv("MEMLITE_MCP_ENABLED", "off")
    monkeypatch.setenv("MEMLITE_SKIP_TOOLS", "TodoWrite, Glob")
    settings = load_settings()
    assert settings.worker_port == 41000 and settings.sources["WORKER_PORT"] == "env"
    assert settings.summary_count == 7 and settings.sources["SUMMARY_COUNT"] == "file"
    assert settings.mcp_enabled is False
    assert settings.skip_tools == ("TodoWrite", "Glob")
    assert settings.context_max_chars == 9000 and settings.sources["CONTEXT_MAX_CHARS"] == "file"


@pytest.mark.parametrize(
    ("key", "raw", "reason"),
    [
        ("WORKER_PORT", "eighty", "whole number"),
        ("WORKER_PORT", "80", "between 1024 and 65535"),
        ("MCP_ENABLED", "maybe", "true or false"),
        ("OBSERVER", "gpt", "auto, claude, rules"),
        ("OLLAMA_URL", "http://10.0.0.5:11434", "loopback"),
        ("OLLAMA_URL", "file:///etc/passwd", "http"),
        ("OBSERVER_MODEL", "../../bin/sh", "slashes"),
        ("CONTEXT_MAX_CHARS", "50000", "between"),
    ],
)
def test_invalid_env_value_is_refused_naming_key_and_value(monkeypatch, key, raw, reason):
    monkeypatch.setenv(f"MEMLITE_{key}", raw)
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert key in message and repr(raw) in message and reason in message


def test_invalid_value_in_file_names_the_file_and_keeps_it(data_dir):
    load_settings()
    path = settings_path(data_dir)
    stored = json.loads(path.read_text())
    stored["SESSION_IDLE_MINUTES"] = -3
    path.write_text(json.dumps(stored))
    before = path.read_bytes()
    with pytest.raises(ConfigError, match=r"SESSION_IDLE_MINUTES.*-3.*settings.json"):
        load_settings()
    assert path.read_bytes() == before


def test_settings_file_that_is_not_json_is_refused_and_left_alone(data_dir):
    data_dir.mkdir(mode=0o700)
    path = settings_path(data_dir)
    path.write_text("{ this is not json")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert str(path) in str(info.value) and "not valid JSON" in str(info.value)
    assert path.read_text() == "{ this is not json"


def test_settings_file_holding_a_list_is_refused(data_dir):
    data_dir.mkdir(mode=0o700)
    settings_path(data_dir).write_text("[1, 2]")
    with pytest.raises(ConfigError, match="JSON object"):
        load_settings()


def test_unknown_keys_in_file_are_kept(data_dir):
    data_dir.mkdir(mode=0o700)
    settings_path(data_dir).write_text(json.dumps({"FROM_THE_FUTURE": 1, "SUMMARY_COUNT": 2}))
    assert load_settings().summary_count == 2
    assert json.loads(settings_path(data_dir).read_text())["FROM_THE_FUTURE"] == 1


def test_data_dir_blocked_by_a_file_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    monkeypatch.setenv("MEMLITE_DATA_DIR", str(blocker / "data"))
    with pytest.raises(DataDirError, match="cannot be created"):
        load_settings()
    with pytest.raises(DataDirError):
        ensure_data_dir(blocker)


def test_save_validates_everything_before_writing(data_dir):
    load_settings()
    path = settings_path(data_dir)
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="WORKER_PORT"):
        save_settings(data_dir, {"SUMMARY_COUNT": 4, "WORKER_PORT": 1})
    with pytest.raises(ConfigError, match="unknown setting 'NOPE'"):
        save_settings(data_dir, {"NOPE": 1})
    assert path.read_bytes() == before
    settings = save_settings(data_dir, {"SUMMARY_COUNT": 4, "SKIP_TOOLS": "A,B"})
    assert settings.summary_count == 4 and settings.skip_tools == ("A", "B")
    assert json.loads(path.read_text())["SKIP_TOOLS"] == ["A", "B"]


def test_public_view_lists_every_setting_with_source():
    view = load_settings().public()
    assert set(view) == {spec.key for spec in SPECS}
    assert view["WORKER_PORT"] == {"value": 37888, "source": "default", "default": 37888,
                                   "doc": view["WORKER_PORT"]["doc"]}
    json.dumps(view)
