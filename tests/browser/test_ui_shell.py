"""The dashboard's shell in a real browser: sign-in, navigation, theme, no token in pages."""

from __future__ import annotations

from browser_helpers import shot


def test_login_sets_an_httponly_cookie_and_no_page_holds_the_token(page, worker):
    cookies = page.context.cookies()
    assert [c["httpOnly"] for c in cookies] == [True]
    assert cookies[0]["sameSite"] == "Strict"
    for name in ("feed", "sessions", "search", "context", "settings", "cleanup"):
        page.get_by_test_id(f"nav-{name}").click()
        page.wait_for_url(f"{worker.base}/{name}")
        assert page.locator(f"[data-testid=nav-{name}][aria-current=page]").count() == 1
        assert worker.token not in page.content()
    assert worker.token not in page.evaluate("document.cookie")  # HttpOnly: not readable


def test_a_used_login_link_is_refused(browser, worker):
    url = worker.login_url()
    first = browser.new_context()
    try:
        first.new_page().goto(url)
    finally:
        first.close()
    second = browser.new_context()
    try:
        tab = second.new_page()
        response = tab.goto(url)
        assert response.status == 403 and "invalid, expired or already used" in tab.content()
        assert tab.goto(f"{worker.base}/feed").status == 401  # no cookie, no dashboard
    finally:
        second.close()


def test_theme_switch_is_remembered(page, worker):
    html = page.locator("html")
    before = html.get_attribute("data-theme")
    page.locator("#theme-toggle").click()
    after = html.get_attribute("data-theme")
    assert after in ("light", "dark") and after != before
    page.reload()
    assert html.get_attribute("data-theme") == after
    shot(page, f"shell-{after}")


def test_keyboard_reaches_the_navigation(page, worker):
    page.keyboard.press("Tab")  # the skip link first
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('data-testid')") == "nav-feed"
