"""The Feed view in a real browser: cards, live updates over SSE, infinite scroll, the
project filter, deleting, hostile text, narrow screens, and the stats bar."""

from __future__ import annotations

import re
import time

from browser_helpers import SEED, db_rows, shot
from playwright.sync_api import expect

CARD = "article.card"


def card_keys(page):
    return page.eval_on_selector_all(
        f"[data-testid=feed-cards] {CARD}", "nodes => nodes.map(n => n.dataset.key)")


def wait_for_end(page):
    """Scroll until the feed says it has no more pages."""
    sentinel = page.get_by_test_id("feed-sentinel")
    for _ in range(50):
        page.wait_for_selector("[data-testid=feed-sentinel]:not([data-state=loading])")
        if sentinel.get_attribute("data-state") == "end":
            assert sentinel.text_content() == "End of the feed."
            return
        sentinel.scroll_into_view_if_needed()
    raise AssertionError(f"the feed never ended: {sentinel.text_content()!r}")


def edit_event(session_id, n, cwd="/home/dev/shop"):
    """A PostToolUse Edit hook payload: the rules observer makes "Edited <file>" of it."""
    return {"session_id": session_id, "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_use_id": f"toolu_feed_{n:04d}", "cwd": cwd,
            "transcript_path": "/tmp/transcript.jsonl",
            "tool_input": {"file_path": f"{cwd}/live_{n}.py", "old_string": "a",
                           "new_string": "b"},
            "tool_response": {"filePath": f"{cwd}/live_{n}.py", "oldString": "a",
                              "newString": "b"}}


def test_feed_shows_every_seeded_card_newest_first_with_its_parts(page, worker):
    page.wait_for_selector(f"{CARD}[data-key='summary:{worker.ids['summary']}']")
    keys = card_keys(page)
    newest_first = [f"observation:{worker.ids[key]}" for key, *_ in reversed(SEED)]
    # the summary (day 1 + 1 s) sits between the day-2 and the day-1 observations
    assert keys == [*newest_first[:3], f"summary:{worker.ids['summary']}", *newest_first[3:]]
    card = page.locator(f"{CARD}[data-key='observation:{worker.ids['webhook']}']")
    assert card.get_by_test_id("type-badge").text_content() == "bugfix"
    assert card.locator(".title").text_content() == "Fixed double charge on webhook retry"
    assert "idempotency key first" in card.locator(".narrative").text_content()
    assert card.get_by_test_id("facts").text_content().endswith(
        "idempotency key stored before charging")
    assert "tests/test_webhooks.py" in card.get_by_test_id("files-modified").text_content()
    assert card.locator("a[href='/sessions/shop-s1']").count() == 1
    assert card.locator("time").get_attribute("datetime").startswith("2026-05-29T")
    summary = page.locator(f"{CARD}[data-kind=summary]")
    assert summary.locator(".title").text_content() == "Stop double charges"
    assert "Stripe retries for 3 days" in summary.text_content()
    assert page.get_by_test_id("feed-empty").is_hidden()
    shot(page, "feed")
    page.evaluate("localStorage.setItem('memlite-theme', 'dark')")
    page.reload()
    page.wait_for_selector(f"{CARD}[data-kind=summary]")
    assert page.locator("html").get_attribute("data-theme") == "dark"
    shot(page, "feed-dark")


def test_hostile_text_is_shown_as_text_and_never_runs(page, worker):
    card = page.locator(f"{CARD}[data-key='observation:{worker.ids['hostile']}']")
    assert card.locator(".title").text_content() == (
        "<script>window.__pwned = 1</script> in a title stays text")
    assert card.locator(".narrative").text_content().startswith("<img src=x onerror=")
    assert card.locator("script, img").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_a_new_observation_appears_live_without_a_reload(page, worker):
    page.wait_for_selector(f"{CARD}[data-kind=summary]")
    page.evaluate("window.__sameDocument = true")
    before = len(card_keys(page))
    status, stored = worker.api("POST", "/api/events", edit_event("live-s1", 1))
    assert status == 200, stored
    started = time.monotonic()
    fresh = page.locator(f"{CARD}[data-kind=observation]", has_text="live_1.py").first
    fresh.wait_for(timeout=2000)
    elapsed = time.monotonic() - started
    assert elapsed < 2.0
    assert card_keys(page)[0] == fresh.get_attribute("data-key")  # on top
    assert len(card_keys(page)) == before + 1
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    [(title,)] = db_rows(worker, "SELECT title FROM observations WHERE session_id = 'live-s1'")
    assert fresh.locator(".title").text_content() == title


def test_infinite_scroll_loads_every_page_once_even_with_live_arrivals(page, worker):
    page.set_viewport_size({"width": 1280, "height": 240})
    page.goto(f"{worker.base}/feed?page_size=1")
    page.wait_for_selector("[data-testid=feed-sentinel][data-state=idle]")
    assert len(card_keys(page)) < 6  # not everything at once: pages follow the scrolling
    worker.api("POST", "/api/events", edit_event("live-s2", 2))
    page.locator(CARD, has_text="live_2.py").wait_for(timeout=3000)
    wait_for_end(page)
    keys = card_keys(page)
    assert len(keys) == len(set(keys))
    stored = db_rows(worker, "SELECT 'observation:' || id FROM observations "
                             "WHERE superseded_by IS NULL UNION ALL "
                             "SELECT 'summary:' || id FROM summaries")
    assert sorted(keys) == sorted(key for (key,) in stored)


