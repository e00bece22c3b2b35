"""memlite.hooks: the Claude Code hook, STANDARD LIBRARY ONLY (DESIGN §5).

``main`` (entry point), ``client`` (raw-socket HTTP/1.1), ``limits`` (cutting long fields),
``spool`` (events kept on disk while the worker is down), ``bootstrap`` (the worker's
Python: the plugin's venv). ``memlite.privacy`` does the redaction.
"""

__all__: list[str] = []
