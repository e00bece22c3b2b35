"""The auth matrix, by credential: every route of the app × {no credentials, wrong token,
right token, right cookie, foreign Host, cross-origin write with the cookie}.

``test_http_auth.py`` pins the bearer-token side route by route; this file adds the
dashboard cookie (what a browser carries, so what a hostile page can make it send) and
counts the matrix. Each case walks every route in one test (a few hundred requests on
one app: fast). The route list comes from the app's url_map, and
``test_a_route_added_without_thought_is_protected`` registers a new blueprint route in
the test itself: a route nobody remembered to protect answers 401, by construction.
"""

from __future__ import annotations

import re

import pytest
import trio
from http_helpers import HOST, ORIGIN, PORT, headers
from quart import Blueprint, jsonify

from memlite.http import PUBLIC_ENDPOINTS, cookie_name, cookie_value, create_app

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
CASES = ["no-credentials", "wrong-token", "right-token", "right-cookie",
         "foreign-host-port", "foreign-host-suffix", "foreign-host-cookie",
         "cross-origin-cookie", "cross-site-fetch-cookie"]
COUNTED: dict[str, int] = {}


def _routes(app) -> list[tuple[str, str, str]]:
    """(method, rule, endpoint) of every route; the SSE stream last (it ends at shutdown)."""
    found = sorted((method, rule.rule, rule.endpoint) for rule in app.url_map.iter_rules()
                   for method in rule.methods - {"HEAD", "OPTIONS"})
    return sorted(found, key=lambda r: r[2] == "stream.stream")


def _path(rule: str) -> str:
    return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: "s-1" if m[1] == "session_id" else "1", rule)


async def _status(client, services, method: str, path: str, hdrs: dict[str, str]) -> int:
    if path == "/api/stream":
        with trio.fail_after(5):
            async with client.request(path, method=method, headers=hdrs) as connection:
                await connection.send_complete()
                await connection.receive()
                services.shutdown.set()
        return connection.status_code
    response = await client.open(path, method=method, headers=hdrs)
    return response.status_code


def _cookie(token: str) -> dict[str, str]:
    return {"Cookie": f"{cookie_name(PORT)}={cookie_value(token)}"}


def _expected(case: str, method: str, endpoint: str) -> str | int:
    """The status a case must get: a number, or ``"open"`` (served: < 500, not 401/403)."""
    public = endpoint in PUBLIC_ENDPOINTS
    if case in ("no-credentials", "wrong-token"):
        return "open" if public else 401
    if case == "right-token":
        return "open"
    if case == "right-cookie":
        return 403 if endpoint == "auth.login_link" else "open"  # links need the token
    if case.startswith("foreign-host"):
        return 403
    # a cross-origin write is refused even with the cookie; a read is the browser's
    # CORS's business (the page cannot read the answer)
    if method in WRITES:
        return 403
    return 403 if endpoint == "auth.login_link" else "open"


def _headers(case: str, token: str) -> dict[str, str]:
    wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
    same_site = {"Origin": ORIGIN, "Sec-Fetch-Site": "same-origin"}
    return {
        "no-credentials": headers(),
        "wrong-token": headers(wrong),
        "right-token": headers(token, **{k.replace("-", "_"): v for k, v in same_site.items()}),
        "right-cookie": {**headers(), **_cookie(token), **same_site},
        "foreign-host-port": headers(token, host=f"evil.example:{PORT}"),
        "foreign-host-suffix": headers(token, host="127.0.0.1.evil.example"),
        "foreign-host-cookie": {**headers(host=f"127.0.0.1.evil.example:{PORT}"),
                                **_cookie(token)},
        "cross-origin-cookie": {**headers(), **_cookie(token), "Origin": "http://evil.example"},
        "cross-site-fetch-cookie": {**headers(), **_cookie(token),
                                    "Sec-Fetch-Site": "cross-site"},
    }[case]


@pytest.mark.parametrize("case", CASES)
async def test_every_route_answers_the_case_as_expected(app, services, token, case):
    client = app.test_client(use_cookies=False)  # /login sets the cookie: keep no jar
    routes = _routes(app)
    assert len(routes) >= 30
    wrong = []
    for method, rule, endpoint in routes:
        path = _path(rule)
        if endpoint == "auth.login":  # a valid code: only the case at hand may refuse
            path = f"/login?code={app.extensions['memlite'].logins.issue()}"
        expected = _expected(case, method, endpoint)
        status = await _status(client, services, method, path, _headers(case, token))
        ok = (status < 500 and status not in (401, 403)) if expected == "open" \
            else status == expected
        if not ok:
            wrong.append((method, rule, expected, status))
    COUNTED[case] = len(routes)
    print(f"auth matrix {case}: {len(routes)} routes")
    assert not wrong, wrong


async def test_only_public_endpoints_answer_without_credentials(app, services):
    client = app.test_client(use_cookies=False)
    answered = set()
    for method, rule, endpoint in _routes(app):
        path = _path(rule)
        if endpoint == "auth.login":
            path = f"/login?code={app.extensions['memlite'].logins.issue()}"
        if await _status(client, services, method, path, headers()) != 401:
            answered.add(endpoint)
    assert answered == PUBLIC_ENDPOINTS


async def test_a_route_added_without_thought_is_protected(services, readers, token):
    app = create_app(services, readers=readers)
    careless = Blueprint("careless", __name__)

    @careless.route("/api/careless", methods=["GET", "POST", "DELETE"])
    async def careless_api():
        return jsonify({"secret": "data"})

    @careless.get("/careless-page")
    async def careless_page():
        return jsonify({"secret": "page"})

    app.register_blueprint(careless)
    client = app.test_client(use_cookies=False)
    for method, path in [("GET", "/api/careless"), ("POST", "/api/careless"),
                         ("DELETE", "/api/careless"), ("GET", "/careless-page")]:
        refused = await client.open(path, method=method, headers=headers())
        assert refused.status_code == 401, (method, path)
        assert "secret" not in (await refused.get_data()).decode()
        served = await client.open(path, method=method, headers=headers(token))
        assert served.status_code == 200, (method, path)
        rebound = await client.open(path, method=method,
                                    headers=headers(token, host=f"evil.example:{PORT}"))
        assert rebound.status_code == 403, (method, path)
        if method != "GET":
            evil = {**headers(), **_cookie(token), "Origin": "http://evil.example"}
            assert (await client.open(path, method=method, headers=evil)).status_code == 403


def test_host_constant_is_the_test_client_port():
    assert HOST == f"127.0.0.1:{PORT}"
