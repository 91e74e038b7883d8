"""`routing-core serve` as a real process on loopback (docs/server.md)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import Router, dump_pack, load_pack
from tests.server.serving import COMMAND, CONFORMANCE, Studio, replace_file, serve, wait_until

TINY = (CONFORMANCE / "packs" / "tiny.json").read_bytes()
SUPPORT = (CONFORMANCE / "packs" / "support.json").read_bytes()
ESPANOL = (CONFORMANCE / "packs" / "espanol.json").read_bytes()
MESSAGES = [
    "why was I charged twice?",
    "please send me a copy of my invoice",
    "refund my order and cancel the other one",
    "zebra crossing astronomy",
    "ok",
    "",
]


@pytest.fixture
def pack_file(tmp_path: Path) -> Path:
    path = tmp_path / "pack.json"
    path.write_bytes(SUPPORT)
    return path


def _comparable(event: dict) -> dict:
    """An event without what differs between two runs of one turn (time taken)."""
    event = {k: v for k, v in event.items() if k not in ("elapsed_us", "exact")}
    event["tiers"] = [{k: v for k, v in t.items() if k != "elapsed_us"} for t in event["tiers"]]
    event["regex"] = {k: v for k, v in event["regex"].items() if k != "spent_us"}
    event["pack"] = {k: v for k, v in event["pack"].items() if k != "revision"}
    return event


def test_routing_equals_the_library(tmp_path: Path, pack_file: Path) -> None:
    router = Router(load_pack(SUPPORT))
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        for message in MESSAGES:
            for incumbent in (None, "shipping"):
                decision = router.route(message, incumbent)
                body = server.route(message, incumbent=incumbent, explain=True, exact=True)
                assert _comparable(body) == _comparable(decision.to_event())
                assert body["exact"]["ranked"] == [
                    {"route": r.route, "score": r.score, "relevance": r.relevance}
                    for r in decision.ranked
                ]
                assert body["pack"]["checksum"] == router.pack.checksum
                assert body["pack"]["revision"] == 1


def test_evidence_terms_only_when_explained(tmp_path: Path, pack_file: Path) -> None:
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        plain = server.route("why was I charged twice?")
        explained = server.route("why was I charged twice?", explain=True)
    assert plain["evidence"]["source"] == "scorer"
    assert plain["evidence"]["terms"] == []
    assert explained["evidence"]["terms"], "explain must give the scorer's terms"
    assert {k: v for k, v in plain["evidence"].items() if k != "terms"} == {
        k: v for k, v in explained["evidence"].items() if k != "terms"
    }


def test_unrounded_numbers_only_when_asked(tmp_path: Path, pack_file: Path) -> None:
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        assert "exact" not in server.route("track my parcel")
        exact = server.route("track my parcel", exact=True)["exact"]["ranked"]
        status, batch = server.call(
            "/v1/route/batch", {"turns": [{"message": "track my parcel"}], "exact": True}
        )
    assert batch["decisions"][0]["exact"]["ranked"] == exact
    assert exact[0]["route"] == "shipping" and exact[0]["score"] != round(exact[0]["score"], 3)


def test_top_lists_the_best_routes_and_leaves_the_rest_of_the_decision(
    tmp_path: Path, pack_file: Path
) -> None:
    """`top` cuts both rankings to their first rows, as the whole answer ranks them."""
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        for message in MESSAGES:
            whole = server.route(message, incumbent="billing", exact=True)
            short = server.route(message, incumbent="billing", exact=True, top=2)
            assert len(whole["ranked"]) > 2
            assert short["ranked"] == whole["ranked"][:2]
            assert short["exact"]["ranked"] == whole["exact"]["ranked"][:2]
            rest = {k: v for k, v in _comparable(short).items() if k != "ranked"}
            assert rest == {k: v for k, v in _comparable(whole).items() if k != "ranked"}
        every = server.route("track my parcel", top=2000)["ranked"]
        status, batch = server.call(
            "/v1/route/batch", {"turns": [{"message": "track my parcel"}] * 2, "top": 1}
        )
    assert len(every) == len(load_pack(SUPPORT).routes)
    assert status == 200
    assert [d["ranked"] for d in batch["decisions"]] == [every[:1], every[:1]]


def test_top_out_of_range_or_not_an_integer_is_refused(tmp_path: Path, pack_file: Path) -> None:
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        for top in (0, -1, 2001, "3", 2.0, True):
            status, body = server.call("/v1/route", {"message": "track my parcel", "top": top})
            assert status == 422, top
            assert [p["path"] for p in body["error"]["problems"]] == ["top"]


def test_batch_decides_each_turn_as_one_call_would(tmp_path: Path, pack_file: Path) -> None:
    turns = [{"message": m, "incumbent": "billing"} for m in MESSAGES]
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        status, batch = server.call("/v1/route/batch", {"turns": turns})
        singles = [server.route(t["message"], incumbent="billing") for t in turns]
    assert status == 200
    assert len(batch["decisions"]) == len(turns)
    assert [_comparable(d) for d in batch["decisions"]] == [_comparable(s) for s in singles]
    assert batch["pack"]["checksum"] == singles[0]["pack"]["checksum"]


def test_pack_health_and_readiness(tmp_path: Path, pack_file: Path) -> None:
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        status, pack = server.call("/v1/pack")
        assert status == 200
        assert pack["slug"] == "support" and pack["version"] == 7
        assert pack["checksum"] == load_pack(SUPPORT).checksum
        assert pack["source"] == f"file:{pack_file}"
        assert pack["revision"] == 1 and pack["loaded_at"]
        assert server.call("/healthz", token=None) == (200, {"status": "ok"})
        assert server.call("/readyz", token=None)[0] == 200


def test_not_ready_until_a_good_pack_arrives(tmp_path: Path) -> None:
    path = tmp_path / "pack.json"
    path.write_text("{ not a pack")
    with serve(tmp_path, "--pack", str(path), ready=False) as server:
        wait_until(
            lambda: server.metric("routing_core_pack_failures_total", kind="reload") >= 1,
            "the refusal",
        )
        status, body = server.call("/readyz")
        assert status == 503 and body["error"]["code"] == "not_ready"
        status, body = server.call("/v1/route", {"message": "hi"})
        assert status == 503 and body["error"]["code"] == "not_ready"
        assert server.call("/healthz")[0] == 200  # alive, just not ready
        replace_file(path, TINY)
        wait_until(lambda: server.call("/readyz")[0] == 200, "the good pack")
        assert server.route("hello")["pack"]["slug"] == "tiny"


def test_a_changed_pack_is_swapped_in_and_a_broken_one_refused(
    tmp_path: Path, pack_file: Path
) -> None:
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        assert server.route("hello")["pack"]["slug"] == "support"
        replace_file(pack_file, TINY)
        wait_until(lambda: server.route("hello")["pack"]["slug"] == "tiny", "the changed pack")
        assert server.route("hello")["pack"]["revision"] == 2
        assert server.metric("routing_core_pack_revision") == 2

        broken = json.loads(TINY)
        broken["routes"][0]["name"] = "Not A Valid Name!"
        replace_file(pack_file, json.dumps(broken).encode())
        wait_until(
            lambda: server.metric("routing_core_pack_failures_total", kind="reload") == 1,
            "the refusal",
        )
        body = server.route("hello")
        assert body["pack"]["slug"] == "tiny" and body["pack"]["revision"] == 2
        status, pack = server.call("/v1/pack")
        assert "invalid pack" in pack["last_error"] and "routes[0].name" in pack["last_error"]

        pack_file.unlink()  # a deleted file: keep serving what is loaded
        wait_until(
            lambda: server.metric("routing_core_pack_failures_total", kind="reload") == 2,
            "the missing file",
        )
        assert server.route("hello")["pack"]["slug"] == "tiny"


def test_a_studio_that_is_down_slow_or_broken_never_stops_routing(tmp_path: Path) -> None:
    studio = Studio(pack=TINY, token="read-token").start()
    try:
        with serve(
            tmp_path,
            "--studio",
            studio.url,
            "--pull-interval",
            "0.1",
            "--pull-timeout",
            "30",
            env={"ROUTING_CORE_STUDIO_TOKEN": "read-token"},
        ) as server:
            assert server.route("hello")["pack"]["slug"] == "tiny"
            status, pack = server.call("/v1/pack")
            assert pack["source"] == f"studio:{studio.url}" and "read-token" not in json.dumps(pack)

            studio.mode = "hang"  # the next pull waits on a studio that does not answer
            pulls = studio.pulls
            wait_until(lambda: studio.pulls > pulls, "a pull to hang")
            for _ in range(20):
                assert server.route("play jazz")["route"] == "music"
            studio.mode = "error"
            studio.release.set()
            wait_until(
                lambda: server.metric("routing_core_pack_failures_total", kind="pull") >= 2,
                "failed pulls",
            )
            studio.mode = "garbage"
            failed = server.metric("routing_core_pack_failures_total", kind="pull")
            wait_until(
                lambda: server.metric("routing_core_pack_failures_total", kind="pull") > failed,
                "a bad pack refused",
            )
            assert server.route("hello")["pack"]["slug"] == "tiny"

            studio.pack, studio.mode = ESPANOL, "serve"
            wait_until(lambda: server.route("hola")["pack"]["slug"] == "espanol", "the new pack")
    finally:
        studio.stop()


def test_a_studio_down_at_start_means_not_ready_then_ready(tmp_path: Path) -> None:
    studio = Studio(pack=TINY, mode="error").start()
    try:
        with serve(
            tmp_path, "--studio", studio.url, "--pull-interval", "0.1", ready=False
        ) as server:
            wait_until(lambda: studio.pulls >= 2, "pulls")
            assert server.call("/readyz")[0] == 503
            studio.mode = "serve"
            wait_until(lambda: server.call("/readyz")[0] == 200, "the first pack")
            pulls = studio.pulls
            wait_until(lambda: studio.pulls > pulls + 2, "more pulls")
            assert server.call("/v1/pack")[1]["revision"] == 1, "304s must not reload the pack"
    finally:
        studio.stop()


def test_bearer_tokens(tmp_path: Path, pack_file: Path) -> None:
    with serve(tmp_path, "--pack", str(pack_file), token="alpha,beta") as server:
        for path, body in (("/v1/route", {"message": "hi"}), ("/v1/pack", None)):
            for token in (None, "", "gamma", "alph", "alpha2"):
                status, answer = server.call(path, body, token=token)
                assert status == 401 and answer["error"]["code"] == "unauthorized", token
            for token in ("alpha", "beta"):
                assert server.call(path, body, token=token)[0] == 200
        status, answer = server.call(
            "/v1/route", {"message": "hi"}, token=None, headers={"Authorization": "Basic alpha"}
        )
        assert status == 401
        for open_path in ("/healthz", "/readyz", "/metrics"):
            assert server.call(open_path, token=None)[0] == 200


BAD_REQUESTS = [
    # (path, body or raw bytes, extra headers, method, status, code)
    ("/v1/route", b"{not json", {}, "POST", 400, "invalid_json"),
    ("/v1/route", b"\xff\xfe", {}, "POST", 400, "invalid_json"),
    ("/v1/route", [1, 2], {}, "POST", 422, "invalid_request"),
    ("/v1/route", "a string", {}, "POST", 422, "invalid_request"),
    ("/v1/route", {}, {}, "POST", 422, "invalid_request"),
    ("/v1/route", {"message": 42}, {}, "POST", 422, "invalid_request"),
    ("/v1/route", {"message": None}, {}, "POST", 422, "invalid_request"),
    ("/v1/route", {"message": ["hi"]}, {}, "POST", 422, "invalid_request"),
    ("/v1/route", {"message": "hi", "incumbent": 3}, {}, "POST", 422, "invalid_request"),
    ("/v1/route", {"message": "hi", "incumbent": "nowhere"}, {}, "POST", 422, "unknown_incumbent"),
    ("/v1/route", {"message": "x" * 4001}, {}, "POST", 422, "invalid_request"),
    ("/v1/route", {"message": "hi", "explain": "yes"}, {}, "POST", 422, "invalid_request"),
    ("/v1/route", {"message": "hi", "turn": -1}, {}, "POST", 422, "invalid_request"),
    ("/v1/route", {"message": "hi", "turn": 1.5}, {}, "POST", 422, "invalid_request"),
    ("/v1/route", {"message": "hi", "conversation": "c" * 129}, {}, "POST", 422, "invalid_request"),
    ("/v1/route", {"message": "hi", "surprise": 1}, {}, "POST", 422, "invalid_request"),
    (
        "/v1/route",
        {"message": "hi"},
        {"Content-Type": "text/plain"},
        "POST",
        415,
        "unsupported_media_type",
    ),
    ("/v1/route", b"x" * 1_100_000, {}, "POST", 413, "body_too_large"),
    ("/v1/route", None, {}, "GET", 405, "method_not_allowed"),
    ("/v1/route/batch", {"turns": []}, {}, "POST", 422, "invalid_request"),
    ("/v1/route/batch", {"turns": "hi"}, {}, "POST", 422, "invalid_request"),
    (
        "/v1/route/batch",
        {"turns": [{"message": "hi"}, {"message": 1}]},
        {},
        "POST",
        422,
        "invalid_request",
    ),
    ("/v1/route/batch", {"turns": [{"message": "hi"}] * 257}, {}, "POST", 422, "batch_too_large"),
    (
        "/v1/route/batch",
        {"turns": [{"message": "hi", "incumbent": "nope"}]},
        {},
        "POST",
        422,
        "unknown_incumbent",
    ),
    ("/v1/pack", {"message": "hi"}, {}, "POST", 405, "method_not_allowed"),
    ("/v2/route", {"message": "hi"}, {}, "POST", 404, "not_found"),
    ("/", None, {}, "GET", 404, "not_found"),
]


def test_every_bad_input_is_a_documented_4xx(tmp_path: Path, pack_file: Path) -> None:
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        for path, body, headers, method, status, code in BAD_REQUESTS:
            raw = body if isinstance(body, bytes) else None
            headers = (
                {"Content-Type": "application/json", **headers} if raw is not None else headers
            )
            got, answer = server.call(
                path, None if raw is not None else body, raw=raw, headers=headers, method=method
            )
            assert (got, answer["error"]["code"]) == (status, code), (path, body, answer)
            assert answer["error"]["status"] == status and answer["error"]["message"]
            assert isinstance(answer["error"]["problems"], list)
        _, answer = server.call("/v1/route", {"message": "hi", "incumbent": "nowhere"})
        assert answer["error"]["problems"] == [
            {"path": "incumbent", "reason": "'nowhere' is not a route of this pack"}
        ]
        _, answer = server.call("/v1/route/batch", {"turns": [{"message": "hi"}, {"message": 1}]})
        assert answer["error"]["problems"][0]["path"] == "turns[1].message"
        assert server.metric("routing_core_requests_refused_total", status="422") >= 10
        assert server.route("still fine")["schema"] == "route-decision/1"


def test_metrics_move(tmp_path: Path, pack_file: Path) -> None:
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        route = server.route("why was I charged twice?")
        labels = {"verdict": route["verdict"], "by": route["by"], "route": route["route"]}
        before = server.metric("routing_core_decisions_total", **labels)
        count = server.metric("routing_core_request_seconds_count", endpoint="/v1/route")
        for _ in range(3):
            server.route("why was I charged twice?")
        server.call("/v1/route/batch", {"turns": [{"message": "why was I charged twice?"}] * 2})
        assert server.metric("routing_core_decisions_total", **labels) == before + 5
        assert (
            server.metric("routing_core_request_seconds_count", endpoint="/v1/route") == count + 3
        )
        assert server.metric("routing_core_request_seconds_count", endpoint="/v1/route/batch") == 1
        assert server.metric("routing_core_pack_version") == 7


def test_several_workers_add_up_their_metrics(tmp_path: Path, pack_file: Path) -> None:
    with serve(tmp_path, "--pack", str(pack_file), "--workers", "2") as server:
        # Each worker loads the pack itself: wait until a run of readiness checks, spread over
        # the workers by the server's accept loop, finds none still without a pack.
        wait_until(lambda: all(server.call("/readyz")[0] == 200 for _ in range(20)), "both workers")
        # The accept loop may still hand a turn to a worker loading its pack (a 503 that says
        # so): 40 turns are routed, however many tries that takes.
        routed, deadline = 0, time.monotonic() + 60
        while routed < 40 and time.monotonic() < deadline:
            status, body = server.call("/v1/route", {"message": "track my parcel"})
            assert status in (200, 503), body
            routed += status == 200
        assert routed == 40
        # Whichever worker answers the scrape adds up every worker's counts.
        assert (
            server.metric(
                "routing_core_decisions_total", verdict="move", by="scorer", route="shipping"
            )
            == 40
        )
        assert (
            len(
                {
                    server.metric(
                        "routing_core_decisions_total",
                        verdict="move",
                        by="scorer",
                        route="shipping",
                    )
                    for _ in range(6)
                }
            )
            == 1
        )


def test_swap_under_load_has_no_failed_or_mixed_answer(tmp_path: Path, pack_file: Path) -> None:
    """Every answer is wholly one pack's: its checksum and its ranking agree with the library."""
    packs = {load_pack(data).checksum: (data, Router(load_pack(data))) for data in (SUPPORT, TINY)}
    message = "refund my order please"
    expected = {
        c: [r.route for r in router.route(message).ranked] for c, (_, router) in packs.items()
    }
    failures: list[str] = []
    seen: set[str] = set()
    stop = threading.Event()
    with serve(tmp_path, "--pack", str(pack_file)) as server:

        def hammer() -> None:
            while not stop.is_set():
                status, body = server.call("/v1/route", {"message": message})
                if status != 200:
                    failures.append(f"{status} {body}")
                    continue
                checksum = body["pack"]["checksum"]
                seen.add(checksum)
                if [r["route"] for r in body["ranked"]] != expected[checksum]:
                    failures.append(f"mixed answer on {checksum}")

        threads = [threading.Thread(target=hammer) for _ in range(4)]
        for thread in threads:
            thread.start()
        try:
            for swap in range(6):
                data = TINY if swap % 2 == 0 else SUPPORT
                replace_file(pack_file, data)
                wait_until(
                    lambda s=swap: server.metric("routing_core_pack_revision") == s + 2, "the swap"
                )
        finally:
            stop.set()
            for thread in threads:
                thread.join()
    assert failures == []
    assert seen == set(packs)


