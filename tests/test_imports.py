"""Every package memlite imports is declared, no private SDK name is used (issue 16), and
the SDK is not imported at all (issue 14: its import cost the worker ~37 MB).

Walks the syntax tree of every module of ``memlite/`` (imports inside functions too),
maps each third-party top-level module to the distribution that provides it (from the
installed metadata), and checks that distribution is named in pyproject.toml's
dependencies or extras. A module that is not installed here cannot be mapped, and fails
too: an import of something nobody declared or installed.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "memlite"
SDK = "claude_agent_sdk"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        specs += extra
    return {_norm(re.split(r"[\s\[<>=!~;]", spec, maxsplit=1)[0]) for spec in specs}


def imports(path: Path) -> list[tuple[str, int]]:
    """(dotted module name, line) of every absolute import in ``path``, ``from x import
    y`` also as ``x.y`` (so that a private name imported from a package is seen)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
            found += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found.append((node.args[0].value, node.lineno))
    return found


# The standard library of the running Python, plus modules of newer ones that memlite
# imports behind an ImportError fallback (hooks/snapshot.py: ``_sha2`` is 3.12's sha256).
STDLIB = frozenset(sys.stdlib_module_names) | {"_sha2"}


def undeclared(package: Path, names: set[str]) -> list[str]:
    providers = importlib.metadata.packages_distributions()
    problems = []
    for path in sorted(package.rglob("*.py")):
        for module, line in imports(path):
            top = module.split(".")[0]
            if top in STDLIB or top == "memlite" or top == "__future__":
                continue
            dists = {_norm(d) for d in providers.get(top, [])}
            if not dists & names:
                where = f"{path.relative_to(package.parent)}:{line}"
                problems.append(f"{where}: {top} (from {sorted(dists) or 'nothing installed'})")
    return sorted(set(problems))


def private_sdk(package: Path) -> list[str]:
    return sorted({f"{path.relative_to(package.parent)}:{line}"
                   for path in package.rglob("*.py") for module, line in imports(path)
                   if module.split(".")[0] == SDK
                   and any(part.startswith("_") for part in module.split(".")[1:])})


def test_every_import_is_declared():
    assert undeclared(PACKAGE, declared()) == []


def test_no_private_sdk_import():
    assert private_sdk(PACKAGE) == []


@pytest.mark.parametrize("source, problem", [
    ("import onnxruntime\n", "onnxruntime"),
    ("def f():\n    from werkzeug.exceptions import HTTPException\n", "werkzeug"),
    ("import importlib\nimportlib.import_module('tokenizers')\n", "tokenizers"),
    ("import surely_not_installed_anywhere\n", "nothing installed"),
])
def test_the_check_catches_undeclared_imports(tmp_path, source, problem):
    """The check has teeth: these imports of issue 16 fail it when not declared."""
    package = tmp_path / "memlite"
    package.mkdir()
    (package / "mod.py").write_text(source)
    found = undeclared(package, declared() - {"onnxruntime", "werkzeug", "tokenizers"})
    assert len(found) == 1 and problem in found[0]


@pytest.mark.parametrize("source", [
    "from claude_agent_sdk._errors import MessageParseError\n",
    "from claude_agent_sdk import _internal\n",
    "import claude_agent_sdk._bundled\n",
])
def test_the_check_catches_private_sdk_imports(tmp_path, source):
    package = tmp_path / "memlite"
    package.mkdir()
    (package / "mod.py").write_text(source)
    assert len(private_sdk(package)) == 1


def test_sdk_is_capped_below_its_next_minor():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    (spec,) = [d for d in project["dependencies"] if _norm(d).startswith("claude-agent-sdk")]
    floor = re.search(r">=\s*(\d+)\.(\d+)", spec)
    cap = re.search(r"<\s*(\d+)\.(\d+)", spec)
    assert floor and cap, spec
    assert (int(cap[1]), int(cap[2])) == (int(floor[1]), int(floor[2]) + 1), spec


def sdk_imports(package: Path) -> list[str]:
    return sorted({f"{path.relative_to(package.parent)}:{line}"
                   for path in package.rglob("*.py") for module, line in imports(path)
                   if module.split(".")[0] == SDK})


def test_memlite_never_imports_the_sdk():
    """The observer speaks the CLI's stream-json protocol itself (``streamjson.py``): the
    SDK's import cost the worker ~37 MB (issue 14's RSS bar). The package is still
    declared, for its bundled CLI, found with ``find_spec`` (not an import)."""
    assert sdk_imports(PACKAGE) == []


@pytest.mark.parametrize("source", [
    "import claude_agent_sdk\n",
    "def f():\n    from claude_agent_sdk import ClaudeSDKClient\n",
])
def test_the_check_catches_an_sdk_import(tmp_path, source):
    package = tmp_path / "memlite"
    package.mkdir()
    (package / "mod.py").write_text(source)
    assert len(sdk_imports(package)) == 1
