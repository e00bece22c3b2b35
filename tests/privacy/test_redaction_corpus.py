"""Issue 9, part 1: the redactor against its corpus, its invariants, and adversarial input.

* every positive of ``corpus.POSITIVES`` loses its secret and gets ``[REDACTED:<kind>]``
  of the expected kind; every near miss of ``corpus.NEGATIVES`` comes out unchanged;
* ``clean`` is idempotent and keeps the structure of a JSON value;
* no pattern backtracks catastrophically: 1 MB inputs built to stress each pattern (long
  runs of what a pattern accepts, without what would end a match) finish well under 1 s.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import NEGATIVES, POSITIVES  # noqa: E402

from memlite import privacy  # noqa: E402
from memlite.privacy import clean, redact  # noqa: E402

KINDS = {"tag", "private_key", "aws_access_key_id", "aws_secret_access_key", "anthropic",
         "openai", "github", "gitlab", "slack", "slack_webhook", "stripe", "jwt",
         "auth_header", "password", "env", "high_entropy"}


def test_the_corpus_is_big_enough_and_covers_every_kind():
    assert len(POSITIVES) >= 60 and len(NEGATIVES) >= 60
    assert {s.kind for s in POSITIVES} == KINDS
    names = [s.name for s in POSITIVES] + [m.name for m in NEGATIVES]
    assert len(names) == len(set(names))
    for kind in KINDS - {"tag"}:  # every kind is documented
        assert f"``{kind}``" in privacy.__doc__, kind


@pytest.mark.parametrize("sample", POSITIVES, ids=[s.name for s in POSITIVES])
def test_positive_is_redacted(sample):
    assert sample.secret in sample.text
    out = clean(sample.text)
    assert sample.secret not in out, out
    if sample.kind != "tag":
        assert f"[REDACTED:{sample.kind}]" in out, out
    assert clean(out) == out  # idempotent


@pytest.mark.parametrize("miss", NEGATIVES, ids=[m.name for m in NEGATIVES])
def test_near_miss_survives(miss):
    assert clean(miss.text) == miss.text


def test_redaction_keeps_what_is_around_the_secret():
    text = next(s for s in POSITIVES if s.name == "postgres url").text
    assert clean(text).startswith("DATABASE_URL=postgres://app:[REDACTED:password]@db.internal")
    text = next(s for s in POSITIVES if s.name == "json api_key").text
    assert json.loads(clean(text)) == {"service": "maps", "api_key": "[REDACTED:env]"}
    text = next(s for s in POSITIVES if s.name == "gcp service account json").text
    account = json.loads(clean(text).split("\n", 1)[1])
    assert account["private_key"] == "[REDACTED:private_key]\n"
    assert account["client_email"].endswith(".iam.gserviceaccount.com")


def test_everything_at_once_is_idempotent():
    text = "\n".join([s.text for s in POSITIVES] + [m.text for m in NEGATIVES])
    once = clean(text)
    assert clean(once) == once
    for sample in POSITIVES:
        assert sample.secret not in once, sample.name


def test_clean_keeps_json_structure():
    value = {
        "tool_name": "Bash",
        "tool_input": {"command": POSITIVES[10].text, "timeout": 120, "background": False},
        "tool_response": {"stdout": [m.text for m in NEGATIVES[:5]], "exit": 0,
                          "ratio": 0.5, "none": None, "nested": [[{"PASSWORD": "x"}]]},
    }
    out = clean(value)
    assert json.loads(json.dumps(out)) == out
    assert out.keys() == value.keys()
    assert out["tool_input"]["timeout"] == 120 and out["tool_input"]["background"] is False
    assert out["tool_response"]["exit"] == 0 and out["tool_response"]["ratio"] == 0.5
    assert out["tool_response"]["none"] is None
    assert out["tool_response"]["stdout"] == [m.text for m in NEGATIVES[:5]]
    assert out["tool_response"]["nested"] == [[{"PASSWORD": "[REDACTED:env]"}]]
    assert POSITIVES[10].secret not in out["tool_input"]["command"]


@pytest.mark.parametrize("index", range(len(privacy._RULES)))
def test_each_rule_finds_what_a_regex_scan_finds(index):
    """A rule runs its pattern only at its trigger words: same result as ``pattern.sub``."""
    rule = privacy._RULES[index]
    texts = ["\n".join([s.text for s in POSITIVES] + [m.text for m in NEGATIVES]),
             "x+https://u:pw@h a.b-c+ftp://v:pw2@h2 //u:p@h ://u:p@h",
             "Token=a TOKEN: b\nPASSWORD=c\n\"secretaccesskey\": \"" + "A1/+" * 10 + "\""]
    for text in texts:
        expected = rule.get().sub(rule.replacement, text)
        assert rule.apply(text, None) == expected
        assert rule.apply(text, text.lower()) == expected


def test_clean_judges_a_string_value_by_its_key():
    value = {"password": "hunter2", "DB_PASSWORD": "x", "apiKey": "abc123",
             "key": "Zx9Qw8Er7Ty6Ui5Op4As3Df2", "client_secret": "s3cr3t",
             "password_hint": "first pet", "token": "${TOKEN}", "ssh_key": "~/.ssh/id_rsa",
             "key2": "abc", "sort_key": "created_at", "max_tokens": 1024, "auth": "none",
             "secret": "the meeting moved to Tuesday", "monkey": "banana", "token_count": "12",
             "keys": ["a"], "tokens": {"token": "abc123"}}
    out = clean(value)
    assert list(out) == list(value)
    assert out == {**value, "password": "[REDACTED:env]", "DB_PASSWORD": "[REDACTED:env]",
                   "apiKey": "[REDACTED:env]", "key": "[REDACTED:high_entropy]",
                   "client_secret": "[REDACTED:env]", "tokens": {"token": "[REDACTED:env]"}}


def _timed(func, *args):
    """CPU seconds (not wall time: 8 sessions share 2 cores here)."""
    started = time.process_time()
    result = func(*args)
    return result, time.process_time() - started


MB = 1_000_000
ADVERSARIAL = {
    "plain a": "a" * MB,
    "one huge line of words": ("lorem ipsum dolor sit amet " * (MB // 27)),
    "pem begins without end": "-----BEGIN RSA PRIVATE KEY-----" * (MB // 31),
    "pem dashes": "-----BEGIN " + "A " * (MB // 2),
    "akia runs": "AKIA" * (MB // 4),
    "aws secret name repeated": "aws_secret_access_key=" * (MB // 22),
    "aws secret 41 chars": ("aws_secret_access_key=" + "A" * 41 + " ") * (MB // 64),
    "sk- runs": "sk-" + "a-" * (MB // 2),
    "sk- repeated": "sk-" * (MB // 3),
    "sk-ant- repeated": "sk-ant-" * (MB // 7),
    "ghp runs": "ghp_" * (MB // 4),
    "github_pat repeated": "github_pat_" * (MB // 11),
    "glpat repeated": "glpat-" * (MB // 6),
    "slack hook no end": "hooks.slack.com/services/" * (MB // 25),
    "xox repeated": "xoxb-" * (MB // 5),
    "stripe repeated": "sk_live_" * (MB // 8),
    "jwt almost": ("eyJ" + "a" * 20 + ".") * (MB // 24),
    "jwt no third": "eyJaaaaaaaaaaa.eyJbbbbbbbbbbb " * (MB // 30),
    "authorization repeated": "Authorization: Bearer " * (MB // 22),
    "url no at": ("postgres://user:" + "p" * 100 + " ") * (MB // 117),
    "url scheme runs": "a://" * (MB // 4),
    "url long user": "x://" + "u" * MB,
    "url colon runs": "x://u:" + ":" * MB,
    "assign repeated": "token=" * (MB // 6),
    "assign quote no close": 'password="' * (MB // 10),
    "assign quote long": 'token="' + "a" * MB,
    "assign colons": "key: " * (MB // 5),
    "assign single quotes": "secret='" * (MB // 8),
    "names without keyword": "MY_LONG_VARIABLE_NAME_" * (MB // 22),
    "keyword soup": "keytokensecretpasswordpwdauth" * (MB // 29),
    "tags unclosed": "<private>" * (MB // 9),
    "tags close only": "</private>" * (MB // 10),
    "angle brackets": "<" * MB,
    "many near misses": "\n".join(m.text for m in NEGATIVES) * 200,
}


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_input_is_fast(name):
    text = ADVERSARIAL[name]
    assert len(text) >= 500_000
    _, seconds = _timed(clean, text)
    assert seconds < 1.0, f"{name}: {seconds:.2f} s"


def test_huge_nested_values_are_fast():
    deep: object = "PASSWORD=hunter2"
    for _ in range(200):  # well under the recursion limit, as a hook payload would be
        deep = {"a": [deep]}
    wide = {f"k{i}": [f"token={i}xy", i, None, {"s": "ok"}] for i in range(20_000)}
    out, seconds = _timed(clean, {"deep": deep, "wide": wide})
    assert seconds < 3.0  # 100,000 strings; the figure is in bench/bench_privacy.py
    node = out["deep"]
    for _ in range(200):
        node = node["a"][0]
    assert node == "PASSWORD=[REDACTED:env]"
    assert out["wide"]["k7"] == ["token=[REDACTED:env]", 7, None, {"s": "ok"}]


def test_one_megabyte_of_realistic_output_is_fast():
    # (no cut-off PEM block: an unclosed block is redacted up to the next END line)
    parts = [s.text for s in POSITIVES if "cut off" not in s.name] + [m.text for m in NEGATIVES]
    text = (("\n".join(parts) + "\n") * 60)[:MB]
    out, seconds = _timed(redact, text)
    assert seconds < 1.0 and len(out) > MB // 2
