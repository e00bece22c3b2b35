"""The benchmarks' synthetic coding observations and queries (``bench_search.py`` and
the benches built on its databases; the names are also read as ``bench_search.*``).

Deterministic: the same seed gives the same rows. Words come from the standard library's
own ``.py`` files (a Zipf-like frequency, as prose has), files from each project's own
~300 paths, and the queries are 25 short keyword ones and 25 questions.
"""

from __future__ import annotations

import collections
import random
import re
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from memlite import storage

__all__ = ["EPOCH0", "TYPES", "Generator", "queries", "unit_rows", "vocabulary"]

TYPES = ["discovery", "bugfix", "feature", "change", "decision", "refactor"]
EPOCH0 = 1_735_689_600_000  # 2025-01-01, ms; observations are spread over a year after


def vocabulary(size: int = 3000) -> list[str]:
    """The ``size`` most frequent lowercase words (3-14 letters) of the stdlib's .py files."""
    counts: collections.Counter[str] = collections.Counter()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    word = re.compile(r"\b[a-z]{3,14}\b")
    for path in sorted(stdlib.glob("*.py")):
        try:
            counts.update(word.findall(path.read_text(errors="replace")))
        except OSError:
            continue
    return [w for w, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:size]]


class Generator:
    """Deterministic observations: same seed, same rows."""

    def __init__(self, words: list[str], seed: int, projects: list[str]) -> None:
        self.rng = random.Random(seed)
        self.words = words
        self.cum = list(np.cumsum([1 / (rank + 1) for rank in range(len(words))]))
        self.projects = projects
        # Each project has its own ~300 files (paths from mid-frequency words).
        self.files = {
            p: [f"src/{self.rng.choice(words[100:1500])}/{self.rng.choice(words[100:2500])}.py"
                for _ in range(300)] for p in projects
        }

    def _words(self, k: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=k)

    def observations(self, count: int, span_ms: int = 365 * 86_400_000,
                     ) -> Iterator[storage.NewObservation]:
        rng = self.rng
        session, project = None, None
        for i in range(count):
            if i % 50 == 0:  # a session: 50 observations of one project
                session, project = f"bench-s{i // 50}", rng.choice(self.projects)
            text = self._words(90)
            files = self.files[project]
            yield storage.NewObservation(
                session_id=session, project=project, type=rng.choice(TYPES),
                title=" ".join(text[:8]), subtitle=" ".join(text[8:16]),
                narrative=" ".join(text[16:60]),
                facts=[" ".join(text[60:70]), " ".join(text[70:80])],
                concepts=text[80:82],
                files_read=rng.sample(files, rng.randint(0, 3)),
                files_modified=rng.sample(files, rng.randint(1, 2)),
                backend="ai", at_ms=EPOCH0 + i * span_ms // max(count, 1),
            )


def queries(words: list[str], seed: int = 7) -> list[tuple[str, str]]:
    """~50 ``(kind, text)`` queries: 25 short keyword ones and 25 natural-language ones."""
    rng = random.Random(seed)
    mid, tail = words[40:600], words[600:2500]
    out: list[tuple[str, str]] = []
    for i in range(25):
        if i % 3 == 0:
            out.append(("short", rng.choice(mid)))
        elif i % 3 == 1:
            out.append(("short", f"{rng.choice(mid)} {rng.choice(tail)}"))
        else:
            out.append(("short", f"{rng.choice(tail)}"))
    templates = [
        "why does the {a} {b} fail when {c} is empty",
        "how did we fix the {a} bug in {b} {c}",
        "where is the {a} {b} configured for {c}",
        "what changed in {a} handling after the {b} refactor",
        "which tests cover {a} {b} and {c}",
        "the {a} {b} times out on large {c} inputs",
        "decision about {a} versus {b} for the {c} layer",
        "error raised by {a} when {b} returns none",
    ]
    for i in range(25):
        out.append(("long", templates[i % len(templates)].format(
            a=rng.choice(mid), b=rng.choice(tail), c=rng.choice(mid))))
    return out


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.standard_normal((n, dim), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows
