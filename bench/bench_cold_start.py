"""Cold SessionStart: the memory a session gets when no worker answers (issue 13).

    python bench/bench_cold_start.py            # print the report
    python bench/bench_cold_start.py --write    # ... and update BENCHMARKS.md

Part 1, hooks as processes, in a temporary data directory holding ``--observations``
(10,000) observations, 3 summaries and a pending session of the benchmark's project; a
worker is started once so it writes the project's snapshot, then stopped. Interleaved in
one run, ``--runs`` times each:

* the floor: ``/usr/bin/python3 -I -S -c pass``;
* SessionStart, worker up (warm), for comparison;
* SessionStart, worker DOWN, the hook starting it (``MEMLITE_PYTHON`` set): it prints the
  snapshot at once; after each run the benchmark waits for that worker and stops it;
* SessionStart with no worker able to run (venv still building, no ``MEMLITE_PYTHON``),
  30 tool events of another session in the spool: snapshot + spool re-packed.

Every run's output is checked for the newest observation's title ("memory printed").

Part 2, with the Claude Code CLI bundled with claude-agent-sdk (skipped when missing),
offline against ``tests/e2e/fake_anthropic.py``: a fresh HOME; ``claude plugin marketplace
add`` + ``claude plugin install`` of this repository; the plugin venv is "being built"
(its lock is held, so no worker can run); session 1; session 2. Time from the start of
the install to session 2's first model request carrying session 1's memory.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_hooks import BARE, HOOK, free_port, memlite, ms, p95, populate  # noqa: E402
from benchmarks_md import write_section  # noqa: E402

from memlite import storage  # noqa: E402
from memlite.hooks import snapshot  # noqa: E402
from memlite.project import resolve_project  # noqa: E402

SECTION = "## Cold SessionStart (issue 13)"
TARGET_P50_MS = 100
NEWEST = "edited module {} of the parser"


def seed_extra(data_dir: Path, project: str) -> None:
    """3 summaries and a session with pending tool events (the raw layer)."""
    conn = storage.connect(data_dir)
    with conn:
        storage.start_session(conn, session_id="bench-raw", project=project)
        for i in range(3):
            storage.insert_summary(conn, storage.NewSummary(
                session_id=f"bench-{i}", project=project, request=f"fix parser bug {i}",
                completed="fixed and tested"))
        for i in range(20):
            storage.insert_event(conn, session_id="bench-raw", event_name="PostToolUse",
                                 tool_name="Read", tool_use_id=f"raw-{i}",
                                 payload={"tool_input": {"file_path": f"{project}/r{i}.py"}})
    conn.close()


def session_start(cwd: str, i: int) -> bytes:
    return json.dumps({"session_id": f"cold-{i}", "hook_event_name": "SessionStart",
                       "cwd": cwd, "source": "startup"}).encode()


def spool_session(env: dict[str, str], cwd: str) -> None:
    for i in range(30):
        payload = {"session_id": "spooled-one", "hook_event_name": "PostToolUse", "cwd": cwd,
                   "tool_name": "Edit", "tool_use_id": f"spooled-{i}",
                   "tool_input": {"file_path": f"{cwd}/spooled_{i}.py"}}
        subprocess.run([BARE, "-I", "-S", str(HOOK), "PostToolUse"], env=env,
                       input=json.dumps(payload).encode(), capture_output=True, check=True)


def run(argv: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run(argv, input=stdin, env=env, capture_output=True).stdout
    seconds = time.perf_counter() - started
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
    return seconds, context


def wait_worker_then_stop(env: dict[str, str], data_dir: Path) -> None:
    deadline = time.monotonic() + 60
    while not (data_dir / "worker.pid").exists():
        if time.monotonic() > deadline:
            raise SystemExit("the worker the hook started never became ready")
        time.sleep(0.02)
    memlite(env, "worker", "stop")


def measure_hooks(args: argparse.Namespace, base: Path) -> dict:
    data_dir, project_dir = base / "data", base / "project"
    (project_dir / ".git").mkdir(parents=True)
    info = resolve_project(str(project_dir))
    root = info.root if info else str(project_dir)
    populate(data_dir, root, args.observations)
    seed_extra(data_dir, root)
    newest = NEWEST.format(args.observations - 1)
    env = {**os.environ, "MEMLITE_DATA_DIR": str(data_dir), "MEMLITE_PYTHON": sys.executable,
           "MEMLITE_WORKER_PORT": str(free_port()), "MEMLITE_OBSERVER": "rules",
           "MEMLITE_EMBEDDER": "none"}
    building = {k: v for k, v in env.items() if k != "MEMLITE_PYTHON"}
    memlite(env, "worker", "start")
    deadline = time.monotonic() + 60
    while newest not in ((snapshot.read(data_dir, root) or {}).get("text") or ""):
        if time.monotonic() > deadline:
            raise SystemExit("the worker wrote no snapshot")
        time.sleep(0.05)
    rows: dict[str, list[float]] = {}
    printed: dict[str, int] = {}
    chars: dict[str, int] = {}
    labels = ("floor", "up", "down", "building")
    inproc: dict[str, list[float]] = {"snapshot": [], "spool": []}
    try:
        for i in range(args.runs + 2):
            for label in labels:
                if label == "floor":
                    seconds, context = run([BARE, "-I", "-S", "-c", "pass"], b"", env)
                elif label == "up":
                    seconds, context = run([BARE, "-I", "-S", str(HOOK), "SessionStart"],
                                           session_start(str(project_dir), i), env)
                    memlite(env, "worker", "stop")
                elif label == "down":
                    seconds, context = run([BARE, "-I", "-S", str(HOOK), "SessionStart"],
                                           session_start(str(project_dir), 1000 + i), env)
                    wait_worker_then_stop(env, data_dir)
                else:
                    spool_session(building, str(project_dir))
                    seconds, context = run([BARE, "-I", "-S", str(HOOK), "SessionStart"],
                                           session_start(str(project_dir), 2000 + i),
                                           building)
                    assert "spooled_29.py" in context, context[-500:]
                    if i >= 2:
                        started = time.perf_counter()
                        snapshot.fallback_context(str(data_dir), str(project_dir), {})
                        inproc["spool"].append(time.perf_counter() - started)
                    shutil.rmtree(data_dir / "spool", ignore_errors=True)
                    memlite(env, "worker", "start")  # for the next "up" row
                if label == "down" and i >= 2:
                    started = time.perf_counter()
                    snapshot.fallback_context(str(data_dir), str(project_dir), {})
                    inproc["snapshot"].append(time.perf_counter() - started)
                if i < 2:
                    continue  # warm-up
                rows.setdefault(label, []).append(seconds)
                printed[label] = printed.get(label, 0) + (newest in context)
                chars[label] = len(context)
    finally:
        subprocess.run([sys.executable, "-m", "memlite", "worker", "stop"], env=env,
                       capture_output=True, timeout=60)
    return {"rows": rows, "printed": printed, "chars": chars, "inproc": inproc}


def measure_install(base: Path) -> dict | None:
    """Part 2 (see the module docstring); None when the bundled CLI is missing."""
    import claude_agent_sdk

    claude = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if not (claude.is_file() and os.access(claude, os.X_OK)):
        return None
    e2e = ROOT / "tests" / "e2e"
    home, project, data_dir = base / "home", base / "work" / "greeter", base / "memlite-data"
    (project / ".git").mkdir(parents=True)
    (project / "hello.py").write_text('print("hello")\n')
    home.mkdir()
    script = {"s1": [{"tool": "Read", "input": {"file_path": str(project / "hello.py")}},
                     {"text": "Read hello.py."}],
              "s2": [{"text": "ok"}]}
    (base / "script.json").write_text(json.dumps(script))
    port_file, log = base / "api.port", base / "api.jsonl"
    api = subprocess.Popen([sys.executable, str(e2e / "fake_anthropic.py"), "--script",
                            str(base / "script.json"), "--log", str(log), "--port-file",
                            str(port_file)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        while not port_file.exists():
            time.sleep(0.02)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
               "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port_file.read_text()}",
               "ANTHROPIC_API_KEY": "sk-ant-dummy-not-a-key",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
               "MEMLITE_DATA_DIR": str(data_dir), "MEMLITE_WORKER_PORT": str(free_port()),
               "MEMLITE_OBSERVER": "rules", "PIP_NO_INDEX": "1"}
        market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())["name"]
        plugin_data = home / ".claude" / "plugins" / "data" / f"memlite-{market}"
        plugin_data.mkdir(parents=True)
        (plugin_data / "venv.lock").write_text(f"{os.getpid()}\n")  # "building"
        started = time.time()
        for argv in (["plugin", "marketplace", "add", str(ROOT)],
                     ["plugin", "install", f"memlite@{market}"]):
            subprocess.run([str(claude), *argv], env=env, cwd=project, check=True,
                           capture_output=True, timeout=120)
        installed = time.time() - started
        for prompt in ("SCRIPT=s1 look at hello.py", "SCRIPT=s2 what did we do? (bench)"):
            subprocess.run([str(claude), "-p", prompt, "--output-format", "json",
                            "--allowedTools", "Read"], env=env, cwd=project, check=True,
                           capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
        first = None
        for line in log.read_text().splitlines():
            entry = json.loads(line)
            body = json.dumps(entry.get("body"))
            if "(bench)" in body and "<memlite-context>" in body and "hello.py" in body:
                first = entry
                break
        if first is None:
            raise SystemExit("session 2's first request carried no memory")
        at = first.get("at")
        return {"installed_s": installed, "memory_s": (at - started) if at else None,
                "worker_ran": (data_dir / "memlite.db").exists(),
                "wall_s": time.time() - started}
    finally:
        api.terminate()
        api.wait(timeout=10)


def report(args: argparse.Namespace, hooks: dict, install: dict | None) -> str:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.processor() or "?"
    names = {"floor": "`/usr/bin/python3 -I -S -c pass` (floor)",
             "up": "SessionStart, worker up",
             "down": "SessionStart, worker DOWN (prints the snapshot, starts the worker)",
             "building": "SessionStart, no worker possible (venv building): snapshot + 30 "
                         "spooled events"}
    lines = [
        SECTION, "",
        f"Measured {datetime.date.today().isoformat()} by `python bench/bench_cold_start.py "
        f"--runs {args.runs} --observations {args.observations}`: the hook as a process, wall "
        f"time from fork to exit, {args.observations:,} observations + 3 summaries + 20 "
        "pending events in the project, all rows interleaved in one run. \"Memory printed\" "
        "= the output holds the newest observation's title.", "",
        f"- Machine: `{cpu}`, {os.cpu_count()} CPUs, Python {platform.python_version()}.", "",
        "| process | p50 ms | p95 ms | memory printed | context chars | target p50 |",
        "|---|---|---|---|---|---|",
    ]
    for label, values in hooks["rows"].items():
        shown = "" if label == "floor" else f"{hooks['printed'][label]}/{len(values)}"
        target = f"<= {TARGET_P50_MS} ms" if label in ("down", "building") else ""
        lines.append(f"| {names[label]} | {ms(statistics.median(values))} | "
                     f"{ms(p95(values))} | {shown} | "
                     f"{hooks['chars'][label] if label != 'floor' else ''} | {target} |")
    inproc = hooks["inproc"]
    lines += ["", "Of that, the fallback itself (`snapshot.fallback_context`, in-process, same "
              f"run): snapshot only p50 {ms(statistics.median(inproc['snapshot']))} ms, "
              f"snapshot + 30 spooled events p50 {ms(statistics.median(inproc['spool']))} ms; "
              "the rest is the worker-down path every hook already had (interpreter start, "
              "imports, the fsync'd spool append, spawning the worker).", ""]
    if install is None:
        lines.append("Install to first memory: not measured (`--no-cli`, or the Claude Code "
                     "CLI bundled with claude-agent-sdk is missing).")
    else:
        memory = (f"{install['memory_s']:.1f} s" if install["memory_s"] is not None
                  else f"under {install['wall_s']:.1f} s")
        lines.append(
            f"Install to first memory (real Claude Code CLI, offline, fake API): `plugin "
            f"marketplace add` + `plugin install` took {install['installed_s']:.1f} s; session "
            f"2's first model request carried session 1's memory {memory} after the install "
            "began, with the plugin venv still being built (no worker had run: "
            f"{'a database existed' if install['worker_ran'] else 'no database yet'}). Before "
            "issue 13 the first memory needed the venv (~100-120 s to build) and a worker "
            "start.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--observations", type=int, default=10_000)
    parser.add_argument("--no-cli", action="store_true", help="skip part 2")
    parser.add_argument("--write", action="store_true", help=f"update {SECTION}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memlite-bench-cold-") as tmp:
        hooks = measure_hooks(args, Path(tmp) / "hooks")
        install = None if args.no_cli else measure_install(Path(tmp) / "install")
    section = report(args, hooks, install)
    print(section)
    if args.write:
        write_section(SECTION, section)
        print("updated BENCHMARKS.md", file=sys.stderr)


if __name__ == "__main__":
    main()
