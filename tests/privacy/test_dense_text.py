"""Issue 15: how the redactor stays within 10 ms per 100 kB on dense text, and what that
costs in judgement.

* A fold rule (case-insensitive names) runs its pattern on the lower-cased text, where
  ``re`` compares plain characters and skips ahead in C; it must find exactly what the
  case-insensitive pattern finds on the text, including the characters that
  ``(?i:…)`` matches but ``str.lower`` keeps (long s, dotless i, the Kelvin sign);
* on dense text (more than one trigger per ``engine.DENSE`` characters) at most
  ``engine.DENSE_BUDGET`` matches per rule are judged; every later match is redacted
  bluntly, and the text between matches keeps its case.
"""

from __future__ import annotations

import copy
import re

import pytest

from memlite.privacy import redact
from memlite.redact import RULES, engine

FOLD_RULES = [rule for rule in RULES if rule.lower_args is not None]
TEXTS = [
    "PASSWORD=Abc123xyz9\nSecretAccessKey: \"" + "Ab1/" * 10 + "\"\npaſsword=Abc123xyz9",
    "Authorization: Bearer abcdefghij0123456789XYZ \u212aEY=Abc123xyz9 ıd_token=q1w2e3r4t5",
    "machine h.example.com login me PASSWORD Hunter2pass! name: DB_PASSWORD\nvalue: s3cr3tV4l",
    "the passphrase is Tr0ub4dor&3, TOKEN = 'Zx9Qw8Er7Ty6Ui5Op4As3Df2' Client(\""
    + "aB3dE6gH9jK2mN5pQ8sT" + "\")",
    "X-Api-Key: Abc123xyz9Abc123 " * 20 + "api_key=Abc123xyz9 " * 20,
]
DENSE_TEXTS = [
    "X-Api-Key: Abc123xyz9Abc123 Keep " * 400 + "Api_Key=Abc123xyz9 KEEP " * 900,
    "the PASSWORD is Tr0ub4dor&3. " * 3000,
    "Name: DB_TOKEN\nValue: s3cr3tV4l\n" * 2000,
    "machine H login U password P4ss!\n" * 2000,
    "API KEY=X1" * 3000,  # crowded matches: the blunt pass runs ``sub`` on the text
]


def test_every_fold_rule_has_a_lower_case_pattern():
    names = {rule.name for rule in FOLD_RULES}
    assert {"assignment", "prose", "header", "aws_secret_access_key", "netrc",
            "named_pair", "positional", "auth_header", "bearer"} <= names


@pytest.mark.parametrize("rule", FOLD_RULES, ids=lambda rule: rule.name)
def test_the_lower_case_pattern_finds_the_same_spans(rule):
    for text in TEXTS + ["\u0130TOKEN=\u0130Abc123xyz9 pass\u0130ng"]:
        lower = engine.folded(text)
        assert len(lower) == len(text)
        fast = [m.span() for m in rule.get_lower().finditer(lower)]
        slow = [m.span() for m in rule.get().finditer(text)]
        assert fast == slow, rule.name
        assert rule.apply(text, lower) == rule.get().sub(rule.replacement, text)


def test_folded_puts_an_ascii_letter_where_ignorecase_sees_one():
    for odd in engine.ODD_LETTERS:
        plain = engine.folded(odd)
        assert len(plain) == 1 and plain.isascii() and re.fullmatch("(?i:" + plain + ")", odd)
    assert engine.folded("Pa\u017f\u017fWORD \u0130D") == "password id"


def test_a_tag_spelled_with_odd_letters_is_still_stripped():
    from memlite.redact.tags import strip_tags
    text = "a <\u017fy\u017ftem-reminder>x</SYSTEM-REMINDER> b <PR\u0130VATE>y"
    assert strip_tags(text) == "a  b "


@pytest.mark.parametrize("rule", FOLD_RULES, ids=lambda rule: rule.name)
def test_past_the_budget_both_patterns_give_the_same_text(rule):
    slow = copy.copy(rule)
    slow.lower_args = None  # the case-insensitive pattern on the text, as before
    for text in DENSE_TEXTS:
        assert rule.apply(text, text.lower()) == slow.apply(text, text.lower())


def test_long_s_and_dotless_i_names_are_still_redacted():
    out = redact("paſsword=Abc123xyz9 and ıd_token stays, \u0130TOKEN=Zx9Qw8Er7Ty6 "
                 "API_\u212aEY=hunter2abc")
    assert "Abc123xyz9" not in out and "Zx9Qw8Er7Ty6" not in out and "hunter2" not in out


def test_dense_text_judges_at_most_the_dense_budget_per_rule():
    # placeholders survive judgement; past the budget they are redacted unjudged
    lines = [f"TOKEN=$TOKEN_{i}" for i in range(engine.DENSE_BUDGET + 60)]
    out = redact("\n".join(lines)).split("\n")
    kept = [line for line in out if line.startswith("TOKEN=$TOKEN_")]
    assert len(kept) == engine.DENSE_BUDGET
    assert out[:len(kept)] == lines[:len(kept)]
    assert all(line == "[REDACTED:env]" for line in out[len(kept):])  # the whole match


def test_sparse_text_keeps_the_whole_budget():
    filler = "x" * (engine.DENSE * 2)
    lines = [f"TOKEN=$TOKEN_{i} {filler}" for i in range(engine.DENSE_BUDGET + 20)]
    out = redact("\n".join(lines))
    assert out.count("$TOKEN_") == len(lines)  # all judged: placeholders kept


def test_blunt_redaction_keeps_the_case_of_the_text_between_matches():
    count = engine.DENSE_BUDGET + 300
    lines = [f"Keep Me {i}: TOKEN=abcd{i:06d}XYZ" for i in range(count)]
    out = redact("\n".join(lines))
    assert "abcd" not in out
    assert out.count("[REDACTED:env]") == count
    assert re.findall(r"Keep Me \d+", out) == [f"Keep Me {i}" for i in range(count)]
