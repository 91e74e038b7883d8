"""The server's settings: parsed once by the command line, handed to every worker process.

uvicorn starts its workers as fresh processes (spawned) that import the app by name,
so the settings travel in one environment variable as JSON rather than as Python objects.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

ENV_CONFIG = "ROUTING_CORE_SERVE_CONFIG"


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """What `routing-core serve` was asked to do (docs/server.md lists each option).

    Exactly one of `pack_file` and `studio_url` is the pack's source.
    """

    pack_file: str | None = None
    studio_url: str | None = None
    studio_token: str | None = None
    watch_interval: float = 1.0
    pull_interval: float = 30.0
    pull_timeout: float = 5.0
    # Bearer tokens callers must send to /v1/*; empty: no authentication.
    tokens: tuple[str, ...] = ()
    events_url: str | None = None
    events_token: str | None = None
    redact: bool = True
    max_message_chars: int = 4000
    max_batch: int = 256
    max_body_bytes: int = 1_048_576
    # PEM files of the public keys that verify packs; any turns verification on (fail closed).
    verify_keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.pack_file is None) == (self.studio_url is None):
            raise ValueError("give exactly one pack source: a pack file or a studio URL")
        if self.events_url and not self.events_token:
            raise ValueError("reporting events needs an events token")
        for name in ("watch_interval", "pull_interval", "pull_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name.replace('_', '-')} must be positive")
        for name in ("max_message_chars", "max_batch", "max_body_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name.replace('_', '-')} must be at least 1")

    @property
    def source(self) -> str:
        """Where the pack comes from, as `/v1/pack` reports it (no token in it)."""
        return f"file:{self.pack_file}" if self.pack_file else f"studio:{self.studio_url}"

    def to_env(self) -> str:
        """JSON for `ENV_CONFIG`."""
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServeConfig:
        """The settings the command line left for this worker.

        Raises:
            RuntimeError: when the variable is missing (the app was started by hand).
        """
        raw = os.environ.get(ENV_CONFIG)
        if not raw:
            raise RuntimeError(
                f"{ENV_CONFIG} is not set: start the server with `routing-core serve`"
            )
        values = json.loads(raw)
        values["tokens"] = tuple(values.get("tokens") or ())
        values["verify_keys"] = tuple(values.get("verify_keys") or ())
        return cls(**values)
