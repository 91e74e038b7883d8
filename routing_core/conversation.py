"""Following a conversation: what a turn after the first means in the route it is in.

Real users, once a conversation has a topic, mostly type turns that carry no topic of
their own: acknowledgements ("ok great", "yes please"), confirmations ("that is correct"),
short answers and slot values ("at 7 pm", "for two", "no, the other one"). Judged alone,
such a turn lands on whichever route's examples happen to hold the same small words, or
opens a menu. Two mechanisms read a turn in the light of the route the conversation is in
(docs/decisions.md, "Routing that follows the conversation"):

- **No new topic.** A turn made only of acknowledgement, confirmation, courtesy, function,
  number and time words (a built-in lexicon in English, Spanish, French and German, like the
  triage words) stays on the incumbent by rule, and the decision's evidence says so.
- **The incumbent as a prior.** Every other turn is judged on pooled scores: the scorer's
  scores for the message times the square root of the scorer's scores for the incumbent's
  own text (its name and description read as a message), renormalised to the message's
  total. A conversation's next topic tends to sit near the one it is in (searching for a
  bus, then buying the ticket), and the incumbent itself starts ahead. A message sure of
  one route on its own (a calibrated score of 0.75 or more) is judged alone: a real change
  of topic moves decisively.

Only a scorer whose scores are a probability distribution over the routes (the built-in
ones) is pooled: for others the product has no meaning, and their turns are judged alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from routing_core._types import Float64Array
from routing_core.text import turn_words

# The prior's weight against the message's (1): the prior's odds count as their square root,
# so the message's own evidence outweighs it. Not tuned per data set (docs/decisions.md).
PRIOR_WEIGHT = 0.5
# The prior is clipped here: it favours the incumbent over any route by a factor of at most
# sqrt(1 / PRIOR_FLOOR) = 1,000, so a message a thousand times surer of another route than of
# the incumbent always moves, however unrelated the two routes' texts are.
PRIOR_FLOOR = 1e-6
# A message whose own top score is at least this share (a calibrated probability: three
# chances in four) names its topic decisively: it is judged alone, so a real change of topic
# moves however strong the incumbent's prior is.
NEW_TOPIC_SHARE = 0.75
# How far a scorer's scores may stray from a distribution (float32 rounding) and still be
# pooled as one; scores summing to less (a pack's out-of-scope share) are pooled too.
_SUM_TOLERANCE = 1e-3

# Words that acknowledge, confirm, refuse, thank or close, by language. A turn made only of
# these, function, number and time words carries no topic of its own. Verbs that name an action
# ("book", "cancel", "reservar") are left out on purpose: "yes, book it" is a request.
_ACKNOWLEDGEMENTS = """
    yes yeah yea yep yup ya aye ok okay okey k kk sure fine great good perfect right correct
    exactly absolutely definitely certainly indeed agreed alright allright cool awesome nice
    lovely wonderful excellent brilliant fantastic super superb amazing splendid neat sweet
    thanks thank thx ty cheers appreciate appreciated welcome please pls plz bye goodbye
    no nope nah not never none neither nothing sounds works fair enough true
    done sorry oh ah uh um hmm well anyway also either actually really quite totally
    accord acuerdo
    sí si vale claro perfecto bueno buena bien exacto correcto gracias favor adiós vale
    genial estupendo listo de acuerdo cierto
    oui ouais d accord parfait bien bon bonne exact exactement merci plaît plait voilà
    super génial entendu volontiers non
    ja jawohl genau gut okay klar perfekt richtig stimmt danke bitte prima toll super
    einverstanden nein gerne tschüss
"""
# English function words: articles, pronouns, auxiliaries, prepositions, conjunctions, the
# question words, and the verbs of wanting and asking that open any request ("I want",
# "let me", "can you get") without naming what is wanted. Kept here rather than borrowed
# from the lexical scorer's stop words: this list says what may fill a turn with no topic,
# and it must not change when the scorer's vocabulary rules do.
_ENGLISH_FUNCTION_WORDS = """
    a an the this that these those it its itself i me my mine myself we us our ours you your
    yours yourself he him his she her hers they them their theirs one ones
    is am are was were be been being do does did doing have has had having will would shall
    should can could may might must
    to of in on at by for from with without about into onto over under up down off out
    after before between during through until than then so and or nor but if as because
    just only also too very more most much many some any all both each every few other
    another same such own again still yet already here there now once
    what which who whom whose when where why how
    want need like get let go ahead tell know hi hello hey
"""
# Function words of Spanish, French and German: articles, pronouns, prepositions,
# auxiliaries, conjunctions.
_FUNCTION_WORDS = """
    s t d ll re ve m o
    el la los las un una unos unas lo le les me te se nos yo tú tu usted eso esto esa ese
    es está esta estoy sea ser y o que de del a al en con por para mi mis su sus muy más
    ya también eso sí pero
    le la les un une des du de d l j je tu il elle nous vous ce c ça cela et ou est suis
    sont en à au aux avec pour par mon ma mes ton ta son sa ses très plus aussi mais que qu
    der die das den dem des ein eine einen einem einer ich du er sie es wir ihr ist bin sind
    und oder zu zum zur mit für von bei mein meine dein sehr auch noch aber das dass
"""
_NUMBER_WORDS = """
    zero one two three four five six seven eight nine ten eleven twelve fifteen twenty
    thirty forty fifty hundred first second third fourth fifth half quarter once twice
    both couple few several single double
    uno dos tres cuatro cinco seis siete ocho nueve diez primero segundo tercero
    deux trois quatre cinq sept huit neuf dix premier deuxième troisième
    eins zwei drei vier fünf sechs sieben acht neun zehn erste zweite dritte
