"""memlite.hooks: the Claude Code hook, STANDARD LIBRARY ONLY (DESIGN §5).

``main`` (entry point), ``client`` (raw-socket HTTP/1.1), ``limits`` (cutting long fields),
``spool`` (events kept on disk while the worker is down, and their quarantine),
``storable`` (what the database accepts), ``bootstrap`` (the worker's Python: the
plugin's venv). ``memlite.privacy`` does the redaction; ``memlite.settings_spec`` reads
the settings exactly as the worker does.
"""

__all__: list[str] = []
