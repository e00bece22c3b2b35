"""The Context view: exactly the block GET /api/context gives, its layers, budget and
what was left out; a project with nothing stored says why; a bad path shows the 400."""

from __future__ import annotations

from urllib.parse import quote

from browser_helpers import forgive_refusals, shot


def _open(page, worker, query: str = "") -> None:
    page.goto(f"{worker.base}/context{query}")
    page.locator("#context-form[data-ready]").wait_for(state="attached")


def _api(worker, project: str) -> dict:
    status, block = worker.api("GET", f"/api/context?project={quote(project, safe='')}")
    assert status == 200, block
    return block


def test_the_view_shows_exactly_the_api_block_and_its_layers(page, worker):
    expected = _api(worker, "/home/dev/shop")
    assert "Chose Redis for the session cache" in expected["context"]
    _open(page, worker)
    page.get_by_test_id("context-project").select_option("/home/dev/shop")
    page.get_by_test_id("context-block").wait_for()
    assert page.get_by_test_id("context-block").text_content() == expected["context"]
    assert page.url.endswith("/context?project=%2Fhome%2Fdev%2Fshop")
    assert page.get_by_test_id("context-budget").text_content().startswith(
        f"{expected['chars']} of {expected['budget']} characters used")

    rows = page.locator("[data-testid=context-layers] tbody tr")
    shown = [rows.nth(i).locator("th, td").all_text_contents() for i in range(rows.count())]
    assert shown == [[layer["name"], str(layer["items"]), str(layer["chars"]),
                      str(layer["tokens"])] for layer in expected["layers"]]
    assert shown  # the shop project has layers
    left_out = [o for o in expected["omitted"] if o["count"]]
    if left_out:
        items = page.locator("[data-testid=context-omitted] li").all_text_contents()
        assert items == [f"{o['layer']}: {o['count']}" for o in left_out]
    else:
        assert page.get_by_test_id("context-omitted-none").is_visible()
    assert "null" not in page.locator("#view").inner_text().replace(expected["context"], "")
    shot(page, "context")


def test_a_typed_path_and_a_link_give_the_same_block(page, worker):
    expected = _api(worker, "/home/dev/cli")
    _open(page, worker)
    page.get_by_test_id("context-path").fill("/home/dev/cli")
    page.get_by_test_id("context-path").press("Enter")
    page.get_by_test_id("context-block").wait_for()
    assert page.get_by_test_id("context-block").text_content() == expected["context"]
    # the hostile seeded title is in the block as text, never as markup
    assert page.locator("[data-testid=context-block] script").count() == 0
    assert page.evaluate("window.__pwned") is None

    _open(page, worker, "?project=%2Fhome%2Fdev%2Fcli")
    page.get_by_test_id("context-block").wait_for()
    assert page.get_by_test_id("context-block").text_content() == expected["context"]
    assert page.get_by_test_id("context-project").input_value() == "/home/dev/cli"


def test_an_unknown_project_says_why_it_is_empty(page, worker):
    expected = _api(worker, "/home/dev/nothing-here")
    assert expected["reason"]
    _open(page, worker, "?project=%2Fhome%2Fdev%2Fnothing-here")
    page.get_by_test_id("context-reason").wait_for()
    assert page.get_by_test_id("context-reason").text_content() == f"Empty: {expected['reason']}"
    assert page.get_by_test_id("context-block").text_content() == expected["context"]
    assert page.get_by_test_id("context-path").input_value() == "/home/dev/nothing-here"


def test_a_relative_path_shows_the_server_message(page, worker):
    _open(page, worker)
    page.get_by_test_id("context-path").fill("relative/path")
    page.get_by_test_id("context-submit").click()
    page.get_by_test_id("context-error").wait_for()
    assert page.get_by_test_id("context-error").text_content() == (
        "Could not build the context: query parameter project: project must be an absolute "
        "path, not 'relative/path'")
    assert len(forgive_refusals(page)) == 1
