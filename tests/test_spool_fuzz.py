"""Issue 13, "done when": with the worker down, mutated payloads (lone surrogates, cwds
that cannot be examined, NaN, deep nesting, invalid settings...) go through the REAL hook
process into the spool, and one drain takes them all: 0 events lost, the spool empty.

A smaller run of ``bench/bench_fuzz.py --spool`` (``bench/spool_fuzz.py``): 3 payloads
per mutation here, 1,000 in the benchmark.
"""

from __future__ import annotations

import pytest

from bench.spool_fuzz import MUTATIONS, spool_campaign

pytestmark = pytest.mark.slow

# Refused by validation (a cwd that is a number...): kept in quarantine with the reason.
MAY_BE_QUARANTINED = {"wrong-types"}


def test_every_readable_event_is_stored_or_quarantined_and_the_spool_drains(tmp_path):
    found = spool_campaign(tmp_path, 3 * len(MUTATIONS), seed=7)
    assert found["problems"] == []  # every hook exited 0 without a traceback
    assert found["lost"] == []
    assert found["left"] == [] and found["drain"].complete
    assert found["stored"] + found["quarantined"] == len(found["expected"])
    assert found["spooled_lines"] >= len(found["expected"])
    assert set(found["by_kind"]) == set(MUTATIONS)  # each kind made a readable event
    for mutation, where in found["by_kind"].items():
        if mutation not in MAY_BE_QUARANTINED:
            assert set(where) == {"stored"}, (mutation, where)
    assert set(found["reasons"]) <= {"InputError"}
