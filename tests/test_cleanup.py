"""The cleanup review: each rule's verdict, strict parsing of the AI's verdicts, and the
AI path end to end over a fake CLI (real subprocesses, no network), with its fallback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlite import cleanup, storage
from memlite.observer import registry
from memlite.observer.conversation import ConversationConfig, open_conversation
from memlite.observer.governor import Governor
from memlite.storage.records import NewObservation

FAKE = Path(__file__).resolve().parent / "observer" / "fake_claude_cleanup.py"
PROJECT = "/home/dev/shop"


def add(conn, title, *, narrative="", facts=(), at=0, project=PROJECT, session="s1",
        supersedes=()):
    return storage.insert_observation(conn, NewObservation(
        session_id=session, project=project, type="change", title=title, narrative=narrative,
        facts=facts, supersedes=supersedes, at_ms=1_780_000_000_000 + at)).id


@pytest.fixture
def conn(data_dir):
    connection = storage.connect(data_dir)
    yield connection
    connection.close()


def verdicts_of(conn, project=PROJECT, limit=200):
    material = cleanup.load_review(conn, project, limit)
    return {o.id: cleanup.rule_verdict(o, material.newest) for o in material.candidates}


def test_each_rule_deletes_what_it_names_and_a_clean_observation_is_kept(conn):
    keep = add(conn, "Chose Redis for the session cache",
               narrative="Advisory locks were too slow.", facts=("p99 12 ms",), at=1)
    old_dup = add(conn, "Fixed  the webhook retry", narrative="Idempotency KEY first.", at=2)
    new_dup = add(conn, "fixed the webhook retry ", narrative="idempotency key  first.", at=3)
    old = add(conn, "Provisional: edited webhooks.py", narrative="rules text", at=4)
    better = add(conn, "Webhook handler stores the key before charging", narrative="why",
                 at=5, supersedes=(old,))
    empty_tool = add(conn, "Read src/app.py", at=6)
    empty_short = add(conn, "Edit", at=7)
    low = add(conn, "Ran tests", at=8)
    passed = add(conn, "Tests passed: pytest -q", narrative="12 passed", at=9)
    failed = add(conn, "Tests failed: test_refund (pytest)", at=10)
    with_facts = add(conn, "Ran tests", narrative="one run",
                     facts=("test_refund is flaky under load",), at=11, session="s2")
    other_project = add(conn, "fixed the webhook retry", narrative="idempotency key first.",
                        at=12, project="/home/dev/cli")
    found = verdicts_of(conn)
    assert other_project not in found
    assert {i: (v.verdict, v.reason.split(":")[0], v.by) for i, v in found.items()} == {
        keep: ("KEEP", "no rule matched", "rules"),
        old_dup: ("DELETE", "duplicate", "rules"),
        new_dup: ("KEEP", "no rule matched", "rules"),
        old: ("DELETE", "superseded", "rules"),
        better: ("KEEP", "no rule matched", "rules"),
        empty_tool: ("DELETE", "empty", "rules"),
        empty_short: ("DELETE", "empty", "rules"),
        low: ("DELETE", "low signal", "rules"),
        passed: ("DELETE", "low signal", "rules"),
        failed: ("KEEP", "no rule matched", "rules"),
        with_facts: ("KEEP", "no rule matched", "rules"),
    }
    assert found[old_dup].reason == f"duplicate: same title and narrative as newer #{new_dup}"
    assert found[old].reason == f"superseded: replaced by #{better}"


def test_a_duplicate_outside_the_window_still_counts_and_the_window_is_the_newest(conn):
    first = add(conn, "Same thing twice", narrative="n", at=1)
    add(conn, "Something else entirely", narrative="n", at=2)
    last = add(conn, "same thing twice", narrative="N", at=3)
    material = cleanup.load_review(conn, PROJECT, 1)
    assert [o.id for o in material.candidates] == [last]
    assert cleanup.rule_verdict(material.candidates[0], material.newest).verdict == "KEEP"
    older = cleanup.load_review(conn, PROJECT, 3).candidates[-1]
    assert older.id == first
    assert cleanup.rule_verdict(older, material.newest).verdict == "DELETE"


def test_verdict_parsing_is_strict():
    text = ("Sure! Here you go:\n#3 DELETE - build noise\n- #4: keep — a real fix\n"
            "#3 KEEP - second line about 3 is ignored\n#99 DELETE - not asked\n"
            "5 MAYBE - not a verdict\n**#6** **DELETE**\n")
    assert cleanup.parse_verdicts(text, [3, 4, 5, 6, 7]) == {
        3: ("DELETE", "build noise"), 4: ("KEEP", "a real fix"),
        6: ("DELETE", "no reason given")}


async def review_events(conn, data_dir, env, governor=None, batch_size=2):
    material = cleanup.load_review(conn, PROJECT, 200)
    config = ConversationConfig(data_dir=data_dir, session="cleanup",
                                system_prompt=cleanup.SYSTEM_PROMPT, cli_path=FAKE,
                                env=env, turn_timeout=10.0, connect_timeout=10.0)
    governor = governor or Governor()
    reviewer = cleanup.AIReviewer(lambda: open_conversation(config), governor,
                                  turn_timeout=10.0)
    return [e async for e in cleanup.review(material, reviewer, batch_size=batch_size)], \
        governor


async def test_ai_review_over_the_fake_cli(conn, data_dir, tmp_path):
    log = tmp_path / "fake.log"
    ids = [add(conn, title, narrative=f"about {title}", facts=("f",), at=n) for n, title in
           enumerate(["Chose Redis", "Edit noise", "An unjudged one", "More noise here"])]
    events, governor = await review_events(
        conn, data_dir, {"FAKE_CLAUDE_MODE": "ok", "FAKE_CLAUDE_LOG": str(log)})
    newest_first = ids[::-1]
    assert events[0] == ("start", {"project": PROJECT, "by": "ai", "candidates": 4})
    assert [name for name, _ in events] == ["start", "pending", "pending", "verdict",
                                            "verdict", "pending", "pending", "verdict",
                                            "verdict", "done"]
    verdicts = {d["id"]: (d["verdict"], d["reason"], d["by"])
                for name, d in events if name == "verdict"}
    assert verdicts == {
        ids[3]: ("DELETE", "routine noise with nothing learned", "ai"),
        ids[2]: ("KEEP", "no verdict", "ai"),
        ids[1]: ("DELETE", "routine noise with nothing learned", "ai"),
        ids[0]: ("KEEP", "records a real decision", "ai"),
    }
    assert [d["id"] for name, d in events if name == "pending"] == newest_first
    assert events[-1] == ("done", {"reviewed": 4, "delete": 2, "keep": 2, "by": "ai"})
    # One conversation for both batches, locked down, its tokens counted, nothing left.
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    [argv] = [entry["data"] for entry in lines if entry["kind"] == "argv"]
    assert "--tools" in argv and argv[argv.index("--tools") + 1] == ""
    assert [entry["data"]["ids"] for entry in lines if entry["kind"] == "turn"] == [
        newest_first[:2], newest_first[2:]]
    assert governor.tokens_today == (100 + 20) + (101 + 21)
    assert governor.statistics().conversations == 0
    assert registry.observer_pids(data_dir) == []
    assert storage.count_observations(conn) == 4  # review deletes nothing


async def test_ai_failure_mid_way_falls_back_to_rules_for_the_rest(conn, data_dir):
    ids = [add(conn, title, at=n) for n, title in
           enumerate(["Ran tests", "Chose Redis for the cache", "Edit", "noise one"])]
    events, _ = await review_events(conn, data_dir, {"FAKE_CLAUDE_MODE": "ok,crash"})
    names = [name for name, _ in events]
    assert names == ["start", "pending", "pending", "verdict", "verdict", "pending",
                     "pending", "notice", "verdict", "verdict", "done"]
    notice = events[7][1]
    assert notice["fallback"] == "rules" and "remaining 2 observations" in notice["message"]
    by = [(d["id"], d["by"], d["verdict"]) for name, d in events if name == "verdict"]
    assert by == [(ids[3], "ai", "DELETE"), (ids[2], "ai", "KEEP"),
                  (ids[1], "rules", "KEEP"), (ids[0], "rules", "DELETE")]
    assert events[-1][1] == {"reviewed": 4, "delete": 2, "keep": 2, "by": "ai+rules"}
    assert registry.observer_pids(data_dir) == []


async def test_a_quota_reply_pauses_the_governor_and_rules_finish(conn, data_dir):
    add(conn, "Ran tests", at=1)
    events, governor = await review_events(conn, data_dir, {"FAKE_CLAUDE_MODE": "quota"})
    assert [name for name, _ in events] == ["start", "pending", "notice", "verdict", "done"]
    assert "limit" in events[2][1]["message"]
    assert events[3][1]["by"] == "rules" and events[3][1]["verdict"] == "DELETE"
    assert governor.paused_for() > 0


async def test_a_spent_budget_means_rules_without_starting_a_cli(conn, data_dir, tmp_path):
    add(conn, "Ran tests", at=1)
    log = tmp_path / "fake.log"
    governor = Governor(daily_tokens=0)
    events, _ = await review_events(conn, data_dir, {"FAKE_CLAUDE_LOG": str(log)},
                                    governor=governor)
    assert "budget" in [d for name, d in events if name == "notice"][0]["message"]
    assert events[-1][1]["by"] == "rules"
    assert not log.exists()  # no CLI was started


async def test_a_client_that_goes_away_closes_the_review_and_its_cli_at_once(conn, data_dir):
    """Issue 17: the review's nested generator had no ``aclosing``: after a disconnect its
    conversation (a CLI process) and the governor token went back only at garbage
    collection. Now closing the stream closes them before ``aclose`` returns."""
    import contextlib as _contextlib

    from memlite.http.cleanup_api import _events

    for n in range(4):
        add(conn, f"note {n}", at=n)
    closed: list[str] = []

    @_contextlib.asynccontextmanager
    async def connect():
        try:
            yield object()  # never asked: the client leaves before the first batch's answer
        finally:
            closed.append("conversation")

    governor = Governor(concurrency=1, daily_tokens=1_000_000)
    reviewer = cleanup.AIReviewer(connect, governor)
    material = cleanup.load_review(conn, PROJECT)
    stream = _events(material, reviewer)
    assert b"event: start" in await stream.__anext__()
    assert b"event: pending" in await stream.__anext__()
    assert governor.limiter.borrowed_tokens == 1
    await stream.aclose()  # what Quart does when the client disconnects
    assert closed == ["conversation"]
    assert governor.limiter.borrowed_tokens == 0
