"""Which plain (rules) observations an AI observation replaces.

DESIGN §1: when the AI comes back, its observation of the same events supersedes the
plain one made without it. The link is a column (``superseded_by``), not a delete: the
storage sets it for every id in ``NewObservation.supersedes`` in the same transaction
that stores the new row. This module only decides the ids: a rules observation of the
same session, not already superseded, whose ``source_event_ids`` share at least one id
with the new observation's. An AI observation never supersedes another AI observation.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from memlite.storage.records import NewObservation, Observation

__all__ = ["superseded_ids", "with_supersedes"]


def superseded_ids(new: NewObservation, existing: Iterable[Observation]) -> tuple[int, ...]:
    """The ids of ``existing`` rules observations that ``new`` supersedes, ascending."""
    if new.backend == "rules" or not new.source_event_ids:
        return ()
    sources = set(new.source_event_ids)
    return tuple(sorted({
        old.id for old in existing
        if old.backend == "rules" and old.superseded_by is None
        and old.session_id == new.session_id and sources.intersection(old.source_event_ids)
    }))


def with_supersedes(new: NewObservation, existing: Iterable[Observation]) -> NewObservation:
    """``new`` with the superseded ids added to its ``supersedes`` (kept, deduplicated)."""
    ids = superseded_ids(new, existing)
    if not ids:
        return new
    return attrs.evolve(new, supersedes=tuple(sorted({*new.supersedes, *ids})))
