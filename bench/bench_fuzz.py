"""Fuzzing campaigns (issue 9): schemathesis against a running worker, and the hook process
fed random and mutated payloads. The tests run small campaigns with these same functions
(``tests/http/test_schemathesis.py``, ``tests/hooks/test_hook_fuzz.py``); this script runs
big ones and reports counts and durations.

    python bench/bench_fuzz.py                      # print the section
    python bench/bench_fuzz.py --write              # ... and update BENCHMARKS.md
    python bench/bench_fuzz.py --examples 200 --hooks 1000

API campaign: the schema is loaded from the worker's own ``GET /api/openapi.json`` (with the
bearer token); each operation gets ``examples`` positive and ``examples // 2`` negative
inputs (schemathesis 4 ``as_strategy`` under Hypothesis, no shrinking: a failure is
recorded, not raised), sent over loopback with a 5 s timeout, checked with
``not_a_server_error``, ``status_code_conformance``, ``content_type_conformance`` and
``response_schema_conformance``. Left out: ``GET /api/stream`` (SSE, ends only at
shutdown) and, by schemathesis itself, the schema's own URL. Deletes are in (fuzzed ids
name nothing, or something the campaign made).

Spool campaign (issue 13, ``--spool N``, ``--only-spool``): ``bench/spool_fuzz.py``.

Hook campaign: the captured stdin fixtures mutated (keys dropped, wrong types, huge
strings, invalid UTF-8, truncated JSON, deep nesting, NUL, lone surrogates), plus random
bytes and random JSON, each fed to ``python -I -S plugin/scripts/hook.py <Event>`` with a
worker up and with none (the event is spooled, nothing is started): exit 0 within 1 s,
stdout empty or one hook-output JSON object, no traceback on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: import bench.*

from bench.benchmarks_md import BENCHMARKS, write_section  # noqa: E402
from bench.fuzz_mutations import MUTATIONS, fixtures, mutated  # noqa: E402

SECTION = "## Fuzzing (issue 9)"
HOOK = ROOT / "plugin" / "scripts" / "hook.py"
BARE = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
RESPONSE_SECONDS = 5.0
HOOK_SECONDS = 1.0
EXCLUDED = {("GET", "/api/stream")}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- a worker -------------------------------------------------------------------------------


def worker_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MEMLITE_", "CLAUDE_PLUGIN"))}
    env.update(MEMLITE_DATA_DIR=str(data_dir), MEMLITE_WORKER_PORT=str(free_port()),
               MEMLITE_PYTHON=sys.executable, MEMLITE_EMBEDDER="none",
               MEMLITE_OBSERVER="rules")
    env.update(extra)
    return env


def start_worker(env: dict[str, str]) -> dict[str, Any]:
    """Start the worker of ``env``'s data directory; its pid-file info (port, pid)."""
    result = subprocess.run([sys.executable, "-m", "memlite", "worker", "start", "--json"],
                            env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
    if result.returncode != 0:
        raise RuntimeError(f"worker did not start: {result.stderr[-2000:]}")
    return json.loads(result.stdout)


def stop_worker(data_dir: Path) -> None:
    """Stop the worker of ``data_dir`` by its pid (``memlite.spawn.stop_worker``)."""
    from memlite.spawn import stop_worker as stop

    stop(data_dir, grace=5.0)


# --- the API campaign -------------------------------------------------------------------


def api_campaign(port: int, token: str, examples: int, *, negative: int | None = None,
                 seed: int = 9) -> dict[str, Any]:
    """Fuzz every documented operation of the worker on ``port``; counts and failures."""
    import requests
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    checks = [not_a_server_error, status_code_conformance, content_type_conformance,
              response_schema_conformance]
    auth = {"Authorization": f"Bearer {token}"}
    base = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    schema = schemathesis.openapi.from_url(f"{base}/api/openapi.json", headers=auth, timeout=10)
    negative = examples // 2 if negative is None else negative
    figures: dict[str, Any] = {"operations": 0, "inputs": 0, "failures": [],
                               "statuses": Counter(), "slowest": 0.0, "server_errors": 0,
                               "unsatisfiable": [], "covered": []}
    session = requests.Session()
    current = {"mode": ""}
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) in EXCLUDED:
            continue
        figures["operations"] += 1
        figures["covered"].append((operation.method.upper(), operation.path))
        for mode, count in ((GenerationMode.POSITIVE, examples),
                            (GenerationMode.NEGATIVE, negative)):
            if count <= 0:
                continue

            @settings(max_examples=count, deadline=None, database=None, derandomize=False,
                      phases=[Phase.explicit, Phase.generate],
                      suppress_health_check=list(HealthCheck))
            @given(case=operation.as_strategy(generation_mode=mode))
            def one(case: Any) -> None:
                figures["inputs"] += 1
                label = f"{case.operation.method.upper()} {case.operation.path} ({current['mode']})"
                sent = time.monotonic()
                try:
                    response = case.call(base_url=base, session=session, headers=auth,
                                         timeout=RESPONSE_SECONDS)
                except Exception as exc:  # noqa: BLE001 - a timeout or reset is a finding
                    figures["failures"].append((label, f"{type(exc).__name__}: {exc}"[:500]))
                    return
                elapsed = time.monotonic() - sent
                figures["slowest"] = max(figures["slowest"], elapsed)
                figures["statuses"][response.status_code] += 1
                if response.status_code >= 500:
                    figures["server_errors"] += 1
                if elapsed > RESPONSE_SECONDS:
                    figures["failures"].append((label, f"took {elapsed:.2f} s"))
                try:
                    case.validate_response(response, checks=checks, headers=auth)
                except Exception as exc:  # noqa: BLE001 - recorded, not shrunk
                    figures["failures"].append(
                        (label, f"{response.status_code}: {type(exc).__name__}: "
                                f"{str(exc)[:400]}"))

            current["mode"] = mode.value
            random.seed(seed)
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # Hypothesis's own notes
                    one()
            except Unsatisfiable:  # nothing to negate: no parameters, no body
                figures["unsatisfiable"].append(f"{operation.method.upper()} {operation.path}")
    session.close()
    figures["seconds"] = time.monotonic() - started
    return figures


