"""The OpenAPI description (``memlite/http/openapi.py``) matches the app, both ways, and is
valid OpenAPI 3.0 (checked against the 3.0 meta-schema that schemathesis bundles)."""

from __future__ import annotations

import re
import types

import jsonschema
import pytest
from http_helpers import PORT, headers

from memlite.http import create_app
from memlite.http.openapi import SPEC, spec

METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def _app_routes() -> dict[str, set[str]]:
    """``/api/*`` path (OpenAPI templating) -> methods, from an app built on a stub."""
    stub = types.SimpleNamespace(settings=types.SimpleNamespace(worker_port=PORT),
                                 db_path="unused.db")
    app = create_app(stub, port=PORT)  # type: ignore[arg-type]
    found: dict[str, set[str]] = {}
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/"):
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        found.setdefault(path, set()).update(
            m.lower() for m in rule.methods - {"HEAD", "OPTIONS"})
    return found


def _documented() -> dict[str, set[str]]:
    return {path: {m for m in item if m in METHODS} for path, item in SPEC["paths"].items()}


def test_every_api_route_is_documented_with_its_methods():
    app, documented = _app_routes(), _documented()
    missing = {p: sorted(ms) for p, ms in app.items() if p not in documented}
    assert not missing, f"routes without a description: {missing}"
    wrong = {p: (sorted(ms), sorted(documented[p])) for p, ms in app.items()
             if documented[p] != ms}
    assert not wrong, f"documented methods differ (served, documented): {wrong}"


def test_every_documented_path_is_served():
    app = _app_routes()
    assert set(_documented()) == set(app)
    assert len(app) >= 25


def test_the_description_is_valid_openapi_3_0():
    from schemathesis.specs.openapi.definitions import OPENAPI_30

    errors = sorted(jsonschema.Draft4Validator(OPENAPI_30).iter_errors(SPEC), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    assert SPEC["openapi"].startswith("3.0.")


def test_schemathesis_loads_it_and_sees_every_operation():
    import schemathesis

    schema = schemathesis.openapi.from_dict(spec(PORT))
    operations = [result.ok() for result in schema.get_all_operations()]
    expected = sum(len(ms) for ms in _documented().values())
    assert len(operations) == expected


def _refs(node, found):
    if isinstance(node, dict):
        if "$ref" in node:
            found.append(node["$ref"])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)
    return found


def test_refs_resolve_and_path_parameters_are_declared():
    for ref in _refs(SPEC, []):
        node = SPEC
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]
        assert node, ref
    for path, item in SPEC["paths"].items():
        templated = set(re.findall(r"{(\w+)}", path))
        for method in set(item) & METHODS:
            params = item.get("parameters", []) + item[method].get("parameters", [])
            declared = {p["name"] for p in params if p["in"] == "path"}
            assert declared == templated, (path, method)
            assert all(p["required"] for p in params if p["in"] == "path")


def test_only_health_is_public_and_protected_routes_document_401_403():
    for path, item in SPEC["paths"].items():
        for method in set(item) & METHODS:
            operation = item[method]
            responses = operation["responses"]
            assert "403" in responses, (path, method)  # the Host check is for everyone
            if path == "/api/health":
                assert operation["security"] == []
            else:
                assert "security" not in operation, (path, method)
                assert "401" in responses, (path, method)
                assert any(code.startswith("2") for code in responses), (path, method)


@pytest.mark.parametrize(("path", "name", "low", "high"), [
    ("/api/search", "limit", 1, 100), ("/api/feed", "limit", 1, 200),
    ("/api/timeline", "before", 0, 100), ("/api/timeline", "after", 0, 100),
])
def test_documented_limits_are_the_enforced_ones(path, name, low, high):
    [param] = [p for p in SPEC["paths"][path]["get"]["parameters"] if p["name"] == name]
    assert (param["schema"]["minimum"], param["schema"]["maximum"]) == (low, high)


async def test_served_with_credentials_only(client, token):
    assert (await client.get("/api/openapi.json", headers=headers())).status_code == 401
    response = await client.get("/api/openapi.json", headers=headers(token))
    assert response.status_code == 200
    served = await response.get_json()
    assert served == spec(PORT)
    assert served["servers"] == [{"url": f"http://127.0.0.1:{PORT}"}]


async def test_documented_limits_are_enforced(client, token):
    """Just past each documented bound the app answers 400, at it 200."""
    ok = await client.get("/api/search?q=x&mode=fts&limit=100", headers=headers(token))
    assert ok.status_code == 200
    over = await client.get("/api/search?q=x&mode=fts&limit=101", headers=headers(token))
    assert over.status_code == 400
    assert (await client.get("/api/feed?limit=201", headers=headers(token))).status_code == 400
    assert (await client.get("/api/feed?limit=200", headers=headers(token))).status_code == 200
