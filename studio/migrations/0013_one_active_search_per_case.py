"""At most one queued or running "find a fix" search per case, draft revision and suite.

Before this, two requests at once could each queue one. Such a pair is closed first (the
older one is marked cancelled, saying why), so the constraint can be added on any database.
"""

from django.db import migrations, models

ACTIVE = ("queued", "running")


def cancel_duplicates(apps, schema_editor):  # type: ignore[no-untyped-def]
    """Keep the newest active search of each case, revision and suite; cancel the rest."""
    RepairJob = apps.get_model("studio", "RepairJob")
    newest: dict[tuple[int, int, str], int] = {}
    active = RepairJob.objects.filter(status__in=ACTIVE).order_by("-started_at", "-pk")
    for job in active:
        key = (job.test_case_id, job.draft_revision, job.suite_fingerprint)
        if key not in newest:
            newest[key] = job.pk
            continue
        job.status = "cancelled"
        job.error = f"Another search of the same draft and test cases ran instead (#{newest[key]})."
        job.save(update_fields=["status", "error"])


class Migration(migrations.Migration):
    dependencies = [
        ("studio", "0012_repair_jobs"),
    ]

    operations = [
        migrations.RunPython(cancel_duplicates, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="repairjob",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status__in", ACTIVE)),
                fields=("test_case", "draft_revision", "suite_fingerprint"),
                name="one_active_search_per_case",
            ),
        ),
    ]
