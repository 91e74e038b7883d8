"""The smallest fix for a failing case is found by running the suite on each candidate edit."""

from __future__ import annotations

import pytest

from routing_core import Router, load_pack
from routing_core.cases import Case
from routing_core.repair import find_repair
from tests.routing_core.conftest import PACKS


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


def test_when_no_keyword_helps_the_message_becomes_an_example(pack, suite):
    cases, failing = _with(suite, "is my order lost", "shipping")
    report = find_repair(pack, cases, failing)
    assert [(a.edit.kind, a.fixes) for a in report.attempts] == [
        ("add_keyword", False),
        ("add_keyword", False),
        ("add_example", True),
    ]
    assert report.fix is not None and report.fix.text == "is my order lost"


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


def test_a_passing_case_or_an_out_of_scope_case_gets_no_edit(pack, suite):
    assert find_repair(pack, suite, 0).reason == "the case already passes"
    cases, failing = _with(suite, "why was I charged twice", None)
    assert find_repair(pack, cases, failing).reason == (
        "only a case expecting one of the routes can be fixed by an edit"
    )
