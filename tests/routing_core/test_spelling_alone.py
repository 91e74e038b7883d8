"""A message with no known word is read on the fragments of its spelling alone, and leans on
them only as much as they cover it (docs/pack-format.md, Lexical scorer, step 5).

Packs in languages whose words inflect learn character n-grams, and a made-up word shares a
few of them with some route's words: before this rule "blorf snarg" went to a German
profile's lights at 0.94, and keyboard mashing to a Spanish profile's routes. The profiles are
this file's own (written for it, no data set's).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core import Pack, Router
from routing_core.build import build_pack
from routing_core.scorers import _terms
from routing_core.scorers.lexical import LexicalScorer

# A home assistant in Spanish: five routes, 24 examples each (enough texts for a pack that
# learns its words' fragments fully).
ROOMS = ["la cocina", "el salón", "el dormitorio", "el baño", "el pasillo", "la oficina"]
TEMPLATES = {
    "luces": [
        "enciende la luz de {}",
        "apaga las luces de {}",
        "enciende la lámpara de {}",
        "baja la intensidad de la luz en {}",
    ],
    "temporizador": [
        "pon un temporizador en {}",
        "cancela el temporizador de {}",
        "cuánto falta para el temporizador de {}",
        "crea un temporizador de diez minutos en {}",
    ],
    "temperatura": [
        "qué temperatura hace en {}",
        "sube la calefacción en {}",
        "cuántos grados hace en {}",
        "baja el termostato de {}",
    ],
    "musica": [
        "pon música en {}",
        "pausa la música de {}",
        "sube el volumen del altavoz de {}",
        "reproduce mis canciones en {}",
    ],
    "persianas": [
        "abre las persianas de {}",
        "cierra las persianas de {}",
        "sube la persiana de {}",
        "cierra las cortinas de {}",
    ],
}
SPANISH = [
    {"name": name, "examples": [t.format(room) for room in ROOMS for t in templates]}
    for name, templates in TEMPLATES.items()
]

# Typed by nobody for any route, each sharing a fragment or two with one route's words
# ("qqluzq" has "luz"): read whole, those fragments sent each to that route at 1.0.
MADE_UP = ["qqluzq", "vvmusqq", "xkalefzz wqp", "kwpers zzlamq", "fnord kraxel"]


@pytest.fixture(scope="module")
def spanish() -> Pack:
    return build_pack(SPANISH, slug="casa")


@pytest.mark.parametrize("message", MADE_UP)
def test_made_up_words_are_unmatched_in_a_profile_written_in_spanish(
    spanish: Pack, message: str
) -> None:
    decision = Router(spanish).route(message)
    assert decision.verdict == "unmatched", (message, decision.route)


def test_a_misspelt_word_most_of_whose_spelling_is_known_still_routes(spanish: Pack) -> None:
    router = Router(spanish)
    # Neither word is one the routes' texts hold, but most of their fragments are.
    for message, route in (("temporizadorr", "temporizador"), ("persianitas", "persianas")):
        decision = router.route(message)
        assert decision.verdict == "move" and decision.route == route, message


def test_a_message_scores_no_more_than_the_share_of_its_spelling_the_routes_know(
    spanish: Pack,
) -> None:
    scorer = Router(spanish).scorer
    assert isinstance(scorer, LexicalScorer)
    whole = scorer.logits("temporizador")
    fragment = scorer.logits("temporiz xqwvbk")
    assert whole is not None and fragment is not None
    # The known word is read in full; the half-known message leans on its fragments less.
    assert fragment.max() - fragment.mean() < whole.max() - whole.mean()


@given(st.integers(min_value=0, max_value=2_000))
def test_the_n_grams_counted_are_the_ones_step_3_makes(length: int) -> None:
    word = "x" * length
    assert _terms.char_gram_count(length) == len(_terms.word_terms(word)[1])


def test_the_share_of_spelling_known_is_told_only_for_a_message_read_on_it_alone(
    spanish: Pack,
) -> None:
    scorer = Router(spanish).scorer
    assert isinstance(scorer, LexicalScorer)
    # "temporizadorr": 30 of its 36 n-grams are known; the six that hold its "rr" are not.
    assert scorer.spelling_share("temporizadorr") == pytest.approx(30 / 36)
    assert scorer.spelling_share("qqluzq") is not None
    assert scorer.spelling_share("qqluzq") < 0.1  # type: ignore[operator]
    assert scorer.spelling_share("pon un temporizador") is None  # known words: read as usual
    assert scorer.spelling_share("zzzz") is None  # nothing known at all
    assert scorer.spelling_share("") is None
