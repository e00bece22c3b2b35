"""The dashboard's pages and static files through the in-process test client: who may see
them, the page CSP, static names that must never reach outside ``static/``, escaping."""

from __future__ import annotations

import pytest
from http_helpers import PORT, headers

from memlite.http import cookie_name, cookie_value
from memlite.http.dashboard import PAGE_CSP, PAGES

pytestmark = pytest.mark.loop_guard  # issue 17: fail when the event loop is blocked

PAGE_PATHS = [path for path, _, _ in PAGES] + ["/sessions/some-session"]


def _cookie(token: str) -> dict[str, str]:
    return {**headers(), "Cookie": f"{cookie_name(PORT)}={cookie_value(token)}"}


@pytest.mark.parametrize("path", PAGE_PATHS)
async def test_each_page_renders_with_the_cookie_or_the_token(client, token, path):
    for hdrs in (_cookie(token), headers(token)):
        response = await client.get(path, headers=hdrs)
        body = (await response.get_data()).decode()
        assert response.status_code == 200, path
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        assert response.headers["Content-Security-Policy"] == PAGE_CSP
        assert "script-src 'self'" in PAGE_CSP and "unsafe-inline" not in PAGE_CSP
        assert '<script src="/static/app.js" defer></script>' in body
        assert "<script>" not in body and " onclick=" not in body and "style=" not in body


@pytest.mark.parametrize("path", ["/search", "/context", "/settings"])
async def test_my_pages_load_their_own_script(client, token, path):
    body = (await (await client.get(path, headers=_cookie(token))).get_data()).decode()
    assert f'<script src="/static{path}.js" defer></script>' in body
    assert f'data-testid="{path[1:]}-form"' in body


@pytest.mark.parametrize("path", PAGE_PATHS)
async def test_pages_without_auth_are_401(client, token, path):
    wrong = {**headers(), "Cookie": f"{cookie_name(PORT)}={cookie_value(token + 'x')}"}
    for hdrs in (headers(), wrong, headers("not-the-token")):
        response = await client.get(path, headers=hdrs)
        assert response.status_code == 401, (path, hdrs)
        assert "<nav" not in (await response.get_data()).decode()


async def test_root_without_auth_shows_how_to_sign_in_and_no_data(client, token, storage):
    from http_helpers import seed_observation, seed_session

    await seed_session(storage, "secret-session")
    await seed_observation(storage, "secret-session", title="Very private finding", at_ms=1)
    response = await client.get("/", headers=headers())
    body = (await response.get_data()).decode()
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"] == PAGE_CSP
    assert "memlite dashboard" in body and "one-time link" in body
    assert "Very private finding" not in body and "secret-session" not in body
    assert token not in body
    signed_in = await client.get("/", headers=_cookie(token))
    assert signed_in.status_code == 303 and signed_in.headers["Location"].endswith("/feed")


async def test_static_files_are_served_with_their_type(client, token):
    response = await client.get("/static/app.js", headers=headers())  # public: holds no data
    body = (await response.get_data()).decode()
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert "const memlite" in body
    css = await client.get("/static/app.css", headers=headers())
    assert css.status_code == 200 and css.headers["Content-Type"] == "text/css; charset=utf-8"
    for name in ("search.js", "context.js", "settings.js"):
        assert (await client.get(f"/static/{name}", headers=headers())).status_code == 200


ODD_NAMES = [
    "/static/..%2f..%2fpyproject.toml",
    "/static/..%2F..%2Fpyproject.toml",
    "/static/%2e%2e/x",
    "/static/%2e%2e%2fdashboard.py",
    "/static/../dashboard.py",
    "/static/..%5cdashboard.py",
    "/static/app.js%00.png",
    "/static/app.js%00",
    "/static/APP.JS",
    "/static/App.js",
    "/static/.env",
    "/static/.app.js",
    "/static/app.js.bak",
    "/static/app.py",
    "/static/nope.js",
    "/static/%252e%252e%252fpyproject.toml",
    "/static/" + "a" * 5000 + ".js",
    "/static/" + "a" * 61 + ".js",
    "/static/",
]


@pytest.mark.parametrize("path", ODD_NAMES, ids=lambda p: p[:48])
async def test_odd_static_names_are_404_and_never_a_file_outside(client, token, path):
    for hdrs in (headers(), headers(token)):
        response = await client.get(path, headers=hdrs)
        body = (await response.get_data()).decode("utf-8", "replace")
        assert response.status_code in (401, 404), (path, response.status_code)
        if hdrs.get("Authorization"):
            assert response.status_code == 404, path
        assert "[project]" not in body and "import " not in body and "memlite" not in body[:20]
        assert "const memlite" not in body


async def test_ids_in_page_urls_are_escaped(client, token):
    hostile = "<script>x<img src=x onerror=window.__pwned=1>\"'&"  # no "/": one segment
    from urllib.parse import quote

    response = await client.get(f"/sessions/{quote(hostile, safe='')}", headers=_cookie(token))
    body = (await response.get_data()).decode()
    assert response.status_code == 200
    assert "<script>x" not in body and "<img" not in body
    assert ('data-session="&lt;script&gt;x&lt;img src=x onerror=window.__pwned=1&gt;'
            '&#34;&#39;&amp;"') in body
