"""One turn's regexes share one time budget, whatever the pack holds.

Specified in docs/pack-format.md, Regular expressions.
"""

from __future__ import annotations

import hashlib
import threading
import time

import pytest

import routing_core.regex_safety as regex_safety
from routing_core import Router, load_pack
from routing_core.text import REGEX_BUDGET_S, REGEX_TEXT_CHARS, RegexBudget, compile_user_regex
from tests.routing_core.conftest import minimal_doc

MESSAGE = "1" * 16383 + "!"
# The shapes: the first is refused by validation now, the second is sound but
# quadratic in a run of digits, so only the budget and the text cap bound it.
SLOW = [r"\d*\d*\d*\D\d", r"\d+\D\d"]


def slow_pack(pattern: str, n_rules: int, question_pattern: str | None = None) -> dict:
    rules = [{"route": "shipping", "match": {"regex": pattern}} for _ in range(n_rules)]
    rules.append({"route": "billing", "match": {"keywords": ["!"]}})
    doc = minimal_doc(rules=rules)
    if question_pattern:
        doc["triage"] = {"question_pattern": question_pattern}
    return doc


@pytest.fixture
def unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation as an older reader did it: what the safety check misses reaches run time."""
    monkeypatch.setattr(regex_safety, "catastrophic_reason", lambda pattern: None)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("pattern", SLOW)
@pytest.mark.parametrize("n_rules", [1, 5, 20, 40])
def test_a_turn_spends_at_most_the_budget_on_slow_rules(unchecked, pattern, n_rules):
    router = Router(load_pack(slow_pack(pattern, n_rules)))
    started, cpu = time.perf_counter(), time.thread_time()
    decision = router.route(MESSAGE)
    elapsed, cpu = time.perf_counter() - started, time.thread_time() - cpu
    # Before: 0.9 / 4.6 / 18.2 s for 1 / 5 / 20 rules of the first pattern. Now the regex
    # work is one budget whatever the number of rules: ~50 ms of CPU (plus scoring). On a
    # busy machine that work stretches on the wall clock (beside other work: 0.1-0.6 s at a
    # load average of 6.6 on 2 cores), never by a search per rule.
    assert decision.regex is not None
    assert decision.regex.budget_us == REGEX_BUDGET_S * 1e6
    assert decision.regex.skipped or n_rules == 1  # one search may just finish in time
    assert cpu < 3 * REGEX_BUDGET_S
    assert elapsed < 2.0
    assert (decision.by, decision.route) == ("rule", "billing")  # the keyword rule still ran


@pytest.mark.timeout(60)
def test_what_the_budget_cut_is_named_in_the_decision_event(unchecked):
    router = Router(load_pack(slow_pack(SLOW[0], 40, question_pattern=SLOW[0])))
    event = router.route(MESSAGE).to_event()
    skipped = event["regex"]["skipped"]
    assert skipped[-1] == "triage.question_pattern"
    assert skipped[0].startswith("rules[") and len(skipped) >= 39
    assert event["regex"]["spent_us"] < 2_000_000


def test_a_quick_turn_records_its_regex_time_and_skips_nothing():
    doc = minimal_doc(rules=[{"route": "shipping", "match": {"regex": r"\bparcel\b"}}])
    decision = Router(load_pack(doc)).route("where is my parcel?")
    assert decision.route == "shipping" and decision.regex is not None
    assert decision.regex.skipped == () and 0 <= decision.regex.spent_us < 50_000


def test_a_pattern_is_searched_in_the_first_chars_of_the_message_only():
    pattern = compile_user_regex(r"needle")
    budget = RegexBudget()
    assert budget.search(pattern, "x" * (REGEX_TEXT_CHARS - 6) + "needle", "r") is not None
    assert budget.search(pattern, "x" * REGEX_TEXT_CHARS + "needle", "r") is None
    assert budget.skipped == []


def test_a_spent_budget_skips_the_rest_and_records_where():
    budget = RegexBudget(seconds=0.0)
    assert budget.search(compile_user_regex("a"), "a", "rules[7]") is None
    assert budget.skipped == ["rules[7]"]


def test_other_threads_work_does_not_cut_a_search_that_fits_the_budget():
    """The engine's timeout counts the whole process's CPU time: with other threads busy
    outside the GIL (here hashing), a search well within its budget of this thread's time
    used to be cut, and the same turn routed differently under load."""
    pattern = compile_user_regex(r"(?:ab)+c")  # sound; quadratic on a run of "ab"
    text = "ab" * 400
    started = time.thread_time()
    for _ in range(5):
        pattern.search(text)
    own = (time.thread_time() - started) / 5
    stop = threading.Event()
    data = b"x" * (4 << 20)

    def busy() -> None:
        while not stop.is_set():
            hashlib.sha256(data).digest()  # releases the GIL on large inputs

    others = [threading.Thread(target=busy) for _ in range(4)]
    for other in others:
        other.start()
    try:
        skipped = 0
        for _ in range(20):
            budget = RegexBudget(seconds=own * 4)
            budget.search(pattern, text, "rule")
            skipped += len(budget.skipped)
    finally:
        stop.set()
        for other in others:
            other.join()
    assert skipped == 0


@pytest.mark.timeout(60)
def test_the_built_in_question_pattern_is_searched_when_the_rules_spent_the_budget(unchecked):
    """It is a literal word at the start or a mark at the end, linear in the message: a
    question opened by "how" keeps its question signal whatever the pack's rules cost."""
    router = Router(load_pack(slow_pack(SLOW[1], 40)))
    decision = router.route("how " + "1" * 3000 + "!")
    assert decision.regex is not None and decision.regex.skipped
    assert "triage.question_pattern" not in decision.regex.skipped
    assert decision.triage is not None and "question" in decision.triage.signals