def test_turns_are_reported_redacted_and_flushed_on_sigterm(
    tmp_path: Path, pack_file: Path
) -> None:
    """SIGTERM is a graceful stop: the turns still queued reach the studio before the exit."""
    studio = Studio(token="events-token").start()
    try:
        env = {"ROUTING_CORE_EVENTS_TOKEN": "events-token"}
        with serve(
            tmp_path, "--pack", str(pack_file), "--events-url", studio.events_url, env=env
        ) as server:
            server.route(
                "why was I charged twice? mail me at jo@example.com", conversation="c-1", turn=0
            )
            for turn in range(1, 5):
                server.route("track my parcel", conversation="c-1", turn=turn)
            server.process.send_signal(signal.SIGTERM)
            assert server.process.wait(timeout=30) == 0
        log = server.log()
        assert "Application shutdown complete" in log and "Traceback" not in log
        assert [(e["conversation"], e["turn"]) for e in studio.events] == [
            ("c-1", t) for t in range(5)
        ]
        first = studio.events[0]
        assert "jo@example.com" not in json.dumps(first)
        assert first["message"].startswith("why was I charged twice?")
        assert first["event"]["route"] == "billing"
        assert first["event"]["schema"] == "route-decision/1"
    finally:
        studio.stop()


def test_the_library_and_its_command_line_never_import_the_server_stack() -> None:
    code = (
        "import sys, routing_core, routing_core.cli\n"
        "routing_core.cli._parser()\n"
        "loaded = {'granian', 'uvicorn', 'orjson', 'prometheus_client', 'routing_core.server.app'} & set(sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_settings_that_cannot_work_are_refused_before_listening(
    tmp_path: Path, pack_file: Path
) -> None:
    events = subprocess.run(
        [*COMMAND, "serve", "--pack", str(pack_file), "--events-url", "http://127.0.0.1:9/e"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "ROUTING_CORE_EVENTS_TOKEN"},
    )
    assert events.returncode == 2 and "reporting events needs an events token" in events.stderr
    interval = subprocess.run(
        [*COMMAND, "serve", "--pack", str(pack_file), "--watch-interval", "0"],
        capture_output=True,
        text=True,
    )
    assert interval.returncode == 2 and "watch-interval must be positive" in interval.stderr


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
BODIES = st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries(
        {"message": JSON_VALUES},
        optional={
            "incumbent": JSON_VALUES,
            "turn": JSON_VALUES,
            "explain": JSON_VALUES,
            "exact": JSON_VALUES,
            "top": JSON_VALUES,
        },
    ),
    st.fixed_dictionaries(
        {"turns": st.lists(st.fixed_dictionaries({"message": JSON_VALUES}), max_size=3)}
    ),
)


