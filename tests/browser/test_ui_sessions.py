"""The Sessions list and one session's timeline in a real browser: counts, summary
excerpts, the project filter, the timeline's order, deleting items and whole sessions."""

from __future__ import annotations

import re

from browser_helpers import db_rows, shot
from playwright.sync_api import expect

ROW = "[data-testid=session-row]"


def open_sessions(page, worker, query=""):
    page.goto(f"{worker.base}/sessions{query}")
    page.wait_for_selector(ROW)


def row(page, session_id):
    return page.locator(f"{ROW}[data-session='{session_id}']")


def test_sessions_list_counts_and_summary_excerpts(page, worker):
    open_sessions(page, worker)
    ids = page.eval_on_selector_all(ROW, "rows => rows.map(r => r.dataset.session)")
    # stub sessions started with their first observation: cli-s1 (day 3) is the newest
    assert ids == ["cli-s1", "shop-s2", "shop-s1"]
    shop = row(page, "shop-s1")
    assert "2 observations" in shop.get_by_test_id("session-counts").text_content()
    assert "1 summaries" in shop.get_by_test_id("session-counts").text_content()
    assert "Stop double charges" in shop.locator(".excerpt").text_content()
    assert "no summary yet" in row(page, "cli-s1").locator(".excerpt").text_content()
    assert page.get_by_test_id("sessions-more").is_hidden()
    shot(page, "sessions")
    page.get_by_test_id("project-filter").select_option("/home/dev/shop")
    page.wait_for_url(re.compile(r"project=%2Fhome%2Fdev%2Fshop"))
    # stub sessions (no SessionStart) go by the project of what they recorded
    expect(page.locator(ROW)).to_have_count(2)
    assert row(page, "cli-s1").count() == 0
    assert row(page, "shop-s1").locator("td[data-label=Project]").text_content() == "shop"


def test_project_filter_lists_the_sessions_of_one_project(page, worker):
    worker.api("POST", "/api/sessions", {
        "session_id": "real-s1", "hook_event_name": "SessionStart", "source": "startup",
        "cwd": "/home/dev/cli", "transcript_path": "/tmp/t.jsonl"})
    [(project,)] = db_rows(worker, "SELECT project FROM sessions WHERE id = 'real-s1'")
    open_sessions(page, worker, "?project=" + project)
    expect(page.locator(ROW)).to_have_count(2)  # the new one and the seeded cli-s1
    assert page.eval_on_selector_all(ROW, "rows => rows.map(r => r.dataset.session)") == [
        "real-s1", "cli-s1"]
    assert page.get_by_test_id("project-filter").input_value() == project
    page.get_by_test_id("project-filter").select_option("")
    expect(page.locator(ROW)).to_have_count(4)


def test_session_page_shows_the_whole_timeline_in_time_order(page, worker):
    open_sessions(page, worker)
    row(page, "shop-s1").get_by_test_id("session-link").click()
    page.wait_for_url(f"{worker.base}/sessions/shop-s1")
    timeline = page.get_by_test_id("session-timeline")
    timeline.wait_for()
    kinds = page.eval_on_selector_all(
        "[data-testid=session-timeline] article.card",
        "cards => cards.map(c => c.dataset.kind + ':' + c.dataset.id)")
    assert kinds == [f"observation:{worker.ids['cache']}",
                     f"observation:{worker.ids['webhook']}", f"summary:{worker.ids['summary']}"]
    head = page.get_by_test_id("session-head")
    assert "shop-s1" in head.text_content() and "2 observations" in head.text_content()
    shot(page, "session")


def test_a_session_with_prompts_shows_them_between_its_observations(page, worker):
    worker.api("POST", "/api/sessions", {
        "session_id": "p-s1", "hook_event_name": "SessionStart", "source": "startup",
        "cwd": "/home/dev/shop", "transcript_path": "/tmp/t.jsonl"})
    status, body = worker.api("POST", "/api/events", {
        "session_id": "p-s1", "hook_event_name": "UserPromptSubmit", "cwd": "/home/dev/shop",
        "transcript_path": "/tmp/t.jsonl", "prompt": "<b>make</b> the tests pass"})
    assert status == 200, body
    page.goto(f"{worker.base}/sessions/p-s1")
    prompt = page.get_by_test_id("prompt-card")
    prompt.wait_for()
    assert "<b>make</b> the tests pass" in prompt.text_content()
    assert prompt.locator("b").count() == 0


def test_unknown_session_says_so(page, worker):
    page.goto(f"{worker.base}/sessions/no-such-session")
    missing = page.get_by_test_id("session-missing")
    missing.wait_for()
    assert "No session no-such-session" in missing.text_content()
    page.memlite_errors.clear()  # the 404 of the API call is the point of this test


def test_deleting_an_observation_on_the_session_page(page, worker):
    target = worker.ids["retry"]
    page.goto(f"{worker.base}/sessions/cli-s1")
    card = page.locator(f"article.card[data-kind=observation][data-id='{target}']")
    card.wait_for()
    page.once("dialog", lambda dialog: dialog.accept())
    card.get_by_test_id("delete-observation").click()
    card.wait_for(state="detached")
    assert worker.api("POST", "/api/observations/batch", {"ids": [target]})[1]["missing"] == [
        target]
    page.goto(f"{worker.base}/feed")
    page.wait_for_selector("article.card[data-kind=summary]")
    assert page.locator(f"article.card[data-key='observation:{target}']").count() == 0


def test_deleting_a_session_from_its_page_goes_back_to_the_list(page, worker):
    page.goto(f"{worker.base}/sessions/shop-s1")
    page.get_by_test_id("session-head").wait_for()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id("session-head").get_by_test_id("delete-session").click()
    page.wait_for_url(f"{worker.base}/sessions")
    page.wait_for_selector(ROW)
    assert row(page, "shop-s1").count() == 0
    assert worker.api("GET", "/api/sessions/shop-s1")[0] == 404
    assert db_rows(worker, "SELECT count(*) FROM observations WHERE session_id = 'shop-s1'") == [
        (0,)]
    assert db_rows(worker, "SELECT count(*) FROM audit_log WHERE action = 'delete_session' "
                           "AND target = 'session:shop-s1'") == [(1,)]


def test_deleting_a_session_from_the_list_removes_its_row_and_its_cards(page, worker):
    open_sessions(page, worker)
    page.once("dialog", lambda dialog: dialog.accept())
    row(page, "cli-s1").get_by_test_id("delete-session").click()
    row(page, "cli-s1").wait_for(state="detached")
    expect(page.locator(ROW)).to_have_count(2)
    page.goto(f"{worker.base}/feed")
    page.wait_for_selector("article.card[data-kind=summary]")
    assert page.locator("article.card[data-session='cli-s1']").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined"
