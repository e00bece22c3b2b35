"""The Settings view: every public setting with its source; a change round-trips through
settings.json; an invalid value shows the server's message and changes nothing."""

from __future__ import annotations

import json

import pytest
from browser_helpers import forgive_refusals, shot


def _open(page, worker) -> None:
    page.goto(f"{worker.base}/settings")
    page.locator("#settings-form[data-ready]").wait_for(state="attached")


def _api_settings(worker) -> dict:
    status, body = worker.api("GET", "/api/settings")
    assert status == 200
    return body["settings"]


def _file(worker) -> str:
    return (worker.data_dir / "settings.json").read_text()


def test_every_public_setting_is_listed_with_its_source(page, worker):
    settings = _api_settings(worker)
    _open(page, worker)
    rows = page.locator("[data-testid=settings-table] tbody tr")
    assert [rows.nth(i).get_attribute("data-key") for i in range(rows.count())] == list(settings)
    for key, spec in settings.items():
        source = {"default": "default", "file": "settings.json", "env": "environment"}
        assert page.get_by_test_id(f"source-{key}").text_content() == source[spec["source"]]
    # the right input per type
    assert page.get_by_test_id("input-SUMMARY_COUNT").get_attribute("type") == "number"
    assert page.get_by_test_id("input-EMBEDDER").evaluate("e => e.tagName") == "SELECT"
    assert page.get_by_test_id("input-MCP_ENABLED").evaluate(
        "e => [...e.options].map(o => o.value)") == ["true", "false"]
    assert page.get_by_test_id("input-OBSERVER_MODEL").get_attribute("type") == "text"
    assert page.get_by_test_id("input-SKIP_TOOLS").input_value() == "TodoWrite"
    assert page.get_by_test_id("source-EMBEDDER").text_content() == "environment"  # env var
    assert worker.token not in page.content()
    shot(page, "settings")


def test_a_change_round_trips(page, worker):
    _open(page, worker)
    page.get_by_test_id("input-SUMMARY_COUNT").fill("4")
    with page.expect_request("**/api/settings") as sent:
        page.get_by_test_id("settings-save").click()
    assert json.loads(sent.value.post_data) == {"SUMMARY_COUNT": 4}  # only the changed key
    page.get_by_test_id("result-changed").wait_for()
    assert page.get_by_test_id("result-changed").text_content() == "Changed: SUMMARY_COUNT"
    assert page.get_by_test_id("result-restart").text_content().endswith(": none")
    assert page.get_by_test_id("result-env").text_content().endswith(": none")

    page.reload()
    page.locator("#settings-form[data-ready]").wait_for(state="attached")
    assert page.get_by_test_id("input-SUMMARY_COUNT").input_value() == "4"
    assert page.get_by_test_id("source-SUMMARY_COUNT").text_content() == "settings.json"
    assert _api_settings(worker)["SUMMARY_COUNT"] == {
        **_api_settings(worker)["SUMMARY_COUNT"], "value": 4, "source": "file"}
    assert json.loads(_file(worker))["SUMMARY_COUNT"] == 4


def test_a_restart_key_and_an_env_override_are_reported(page, worker):
    _open(page, worker)
    page.get_by_test_id("input-EMBEDDER").select_option("none")
    page.get_by_test_id("settings-save").click()
    page.get_by_test_id("result-env").wait_for()
    assert page.get_by_test_id("result-env").text_content().endswith(": EMBEDDER")
    assert page.get_by_test_id("input-EMBEDDER").input_value() == "wordllama"  # env still wins
    assert json.loads(_file(worker))["EMBEDDER"] == "none"


def test_saving_nothing_sends_nothing(page, worker):
    _open(page, worker)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.method) if "/api/settings" in r.url else None)
    page.get_by_test_id("settings-save").click()
    page.get_by_test_id("result-nothing").wait_for()
    assert requests == []


@pytest.mark.parametrize(("key", "typed", "reason"), [
    ("SUMMARY_COUNT", "-3", "must be between 0 and 50"),
    ("SUMMARY_COUNT", "abc", "expected a whole number"),  # the number box keeps none of it
    ("SUMMARY_COUNT", "2.5", "expected a whole number"),
    # the server cuts its own message before echoing 100 kB, and with it the reason
    ("OBSERVER_MODEL", "x" * 100_000, "xxxx"),
    ("OBSERVER_MODEL", "<script>window.__pwned=1</script>",
     "must not contain spaces, slashes or control characters"),
    ("OLLAMA_URL", "http://evil.example:11434", "must be a loopback address"),
])
def test_an_invalid_value_shows_the_server_message_and_changes_nothing(
        page, worker, key, typed, reason):
    before_api = _api_settings(worker)
    before_file = _file(worker)
    _open(page, worker)
    field = page.get_by_test_id(f"input-{key}")
    if field.get_attribute("type") == "number":
        field.fill("")
        field.press_sequentially(typed)
    else:
        field.fill(typed)
    page.get_by_test_id("settings-save").click()
    error = page.get_by_test_id(f"error-{key}")
    error.wait_for(state="visible")
    text = error.text_content()
    assert text.startswith(f"setting {key} has an invalid value") and reason in text
    assert len(text) < 1000  # never a 100 kB echo
    assert field.get_attribute("aria-invalid") == "true"
    assert page.get_by_test_id("settings-error").text_content().startswith("Nothing was saved")
    assert page.evaluate("window.__pwned") is None
    assert _api_settings(worker) == before_api and _file(worker) == before_file
    assert len(forgive_refusals(page)) == 1
