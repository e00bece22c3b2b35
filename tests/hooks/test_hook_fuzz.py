"""Hook fuzzing: the REAL hook process (``python -I -S plugin/scripts/hook.py <Event>``) fed
random and mutated payloads, with a worker up and with none (then it spools and starts
nothing: no worker Python is configured). Every run must exit 0 within 1 s, print nothing
or one hook-output JSON object, and leave no traceback on stderr.

The mutations (``bench/bench_fuzz.py``: keys dropped, wrong types, huge strings, invalid
UTF-8, truncated JSON, deep nesting, NUL, lone surrogates, random bytes, random JSON) are
applied to the captured Claude Code stdin fixtures. Modest counts here (~170 processes);
``bench/bench_fuzz.py`` runs the big campaign.
"""

from __future__ import annotations

import json

import pytest
from hookrun import worker_pids
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.bench_fuzz import hook_env, run_hook, start_worker
from bench.fuzz_mutations import EVENT_ARGS, MUTATIONS, fixtures, mutated

FIXTURES = fixtures()
EXAMPLES = 75  # per test; each is a process of ~30-60 ms
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                               max_size=4),
    max_leaves=20)
INPUTS = st.one_of(
    st.tuples(st.sampled_from(FIXTURES), st.sampled_from(sorted(MUTATIONS)),
              st.integers(0, 2**32 - 1)).map(lambda t: mutated(*t)),
    st.sampled_from(FIXTURES),  # as captured: the happy path is fuzzed alongside
    st.tuples(st.sampled_from(EVENT_ARGS), st.binary(max_size=2000)),
    st.tuples(st.sampled_from(EVENT_ARGS), _json.map(lambda v: json.dumps(v).encode())),
    st.tuples(st.sampled_from(EVENT_ARGS),
              st.fixed_dictionaries({"session_id": st.text(max_size=30),
                                     "hook_event_name": st.sampled_from(EVENT_ARGS)},
                                    optional={"cwd": st.text(), "prompt": st.text(),
                                              "tool_name": st.text(max_size=20),
                                              "tool_input": _json, "tool_response": _json})
              .map(lambda d: json.dumps(d).encode())),
)

pytestmark = pytest.mark.slow


@pytest.fixture
def up_env(data_dir):
    env = hook_env(data_dir, up=True)
    start_worker(env)
    return env  # reap_workers (conftest) stops it by pid


@pytest.fixture
def down_env(data_dir):
    return hook_env(data_dir, up=False)


def _check(env, event: str, stdin: bytes, seen: list[float]) -> None:
    problems, elapsed = run_hook(env, event, stdin)
    seen.append(elapsed)
    assert not problems, (event, stdin[:300], problems)


def test_fuzzed_payloads_with_the_worker_up(up_env, data_dir):
    seen: list[float] = []

    @SETTINGS
    @given(INPUTS)
    def one(case):
        _check(up_env, *case, seen)

    one()
    print(f"\nhook fuzz, worker up: {len(seen)} runs, max {max(seen) * 1000:.0f} ms")
    assert len(seen) >= EXAMPLES
    assert worker_pids(data_dir), "the worker died under fuzzing"


def test_fuzzed_payloads_with_the_worker_down_spool_and_start_nothing(down_env, data_dir):
    seen: list[float] = []

    @SETTINGS
    @given(INPUTS)
    def one(case):
        _check(down_env, *case, seen)

    one()
    spooled = sum(len(p.read_bytes().splitlines())
                  for p in (data_dir / "spool").glob("*.jsonl"))
    print(f"\nhook fuzz, worker down: {len(seen)} runs, max {max(seen) * 1000:.0f} ms, "
          f"{spooled} events spooled")
    assert len(seen) >= EXAMPLES
    assert not worker_pids(data_dir)


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_every_mutation_of_a_session_start_is_harmless(down_env, mutation):
    """Each mutation at least once, whatever Hypothesis drew (SessionStart: the one event
    that may print)."""
    [start] = [f for f in FIXTURES if f[1] and b'"startup"' in f[1]]
    for seed in range(2):
        _check(down_env, *mutated(start, mutation, seed), [])


def test_the_output_checker_rejects_what_it_must(tmp_path):
    """run_hook's checks can fail: a script that prints junk or a traceback is caught."""
    from bench.bench_fuzz import _output_problems

    assert _output_problems(b'{"hookSpecificOutput": {"hookEventName": "SessionStart", '
                            b'"additionalContext": "x"}}\n') == []
    assert _output_problems(b"hello\n")
    assert _output_problems(b'{"a": 1}\n')
    assert _output_problems(b'{"hookSpecificOutput": {"hookEventName": "Stop", '
                            b'"additionalContext": "x"}}\n')
    assert _output_problems(b'{"hookSpecificOutput": {"hookEventName": "SessionStart", '
                            b'"additionalContext": "x"}}\n{}\n')
