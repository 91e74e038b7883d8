"""An agent, as its own process: pulls the pack, routes turns with reporting on, prints a summary.

Run by studio/agents/tests/test_agent_reporting.py against a live studio:
`python -m tests.agent_process '{"pack_url": …, "events_url": …, …}'`. It lives outside the
studio package: an agent imports routing_core, never the studio (nor Django).
It prints one JSON line: the slowest turn, the reporter's counts, and whether the queue drained.
"""

from __future__ import annotations

import json
import sys
import time

from routing_core.remote import PackFetcher, RemoteRouter
from routing_core.reporting import EventReporter


def main(config: dict) -> dict:
    fetcher = PackFetcher(config["pack_url"], token=config["pull_token"])
    reporter = EventReporter(
        config["events_url"],
        token=config["events_token"],
        batch_size=config.get("batch_size", 50),
        flush_every=0.05,
        max_queue=config.get("max_queue", 10_000),
        timeout=config.get("timeout", 5.0),
    )
    router = RemoteRouter(fetcher, reporter=reporter)
    if "conversations" in config:
        return _rounds(config, router, reporter)
    slowest = 0.0
    for i in range(config["turns"]):
        message = config["messages"][i % len(config["messages"])]
        started = time.perf_counter()
        router.route(message, conversation=f"c{i // 2}", turn=i % 2)
        slowest = max(slowest, time.perf_counter() - started)
    drained = reporter.flush(config.get("flush_s", 10.0))
    stats = reporter.stats
    return {
        "slowest_turn_s": slowest,
        "drained": drained,
        "sent": stats.sent,
        "dropped": stats.dropped,
        "failed": stats.failed,
        "queued": stats.queued,
    }


def _rounds(config: dict, router: RemoteRouter, reporter: EventReporter) -> dict:
    """Turn `r` of every conversation, then send the events and pull; for each round.

    As an agent fleet does between two pulls: the studio judges what was reported (a rollout's
    conditions), and the next round runs on what the pull then says.
    """
    pulls = []
    for r in range(config["rounds"]):
        for i in range(config["conversations"]):
            message = config["messages"][(i + r) % len(config["messages"])]
            router.route(message, conversation=f"{config.get('prefix', '')}c{i}", turn=r)
        reporter.flush(config.get("flush_s", 30.0))
        pulls.append(router.refresh().status)
    stats = reporter.stats
    return {"pulls": pulls, "sent": stats.sent, "failed": stats.failed, "error": stats.last_error}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
