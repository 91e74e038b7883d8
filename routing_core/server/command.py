"""`routing-core serve`: the command line of the route server (docs/server.md).

Secrets come from environment variables, never from arguments (which any user of the
machine can read in the process list).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
from typing import Any

ENV_TOKENS = "ROUTING_CORE_SERVE_TOKENS"
ENV_STUDIO_TOKEN = "ROUTING_CORE_STUDIO_TOKEN"
ENV_EVENTS_TOKEN = "ROUTING_CORE_EVENTS_TOKEN"


def add_serve_command(commands: Any) -> None:
    """Register `serve` on the `routing-core` subcommand parsers."""
    serve = commands.add_parser(
        "serve",
        help="route over HTTP with a pack from a file or a studio (needs routing-core[server])",
        description=(
            f"Callers' bearer tokens: ${ENV_TOKENS} (comma-separated; unset: no auth). "
            f"Studio pack token: ${ENV_STUDIO_TOKEN}. Event token: ${ENV_EVENTS_TOKEN}."
        ),
    )
    source = serve.add_mutually_exclusive_group(required=True)
    source.add_argument("--pack", metavar="FILE", help="a pack file, watched and reloaded")
    source.add_argument(
        "--studio", metavar="URL", help="a studio environment's pack URL, pulled with ETags"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    serve.add_argument(
        "--watch-interval", type=float, default=1.0, help="seconds between looks at the file"
    )
    serve.add_argument("--pull-interval", type=float, default=30.0, help="seconds between pulls")
    serve.add_argument("--pull-timeout", type=float, default=5.0, help="seconds for one pull")
    serve.add_argument(
        "--verify-key",
        action="append",
        default=[],
        metavar="PEM",
        help="a public key that packs must be signed with (repeat while keys rotate); "
        "any key turns verification on: an unsigned or badly signed pack is refused",
    )
    serve.add_argument("--events-url", help="report every turn to this studio events URL")
    serve.add_argument(
        "--no-redact", action="store_true", help="report messages unredacted (default: redacted)"
    )
    serve.add_argument("--max-message-chars", type=int, default=4000)
    serve.add_argument("--max-batch", type=int, default=256)
    serve.add_argument(
        "--graceful-timeout",
        type=float,
        default=10.0,
        help="seconds open requests may take after SIGTERM before they are cut",
    )
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """Check the settings, then hand the app to uvicorn (a supervisor and N worker processes)."""
    from routing_core.server.config import ENV_CONFIG, ServeConfig

    tokens = tuple(t.strip() for t in os.environ.get(ENV_TOKENS, "").split(",") if t.strip())
    config = ServeConfig(
        pack_file=os.path.abspath(args.pack) if args.pack else None,
        studio_url=args.studio,
        studio_token=os.environ.get(ENV_STUDIO_TOKEN) or None,
        watch_interval=args.watch_interval,
        pull_interval=args.pull_interval,
        pull_timeout=args.pull_timeout,
        tokens=tokens,
        events_url=args.events_url,
        events_token=os.environ.get(ENV_EVENTS_TOKEN) or None,
        redact=not args.no_redact,
        max_message_chars=args.max_message_chars,
        max_batch=args.max_batch,
        verify_keys=tuple(os.path.abspath(k) for k in args.verify_key),
    )
    if args.workers < 1:
        raise ValueError("--workers must be at least 1")
    if config.verify_keys:
        from routing_core.signing import PublicKeys

        PublicKeys.from_files(config.verify_keys)  # a bad key file fails here, not in a worker
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        print("error: the server needs pip install 'routing-core[server]'", file=sys.stderr)
        return 2
    os.environ[ENV_CONFIG] = config.to_env()
    if args.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Set before prometheus_client is imported in any worker (its multiprocess mode reads
        # it at import); an empty directory of this run's own.
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="routing-core-metrics-")
    return _supervise(args)


def _supervise(args: argparse.Namespace) -> int:
    """Run the app under uvicorn's supervisor, whatever the number of workers.

    uvicorn with its C HTTP parser answered more requests for less CPU than granian on the
    same app (docs/decisions.md, "The route server"). Its supervisor is used even for one
    worker: a worker that dies is started again, SIGHUP replaces the workers one by one, and
    SIGTERM stops each gracefully and exits 0 (uvicorn's single-process mode re-raises the
    signal after its shutdown instead).
    """
    from uvicorn import Config
    from uvicorn.config import STARTUP_FAILURE
    from uvicorn.supervisors import Multiprocess

    from routing_core.server.protocol import JoinedHttpProtocol

    config = Config(
        "routing_core.server.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        http=JoinedHttpProtocol,  # httptools, an answer in one write
        loop="uvloop" if sys.platform != "win32" else "asyncio",
        ws="none",
        lifespan="on",
        interface="asgi3",
        access_log=False,
        log_config=_log_config(args.log_level),
        log_level=args.log_level,
        # Behind a proxy or not, the server never reads forwarded headers: it has no use for
        # the client's address and should not trust one it was told.
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=max(1, round(args.graceful_timeout)),
    )
    supervisor = Multiprocess(config, sockets=[config.bind_socket()])
    supervisor.run()
    if any(process.exitcode == STARTUP_FAILURE for process in supervisor.processes):
        return 1
    return 0


def _log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging, with the server's own lines (packs put in service or refused)
    written by the same handler."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["routing_core"] = {
        "handlers": ["default"],
        "level": level.upper(),
        "propagate": False,
    }
    return config
