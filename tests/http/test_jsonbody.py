"""The API's JSON (``memlite/http/jsonbody.py``): orjson's encoding for ``jsonify`` and the
fast path alike, sorted and compact, UTF-8 text, and the standard library's for what
orjson refuses, so that no answer fails for its encoding."""

from __future__ import annotations

import datetime
import json
import math

import pytest
from http_helpers import headers, seed_observation, seed_session
from quart_trio import QuartTrio

from memlite.http import jsonbody
from memlite.http.rawjson import RawJson


@pytest.fixture
def provider():
    app = QuartTrio(__name__)
    app.json = jsonbody.JsonProvider(app)
    return app.json


def test_compact_sorted_utf8_with_a_final_newline(provider):
    body = {"b": [1, 2.5, None, True], "a": {"z": "café 🦀", "y": (1, 2)}}
    encoded = jsonbody.encode(provider, body)
    assert encoded == '{"a":{"y":[1,2],"z":"café 🦀"},"b":[1,2.5,null,true]}\n'.encode()
    assert provider.dumps(body, separators=(",", ":")) == encoded.decode()[:-1]


def test_what_orjson_refuses_is_encoded_by_the_standard_library(provider):
    for value in ({"text": "lone \ud800 surrogate"}, {"n": 2**70}):
        encoded = jsonbody.encode(provider, value)
        assert json.loads(encoded) == value and encoded.endswith(b"\n")
    assert json.loads(jsonbody.encode(provider, {"x": math.nan})) == {"x": None}


def test_dates_go_to_the_providers_default_as_before(provider):
    moment = datetime.datetime(2026, 12, 1, 9, 30, tzinfo=datetime.UTC)
    assert json.loads(jsonbody.encode(provider, {"at": moment})) == {
        "at": "Tue, 01 Dec 2026 09:30:00 GMT"}


def test_other_forms_stay_the_default_providers(provider):
    assert provider.dumps({"b": 1, "a": "é"}) == '{"a": "\\u00e9", "b": 1}'
    assert provider.dumps({"a": 1}, indent=2) == '{\n  "a": 1\n}'


def test_raw_json_is_embedded_as_written_or_decoded_by_the_standard_library(provider):
    record = RawJson('{"z":"café","a":[1,"b"]}'.encode())
    body = {"hits": [record], "b": 1}
    assert jsonbody.encode(provider, body) == \
        '{"b":1,"hits":[{"z":"café","a":[1,"b"]}]}\n'.encode()  # as written: not re-sorted
    assert json.loads(provider.dumps(body, indent=1)) == {"b": 1, "hits": [
        {"a": [1, "b"], "z": "café"}]}
    # Beside a value only the standard library encodes, the fallback decodes it.
    assert json.loads(jsonbody.encode(provider, {"hits": [record], "n": 2**70})) == {
        "hits": [{"a": [1, "b"], "z": "café"}], "n": 2**70}


@pytest.mark.loop_guard
async def test_answers_carry_utf8_text_not_escapes(client, token, storage):
    await seed_session(storage, "a-1")
    await seed_observation(storage, "a-1", title="café parser notes 🦀", at_ms=1_000)
    for path in ("/api/search?q=parser&mode=fts", "/api/search/index?q=parser&mode=fts",
                 "/api/timeline?anchor=1", "/api/feed"):
        response = await client.get(path, headers=headers(token))
        body = await response.get_data()
        assert response.status_code == 200, path
        assert "café parser notes 🦀".encode() in body and b"\\u" not in body, path
        assert response.headers["Content-Type"] == "application/json"
