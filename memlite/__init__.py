"""memlite: a privacy-first memory plugin for Claude Code, built as an actor system on Trio."""

__all__ = ["__version__"]

__version__ = "0.1.0"
