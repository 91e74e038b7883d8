"""The smallest fix for a failing case is found by running the suite on each candidate edit."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routing_core import Router, load_pack
from routing_core.cases import Case
from routing_core.repair import find_repair
from tests.routing_core.conftest import PACKS

# How the profile's own texts are learned, without the built-in background (conftest).
pytestmark = pytest.mark.usefixtures("without_background")


@pytest.fixture(scope="module")
def pack():
    return load_pack(PACKS / "support.json")


@pytest.fixture(scope="module")
def suite(pack):
    """Three passing cases per route, from its own examples."""
    return [Case(e, r.name) for r in pack.routes for e in r.examples[:3]]


def _with(suite, text, expected):
    cases = [*suite, Case(text, expected)]
    return cases, len(cases) - 1


def test_a_keyword_from_the_message_is_the_first_fix_tried(pack, suite):
    cases, failing = _with(suite, "my subscription renewed without asking", "billing")
    report = find_repair(pack, cases, failing)
    assert report.fix is not None
    assert report.fix.describe() == "add the keyword “subscription” to billing"
    assert Router(report.pack).route("my subscription renewed without asking").route == "billing"
    assert "subscription" not in next(r for r in pack.routes if r.name == "billing").keywords


def test_when_nothing_else_helps_the_message_becomes_an_example_and_the_report_says_so(pack, suite):
    cases, failing = _with(suite, "is my order lost", "shipping")
    report = find_repair(pack, cases, failing)
    assert [(a.edit.kind, a.fixes) for a in report.attempts] == [
        ("add_keyword", False),
        ("add_keyword", False),
        ("move_example", False),
        ("move_example", False),
        ("move_example", False),
        ("add_example", True),
    ]
    assert report.fix is not None and report.fix.text == "is my order lost"
    assert report.copies_case
    assert report.warning.startswith(
        "This edit makes the test's own message a training example: the case will pass because"
    )
    assert "no longer proves anything" in report.warning


def test_an_edit_that_leaves_the_case_out_of_the_training_is_preferred_to_copying_it(pack):
    # Adding the message itself as an example would fix it too, and used to be tried first.
    suite = [Case(e, r.name) for r in pack.routes for e in r.examples[1:4]]
    cases, failing = _with(suite, "where has my order gone", "shipping")
    report = find_repair(pack, cases, failing)
    assert report.fix is not None
    assert report.fix.describe() == "move the example “where is my order” from orders to shipping"
    assert not report.copies_case and report.warning == ""


def test_copies_of_the_case_come_last_and_survive_the_candidate_budget(pack, suite):
    from routing_core.evaluate import evaluate
    from routing_core.repair import MAX_CANDIDATES, Edit, _within_budget, candidates, copies_case

    case = Case("is a payment plan available for my subscription", None)
    result = evaluate(Router(pack), [case]).results[0]
    kinds = [e.kind for e in candidates(pack, case, result)]
    assert kinds[-1] == "add_out_of_scope" and "remove_keyword" in kinds[:-1]
    many = [Edit("add_keyword", "billing", f"word{n}") for n in range(MAX_CANDIDATES + 5)]
    copy = Edit("add_out_of_scope", "", "Is a payment plan  available for my subscription")
    assert copies_case(copy, case)
    kept = _within_budget([*many, copy], case)
    assert len(kept) == MAX_CANDIDATES and kept[-1] == copy


def test_an_edit_that_breaks_a_passing_case_is_refused_and_says_which(pack, suite):
    # the suite also expects this very message on orders: no edit can satisfy both
    cases, failing = _with(suite, "where is my order", "shipping")
    report = find_repair(pack, cases, failing)
    assert (
        report.fix is None and report.reason == "no single edit fixes it without breaking another"
    )
    moved = next(a for a in report.attempts if a.edit.kind == "move_example" and a.fixes)
    assert moved.edit.describe() == "move the example “where is my order” from orders to shipping"
    assert moved.breaks == ("where is my order",)


def test_wording_from_a_model_is_tried_first_but_only_if_it_is_in_the_message(pack, suite):
    cases, failing = _with(suite, "my subscription renewed without asking", "billing")
    report = find_repair(pack, cases, failing, wording=["auto-renewal", "renewed without asking"])
    assert report.fix is not None and report.fix.text == "renewed without asking"
    assert len(report.attempts) == 1


def test_progress_is_told_before_the_first_candidate_and_after_each_one(pack, suite):
    cases, failing = _with(suite, "is my order lost", "shipping")
    told: list[tuple[int, int]] = []
    report = find_repair(
        pack, cases, failing, progress=lambda done, total: told.append((done, total))
    )
    # six candidates to try; the last (the message as an example) fixes it
    assert told == [(n, 6) for n in range(7)]
    assert len(report.attempts) == 6


def test_what_progress_raises_stops_the_search(pack, suite):
    cases, failing = _with(suite, "is my order lost", "shipping")
    tried: list[int] = []

    def stop_after_one(done: int, total: int) -> None:
        tried.append(done)
        if done == 1:
            raise KeyboardInterrupt("cancelled")

    with pytest.raises(KeyboardInterrupt):
        find_repair(pack, cases, failing, progress=stop_after_one)
    assert tried == [0, 1]


def test_a_passing_case_or_a_case_expecting_a_missing_route_gets_no_edit(pack, suite):
    assert find_repair(pack, suite, 0).reason == "the case already passes"
    cases, failing = _with(suite, "why was I charged twice", "nowhere")
    assert find_repair(pack, cases, failing).reason == (
        "the expected route nowhere is not a route of the pack"
    )


# -- every kind of failure ------------------------------------------------------------------------
# Each kind has a real pack where the fix is known to work, and a twin case with the very same
# message expecting the opposite, which every candidate then breaks.


def _fix(pack, cases):
    return find_repair(pack, cases, len(cases) - 1)


def test_a_message_expected_out_of_scope_becomes_an_out_of_scope_example(pack, suite):
    cases, _ = _with(suite, "what is the weather in paris", None)
    report = _fix(pack, cases)
    assert report.fix is not None
    assert (
        report.fix.describe() == "add “what is the weather in paris” to the out-of-scope examples"
    )
    assert report.pack is not None and "what is the weather in paris" in report.pack.out_of_scope
    assert Router(report.pack).route("what is the weather in paris").verdict == "unmatched"
    assert pack.out_of_scope == ()


def test_an_out_of_scope_fix_that_breaks_a_twin_says_so_in_plain_words(pack, suite):
    cases = [*suite, Case("what is the weather in paris", "orders")]
    cases.append(Case("what is the weather in paris", None))
    report = _fix(pack, cases)
    assert report.fix is None
    assert report.explanations[0] == (
        "adding “what is the weather in paris” to the out-of-scope examples fixed it but made "
        "‘what is the weather in paris’ fail"
    )


def test_a_keyword_of_the_route_that_took_an_out_of_scope_message_may_be_removed(pack, suite):
    from routing_core.evaluate import evaluate
    from routing_core.repair import candidates

    case = Case("is a payment plan available for my subscription", None)
    result = evaluate(Router(pack), [case]).results[0]
    assert "billing" in result.decision.offered
    kinds = [(e.kind, e.route, e.text) for e in candidates(pack, case, result)]
    assert ("remove_keyword", "billing", "payment") in kinds


def test_a_menu_where_a_route_was_expected_is_fixed_for_that_route(pack, suite):
    assert Router(pack).route("I love pizza").verdict == "menu"
    cases, _ = _with(suite, "I love pizza", "account")
    report = _fix(pack, cases)
    assert report.fix is not None and report.fix.route == "account"
    assert Router(report.pack).route("I love pizza").route == "account"


def test_a_decisive_verdict_where_a_menu_came_out_can_be_had_by_lowering_the_margin(pack, suite):
    from routing_core.evaluate import evaluate
    from routing_core.repair import candidates, check_edit

    case = Case("I love pizza", "account", expected_verdict="move")
    cases = [*suite, case]
    result = evaluate(Router(pack), cases).results[-1]
    margin = next(e for e in candidates(pack, case, result) if e.kind == "set_margin")
    gap = result.decision.runner_up.gap
    assert float(margin.text) <= gap < pack.policy.near_tie_margin
    assert margin.describe() == f"change the near-tie margin from 0.15 to {margin.text}"
    attempt = check_edit(pack, cases, len(cases) - 1, margin)
    assert attempt.fixes and not attempt.breaks


def test_a_case_expecting_a_menu_without_a_route_is_told_to_name_one(pack, suite):
    cases, _ = _with(suite, "I love pizza", None)
    cases[-1] = Case("I love pizza", None, expected_verdict="menu")
    report = _fix(pack, cases)
    assert report.fix is None and "must name a route the menu offers" in report.reason


def test_a_case_expecting_a_menu_passes_on_a_menu_that_offers_its_route(pack, suite):
    from routing_core.evaluate import evaluate

    offered = Router(pack).route("I love pizza").offered
    case = Case("I love pizza", offered[0], expected_verdict="menu")
    assert evaluate(Router(pack), [*suite, case]).results[-1].passed


def test_a_menu_where_a_decisive_turn_came_out_can_be_had_by_raising_the_margin(pack, suite):
    from routing_core.evaluate import evaluate
    from routing_core.repair import candidates, check_edit

    decided = next(
        (c.text, d)
        for c in suite
        if (d := Router(pack).route(c.text)).verdict == "move" and d.runner_up is not None
    )
    text, decision = decided
    case = Case(text, decision.route, expected_verdict="menu")
    cases = [*suite, case]
    result = evaluate(Router(pack), cases).results[-1]
    assert result.failures == ["verdict: expected menu, got move"]
    margin = next(e for e in candidates(pack, case, result) if e.kind == "set_margin")
    assert decision.runner_up.gap < float(margin.text) <= decision.runner_up.gap + 0.01
    attempt = check_edit(pack, cases, len(cases) - 1, margin)
    assert attempt.fixes


def test_a_triage_label_is_fixed_by_teaching_the_lexicon_a_word(pack, suite):
    cases, _ = _with(suite, "process my payment now", "billing")
    cases[-1] = Case("process my payment now", "billing", expected_triage="action")
    report = _fix(pack, cases)
    assert report.fix is not None
    assert report.fix.describe() == "add “process” to the action verbs"
    assert report.pack is not None and "process" in report.pack.triage.action_verbs
    assert "cancel" in report.pack.triage.action_verbs  # the built-in words are kept
    assert Router(report.pack).route("process my payment now").triage.label == "action"


def test_a_triage_label_may_be_fixed_by_taking_a_word_out_of_the_other_lexicon(pack, suite):
    cases = [*suite, Case("explain my invoice", "billing", expected_triage="ambiguous")]
    report = _fix(pack, cases)
    assert report.fix is not None
    assert report.fix.describe() == "remove “explain” from the knowledge verbs"


def test_a_triage_fix_that_breaks_a_twin_is_refused(pack, suite):
    twin = Case("process my payment now", "billing", expected_triage="ambiguous")
    cases = [*suite, twin, Case("process my payment now", "billing", expected_triage="action")]
    report = _fix(pack, cases)
    assert report.fix is None
    assert report.explanations[0] == (
        "adding “process” to the action verbs fixed it but made ‘process my payment now’ fail"
    )
    assert report.explanations[1] == (
        "adding “payment” to the action verbs did not fix it "
        "(still triage: expected action, got ambiguous)"
    )


def test_a_tool_to_keep_gets_a_trigger_keyword_from_the_message(pack, suite):
    case = Case("ship it to my grandma", "shipping", expected_tools=("track_parcel",))
    report = _fix(pack, [*suite, case])
    assert report.fix is not None
    assert report.fix.describe() == "add the trigger keyword “ship” to the tool track_parcel"
    assert "track_parcel" in Router(report.pack).route("ship it to my grandma").tools.kept


def test_a_tool_fix_that_breaks_a_twin_is_refused(pack, suite):
    twin = Case("ship it to my grandma", "shipping", dropped_tools=("track_parcel",))
    case = Case("ship it to my grandma", "shipping", expected_tools=("track_parcel",))
    report = _fix(pack, [*suite, twin, case])
    assert report.fix is None
    assert [a.edit.text for a in report.attempts] == ["ship", "grandma"]
    assert all(a.fixes and a.breaks == ("ship it to my grandma",) for a in report.attempts)


def test_a_tool_to_drop_loses_the_trigger_keyword_in_the_message(pack, suite):
    from routing_core.evaluate import evaluate
    from routing_core.repair import candidates

    case = Case("track my package", "shipping", dropped_tools=("track_parcel",))
    result = evaluate(Router(pack), [case]).results[0]
    edits = [e.describe() for e in candidates(pack, case, result)]
    assert edits == ["remove the trigger keyword “track” from the tool track_parcel"]


def test_no_more_than_max_candidates_are_tried(pack, suite):
    from routing_core.repair import MAX_CANDIDATES

    text = " ".join(f"word{n}" for n in range(40))
    twin = Case(text, "billing", expected_triage="ambiguous", expected_tools=())
    case = Case(text, "billing", expected_triage="action", expected_tools=("refund_order",))
    report = _fix(pack, [*suite, twin, case])
    assert report.fix is None and len(report.attempts) == MAX_CANDIDATES


def test_an_edit_the_pack_refuses_raises_a_pack_error_and_changes_nothing(pack):
    from routing_core import PackError
    from routing_core.repair import Edit, apply_edit

    for edit in (
        Edit("set_margin", "", "lots", "0.15"),
        Edit("set_margin", "", "7", "0.15"),
        Edit("add_verb", "action", "Two Words"),
    ):
        with pytest.raises(PackError):
            apply_edit(pack, edit)
    assert pack.policy.near_tie_margin == 0.15 and pack.triage.action_verbs is None


def test_an_edit_to_a_trained_pack_carries_a_model_learned_from_the_edited_texts(pack):
    from routing_core.repair import Edit, apply_edit
    from routing_core.scorers.stored import _learning_texts, fingerprint, with_model

    trained = with_model(pack)
    for edit in (
        Edit("add_example", "billing", "my subscription renewed"),
        Edit("add_out_of_scope", "", "what is the weather in paris"),
    ):
        edited = apply_edit(trained, edit)
        model = edited.scorer.model
        assert model is not None and not model.stale
        assert model.fingerprint == fingerprint(_learning_texts(edited))
        assert model.fingerprint != trained.scorer.model.fingerprint
    kept = apply_edit(trained, Edit("add_verb", "action", "process"))
    assert kept.scorer.model == trained.scorer.model  # routing unchanged: nothing relearned


_WORDS = ["refund", "my", "parcel", "Cancel", "invoice", "what", "the", "zorp", "card", "now", "é"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(" ".join),
    expected=st.sampled_from([None, "billing", "shipping"]),
    triage=st.sampled_from([None, "action", "knowledge", "ambiguous"]),
    tools=st.sampled_from([None, ("refund_order",), ()]),
    dropped=st.sampled_from([None, ("track_parcel",)]),
)
def test_every_candidate_is_a_valid_edit_said_in_words(
    pack, text, expected, triage, tools, dropped
):
    from routing_core.evaluate import evaluate
    from routing_core.repair import MAX_CANDIDATES, apply_edit, candidates

    case = Case(text, expected, expected_triage=triage, expected_tools=tools, dropped_tools=dropped)
    result = evaluate(Router(pack), [case]).results[0]
    edits = candidates(pack, case, result)
    assert len(edits) == len(set(edits))
    for edit in edits[:MAX_CANDIDATES]:
        sentence = edit.describe()
        assert "{" not in sentence and "None" not in sentence and edit.text.strip()
        apply_edit(pack, edit)  # never a PackError: every candidate is a change the pack takes


def test_the_candidates_of_a_cross_validated_pack_choose_their_schedule_once(fold_schedules):
    """A pack of 100-199 texts chooses its schedule by fold models learned both ways
    (docs/decisions.md, "Packs of 100-199 texts"); each candidate is that pack with one small
    edit, so the search reuses the first candidate's choice and thresholds instead of paying
    for them again."""
    from routing_core.build import build_pack
    from routing_core.scorers import _model
    from tests.routing_core.test_incremental_model import generated_routes

    pack = build_pack(generated_routes(12, 12), slug="twelve", no_background=True)
    first, second = pack.routes[0], pack.routes[1]
    # Route one's own examples pass; one of them expected on route two: a keyword taken from
    # it breaks the others, so several candidates are learned before one is found or none.
    cases = [Case(text=t, expected=first.name) for t in first.examples[:6]]
    cases.append(Case(text=first.examples[6], expected=second.name))
    fold_schedules.clear()  # the build's own choice
    report = find_repair(pack, cases, len(cases) - 1)

    assert len(report.attempts) >= 3
    # The first candidate learns both ways and chooses; the others learn no fold model.
    assert fold_schedules == [True, False]
    assert _model._SHARED_SCHEDULE.get() is None  # the choice does not outlive the search
