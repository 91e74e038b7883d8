"""What an agent tells the studio about itself on each pull: the `Route-Agent-Status` header.

The studio's Agents page shows who runs what, who is behind, who failed to verify and who
stopped reporting from these facts (docs/agents/remote.md, "What the studio sees"). The header is
one compact JSON object; a studio that does not know it ignores it, and one that cannot parse
it records nothing from it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["STATUS_HEADER", "AgentStatus"]

STATUS_HEADER = "Route-Agent-Status"
MAX_ERROR_CHARS = 300
_MAX_HEADER_CHARS = 1024


@dataclass(slots=True)
class AgentStatus:
    """The pack an agent runs and how its last pull went; updated by whoever swaps packs in.

    Attributes:
        version: the version of the pack in service (None: none yet).
        checksum: its checksum.
        verified_by: the key id that signed it, when the agent verifies (None: not verified).
        last_error: why the last pull (or the pack it brought) was refused; None after a success.
        events_dropped: decision events its reporter dropped so far (a full queue).
    """

    version: int | None = None
    checksum: str | None = None
    verified_by: str | None = None
    last_error: str | None = None
    events_dropped: int = 0

    def running(self, version: int, checksum: str, verified_by: str | None) -> None:
        """A pack went into service: the last error is over."""
        self.version, self.checksum, self.verified_by = version, checksum, verified_by
        self.last_error = None

    def to_header(self) -> str:
        """The header's value: compact ASCII JSON, the error cut to 300 characters."""
        error = self.last_error[:MAX_ERROR_CHARS] if self.last_error else None
        return json.dumps(
            {
                "version": self.version,
                "checksum": self.checksum,
                "verified_by": self.verified_by,
                "last_error": error,
                "events_dropped": self.events_dropped,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_header(cls, text: str | None) -> AgentStatus | None:
        """Read a header; None when it is absent or not a status this reader understands."""
        if not text or len(text) > _MAX_HEADER_CHARS:
            return None
        try:
            document = json.loads(text)
        except ValueError:
            return None
        return _status(document) if isinstance(document, dict) else None


def _status(document: dict[str, Any]) -> AgentStatus | None:
    version, dropped = document.get("version"), document.get("events_dropped", 0)
    checksum, key, error = (document.get(k) for k in ("checksum", "verified_by", "last_error"))
    if not (version is None or (_is_count(version) and version <= 2**53)):
        return None
    if not _is_count(dropped) or not all(_is_text(v, 80) for v in (checksum, key)):
        return None
    if not _is_text(error, MAX_ERROR_CHARS):
        return None
    return AgentStatus(version, checksum, key, error, dropped)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**63 - 1


def _is_text(value: Any, limit: int) -> bool:
    return value is None or (isinstance(value, str) and len(value) <= limit)
