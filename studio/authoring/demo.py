"""The demo profile: a realistic storefront customer-support agent, loaded by `load_demo`."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from studio.models import AuditEntry, Profile, Route, Rule, TestCase, Tool

PROFILE = {
    "slug": "support",
    "name": "Customer support",
    "description": "Storefront support agent: billing, refunds, shipping, orders and accounts.",
    # Messages no route is for: the scorer learns them, so messages like them stay unmatched.
    # Written by topic: their opening words count for little (the out-of-scope class must
    # also lead on a message's content words, docs/pack-format.md), their topics do.
    "out_of_scope": [
        "what's the weather like today",
        "will it rain tomorrow",
        "tell me a joke",
        "who won the football game last night",
        "write me a poem about the sea",
        "recommend a good movie",
        "how tall is Mount Everest",
        "sing me a song",
        # Twenty in all: a profile with fewer also learns routing_core's built-in off-topic
        # background, and the demo shows a profile that has its own (lint's advice).
        "translate good morning into French",
        "give me a recipe for pancakes",
        "how far away is the moon",
        "play some relaxing music",
        "set an alarm for seven",
        "book me a table for two tonight",
        "remind me to call my mother",
        "any good hiking trails near me",
        "who painted the Mona Lisa",
        "how do I make sourdough bread",
        "best time to visit Japan",
        "can you help with my math homework",
    ],
}

ROUTES: list[dict[str, Any]] = [
    {
        "name": "billing",
        "description": "Invoices, charges, payment methods and billing addresses",
        "examples": [
            "why was I charged twice this month",
            "download my invoice for March",
            "update the credit card on my account",
            "what is this charge on my statement",
            "can I pay with PayPal",
            "change my billing address",
            "my payment was declined",
        ],
        "keywords": ["invoice", "charge", "charged", "payment", "credit card", "billing"],
        "never": ["where is my parcel"],
    },
    {
        "name": "refunds",
        "description": "Refund requests, refund status and return policies",
        "examples": [
            "I want my money back",
            "how do I return this item for a refund",
            "when will my refund arrive",
            "the refund hasn't shown up on my card",
            "can I get a refund on a sale item",
            "what is your return policy",
            "I returned the shoes two weeks ago and got nothing",
        ],
        "keywords": ["refund", "money back", "return policy", "returned"],
    },
    {
        "name": "shipping",
        "description": "Delivery options, shipping costs, addresses and delivery times",
        "examples": [
            "how much is shipping to Canada",
            "do you ship internationally",
            "how long does standard delivery take",
            "can I change the delivery address",
            "do you offer next day delivery",
            "which courier do you use",
            "is shipping free over fifty dollars",
            "what are the delivery options",
        ],
        "keywords": ["shipping", "delivery", "courier", "ship"],
    },
    {
        "name": "order_status",
        "description": "Where an existing order is: tracking, dispatch and delays",
        "examples": [
            "where is my order",
            "track my package",
            "my parcel hasn't arrived yet",
            "has my order been dispatched",
            "the tracking number doesn't work",
            "my order is late",
            "when will order 1234 arrive",
        ],
        "keywords": ["tracking", "track", "parcel", "package", "dispatched"],
        "never": ["how much is shipping"],
    },
    {
        "name": "account",
        "description": "Sign-in, passwords, profile details and closing an account",
        "examples": [
            "I forgot my password",
            "how do I change my email address",
            "I can't log in to my account",
            "delete my account",
            "how do I turn on two-factor authentication",
            "update my phone number",
            "my account is locked",
            "what is two-factor authentication",
        ],
        "keywords": ["password", "login", "log in", "sign in", "account", "email address"],
    },
    {
        "name": "tech_support",
        "description": "The website or app is broken: errors, crashes, pages not loading",
        "examples": [
            "the app keeps crashing",
            "the checkout page won't load",
            "I get an error when I add to cart",
            "the website is really slow",
            "the discount code field is broken",
            "images are not showing on the product page",
            "the app won't open on my phone",
        ],
        "keywords": ["error", "crash", "crashing", "bug", "broken", "not loading"],
    },
    {
        "name": "orders",
        "description": "Changing or cancelling an existing order (handled by the order agent)",
        "examples": [
            "cancel my order",
            "add an item to my order",
            "change the size on my order",
            "I ordered the wrong colour",
            "can I still modify my order",
            "remove one item from order 5521",
            "what if I ordered two by mistake",
        ],
        "keywords": ["cancel", "modify", "change my order"],
        "action_kind": "delegate",
        "delegate_agent": "order-agent",
    },
    {
        "name": "human",
        "description": "The customer is frustrated or asks for a person",
        "examples": [
            "let me talk to someone",
            "I want to speak to a manager",
            "this is useless, get me a human",
            "can I call you",
            "put me through to customer service",
            "I've asked three times already",
        ],
        "keywords": ["manager", "speak to", "talk to someone"],
        "action_kind": "stuck",
        "stuck_message": "I'm handing you to a colleague who will reply within a few minutes.",
    },
]

RULES: list[dict[str, Any]] = [
    {
        "route_name": "human",
        "match_kind": "keywords",
        "keywords": ["human", "real person", "agent"],
        "examples": ["I want a real person", "get me a human"],
    },
    {
        "route_name": "billing",
        "match_kind": "all",
        "all_of": [{"regex": r"\binvoices?\b"}, {"keywords": ["copy", "duplicate", "resend"]}],
        "examples": ["please resend my invoice", "I need a copy of the invoice"],
    },
    {
        "route_name": "order_status",
        "match_kind": "regex",
        "regex": r"\b(?:tracking|order)\s*(?:number|no\.?|#)\s*\d+",
        "examples": ["what's happening with order #4412"],
    },
]

TOOLS: list[tuple[str, str, list[str], bool]] = [
    ("hydrate_context", "Load the customer's profile, recent orders and open tickets", [], True),
    ("lookup_invoice", "Find an invoice by number or date", ["invoice", "receipt", "bill"], False),
    (
        "update_payment_method",
        "Replace the card or wallet on file",
        ["credit card", "payment method", "card"],
        False,
    ),
    ("refund_order", "Refund an order or part of it", ["refund", "money back"], False),
    ("create_return", "Create a return label for an order", ["return", "send back"], False),
    (
        "track_shipment",
        "Get the courier's tracking status",
        ["track", "tracking", "parcel", "package", "where is"],
        False,
    ),
    (
        "shipping_quote",
        "Quote shipping cost and time to an address",
        ["shipping", "delivery", "ship"],
        False,
    ),
    ("cancel_order", "Cancel an order that has not shipped", ["cancel"], False),
    ("reset_password", "Send a password reset email", ["password", "reset", "locked"], False),
    (
        "update_account",
        "Change email, phone or name on the account",
        ["email", "phone", "update my"],
        False,
    ),
    (
        "create_ticket",
        "Open a ticket for the technical team",
        ["error", "crash", "broken", "bug"],
        False,
    ),
    (
        "handoff_to_human",
        "Queue the conversation for a human colleague",
        ["human", "manager", "person"],
        False,
    ),
]

# An explicit floor: the lexical scorer's probabilities never reach 0 (character n-grams find a
# little of every route in "asdkjh qwpoeiru"), so without one an out-of-scope message gets a
# menu. See studio/authoring/tests/test_load_demo.py for what it must keep unmatched and what it must route.
POLICY: dict[str, Any] = {"floor": 0.35}

TEST_CASES: list[dict[str, Any]] = [
    {"message": "I was charged twice for one order", "expected_route": "billing"},
    {"message": "where is my parcel", "expected_route": "order_status"},
    {"message": "I want a real person now", "expected_route": "human", "expected_verdict": "move"},
    {"message": "cancel order 5521 please", "expected_route": "orders"},
    {"message": "when does my refund come through", "expected_route": "refunds"},
    {"message": "what's the weather like on Mars", "expected_route": ""},
    {"message": "what is the capital of France", "expected_route": ""},
    {"message": "asdkjh qwpoeiru zxmcnv", "expected_route": ""},
    # The near-tie on purpose: cold, "where is my refund" is a menu of order_status and refunds
    # (tracking or refund status?); in a conversation about a refund it stays there.
    {
        "message": "where is my refund",
        "incumbent": "refunds",
        "expected_route": "refunds",
        "expected_verdict": "stay",
    },
]


@transaction.atomic
def load_demo_profile() -> Profile:
    """Create the demo profile when it is missing, and only then.

    Once it exists it is a person's work: they may have added an example, deleted a route or
    saved a case with the very text of a demo case. Loading again (every `make run`) must keep
    all of that, so an existing profile is returned untouched — never refreshed, never merged.
    """
    existing = Profile.objects.filter(slug=PROFILE["slug"]).first()
    if existing is not None:
        return existing
    profile = Profile.objects.create(**PROFILE, **POLICY)
    Route.objects.bulk_create(
        Route(profile=profile, order=order, **route) for order, route in enumerate(ROUTES)
    )
    Rule.objects.bulk_create(
        Rule(profile=profile, order=order, **rule) for order, rule in enumerate(RULES)
    )
    Tool.objects.bulk_create(
        Tool(
            profile=profile,
            order=order,
            name=name,
            description=description,
            trigger_keywords=keywords,
            always_include=always,
        )
        for order, (name, description, keywords, always) in enumerate(TOOLS)
    )
    TestCase.objects.bulk_create(
        TestCase(profile=profile, order=order, **case) for order, case in enumerate(TEST_CASES)
    )
    AuditEntry.objects.create(
        profile=profile,
        profile_slug=profile.slug,
        action="profile.load_demo",
        object_type="profile",
        object_repr=profile.slug,
    )
    return profile
