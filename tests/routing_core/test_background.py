"""Out of scope at defaults: a profile with no out-of-scope examples learns the built-in background."""

from __future__ import annotations

import json

import numpy as np
import pytest

from routing_core import Pack, Router, dump_pack, lint_pack, load_pack
from routing_core.build import build_pack
from routing_core.scorers import _background
from routing_core.scorers.base import RouteText
from routing_core.scorers.lexical import OUT_OF_SCOPE, LexicalScorer, learning_texts
from tests.routing_core.airline_profile import AIRLINE_ROUTES, IN_SCOPE, OFF_TOPIC


@pytest.fixture(scope="module")
def airline() -> Pack:
    return build_pack(AIRLINE_ROUTES, slug="airline")


@pytest.mark.parametrize("message", [*OFF_TOPIC, "who won the match yesterday"])
def test_a_profile_without_out_of_scope_examples_leaves_off_topic_messages_unmatched(
    airline: Pack, message: str
) -> None:
    assert Router(airline).route(message).verdict == "unmatched"


@pytest.mark.parametrize(("message", "route"), IN_SCOPE.items())
def test_its_own_messages_still_route(airline: Pack, message: str, route: str) -> None:
    decision = Router(airline).route(message)
    assert (decision.verdict, decision.route) == ("move", route)


def test_the_nearest_route_of_a_message_the_class_took_is_told_with_both_shares(
    airline: Pack,
) -> None:
    """Every route scores 0 on a message the out-of-scope class took; `nearest_route` names
    the route its words leaned to, with that route's share and the class's, from the same
    softmax: the class's is the larger, and their sum is at most 1. A message a route took
    has none."""
    scorer = Router(airline).scorer
    assert isinstance(scorer, LexicalScorer)
    names = list(scorer._names)
    for message in OFF_TOPIC:
        found = scorer.nearest_route(message)
        assert found is not None, message
        route, share, taken = found
        assert route in names and 0.0 < share < taken and share + taken <= 1.0 + 1e-6
        logits = scorer.logits(message)
        assert logits is not None
        assert route == names[int(np.argmax(logits[: len(names)]))]  # the routes' own order
    for message in IN_SCOPE:
        assert scorer.nearest_route(message) is None


# A route's one content word among words of any message ("what is it about my ..."): the
# background's "what is ..." and "tell me ..." lines must not outweigh it (docs/pack-format.md,
# "Scoring with a stored model", step 7).
CONTENT_WORD = {
    "what is it about my refund": "refund",
    "tell me about my refund": "refund",
    "tell me about my miles": "loyalty",
}


@pytest.mark.parametrize(("message", "route"), CONTENT_WORD.items())
def test_the_backgrounds_stop_words_do_not_outweigh_a_routes_content_word(
    airline: Pack, message: str, route: str
) -> None:
    # Had the class taken the message, every route would score 0 and none would lead.
    best = Router(airline).route(message).ranked[0]
    assert best.route == route and best.score > 0.0


@pytest.mark.parametrize("message", ["what is it about my refund", "tell me about my refund"])
def test_a_request_its_content_word_took_back_moves_when_above_the_floor(
    airline: Pack, message: str
) -> None:
    decision = Router(airline).route(message)
    assert (decision.verdict, decision.route) == ("move", "refund")


# Follow-ups the background's out-of-scope class claims on their own (each is unmatched as a
# first turn in the airline profile): in a conversation the class does not speak.
FOLLOW_UPS = ["what about the red one", "and for my wife too", "what do you recommend"]


@pytest.mark.parametrize("message", FOLLOW_UPS)
def test_a_follow_up_the_background_claims_stays_in_the_conversation(
    airline: Pack, message: str
) -> None:
    router = Router(airline)
    assert router.route(message).verdict == "unmatched", "the class claims it on a first turn"
    followed = router.route(message, incumbent="baggage")
    assert (followed.verdict, followed.route) == ("stay", "baggage")
    # Judged alone (the conversation ignored), the class speaks again.
    ignore = router.policy_with(conversation="ignore")
    assert router.route(message, incumbent="baggage", policy=ignore).verdict == "unmatched"


def test_in_a_conversation_the_scores_are_the_routes_without_the_class(airline: Pack) -> None:
    scorer = Router(airline).scorer
    names = list(airline.route_names)
    for message in FOLLOW_UPS:
        following = scorer.score_following(message, names).array
        assert following is not None
        # On a first turn the class is the likeliest column (on its content word alone a
        # route may lead it, and then scores far under the floor: step 7).
        posterior = scorer._posterior(message)
        assert posterior is not None and int(posterior.argmax()) == len(names)
        assert max(scorer.score(message, names)) < Router(airline).scorer.info.floor
        assert abs(float(following.sum()) - 1.0) < 1e-5 and float(following.max()) > 0.0


