"""The text embedded for a search query (``memlite.embed.query_text``): framing and time
cue words go, the topic stays, and a query with nothing to remove is embedded as typed."""

from __future__ import annotations

import pytest

from memlite.embed.query_text import embedding_query


@pytest.mark.parametrize(("query", "embedded"), [
    ("can you remind me what the story was with the pdf jobs running out of memory",
     "the pdf jobs running out of memory"),
    ("Could you please tell me about the billing lock", "the billing lock"),
    ("do you remember what happened with the webhook signatures", "the webhook signatures"),
    ("what's the deal with distroless", "distroless"),
    ("what was going on with the reconnect storm?", "the reconnect storm?"),
    ("any idea what the problem was with sync", "sync"),
    ("what do we fingerprint data blocks with today", "what do we fingerprint data blocks with"),
    ("how often does background sync run now", "how often does background sync run"),
    ("which charting library do we use these days", "which charting library do we use"),
    ("is minSdk still 24", "is minSdk 24"),
    ("what is the pool size at the moment, per pod", "what is the pool size per pod"),
])
def test_framing_and_time_cues_are_not_embedded(query, embedded):
    assert embedding_query(query) == embedded


@pytest.mark.parametrize("query", [
    "When did Caroline go to the LGBTQ support group?",  # punctuation kept as typed
    "Fixed double charge when Stripe webhook retried",
    "payments/stripe_client.py timeout",
    "knowledge of the story arc",  # "story" inside a topic is no framing
    "",
])
def test_a_query_without_framing_is_embedded_as_typed(query):
    assert embedding_query(query) == query


@pytest.mark.parametrize("query", ["now", "remind me", "can you remind me, currently?"])
def test_a_query_that_is_all_framing_is_embedded_as_typed(query):
    assert embedding_query(query) == query
