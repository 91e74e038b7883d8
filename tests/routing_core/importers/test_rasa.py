"""Rasa NLU YAML and project folders become routes, rules and keywords; the rest is reported."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core import PackError
from routing_core.importers import import_export
from routing_core.importers.rasa import strip_annotations
from tests.routing_core.importers.conftest import EXPORTS, notes, round_trip, zip_folder

NLU = EXPORTS / "rasa_nlu.yml"
PROJECT = EXPORTS / "rasa_project"


@pytest.fixture(scope="module")
def nlu():
    return import_export("rasa", NLU)


def test_each_intent_with_examples_becomes_a_route_in_file_order(nlu):
    assert [r.name for r in nlu.routes] == [
        "greet",
        "check_balance",
        "book_flight",
        "chitchat_ask_name",
        "transfer_money",
    ]
    assert [r.source for r in nlu.routes][3:] == ["chitchat/ask_name", "Transfer Money"]


def test_entity_annotations_are_stripped_to_their_text_and_reported(nlu):
    book = next(r for r in nlu.routes if r.name == "book_flight")
    assert book.examples[:2] == ["book a flight to Berlin", "I want to fly from Paris to Rome"]
    balance = next(r for r in nlu.routes if r.name == "check_balance")
    assert "how much is on my credit card account" in balance.examples
    assert "show me the balance of my checking account" in balance.examples
    assert (
        "rasa_nlu.yml: nlu[2].examples: entity annotations kept as plain text "
        "(entities have no equivalent): city ×3" in notes(nlu, "changed")
    )


def test_examples_given_as_text_items_are_read_and_their_metadata_reported(nlu):
    ask = next(r for r in nlu.routes if r.name == "chitchat_ask_name")
    assert ask.examples == ["what is your name", "who am I talking to"]
    assert "rasa_nlu.yml: nlu[3].examples[1].metadata: metadata not imported" in notes(
        nlu, "left out"
    )


def test_renamed_intents_and_a_repeated_example_are_reported(nlu):
    assert "rasa_nlu.yml: nlu[4]: intent 'Transfer Money' is named 'transfer_money' here" in notes(
        nlu, "changed"
    )
    assert "rasa_nlu.yml: nlu[0].examples[3]: repeats an example of 'greet'" in notes(
        nlu, "left out"
    )
    assert [r.examples for r in nlu.routes if r.name == "greet"] == [
        ["hey", "hello there", "good morning"]
    ]


def test_an_empty_intent_is_reported_not_imported(nlu):
    assert "goodbye" not in [r.name for r in nlu.routes]
    assert "intent 'goodbye': no examples: an empty intent" in notes(nlu, "left out")


def test_synonyms_and_lookups_become_keywords_of_the_routes_that_mark_them(nlu):
    routes = {r.name: r for r in nlu.routes}
    assert routes["check_balance"].keywords == ["credit", "credit card account", "credit account"]
    assert routes["book_flight"].keywords == ["berlin", "paris", "rome", "new york"]
    assert nlu.lexicons["bank"] == ("JPMC", "Comerica")
    assert "lexicon 'bank': 2 word(s) kept aside: no intent's examples mark this entity" in notes(
        nlu, "kept aside"
    )


def test_regexes_become_rules_when_an_intent_owns_them_and_unsafe_ones_are_refused(nlu):
    assert nlu.rules == ({"route": "check_balance", "match": {"regex": r"\bbalance\b"}},)
    kept_aside = notes(nlu, "kept aside")
    assert any("regex 'account_number': no intent marks this entity" in n for n in kept_aside)
    left_out = notes(nlu, "left out")
    assert any(
        n.startswith("rasa_nlu.yml: nlu[11].examples[0]: regex not made a rule: unsafe regex")
        for n in left_out
    )


def test_the_import_round_trips_into_a_pack_that_routes(nlu):
    router = round_trip(nlu)
    assert router.route("what is the balance on my savings").route == "check_balance"
    assert router.route("is there a flight to Paris next week").route == "book_flight"
    assert router.route("please transfer money to Anna").route == "transfer_money"
    rule_win = router.route("balance please")
    assert (rule_win.route, rule_win.by) == ("check_balance", "rule")


def test_a_project_folder_imports_its_nlu_and_reports_the_rest():
    result = import_export("rasa", PROJECT)
    assert [(r.name, len(r.examples)) for r in result.routes] == [("greet", 3), ("order_pizza", 3)]
    # the synonym names the marked text "margherita"
    assert result.routes[1].keywords == ["margherita", "margarita", "plain cheese"]
    left_out = notes(result, "left out")
    for line in (
        "data/stories.yml: stories: stories (conversation paths) have no equivalent in a pack",
        "data/rules.yml: rules: Rasa rules (dialogue policies) have no equivalent in a pack",
        "domain.yml: responses: responses are the agent's answers, not routing: not imported",
        "domain.yml: slots: slots have no equivalent in a pack",
        "domain.yml: forms: forms have no equivalent in a pack",
        "domain.yml: intents[2]: intent 'ask_opening_hours' is declared but has no examples",
        "config.yml: language, pipeline, policies, recipe: the model configuration has no equivalent",
    ):
        assert line in left_out
    assert round_trip(result).route("can I order a pepperoni pizza").route == "order_pizza"


def test_a_zipped_project_inside_a_top_folder_imports_the_same(tmp_path):
    archive = zip_folder(PROJECT, tmp_path / "bot.zip", top="my-bot/")
    from_zip = import_export("rasa", archive.read_bytes(), filename="bot.zip")
    from_folder = import_export("rasa", PROJECT)
    assert [r.to_document() for r in from_zip.routes] == [
        r.to_document() for r in from_folder.routes
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("nlu: [\n", "not valid YAML"),
        ("a: &x [1]\nb: *x\n", "aliases (*name) are not accepted"),
        ("version: '3.1'\nstories: []\n", "no intent with examples was found"),
    ],
)
def test_broken_files_are_refused_with_where_and_why(tmp_path, text, reason):
    path = tmp_path / "nlu.yml"
    path.write_text(text)
    with pytest.raises(PackError) as caught:
        import_export("rasa", path)
    assert reason in "\n".join(caught.value.lines())


def test_a_folder_without_yaml_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(PackError, match="no Rasa YAML file"):
        import_export("rasa", tmp_path)


_plain = st.text(st.characters(blacklist_characters="[](){}\n"), min_size=1, max_size=20)


@given(
    st.lists(st.tuples(_plain, st.from_regex(r"[a-z_]{1,8}", fullmatch=True)), max_size=4), _plain
)
def test_stripping_annotations_keeps_exactly_the_marked_text(parts, tail):
    line = (
        "".join(f"{before}[{word}]({entity})" for before, entity in parts for word in ["w"]) + tail
    )
    text, marks = strip_annotations(line)
    assert text == "".join(f"{before}w" for before, _ in parts) + tail
    assert [m.entity for m in marks] == [entity for _, entity in parts]


@given(st.text(max_size=300))
def test_any_yaml_text_gives_routes_or_a_pack_error(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("rasa") / "nlu.yml"
    path.write_text(text, encoding="utf-8")
    try:
        result = import_export("rasa", path)
    except PackError as exc:
        assert exc.errors
    else:
        assert result.routes


# -- out-of-scope intents and entity lexicons (a bank's export, as Rasa's sample bots write it) ---

BANK = """\
version: "3.1"
nlu:
- intent: check_balance
  examples: |
    - what's my [emblem](credit_card) [balance](amount-of-money)
    - show me my [iron bank](credit_card) balance
    - how much money is in my [savings](account)