def test_in_a_conversation_each_route_scores_its_share_of_the_routes_posterior(
    airline: Pack,
) -> None:
    """docs/pack-format.md, Lexical scorer, step 8: p_r over the sum of p_s over the routes,
    in any order of candidates (the scorer takes the routes' softmax directly)."""
    scorer = Router(airline).scorer
    names = list(airline.route_names)
    for message in [*FOLLOW_UPS, *OFF_TOPIC, "my bag never arrived", "change my seat"]:
        posterior = scorer._posterior(message)  # every column: the routes, then the class
        assert posterior is not None and len(posterior) == len(names) + 1
        share = posterior[: len(names)].astype(np.float64)
        share /= share.sum()
        following = scorer.score_following(message, names).array
        assert np.allclose(following, share, rtol=0, atol=1e-6)
        picked = names[::-3]
        some = scorer.score_following(message, picked).array
        assert np.allclose(some, [share[names.index(n)] for n in picked], rtol=0, atol=1e-6)


def test_a_pack_can_leave_the_background_out() -> None:
    pack = build_pack(AIRLINE_ROUTES, slug="airline", no_background=True)
    assert pack.scorer.model.routes == len(AIRLINE_ROUTES)  # type: ignore[union-attr]
    assert Router(pack).route(OFF_TOPIC[1]).verdict == "move"  # nothing tells it apart now
    written = dump_pack(pack)
    assert '"no_background":true' in written and json.loads(written)["format_minor"] >= 10
    assert load_pack(written).no_background is True


def test_lint_says_when_the_background_is_left_out() -> None:
    pack = load_pack({"profile": {"slug": "a", "name": "A"}, "routes": AIRLINE_ROUTES})
    (learns,) = [f for f in lint_pack(pack) if f.kind == "few-out-of-scope"]
    assert "routing also learns a built-in set of off-topic messages" in learns.message
    left_out = pack.model_copy(update={"no_background": True})
    (told,) = [f for f in lint_pack(left_out) if f.kind == "few-out-of-scope"]
    assert "0 out-of-scope examples, and the built-in set" in told.message
    assert "left out" in told.message and "also learns" not in told.message


def test_a_pack_that_does_not_say_learns_the_background_as_before(airline: Pack) -> None:
    written = dump_pack(airline)
    assert (
        "no_background" not in written
    )  # the default is not written: a pack of minor 9 reads alike
    assert load_pack(written).no_background is False
    assert airline.scorer.model.routes == len(AIRLINE_ROUTES) + 1  # type: ignore[union-attr]


def test_the_background_speaks_only_where_the_profile_has_no_route() -> None:
    weather = RouteText(
        "weather",
        "",
        (
            "what's the weather like tomorrow",
            "will it rain today",
            "weather forecast please",
            "is it sunny outside",
            "how cold is it",
        ),
    )
    kept = _background.background_for([weather], ())
    assert "what's the weather like tomorrow" in _background.texts()
    assert not any(word in text.split() for text in kept for word in ("weather", "rain"))
    assert "tell me a joke" in kept


def test_a_profile_with_its_own_out_of_scope_examples_learns_only_those() -> None:
    own = [f"tell me something about topic {i}" for i in range(_background.BACKGROUND_BELOW)]
    route = RouteText("refund", "", tuple(f"i want my money back {i}" for i in range(6)))
    (_, negatives) = learning_texts([route], own)
    assert negatives.name == OUT_OF_SCOPE and negatives.examples == tuple(own)
    (_, fewer) = learning_texts([route], own[:3])
    assert fewer.examples[:3] == tuple(own[:3]) and len(fewer.examples) > 3


def test_the_background_is_a_few_times_a_route_and_covers_every_topic_first() -> None:
    routes = [
        RouteText(f"r{i}", "", tuple(f"order number {i} {j}" for j in range(9))) for i in range(4)
    ]
    kept = _background.background_for(routes, ())
    assert len(kept) == round(_background.SIZE_RATIO * 10)
    assert kept[:2] == ("what's the weather like tomorrow", "tell me a joke")


def test_a_large_curated_profile_learns_without_the_background() -> None:
    routes = [
        RouteText(f"r{i}", "", tuple(f"order number {i} {j}" for j in range(40))) for i in range(3)
    ]
    assert _background.background_for(routes, ()) == ()
    assert learning_texts(routes, ()) == routes


def test_a_profile_of_a_few_examples_a_route_learns_without_the_background() -> None:
    weather = RouteText(
        "check_weather", "", ("will it rain in Seattle", "forecast for the weekend")
    )
    flight = RouteText("book_flight", "", ("book a flight to Seattle", "a plane ticket to Paris"))
    assert _background.background_for([weather, flight], ()) == ()


