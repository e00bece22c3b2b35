"""classify(): every reply gets exactly one kind; only valid XML yields something to store."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlite.observer.parse import (
    TYPES,
    ParsedObservation,
    ParsedSummary,
    Reply,
    classify,
)

KINDS = {"observations", "summary", "skip", "empty", "prose", "quota", "auth", "rate_limit",
         "malformed"}


def obs_xml(type_="change", title="Edited x.py", **extra: str) -> str:
    body = "".join(f"<{k}>{v}</{k}>" for k, v in extra.items())
    return f"<observation><type>{type_}</type><title>{title}</title>{body}</observation>"


def test_full_observation():
    reply = classify(
        "<observation>\n  <type>bugfix</type>\n  <title>Fix off-by-one in pager</title>\n"
        "  <subtitle>page 2 repeated the last row</subtitle>\n"
        "  <facts><fact>pager used &lt;= instead of &lt;</fact><fact>second</fact></facts>\n"
        "  <narrative>Found while testing.</narrative>\n"
        "  <concepts><concept>Gotcha</concept><concept>gotcha</concept></concepts>\n"
        "  <files_read><file>/home/u/proj/src/a.py</file></files_read>\n"
        "  <files_modified><file>/home/u/proj/src/b.py</file><file>/etc/x</file>"
        "</files_modified>\n</observation>", project="/home/u/proj")
    assert reply == Reply(kind="observations", observations=(ParsedObservation(
        type="bugfix", title="Fix off-by-one in pager", subtitle="page 2 repeated the last row",
        narrative="Found while testing.", facts=("pager used <= instead of <", "second"),
        concepts=("gotcha",), files_read=("src/a.py",), files_modified=("src/b.py", "/etc/x"),
    ),))
    assert not reply.pauses


def test_several_observations_and_a_skip_beside_them():
    reply = classify(obs_xml() + "\n<skip/>\n" + obs_xml("decision", "Use trio"))
    assert reply.kind == "observations"
    assert [o.title for o in reply.observations] == ["Edited x.py", "Use trio"]


def test_code_fences_prose_attributes_and_case_are_tolerated():
    reply = classify("Here it is:\n```xml\n<Observation id='3'><TYPE> Feature </TYPE>"
                     "<title>  New\n  flag </title></Observation>\n```")
    assert reply.observations == (ParsedObservation(type="feature", title="New flag"),)


def test_bare_ampersands_and_angle_brackets_stay_text():
    reply = classify(obs_xml(title="Vec<String> & Option<T>", narrative="if a < b && c > d"))
    assert reply.observations[0].title == "Vec<String> & Option<T>"
    assert reply.observations[0].narrative == "if a < b && c > d"


def test_summary():
    reply = classify("<summary><request>add login</request><investigated>auth.py"
                     "</investigated><learned>tokens expire</learned><completed>done"
                     "</completed><next_steps>tests</next_steps></summary>")
    assert reply == Reply(kind="summary", summary=ParsedSummary(
        request="add login", investigated="auth.py", learned="tokens expire",
        completed="done", next_steps="tests"))


@pytest.mark.parametrize("text", ["<skip/>", " <skip /> ", "<skip></skip>", "<SKIP/>\n<skip/>",
                                  "Not worth keeping. <skip/>"])
def test_skip(text):
    assert classify(text) == Reply(kind="skip")


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_empty(text):
    assert classify(text).kind == "empty"


@pytest.mark.parametrize("text", [
    "Sure! The user edited a file.", "I can't help with that.", "a < b and c & d",
    "The function is overloaded in three places, which explains the dispatch order, "
    "and the rate at which it is called is fine. " * 5,
])
def test_prose(text):
    assert classify(text).kind == "prose"


LIMITS = [
    ("quota", "You've hit your limit · resets 3pm (Europe/Paris)"),
    ("quota", "You\u2019ve hit your limit \u2219 resets 11am"),
    ("quota", "Claude AI usage limit reached|1767225600"),
    ("quota", "5-hour limit reached ∙ resets 3pm"),
    ("quota", "Weekly limit reached · resets Mon 9am"),
    ("quota", "Credit balance is too low"),
    ("quota", 'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":'
              '"Your credit balance is too low to access the Anthropic API. Please go to Plans & '
              'Billing to upgrade or purchase credits."}}'),
    ("quota", "You have reached your specified API usage limits. You will regain access on "
              "2026-12-01 at 00:00 UTC."),
    ("quota", "You're out of extra usage · resets 5pm"),
    ("auth", "Invalid API key · Please run /login"),
    ("auth", "Invalid API key · Fix external API key"),
    ("auth", "Not logged in · Please run /login"),
    ("auth", 'API Error: 401 {"type":"error","error":{"type":"authentication_error",'
             '"message":"invalid x-api-key"}}'),
    ("auth", "OAuth token has expired. Please obtain a new token or refresh your existing token."),
    ("auth", "This organization has been disabled."),
    ("auth", "Unauthorized"),
    ("rate_limit", 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":'
                   '"This request would exceed the rate limit for your organization"}}'),
    ("rate_limit", 'API Error: 529 {"type":"error","error":{"type":"overloaded_error",'
                   '"message":"Overloaded"}}'),
    ("rate_limit", "Overloaded"),
    ("rate_limit", "RATE_LIMIT_ERROR"),
    ("rate_limit", "429 Too Many Requests"),
    ("rate_limit", "API Error: 500 Internal server error"),
    ("rate_limit", "API Error: Request timed out."),
    ("rate_limit", "API Error: Connection error."),
]


@pytest.mark.parametrize(("kind", "text"), LIMITS, ids=[t[:30] for _, t in LIMITS])
def test_limit_messages_pause(kind, text):
    reply = classify(text)
    assert reply.kind == kind
    assert reply.pauses and reply.reason


def test_an_observation_about_rate_limits_is_an_observation():
    reply = classify(obs_xml("discovery", "You've hit your limit is shown on 429",
                             narrative="rate_limit_error, Invalid API key, overloaded"))
    assert reply.kind == "observations"


MALFORMED = [
    obs_xml("banana"), obs_xml(""), obs_xml(title=""), obs_xml(title="   "),
    "<observation><title>x</title></observation>",
    "<observation><type>change</type><title>x</title>",
    "<observation><type>change<title>x</title></observation>",
    obs_xml(title="<title>x</title>"), obs_xml(facts="loose text"),
    obs_xml(facts="<fact>a</fact><concept>b</concept>"), obs_xml(title="a</title><title>b"),
    "<observation><type>change</type><title>x</title>stray prose</observation>",
    "<summary><request>a</request></summary><summary><request>b</request></summary>",
    "<summary><request>a</request></summary>" + obs_xml(),
    "<summary></summary>", "<summary><type>change</type></summary>",
    "<title>x</title>", "<fact>x</fact>", "<skip>why</skip>", "</skip/>",
    "<!DOCTYPE r [<!ENTITY e 'boom'>]>" + obs_xml(title="&e;"),
    "<!ENTITY x SYSTEM 'file:///etc/passwd'>" + obs_xml(),
    "<html><body><h1>Bad gateway page</h1></body></html>",
    "x" * 1_100_000,
]


@pytest.mark.parametrize("text", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed(text):
    reply = classify(text)
    assert reply.kind == "malformed", reply
    assert reply.reason and not reply.observations and reply.summary is None


def test_no_entity_is_expanded():
    reply = classify(obs_xml(title="&e; &amp; &#65; &#0;"))
    assert reply.observations[0].title == "&e; & A &#0;"


def test_fields_are_capped():
    many = "".join(f"<fact>{i} {'f' * 900}</fact>" for i in range(40))
    reply = classify(obs_xml(title="t" * 500, narrative="n" * 9000, facts=many))
    obs = reply.observations[0]
    assert len(obs.title) == 200 and len(obs.narrative) == 4000
    assert len(obs.facts) == 20 and all(len(f) == 500 for f in obs.facts)


def test_forbidden_characters_are_dropped():
    reply = classify(obs_xml(title="a\x00b\x1b[31mc\ud800"))
    assert reply.observations[0].title == "ab[31mc"


# --- properties ------------------------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=60)
_line = _text.map(lambda s: " ".join(s.split())).filter(bool)
_block = _text.map(str.strip)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text):
    assert classify(text).kind in KINDS


_TAGS = st.sampled_from(["<observation>", "</observation>", "<type>change</type>", "<title>",
                         "</title>", "<facts>", "<fact>", "</fact>", "</facts>", "<skip/>",
                         "<summary>", "</summary>", "<request>", "&", "<", "&#0;", "<!DOCTYPE",
                         "]]>", "<![CDATA[", "You've hit your limit"])


@settings(max_examples=300)
@given(st.lists(st.one_of(_TAGS, _text), max_size=20))
def test_tag_soup_never_raises_and_never_yields_an_invalid_observation(parts):
    reply = classify("".join(parts))
    assert reply.kind in KINDS
    for obs in reply.observations:
        assert obs.type in TYPES and obs.title.strip()


_observations = st.builds(
    ParsedObservation, type=st.sampled_from(sorted(TYPES)), title=_line, subtitle=_line,
    narrative=_block, facts=st.lists(_block.filter(bool), max_size=4, unique=True).map(tuple),
    concepts=st.lists(_line.map(str.lower), max_size=3, unique=True).map(tuple),
    files_read=st.lists(st.from_regex(r"[a-z]{1,8}(/[a-z]{1,8}){0,2}\.py", fullmatch=True),
                        max_size=3, unique=True).map(tuple),
    files_modified=st.just(()),
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_observations, min_size=1, max_size=3))
def test_valid_xml_round_trips(observations):
    reply = classify("\n".join(o.to_xml() for o in observations))
    assert reply == Reply(kind="observations", observations=tuple(observations))


@pytest.mark.parametrize("text", [
    "<title" + " " * 200_000, ("<title " + "a" * 50) * 4000, "&" * 300_000,
    "<observation>" * 20_000, "You've " * 40_000,
], ids=["open-tag-spaces", "many-open-tags", "ampersands", "deep-nesting", "long-limit-ish"])
def test_pathological_replies_are_linear(text):
    start = time.perf_counter()
    assert classify(text).kind in KINDS
    assert time.perf_counter() - start < 5.0


@settings(max_examples=100)
@given(st.builds(ParsedSummary, request=_block, investigated=_block, learned=_block,
                 completed=_block, next_steps=_block.filter(bool)))
def test_valid_summary_round_trips(summary):
    assert classify(summary.to_xml()) == Reply(kind="summary", summary=summary)


def test_to_new_links_the_events():
    obs = classify(obs_xml(narrative="n")).observations[0]
    new = obs.to_new(session_id="s", project="/p", source_event_ids=[3, 4], supersedes=[1])
    assert (new.type, new.title, new.narrative, new.backend) == ("change", "Edited x.py", "n",
                                                                  "ai")
    assert (new.source_event_ids, new.supersedes) == ((3, 4), (1,))
    summary = ParsedSummary(request="r").to_new(session_id="s", project="/p")
    assert (summary.session_id, summary.request, summary.learned) == ("s", "r", "")
