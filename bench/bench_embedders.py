"""Embedder cost, each model in a fresh process: load time, peak resident memory, and the
latency of embedding one query (what every semantic or hybrid search pays).

    python bench/bench_embedders.py            # Markdown to stdout
    python bench/bench_embedders.py --write    # ... and update BENCHMARKS.md

Models: ``minilm`` (memlite's int8-in-memory copy, the default), ``minilm-shipped`` (the
registry file run as is: ONNX Runtime unfolds its weights to float32), ``wordllama``.
Peak RSS is the process's high-water mark (``VmHWM`` on Linux, ``ru_maxrss`` elsewhere)
after the load and the timed queries, so it includes Python, numpy and the runtime. The
floor is a process that imports nothing but those measurement helpers, in the same run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks_md import write_section  # noqa: E402

SECTION = "## Embedders (issue 14)"
QUERIES = ["what lock do we currently use to stop two billing cycles running at once",
           "why were users billed twice", "webhook retry", "src/api/client.ts timeout",
           "how does the dashboard receive live metrics now"]

CHILD = r"""
import json, resource, statistics, sys, time
name = sys.argv[1]
t0 = time.perf_counter()
if name == "floor":
    model = None
elif name == "minilm-shipped":
    from memlite.embed.minilm import MiniLMEmbedder
    model = MiniLMEmbedder(prepare=False)
else:
    from memlite.embed import load_embedder
    model = load_embedder(name)
load = time.perf_counter() - t0
times = []
if model is not None:
    for text in QUERIES:
        model.embed([text])
    for _ in range(6):
        for text in QUERIES:
            t = time.perf_counter()
            model.embed([text])
            times.append(time.perf_counter() - t)
import os
if os.path.exists("/proc/self/status"):  # VmHWM is reset at exec; ru_maxrss is not
    peak = int([x for x in open("/proc/self/status") if x.startswith("VmHWM")][0].split()[1])
    peak /= 1024
else:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak = peak / 1024 / 1024 if sys.platform == "darwin" else peak / 1024
print(json.dumps({"name": getattr(model, "name", "-"), "load": load, "peak_mb": peak,
                  "p50": statistics.median(times) if times else 0.0}))
"""


def measure(name: str) -> dict:
    code = f"QUERIES = {QUERIES!r}\n" + CHILD
    out = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True,
                         check=True, timeout=900, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(models: list[str]) -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",) * 3
    floor = measure("floor")
    rows = [(m, measure(m)) for m in models]
    lines = [
        SECTION,
        "",
        f"Measured {datetime.date.today()} on {platform.node()} ({platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}) by "
        f"`python bench/bench_embedders.py`; load average at the start {load[0]:.2f}"
        if isinstance(load[0], float) else "",
        "(a shared machine: compare the rows of one run, not runs). Each model in a fresh "
        "process: load, 5 warm-up queries, 30 timed single-query embeddings. Floor: a "
        f"process importing nothing, peak RSS {floor['peak_mb']:.0f} MB.",
        "",
        "| model | name recorded with vectors | load | query p50 | peak RSS |",
        "|---|---|---:|---:|---:|",
    ]
    for model, r in rows:
        lines.append(f"| `{model}` | `{r['name']}` | {r['load']:.2f} s | "
                     f"{r['p50'] * 1000:.2f} ms | {r['peak_mb']:.0f} MB |")
    lines += ["", "The MiniLM copy is made at its first load and cached (`memlite/embed/"
              "quantize.py`); the load time above is a cached load."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="minilm,minilm-shipped,wordllama")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    section = report([m for m in args.models.split(",") if m])
    print(section)
    if args.write:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
