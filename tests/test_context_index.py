"""The activity index favours signal: reads collapse, one session's share is capped."""

from __future__ import annotations

import json

import pytest

from memlite.context import build_context
from memlite.context_index import Head, plan_index
from memlite.observer.rules import observe
from memlite.storage import NewObservation, connect, insert_event, insert_observation
from memlite.storage import start_session as start
from memlite.storage.reads import get_event


@pytest.fixture
def db(data_dir):
    conn = connect(data_dir)
    yield conn
    conn.close()


def _earlier_work(db, project):
    start(db, session_id="early", project=project, at_ms=1_000)
    for k, (kind, title) in enumerate((
            ("decision", "Settlement batches retry 5 times with backoff"),
            ("bugfix", "Fixed double refund when the webhook is replayed"),
            ("change", "Edited src/recon/ledger.py"))):
        insert_observation(db, NewObservation(
            session_id="early", project=project, type=kind, title=title, backend="ai",
            narrative=f"why {k}", files_modified=(f"{project}/src/recon/ledger.py",),
            at_ms=2_000 + k))


def _burst(db, project, n=2_000):
    """Trial 16's shape through the rules observer: a session of reads and searches."""
    start(db, session_id="burst", project=project, at_ms=10_000)
    with db:
        for i in range(n):
            if i % 10 == 9:
                tool, data = "Edit", {"file_path": f"{project}/src/recon/part_{i}.py",
                                      "old_string": "a", "new_string": "b"}
            elif i % 3 == 0:
                tool, data = "Grep", {"pattern": f"reconcile_{i}"}
            else:
                tool, data = "Read", {"file_path": f"{project}/src/recon/part_{i}.py"}
            stored = insert_event(db, session_id="burst", event_name="PostToolUse",
                                  tool_name=tool, tool_use_id=f"t{i}", at_ms=20_000 + i,
                                  payload={"hook_event_name": "PostToolUse", "tool_name": tool,
                                           "tool_input": data, "tool_response": {}})
            found = observe(get_event(db, stored.id), project=project)
            if found is not None:
                insert_observation(db, found)


def test_a_burst_of_reads_leaves_room_for_the_projects_decisions(db, project):
    _earlier_work(db, project)
    _burst(db, project)
    block = build_context(db, project)
    index = block.text.split("## Activity index", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in index.splitlines() if ln.startswith("- ")]
    # The decision and the fix of the earlier session are in the index ...
    assert "Settlement batches retry 5 times" in index
    assert "Fixed double refund" in index
    # ... the burst's 1,800 reads and searches are ONE line, counted over the session ...
    reads = [ln for ln in lines if "[reads, collapsed]" in ln]
    assert len(reads) == 1
    assert "read 1,200 files under src/recon/;" in reads[0]
    assert "searched 600 times" in reads[0]
    assert not any(" Read src/" in ln or "Searched for" in ln for ln in lines)
    # ... and its edits fill what the others leave (the cap only bites when others wait:
    # test_one_sessions_share_is_capped_when_others_wait), the rest one line.
    edits = [ln for ln in lines if "Edited src/recon/part_" in ln]
    assert len(lines) == 50 and len(edits) == 50 - 3 - 2
    more = [ln for ln in lines if "[more]" in ln]
    assert len(more) == 1 and "older observations of this session" in more[0]
    # The details show signal: the decision and the fix, not the burst's last reads.
    details = block.text.split("## Latest observations in full", 1)[1]
    assert "Settlement batches retry 5 times" in details
    assert "Fixed double refund" in details
    assert "Read src/recon" not in details and "Searched for" not in details
    assert len(block.text) <= 9000


def _head(i, session="s", kind="change", backend="rules", title=None):
    return Head(id=i, session_id=session, project="/p", type=kind, backend=backend,
                title=title or f"Edited src/f{i}.py", created_at=f"2026-12-02T03:{i % 60:02d}",
                files_modified_json=json.dumps([f"/p/src/f{i}.py"]), concepts_json="[]")


def test_one_session_alone_gets_the_whole_index():
    heads = [_head(i) for i in range(300, 0, -1)]
    entries = plan_index(heads, 50)
    # No other session waits: the cap is raised until the index is full; the last line
    # says how many more there are.
    assert len(entries) == 50 and all(isinstance(e, Head) for e in entries[:49])
    assert entries[49].kind == "more" and len(entries[49].items) == 300 - 49


def test_one_sessions_share_is_capped_when_others_wait():
    heads = [_head(i, "new") for i in range(300, 100, -1)] + \
        [_head(i, "old") for i in range(100, 0, -1)]
    entries = plan_index(heads, 50)
    new = [e for e in entries if isinstance(e, Head) and e.session_id == "new"]
    old = [e for e in entries if isinstance(e, Head) and e.session_id == "old"]
    assert len(new) == 25 and len(old) == 24 and len(entries) == 50
    assert [e.kind for e in entries if not isinstance(e, Head)] == ["more"]


def test_a_lone_read_stays_a_line_and_ai_reads_never_collapse():
    heads = [_head(3, kind="discovery", title="Read src/a.py"),
             _head(2, kind="discovery", backend="ai", title="Read src/b.py"),
             _head(1, kind="discovery", backend="ai", title="Read src/c.py")]
    assert plan_index(heads, 50) == heads