def test_no_body_makes_a_5xx(tmp_path: Path, pack_file: Path) -> None:
    """Any JSON at either routing endpoint: a decision or a documented 4xx, never a 5xx."""
    with serve(tmp_path, "--pack", str(pack_file)) as server:

        @settings(max_examples=150, deadline=None, database=None)
        @given(body=BODIES, path=st.sampled_from(["/v1/route", "/v1/route/batch"]))
        def check(body: object, path: str) -> None:
            status, answer = server.call(
                path, raw=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
            )
            assert status == 200 or (400 <= status < 500 and answer["error"]["status"] == status), (
                answer
            )

        check()
        assert server.metric("routing_core_requests_refused_total", status="500") == 0


def test_the_server_follows_a_canary_by_conversation_and_drops_it_when_halted(
    tmp_path: Path,
) -> None:
    """The server chooses a conversation's pack as RemoteRouter does (the library's serve_turn)."""
    candidate_bytes = dump_pack(load_pack(TINY).model_copy(update={"version": 99})).encode()
    checksum = load_pack(candidate_bytes).checksum
    studio = Studio(pack=TINY, token="tok").start()
    studio.rollout, studio.candidate = (
        f"id=3; mode=canary; share=100; checksum={checksum}",
        candidate_bytes,
    )
    try:
        env = {"ROUTING_CORE_STUDIO_TOKEN": "tok", "ROUTING_CORE_EVENTS_TOKEN": "tok"}
        args = ("--studio", studio.url, "--pull-interval", "0.1", "--events-url", studio.events_url)
        with serve(tmp_path, *args, env=env) as server:
            answer = server.route("hello", conversation="c-1", turn=0)
            # The answer names the pack that decided: the candidate, in the live one's revision.
            assert answer["pack"]["version"] == 99 and answer["pack"]["checksum"] == checksum
            assert answer["pack"]["revision"] == server.call("/v1/pack")[1]["revision"]
            wait_until(lambda: len(studio.events) == 1, "the first turn's event")
            assert studio.events[0]["rollout"]["arm"] == "candidate"
            assert studio.events[0]["event"]["pack"]["version"] == 99
            studio.rollout = None  # halted: the next pull names no rollout
            wait_until(
                lambda: (
                    server.route("hello", conversation="c-1", turn=1) is not None
                    and studio.events[-1].get("rollout") is None
                ),
                "the halt to reach the server",
            )
            assert studio.events[-1]["event"]["pack"]["version"] != 99
    finally:
        studio.stop()


