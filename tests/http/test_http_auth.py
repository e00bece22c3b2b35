"""Who may call what: every route of the app × every way of getting auth wrong.

The route list is read from the app's own url_map, so a route added later is covered
without touching this file; making a route public means adding it to PUBLIC_ENDPOINTS,
which ``test_public_endpoints_are_exactly`` pins.
"""

from __future__ import annotations

import os
import re
import stat
import types

import pytest
import trio
from http_helpers import HOST, ORIGIN, PORT, headers

from memlite.http import PUBLIC_ENDPOINTS, cookie_name, cookie_value, create_app
from memlite.http.credentials import LoginCodes, load_or_create_token
from memlite.http.state import HttpState

WRITES = {"POST", "PUT", "PATCH", "DELETE"}


def _routes() -> list[tuple[str, str, str]]:
    """(method, path rule, endpoint) of every route, from an app built on a stub."""
    stub = types.SimpleNamespace(settings=types.SimpleNamespace(worker_port=PORT),
                                 db_path="unused.db")
    app = create_app(stub, port=PORT)  # type: ignore[arg-type]
    return sorted(
        (method, rule.rule, rule.endpoint)
        for rule in app.url_map.iter_rules()
        for method in rule.methods - {"HEAD", "OPTIONS"}
    )


ROUTES = _routes()
IDS = [f"{method} {rule}" for method, rule, _ in ROUTES]


def _path(rule: str) -> str:
    return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: "s-1" if m[1] == "session_id" else "1", rule)


async def _status(client, services, method: str, path: str, hdrs: dict[str, str]) -> int:
    """The response status. A stream is read until its head arrives, then ended the way
    shutdown ends it (the test client cannot disconnect mid-body: it would wait forever
    for the rest)."""
    if path == "/api/stream":
        with trio.fail_after(5):
            async with client.request(path, method=method, headers=hdrs) as connection:
                await connection.send_complete()
                await connection.receive()
                services.shutdown.set()
        return connection.status_code
    response = await client.open(path, method=method, headers=hdrs)
    return response.status_code


def test_route_list_is_not_empty_and_has_the_issue_routes():
    rules = {(method, rule) for method, rule, _ in ROUTES}
    for expected in [("GET", "/api/health"), ("GET", "/api/readiness"),
                     ("GET", "/api/debug/sessions"), ("POST", "/api/sessions"),
                     ("POST", "/api/events"), ("POST", "/api/summarize"),
                     ("POST", "/api/sessions/complete"), ("GET", "/api/context"),
                     ("GET", "/api/search"), ("GET", "/api/search/index"),
                     ("GET", "/api/timeline"), ("POST", "/api/observations/batch"),
                     ("GET", "/api/settings"), ("PUT", "/api/settings"),
                     ("DELETE", "/api/observations/<observation_id>"),
                     ("DELETE", "/api/summaries/<summary_id>"),
                     ("DELETE", "/api/sessions/<session_id>"), ("GET", "/api/stream"),
                     ("POST", "/api/auth/login-link"), ("GET", "/login"), ("GET", "/")]:
        assert expected in rules


def test_public_endpoints_are_exactly():
    assert PUBLIC_ENDPOINTS == {"api.health", "auth.login", "dashboard.index",
                                "dashboard.static"}
    assert PUBLIC_ENDPOINTS <= {endpoint for _, _, endpoint in ROUTES}


async def test_the_served_app_has_the_same_routes(app):
    served = sorted((m, r.rule, r.endpoint) for r in app.url_map.iter_rules()
                    for m in r.methods - {"HEAD", "OPTIONS"})
    assert served == ROUTES


@pytest.mark.parametrize(("method", "rule", "endpoint"), ROUTES, ids=IDS)
@pytest.mark.parametrize("case", ["no-token", "wrong-token", "wrong-scheme", "foreign-host",
                                  "rebinding-host", "no-port-host", "cross-origin",
                                  "cross-site-fetch", "null-origin", "right-token"])
async def test_route_auth(client, token, services, method, rule, endpoint, case):
    path = _path(rule)
    if endpoint == "auth.login":  # a valid code, so that only the case at hand can refuse
        path = f"/login?code={client.app.extensions['memlite'].logins.issue()}"
    write = method in WRITES
    public = endpoint in PUBLIC_ENDPOINTS
    cases = {
        "no-token": (headers(), 401),
        "wrong-token": (headers(token[:-1] + ("A" if token[-1] != "A" else "B")), 401),
        "wrong-scheme": ({"Host": HOST, "Authorization": f"Basic {token}"}, 401),
        "foreign-host": (headers(token, host="evil.example"), 403),
        "rebinding-host": (headers(token, host=f"evil.example:{PORT}"), 403),
        "no-port-host": (headers(token, host="127.0.0.1"), 403),
        "cross-origin": (headers(token, Origin="http://evil.example"), 403),
        "cross-site-fetch": (headers(token, Sec_Fetch_Site="cross-site"), 403),
        "null-origin": (headers(token, Origin="null"), 403),
        "right-token": (headers(token, Origin=ORIGIN, Sec_Fetch_Site="same-origin"), None),
    }
    hdrs, expected = cases[case]
    if case in ("no-token", "wrong-token", "wrong-scheme") and public:
        expected = None  # public: anything but a refusal
    if case in ("cross-origin", "cross-site-fetch", "null-origin") and not write:
        expected = None  # reads are protected by the token and the browser's CORS
    status = await _status(client, services, method, path, hdrs)
    if expected is None:
        assert status not in (401, 403), (case, method, path, status)
    else:
        assert status == expected, (case, method, path, status)


