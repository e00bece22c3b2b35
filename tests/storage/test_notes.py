"""Notes: "remember: X" stored with its prompt and shown first to the next session."""

from __future__ import annotations

from memlite.context import NOTE_COUNT, build_context
from memlite.storage import NewObservation, NewSummary, insert_observation
from memlite.storage import capture as capture_module
from memlite.storage.capture import record_hook_event
from memlite.storage.notes import NOTE_CONCEPT, live_notes


def _say(db, session_id, project, prompt, at):
    """A session's prompt, answered (its Stop stored)."""
    record_hook_event(db, session_id=session_id, event_name="SessionStart",
                      payload={"source": "startup", "n": at}, start=True, project=project,
                      cwd=project, at_ms=at)
    stored = record_hook_event(db, session_id=session_id, event_name="UserPromptSubmit",
                               payload={"prompt": prompt}, prompt_text=prompt,
                               project=project, cwd=project, at_ms=at + 1)
    record_hook_event(db, session_id=session_id, event_name="Stop",
                      payload={"last_assistant_message": "ok", "n": at}, at_ms=at + 2)
    return stored


def _chat_only(db, session_id, project, prompt, at):
    """A session of one prompt and no tool (its summary is chat-only)."""
    _say(db, session_id, project, prompt, at)
    with db:
        from memlite.storage import insert_summary
        insert_summary(db, NewSummary(session_id=session_id, project=project, request=prompt,
                                      completed="Noted.", at_ms=at + 2))


def _work(db, session_id, project, at, n=3):
    _say(db, session_id, project, f"fix the refund cron {session_id}", at)
    for i in range(n):
        insert_observation(db, NewObservation(
            session_id=session_id, project=project, type="change",
            title=f"Edited src/refund_{session_id}_{i}.py",
            files_modified=(f"{project}/src/refund_{session_id}_{i}.py",), backend="rules",
            at_ms=at + 10 + i))
    from memlite.storage import insert_summary
    insert_summary(db, NewSummary(session_id=session_id, project=project,
                                  request=f"fix the refund cron {session_id}",
                                  completed="fixed", at_ms=at + 50))


def _notes(db, project):
    return [n.title for n in live_notes(db, project, limit=50)]


def test_a_remembered_rule_reaches_the_next_session_after_three_work_sessions(db, project):
    _chat_only(db, "chat", project, "remember: we never deploy on Fridays", 1_000)
    for k, sid in enumerate(("w1", "w2", "w3")):
        _work(db, sid, project, 10_000 * (k + 1))
    block = build_context(db, project)
    # Its summary is pushed out by the three sessions of work (SUMMARY_COUNT = 3) ...
    assert "Noted." not in block.text
    # ... but the note is there, first, in the user's words.
    assert block.layers[0].name == "notes" and block.layers[0].items == 1
    notes_at = block.text.index("## What the user asked memlite to remember")
    assert block.text.index("We never deploy on Fridays") > notes_at
    assert notes_at < block.text.index("## Recent session summaries")
    # Shown once: not again in the index.
    assert block.text.count("We never deploy on Fridays") == 1


def test_the_note_is_a_rules_decision_linked_to_its_prompt_event(db, project):
    stored = _say(db, "s1", project, "ok, note that the ledger is append-only", 1_000)
    row = db.execute("SELECT type, backend, title, concepts, source_event_ids, narrative "
                     "FROM observations").fetchall()
    assert len(row) == 1
    kind, backend, title, concepts, sources, narrative = row[0]
    assert (kind, backend, title) == ("decision", "rules", "The ledger is append-only")
    assert NOTE_CONCEPT in concepts and str(stored.event_id) in sources
    assert narrative == "ok, note that the ledger is append-only"
    # The prompt event is left to the observer, which skips it as before.
    status = db.execute("SELECT status FROM events WHERE id = ?",
                        (stored.event_id,)).fetchall()[0][0]
    assert status == "pending"


def test_a_replayed_prompt_stores_no_second_note(db, project):
    _say(db, "s1", project, "remember: staging is read-only", 1_000)
    again = record_hook_event(db, session_id="s1", event_name="UserPromptSubmit",
                              payload={"prompt": "remember: staging is read-only"},
                              prompt_text="remember: staging is read-only", project=project,
                              at_ms=1_001)
    assert not again.created
    assert db.execute("SELECT count(*) FROM observations").fetchall()[0][0] == 1


