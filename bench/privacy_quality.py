"""Quality of the redactor on the generated corpus, beside its baselines (bench_privacy.py).

Scored per split (``dev``: tuned on; ``test``: not), per redactor:

* ``memlite``: ``memlite.privacy.clean``;
* ``memlite before issue 15``: ``memlite/privacy.py`` at ``BASELINE_COMMIT``, read from git
  (the simple baseline, in the same run);
* ``detect-secrets``: its default plugins and filters, each text scanned as a file: a
  positive is found when a line holding its secret has a finding; a near miss with any
  finding is a false positive. It detects, it does not redact: counted generously;
* ``memlite + detect-secrets``: memlite, then detect-secrets on what memlite left (a
  worker-side second pass): does it add recall, at what cost in false positives and time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "privacy"))

from generated import Sample, corpus, outcome  # noqa: E402

from memlite.privacy import clean  # noqa: E402


def baseline_module(commit: str) -> types.ModuleType | None:
    """``memlite/privacy.py`` as it was at ``commit`` (None without git)."""
    try:
        source = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:memlite/privacy.py"],
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("memlite_privacy_baseline")
    exec(compile(source, f"{commit}:memlite/privacy.py", "exec"), module.__dict__)  # noqa: S102
    return module


def _ds_lines(text: str, workdir: Path) -> list[str]:
    """The lines of ``text`` on which detect-secrets reports something, scanning it as a
    file (``scan_line`` is its ad-hoc mode, which reports every word)."""
    from detect_secrets.core.scan import scan_file  # noqa: PLC0415
    path = workdir / "sample.txt"
    path.write_text(text)
    lines = text.split("\n")
    return [lines[s.line_number - 1] for s in scan_file(str(path))
            if 0 < s.line_number <= len(lines)]


def _found_in(sample: Sample, lines: list[str]) -> bool:
    forms = {sample.secret, json.dumps(sample.secret)[1:-1], repr(sample.secret)[1:-1]}
    return any(form in line for line in lines for form in forms)


def score(split: str, redactors: dict, with_ds: bool) -> dict:
    """name -> {recall, fp_rate, tp, fn, damaged, fp, n_pos, n_neg, seconds, failures}."""
    positives, negatives = corpus(split)
    rows: dict[str, dict] = {}
    for name, func in redactors.items():
        counts: Counter[str] = Counter()
        failures = []
        started = time.process_time()
        for sample in positives + negatives:
            result = outcome(sample, func(sample.text))
            counts[result] += 1
            if result in ("fn", "damaged", "fp"):
                failures.append(f"{result}: {sample.name}")
        rows[name] = _row(counts, positives, negatives, time.process_time() - started,
                          failures)
    if with_ds:
        from detect_secrets.settings import default_settings  # noqa: PLC0415
        with default_settings(), tempfile.TemporaryDirectory() as tmp:
            for name, second in (("detect-secrets alone", False),
                                 ("memlite + detect-secrets second pass", True)):
                counts = Counter()
                failures = []
                started = time.process_time()
                for sample in positives + negatives:
                    text = clean(sample.text) if second else sample.text
                    flagged = _ds_lines(text, Path(tmp))
                    if sample.secret:
                        base = outcome(sample, text) if second else "fn"
                        result = "tp" if base == "tp" or _found_in(sample, flagged) else base
                    else:
                        changed = second and text != sample.text
                        result = "fp" if flagged or changed else "tn"
                    counts[result] += 1
                    if result in ("fn", "damaged", "fp"):
                        failures.append(f"{result}: {sample.name}")
                rows[name] = _row(counts, positives, negatives,
                                  time.process_time() - started, failures)
    return rows


def _row(counts: Counter, positives: list, negatives: list, seconds: float,
         failures: list[str]) -> dict:
    return {"recall": counts["tp"] / len(positives), "fp_rate": counts["fp"] / len(negatives),
            "tp": counts["tp"], "fn": counts["fn"], "damaged": counts["damaged"],
            "fp": counts["fp"], "n_pos": len(positives), "n_neg": len(negatives),
            "seconds": seconds, "failures": failures,
            "bytes": sum(len(s.text) for s in positives + negatives)}


def generated_scores(baseline_commit: str, with_ds: bool) -> dict:
    redactors = {"memlite": clean}
    old = baseline_module(baseline_commit)
    if old is not None:
        redactors[f"memlite before issue 15 ({baseline_commit})"] = old.clean
    return {split: score(split, redactors, with_ds) for split in ("dev", "test")}