def test_project_filter_shows_one_project_and_lives_in_the_url(page, worker):
    page.wait_for_selector(f"{CARD}[data-kind=summary]")
    page.get_by_test_id("project-filter").select_option("/home/dev/cli")
    page.wait_for_url(re.compile(r"project=%2Fhome%2Fdev%2Fcli"))
    expect(page.locator(f"[data-testid=feed-cards] {CARD}")).to_have_count(2)
    assert [p.text_content() for p in page.locator(f"{CARD} .project").all()] == [
        "/home/dev/cli"] * 2
    # a live observation of another project is not added to the filtered feed
    worker.api("POST", "/api/events", edit_event("live-s3", 3))
    page.reload()
    expect(page.locator(f"[data-testid=feed-cards] {CARD}")).to_have_count(2)
    assert page.get_by_test_id("project-filter").input_value() == "/home/dev/cli"
    page.get_by_test_id("project-filter").select_option("")
    expect(page.locator(f"[data-testid=feed-cards] {CARD}")).to_have_count(7)  # + live-s3


def test_deleting_an_observation_removes_it_everywhere_and_audits_it(page, worker):
    target = worker.ids["webhook"]
    card = page.locator(f"{CARD}[data-key='observation:{target}']")
    card.wait_for()
    messages = []

    def accept(dialog):
        messages.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    card.get_by_test_id("delete-observation").click()
    card.wait_for(state="detached")
    assert messages and f"#{target}" in messages[0]
    status, body = worker.api("POST", "/api/observations/batch", {"ids": [target]})
    assert status == 200 and body["missing"] == [target]
    [(actor, detail)] = db_rows(worker, "SELECT actor, detail FROM audit_log WHERE "
                                        "action = 'delete_observation' AND target = ?",
                                (f"observation:{target}",))
    assert "webhook retry" in detail and actor
    page.goto(f"{worker.base}/sessions/shop-s1")
    page.get_by_test_id("session-timeline").wait_for()
    assert page.locator(f"{CARD}[data-kind=observation][data-id='{target}']").count() == 0
    assert page.locator(f"{CARD}[data-kind=observation]").count() == 1


def test_dismissing_the_confirmation_keeps_the_observation(page, worker):
    target = worker.ids["cache"]
    card = page.locator(f"{CARD}[data-key='observation:{target}']")
    card.wait_for()
    page.once("dialog", lambda dialog: dialog.dismiss())
    card.get_by_test_id("delete-observation").click()  # confirm() answers synchronously
    assert card.count() == 1
    assert worker.api("POST", "/api/observations/batch", {"ids": [target]})[1]["missing"] == []


def test_narrow_window_has_no_horizontal_scroll(page, worker):
    page.set_viewport_size({"width": 420, "height": 800})
    for path, ready in [("/feed", CARD), ("/sessions", "[data-testid=session-row]"),
                        ("/sessions/cli-s1", "[data-testid=session-timeline]")]:
        page.goto(f"{worker.base}{path}")
        page.wait_for_selector(ready)
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], (path, width)
        if path == "/feed":
            shot(page, "feed-narrow")


def test_stats_bar_matches_the_database(page, worker):
    page.get_by_test_id("stat-observations").wait_for()
    [(sessions, observations, summaries)] = db_rows(
        worker, "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM observations), "
                "(SELECT count(*) FROM summaries)")
    projects = {p for (p,) in db_rows(worker, "SELECT project FROM observations")}
    shown = {name: page.get_by_test_id(f"stat-{name}").locator("b").text_content()
             for name in ("sessions", "observations", "summaries", "projects")}
    assert shown == {"sessions": str(sessions), "observations": str(observations),
                     "summaries": str(summaries), "projects": str(len(projects))}
    assert (observations, summaries, len(projects)) == (5, 1, 2)
    assert "observer ok" in page.get_by_test_id("observer-health").text_content()
    for name in ("sessions", "search", "settings"):  # the bar works on every page
        page.goto(f"{worker.base}/{name}")
        assert page.get_by_test_id("stat-observations").locator("b").text_content() == "5"


def test_a_quarantined_spool_event_shows_in_the_stats_bar(page, worker):
    """Issue 13: a spooled event the worker could not ingest is kept with its reason, and
    the dashboard says so (it used to jam the spool silently)."""
    import json

    page.get_by_test_id("stat-observations").wait_for()
    assert page.get_by_test_id("spool-quarantine").count() == 0
    spool_dir = worker.data_dir / "spool"
    spool_dir.mkdir(mode=0o700, exist_ok=True)
    (spool_dir / "quarantine.jsonl").write_text(json.dumps({
        "v": 1, "rejectedAt": 1_764_482_400_000, "source": "20261130-1.draining",
        "line": 3, "event": "Stop", "raw": "{}",
        "reason": "InputError: field 'session_id' must be a string, not a number"}) + "\n")
    page.reload()
    badge = page.get_by_test_id("spool-quarantine")
    badge.wait_for()
    assert badge.text_content() == "1 event quarantined"
    title = badge.get_attribute("title")
    assert "Stop: InputError: field 'session_id' must be a string" in title
    assert "quarantine.jsonl" in title and "memlite doctor" in title