def test_questions_and_tasks_store_no_note(db, project):
    for k, prompt in enumerate(("do you remember how the auth middleware works?",
                                "fix the bug and remember to update the changelog",
                                "forget the previous approach, use a queue")):
        _say(db, f"s{k}", project, prompt, 1_000 * (k + 1))
    assert db.execute("SELECT count(*) FROM observations").fetchall()[0][0] == 0


def test_a_later_note_on_the_same_topic_supersedes_the_older(db, project):
    _say(db, "s1", project, "remember: we never deploy on Fridays", 1_000)
    _say(db, "s2", project, "remember: we deploy on Fridays now", 2_000)
    assert _notes(db, project) == ["We deploy on Fridays now"]
    text = build_context(db, project).text
    assert "We deploy on Fridays now" in text and "never deploy" not in text


def test_a_correction_without_a_cue_supersedes_the_note(db, project):
    _say(db, "s1", project, "remember: we never deploy on Fridays", 1_000)
    _say(db, "s2", project, "we deploy on Fridays now", 2_000)
    assert _notes(db, project) == ["We deploy on Fridays now"]
    # Without a note on its topic, a "now" statement is just a prompt.
    _say(db, "s3", project, "the tests pass now", 3_000)
    assert _notes(db, project) == ["We deploy on Fridays now"]


def test_forget_drops_the_note_it_names(db, project):
    _say(db, "s1", project, "remember: we never deploy on Fridays", 1_000)
    _say(db, "s2", project, "remember: staging is read-only", 1_500)
    _say(db, "s3", project, "forget what I said about deploying on Fridays", 2_000)
    # "deploying" is not "deploy": half of the named words are enough (fridays).
    assert _notes(db, project) == ["Forget: Deploying on Fridays",
                                   "Staging is read-only"]
    text = build_context(db, project).text
    assert "We never deploy on Fridays" not in text and "Forget: Deploying" in text


def test_each_note_once_newest_first_and_bounded(db, project):
    for k in range(NOTE_COUNT + 5):
        _say(db, f"s{k}", project, f"remember: rule number {k} holds for service{k}",
             1_000 * (k + 1))
    _say(db, "again", project, "remember: rule number 3 holds for service3", 99_000)
    block = build_context(db, project)
    notes = next(layer for layer in block.layers if layer.name == "notes")
    assert notes.items == NOTE_COUNT
    assert block.text.count("Rule number 3 holds for service3") == 1
    at = [block.text.index(f"Rule number {k} holds") for k in (3, 14, 13)]
    assert at == sorted(at)  # the repeated one is the newest
    assert "Rule number 0 holds" not in block.text  # older than the newest ten


def test_a_failing_note_never_costs_the_prompt(db, project, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(capture_module, "record_note", broken)
    stored = _say(db, "s1", project, "remember: staging is read-only", 1_000)
    assert stored.created and stored.prompt_id is not None
    assert db.execute("SELECT prompt_text FROM user_prompts").fetchall() == [
        ("remember: staging is read-only",)]
    assert db.execute("SELECT count(*) FROM observations").fetchall()[0][0] == 0


def test_a_session_that_only_said_remember_is_still_chat_only(db, project):
    # Newest: the "remember" session. Its note must not make it a session of work: its
    # summary ranks after the three of work (the note has a layer of its own).
    for k, sid in enumerate(("w1", "w2", "w3")):
        _work(db, sid, project, 10_000 * (k + 1))
    _chat_only(db, "chat", project, "remember: we never deploy on Fridays", 90_000)
    from memlite.storage.ranked import ranked_summaries
    shown = [s.session_id for s in ranked_summaries(db, project, limit=3)]
    assert shown == ["w3", "w2", "w1"]
    assert build_context(db, project).text.count("never deploy on Fridays") == 1


def test_notes_are_read_without_full_text_too(db, project, monkeypatch):
    _say(db, "s1", project, "remember: staging is read-only", 1_000)
    from memlite.storage import notes
    monkeypatch.setattr(notes, "_LIVE_SQL", "SELECT x FROM no_such_table")
    assert _notes(db, project) == ["Staging is read-only"]
