"""An outside oracle for the redactor: detect-secrets over real text nobody here wrote.

    python bench/privacy_oracle.py [--mb 12] [--models 40]   # needs the ``bench`` extra

Used by ``bench/bench_privacy.py`` (which writes the figures to BENCHMARKS.md).

* Text: a fixed, deterministic sample of the venv's ``site-packages`` (source and data
  files: .py, .json, .txt, .toml, .cfg, .ini, .yaml, .md, .rst, .js, .html; up to ``--mb``
  MB, files over 1 MB left out, sampled by a hash of their path) and ``--models`` of
  botocore's service models (``service-2.json.gz``, decompressed) with their
  ``examples-1.json``: real AWS JSON, where ARNs sit under password-named keys.
* Oracle: ``detect-secrets`` (Yelp, Apache-2.0) with its default plugins and filters,
  file by file (``scan_file``): each finding is (file, line, type, value).
* memlite: ``redact`` over each file the way a tool output reaches it (chunks of at most
  2,000 lines, as the Read tool returns them), compared line by line with the input.

Counted: agreement (findings whose value memlite also removed from that line), each
disagreement class both ways with examples, and memlite's changed-line rate (lines it
changes / lines read): its false-positive rate on real code.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import hashlib
import re
import site
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memlite.privacy import redact  # noqa: E402

SUFFIXES = {".py", ".json", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".md", ".rst",
            ".js", ".html"}
MARKER = re.compile(r"\[REDACTED:([a-z_]+)\]")
CHUNK_LINES = 2000


def site_packages() -> Path:
    return Path(next(p for p in site.getsitepackages() if p.endswith("site-packages")))


def sample_files(mb: float, models: int, workdir: Path) -> list[Path]:
    """The deterministic sample: site-packages files by path hash, then botocore models."""
    root = site_packages()
    files = [p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file()
             and "botocore/data" not in str(p) and p.stat().st_size <= 1_000_000]
    files.sort(key=lambda p: hashlib.sha256(str(p.relative_to(root)).encode()).hexdigest())
    chosen, total = [], 0
    for path in files:
        if total > mb * 1e6:
            break
        chosen.append(path)
        total += path.stat().st_size
    data = root / "botocore" / "data"
    if data.is_dir():
        services = sorted(p.name for p in data.iterdir() if p.is_dir())
        step = max(1, len(services) // max(models, 1))
        for name in services[::step][:models]:
            for model in sorted((data / name).glob("*/service-2.json.gz"))[-1:]:
                out = workdir / f"botocore-{name}-service-2.json"
                out.write_bytes(gzip.decompress(model.read_bytes()))
                chosen.append(out)
                examples = model.parent / "examples-1.json"
                if examples.is_file():
                    chosen.append(examples)
    return chosen


def detect(path: Path) -> list[tuple[int, str, str]]:
    """detect-secrets' findings in one file: (line number, type, value)."""
    from detect_secrets.core.scan import scan_file  # noqa: PLC0415
    return [(s.line_number, s.type, s.secret_value or "") for s in scan_file(str(path))]


def memlite_lines(text: str) -> tuple[list[str], list[str | None]]:
    """(input lines, memlite's version of each input line; None when merged away)."""
    lines = text.split("\n")
    out: list[str | None] = []
    for start in range(0, len(lines), CHUNK_LINES):
        chunk = lines[start:start + CHUNK_LINES]
        new = redact("\n".join(chunk)).split("\n")
        if len(new) == len(chunk):
            out.extend(new)
            continue
        mapped: list[str | None] = [None] * len(chunk)  # a PEM block became one line
        matcher = difflib.SequenceMatcher(None, chunk, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            for k in range(i1, i2):
                if tag == "equal":
                    mapped[k] = new[j1 + k - i1]
                elif k - i1 < j2 - j1:
                    mapped[k] = new[j1 + k - i1]
        out.extend(mapped)
    return lines, out


def run(mb: float, models: int) -> dict:
    from detect_secrets.settings import default_settings  # noqa: PLC0415
    with tempfile.TemporaryDirectory() as tmp, default_settings():
        files = sample_files(mb, models, Path(tmp))
        root = site_packages()
        n_lines = changed = 0
        findings = agree = 0
        by_type: Counter[str] = Counter()
        agree_by_type: Counter[str] = Counter()
        missed: dict[str, list[str]] = defaultdict(list)
        extra: dict[str, list[str]] = defaultdict(list)
        extra_count: Counter[str] = Counter()
        size = 0
        ds_seconds = ml_seconds = 0.0
        for path in files:
            text = path.read_text(errors="replace")
            size += len(text)
            started = time.process_time()
            found = detect(path)
            ds_seconds += time.process_time() - started
            started = time.process_time()
            lines, mine = memlite_lines(text)
            ml_seconds += time.process_time() - started
            n_lines += len(lines)
            flagged = {number for number, _, _ in found}
            name = str(path.relative_to(root)) if path.is_relative_to(root) else path.name
            for number, kind, value in found:
                findings += 1
                by_type[kind] += 1
                line = mine[number - 1] if number - 1 < len(mine) else None
                original = lines[number - 1] if number - 1 < len(lines) else ""
                if line is None or (value and value not in line) or (
                        not value and line != original):
                    agree += 1
                    agree_by_type[kind] += 1
                elif len(missed[kind]) < 400:
                    missed[kind].append(f"{name}:{number}: {original.strip()[:160]}")
            for k, (old, new) in enumerate(zip(lines, mine, strict=False)):
                if new is not None and new == old:
                    continue
                changed += 1
                if k + 1 in flagged:
                    continue
                kinds = set(MARKER.findall(new or "")) - set(MARKER.findall(old)) or {"merged"}
                for kind in kinds:
                    extra_count[kind] += 1
                    if len(extra[kind]) < 400:
                        extra[kind].append(f"{name}:{k + 1}: {old.strip()[:160]}")
    return {"files": len(files), "bytes": size, "lines": n_lines, "changed": changed,
            "findings": findings, "agree": agree, "by_type": by_type,
            "agree_by_type": agree_by_type, "missed": missed, "extra": extra,
            "extra_count": extra_count, "ds_s": ds_seconds, "ml_s": ml_seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=12.0)
    parser.add_argument("--models", type=int, default=40)
    parser.add_argument("--examples", type=int, default=6)
    args = parser.parse_args()
    result = run(args.mb, args.models)
    print({k: v for k, v in result.items() if k not in ("missed", "extra")})
    for label, table in (("detect-secrets only", result["missed"]),
                         ("memlite only", result["extra"])):
        for kind, rows in sorted(table.items(), key=lambda kv: -len(kv[1])):
            print(f"\n## {label}: {kind} ({len(rows)})")
            for row in rows[:args.examples]:
                print("   ", row)


if __name__ == "__main__":
    main()