- intent: pay_cc
  examples: |
    - I want to pay the [full](amount-of-money) amount on my [Emblem](credit_card) card
    - pay my [iron bank](credit_card) bill
- intent: inform
  examples: |
    - [emblem](credit_card)
    - [full](amount-of-money)
- intent: out_of_scope
  examples: |
    - I want to order food
    - What is 2 + 2?
- intent: out_of_scope/non_english
  examples: |
    - quiero pedir una pizza
- synonym: emblem
  examples: |
    - Emblem
    - emblm
- lookup: credit_card
  examples: |
    - emblem
    - Emblem
    - iron bank
- synonym: current balance
  examples: |
    - full
    - full balance
- lookup: account
  examples: |
    - Savings
    - savings
    - checking
"""


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    path = tmp_path_factory.mktemp("rasa") / "nlu.yml"
    path.write_text(BANK)
    return import_export("rasa", path)


def test_rasas_out_of_scope_intents_become_the_packs_out_of_scope_examples(bank):
    assert [r.name for r in bank.routes] == ["check_balance", "pay_cc", "inform"]
    assert bank.out_of_scope == (
        "I want to order food",
        "What is 2 + 2?",
        "quiero pedir una pizza",
    )
    changed = notes(bank, "changed")
    assert (
        "nlu.yml: nlu[3]: intent 'out_of_scope': 2 phrase(s) came over as out-of-scope examples"
        in changed
    )
    assert round_trip(bank).route("What is 2 + 2?").verdict == "unmatched"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("out_of_scope", True),
        ("out-of-scope", True),
        ("Out Of Scope", True),
        ("out_of_scope/other", True),
        ("nlu_fallback", True),
        ("oos", True),
        ("scope_of_work", False),
        ("chitchat/out_of_scope", False),
    ],
)
def test_the_usual_names_of_rasas_out_of_scope_intent_are_recognised(name, expected):
    from routing_core.importers.rasa import is_out_of_scope

    assert is_out_of_scope(name) is expected


def test_a_lexicon_several_intents_mark_is_a_keyword_of_none_and_the_notes_say_why(bank):
    keywords = {r.name: r.keywords for r in bank.routes}
    # "emblem", "iron bank", "full": card names and amounts mark three intents alike
    assert keywords == {"check_balance": ["savings", "checking"], "pay_cc": [], "inform": []}
    aside = notes(bank, "kept aside")
    assert (
        "lexicon 'credit_card': 3 word(s) kept aside: several intents mark this entity "
        "(check_balance, pay_cc, inform), so its words tell none apart" in aside
    )
    assert any(n.startswith("lexicon 'current balance': ") for n in aside)


def test_keywords_are_case_folded_and_kept_once(bank):
    balance = next(r for r in bank.routes if r.name == "check_balance")
    assert balance.keywords == ["savings", "checking"]  # "Savings" and "savings": one keyword
    assert "lexicon 'account': 2 word(s) became keywords of check_balance" in notes(bank, "changed")


def test_a_word_two_lexicons_give_to_two_routes_is_a_keyword_of_neither():
    from routing_core.importers.result import Collector

    collect = Collector("test")
    for name, entity in (("cards", "card_name"), ("loans", "loan_name")):
        route = collect.route(name, name)
        route.entities.add(entity)
        collect.add_example(route, f"about my {name}", name)
    collect.add_lexicon("card_name", ["Gold", "Platinum"])
    collect.add_lexicon("loan_name", ["gold", "Starter"])
    result = collect.finish()
    assert {r.name: r.keywords for r in result.routes} == {
        "cards": ["platinum"],
        "loans": ["starter"],
    }
    assert "keyword 'gold': it names several intents' entities (cards, loans): no keyword" in (
        notes(result, "kept aside")
    )
