"""Each message's language, for the pages that show messages (docs/decisions.md, "Detecting a
message's language").

Detection is `routing_core.languages` (py3langid, a studio dependency). A page never fails
for it: a message whose language is unclear, or a studio without the library, shows nothing.
"""

from __future__ import annotations

import functools
import logging
from datetime import datetime, timedelta

from django.db.models import Count
from django.utils import timezone

from routing_core import languages
from studio.models import Event, Profile

log = logging.getLogger("studio")

# "Recent" traffic for the lint's language findings (routing_core.lint.language_gaps).
RECENT_DAYS = 30


def detect(text: str) -> str:
    """The message's language code ("es"), or "" when unsure or when detection is missing."""
    try:
        return languages.detect(text) or ""
    except languages.MissingExtra:
        _warn_once()
        return ""


@functools.cache
def _warn_once() -> None:
    """Say once per process, not once per message, that languages cannot be shown."""
    log.warning("language detection is not installed (py3langid); languages are not shown")


def name(code: str) -> str:
    """The language's English name ("Spanish"), "" for no code."""
    return languages.name(code)


def name_of(text: str) -> str:
    """The message's language in plain words ("Spanish"), or "" when unsure."""
    return name(detect(text))


def recent_languages(profile: Profile, now: datetime | None = None) -> dict[str, int]:
    """How many of the profile's turns of the last RECENT_DAYS days were in each language
    (turns whose language is unclear left out): what the lint compares the routes with."""
    since = (now or timezone.now()) - timedelta(days=RECENT_DAYS)
    rows = (
        Event.objects.filter(profile=profile, received__gte=since)
        .exclude(language="")
        .values("language")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {row["language"]: row["n"] for row in rows}
