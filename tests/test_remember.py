"""Which prompts are explicit requests to remember or forget (``memlite.remember``).

The list below is the one the cue set was decided on: prompts a user of a memory plugin
types, the requests and the look-alikes that must not count.
"""

from __future__ import annotations

import pytest

from memlite.remember import MAX_NOTE, request

REMEMBER = [
    ("remember: we never deploy on Fridays", "We never deploy on Fridays"),
    ("Remember that the staging DB is read-only", "The staging DB is read-only"),
    ("remember this: invoices are immutable once sent", "Invoices are immutable once sent"),
    ("please remember to run make lint before committing",
     "Run make lint before committing"),
    ("don't forget: the API keys rotate on the 1st", "The API keys rotate on the 1st"),
    ("Do not forget that CI uses Python 3.11", "CI uses Python 3.11"),
    ("Don't forget to bump the schema version when you add a migration",
     "Bump the schema version when you add a migration"),
    ("note that the payments service owns the refunds table",
     "The payments service owns the refunds table"),
    ("Note: tests need docker running", "Tests need docker running"),
    ("make a note that the flaky test is test_refund_retry",
     "The flaky test is test_refund_retry"),
    ("note to self: the cron runs at 02:00 UTC", "The cron runs at 02:00 UTC"),
    ("keep in mind that the billing module is legacy", "The billing module is legacy"),
    ("Bear in mind: prod is eu-west-1", "Prod is eu-west-1"),
    ("for future reference, the prod cluster is eu-west-1", "The prod cluster is eu-west-1"),
    ("For the record: we chose Postgres over MySQL for JSONB",
     "We chose Postgres over MySQL for JSONB"),
    ("can you remember that we use pnpm, not npm?", "We use pnpm, not npm"),
    ("Could you please note that the release branch is release/2.x?",
     "The release branch is release/2.x"),
    ("from now on, use pnpm instead of npm", "From now on, use pnpm instead of npm"),
    ("From now on always write the test first",
     "From now on always write the test first"),
    ("going forward, all migrations must be reversible",
     "Going forward, all migrations must be reversible"),
    ("always use UTC timestamps in the database", "Always use UTC timestamps in the database"),
    ("Never commit directly to main.", "Never commit directly to main."),
    ("we never deploy on Fridays", "We never deploy on Fridays"),
    ("We always squash-merge feature branches", "We always squash-merge feature branches"),
    ("I always want type hints on public functions",
     "I always want type hints on public functions"),
    ("ok, remember: the refund cron must retry 5 times",
     "The refund cron must retry 5 times"),
    ("Also, note that errors go to Sentry, not the logs",
     "Errors go to Sentry, not the logs"),
    ("The deploy failed again. Remember: we never deploy on Fridays. Now fix the flaky test.",
     "We never deploy on Fridays."),
]

FORGET = [
    ("forget that we never deploy on Fridays", "We never deploy on Fridays"),
    ("Forget about the Friday deploy rule", "The Friday deploy rule"),
    ("forget what I said about pnpm", "Pnpm"),
    ("you can stop remembering the staging DB note", "The staging DB note"),
    ("Disregard the note about docker for tests", "Docker for tests"),
]

NOTHING = [
    "do you remember how the auth middleware works?",
    "Do you remember what we decided about caching?",
    "remember when we fixed the race in the scheduler? it's back",
    "I can't remember where the config lives",
    "what did we decide about the retry budget?",
    "note the failing test output below and fix it",
    "never mind, revert that",
    "Never mind.",
    "why does the build always fail on CI?",
    "the test always fails on the first run, can you investigate",
    "it never returns early, check the loop",
    "remember.py has a bug on line 40",
    "add a remember-me checkbox to the login form",
    "implement a `memlite remember` command",
    "fix the 'Forget password' link on the login page",
    "write a function that always returns a list",
    "fix the bug and remember to update the changelog",
    "forget it, let's do something else",
    "Forget that.",
    "we never got the webhook, can you check the logs",
    "We never received the confirmation email",
    "I always thought this was thread-safe",
    "we always had trouble with this migration",
    "refactor the note model so that notes have tags",
    "is it true that we never deploy on Fridays?",
    "",
    "   ",
    "[REDACTED:aws_access_key]",
]


@pytest.mark.parametrize(("prompt", "kept"), REMEMBER)
def test_requests_to_remember(prompt, kept):
    assert request(prompt) == ("remember", kept)


@pytest.mark.parametrize(("prompt", "target"), FORGET)
def test_requests_to_forget(prompt, target):
    assert request(prompt) == ("forget", target)


@pytest.mark.parametrize("prompt", NOTHING)
def test_look_alikes_are_not_requests(prompt):
    assert request(prompt) is None


def test_a_long_note_is_cut_to_its_head():
    found = request("remember: " + "the ledger is append-only " * 40)
    assert found is not None and len(found.text) == MAX_NOTE
    assert found.text.startswith("The ledger is append-only") and found.text.endswith("…")


def test_a_huge_prompt_is_read_in_bounded_time():
    # Only the first 4,000 characters are read: a 200 kB prompt costs what 4 kB does.
    assert request("x " * 100_000 + "remember: never") is None
