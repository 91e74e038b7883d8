"""The refusals every area raises and every page and API answer turns into words (or a 409)."""

from __future__ import annotations

from typing import Any

Problem = tuple[str, str]


class Refused(Exception):
    """The edit would make the pack invalid. `errors` are (json_path, message) from routing_core."""

    def __init__(self, errors: list[Problem], prefix: str = "") -> None:
        super().__init__("; ".join(f"{p}: {m}" for p, m in errors))
        self.errors = errors
        self.prefix = prefix


class Conflict(Exception):
    """Someone else saved the object since the form was loaded.

    `current` is the object as they saved it (None: deleted, or not an edit of one object), so
    a page can show their version beside yours and the API can return both.
    """

    current: Any = None
    # The API's 409 body beside the detail: {"current": the stored object, "yours": the changes}.
    versions: dict[str, Any] | None = None

    def __init__(self, message: str, current: Any = None) -> None:
        super().__init__(message)
        self.current = current


class SlugTaken(Conflict, Refused):
    """A new profile's slug is taken: a conflict for the API (409), a field's error on a page."""

    def __init__(self, slug: str, advice: str = "") -> None:
        Refused.__init__(self, [("profile.slug", f"a profile '{slug}' exists{advice}")])
