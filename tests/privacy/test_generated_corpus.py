"""Issue 15: the generated corpus (``generated.py``), scored on the split not tuned on.

* the corpus has the promised size: >= 300 positives and >= 300 near misses per split,
  >= 40 shapes each, every shape in every surrounding, and the two splits differ;
* on the ``test`` split, recall >= 0.97 and false positives <= 0.02 (a positive counts
  only when its secret is gone in every escaping AND the line after it survived);
* every shape the issue lists (missed, wrongly redacted) is in the corpus, and each is
  handled on ``dev`` (the split the rules were tuned on: one failure names its shape).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generated import (  # noqa: E402
    NEGATIVE_SHAPES,
    POSITIVE_SHAPES,
    SURROUNDINGS,
    corpus,
    outcome,
)

from memlite.privacy import clean  # noqa: E402

ISSUE_MISSED = ["mysql -p quoted", "docker login -p", "password-stdin echo", "sshpass -p",
                "ssh-keygen -N", "curl -u user:pass", "go Header.Set", "nginx proxy_set_header",
                "python headers dict", "js headers object", "k8s name value", "pgpass line",
                "netrc line", "prose passphrase", "prose password", "positional client",
                "nginx x-api-key", "redis empty user", "pypi token", "npm token", "twilio key",
                "sendgrid key", "google api key", "vault token", "dockerconfigjson auths",
                "json password", "env unquoted"]
ISSUE_WRONGLY_REDACTED = ["stripe publishable under key", "slack placeholder",
                          "change-me placeholder", "akia xs", "masked gho", "masked sk",
                          "wireguard public key", "actions id-token", "arn under password key",
                          "aws docs example"]


def _scores(split):
    positives, negatives = corpus(split)
    counts = {"tp": 0, "fn": 0, "damaged": 0, "tn": 0, "fp": 0}
    failures = []
    for sample in positives + negatives:
        result = outcome(sample, clean(sample.text))
        counts[result] += 1
        if result in ("fn", "damaged", "fp"):
            failures.append(f"{result}: {sample.name}")
    return positives, negatives, counts, failures


def test_the_corpus_has_the_promised_size_and_splits():
    dev_pos, dev_neg = corpus("dev")
    test_pos, test_neg = corpus("test")
    assert len(POSITIVE_SHAPES) >= 40 and len(NEGATIVE_SHAPES) >= 40
    assert len(test_pos) >= 300 and len(test_neg) >= 300
    assert {s.surrounding for s in test_pos} == set(SURROUNDINGS)
    assert len(SURROUNDINGS) >= 6
    assert {s.secret for s in dev_pos}.isdisjoint({s.secret for s in test_pos})
    assert corpus("test") == (test_pos, test_neg)  # fixed seed: the same draw every run
    for name in ISSUE_MISSED:
        assert name in POSITIVE_SHAPES, name
    for name in ISSUE_WRONGLY_REDACTED:
        assert name in NEGATIVE_SHAPES, name
    for sample in test_pos:
        assert sample.secret and outcome(sample, sample.text) == "fn"


def test_recall_and_false_positives_on_the_test_split():
    positives, negatives, counts, failures = _scores("test")
    recall = counts["tp"] / len(positives)
    false_positives = counts["fp"] / len(negatives)
    assert recall >= 0.97, failures
    assert false_positives <= 0.02, failures


@pytest.mark.parametrize("shape", ISSUE_MISSED + ISSUE_WRONGLY_REDACTED)
def test_every_shape_of_the_issue_is_handled_on_dev(shape):
    positives, negatives = corpus("dev")
    samples = [s for s in positives + negatives if s.shape == shape]
    assert len(samples) == len(SURROUNDINGS)
    bad = [s.name for s in samples if outcome(s, clean(s.text)) not in ("tp", "tn")]
    assert not bad, bad


def test_decoded_structure_is_judged_by_its_keys():
    """Where the hook has the decoded JSON, a k8s/ECS pair and a Docker ``auths`` entry are
    judged by their keys (no ``=`` or ``:`` is left in the string for the text rules)."""
    import base64

    auth = base64.b64encode(b"ci-bot:Zq8-xW2pLm4").decode()
    value = {"env": [{"name": "DB_PASSWORD", "value": "Zq8-xW2pLm4"},
                     {"name": "LOG_LEVEL", "value": "debug"},
                     {"name": "DB_PASSWORD", "value": "${DB_PASSWORD}"}],
             "auths": {"ghcr.io": {"auth": auth}, "quay.io": {"auth": ""}},
             "credsStore": "desktop"}
    out = clean(value)
    assert out["env"][0] == {"name": "DB_PASSWORD", "value": "[REDACTED:env]"}
    assert out["env"][1:] == value["env"][1:]
    assert out["auths"] == {"ghcr.io": {"auth": "[REDACTED:password]"}, "quay.io": {"auth": ""}}
    assert out["credsStore"] == "desktop"
