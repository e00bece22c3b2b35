"""Export and import: a round trip into a fresh data directory re-exports byte for byte,
a second import adds nothing, bad lines are reported and skipped, bad files refused."""

from __future__ import annotations

import io
import json

import pytest

from memlite import storage
from memlite.cli import main
from memlite.errors import InputError
from memlite.storage.records import NewObservation, NewSummary
from memlite.transfer import export, import_lines, import_path

STAMP = "2026-11-30T00:00:00.000Z"
AT = 1_780_000_000_000


def seed(conn):
    with conn:
        storage.start_session(conn, session_id="s1", project="/p/a", project_name="a",
                              cwd="/p/a", at_ms=AT)
        storage.start_session(conn, session_id="s2", project="/p/b", at_ms=AT + 5)
        storage.insert_prompt(conn, session_id="s1", prompt_text="fix the «webhook»",
                              at_ms=AT + 1)
        old = storage.insert_observation(conn, NewObservation(
            session_id="s1", project="/p/a", type="change", title="Edited hooks.py",
            backend="rules", files_modified=("hooks.py",), at_ms=AT + 2)).id
        storage.insert_observation(conn, NewObservation(
            session_id="s1", project="/p/a", type="bugfix", title="Idempotency key first",
            narrative="Stripe retries", facts=("3 days",), concepts=("retry",),
            supersedes=(old,), at_ms=AT + 3))
        storage.insert_observation(conn, NewObservation(
            session_id="s2", project="/p/b", type="feature", title="PDF invoices",
            at_ms=AT + 6))
        storage.insert_summary(conn, NewSummary(
            session_id="s1", project="/p/a", request="Stop double charges",
            learned="retries", at_ms=AT + 4))
        storage.complete_session(conn, "s1", at_ms=AT + 9)


def dump(data_dir, project=None) -> str:
    conn = storage.connect(data_dir, writer=False)
    try:
        out = io.StringIO()
        export(conn, out, project=project, exported_at=STAMP)
        return out.getvalue()
    finally:
        conn.close()


def test_round_trip_into_a_fresh_data_dir_is_byte_identical_and_idempotent(tmp_path,
                                                                           data_dir):
    conn = storage.connect(data_dir)
    seed(conn)
    conn.close()
    text = dump(data_dir)
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0] == {"kind": "memlite-export", "version": 1, "exported_at": STAMP,
                        "project": None}
    assert [r["kind"] for r in lines[1:]] == ["session"] * 2 + ["prompt"] + \
        ["observation"] * 3 + ["summary"]
    assert lines[4]["superseded_by"] == lines[5]["content_hash"]
    export_file = tmp_path / "memory.jsonl"
    export_file.write_text(text, encoding="utf-8")

    fresh = tmp_path / "fresh"
    first = import_path(fresh, export_file)
    assert first.added == {"session": 2, "prompt": 1, "observation": 3, "summary": 1}
    assert first.bad == []
    assert dump(fresh) == text
    second = import_path(fresh, export_file)
    assert second.added == dict.fromkeys(("session", "prompt", "observation", "summary"), 0)
    assert second.skipped == {"session": 2, "prompt": 1, "observation": 3, "summary": 1}
    assert dump(fresh) == text
    conn = storage.connect(fresh, writer=False)
    try:
        assert storage.count_observations(conn) == 3
        # Imported observations are searchable (the FTS triggers ran).
        assert conn.execute("SELECT count(*) FROM observations_fts "
                            "WHERE observations_fts MATCH 'stripe'").fetchall() == [(1,)]
    finally:
        conn.close()


def test_a_project_export_holds_only_that_project(data_dir):
    conn = storage.connect(data_dir)
    seed(conn)
    conn.close()
    lines = [json.loads(line) for line in dump(data_dir, "/p/b").splitlines()]
    assert lines[0]["project"] == "/p/b"
    assert [(r["kind"], r.get("id") or r.get("title")) for r in lines[1:]] == [
        ("session", "s2"), ("observation", "PDF invoices")]


