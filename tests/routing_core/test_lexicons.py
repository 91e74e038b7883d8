"""Built-in triage lexicons in more languages: real sentences triage as a person would judge
them, mixes are valid pack settings, and English alone is exactly the built-in default."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core import triage
from routing_core.lexicons import LEXICONS, mix
from routing_core.pack import TriageSettings
from routing_core.triage import IntentClassifier


def _classifier(*codes: str) -> IntentClassifier:
    chosen = mix(codes)
    return IntentClassifier(
        action_verbs=chosen.action_verbs,
        knowledge_verbs=chosen.knowledge_verbs,
        question_pattern=chosen.question_pattern,
    )


def test_english_alone_is_exactly_the_built_in_default():
    english = mix(["en"])
    assert english.action_verbs == triage.DEFAULT_ACTION_VERBS
    assert english.knowledge_verbs == triage.DEFAULT_KNOWLEDGE_VERBS
    assert english.question_pattern == triage.DEFAULT_QUESTION_PATTERN


@pytest.mark.parametrize(
    ("code", "message", "label", "verb"),
    [
        ("es", "Cancela mi suscripción, por favor", "action", "cancela"),
        ("es", "¿Cómo cambio la contraseña de mi cuenta?", "knowledge", "cómo"),
        ("es", "¿ Dónde está mi pedido", "knowledge", "dónde"),
        ("es", "Explícame la diferencia entre los dos planes", "knowledge", "explícame"),
        ("fr", "Annulez ma commande d'hier", "action", "annulez"),
        ("fr", "Comment puis-je changer mon mot de passe ?", "knowledge", "comment"),
        ("fr", "Rembourse-moi la dernière facture", "action", "rembourse"),
        ("de", "Storniere meine Bestellung von gestern", "action", "storniere"),
        ("de", "Wie kann ich mein Passwort ändern?", "knowledge", "wie"),
        ("de", "Lösche mein Konto sofort", "action", "lösche"),
    ],
)
def test_real_sentences_triage_with_their_language_lexicon(code, message, label, verb):
    verdict = _classifier(code).classify(message)

    assert verdict.label == label, verdict.reasoning
    assert verb in verdict.reasoning


@pytest.mark.parametrize(
    "message",
    ["Cancela mi suscripción", "Annulez ma commande", "Storniere meine Bestellung"],
)
def test_the_english_default_finds_no_signal_in_those_sentences(message):
    assert IntentClassifier().classify(message).label == "ambiguous"


def test_a_mix_triages_each_language_and_english_still_works():
    classifier = _classifier("en", "es", "de")

    assert classifier.classify("cancel my order").label == "action"
    assert classifier.classify("Cancela mi pedido").label == "action"
    assert classifier.classify("Was kostet der Versand?").label == "knowledge"
    assert classifier.classify("what does this plan include").label == "knowledge"


def test_a_spanish_question_is_opened_by_its_inverted_mark():
    pattern = re.compile(mix(["es"]).question_pattern)
    assert pattern.search("¿me ayudas con la factura")
    assert not re.compile(mix(["fr"]).question_pattern).search("¿me ayudas con la factura")


def test_an_unknown_language_or_none_is_refused():
    with pytest.raises(KeyError):
        mix(["xx"])
    with pytest.raises(KeyError):
        mix([])


@given(st.sets(st.sampled_from(sorted(LEXICONS)), min_size=1))
def test_every_mix_is_a_valid_pack_setting_and_a_working_classifier(codes):
    chosen = mix(sorted(codes))
    settings = TriageSettings(
        action_verbs=tuple(sorted(chosen.action_verbs)),
        knowledge_verbs=tuple(sorted(chosen.knowledge_verbs)),
        question_pattern=chosen.question_pattern,
    )
    assert settings.question_pattern == chosen.question_pattern
    for code in codes:  # each chosen language's words are all in the mix
        assert LEXICONS[code].action_verbs <= chosen.action_verbs
        assert LEXICONS[code].knowledge_verbs <= chosen.knowledge_verbs
    _classifier(*codes).classify("¿Qué? Was? What?")


def test_no_word_is_both_an_action_and_a_knowledge_word_in_any_mix():
    every = mix(LEXICONS)
    assert not every.action_verbs & every.knowledge_verbs
