"""Tokens of observer input per event, before and after the cut (characters / 4).

    python bench/bench_observer_cut.py [--budget 4000]

Columns: "raw" is the hook's stdin as JSON; "stored" is what the hook keeps
(``limits.fit``: each field at most 16 KiB), i.e. what a naive observer would be sent;
"uncut" is ``render_event`` of the stored payload with no budget (the compact
``<event>`` framing alone); "cut" is ``render_event`` with the budget (fields cut, head
and tail kept around a marker); "ratio" is cut / stored. Rows: every recorded hook
fixture of Claude Code v2.1.332, then synthetic large events of the shapes that cost the
most in real sessions. No worker, no model: pure functions.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memlite.hooks.limits import fit
from memlite.observer.prompts import DEFAULT_BUDGET, estimate_tokens, render_event

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "claude-code" \
    / "v2.1.332" / "hooks"


def synthetic() -> dict[str, dict]:
    code = "".join(f"    value_{i} = compute(value_{i - 1}, step={i})  # line {i}\n"
                   for i in range(3000))
    pytest_out = "".join(f"tests/test_m{i}.py::test_case_{i} PASSED\n" for i in range(8000))
    pytest_out += "FAILED tests/test_m1.py::test_case_1 - AssertionError\n"

    def post(tool: str, tool_input: dict, response: object) -> dict:
        return {"hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": tool_input,
                "tool_response": response}

    return {
        "Read 3,000-line file": post("Read", {"file_path": "/p/big.py"},
                                     {"type": "text", "file": {"content": code}}),
        "Bash pytest, 8,000 lines": post("Bash", {"command": "pytest -v"},
                                         {"stdout": pytest_out, "stderr": ""}),
        "Edit in a 3,000-line file": post(
            "Edit", {"file_path": "/p/big.py", "old_string": "step=1)", "new_string": "step=2)"},
            {"filePath": "/p/big.py", "originalFile": code,
             "structuredPatch": [{"lines": ["-step=1)", "+step=2)"]}]}),
        "Write 3,000-line file": post("Write", {"file_path": "/p/new.py", "content": code},
                                      {"type": "create", "filePath": "/p/new.py",
                                       "content": code}),
        "Grep, 2,000 files": post("Grep", {"pattern": "value_"},
                                  {"filenames": [f"/p/src/m{i}.py" for i in range(2000)]}),
        "WebFetch 60 KB page": post("WebFetch", {"url": "https://x.dev", "prompt": "summary"},
                                    {"result": "lorem ipsum " * 5000}),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    args = parser.parse_args()
    rows = [(p.name, json.loads(p.read_text())) for p in sorted(FIXTURES.glob("*.json"))]
    rows += list(synthetic().items())
    print(f"| event | raw | stored | uncut | cut ({args.budget}) | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    totals = [0, 0, 0, 0]
    for name, payload in rows:
        stored_payload, body = fit(payload)
        figures = [estimate_tokens(json.dumps(payload, ensure_ascii=False)),
                   estimate_tokens(body.decode("utf-8")),
                   estimate_tokens(render_event(stored_payload, budget=10**9)),
                   estimate_tokens(render_event(stored_payload, budget=args.budget))]
        totals = [a + b for a, b in zip(totals, figures, strict=True)]
        cells = " | ".join(f"{n:,}" for n in figures)
        print(f"| {name} | {cells} | {figures[3] / figures[1]:.2f} |")
    cells = " | ".join(f"{n:,}" for n in totals)
    print(f"| **all {len(rows)}** | {cells} | {totals[3] / totals[1]:.3f} |")

if __name__ == "__main__":
    main()