def test_bad_lines_are_reported_by_number_and_skipped(data_dir):
    header = json.dumps({"kind": "memlite-export", "version": 1})
    good = {"kind": "observation", "session_id": "s9", "project": "/p", "type": "change",
            "title": "Good one", "subtitle": "", "narrative": "n", "facts": [],
            "concepts": [], "files_read": [], "files_modified": [], "backend": "ai",
            "content_hash": "x", "superseded_by": None, "created_at": "2026-01-01T00:00:00Z",
            "created_at_epoch": 1}
    lines = [header, "{not json", json.dumps([1]), json.dumps({"kind": "alien"}),
             json.dumps({**good, "title": 5}), json.dumps({**good, "facts": [1]}),
             json.dumps({**good, "created_at_epoch": "1"}),
             json.dumps({**good, "title": "bad \ud800 text"}), "", json.dumps(good)]
    conn = storage.connect(data_dir)
    try:
        report = import_lines(conn, lines)
        assert [n for n, _ in report.bad] == [2, 3, 4, 5, 6, 7, 8]
        assert "not valid JSON" in report.bad[0][1]
        assert report.bad[3][1] == "observation: field title must be text"
        assert report.added["observation"] == 1
        assert conn.execute("SELECT title FROM observations").fetchall() == [("Good one",)]
    finally:
        conn.close()


@pytest.mark.parametrize("content, message", [
    ("", "empty"), ('{"kind": "session", "id": "s"}\n', "not a memlite export"),
    ("hello\n", "not a memlite export"),
    ('{"kind": "memlite-export", "version": 2}\n', "version 2"),
])
def test_a_file_that_is_not_an_export_is_refused_and_nothing_written(tmp_path, data_dir,
                                                                     content, message):
    path = tmp_path / "x.jsonl"
    path.write_text(content + '{"kind":"session","id":"s","status":"active",'
                    '"started_at":"t","started_at_epoch":1}\n' if content else "")
    with pytest.raises(InputError, match=message):
        import_path(data_dir, path)
    conn = storage.connect(data_dir, writer=False)
    try:
        assert conn.execute("SELECT count(*) FROM sessions").fetchall() == [(0,)]
    finally:
        conn.close()


def test_the_commands_export_and_import(tmp_path, data_dir, monkeypatch, capsys):
    conn = storage.connect(data_dir)
    seed(conn)
    conn.close()
    assert main(["export", "--project", "/p/a"]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0].startswith('{"kind":"memlite-export"')
    assert out.err == "exported 1 sessions, 1 prompts, 2 observations, 1 summaries\n"
    target = tmp_path / "a.jsonl"
    assert main(["export", "--output", str(target)]) == 0
    fresh = tmp_path / "fresh"
    monkeypatch.setenv("MEMLITE_DATA_DIR", str(fresh))
    assert main(["import", str(target), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["added"]["observation"] == 3
    target.write_text(target.read_text() + "garbage\n")
    assert main(["import", str(target)]) == 1
    shown = capsys.readouterr().out
    assert "observations: 0 added, 3 already there" in shown
    assert "line 9: not valid JSON" in shown
    assert main(["import", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_import_refuses_while_a_worker_runs_on_the_data_dir(tmp_path, data_dir, monkeypatch):
    from memlite import lifecycle

    source = tmp_path / "src"
    conn = storage.connect(source)
    seed(conn)
    conn.close()
    path = tmp_path / "x.jsonl"
    path.write_text(dump(source))
    running = lifecycle.WorkerInfo(pid=4242, port=1, started_at="2026-01-01T00:00:00+00:00",
                                   version="t")
    monkeypatch.setattr(lifecycle, "find_worker",
                        lambda where: running if where == data_dir else None)
    with pytest.raises(InputError, match="stop the worker first"):
        import_path(data_dir, path)
    assert not storage.db_path(data_dir).exists()  # not even opened
    assert import_path(tmp_path / "other", path).added["observation"] == 3