# --- the hook campaign ---------------------------------------------------------------------


def hook_env(data_dir: Path, *, up: bool) -> dict[str, str]:
    """The hook's environment: with ``up`` false, no worker Python (it spools only)."""
    env = worker_env(data_dir, MEMLITE_HOOK_SESSION_START_WAIT="0")
    if not up:
        env.pop("MEMLITE_PYTHON")
    return env


def run_hook(env: dict[str, str], event: str, stdin: bytes) -> tuple[list[str], float]:
    """Run the hook once; the problems found (empty: it behaved) and its duration."""
    started = time.monotonic()
    try:
        result = subprocess.run([BARE, "-I", "-S", str(HOOK), event], input=stdin, env=env,
                                capture_output=True, timeout=30, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return ["no exit within 30 s"], time.monotonic() - started
    elapsed = time.monotonic() - started
    problems = []
    if result.returncode != 0:
        problems.append(f"exit {result.returncode}")
    if elapsed > HOOK_SECONDS:
        problems.append(f"took {elapsed:.2f} s")
    if b"Traceback" in result.stderr:
        problems.append(f"traceback: {result.stderr[-300:]!r}")
    out = result.stdout
    if out:
        problems.extend(_output_problems(out))
    return problems, elapsed


def _output_problems(out: bytes) -> list[str]:
    try:
        text = out.decode("utf-8")
        lines = text.splitlines()
        value = json.loads(text)
    except ValueError as exc:
        return [f"stdout is not JSON: {exc}: {out[:200]!r}"]
    if len(lines) != 1 or not isinstance(value, dict) or set(value) != {"hookSpecificOutput"}:
        return [f"stdout is not one hook-output object: {out[:200]!r}"]
    inner = value["hookSpecificOutput"]
    if not isinstance(inner, dict) or set(inner) != {"hookEventName", "additionalContext"} \
            or inner["hookEventName"] != "SessionStart" \
            or not isinstance(inner["additionalContext"], str):
        return [f"hookSpecificOutput has the wrong shape: {out[:200]!r}"]
    return []


def hook_campaign(base: Path, count: int, *, seed: int = 9) -> dict[str, Any]:
    """``count`` mutated payloads with a worker up, as many with none; counts, durations."""
    rng = random.Random(seed)
    found = fixtures()
    figures: dict[str, Any] = {}
    for up in (True, False):
        data_dir = base / ("up" if up else "down")
        env = hook_env(data_dir, up=up)
        if up:
            start_worker(env)
        durations: list[float] = []
        failures: list[tuple[str, str]] = []
        kinds: Counter[str] = Counter()
        started = time.monotonic()
        try:
            for _ in range(count):
                mutation = rng.choice(list(MUTATIONS))
                event, stdin = mutated(rng.choice(found), mutation, rng.randrange(2**32))
                kinds[mutation] += 1
                problems, elapsed = run_hook(env, event, stdin)
                durations.append(elapsed)
                failures.extend((mutation, p) for p in problems)
        finally:
            if up:
                stop_worker(data_dir)
        durations.sort()
        figures["up" if up else "down"] = {
            "inputs": count, "failures": failures, "kinds": kinds,
            "seconds": time.monotonic() - started,
            "p50": durations[len(durations) // 2], "max": durations[-1],
            "spooled": sum(1 for _ in (data_dir / "spool").glob("*.jsonl"))
            if (data_dir / "spool").exists() else 0,
        }
    return figures


# --- the report ------------------------------------------------------------------------------


def report(args: argparse.Namespace, api: dict[str, Any], hooks: dict[str, Any]) -> str:
    import schemathesis

    version = getattr(schemathesis, "__version__", "?")
    statuses = ", ".join(f"{code}: {n}" for code, n in sorted(api["statuses"].items()))
    lines = [
        SECTION, "",
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}, schemathesis {version} "
        f"(`bench/bench_fuzz.py --examples {args.examples} --hooks {args.hooks}`). "
        "Pass/fail versions of both campaigns, smaller, run in `make test` "
        "(`tests/http/test_schemathesis.py`, `tests/hooks/test_hook_fuzz.py`).", "",
        "| campaign | inputs | failures | duration | notes |",
        "|---|---:|---:|---:|---|",
        f"| API (schemathesis, {api['operations']} operations, {args.examples} positive + "
        f"{args.examples // 2} negative each) | {api['inputs']:,} | {len(api['failures'])} | "
        f"{api['seconds']:.1f} s | 5xx: {api['server_errors']}; slowest response "
        f"{api['slowest'] * 1000:.0f} ms |",
    ]
    for key, label in (("up", "worker up"), ("down", "worker down, spooling")):
        h = hooks[key]
        lines.append(
            f"| hook process, {label} | {h['inputs']:,} | {len(h['failures'])} | "
            f"{h['seconds']:.1f} s | p50 {h['p50'] * 1000:.0f} ms, max {h['max'] * 1000:.0f} ms"
            f"{', spool files: ' + str(h['spooled']) if key == 'down' else ''} |")
    lines += ["", f"API statuses: {statuses}. `GET /api/stream` (SSE) is not fuzzed.",
              "Checks: not_a_server_error, status_code_conformance, content_type_conformance, "
              "response_schema_conformance, response within 5 s. Hook checks: exit 0 within "
              "1 s, stdout empty or one `hookSpecificOutput` object, no traceback.",
              "Hook mutations: " + ", ".join(sorted(MUTATIONS)) + "."]
    failures = api["failures"] + [f for key in ("up", "down") for f in hooks[key]["failures"]]
    if failures:
        lines += ["", "Failures (first 10):", ""]
        lines += [f"- {label}: {problem[:200]}" for label, problem in failures[:10]]
    return "\n".join(lines) + "\n"


SPOOL_SECTION = "## Spool fuzzing, worker down (issue 13)"


def spool_report(args: argparse.Namespace, found: dict[str, Any],
                 floor: dict[str, Any]) -> str:
    """The spool campaign's section, beside its floor (unmutated payloads, same run)."""
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(found["kinds"].items()))
    rows = []
    for mutation, where in sorted(found["by_kind"].items()):
        rows.append(f"| {mutation} | {found['kinds'][mutation]} | {sum(where.values())} | "
                    f"{where['stored']} | {where['quarantined']} | {where['lost']} |")
    per = found["drain_seconds"] / max(found["spooled_lines"], 1) * 1000
    floor_per = floor["drain_seconds"] / max(floor["spooled_lines"], 1) * 1000
    lines = [
        SPOOL_SECTION, "",
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()} (`bench/bench_fuzz.py --only-spool "
        f"--spool {args.spool}`; `tests/test_spool_fuzz.py` runs 36 in CI). The real hook "
        "process spools each payload with the worker down; then one `drain_spool` runs "
        "over a real database. Permission denied and a dead mount are simulated in the "
        "drain's project resolver (EACCES; a stat that never returns), the rest is real.",
        "",
        f"**{found['count']:,} payloads, {len(found['expected']):,} the hook can read: "
        f"{found['stored']:,} stored, {found['quarantined']:,} quarantined with their "
        f"reason, {len(found['lost'])} lost; spool files left after the drain: "
        f"{len(found['left'])}; drain complete: {found['drain'].complete}; hook "
        f"failures: {len(found['problems'])}.**", "",
        "| mutation | payloads | readable | stored | quarantined | lost |",
        "|---|---:|---:|---:|---:|---:|", *rows, "",
        "| run | spooled lines | hook p50 | hook max | drain | per line |",
        "|---|---:|---:|---:|---:|---:|",
        f"| fuzzed | {found['spooled_lines']:,} | {found['hook_p50'] * 1000:.0f} ms | "
        f"{found['hook_max'] * 1000:.0f} ms | {found['drain_seconds']:.1f} s | "
        f"{per:.1f} ms |",
        f"| floor: captured payloads unchanged | {floor['spooled_lines']:,} | "
        f"{floor['hook_p50'] * 1000:.0f} ms | {floor['hook_max'] * 1000:.0f} ms | "
        f"{floor['drain_seconds']:.1f} s | {floor_per:.1f} ms |", "",
        f"Quarantine reasons: {dict(found['reasons']) or 'none'} (a field of the wrong "
        "type, which the worker refuses live too). Each dead-mount path costs one "
        "`PROJECT_TIMEOUT` (0.5 s here, 2 s in the worker), then is not examined again "
        f"for 10 minutes. Mix: {kinds}.",
    ]
    return "\n".join(lines) + "\n"


