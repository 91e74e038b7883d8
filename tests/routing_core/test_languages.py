"""Each message's language (`routing_core.languages`): named when clear, None when unsure.

The sentences are this file's own, in ten languages and five scripts.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

from routing_core import languages

SENTENCES = [
    ("en", "I would like to cancel my subscription and get a refund please"),
    ("es", "¿Por qué me cobraron dos veces este mes en la tarjeta?"),
    ("fr", "Est-ce qu'il va pleuvoir demain après-midi à Lyon ?"),
    ("de", "Mach bitte das Licht in der Küche und im Flur an"),
    ("pt", "Eu quero cancelar a minha assinatura, por favor"),
    ("it", "Vorrei sapere perché la mia bolletta è così alta questo mese"),
    ("nl", "Kun je het licht in de woonkamer uitdoen alsjeblieft"),
    ("pl", "Dlaczego pobrano ode mnie pieniądze dwa razy w tym miesiącu?"),
    ("ru", "Почему с меня списали деньги дважды в этом месяце?"),
    ("zh", "为什么这个月从我的账户扣了两次钱？"),
    ("ar", "لماذا تم خصم المبلغ من حسابي مرتين هذا الشهر؟"),
]


@pytest.mark.parametrize(("code", "sentence"), SENTENCES)
def test_a_clear_sentence_is_named_in_its_language(code: str, sentence: str) -> None:
    assert languages.detect(sentence) == code


def test_the_sentences_span_ten_languages_and_four_scripts() -> None:
    from routing_core.triage import scripts

    assert len({code for code, _ in SENTENCES}) >= 10
    assert len(frozenset().union(*(scripts(s) for _, s in SENTENCES))) >= 4


@pytest.mark.parametrize("text", ["", "ok", "123 456", "👍👍👍", "hi!", "   "])
def test_too_little_text_has_no_language(text: str) -> None:
    assert languages.detect(text) is None
    assert languages.guess(text) is None


@pytest.mark.parametrize(("text", "code"), [("Mach Musik an", "de"), ("spegni la luce", "it")])
def test_a_short_message_too_unsure_to_name_still_has_a_best_guess(text: str, code: str) -> None:
    assert languages.detect(text) is None
    assert languages.guess(text) == code


@pytest.mark.parametrize(
    "text", [s for _, s in SENTENCES] + ["Mach Musik an", "spegni la luce", "hello hello", "ok"]
)
def test_one_classification_gives_both_the_guess_and_how_sure_it_is(text: str) -> None:
    code, probability = languages.likeliest(text)
    assert code == languages.guess(text)
    assert languages.detect(text) == (code if probability >= languages.MIN_PROBABILITY else None)
    assert 0.0 <= probability <= 1.0


@pytest.fixture
def classifications(monkeypatch) -> Iterator[list[str]]:
    """The samples the model classifies from here on (nothing kept from before)."""
    model = languages._model()
    calls: list[str] = []

    class Counting:
        def classify(self, sample: str):  # type: ignore[no-untyped-def]
            calls.append(sample)
            return model.classify(sample)

    languages.forget()
    monkeypatch.setattr(languages, "_loaded", Counting())
    yield calls
    languages.forget()  # later tests classify with the real model again


def test_asking_again_about_the_same_message_classifies_it_once(classifications) -> None:
    """A cascade's hybrid tier asks whether it takes a message, then reads it and asks again:
    one classification answers both."""
    text = "Metti un po' di musica jazz in cucina"
    first = languages.likeliest(text)
    assert languages.guess(text) == first[0] and languages.likeliest(text) == first
    assert classifications == [text]


@pytest.mark.parametrize(
    ("text", "letters"), [("Kü.c!", 3), ("Kü.c!h", 4), ("12 Küc", 3), ("12 Küch", 4), ("Küche", 5)]
)
def test_a_message_is_classified_from_four_letters_on(text: str, letters: int) -> None:
    languages.forget()
    code, probability = languages.likeliest(text)
    assert (probability > 0.0) == (letters >= languages.MIN_LETTERS)


def test_a_routes_languages_are_worked_out_again_only_when_its_texts_change(
    classifications,
) -> None:
    """A profile that learns the built-in background asks every route's languages at each
    build and load of its pack: a route whose texts are unchanged is not classified again."""
    texts = [
        "Vorrei sapere perché la mia bolletta è così alta",
        "Mach bitte das Licht in der Küche und im Flur an",
    ]
    assert languages.written_in(texts) == {"it", "de"}
    asked = len(classifications)
    assert languages.written_in(list(texts)) == {"it", "de"} and len(classifications) == asked
    grown = [*texts, "¿Por qué me cobraron dos veces este mes en la tarjeta?"]
    assert languages.written_in(grown) == {"it", "de", "es"} and len(classifications) > asked


def test_an_unsure_guess_is_none_not_a_wrong_name() -> None:
    # Two words common to several languages: the model guesses below MIN_PROBABILITY.
    assert languages.detect("hello hello") is None


def test_names_are_plain_english() -> None:
    assert languages.name("es") == "Spanish"
    assert languages.name("zh") == "Chinese"
    assert languages.name("pt-BR") == "Portuguese"
    assert languages.name("no") == "Norwegian"
    assert languages.name("xx") == "xx"
    assert languages.name(None) == ""


def test_every_code_detect_gives_has_a_name() -> None:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    model = LanguageIdentifier.from_model_file(MODEL_FILE)
    two_letter = {code for code in model.nb_classes if len(code) == 2 and code != "zx"}
    assert all(languages.name(code) != code for code in two_letter)


def test_routing_core_imports_and_says_so_without_the_extra() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["py3langid"] = None  # as if the extra were not installed
        import routing_core
        from routing_core import languages
        assert not languages.available()
        try:
            languages.detect("una frase en español bastante clara")
        except languages.MissingExtra as exc:
            print(exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert "languages` extra" in out.stdout


def test_the_multilingual_routing_fixture_is_named_right_or_not_at_all() -> None:
    # The English-profile fixture's messages (tests/routing_core/test_multilingual.py): short
    # ones may have no language, none has a wrong one, and most are named.
    from tests.routing_core.test_multilingual import MESSAGES

    found = [(code, languages.detect(message)) for code, _, message, _ in MESSAGES]
    assert all(got in (code, None) for code, got in found), found
    assert sum(got == code for code, got in found) >= 10
