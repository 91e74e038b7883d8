"""Out-of-scope examples an importer finds go into the pack, within its limits, each drop noted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import load_pack
from routing_core.importers.result import MAX_WORD, Collector
from routing_core.limits import MAX_ITEMS, MAX_PACK_TEXTS, MAX_TEXT
from tests.routing_core.importers.conftest import notes


def _collector() -> Collector:
    collect = Collector("test")
    route = collect.route("billing", "intents[0]")
    for text in ("where is my invoice", "pay my bill"):
        collect.add_example(route, text, "intents[0]")
    return collect


def test_repeats_blanks_and_texts_a_pack_cannot_hold_are_left_out_with_their_path():
    collect = _collector()
    for i, text in enumerate(
        [
            "tell me a joke",
            "tell  me a joke\n",
            "   ",
            "x" * (MAX_TEXT + 1),
            "a" * (MAX_WORD + 1),
            "nul\x00here",
        ]
    ):
        collect.add_out_of_scope(text, f"fallback[{i}]")
    result = collect.finish()
    assert result.out_of_scope == ("tell me a joke",)
    assert notes(result, "left out") == [
        "fallback[1]: repeats an out-of-scope example",
        "fallback[2]: blank out-of-scope example",
        f"fallback[3]: out-of-scope example longer than {MAX_TEXT} characters",
        f"fallback[4]: out-of-scope example with a word longer than {MAX_WORD} characters",
        "fallback[5]: out-of-scope example that contains a NUL character (\\u0000), which "
        "cannot be stored: remove it",
    ]
    assert result.to_pack().out_of_scope == ("tell me a joke",)


def test_a_text_that_is_also_a_routes_example_stays_an_example_only():
    collect = _collector()
    collect.add_out_of_scope("pay my bill", "fallback[0]")
    collect.add_out_of_scope("sing a song", "fallback[1]")
    result = collect.finish()
    assert result.out_of_scope == ("sing a song",)
    assert (
        "out-of-scope example 'pay my bill': it is also an example of 'billing', so it stays "
        "there only" in notes(result, "left out")
    )


def test_no_more_than_a_pack_holds_come_over():
    collect = _collector()
    for i in range(MAX_ITEMS + 2):
        collect.add_out_of_scope(f"message number {i}", f"fallback[{i}]")
    result = collect.finish()
    assert len(result.out_of_scope) == MAX_ITEMS
    assert notes(result, "left out")[-1] == (
        f"fallback[{MAX_ITEMS + 1}]: a pack holds at most {MAX_ITEMS} out-of-scope examples"
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=30))
def test_any_texts_make_a_pack_with_each_kept_one_once(texts):
    collect = _collector()
    for i, text in enumerate(texts):
        collect.add_out_of_scope(text, f"fallback[{i}]")
    result = collect.finish()
    kept = result.out_of_scope
    assert len(set(kept)) == len(kept)
    assert all(text.strip() and text not in ("where is my invoice", "pay my bill") for text in kept)
    # every text is either kept or named in a note: nothing is dropped silently
    assert len(kept) + len(notes(result, "left out")) == len(texts)
    assert result.to_pack().out_of_scope == kept


def test_texts_past_the_pack_total_are_left_out_with_a_note_and_the_rest_is_a_valid_pack():
    collect = Collector("test")
    per_route = MAX_ITEMS
    n_routes = MAX_PACK_TEXTS // per_route
    for r in range(n_routes):
        route = collect.route(f"intent_{r}", f"nlu[{r}]")
        for i in range(per_route):
            collect.add_example(route, f"example {r} {i}", f"nlu[{r}].examples[{i}]")
    extra = collect.route("one_more", f"nlu[{n_routes}]")
    collect.add_example(extra, "one example more", f"nlu[{n_routes}].examples[0]")
    collect.add_out_of_scope("tell me a joke", "fallback[0]")

    result = collect.finish()

    assert sum(len(r.examples) for r in result.routes) == MAX_PACK_TEXTS
    assert notes(result, "left out")[-3:-1] == [
        f"nlu[{n_routes}].examples[0]: a pack holds at most"
        f" {MAX_PACK_TEXTS:,} texts (examples, keywords, ...) in all",
        f"fallback[0]: a pack holds at most {MAX_PACK_TEXTS:,} texts (examples, keywords, ...)"
        " in all",
    ]  # and then the intent that came over empty
    assert load_pack(result.to_document(slug="imported"))  # validated, not learned (bench's job)