def test_a_server_starting_while_the_rollouts_candidate_is_gone_serves_live_then_joins(
    tmp_path: Path,
) -> None:
    """A rollout halted between the pull and the candidate's pull (the candidate no longer
    the one named) must not leave a starting server without a pack: it serves the live pack,
    says why the candidate was refused, and joins the rollout at a later pull."""
    candidate_bytes = dump_pack(load_pack(TINY).model_copy(update={"version": 99})).encode()
    checksum = load_pack(candidate_bytes).checksum
    studio = Studio(pack=TINY, token="tok").start()
    studio.rollout = f"id=3; mode=canary; share=100; checksum={checksum}"
    studio.candidate = TINY  # not the pack the rollout names
    try:
        env = {"ROUTING_CORE_STUDIO_TOKEN": "tok", "ROUTING_CORE_EVENTS_TOKEN": "tok"}
        args = ("--studio", studio.url, "--pull-interval", "0.2", "--events-url", studio.events_url)
        with serve(tmp_path, *args, env=env) as server:
            server.route("hello", conversation="c-1", turn=0)
            wait_until(lambda: len(studio.events) == 1, "the first turn's event")
            assert studio.events[0].get("rollout") is None  # on live: no rollout joined
            status, pack = server.call("/v1/pack")
            assert status == 200 and "candidate pack" in (pack["last_error"] or "")
            studio.candidate = candidate_bytes
            # A new conversation each time: one started on live stays there (docs/server.md).
            fresh = (f"c-{n}" for n in itertools.count(2))
            wait_until(
                lambda: (
                    server.route("hello", conversation=next(fresh), turn=0) is not None
                    and (studio.events[-1].get("rollout") or {}).get("arm") == "candidate"
                ),
                "the rollout to be joined",
            )
            assert studio.events[-1]["event"]["pack"]["version"] == 99
    finally:
        studio.stop()