def spool_main(args: argparse.Namespace) -> int:
    from bench.spool_fuzz import PLAIN, spool_campaign

    floor = spool_campaign(args.base, max(args.spool // 10, 20), mutations=PLAIN)
    found = spool_campaign(args.base, args.spool)
    section = spool_report(args, found, floor)
    print(section)
    if args.write:
        write_section(SPOOL_SECTION, section)
        print(f"updated {BENCHMARKS}", file=sys.stderr)
    return 1 if found["lost"] or found["left"] or found["problems"] else 0


def main(args: argparse.Namespace) -> int:
    if args.only_spool:
        return spool_main(args)
    base = args.base
    env = worker_env(base / "api")
    info = start_worker(env)
    try:
        token = (base / "api" / "token").read_text().strip()
        api = api_campaign(info["port"], token, args.examples)
    finally:
        stop_worker(base / "api")
    print(f"API: {api['inputs']} inputs, {len(api['failures'])} failures, "
          f"{api['seconds']:.1f} s", file=sys.stderr)
    hooks = hook_campaign(base / "hooks", args.hooks)
    section = report(args, api, hooks)
    print(section)
    if args.write:
        write_section(SECTION, section)
        print(f"updated {BENCHMARKS}", file=sys.stderr)
    return spool_main(args) if args.spool else 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200,
                        help="positive inputs per API operation (half as many negative)")
    parser.add_argument("--hooks", type=int, default=500,
                        help="hook inputs with the worker up (as many with it down)")
    parser.add_argument("--spool", type=int, default=1000,
                        help="spool campaign payloads with the worker down (0: none)")
    parser.add_argument("--only-spool", action="store_true",
                        help="run only the spool campaign (issue 13)")
    parser.add_argument("--write", action="store_true",
                        help=f"update {SECTION} and {SPOOL_SECTION}")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_args()
    with tempfile.TemporaryDirectory(prefix="memlite-fuzz-", dir=ROOT / "bench") as tmp:
        arguments.base = Path(tmp)
        sys.exit(main(arguments))
