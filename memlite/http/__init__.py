"""memlite.http: see DESIGN.md §2 (filled in by later issues)."""

__all__: list[str] = []
