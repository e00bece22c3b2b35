"""The hook campaign's inputs (``bench/bench_fuzz.py``, ``tests/hooks/test_hook_fuzz.py``):
the captured stdin fixtures of Claude Code 2.1.332, and the mutations applied to them (keys
dropped, wrong types, huge strings, invalid UTF-8, truncated JSON, deep nesting, NUL, lone
surrogates), plus random bytes and random JSON. Each mutation is seeded, so a failing case
can be made again from its seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["EVENT_ARGS", "FIXTURES", "MUTATIONS", "fixtures", "mutated"]

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "claude-code" / \
    "v2.1.332" / "hooks"


def fixtures() -> list[tuple[str, bytes]]:
    """(event name, stdin bytes) of every captured hook payload."""
    return [(path.name.split(".")[0], path.read_bytes())
            for path in sorted(FIXTURES.glob("*.json"))]


def _drop_keys(rng: random.Random, payload: dict[str, Any]) -> bytes:
    keys = list(payload)
    for key in rng.sample(keys, rng.randint(1, len(keys))):
        del payload[key]
    return json.dumps(payload).encode()


_WRONG = [None, True, 0, -1, 1.5, 2**70, "", "x", [], [1, "a"], {}, {"a": {"b": None}}]


def _wrong_types(rng: random.Random, payload: dict[str, Any]) -> bytes:
    for key in rng.sample(list(payload), rng.randint(1, len(payload))):
        payload[key] = rng.choice(_WRONG)
    return json.dumps(payload).encode()


def _huge_string(rng: random.Random, payload: dict[str, Any]) -> bytes:
    key = rng.choice(list(payload) + ["prompt", "tool_response", "cwd", "session_id"])
    payload[key] = rng.choice("ab<é😀\n") * rng.choice([10_000, 300_000, 2_000_000])
    return json.dumps(payload).encode()


def _invalid_utf8(rng: random.Random, payload: dict[str, Any]) -> bytes:
    raw = bytearray(json.dumps(payload).encode())
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(raw))
        raw[at:at] = rng.choice([b"\xff", b"\xfe\xfd", b"\xc3", b"\xed\xa0\x80", b"\x80"])
    return bytes(raw)


def _truncated(rng: random.Random, payload: dict[str, Any]) -> bytes:
    raw = json.dumps(payload).encode()
    return raw[:rng.randrange(len(raw))]


def _deep(rng: random.Random, payload: dict[str, Any]) -> bytes:
    depth = rng.choice([50, 900, 5_000, 200_000])
    nested = "[" * depth + "]" * depth if rng.random() < 0.5 else \
        '{"a":' * depth + "1" + "}" * depth
    key = rng.choice(["tool_input", "tool_response", "prompt", "extra"])
    raw = json.dumps({**payload, key: None}).encode()
    return raw.replace(f'"{key}": null'.encode(), f'"{key}": {nested}'.encode(), 1)


def _nul(rng: random.Random, payload: dict[str, Any]) -> bytes:
    key = rng.choice(list(payload))
    payload[key] = f"a\x00b{payload[key]}\x00" if isinstance(payload[key], str) else "\x00"
    raw = json.dumps(payload).encode()
    return raw + b"\x00" if rng.random() < 0.3 else raw


def _surrogates(rng: random.Random, payload: dict[str, Any]) -> bytes:
    key = rng.choice([k for k in payload if isinstance(payload[k], str)] or ["prompt"])
    escape = rng.choice(["\\ud800", "\\udfff", "\\udc00x", "\\ud83d"])
    raw = json.dumps({**payload, key: "SURROGATE"}).encode()
    return raw.replace(b'"SURROGATE"', f'"a{escape}b"'.encode(), 1)


def _random_bytes(rng: random.Random, payload: dict[str, Any]) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 4000)))


def _random_json(rng: random.Random, payload: dict[str, Any]) -> bytes:
    def value(depth: int) -> Any:
        kind = rng.randrange(7 if depth < 4 else 5)
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        if kind == 6:
            return {str(value(depth + 1))[:20]: value(depth + 1)
                    for _ in range(rng.randint(0, 4))}
        return [None, rng.random() < 0.5, rng.randint(-2**64, 2**64),
                "".join(chr(rng.randrange(0x20, 0x2FFF)) for _ in range(rng.randint(0, 30))),
                rng.random() * 1e300][kind]

    found = value(0) if rng.random() < 0.3 else {
        "session_id": rng.choice(["s", "", " ", "x" * 300, 5]),
        "hook_event_name": rng.choice(["PostToolUse", "SessionStart", "Stop", "Nope", 3]),
        **{f"k{i}": value(1) for i in range(rng.randint(0, 6))}}
    return json.dumps(found).encode()


MUTATIONS: dict[str, Callable[[random.Random, dict[str, Any]], bytes]] = {
    "drop-keys": _drop_keys, "wrong-types": _wrong_types, "huge-string": _huge_string,
    "invalid-utf8": _invalid_utf8, "truncated": _truncated, "deep": _deep, "nul": _nul,
    "lone-surrogate": _surrogates, "random-bytes": _random_bytes,
    "random-json": _random_json,
}
EVENT_ARGS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure",
              "PreCompact", "SubagentStop", "Stop", "SessionEnd", "Telepathy", ""]


def mutated(fixture: tuple[str, bytes], mutation: str, seed: int) -> tuple[str, bytes]:
    """(argv event, stdin) of ``fixture`` mutated by ``mutation`` with ``seed``."""
    rng = random.Random(seed)
    event, raw = fixture
    payload = json.loads(raw)
    if rng.random() < 0.1:
        event = rng.choice(EVENT_ARGS)
    return event, MUTATIONS[mutation](rng, payload)
