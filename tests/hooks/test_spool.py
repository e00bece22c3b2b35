"""The hook spool file format and its claim/read/reject helpers (standard library only)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memlite.hooks import spool
from memlite.hooks.spool import BadLine, SpoolRecord

REPO = Path(__file__).resolve().parent.parent.parent
PAYLOAD = {"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_use_id": "toolu_1", "tool_input": {"command": "echo é"}}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_append_writes_one_versioned_line_privately(data_dir):
    path = spool.append(data_dir, "PostToolUse", PAYLOAD, now_ms=1_700_000_000_123)
    assert path.parent == data_dir / "spool"
    assert path.name == f"20231114-{os.getpid()}.jsonl"
    assert (mode(path.parent), mode(path)) == (0o700, 0o600)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and text.count("\n") == 1
    assert json.loads(text) == {"v": 1, "event": "PostToolUse", "payload": PAYLOAD,
                                "spooledAt": 1_700_000_000_123}


def test_appends_accumulate_one_line_each(data_dir):
    for i in range(3):
        spool.append(data_dir, "Stop", {"session_id": "s1", "i": i}, now_ms=1000 + i)
    (path,) = (data_dir / "spool").iterdir()
    lines = path.read_text().splitlines()
    assert [json.loads(line)["payload"]["i"] for line in lines] == [0, 1, 2]


def test_claim_renames_and_read_parses(data_dir):
    spool.append(data_dir, "PostToolUse", PAYLOAD, now_ms=5)
    (claimed,) = spool.claim(data_dir)
    assert claimed.suffix == ".draining"
    assert not list((data_dir / "spool").glob("*.jsonl"))
    (record,) = spool.read_claimed(claimed)
    assert isinstance(record, SpoolRecord)
    assert (record.event, record.payload, record.spooled_at, record.source, record.line) == (
        "PostToolUse", PAYLOAD, 5, claimed.name, 1)


def test_a_claimed_file_left_by_a_crash_is_claimed_again(data_dir):
    spool.append(data_dir, "Stop", {"session_id": "s1"})
    first = spool.claim(data_dir)
    spool.append(data_dir, "Stop", {"session_id": "s2"})  # after the claim: a new file
    second = spool.claim(data_dir)
    assert set(first) < set(second) and len(second) == 2


def test_nothing_to_claim(data_dir):
    assert spool.claim(data_dir) == []
    assert list(spool.iter_spool(data_dir)) == []


def test_quarantine_files_are_never_claimed(data_dir):
    spool.append(data_dir, "Stop", {"session_id": "s1"})
    (claimed,) = spool.claim(data_dir)
    (record,) = spool.read_claimed(claimed)
    spool.reject(data_dir, record, "because", now_ms=7)
    (data_dir / "spool" / "rejected.jsonl").write_text(  # written by an older memlite
        '{"v":1,"rejectedAt":5,"reason":"old","source":"x.jsonl","line":2,"raw":"{"}\n')
    assert spool.claim(data_dir) == [claimed]
    kept = json.loads((data_dir / "spool" / spool.QUARANTINE_FILE).read_text())
    assert kept == {"v": 1, "rejectedAt": 7, "reason": "because", "source": claimed.name,
                    "line": 1, "event": "Stop", "raw": record.raw}
    assert mode(data_dir / "spool" / spool.QUARANTINE_FILE) == 0o600
    found = spool.quarantined(data_dir)
    assert found.count == 2
    assert [e["reason"] for e in found.latest] == ["because", "old"]


def test_quarantined_when_there_is_nothing(data_dir):
    assert spool.quarantined(data_dir) == spool.Quarantine(count=0, latest=(), files=())


@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "\udc80\ud83d"])
def test_lone_surrogates_are_spooled_escaped_and_read_back(data_dir, text):
    """json.loads turns a "\\ud800" escape into a lone surrogate, which UTF-8 refuses: the
    spool used to raise, and the event was lost."""
    payload = {"session_id": "s1", "tool_response": {"stdout": text}, text: [text]}
    spool.append(data_dir, "PostToolUse", payload)
    (claimed,) = spool.claim(data_dir)
    (record,) = spool.read_claimed(claimed)
    assert record.payload == payload
    assert spool.storable(record.payload) == {
        "session_id": "s1", "tool_response": {"stdout": text.encode("utf-8", "replace").decode()},
        text.encode("utf-8", "replace").decode(): [text.encode("utf-8", "replace").decode()]}


def test_an_ordinary_payload_stays_utf8_in_the_spool(data_dir):
    spool.append(data_dir, "Stop", {"session_id": "s1", "m": "café 日本"})
    (path,) = (data_dir / "spool").iterdir()
    assert "café 日本" in path.read_text(encoding="utf-8")


def test_storable_names_what_json_cannot_store():
    assert spool.storable({"a": [float("nan"), float("inf"), -float("inf"), 1.5]}) == {
        "a": ["NaN", "Infinity", "-Infinity", 1.5]}


def test_a_hook_spooling_first_creates_a_private_data_dir(tmp_path):
    """It used to be created 0755 (mkdir's parents= ignores the mode)."""
    data_dir = tmp_path / "fresh" / ".memlite"
    old = os.umask(0o022)
    try:
        spool.append(data_dir, "Stop", {"session_id": "s1"})
    finally:
        os.umask(old)
    assert mode(data_dir) == 0o700
    assert mode(data_dir / "spool") == 0o700


def write_raw(data_dir: Path, name: str, data: bytes) -> Path:
    directory = data_dir / "spool"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(data)
    return path


def good_line(i: int) -> bytes:
    record = {"v": 1, "event": "Stop", "payload": {"session_id": "s", "i": i}, "spooledAt": i}
    return json.dumps(record).encode() + b"\n"


def test_a_torn_last_line_is_a_bad_line_and_the_rest_is_read(data_dir, caplog):
    write_raw(data_dir, "20240101-1.jsonl", good_line(1) + good_line(2) + b'{"v": 1, "ev')
    (claimed,) = spool.claim(data_dir)
    entries = spool.read_claimed(claimed)
    assert [type(e) for e in entries] == [SpoolRecord, SpoolRecord, BadLine]
    assert entries[2].reason.startswith("torn line") and entries[2].raw == '{"v": 1, "ev'
    assert "line 3 skipped: torn line" in caplog.text


@pytest.mark.parametrize(("line", "reason"), [
    (b"not json\n", "not JSON"),
    (b"[1, 2]\n", "not a JSON object"),
    (b'{"v": 2, "event": "Stop", "payload": {}}\n', "unknown spool version 2"),
    (b'{"v": 1, "event": "", "payload": {}}\n', "'event' must be a non-empty string"),
    (b'{"v": 1, "event": "Stop", "payload": []}\n', "'payload' must be a JSON object"),
    (b'{"v": 1, "event": "Stop", "payload": {}, "spooledAt": "x"}\n', "'spooledAt' must be"),
    (b'{"v": 1, "event": "Stop", "payload": {"a": "\xff"}}\n', "not JSON"),
    (b"[" * 100_000 + b"\n", "not JSON"),
])
def test_bad_lines_are_reported_not_raised(data_dir, line, reason):
    write_raw(data_dir, "20240101-1.jsonl", good_line(1) + line + good_line(3))
    (claimed,) = spool.claim(data_dir)
    entries = spool.read_claimed(claimed)
    assert [type(e) for e in entries] == [SpoolRecord, BadLine, SpoolRecord]
    assert entries[1].reason.startswith(reason) and entries[1].line == 2


def test_blank_lines_are_ignored(data_dir):
    write_raw(data_dir, "20240101-1.jsonl", good_line(1) + b"\n  \n" + good_line(2))
    (claimed,) = spool.claim(data_dir)
    assert [e.payload["i"] for e in spool.read_claimed(claimed)] == [1, 2]


def test_a_writer_does_not_glue_onto_a_torn_line(data_dir):
    path = write_raw(data_dir, f"20231114-{os.getpid()}.jsonl", b'{"torn')
    spool.append(data_dir, "Stop", {"session_id": "s1"}, now_ms=1_700_000_000_000)
    (claimed,) = spool.claim(data_dir)
    assert claimed.name.startswith(path.stem + ".")
    entries = spool.read_claimed(claimed)
    assert [type(e) for e in entries] == [BadLine, SpoolRecord]


def test_a_file_claimed_while_the_writer_waits_for_its_lock_is_not_written(data_dir,
                                                                           monkeypatch):
    """The race the lock closes: the drain renames the file between open and write."""
    spool.append(data_dir, "Stop", {"session_id": "s0"}, now_ms=1_700_000_000_000)
    real_flock = spool.fcntl.flock
    claimed: list[Path] = []

    def flock(fd, op):
        if not claimed:
            claimed.extend(spool.claim(data_dir))  # the drain wins the race
        return real_flock(fd, op)

    monkeypatch.setattr(spool.fcntl, "flock", flock)
    path = spool.append(data_dir, "Stop", {"session_id": "s1"}, now_ms=1_700_000_000_000)
    monkeypatch.setattr(spool.fcntl, "flock", real_flock)
    assert path.exists() and path.suffix == ".jsonl"
    assert [e.payload["session_id"] for e in spool.read_claimed(claimed[0])] == ["s0"]
    assert [json.loads(x)["payload"]["session_id"] for x in path.read_text().splitlines()] \
        == ["s1"]


def test_finish_removes_the_file(data_dir):
    spool.append(data_dir, "Stop", {"session_id": "s1"})
    (claimed,) = spool.claim(data_dir)
    spool.finish(claimed)
    spool.finish(claimed)  # idempotent
    assert list((data_dir / "spool").iterdir()) == []


def test_the_spool_module_imports_only_the_standard_library():
    code = ("import sys, memlite.hooks.spool; "
            "print(sorted({m.split('.')[0] for m in sys.modules} "
            "- set(sys.stdlib_module_names) - {'memlite', '__main__'}))")
    result = subprocess.run([sys.executable, "-S", "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=30)
    assert (result.returncode, result.stdout, result.stderr) == (0, "[]\n", "")


def test_all_is_sorted_and_complete():
    assert spool.__all__ == sorted(spool.__all__)
    assert all(hasattr(spool, name) for name in spool.__all__)
