"""Built-in triage lexicons in more languages: real sentences triage as a person would judge
them, mixes are valid pack settings, and English alone is exactly the built-in default."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import triage
from routing_core.lexicons import LEXICONS, is_question_pattern, mix, question_pattern
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


# No deadline: a ten-language mix's question pattern takes ~30 ms to vet and compile on a
# quiet machine, several times that on a shared one.
@settings(deadline=None)
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


# Three sentences a language, this file's own: an act, a request to understand, a question.
NEW_LANGUAGES = [
    ("pt", "Cancele a minha assinatura, por favor", "action", "cancele"),
    ("pt", "Explique a diferença entre os dois planos", "knowledge", "explique"),
    ("pt", "Quanto custa o envio para Lisboa?", "knowledge", "quanto"),
    ("it", "Annulla il mio ordine di ieri", "action", "annulla"),
    ("it", "Spiegami perché la bolletta è così alta", "knowledge", "spiegami"),
    ("it", "Dove posso trovare la mia fattura?", "knowledge", "dove"),
    ("nl", "Annuleer mijn bestelling van gisteren", "action", "annuleer"),
    ("nl", "Vertel me het verschil tussen de abonnementen", "knowledge", "vertel"),
    ("nl", "Hoeveel kost verzending naar België?", "knowledge", "hoeveel"),
    ("pl", "Anuluj moje zamówienie z wczoraj", "action", "anuluj"),
    ("pl", "Wyjaśnij różnicę między tymi planami", "knowledge", "wyjaśnij"),
    ("pl", "Dlaczego pobrano ode mnie opłatę dwa razy?", "knowledge", "dlaczego"),
    ("ru", "Отмени мой вчерашний заказ", "action", "отмени"),
    ("ru", "Объясни разницу между тарифами", "knowledge", "объясни"),
    ("ru", "Почему с меня списали деньги дважды?", "knowledge", "почему"),
    ("zh", "取消我昨天的订单", "action", "取消"),
    ("zh", "打开厨房的灯", "action", "打开"),
    ("zh", "解释一下这两个套餐的区别", "knowledge", "解释"),
    ("zh", "为什么我被扣了两次钱？", "knowledge", "为什么"),
    ("zh", "關閉客廳的燈", "action", "關閉"),
    ("zh", "運費是多少？", "knowledge", "多少"),
    ("ja", "キャンセルしてください", "action", "キャンセルして"),
    ("ja", "解約したいです", "action", "解約したい"),
    ("ja", "なぜ二回請求されたのですか", "knowledge", "なぜ"),
    ("ja", "送料はいくらですか？", "knowledge", "いくら"),
]


@pytest.mark.parametrize(("code", "message", "label", "verb"), NEW_LANGUAGES)
def test_real_sentences_triage_in_the_new_languages(code, message, label, verb):
    verdict = _classifier(code).classify(message)

    assert verdict.label == label, verdict.reasoning
    assert verb in verdict.reasoning


@pytest.mark.parametrize(("code", "message", "label", "verb"), NEW_LANGUAGES)
def test_the_new_languages_triage_alike_in_a_mix_with_english(code, message, label, verb):
    assert _classifier("en", code).classify(message).label == label


def test_ten_languages_have_a_lexicon():
    assert len(LEXICONS) >= 10
    assert {"pt", "it", "nl", "pl", "ru", "zh", "ja"} <= set(LEXICONS)


def test_a_chinese_word_is_found_inside_the_run_of_characters():
    # "Turn on the kitchen light" is one token for the word rule; the verb opens it.
    verdict = _classifier("zh").classify("请打开厨房的灯然后关闭卧室的灯")
    assert "打开" in verdict.reasoning and "关闭" in verdict.reasoning
    assert verdict.action_score == pytest.approx(0.5)  # two hits, not the first word


def test_a_chinese_word_inside_a_longer_one_is_one_hit():
    verdict = _classifier("zh").classify("为什么")
    assert verdict.reasoning.count("什么") == 1  # "为什么" alone, not also "什么"


def test_a_chinese_noun_of_an_act_does_not_make_a_question_an_action():
    # "When does the refund arrive?": 退款 names the refund here.
    assert _classifier("zh").classify("退款什么时候到账").label != "action"
    assert _classifier("zh").classify("我要退款").label != "knowledge"


def test_a_chinese_question_ends_with_its_particle_or_a_full_width_mark():
    pattern = re.compile(mix(["zh"]).question_pattern)
    assert pattern.search("可以用信用卡付款吗")
    assert pattern.search("运费多少？")
    assert not pattern.search("打开厨房的灯")


def test_a_lexicon_with_no_opening_words_does_not_match_every_start():
    assert not re.compile(mix(["zh"]).question_pattern).search("cancel my order")


def test_the_english_default_still_matches_whole_tokens_only():
    # English words inside a longer token are not hits: only unspaced scripts are searched.
    assert IntentClassifier().classify("cancellation policy").action_score == 0


def test_a_japanese_act_with_its_object_first_is_not_called_knowledge():
    # "Please cancel the booking": the verb comes last, one signal, below the floor (the
    # docstring of routing_core.lexicons says why); never the other lane.
    verdict = _classifier("ja").classify("予約をキャンセルしてください")
    assert verdict.label == "ambiguous" and verdict.action_score > verdict.knowledge_score


def test_a_japanese_noun_or_past_is_not_an_act():
    # "How much is the cancellation fee?", "Where is the item I ordered?"
    assert _classifier("ja").classify("キャンセル料はいくらですか").label == "knowledge"
    assert _classifier("ja").classify("注文した商品はどこですか").label == "knowledge"


@settings(deadline=None)
@given(st.sets(st.sampled_from(sorted(LEXICONS)), min_size=1))
def test_every_mix_s_question_pattern_is_known_as_a_built_in_one(codes):
    """Searched outside the regex budget (docs/pack-format.md, Regular expressions)."""
    assert is_question_pattern(mix(sorted(codes)).question_pattern)


@given(st.lists(st.text(min_size=1, max_size=8), max_size=6))
def test_a_question_pattern_of_any_words_is_known_as_one(words):
    assert is_question_pattern(question_pattern(words))


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?i)\?\s*$|^\s*(?:what|how.*)\b",  # an unescaped repeat among the words
        r"(?i)\?\s*$|^\s*(?:(a+)+)\b",
        r"(?i)\?\s*$|^\s*(?:what|)\b",  # an empty word matches every start
        r"\?\s*$|^\s*(?:what)\b",  # another flag
        r"(?i)\?\s*$|^\s*(?:what)\b|x*y*x*y*z",
        triage.DEFAULT_QUESTION_PATTERN + "|(a|aa)+",
        r"^(what|how)",
    ],
)
def test_a_pattern_a_person_wrote_is_not_taken_for_a_built_in_one(pattern):
    assert not is_question_pattern(pattern)