async def test_refusals_are_json(client):
    response = await client.get("/api/settings", headers=headers())
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert (await response.get_json())["status"] == 401
    response = await client.get("/api/health", headers=headers(host="evil.example"))
    assert response.status_code == 403
    assert "Host" in (await response.get_json())["error"]


async def test_unknown_paths_need_the_token_before_they_404(client, token):
    assert (await client.get("/api/nope", headers=headers())).status_code == 401
    response = await client.get("/api/nope", headers=headers(token))
    assert response.status_code == 404
    assert await response.get_json() == {"error": "no such route", "status": 404}


async def test_localhost_host_is_allowed(client, token):
    hdrs = headers(token, host=f"localhost:{PORT}", Origin=f"http://localhost:{PORT}")
    response = await client.put("/api/settings", headers=hdrs, json={"SUMMARY_COUNT": 4})
    assert response.status_code == 200


# --- the dashboard login flow --------------------------------------------------------------


async def _login_url(client, token) -> str:
    response = await client.post("/api/auth/login-link", headers=headers(token))
    assert response.status_code == 200
    body = await response.get_json()
    assert body["expires_in"] == 300
    assert body["url"].startswith(f"http://127.0.0.1:{PORT}/login?code=")
    return body["url"].removeprefix(f"http://127.0.0.1:{PORT}")


async def test_login_link_sets_a_strict_httponly_cookie_once(client, token):
    path = await _login_url(client, token)
    response = await client.get(path, headers=headers())
    assert response.status_code in (302, 303)
    assert response.headers["Location"] == "/"
    cookie = response.headers["Set-Cookie"]
    name, value = cookie.split(";")[0].split("=", 1)
    assert name == cookie_name(PORT) and value == cookie_value(token)
    assert value != token and token not in cookie
    attributes = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= attributes

    reused = await client.get(path, headers=headers())
    assert reused.status_code == 403
    assert "Set-Cookie" not in reused.headers
    assert "text/html" in reused.headers["Content-Type"]


async def test_the_cookie_opens_the_api_but_cannot_mint_links(app, token):
    client = app.test_client()
    cookie = {"Cookie": f"{cookie_name(PORT)}={cookie_value(token)}"}
    assert (await client.get("/api/settings", headers={**headers(), **cookie})).status_code == 200
    wrong = {"Cookie": f"{cookie_name(PORT)}={cookie_value(token + 'x')}"}
    assert (await client.get("/api/settings", headers={**headers(), **wrong})).status_code == 401
    other_port = {"Cookie": f"{cookie_name(PORT + 1)}={cookie_value(token)}"}
    assert (await client.get("/api/settings",
                             headers={**headers(), **other_port})).status_code == 401
    link = await client.post("/api/auth/login-link", headers={**headers(), **cookie})
    assert link.status_code == 403
    # and a cross-origin write is refused even with the cookie
    evil = {**headers(), **cookie, "Origin": "http://evil.example"}
    assert (await client.put("/api/settings", headers=evil, json={})).status_code == 403


async def test_the_token_appears_in_no_page(client, token):
    path = await _login_url(client, token)
    bodies = []
    for p, hdrs in [("/", headers()), ("/", headers(token)), (path, headers()),
                    (path, headers()), ("/login?code=bad", headers()),
                    ("/api/health", headers()), ("/api/settings", headers(token)),
                    ("/api/readiness", headers(token)), ("/api/debug/sessions", headers(token)),
                    ("/api/nope", headers())]:
        response = await client.get(p, headers=hdrs)
        bodies.append((await response.get_data()).decode() + str(response.headers))
    assert not [b for b in bodies if token in b]


async def test_login_codes_expire_and_are_single_use(autojump_clock):
    codes = LoginCodes(ttl=300, limit=3)
    first = codes.issue()
    assert codes.redeem(first) is True
    assert codes.redeem(first) is False
    late = codes.issue()
    await trio.sleep(300)
    assert codes.redeem(late) is False
    many = [codes.issue() for _ in range(5)]
    assert len(codes) == 3 and codes.redeem(many[0]) is False and codes.redeem(many[-1])
    assert codes.redeem("") is False


# --- the token file ------------------------------------------------------------------------


def test_token_file_is_private_and_stable(tmp_path):
    data_dir = tmp_path / "d"
    token = load_or_create_token(data_dir)
    assert len(token) >= 43
    assert stat.S_IMODE(os.stat(data_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(data_dir / "token").st_mode) == 0o600
    assert load_or_create_token(data_dir) == token
    assert [p.name for p in data_dir.iterdir()] == ["token"]  # no temporary left behind


def test_loose_permissions_are_tightened(tmp_path):
    data_dir = tmp_path / "d"
    load_or_create_token(data_dir)
    os.chmod(data_dir / "token", 0o644)
    os.chmod(data_dir, 0o755)
    load_or_create_token(data_dir)
    assert stat.S_IMODE(os.stat(data_dir / "token").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(data_dir).st_mode) == 0o700


def test_a_garbled_token_file_is_refused(tmp_path):
    from memlite.errors import DataDirError

    data_dir = tmp_path / "d"
    data_dir.mkdir(mode=0o700)
    (data_dir / "token").write_text("short\n")
    with pytest.raises(DataDirError, match="does not hold a memlite token"):
        load_or_create_token(data_dir)


async def test_racing_starters_get_one_token(tmp_path):
    data_dir = tmp_path / "race"
    results: list[str] = []

    async def start() -> None:
        results.append(await trio.to_thread.run_sync(load_or_create_token, data_dir))

    async with trio.open_nursery() as nursery:
        for _ in range(20):
            nursery.start_soon(start)
    assert len(results) == 20 and len(set(results)) == 1
    assert [p.name for p in data_dir.iterdir()] == ["token"]


async def test_state_type_is_what_the_app_stores(app):
    assert isinstance(app.extensions["memlite"], HttpState)
