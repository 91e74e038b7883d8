"""Any script: words kept whole with their marks, scripts without spaces split into bigrams."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core.scorers._encoding import (
    FEATURES_VERSION,
    UNCHANGED_FEATURES_VERSION,
    fingerprint,
)
from routing_core.scorers._terms import is_segmented, marked_words, message_words
from routing_core.scorers.base import RouteText
from routing_core.scorers.lexical import LexicalScorer
from routing_core.text import words
from routing_core.triage import IntentClassifier


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Chinese: "I want a refund, thanks"
        ("我想退款，谢谢", ["我想", "想退", "退款", "谢谢"]),
        # Japanese: "the item I ordered has not arrived yet" (kanji and kana together)
        (
            "注文した商品がまだ届きません",
            [
                "注文",
                "文し",
                "した",
                "た商",
                "商品",
                "品が",
                "がま",
                "まだ",
                "だ届",
                "届き",
                "きま",
                "ませ",
                "せん",
            ],
        ),
        # Japanese katakana with the prolonged sound mark: "order a coffee"
        ("コーヒーを注文", ["コー", "ーヒ", "ヒー", "ーを", "を注", "注文"]),
        # Thai: "I want my money back" (vowel and tone marks stay on their consonants)
        ("ฉันต้องการคืนเงิน", ["ฉัน", "นต้", "ต้อ", "อง", "งก", "กา", "าร", "รคื", "คืน", "นเ", "เงิ", "งิน"]),
        # Devanagari (Hindi): "I want a refund": vowel signs and virama kept in the word
        ("मुझे रिफंड चाहिए", ["मुझे", "रिफंड", "चाहिए"]),
        # Arabic with and without harakat: "welcome", "I want to get my money back"
        ("مَرْحَبًا بكم", ["مَرْحَبًا", "بكم"]),
        ("أريد استرداد أموالي", ["أريد", "استرداد", "أموالي"]),
        # Hebrew: "I want a refund"
        ("אני רוצה החזר כספי", ["אני", "רוצה", "החזר", "כספי"]),
        # Mixed: Latin words stay whole beside Chinese bigrams; a lone character stays
        ("My iPhone 我的订单 猫", ["my", "iphone", "我的", "的订", "订单", "猫"]),
        ("我要3个", ["我要", "3", "个"]),
    ],
)
def test_message_words_segments_each_script_as_its_readers_would(
    text: str, expected: list[str]
) -> None:
    assert message_words(text) == expected


# Assigned characters below the CJK blocks: Latin, Greek, Cyrillic, Arabic, Hebrew, Indic,
# Thai, punctuation, symbols (`regex` and `unicodedata` may know different Unicode versions
# for characters assigned recently, which neither rule is about).
SCRIPTS = st.characters(max_codepoint=0x2FFF, exclude_categories=("Cn", "Cs", "Co"))


@given(st.text(alphabet=SCRIPTS, max_size=200))
def test_text_the_new_rules_do_not_touch_has_exactly_the_words_it_had(text: str) -> None:
    # The premise of the fast path and of keeping version 3's fingerprint for such texts.
    if not is_segmented(text):
        assert marked_words(text) == words(text)
    assert message_words(text) == (marked_words(text) if is_segmented(text) else words(text))


@given(st.text(alphabet=st.characters(codec="ascii"), max_size=200))
def test_plain_ascii_text_is_never_segmented(text: str) -> None:
    assert not is_segmented(text)
    assert marked_words(text) == words(text)


@given(st.text(max_size=300))
def test_message_words_never_raises_and_never_yields_an_empty_word(text: str) -> None:
    out = message_words(text)
    assert all(out)
    # Every word is made of the text's own characters, lowercased.
    joined = text.lower()
    for word in out:
        assert all(c in joined for c in word)


CHINESE = [
    RouteText("refund", "退款", ("我想退款", "请给我退款", "怎么申请退款", "退款什么时候到账")),
    RouteText("delivery", "物流", ("我的快递到哪了", "包裹还没到", "查询物流信息", "快递太慢了")),
]


def test_a_chinese_profile_routes_a_paraphrase_and_explains_it_with_bigrams() -> None:
    scorer = LexicalScorer.build(CHINESE)
    message = "我要退款可以吗"
    scores = scorer.score(message, ["refund", "delivery"])
    assert scores[0] > scores[1]
    evidence = [t.term for t in scorer.explain(message, "refund")]
    assert "退款" in evidence
    assert message not in evidence  # never the whole sentence as one term


def test_a_japanese_and_a_thai_message_find_their_route() -> None:
    routes = [
        RouteText("order", "", ("注文した商品がまだ届きません", "注文の状況を確認したい")),
        RouteText("refund", "", ("返金してください", "返金の手続きを教えて")),
        RouteText("thai_refund", "", ("ฉันต้องการคืนเงิน", "ขอคืนเงินได้ไหม")),
    ]
    scorer = LexicalScorer.build(routes)
    names = [r.name for r in routes]
    for message, route in [
        ("商品が届きません", "order"),
        ("返金をお願いします", "refund"),
        ("คืนเงินให้ฉันหน่อย", "thai_refund"),
    ]:
        scores = scorer.score(message, names)
        assert names[scores.index(max(scores))] == route, message


@pytest.mark.parametrize(
    ("message", "script"),
    [("我想退款，谢谢", "Han"), ("ฉันต้องการคืนเงิน", "Thai"), ("मुझे रिफंड चाहिए", "Devanagari")],
)
def test_triage_says_its_lexicons_do_not_cover_the_language(message: str, script: str) -> None:
    verdict = IntentClassifier().classify(message)
    assert verdict.label == "ambiguous"
    assert verdict.reasoning == (
        f"no signals: the triage lexicons do not cover this language ({script} script)"
    )


def test_triage_keeps_no_signals_for_a_language_its_lexicons_are_in() -> None:
    classifier = IntentClassifier()
    assert classifier.classify("hello there").reasoning.startswith("no signals; action 0.00")
    chinese = IntentClassifier(action_verbs=["退款"], knowledge_verbs=["什么"])
    assert "do not cover" not in chinese.classify("我想退款，谢谢").reasoning


def _fingerprint_as(version: str, routes: list[RouteText]) -> str:
    texts = [[r.name, r.description, list(r.examples), list(r.keywords)] for r in routes]
    canonical = json.dumps([version, texts], ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def test_only_a_profile_with_segmented_text_gets_the_new_fingerprint() -> None:
    english = [RouteText("billing", "invoices", ("why was I charged twice",), ("invoice",))]
    arabic = [RouteText("refund", "", ("أريد استرداد أموالي",))]
    for unchanged in (english, arabic):  # same terms as before: stored models stay valid
        assert fingerprint(unchanged) == _fingerprint_as(UNCHANGED_FEATURES_VERSION, unchanged)
    assert fingerprint(CHINESE) == _fingerprint_as(FEATURES_VERSION, CHINESE)
    assert is_segmented("我想退款") and is_segmented("मुझे") and not is_segmented("أريد")