def test_a_body_sent_in_chunks_is_read_whole_and_held_to_the_limit(
    tmp_path: Path, pack_file: Path
) -> None:
    """No Content-Length to trust: the server counts the chunks as they come."""
    import http.client

    def chunks(parts: list[bytes]) -> bytes:
        return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"

    def post(parts: list[bytes]) -> tuple[int, dict[str, Any]]:
        host = server.url.removeprefix("http://")
        connection = http.client.HTTPConnection(host, timeout=30)
        connection.putrequest("POST", "/v1/route")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Transfer-Encoding", "chunked")
        connection.endheaders(chunks(parts))
        answer = connection.getresponse()
        status, body = answer.status, json.loads(answer.read())
        connection.close()
        return status, body

    with serve(tmp_path, "--pack", str(pack_file)) as server:
        status, body = post([b'{"message": ', b'"where is my ', b'parcel"}'])
        assert status == 200 and body["route"] == server.route("where is my parcel")["route"]
        status, body = post([b'{"message": "' + b"x" * 600_000, b"x" * 600_000 + b'"}'])
        assert status == 413 and body["error"]["code"] == "body_too_large"


def _workers(supervisor: subprocess.Popen[bytes]) -> set[int]:
    """The supervisor's worker processes (multiprocessing's spawned children, not its
    resource tracker), read from /proc. A worker that exits between the listing and the
    reading of its command line (the very replacement the test waits for) is not one."""
    found = set()
    for task in Path(f"/proc/{supervisor.pid}/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except FileNotFoundError:
                continue
            if b"multiprocessing.spawn" in command and b"resource_tracker" not in command:
                found.add(int(pid))
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads processes from /proc")
def test_a_worker_that_dies_is_replaced_and_sighup_replaces_them_all(
    tmp_path: Path, pack_file: Path
) -> None:
    """One worker still runs under the supervisor: killed, it is started again and routes;
    SIGHUP swaps every worker for a new one without stopping the server."""
    with serve(tmp_path, "--pack", str(pack_file)) as server:
        wait_until(lambda: len(_workers(server.process)) == 1, "one worker")
        (first,) = _workers(server.process)
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: _workers(server.process) - {first}, "a new worker")
        wait_until(lambda: server.call("/readyz")[0] == 200, "the new worker to be ready")
        assert server.route("why was I charged twice?")["route"] == "billing"
        (second,) = _workers(server.process)
        server.process.send_signal(signal.SIGHUP)
        wait_until(lambda: _workers(server.process) - {second}, "SIGHUP's new worker")
        wait_until(lambda: server.call("/readyz")[0] == 200, "the replaced worker to be ready")
        assert server.route("track my parcel")["route"] == "shipping"
        assert server.process.poll() is None
