"""Test runs in Bash commands: is this a test command, and which tests failed?

Used by the rules backend to turn a failing ``pytest``/``jest``/``go test``/``cargo
test`` into a discovery that names the failing tests. The patterns match each runner's
default console output:

=========  ===========================================  ================================
runner     line                                         name kept
=========  ===========================================  ================================
pytest     ``FAILED tests/test_x.py::test_y - Assert…``  ``tests/test_x.py::test_y``
           ``ERROR tests/test_x.py`` (collection)        ``tests/test_x.py``
jest       ``  ✕ adds numbers (3 ms)``                   ``adds numbers``
go         ``--- FAIL: TestParse (0.00s)``               ``TestParse``
cargo      ``test parser::tests::bad ... FAILED``        ``parser::tests::bad``
unittest   ``FAIL: test_y (pkg.test_x.TestX)``           ``test_y (pkg.test_x.TestX)``
=========  ===========================================  ================================
"""

from __future__ import annotations

import re

__all__ = ["MAX_NAMES", "failing_tests", "is_test_command", "runner_of"]

MAX_NAMES = 20
_RUNNERS = (
    ("pytest", r"\bpy\.?test\b|\bpython3? -m (pytest|unittest)\b|\btox\b|\bnox\b"),
    ("jest", r"\bjest\b|\bvitest\b|\bmocha\b|\b(npm|pnpm|yarn|bun)( run)? test\b"),
    ("go test", r"\bgo test\b"),
    ("cargo test", r"\bcargo (test|nextest)\b"),
    ("make", r"\bmake (test|check)\b"),
    ("other", r"\brspec\b|\bphpunit\b|\b(mvn|gradle|\./gradlew) test\b|\bctest\b"),
)
_COMPILED = tuple((name, re.compile(pattern)) for name, pattern in _RUNNERS)
_PATTERNS = (
    re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - .*)?$", re.MULTILINE),
    re.compile(r"^\s*[✕×✗]\s+(.+?)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?\s*$", re.MULTILINE),
    re.compile(r"^\s*--- FAIL: (\S+)", re.MULTILINE),
    re.compile(r"^test (\S+) \.\.\. FAILED\s*$", re.MULTILINE),
    re.compile(r"^(?:FAIL|ERROR): (\S+ \([\w.]+\))\s*$", re.MULTILINE),
)


def runner_of(command: str) -> str | None:
    """The test runner a shell command invokes (``"pytest"``, ``"jest"``…), or None."""
    for name, pattern in _COMPILED:
        if pattern.search(command):
            return name
    return None


def is_test_command(command: str) -> bool:
    """True when ``command`` runs a test suite."""
    return runner_of(command) is not None


def failing_tests(output: str) -> tuple[str, ...]:
    """The failing test names found in ``output``, in order, deduplicated, at most 20."""
    found: dict[str, None] = {}
    for pattern in _PATTERNS:
        for match in pattern.finditer(output):
            name = match.group(1).strip()
            if name and name not in ("-", "FAILED"):
                found.setdefault(name[:300], None)
    return tuple(found)[:MAX_NAMES]
