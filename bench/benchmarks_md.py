"""Writing one benchmark's section of BENCHMARKS.md, shared by every script in bench/,
and the two figures' helpers several scripts use (``percentile``: the nearest-rank
quantile of samples; ``ms``: seconds written as ms or µs).

Each script owns one ``## <heading>`` section: ``write_section`` replaces that section (up to
the next ``## `` heading) and keeps every other one, or appends it when it is new.
"""

from __future__ import annotations

import re
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"
HEADER = """# memlite benchmarks

Figures, not pass/fail tests: each section is written by a script under `bench/` (run
`make bench`, or the script with `--write`) and says when, where and against which floor
it was measured. Absolute times on shared VMs vary by about ±30%; compare within a run.
"""


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    if seconds >= 0.001:
        return f"{seconds * 1000:.2f} ms"
    return f"{seconds * 1e6:.0f} µs" if seconds >= 10e-6 else f"{seconds * 1e6:.1f} µs"


def write_section(heading: str, section: str, path: Path = BENCHMARKS) -> None:
    """Put ``section`` (which starts with ``heading``) into ``path`` in place of the old one."""
    text = path.read_text() if path.exists() else HEADER
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    section = section.rstrip("\n") + "\n"
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text.rstrip("\n") + "\n")
