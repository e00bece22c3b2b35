"""The cleanup page in a real browser: a rules review streams verdicts for the seeded
project (plus duplicates and empty observations added before the worker starts), and
"Delete selected" removes the ticked ones."""

from __future__ import annotations

import pytest
from browser_helpers import BASE_MS, DAY_MS, shot

from memlite import storage

PROJECT = "/home/dev/shop"


@pytest.fixture(autouse=True)
def noisy(data_dir):
    """Observations the rules delete, written before the ``worker`` fixture starts it."""
    conn = storage.connect(data_dir)
    ids = {}
    with conn:
        for key, title, narrative, day in (
                ("dup_old", "Cache warmed at start", "warm the cache at boot", 5),
                ("dup_new", "cache warmed  at START", "Warm the cache at boot", 6),
                ("empty", "Read shop/app.py", "", 7),
                ("low", "Ran tests", "", 8)):
            ids[key] = storage.insert_observation(conn, storage.NewObservation(
                session_id="shop-s3", project=PROJECT, type="change", title=title,
                narrative=narrative, at_ms=BASE_MS + day * DAY_MS)).id
    conn.close()
    return ids


def test_rules_review_streams_verdicts_and_apply_deletes_the_ticked(page, worker, noisy):
    page.goto(f"{worker.base}/cleanup")
    page.get_by_test_id("cleanup-project").fill(PROJECT)
    page.get_by_test_id("cleanup-mode").select_option("rules")
    page.get_by_test_id("cleanup-review").click()
    page.wait_for_selector("[data-testid=cleanup-status][data-done=true]")
    rows = page.get_by_test_id("cleanup-row")
    assert rows.count() == 7  # 3 seeded for the shop + 4 noisy
    verdicts = {int(rows.nth(i).get_attribute("data-id")):
                rows.nth(i).get_by_test_id("cleanup-verdict").text_content()
                for i in range(rows.count())}
    from playwright.sync_api import expect

    doomed = {noisy["dup_old"], noisy["empty"], noisy["low"]}
    assert {i for i, v in verdicts.items() if v.startswith("DELETE")} == doomed
    ticked = {int(rows.nth(i).get_attribute("data-id")) for i in range(rows.count())
              if rows.nth(i).get_by_test_id("cleanup-tick").is_checked()}
    assert ticked == doomed
    # Untick one: it must survive.
    page.locator(f"[data-testid=cleanup-row][data-id='{noisy['low']}'] "
                 "[data-testid=cleanup-tick]").uncheck()
    assert "Reviewed 7 by rules: 3 to delete" in page.get_by_test_id("cleanup-status") \
        .text_content()
    shot(page, "cleanup")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id("cleanup-apply").click()
    expect(rows).to_have_count(5)
    expect(page.locator("#toast")).to_contain_text("Deleted 2 observations")
    status, found = worker.api("POST", "/api/observations/batch",
                               {"ids": sorted(doomed | {noisy["dup_new"]})})
    assert status == 200
    assert sorted(found["missing"]) == sorted({noisy["dup_old"], noisy["empty"]})
    assert {o["id"] for o in found["observations"]} == {noisy["low"], noisy["dup_new"]}
