"""Each package's public surface is its sorted ``__all__``, and every name in it exists."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "memlite",
    "memlite.actors",
    "memlite.actors.spooler",
    "memlite.config",
    "memlite.embed",
    "memlite.errors",
    "memlite.hooks",
    "memlite.hooks.spool",
    "memlite.http",
    "memlite.mcp",
    "memlite.settings_spec",
    "memlite.storage",
    "memlite.storage.filters",
    "memlite.storage.fts_lists",
    "memlite.storage.search",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_complete(name):
    module = importlib.import_module(name)
    exported = module.__all__
    assert exported == sorted(exported), f"{name}.__all__ is not sorted"
    missing = [item for item in exported if not hasattr(module, item)]
    assert not missing, f"{name}.__all__ names missing attributes: {missing}"


def test_errors_tree_matches_its_docstring():
    from memlite import errors

    for item in errors.__all__:
        assert item in errors.__doc__, f"{item} is not drawn in errors.py's docstring"
        assert issubclass(getattr(errors, item), errors.MemliteError)
    assert issubclass(errors.AskTimeout, TimeoutError)
