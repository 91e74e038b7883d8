"""Count the turns stored before rollups existed into their hours (studio.traffic.rollups).

One INSERT … SELECT per database, grouped in the database: a table of millions of turns is
never read into the process. SQLite keeps a datetime as text ("YYYY-MM-DD HH:MM:SS[.ffffff]",
UTC), PostgreSQL as timestamptz; the hour is written the way Django writes a whole hour.
"""

from django.db import migrations

HOUR = {
    "sqlite": "strftime('%Y-%m-%d %H:00:00', received)",
    "postgresql": "date_trunc('hour', received AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
}


def backfill(apps, schema_editor):  # type: ignore[no-untyped-def]
    connection = schema_editor.connection
    hour = HOUR.get(connection.vendor)
    if hour is None:
        # Another database: the slower, portable recount.
        from studio.traffic.rollups import rebuild

        rebuild()
        return
    q = connection.ops.quote_name
    columns = ", ".join(q(c) for c in ("verdict", "by", "route", "tier", "language"))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO studio_traffichour (profile_id, hour, {columns}, turns) "
            f"SELECT profile_id, {hour}, {columns}, COUNT(*) FROM studio_event "
            f"GROUP BY profile_id, {hour}, {columns}"
        )


class Migration(migrations.Migration):
    dependencies = [("studio", "0025_traffic_rollups")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True)]
