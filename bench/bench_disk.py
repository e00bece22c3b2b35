"""Database growth per 1,000 realistic events, before and after pruning (issue 5, item 7).

Events are the recorded Claude Code hook payloads (``tests/fixtures/claude-code``) with
varied content: Read responses carry real source files of this repository (2-40 KB),
Bash outputs vary from a line to a few KB, Edits carry real snippets. Each event is
observed by the rules backend (observation + link + done, one transaction per event, as
the session actor does), then the payloads are pruned and the file vacuumed.

Run: ``.venv/bin/python bench/bench_disk.py [events]``; prints the figures.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path

from memlite.observer import rules
from memlite.storage import connect, reads
from memlite.storage.observing import prune_events, store_observations
from memlite.storage.timestamps import now_ms
from memlite.storage.writes import insert_event

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "tests" / "fixtures" / "claude-code" / "v2.1.332" / "hooks"
SOURCES = sorted((ROOT / "memlite").rglob("*.py"))


def _template(name: str) -> dict:
    return json.loads((HOOKS / name).read_text())


def make_event(i: int, rng: random.Random, project: str) -> dict:
    source = rng.choice(SOURCES)
    text = source.read_text()
    rel = source.relative_to(ROOT)
    kind = rng.choices(["Read", "Bash", "Edit"], weights=[5, 3, 2])[0]
    if kind == "Read":
        event = _template("PostToolUse.Read.json")
        event["tool_input"] = {"file_path": f"{project}/{rel}"}
        event["tool_response"] = {"type": "text", "file": {
            "filePath": f"{project}/{rel}", "content": text,
            "numLines": text.count("\n"), "startLine": 1, "totalLines": text.count("\n")}}
    elif kind == "Bash":
        event = _template("PostToolUse.Bash.json")
        lines = text.splitlines()[: rng.randint(1, 120)]
        event["tool_input"] = {"command": f"grep -n def {rel}", "description": "find defs"}
        event["tool_response"] = {"stdout": "\n".join(lines), "stderr": "",
                                  "interrupted": False, "isImage": False}
    else:
        event = _template("PostToolUse.Read.json")
        start = rng.randint(0, max(len(text) - 400, 0))
        old = text[start:start + rng.randint(40, 400)]
        event.update(tool_name="Edit", tool_input={
            "file_path": f"{project}/{rel}", "old_string": old, "new_string": old.upper()},
            tool_response={"filePath": f"{project}/{rel}", "oldString": old,
                           "newString": old.upper()})
    event.update(session_id=f"bench-{i // 100}", cwd=project, tool_use_id=f"toolu_{i:06d}")
    return event


def size(path: Path, conn) -> int:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return path.stat().st_size


def main(count: int = 1000) -> dict[str, float]:
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        conn = connect(Path(tmp))
        db = Path(tmp) / "memlite.db"
        base = size(db, conn)
        project = "/home/dev/memlite"
        payload_bytes = 0
        for i in range(count):
            event = make_event(i, rng, project)
            payload_bytes += len(json.dumps(event))
            with conn:
                stored = insert_event(conn, session_id=event["session_id"],
                                      event_name="PostToolUse", tool_name=event["tool_name"],
                                      tool_use_id=event["tool_use_id"], payload=event)
                row = reads.get_event(conn, stored.id)
                found = rules.observe(row, project=project)
                if found:
                    store_observations(conn, [found])
                else:
                    conn.execute("UPDATE events SET status = 'skipped' WHERE id = ?",
                                 (stored.id,))
        before = size(db, conn) - base
        with conn:
            conn.execute("UPDATE events SET updated_at_epoch = 0")
        with conn:
            pruned = prune_events(conn, older_than_ms=now_ms(), limit=count,
                                  vacuum_pages=1_000_000)
        after = size(db, conn) - base
        observations = conn.execute("SELECT count(*) FROM observations").fetchall()[0][0]
        conn.close()
    return {"events": count, "raw_payload_kb": payload_bytes / 1024,
            "growth_before_kb": before / 1024, "growth_after_kb": after / 1024,
            "pruned": pruned, "observations": observations}


if __name__ == "__main__":
    figures = main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
    print(json.dumps({k: round(v, 1) if isinstance(v, float) else v
                      for k, v in figures.items()}, indent=2))
