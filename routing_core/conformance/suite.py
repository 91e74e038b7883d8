"""The conformance suite's packs and messages, built with the library (conformance/README.md).

Each pack is small and aimed at one part of the routing semantics, except `synthetic150`,
which has CLINC150's size (synthetic text, `synthetic.py`). Every pack stores its learned
lexical model, so a runtime reproduces scores from the pack alone, without training.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from routing_core.build import build_pack
from routing_core.codec import dump_pack, load_pack
from routing_core.conformance import synthetic
from routing_core.lexicons import mix
from routing_core.pack import Pack


@dataclass(frozen=True, slots=True)
class Turn:
    """One message to route; in a conversation, each turn starts where the previous one landed."""

    message: str
    incumbent: str | None = None


@dataclass(frozen=True, slots=True)
class Spec:
    """A pack of the suite: how to build it, the single turns and the conversations to run on it."""

    name: str
    about: str
    build: Callable[[], Pack]
    turns: tuple[Turn, ...]
    conversations: tuple[tuple[str, ...], ...] = ()
    compact: bool = False  # written without indentation (the large pack)
    extras: dict[str, Any] = field(default_factory=dict)


def _with(pack: Pack, **fields: Any) -> Pack:
    """`pack` with top-level fields replaced, validated again as a document."""
    document = json.loads(dump_pack(pack))
    document.pop("checksum")
    document.update(fields)
    return load_pack(document)


def _tiny() -> Pack:
    routes: list[dict[str, Any]] = [
        {"name": "greeting", "examples": ["hello there", "hi", "good morning", "hey, how are you"]},
        {
            "name": "weather",
            "examples": [
                "will it rain tomorrow",
                "what is the forecast",
                "is it cold outside",
                "weather this weekend",
            ],
        },
        {
            "name": "music",
            "examples": [
                "play some jazz",
                "next song please",
                "turn the music up",
                "put on my playlist",
            ],
        },
    ]
    return _with(build_pack(routes, slug="tiny", name="Tiny"), version=1)


TINY_TURNS = (
    Turn("hello"),
    Turn("good morning to you"),
    Turn("is it going to rain"),
    Turn("play jazz"),
    Turn("next song"),
    Turn("what is the forecast for the weekend"),
    Turn("xylophone quantum banana"),
    Turn(""),
    Turn("   "),
    Turn("HELLO THERE!!!"),
    Turn("hello, will it rain?"),
    Turn("play the weather song"),
    Turn("hi", incumbent="music"),
    Turn("turn it up", incumbent="music"),
    Turn("and tomorrow?", incumbent="weather"),
    Turn("a" * 300),
    Turn("🎵🎶 play 🎵"),
)


def _support() -> Pack:
    routes: list[dict[str, Any]] = [
        {
            "name": "billing",
            "description": "invoices, charges and payment methods",
            "examples": [
                "why was I charged twice",
                "download my invoice",
                "update my credit card",
                "my card was declined",
                "what is this charge on my statement",
            ],
            "keywords": ["invoice", "charge"],
            "never": ["where is my parcel"],
        },
        {
            "name": "shipping",
            "description": "parcels, delivery and tracking",
            "examples": [
                "where is my parcel",
                "track my order",
                "my package is late",
                "change my delivery address",
                "when will it arrive",
            ],
        },
        {
            "name": "refunds",
            "description": "money back for orders",
            "examples": [
                "I want a refund",
                "give me my money back",
                "refund my order",
                "how long does a refund take",
            ],
        },
        {
            "name": "account",
            "description": "sign-in and profile",
            "examples": [
                "reset my password",
                "I cannot log in",
                "change my email address",
                "delete my account",
            ],
        },
        {
            "name": "human",
            "description": "hand over to a person",
            "examples": ["talk to a human", "I want an agent", "let me speak to someone"],
            "action": {"kind": "delegate", "agent": "human-desk"},
        },
        {
            "name": "legal",
            "description": "legal threats and lawsuits",
            "examples": ["I will sue you", "my lawyer will contact you", "this is a legal matter"],
            "action": {"kind": "stuck", "message": "Our legal team will write to you."},
        },
    ]
    pack = build_pack(routes, slug="support", name="Support")
    return _with(
        pack,
        version=7,
        rules=[
            {"route": "human", "match": {"keywords": ["real person", "operator"]}},
            {
                "route": "billing",
                "match": {"all": [{"regex": r"\binvoice\b"}, {"keywords": ["copy"]}]},
            },
            {"route": "refunds", "match": {"regex": r"(?i)\bchargeback\b"}},
        ],
        tools=[
            {
                "name": "hydrate_context",
                "description": "load the customer's context",
                "always_include": True,
            },
            {
                "name": "refund_order",
                "description": "refund an order",
                "trigger_keywords": ["refund", "money back"],
            },
            {
                "name": "cancel_order",
                "description": "cancel an order",
                "trigger_keywords": ["cancel"],
            },
            {
                "name": "track_parcel",
                "description": "tracking events",
                "trigger_keywords": ["track", "tracking", "parcel"],
            },
            {
                "name": "reset_password",
                "description": "send a reset link",
                "trigger_keywords": ["reset", "password"],
            },
        ],
        triage={"mode": "enforce", "ambiguity_confidence_floor": 0.55, "min_action_signals": 2},
        default_route="human",
    )


SUPPORT_TURNS = (
    Turn("why was I charged twice?"),
    Turn("please send me a copy of my invoice"),
    Turn("I want to talk to a real person"),
    Turn("can I get an operator"),
    Turn("I filed a chargeback"),
    Turn("track my parcel"),
    Turn("refund my order and cancel the other one"),
    Turn("reset my password"),
    Turn("how long does a refund take?"),
    Turn("my lawyer will sue you"),
    Turn("let me speak to an agent"),
    Turn("where is my parcel", incumbent="billing"),
    Turn("and the invoice?", incumbent="shipping"),
    Turn("ok thanks", incumbent="refunds"),
    Turn("zebra crossing astronomy"),
    Turn("my card was declined and my package is late"),
    Turn("cancel"),
    Turn("Please refund and track the parcel, then reset the password"),
    Turn("what is this charge"),
    Turn("change my email address", incumbent="account"),
)
SUPPORT_CONVERSATIONS = (
    (
        "where is my parcel",
        "it was supposed to arrive monday",
        "fine, refund it then",
        "how long will that take?",
    ),
    ("I cannot log in", "reset my password", "now charge my card", "I want a real person"),
    ("download my invoice", "ok", "I will sue you"),
)


def _espanol() -> Pack:
    routes: list[dict[str, Any]] = [
        {
            "name": "facturas",
            "description": "facturas y cobros",
            "examples": [
                "¿por qué me cobraron dos veces?",
                "descargar mi factura",
                "actualizar mi tarjeta de crédito",
                "mi tarjeta fue rechazada",
                "qué es este cargo",
            ],
        },
        {
            "name": "envios",
            "description": "paquetes y entregas",
            "examples": [
                "¿dónde está mi paquete?",
                "rastrear mi pedido",
                "mi paquete llega tarde",
                "cambiar la dirección de entrega",
            ],
        },
        {
            "name": "devoluciones",
            "description": "reembolsos",
            "examples": [
                "quiero un reembolso",
                "devuélvanme mi dinero",
                "reembolsar mi pedido",
                "cuánto tarda un reembolso",
            ],
        },
        {
            "name": "cuenta",
            "description": "contraseña e inicio de sesión",
            "examples": [
                "restablecer mi contraseña",
                "no puedo iniciar sesión",
                "cambiar mi correo electrónico",
                "borrar mi cuenta",
            ],
        },
    ]
    words = mix(["es", "en"])
    pack = build_pack(routes, slug="espanol", name="Soporte en español")
    return _with(
        pack,
        version=2,
        tools=[
            {
                "name": "reembolsar",
                "description": "reembolsar un pedido",
                "trigger_keywords": ["reembolso", "reembolsar"],
            },
            {
                "name": "rastrear",
                "description": "rastrear un paquete",
                "trigger_keywords": ["rastrear", "paquete"],
            },
        ],
        triage={
            "mode": "enforce",
            "action_verbs": sorted(words.action_verbs),
            "knowledge_verbs": sorted(words.knowledge_verbs),
            "question_pattern": words.question_pattern,
        },
    )


ESPANOL_TURNS = (
    Turn("¿dónde está mi paquete?"),
    Turn("quiero que me devuelvan el dinero"),
    Turn("no puedo entrar a mi cuenta"),
    Turn("¿Por qué me cobraron?"),
    Turn("rastrear el paquete por favor"),
    Turn("reembolsar mi pedido"),
    Turn("FACTURA"),
    Turn("cambiar la dirección", incumbent="envios"),
    Turn("gracias", incumbent="facturas"),
    Turn("où est mon colis ?"),
    Turn("我的包裹在哪里"),
    Turn("Ich möchte mein Passwort zurücksetzen"),
    Turn("el pingüino comió açaí"),
)


def _menus() -> Pack:
    routes: list[dict[str, Any]] = [
        {
            "name": "flights",
            "examples": ["book a flight", "change my flight", "cancel my flight", "flight status"],
        },
        {
            "name": "hotels",
            "examples": [
                "book a hotel",
                "change my hotel booking",
                "cancel my hotel",
                "hotel check-in time",
            ],
        },
        {
            "name": "cars",
            "examples": [
                "rent a car",
                "change my car rental",
                "cancel the car",
                "car pick-up time",
            ],
        },
        {"name": "support", "examples": ["talk to support", "I have a complaint", "nothing works"]},
    ]
    pack = build_pack(routes, slug="menus", name="Trips (guard)")
    policy = {"near_tie_margin": 0.3, "menu_size": 2, "floor": None, "strictness": "guard"}
    return _with(pack, version=4, policy=policy)


MENUS_TURNS = (
    Turn("book"),
    Turn("cancel my booking"),
    Turn("change it"),
    Turn("book a flight and a hotel"),
    Turn("book a flight"),
    Turn("cancel", incumbent="hotels"),
    Turn("change", incumbent="cars"),
    Turn("check-in", incumbent="flights"),
    Turn("weather in paris"),
)


def _synthetic150() -> Pack:
    routes, oos = synthetic.profile()
    return _with(
        build_pack(routes, slug="synthetic150", name="Synthetic, CLINC150 size", out_of_scope=oos),
        version=1,
    )


def _synthetic_turns() -> tuple[Turn, ...]:
    """Fresh requests per route (another seed than the examples'), mixes and out-of-scope."""
    rng = random.Random(4500)
    names = list(synthetic.DOMAINS)
    actions = list(synthetic.ACTIONS)
    turns = [
        Turn(synthetic.message(rng, rng.choice(names), rng.choice(actions))) for _ in range(60)
    ]
    turns += [Turn(synthetic.out_of_scope(rng)) for _ in range(10)]
    turns += [
        Turn(
            f"{synthetic.message(rng, 'travel', 'book')} and {synthetic.message(rng, 'home', 'check')}"
        ),
        Turn("cancel"),
        Turn("my card"),
        Turn("pay it", incumbent="utility_pay"),
        Turn("and the water bill", incumbent="utility_check"),
        Turn("the flight", incumbent="travel_cancel"),
        # The out-of-scope class leads on the whole (its "what is the biggest ..." frames), a
        # route on the content words: taken back (docs/pack-format.md, lexical scoring, step 7).
        Turn("what is the biggest thermostat"),
        Turn("how old is the oldest credit card"),
    ]
    return tuple(turns)


SYNTHETIC_CONVERSATIONS = (
    ("book a flight for me", "the rental car too", "cancel it", "what about the hotel room"),
    ("check my balance", "and my savings", "transfer", "pay the electric bill"),
)


def _background() -> Pack:
    """Six examples a route and no out-of-scope examples: the pack learns the built-in
    background as its out-of-scope class (docs/pack-format.md, Lexical scorer, steps 7-8)."""
    examples = {
        "book_flight": [
            "i want to book a flight to paris",
            "book me a ticket to new york next friday",
            "can i get a flight from london to madrid tomorrow",
            "find me a cheap flight to berlin",
            "reserve a return trip to lisbon",
            "are there flights to tokyo on monday",
        ],
        "baggage": [
            "how many bags can i check",
            "my suitcase did not arrive",
            "what is the weight limit for luggage",
            "can i bring a stroller on board",
            "my bag was damaged on the flight",
            "how much does an extra bag cost",
        ],
        "refund": [
            "i want my money back",
            "how do i get a refund for a cancelled flight",
            "refund my ticket please",
            "when will i get my refund",
            "can i get a refund if i cancel",
            "my refund has not arrived yet",
        ],
        "seat_selection": [
            "i want a window seat",
            "can i choose my seat",
            "change my seat to an aisle",
            "seat me next to my husband",
            "how much is extra legroom",
            "pick a seat for me",
        ],
        "check_in": [
            "how do i check in online",
            "when does check in open",
            "i cannot check in on the app",
            "get my boarding pass",
            "check me in for tomorrow's flight",
            "where is the check in desk",
        ],
    }
    routes: list[dict[str, Any]] = [{"name": n, "examples": e} for n, e in examples.items()]
    return _with(build_pack(routes, slug="background", name="Background"), version=1)


BACKGROUND_TURNS = (
    Turn("what's the weather like in Paris tomorrow"),
    Turn("tell me a joke"),
    Turn("my bag is lost"),
    Turn("what do you recommend"),
    Turn("what do you recommend", incumbent="baggage"),
)
BACKGROUND_CONVERSATIONS = (
    ("my suitcase did not arrive", "what about the red one", "and for my wife too"),
    ("book a flight to rome on friday", "what do you recommend", "i want a window seat"),
)


def _no_route() -> Pack:
    """20 routes of 15 examples that learn no out-of-scope class (`no_background`): a first
    turn's softmax has the "no route" term (docs/pack-format.md, Lexical scorer, step 7)."""
    rng = random.Random(2020)
    domains = ("travel", "home")
    routes: list[dict[str, Any]] = [
        {"name": f"{d}_{a}", "examples": [synthetic.message(rng, d, a) for _ in range(15)]}
        for d in domains
        for a in synthetic.ACTIONS
    ]
    built = build_pack(routes, slug="no-route", name="No route", no_background=True)
    return _with(built, version=1)


def _no_route_turns() -> tuple[Turn, ...]:
    """Fresh requests, off-topic first turns, and the same off-topic text mid-conversation
    (no "no route" term there: step 8)."""
    rng = random.Random(2021)
    turns = [
        Turn(synthetic.message(rng, d, a))
        for d in ("travel", "home")
        for a in ("book", "cancel", "check", "remind")
    ]
    turns += [
        Turn("what's the weather like in paris tomorrow"),
        Turn("who won the match yesterday"),
        Turn("i love pizza"),
        Turn("tell me a joke"),
        Turn("the flight"),
        Turn("who won the match yesterday", incumbent="travel_book"),
        Turn("and the hotel room", incumbent="travel_book"),
    ]
    return tuple(turns)


NO_ROUTE_CONVERSATIONS = (
    ("book a flight for me", "i love pizza", "cancel it"),
    ("tell me a joke", "check the lights", "what about the garage door"),
)


SPECS: tuple[Spec, ...] = (
    Spec("tiny", "three routes: scores, ties, empty and odd messages", _tiny, TINY_TURNS),
    Spec(
        "support",
        "rules (keywords, regex, all), tools, triage, delegate and stuck routes, a default route, conversations",
        _support,
        SUPPORT_TURNS,
        SUPPORT_CONVERSATIONS,
    ),
    Spec(
        "espanol",
        "Spanish routes and triage words, other languages and scripts",
        _espanol,
        ESPANOL_TURNS,
    ),
    Spec("menus", "a wide near-tie margin under guard: menus and stays", _menus, MENUS_TURNS),
    Spec(
        "background",
        "few examples a route: the built-in background's out-of-scope class, first turns and follow-ups",
        _background,
        BACKGROUND_TURNS,
        BACKGROUND_CONVERSATIONS,
    ),
    Spec(
        "no-route",
        "no out-of-scope class: a first turn's share for no route, off-topic turns unmatched",
        _no_route,
        (),
        NO_ROUTE_CONVERSATIONS,
        extras={"turns": _no_route_turns},
    ),
    Spec(
        "synthetic150",
        "CLINC150's size (150 routes x 100 examples, out-of-scope), lexical with its semantic view",
        _synthetic150,
        (),
        SYNTHETIC_CONVERSATIONS,
        compact=True,
        extras={"turns": _synthetic_turns},
    ),
)


def spec_turns(spec: Spec) -> tuple[Turn, ...]:
    """The single turns of `spec` (the large pack's are generated from a seed)."""
    made = spec.extras.get("turns")
    return tuple(made()) if made is not None else spec.turns
