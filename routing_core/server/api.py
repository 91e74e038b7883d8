"""The HTTP API's bodies: requests checked by pydantic, decisions and errors as JSON (docs/server.md).

Every refusal has one shape, `{"error": {"status", "code", "message", "problems"}}`, where
`problems` lists `{"path", "reason"}` pairs like `routing-core validate` does.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left
from collections.abc import Sequence
from typing import Annotated, Any

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from routing_core.codec import format_location
from routing_core.decision import Decision
from routing_core.limits import MAX_ROUTES
from routing_core.policy import Ranking
from routing_core.server.packs import PackState


class ApiError(Exception):
    """A refusal: an HTTP status, a stable code, a sentence, and the fields at fault."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        problems: Sequence[tuple[str, str]] = (),
        headers: Sequence[tuple[bytes, bytes]] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.problems = list(problems)
        self.headers = list(headers)

    def body(self) -> dict[str, Any]:
        """The documented error shape."""
        return {
            "error": {
                "status": self.status,
                "code": self.code,
                "message": self.message,
                "problems": [{"path": p, "reason": r} for p, r in self.problems],
            }
        }


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Turn(_Strict):
    """One turn to route: the message and, in a conversation, the route it is in."""

    message: StrictStr
    incumbent: StrictStr | None = None
    conversation: Annotated[StrictStr, Field(max_length=128)] | None = None
    turn: Annotated[StrictInt, Field(ge=0, le=2**31)] | None = None


# The most routes a request may ask the ranking to list (`top`): as many as a pack may have.
MAX_TOP = MAX_ROUTES


class Answer(_Strict):
    """What a routing request asks its answer to hold (docs/server.md): the evidence terms
    (`explain`), the unrounded ranking (`exact`), only the `top` best routes."""

    explain: StrictBool = False
    exact: StrictBool = False
    top: Annotated[StrictInt, Field(ge=1, le=MAX_TOP)] | None = None


class RouteRequest(Turn, Answer):
    """`POST /v1/route`."""


class BatchRequest(Answer):
    """`POST /v1/route/batch`: many turns decided on one pack."""

    turns: list[Turn] = Field(min_length=1)


