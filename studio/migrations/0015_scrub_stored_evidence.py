"""Take out of stored decision events the words of messages that their evidence quoted.

Until now an event was stored with its evidence as the agent sent it: a rule's matched text
and a scorer's words, unredacted, even where the profile keeps no message text. Each stored
event's evidence is scrubbed as ingestion now scrubs it (`routing_core.redaction.
scrub_evidence`): a quoted string is redacted, then kept only if every word of it is a word
of the message as stored (none when no message is stored); a term that is a route's own
text (`kind` "example") stays.

The rules are frozen here, as of when this was written, like every data migration of the
studio: a later change to the live redaction must not change what this does to a database
migrated later. In chunks, so that hundreds of thousands of events migrate in bounded memory.
"""

import re
from collections.abc import Mapping
from typing import Any

from django.db import migrations

CHUNK = 2000
_REDACTIONS = (
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "[email]"),
    (re.compile(r"(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)"), "[card]"),
    (re.compile(r"(?<![\w+])\+?\(?\d(?:[\s().-]{0,2}\d){7,}(?!\d)"), "[phone]"),
    (re.compile(r"\d{6,}"), "[number]"),
)
_WORD = re.compile(r"\w+")


def scrub(apps, schema_editor):  # type: ignore[no-untyped-def]
    """Rewrite each event whose scrubbed evidence differs from what is stored."""
    Event = apps.get_model("studio", "Event")
    changed = []
    for row in Event.objects.only("id", "message", "event").iterator(chunk_size=CHUNK):
        clean = _scrubbed(row.event, row.message)
        if clean != row.event:
            row.event = clean
            changed.append(row)
        if len(changed) >= CHUNK:
            Event.objects.bulk_update(changed, ["event"])
            changed = []
    if changed:
        Event.objects.bulk_update(changed, ["event"])


def _scrubbed(event: Any, message: str | None) -> Any:
    evidence = event.get("evidence") if isinstance(event, Mapping) else None
    if not isinstance(evidence, Mapping):
        return event
    kept = set(_WORD.findall(message.lower())) if message else set()

    def kept_form(quoted: object) -> str | None:
        if not isinstance(quoted, str):
            return None
        for pattern, placeholder in _REDACTIONS:
            quoted = pattern.sub(placeholder, quoted)
        return quoted if set(_WORD.findall(quoted.lower())) <= kept else None

    clean = dict(evidence)
    if clean.get("text") is not None:
        clean["text"] = kept_form(clean["text"])
    if isinstance(clean.get("terms"), list):
        clean["terms"] = [
            t
            for t in clean["terms"]
            if isinstance(t, Mapping)
            and (t.get("kind") == "example" or kept_form(t.get("term")) == t.get("term"))
        ]
    return {**event, "evidence": clean}


class Migration(migrations.Migration):
    dependencies = [
        ("studio", "0014_clear_cosine_embedding_thresholds"),
    ]

    operations = [
        migrations.RunPython(scrub, migrations.RunPython.noop),
    ]
