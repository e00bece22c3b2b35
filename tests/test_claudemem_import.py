"""``memlite import`` of a claude-mem database, in two of claude-mem's schema shapes.

The shapes are written here from claude-mem's published schema documentation (the tables
and column names; no code of theirs): an older one keyed by ``sdk_session_id`` and
``claude_session_id`` with ``type``/``title``/``narrative`` and JSON ``facts``, and a newer
one keyed by ``content_session_id``/``memory_session_id`` whose early rows have only
``text``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from memlite import storage
from memlite.claudemem import records
from memlite.errors import InputError
from memlite.transfer import import_path

REPO = Path(__file__).resolve().parent.parent
MS = 1_764_000_000_000  # 2025-11-24
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

OLD = """
CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY, sdk_session_id TEXT UNIQUE NOT NULL,
  claude_session_id TEXT, project TEXT NOT NULL, status TEXT, created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL);
CREATE TABLE observations (id INTEGER PRIMARY KEY, sdk_session_id TEXT NOT NULL,
  claude_session_id TEXT, project TEXT NOT NULL, tool_name TEXT, title TEXT, subtitle TEXT,
  narrative TEXT, text TEXT, facts TEXT, concepts TEXT, type TEXT, files_read TEXT,
  files_modified TEXT, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
CREATE TABLE session_summaries (id INTEGER PRIMARY KEY, sdk_session_id TEXT NOT NULL,
  claude_session_id TEXT, project TEXT NOT NULL, request TEXT, investigated TEXT,
  learned TEXT, completed TEXT, next_steps TEXT, notes TEXT, created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL);
CREATE TABLE user_prompts (id INTEGER PRIMARY KEY, sdk_session_id TEXT NOT NULL,
  claude_session_id TEXT, project TEXT NOT NULL, prompt_number INTEGER,
  prompt_text TEXT NOT NULL, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
"""

NEW = """
CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY, content_session_id TEXT,
  memory_session_id TEXT, project TEXT, started_at TEXT, started_at_epoch INTEGER);
CREATE TABLE observations (id INTEGER PRIMARY KEY, memory_session_id TEXT, project TEXT,
  text TEXT, type TEXT, title TEXT, facts TEXT, created_at TEXT, created_at_epoch INTEGER);
"""


def old_db(path: Path) -> Path:
    conn = apsw.Connection(str(path))
    with conn:
        conn.execute(OLD)
        conn.execute("INSERT INTO sdk_sessions VALUES (1, 'sdk-1', 'cc-1', '/p/app', "
                     "'completed', '2025-11-24T16:00:00Z', ?)", (MS,))
        conn.execute(
            "INSERT INTO observations VALUES (1, 'sdk-1', 'cc-1', '/p/app', 'Edit', "
            "'Fixed the retry loop', 'in worker.py', 'The loop never backed off.', NULL, "
            "?, '[\"retry\"]', 'bugfix', '[\"worker.py\"]', '[\"worker.py\"]', "
            "'2025-11-24T16:01:00Z', ?)",
            (json.dumps(["backoff doubles", f"token {SECRET} was in the log"]), MS + 60_000))
        conn.execute(
            "INSERT INTO observations VALUES (2, 'sdk-1', 'cc-1', '/p/app', 'Read', "
            "'Read the config', NULL, 'Looked at settings.', NULL, 'not json, two\nlines', "
            "NULL, 'weird-type', NULL, NULL, '2025-11-24T16:02:00Z', ?)", (MS + 120_000,))
        conn.execute("INSERT INTO session_summaries VALUES (1, 'sdk-1', 'cc-1', '/p/app', "
                     "'fix retries', 'worker.py', 'no backoff', 'added backoff', 'tests', "
                     "'ask about jitter', '2025-11-24T16:05:00Z', ?)", (MS + 300_000,))
        conn.execute("INSERT INTO user_prompts VALUES (1, 'sdk-1', 'cc-1', '/p/app', 1, "
                     "'why does the worker spin?', '2025-11-24T16:00:30Z', ?)", (MS + 30_000,))
    conn.close()
    return path


def new_db(path: Path) -> Path:
    conn = apsw.Connection(str(path))
    with conn:
        conn.execute(NEW)
        conn.execute("INSERT INTO sdk_sessions VALUES (1, 'cc-9', 'mem-9', '/p/cli', "
                     "'2025-11-25T09:00:00Z', ?)", (MS // 1000 + 86_400,))  # seconds
        conn.execute("INSERT INTO observations VALUES (1, 'mem-9', '/p/cli', "
                     "'Switched the parser to a streaming reader\nIt used 2 GB before.', "
                     "NULL, NULL, NULL, '2025-11-25T09:10:00Z', NULL)")
    conn.close()
    return path


def rows(data_dir: Path, sql: str) -> list[tuple]:
    conn = storage.connect(data_dir, writer=False)
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def test_an_older_claude_mem_database_imports_once_and_redacted(data_dir, tmp_path):
    source = old_db(tmp_path / "claude-mem.db")
    before = source.read_bytes()
    report = import_path(data_dir, source)
    assert report.added == {"session": 1, "prompt": 1, "observation": 2, "summary": 1}
    assert report.bad == []
    stored = rows(data_dir, "SELECT session_id, project, type, title, facts, files_modified, "
                            "narrative FROM observations ORDER BY created_at_epoch")
    assert stored[0][:4] == ("cc-1", "/p/app", "bugfix", "Fixed the retry loop")
    facts = json.loads(stored[0][4])
    assert facts[0] == "backoff doubles" and SECRET not in facts[1]
    assert "[REDACTED:github]" in facts[1]  # claude-mem stored it; memlite does not
    assert json.loads(stored[0][5]) == ["worker.py"]
    assert stored[1][2] == "change"  # an unknown type becomes a plain change
    assert json.loads(stored[1][4]) == ["not json, two", "lines"]
    assert rows(data_dir, "SELECT learned FROM summaries") == [
        ("no backoff\n\nNotes: ask about jitter",)]
    assert rows(data_dir, "SELECT prompt_text FROM user_prompts") == [
        ("why does the worker spin?",)]
    again = import_path(data_dir, source)  # idempotent
    assert sum(again.added.values()) == 0 and again.skipped["observation"] == 2
    assert source.read_bytes() == before  # opened read-only: untouched


def test_a_newer_shape_with_text_only_rows_and_epoch_seconds(data_dir, tmp_path):
    report = import_path(data_dir, new_db(tmp_path / "claude-mem.db"))
    assert report.added["observation"] == 1 and report.bad == []
    [(sid, title, narrative, epoch)] = rows(
        data_dir, "SELECT session_id, title, narrative, created_at_epoch FROM observations")
    # The observation names the session by its memory id: it joins the Claude Code one.
    assert sid == "cc-9" and title == "Switched the parser to a streaming reader"
    assert narrative.endswith("It used 2 GB before.")
    assert rows(data_dir, "SELECT id, started_at_epoch FROM sessions") == [
        ("cc-9", MS + 86_400_000)]  # seconds read as seconds
    assert epoch == 1_764_061_800_000  # no epoch column value: from created_at


def test_other_sqlite_files_are_refused(data_dir, tmp_path):
    other = tmp_path / "other.db"
    conn = apsw.Connection(str(other))
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(InputError, match="not a claude-mem database"):
        list(records(other))
    with pytest.raises(InputError, match="not a claude-mem database"):
        import_path(data_dir, other)


def test_the_cli_imports_a_claude_mem_database(data_dir, tmp_path):
    source = old_db(tmp_path / "claude-mem.db")
    result = subprocess.run([sys.executable, "-m", "memlite", "import", str(source), "--json"],
                            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["added"]["observation"] == 2


# --- a database written by claude-mem's own code (issue 13, item 7) --------------------------

FIXTURE = REPO / "tests" / "fixtures" / "claude-mem" / "claude-mem.db"


def _git_repo(path: Path) -> str:
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return os.path.realpath(path)


def _transcript(home: Path, cwd: str) -> None:
    """A Claude Code transcript of a session in ``cwd`` (~/.claude/projects/<enc>/x.jsonl)."""
    folder = home / ".claude" / "projects" / cwd.replace("/", "-").replace(".", "-")
    folder.mkdir(parents=True)
    (folder / "0b1c.jsonl").write_text(
        json.dumps({"type": "queue-operation"}) + "\n"
        + json.dumps({"type": "user", "cwd": cwd, "sessionId": "0b1c",
                      "message": {"role": "user", "content": "hi"}}) + "\n")


@pytest.fixture
def claude_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


def test_claude_mem_projects_are_mapped_to_paths_or_reported(data_dir, tmp_path, claude_home):
    source = tmp_path / "claude-mem.db"
    shutil.copyfile(FIXTURE, source)
    notes = _git_repo(tmp_path / "code" / "notes")
    _transcript(claude_home, os.path.join(notes, "src"))  # a subfolder: its git top counts
    report = import_path(data_dir, source)
    assert report.bad == []
    mapped = report.projects.mapped
    # shop: the absolute file paths its observations carry
    assert mapped["shop"] == ("/Users/alice/code/shop", "from paths in its rows")
    # notes: only relative paths; Claude Code worked in one repository called notes
    assert mapped["notes"] == (notes, "a repository you worked in")
    # widget: nothing to go on; reported, not stored under a name nobody looks up
    assert "widget" not in mapped and report.projects.unmapped == {"widget": 3}
    assert any("project 'widget' NOT imported (3 rows)" in line
               and "--project widget=" in line for line in report.lines())
    assert rows(data_dir, "SELECT DISTINCT project FROM observations ORDER BY 1") == [
        ("/Users/alice/code/shop",), (notes,)]
    assert rows(data_dir, "SELECT id, status, project FROM sessions ORDER BY id") == [
        ("6f1c2a9e-shop-0001", "completed", "/Users/alice/code/shop"),
        ("9b7d-notes-0002", "failed", notes)]  # failed stays failed
    [(started, completed)] = rows(data_dir, "SELECT started_at_epoch, completed_at_epoch "
                                            "FROM sessions WHERE status = 'completed'")
    assert completed is not None and completed >= started  # claude-mem's completion time
    assert rows(data_dir, "SELECT type FROM observations ORDER BY created_at_epoch") == [
        ("bugfix",), ("security_alert",), ("security_note",), ("sensitive",), ("discovery",)]
    assert report.added == {"session": 2, "prompt": 3, "observation": 5, "summary": 1}


def test_a_second_import_with_project_maps_only_what_was_left_out(data_dir, tmp_path,
                                                                  claude_home):
    source = tmp_path / "claude-mem.db"
    shutil.copyfile(FIXTURE, source)
    import_path(data_dir, source)
    widget = _git_repo(tmp_path / "code" / "widget")
    report = import_path(data_dir, source, projects={"widget": widget + "/src/.."})
    assert report.projects.mapped["widget"] == (widget, "given with --project")
    assert report.projects.unmapped == {"notes": 3}  # no repository called notes here
    assert report.added == {"session": 1, "prompt": 1, "observation": 1, "summary": 1}
    assert report.skipped["observation"] == 3  # shop's were already there
    assert rows(data_dir, "SELECT status, project FROM sessions WHERE id = "
                          "'c0de-widget-0003'") == [("active", widget)]  # active stays active


def test_two_repositories_with_the_folder_name_are_ambiguous(data_dir, tmp_path, claude_home):
    source = tmp_path / "claude-mem.db"
    shutil.copyfile(FIXTURE, source)
    one = _git_repo(tmp_path / "a" / "notes")
    two = _git_repo(tmp_path / "b" / "notes")
    _transcript(claude_home, one)
    _transcript(claude_home, two)
    report = import_path(data_dir, source)
    assert report.projects.ambiguous["notes"] == sorted([one, two])
    assert report.projects.unmapped["notes"] == 3


def test_the_cli_takes_project_mappings_and_refuses_a_relative_path(data_dir, tmp_path,
                                                                    claude_home):
    source = tmp_path / "claude-mem.db"
    shutil.copyfile(FIXTURE, source)
    bad = subprocess.run([sys.executable, "-m", "memlite", "import", str(source),
                          "--project", "widget=code/widget"],
                         capture_output=True, text=True, timeout=60, cwd=REPO)
    assert bad.returncode != 0 and "absolute PATH" in bad.stderr
    assert not (data_dir / "memlite.db").exists() or rows(
        data_dir, "SELECT count(*) FROM observations") == [(0,)]
    widget = _git_repo(tmp_path / "code" / "widget")
    done = subprocess.run([sys.executable, "-m", "memlite", "import", str(source),
                           "--project", f"widget={widget}"],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert f"project 'widget' -> {widget} (given with --project)" in done.stdout
    assert "project 'notes' NOT imported (3 rows)" in done.stdout


def test_a_project_memlite_already_knows_maps_a_folder_name(data_dir, tmp_path, claude_home):
    notes = _git_repo(tmp_path / "work" / "notes")
    conn = storage.connect(data_dir)
    try:
        storage.start_session(conn, session_id="mine", project=notes, at_ms=1)
    finally:
        conn.close()
    source = tmp_path / "claude-mem.db"
    shutil.copyfile(FIXTURE, source)
    report = import_path(data_dir, source)
    assert report.projects.mapped["notes"] == (notes, "a repository you worked in")


# Read now: the data_dir fixture clears every MEMLITE_ variable.
CLAUDE_MEM_PACKAGE = os.environ.get("MEMLITE_CLAUDE_MEM_PACKAGE")
BUN = os.environ.get("MEMLITE_BUN")


@pytest.mark.skipif(not (CLAUDE_MEM_PACKAGE and BUN),
                    reason="opt-in: MEMLITE_CLAUDE_MEM_PACKAGE (an unpacked claude-mem npm "
                           "package) and MEMLITE_BUN (a bun binary); see "
                           "tests/fixtures/claude-mem/README.md")
def test_claude_mem_itself_writes_what_the_fixture_holds(data_dir, tmp_path, claude_home):
    """Re-run claude-mem's own storage code (any version) and import its database: the
    same memory comes across as from the committed fixture."""
    fresh = tmp_path / "fresh.db"
    here = FIXTURE.parent
    subprocess.run([str(BUN), str(here / "write_db.js"), str(CLAUDE_MEM_PACKAGE), str(fresh),
                    str(here / "rows.json")], env={**os.environ, "HOME": str(claude_home)},
                   check=True, capture_output=True, timeout=120)
    committed = tmp_path / "committed.db"
    shutil.copyfile(FIXTURE, committed)
    seen = []
    for source in (fresh, committed):
        lines = [json.loads(line) for line in records(source)][1:]
        seen.append(sorted((r["kind"], r.get("type"), r.get("title") or r.get("request")
                            or r.get("prompt_text") or r.get("status"), r.get("project"))
                           for r in lines))
    assert seen[0] == seen[1] and len(seen[0]) == 7  # shop: the one mapped by its paths


def test_a_worktree_name_maps_to_its_main_checkout(tmp_path):
    """claude-mem calls a worktree ``parent/child``; memlite files it under the main
    checkout, so that is where its memory must go."""
    from memlite.claudemem_projects import map_projects

    shop = _git_repo(tmp_path / "code" / "shop")
    data = {"observations": [{"project": "shop/feature-x", "files_read": '["src/a.py"]'}]}
    mapping = map_projects(data, given={}, known=[os.path.join(shop, "src")])
    assert mapping.mapped == {"shop/feature-x": (shop, "a repository you worked in")}
    assert mapping.path_of("shop/feature-x") == shop and mapping.unmapped == {}


def test_a_claude_mem_with_empty_tables_imports(data_dir, tmp_path, claude_home):
    """A claude-mem with no summaries and no prompts yet (found importing the peer's
    benchmark database: an empty table's statement is complete once executed, and the
    import failed with "cannot read ...: SQL execution never started, or has completed")."""
    import apsw

    source = tmp_path / "claude-mem.db"
    shutil.copyfile(FIXTURE, source)
    conn = apsw.Connection(str(source))
    try:
        conn.execute("DELETE FROM session_summaries; DELETE FROM user_prompts")
    finally:
        conn.close()
    report = import_path(data_dir, source)
    assert report.bad == []
    assert report.added["observation"] == 3  # shop's; notes and widget have no path here
    assert rows(data_dir, "SELECT count(*) FROM summaries") == [(0,)]
    assert rows(data_dir, "SELECT count(*) FROM user_prompts") == [(0,)]