"""
# When: the times, days and months a short answer gives (a slot value, not a topic).
_TIME_WORDS = """
    pm noon midnight clock morning afternoon evening night tonight today tomorrow yesterday
    week weekend next last this monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november december
    mañana tarde noche hoy lunes martes miércoles jueves viernes sábado domingo
    matin soir demain aujourd hui lundi mardi mercredi jeudi vendredi samedi dimanche
    morgen abend heute montag dienstag mittwoch donnerstag freitag samstag sonntag uhr
"""
# Digits with what is typed around them: 7, 7pm, 19h30 (as "19h30"), 2nd, 4th, 10am.
_NUMBER = re.compile(r"\d+(?:st|nd|rd|th|am|pm|h|h\d+|er|e|º|ª)?")


@cache
def no_topic_words() -> frozenset[str]:
    """Every word a turn with no topic of its own may hold."""
    every = (_ACKNOWLEDGEMENTS, _ENGLISH_FUNCTION_WORDS, _FUNCTION_WORDS, _NUMBER_WORDS)
    return frozenset(" ".join((*every, _TIME_WORDS)).split())


_NO_TOPIC_WORDS = no_topic_words()


def carries_no_topic(text: str) -> bool:
    """True when every word of the turn is an acknowledgement, function, number or time word.

    A turn with no word at all ("👍", "...") carries no topic either: it cannot start one.
    Words the pack does not know (a place, a name) are not counted as no topic: with a
    few examples a route, most of a pack's real words are unknown to it, and the scorer's
    character n-grams still read "charged" as "charges".
    """
    quiet = _NO_TOPIC_WORDS
    # Word by word, usually tokenised already (by triage): most turns have a topic word, and
    # the first that is not in the lexicon and is no number ("7pm") settles it. A number
    # starts with a decimal digit (`\d`), so a word that does not needs no regex.
    for word in turn_words(text):
        if word not in quiet and not (word[0].isdecimal() and _NUMBER.fullmatch(word)):
            return False
    return True


def no_topic_reason(incumbent: str) -> str:
    """The plain-words reason a decision's evidence gives for a turn that stayed by rule."""
    return (
        "the message only acknowledges, confirms or answers (no word of a new topic), "
        f"so the conversation stays on {incumbent}"
    )


def is_distribution(scores: Float64Array) -> bool:
    """Scores a prior may be pooled with: finite, in [0, 1], summing to at most 1 (NaN
    fails every comparison, and an infinity makes the sum infinite)."""
    if not len(scores):
        return False
    total = float(scores.sum())
    return 0.0 < total <= 1.0 + _SUM_TOLERANCE and float(scores.min()) >= 0.0


def is_new_topic(scores: Float64Array) -> bool:
    """The message alone is sure of one route (`NEW_TOPIC_SHARE`): judged without the prior,
    it moves there whatever the conversation was about."""
    return float(scores.max()) >= NEW_TOPIC_SHARE


@dataclass(frozen=True, slots=True)
class Prior:
    """A conversation's prior ready to pool: the incumbent's scores, clipped and raised to
    `PRIOR_WEIGHT` once, when the router first meets the incumbent (the power is most of
    pooling's cost on every later turn)."""

    weights: Float64Array

    @classmethod
    def of(cls, prior: Float64Array) -> Prior:
        weights = np.maximum(prior, PRIOR_FLOOR) ** PRIOR_WEIGHT
        weights.setflags(write=False)
        return cls(weights)

    def __len__(self) -> int:
        return len(self.weights)


def pool(scores: Float64Array, prior: Float64Array | Prior) -> Float64Array:
    """The message's scores read in the light of the incumbent's: the message's odds times
    the square root of the prior's (a log-linear pool), renormalised to the message's own
    total (so an out-of-scope share is kept).

    Both are distributions over the same routes (`is_distribution`), in the same order.
    """
    weights = (prior if isinstance(prior, Prior) else Prior.of(prior)).weights
    pooled: Float64Array = scores * weights
    total = float(pooled.sum())
    if total > 0.0:
        pooled *= float(scores.sum()) / total
    return pooled


def pooled_turn(scores: Float64Array, prior: Prior) -> tuple[Float64Array, int] | None:
    """The message's scores pooled with the prior, and the message's own top index, when the
    prior reads this turn: `is_distribution(scores)`, not `is_new_topic(scores)`, then
    `pool(scores, prior)`. None when it does not (the turn is judged alone).

    The same checks and arithmetic as those three, each reduction done once and without
    numpy's Python wrappers: they are what a turn after the first costs over a first turn
    (docs/benchmarks.md, "Following the conversation").
    """
    if not len(scores) or len(prior.weights) != len(scores):  # the array's len: no Python call
        return None
    total = float(np.add.reduce(scores))
    if not 0.0 < total <= 1.0 + _SUM_TOLERANCE or not float(np.minimum.reduce(scores)) >= 0.0:
        return None
    alone = int(scores.argmax())
    if scores.item(alone) >= NEW_TOPIC_SHARE:  # the first of the highest: `scores.max()`
        return None
    pooled: Float64Array = scores * prior.weights
    pooled_total = float(np.add.reduce(pooled))
    if pooled_total > 0.0:
        pooled *= total / pooled_total
    return pooled, alone


def prior_text(name: str, description: str) -> str:
    """The incumbent's own text as the prior reads it: its name's words, then its description."""
    words_of_name = name.replace("_", " ").replace("-", " ")
    return f"{words_of_name}. {description.strip()}" if description.strip() else words_of_name


__all__ = [
    "PRIOR_WEIGHT",
    "Prior",
    "carries_no_topic",
    "is_distribution",
    "is_new_topic",
    "no_topic_reason",
    "no_topic_words",
    "pool",
    "pooled_turn",
    "prior_text",
]
