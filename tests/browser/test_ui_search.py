"""The Search view: seeded and fresh observations, modes, filters, the URL as state,
hostile queries shown as text, and the server's 400 message shown in the page."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

from browser_helpers import forgive_refusals, shot

QUOKKA_FILE = "/home/dev/shop/shop/quokka_refunds.py"


def _search(page, q: str, **fields: str) -> None:
    form = page.get_by_test_id("search-form")
    for name, value in fields.items():
        control = form.locator(f"[name={name}]")
        if control.evaluate("e => e.tagName") == "SELECT":
            control.select_option(value)
        else:
            control.fill(value)
    box = page.get_by_test_id("search-q")
    box.fill(q)
    box.press("Enter")
    page.locator("[data-testid=search-status], [data-testid=search-error]").wait_for()


def _open(page, worker, query: str = "") -> None:
    page.goto(f"{worker.base}/search{query}")
    page.locator("#search-form[data-ready]").wait_for(state="attached")


def _titles(page) -> list[str]:
    return page.locator("[data-testid=observation-card] .title").all_text_contents()


def _wait_until(check, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def _semantic_ready(worker) -> None:
    _wait_until(lambda: worker.api("GET", "/api/embedder")[1].get("state") == "ready", 30,
                "the wordllama embedder")


def test_search_finds_seeded_and_new_observations_and_the_url_holds_the_state(page, worker):
    _open(page, worker)
    _search(page, "Redis session cache", mode="fts")
    assert "Chose Redis for the session cache" in _titles(page)
    assert parse_qs(urlsplit(page.url).query) == {"q": ["Redis session cache"], "mode": ["fts"]}
    score = page.get_by_test_id("score-line").first.text_content()
    assert "mode fts" in score and "full text #1" in score

    # A hook event now: the rules observer turns it into an observation within about 1 s.
    worker.api("POST", "/api/sessions", {"session_id": "live-1", "cwd": "/home/dev/shop",
                                         "hook_event_name": "SessionStart", "source": "startup"})
    status, _ = worker.api("POST", "/api/events", {
        "session_id": "live-1", "hook_event_name": "PostToolUse", "tool_name": "Write",
        "tool_use_id": "toolu_quokka", "cwd": "/home/dev/shop",
        "tool_input": {"file_path": QUOKKA_FILE, "content": "def refund():\n    pass\n"}})
    assert status == 200
    _wait_until(lambda: worker.api("GET", "/api/search?q=quokka&mode=fts")[1]["observations"],
                10, "the observation of the new event")
    _search(page, "quokka", mode="fts")
    assert _titles(page) == ["Wrote shop/quokka_refunds.py"]
    assert "null" not in page.locator("#view").inner_text()  # no absent part drawn as text
    shot(page, "search")

    page.go_back()  # the previous search comes back, form and results
    page.wait_for_url("**/search?q=Redis*")
    page.get_by_text("Chose Redis for the session cache").wait_for()
    assert page.get_by_test_id("search-q").input_value() == "Redis session cache"
    assert "Wrote shop/quokka_refunds.py" not in _titles(page)


def test_a_search_link_opens_with_its_filters(page, worker):
    _open(page, worker, "?q=webhook&mode=fts&type=bugfix&project=%2Fhome%2Fdev%2Fshop")
    page.get_by_test_id("search-status").wait_for()
    assert page.get_by_test_id("search-type").input_value() == "bugfix"
    assert page.get_by_test_id("search-project").input_value() == "/home/dev/shop"
    assert _titles(page) == ["Fixed double charge on webhook retry"]


def test_mode_switch_shows_the_mode_used(page, worker):
    _semantic_ready(worker)
    _open(page, worker)
    for mode in ("fts", "semantic", "hybrid"):
        _search(page, "double charge from webhook retries", mode=mode)
        assert page.get_by_test_id("mode-used").text_content() == mode
        assert page.get_by_test_id("search-note").count() == 0
        assert "Fixed double charge on webhook retry" in _titles(page)
    ranks = page.get_by_test_id("score-line").all_text_contents()
    assert any("vector #" in line for line in ranks)  # hybrid shows both ranks


def test_filters_narrow_the_results(page, worker):
    _semantic_ready(worker)
    _open(page, worker)
    _search(page, "retry", mode="hybrid")
    assert {"Fixed double charge on webhook retry",
            "Backoff on S3 upload retries"} <= set(_titles(page))  # both projects, two types

    _search(page, "retry", type="bugfix")
    assert _titles(page) == ["Fixed double charge on webhook retry"]
    badges = page.get_by_test_id("type-badge").all_text_contents()
    assert badges == ["bugfix"]

    _search(page, "retry", type="", project="/home/dev/cli")
    projects = page.locator("[data-testid=observation-card] .project").all_text_contents()
    assert projects and set(projects) == {"/home/dev/cli"}
    assert "Backoff on S3 upload retries" in _titles(page)

    _search(page, "retry", project="", file="webhooks")
    assert _titles(page) == ["Fixed double charge on webhook retry"]
    assert parse_qs(urlsplit(page.url).query)["file"] == ["webhooks"]


def test_hostile_queries_return_and_render_as_text(page, worker):
    _open(page, worker)
    for q in ("<script>alert(1)</script>", "' OR 1=1 --", '"', "__pwned", "a AND OR NOT ("):
        _search(page, q, mode="fts")
        assert page.get_by_test_id("search-error").count() == 0, q
        assert page.evaluate("window.__pwned") is None
    _search(page, "pwned", mode="fts")
    title = "<script>window.__pwned = 1</script> in a title stays text"
    assert _titles(page) == [title]
    assert page.locator("[data-testid=observation-card] script").count() == 0
    assert page.locator("[data-testid=observation-card] img").count() == 0
    assert page.evaluate("window.__pwned") is None


def test_a_refused_search_shows_the_server_message(page, worker):
    _open(page, worker)
    _search(page, "cache", since="2026-06-10", until="2026-06-01")
    error = page.get_by_test_id("search-error").text_content()
    assert error == ("Search failed: query parameters since and until: since is after "
                     "until, so the date range is empty")
    assert "Traceback" not in page.content()
    assert len(forgive_refusals(page)) == 1


def test_an_empty_query_asks_for_one_and_sends_nothing(page, worker):
    _open(page, worker)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "/api/search" in r.url else None)
    page.get_by_test_id("search-q").press("Enter")
    page.get_by_test_id("search-hint").wait_for()
    assert requests == []
