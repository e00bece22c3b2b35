"""memlite.privacy: tag stripping, secret redaction, recursive cleaning, import cost."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hookrun import BARE, REPO
from hypothesis import given
from hypothesis import strategies as st

from memlite.hooks.limits import FIELD_BUDGET, MAX_BODY, cut, fit, marker, precut
from memlite.privacy import clean, redact, strip_tags


@pytest.mark.parametrize(("text", "expected"), [
    ("a <private>b\nc</private> d", "a  d"),
    ("a <PRIVATE>b</Private> d", "a  d"),
    ("a <private>never closed", "a "),
    ("x<private>a<private>b</private>c</private>y", "xy"),
    ("<memlite-context>old</memlite-context>new", "new"),
    ("<system-reminder>r</system-reminder>ok", "ok"),
    ("<system_instruction>i</system_instruction>ok", "ok"),
    ("<system-instruction attr='1'>i</system-instruction>ok", "ok"),
    ("<persisted-output>p</persisted-output>ok", "ok"),
    ("stray </private> close", "stray  close"),
    ("a < b and <privateer>", "a < b and <privateer>"),
    ("no tags at all", "no tags at all"),
])
def test_strip_tags(text, expected):
    assert strip_tags(text) == expected


def test_orphan_close_hides_what_came_before_on_request():
    assert strip_tags("secret</private> visible", orphan_close_hides_before=True) == " visible"


@pytest.mark.parametrize(("secret", "kind"), [
    ("AKIA2E0A8F3B244C9986", "aws_access_key_id"),
    ("ASIA2E0A8F3B244C9986", "aws_access_key_id"),
    ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "anthropic"),
    ("sk-abcdefghijklmnopqrstuvwxyz0123", "openai"),
    ("sk-proj-abcdefghijklmnopqrstuvwxyz0123", "openai"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github"),
    ("gho_abcdefghijklmnopqrstuvwxyz0123456789", "github"),
    ("ghs_abcdefghijklmnopqrstuvwxyz0123456789", "github"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github"),
    ("glpat-abcdefghijklmnopqrst12", "gitlab"),
    ("xoxb-1234567890-abcdefghij", "slack"),
    ("sk_live_abcdefghijklmnop1234", "stripe"),
    ("rk_live_abcdefghijklmnop1234", "stripe"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0", "jwt"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----",
     "private_key"),
])
def test_redact_whole_tokens(secret, kind):
    out = redact(f"before {secret} after")
    assert out == f"before [REDACTED:{kind}] after"


@pytest.mark.parametrize(("text", "expected"), [
    ("postgres://bob:hunter2@db:5432/x", "postgres://bob:[REDACTED:password]@db:5432/x"),
    ("export OPENAI_API_KEY=abc123 && run", "export OPENAI_API_KEY=[REDACTED:env] && run"),
    ("GITHUB_TOKEN='a b'", "GITHUB_TOKEN=[REDACTED:env]"),
    ("DB_PASSWORD=\"x y\"", "DB_PASSWORD=[REDACTED:env]"),
    ("PASSWORD=hunter2", "PASSWORD=[REDACTED:env]"),
    ("MY_SECRET=abc", "MY_SECRET=[REDACTED:env]"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY8q3Lp0Zk2e",
     "aws_secret_access_key = [REDACTED:aws_secret_access_key]"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE (cut)", "[REDACTED:private_key]"),
])
def test_redact_keeps_the_name(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "MEMLITE_WORKER_PORT=37888", "monkey=banana", "key=lambda x: x", "https://example.com/a",
    "sorted(items, key=len)", "ASIA is big", "task-ant-1", "eyJ alone",
])
def test_redact_leaves_ordinary_text(text):
    assert redact(text) == text


def test_redaction_is_idempotent():
    once = redact("PASSWORD=x AKIA2E0A8F3B244C9986")
    assert redact(once) == once


def test_clean_walks_values_not_keys():
    value = {"PASSWORD=x": ["<private>p</private>ok", {"n": 1, "s": "sk_live_abcdefghijklmnop1"}],
             "b": True, "c": None}
    assert clean(value) == {"PASSWORD=x": ["ok", {"n": 1, "s": "[REDACTED:stripe]"}],
                            "b": True, "c": None}


def test_cut_keeps_head_and_tail():
    text = "A" * 10 + "B" * 100_000 + "C" * 10
    out = cut(text, FIELD_BUDGET)
    assert out.startswith("A" * 10) and out.endswith("C" * 10)
    assert FIELD_BUDGET - 2 <= len(out) <= FIELD_BUDGET  # the marker counts inside it
    removed = len(text) - FIELD_BUDGET + len(marker(len(text)))
    assert marker(removed) in out


@given(st.text(max_size=300), st.integers(min_value=0, max_value=200))
def test_a_cut_marker_is_never_longer_than_the_text_it_replaces(text, budget):
    out = cut(text, budget)
    assert out == text or len(out) <= budget
    assert len(out) <= len(text)  # a cut never makes a text longer
    found = re.search(r"\u2026\[memlite: cut (\d+) chars\]\u2026", out)
    if found:
        removed = int(found.group(1))
        assert removed == len(text) - (len(out) - len(found.group(0)))
        assert len(found.group(0)) < removed
        assert text.startswith(out[:found.start()]) and text.endswith(out[found.end():])


def test_a_title_one_character_over_does_not_grow():
    assert len(cut("x" * 121, 120)) <= 120  # was 144: 120 kept + a 24-character marker


def test_precut_never_exposes_a_region_whose_opening_was_cut_away():
    text = "<private>" + "s" * 1_000_000 + "SECRET</private> tail"
    out = clean(precut(text))
    assert "SECRET" not in out and out.endswith(" tail")
    text = "head <private>" + "s" * 1_000_000 + "</private> tail"
    assert clean(precut(text)).startswith("head ")


def test_fit_caps_the_whole_body():
    payload = {"session_id": "s", "tool_response": [str(i) * 40 for i in range(100_000)]}
    shaped, body = fit(payload)
    assert len(body) <= MAX_BODY and shaped["session_id"] == "s"


def test_the_hook_imports_only_the_standard_library():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import memlite.hooks.main, "
            "memlite.hooks.spool, memlite.hooks.bootstrap, memlite.spawn; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('trio', 'attrs', 'quart', 'apsw', 'httpx', 'hypercorn')]; print(bad)")
    result = subprocess.run([BARE, "-I", "-S", "-c", code, str(REPO / "plugin")],
                            capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stdout.strip()) == (0, "[]"), result.stderr
    assert "typing" not in subprocess.run(
        [sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "import memlite.hooks.main; print(sorted(sys.modules))", str(REPO)],
        capture_output=True, text=True, timeout=30).stdout.split("'")