# An English profile of ten examples a route and a Spanish one of five: the background learns
# only the lines in the routes' languages (docs/decisions.md, "A built-in background stands
# in ...").
ENGLISH = [
    RouteText("weather", "", ("will it rain tomorrow", "what's the weather like today",
                              "is it cold out", "forecast for the weekend", "how hot will it be",
                              "is it going to snow", "do i need an umbrella", "weather in london",
                              "will it be windy tonight", "chance of rain on friday")),
    RouteText("lights", "", ("turn on the kitchen light", "switch off the lamp", "lights on please",
                             "dim the bedroom lights", "turn the hall light off",
                             "brighten the living room", "lights off in the garage",
                             "switch on the porch light", "set the lights to blue",
                             "turn off all the lights")),
    RouteText("billing", "", ("why was I charged twice", "send me my invoice", "I want a refund",
                              "my card was charged wrong", "where is my receipt",
                              "what is this charge", "update my payment method",
                              "I was billed too much", "dispute a charge",
                              "change my billing address")),
]  # fmt: skip
SPANISH = [
    RouteText("facturas", "", ("¿por qué me cobraron dos veces?", "envíame mi factura",
                               "quiero que me devuelvan el dinero", "me cobraron de más en la tarjeta",
                               "¿dónde está mi recibo?")),
    RouteText("luces", "", ("enciende la luz de la cocina", "apaga la lámpara del salón",
                            "enciende las luces por favor", "baja las luces del dormitorio",
                            "apaga la luz del pasillo")),
]  # fmt: skip


def _in(code: str, learned: tuple[str, ...]) -> set[str]:
    return set(learned) & set(_background.texts((code,)))


def test_an_english_profile_learns_only_the_english_lines() -> None:
    learned = _background.background_for(ENGLISH, ())
    assert _background.languages_of(ENGLISH) == ("en",)
    assert learned and _in("en", learned) == set(learned)


def test_a_spanish_profile_learns_only_the_spanish_lines() -> None:
    learned = _background.background_for(SPANISH, ())
    assert _background.languages_of(SPANISH) == ("es",)
    assert learned and _in("es", learned) == set(learned)
    assert "cuéntame un chiste" in learned


def test_a_profile_in_two_languages_learns_both_in_turn() -> None:
    learned = _background.background_for([*ENGLISH, *SPANISH], ())
    assert _background.languages_of([*SPANISH, *ENGLISH]) == ("en", "es")
    assert _in("en", learned) and _in("es", learned)
    assert not _in("fr", learned)
    assert (
        _background.texts(("es", "en"))[:2]
        == _background.texts(("en", "es"))[:2]
        == (
            "what's the weather like tomorrow",
            "¿qué tiempo hará mañana?",
        )
    )


def test_routes_in_no_language_of_the_background_learn_the_english_lines() -> None:
    polish = RouteText("swiatlo", "", ("włącz światło w kuchni", "wyłącz lampę w salonie"))
    assert _background.languages_of([polish]) == ("en",)
    assert _background.far_from([polish])[:1] == ("what's the weather like tomorrow",)


def test_the_same_routes_learn_the_same_background_whatever_else_was_learned() -> None:
    first = _background.background_for(ENGLISH, ())
    _background.background_for(SPANISH, ())
    assert _background.background_for(ENGLISH, ()) == first


# Messages to the English profile in another language, which the hybrid tier's multilingual
# half routes (tests/routing_core/test_multilingual.py): when the background's first lines in
# every language were learned, the lexical half knew "demain", "morgen", "amanhã" from their
# weather questions and claimed these for the out-of-scope class.
ELSEWHERE = [
    "Est-ce qu'il va pleuvoir demain ?",
    "Wird es morgen regnen?",
    "Vai chover amanhã?",
    "Gaat het morgen regenen?",
]


@pytest.mark.parametrize("message", ELSEWHERE)
def test_a_message_in_another_language_is_not_claimed_by_the_background(message: str) -> None:
    """The lexical half scores it on some route, or has nothing to go on (None), so the
    hybrid's multilingual half decides (scorers/embedding.py, `HybridScorer.score`); all
    zeros with logits would be the out-of-scope class claiming it."""
    scorer = LexicalScorer.build(ENGLISH)
    assert scorer.info.details.get("out_of_scope_examples")  # the background was learned
    names = [route.name for route in ENGLISH]
    assert any(scorer.score(message, names)) or scorer.logits(message) is None
    assert not any(scorer.score("tell me a joke", names))  # while English small talk is