def parse(model: type[_Strict], body: bytes) -> Any:
    """The request body as `model`, or a 400 / 422 in the documented shape."""
    try:
        document = orjson.loads(body)  # a tenth of the standard library's time on a turn's body
    except orjson.JSONDecodeError:
        # What orjson refuses and the standard library reads (an escaped lone surrogate, a
        # NaN) is read as before, and a refusal worded as before. (An integer past 64 bits
        # reads as a float: refused as not an integer, where it was refused as too large.)
        try:
            document = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApiError(400, "invalid_json", f"the body is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise ApiError(422, "invalid_request", "the body must be a JSON object")
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        problems = [(format_location(e["loc"]) or "$", e["msg"]) for e in exc.errors()]
        raise ApiError(422, "invalid_request", "the request is invalid", problems) from None


def check_turns(turns: Sequence[Turn], state: PackState, max_chars: int, prefix: str = "") -> None:
    """Refuse a message that is too long or an incumbent the pack does not have (422)."""
    names = state.names
    problems: list[tuple[str, str]] = []
    for i, turn in enumerate(turns):
        at = f"{prefix}[{i}]." if prefix else ""
        if len(turn.message) > max_chars:
            problems.append((f"{at}message", f"longer than {max_chars} characters"))
        if turn.incumbent is not None and turn.incumbent not in names:
            problems.append(
                (f"{at}incumbent", f"{turn.incumbent[:100]!r} is not a route of this pack")
            )
    if problems:
        code = (
            "unknown_incumbent" if all("incumbent" in p for p, _ in problems) else "invalid_request"
        )
        raise ApiError(422, code, "the request is invalid", problems)


def decision_body(decision: Decision, state: PackState, answer: Answer) -> dict[str, Any]:
    """`decision.to_event()` with the pack's revision, and on request each route's unrounded numbers.

    Evidence terms cost time to compute (the library computes them when read): without
    `explain` the event carries the evidence with no terms, and they are never computed.
    The ranking is written as JSON text straight from its columns (`ranked_json`); the
    unrounded ranking is asked for (`exact`) rather than always sent: at 150 routes it is as
    much work again as the event's own ranking (docs/server.md). `top`: both rankings list
    only that many of the best routes, the rest of the decision unchanged; at 150 routes the
    ranking is 95% of an answer's bytes, and an agent that acts on the decision reads a few.
    """
    top = answer.top
    ranking = decision.ranked if isinstance(decision.ranked, Ranking) else None
    event = decision.to_event(scorer_terms=answer.explain, ranking=ranking is None)
    if ranking is not None:
        event["ranked"] = orjson.Fragment(ranked_json(ranking, top))
    elif top is not None:
        event["ranked"] = event["ranked"][:top]
    # The pack that decided (the candidate's, for a turn a rollout gave it), with the
    # process's revision beside it (docs/server.md).
    event["pack"] = {**event["pack"], "revision": state.revision}
    if answer.exact:
        # The event rounds to 3 decimals for logs; a runtime is checked to 1e-6 (conformance/).
        event["exact"] = {
            "ranked": [
                {"route": r.route, "score": _exact(r.score), "relevance": _exact(r.relevance)}
                for r in (decision.ranked if top is None else decision.ranked[:top])
            ]
        }
    return event


# Per pack's routes (the ranking's names tuple, the same object on every turn of a pack):
# each route's row with both numbers 0.0 as JSON text, in candidate order, as an object array
# (one C-level take puts them in ranking order), and each row's opening; bounded, as packs
# come and go in a long-lived server.
_ROWS: dict[tuple[str, ...], tuple[np.ndarray, list[bytes]]] = {}
_NAMES_LIMIT = 50_000


def ranked_json(ranking: Ranking, top: int | None = None) -> bytes:
    """The event's `ranked` list as JSON text: the list `Ranking.event_rows` makes, with no
    dict per route. At 150 routes those dicts and their encoding were most of the event's
    cost, and nearly every row reads `0.0` and `0.0` (docs/decisions.md, "The ranking written
    as JSON text"): those rows are taken as made, in ranking order, in one step, and the
    others' numbers are encoded in one call. `top`: its first rows only."""
    names, order, loud, numbers = ranking.event_rows_sparse()
    if not names:
        return b"[]"
    if top is not None and top < len(order):
        # `loud` ascends (positions in ranking order), so the rows kept are a prefix of it;
        # `numbers` holds its rows' scores, then their relevances.
        kept = bisect_left(loud, top)
        numbers = numbers[:kept] + numbers[len(loud) : len(loud) + kept]
        order, loud = order[:top], loud[:kept]
    quiet, openings = _rows_of(names)
    rows: list[bytes] = quiet.take(order).tolist()
    if loud:
        # One encoding of every number, split at its commas: a number's JSON text (orjson's,
        # as for one number alone; "nan", "inf" and "-inf" are strings) holds none.
        texts = orjson.dumps(numbers)[1:-1].split(b",")
        n = len(loud)
        for i, score, relevance in zip(loud, texts[:n], texts[n:], strict=True):
            rows[i] = b"".join((openings[order.item(i)], score, b',"relevance":', relevance, b"}"))
    return b"[" + b",".join(rows) + b"]"


def _rows_of(names: tuple[str, ...]) -> tuple[np.ndarray, list[bytes]]:
    made = _ROWS.get(names)
    if made is None:
        if sum(map(len, _ROWS)) + len(names) > _NAMES_LIMIT:
            _ROWS.clear()
        openings = [b'{"route":' + orjson.dumps(name) + b',"score":' for name in names]
        quiet = np.empty(len(names), dtype=object)
        quiet[:] = [opening + b'0.0,"relevance":0.0}' for opening in openings]
        made = _ROWS[names] = (quiet, openings)
    return made


def _exact(value: float) -> float | str:
    """A float as JSON keeps it (repr round-trips), non-finite ones as the event writes them."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def pack_body(state: PackState | None, source: str, last_error: str | None) -> dict[str, Any]:
    """`GET /v1/pack`."""
    if state is None:
        return {"loaded": False, "source": source, "last_error": last_error}
    pack = state.router.pack
    return {
        "loaded": True,
        "slug": state.slug,
        "name": pack.profile.name,
        "version": state.version,
        "revision": state.revision,
        "checksum": state.checksum,
        "loaded_at": state.loaded_at,
        "source": source,
        "routes": list(pack.route_names),
        "verified_by": state.key_id,
        "last_error": last_error,
    }
