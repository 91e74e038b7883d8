"""A 12-route airline profile as a product person writes it on a first day: a handful of
examples a route and no out-of-scope examples (written for these tests)."""

from __future__ import annotations

AIRLINE_ROUTES: list[dict[str, object]] = [
    {
        "name": "book_flight",
        "examples": [
            "i want to book a flight to paris",
            "book me a ticket to new york next friday",
            "can i get a flight from london to madrid tomorrow",
            "i need two seats to rome in june",
            "find me a cheap flight to berlin",
            "reserve a return trip to lisbon",
            "are there flights to tokyo on monday",
            "book a one way ticket to dublin",
        ],
    },
    {
        "name": "change_booking",
        "examples": [
            "i need to change my flight",
            "can i move my booking to a later date",
            "switch my flight to the morning departure",
            "change the date of my trip",
            "rebook me on tomorrow's flight",
            "i want to fly a day earlier",
            "modify my reservation",
            "put me on a different flight",
        ],
    },
    {
        "name": "cancel_booking",
        "examples": [
            "cancel my flight",
            "i want to cancel my booking",
            "please cancel the reservation for next week",
            "i can't travel anymore, cancel my trip",
            "how do i cancel my ticket",
            "drop my booking to rome",
            "cancel the return leg of my trip",
            "i no longer need this flight",
        ],
    },
    {
        "name": "baggage",
        "examples": [
            "how many bags can i check",
            "what is the carry on allowance",
            "my suitcase didn't arrive",
            "how much does an extra bag cost",
            "can i bring a stroller on board",
            "my luggage is damaged",
            "what's the weight limit for checked luggage",
            "lost baggage claim",
        ],
    },
    {
        "name": "check_in",
        "examples": [
            "i want to check in for my flight",
            "when does online check in open",
            "check me in please",
            "get my boarding pass",
            "can i check in at the airport",
            "send my boarding pass to my phone",
            "how early should i check in",
            "the check in page won't load",
        ],
    },
    {
        "name": "flight_status",
        "examples": [
            "is my flight on time",
            "has flight ba 123 been delayed",
            "what gate does my flight leave from",
            "when does the flight from madrid land",
            "is the 6pm flight to paris cancelled",
            "status of my flight",
            "what time is boarding",
            "why is my flight delayed",
        ],
    },
    {
        "name": "seat_selection",
        "examples": [
            "i want a window seat",
            "can i choose my seat",
            "change my seat to an aisle",
            "sit next to my partner",
            "upgrade my seat to extra legroom",
            "how much is seat selection",
            "move me to an exit row",
            "pick seats for my family",
        ],
    },
    {
        "name": "refund",
        "examples": [
            "i want a refund",
            "when will i get my money back",
            "refund my cancelled flight",
            "how long do refunds take",
            "can i get a voucher instead of a refund",
            "my refund hasn't arrived",
            "am i entitled to compensation for the delay",
            "request a refund for my ticket",
        ],
    },
    {
        "name": "loyalty",
        "examples": [
            "how many miles do i have",
            "join the frequent flyer program",
            "my miles weren't credited",
            "use my points to pay for a flight",
            "what tier is my membership",
            "how do i reach gold status",
            "add my loyalty number to the booking",
            "when do my points expire",
        ],
    },
    {
        "name": "special_assistance",
        "examples": [
            "i need a wheelchair at the airport",
            "my mother needs help boarding",
            "can i travel while pregnant",
            "request assistance for a blind passenger",
            "i have a medical condition, can i fly",
            "bring my medical oxygen on board",
            "my child is flying alone",
            "special meal for diabetes",
        ],
    },
    {
        "name": "pets",
        "examples": [
            "can i bring my dog on the plane",
            "travel with my cat in the cabin",
            "how much does it cost to fly a pet",
            "pet carrier size rules",
            "my service animal is flying with me",
            "can my puppy go in the hold",
            "rules for flying with pets",
            "book a spot for my dog",
        ],
    },
    {
        "name": "human_agent",
        "examples": [
            "let me talk to a person",
            "i want to speak to an agent",
            "connect me to customer service",
            "call center phone number",
            "get me a human",
            "this isn't helping, put me through to someone",
            "speak to a representative",
            "i need to talk to staff",
        ],
    },
]

# Messages the profile routes, one a route, none of them an example.
IN_SCOPE = {
    "book a flight to barcelona for next monday": "book_flight",
    "change my booking to friday": "change_booking",
    "please cancel my trip to lisbon": "cancel_booking",
    "how many suitcases can i take": "baggage",
    "i'd like to check in now": "check_in",
    "is flight 456 delayed": "flight_status",
    "can i have an aisle seat": "seat_selection",
    "i want my money back for the cancelled flight": "refund",
    "how many frequent flyer miles do i have": "loyalty",
    "my father needs a wheelchair": "special_assistance",
    "can my cat fly with me": "pets",
    "i want to talk to a human agent": "human_agent",
}

# Messages about something else entirely, which the profile must leave unmatched.
OFF_TOPIC = ["what's the weather like in Paris tomorrow", "tell me a joke"]
