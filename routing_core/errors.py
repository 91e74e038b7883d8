"""The one exception a caller of routing_core has to handle: a pack that cannot be used."""

from __future__ import annotations

from collections.abc import Iterable


class PackError(ValueError):
    """A pack failed to load or validate.

    Carries every problem found, not just the first, so an editor can fix them in one pass.

    Attributes:
        errors: `(json_path, message)` pairs, e.g. `("routes[2].name", "duplicate route name")`.
    """

    def __init__(self, errors: Iterable[tuple[str, str]]) -> None:
        self.errors: list[tuple[str, str]] = list(errors) or [("$", "invalid pack")]
        super().__init__(self._summary())

    def _summary(self) -> str:
        head = f"{len(self.errors)} problem(s) in pack"
        lines = [f"{path}: {message}" for path, message in self.errors]
        return "\n".join([head, *lines])

    def lines(self) -> list[str]:
        """One `path: reason` line per problem, as the CLI prints them."""
        return [f"{path}: {message}" for path, message in self.errors]
