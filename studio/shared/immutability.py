"""Database triggers that make published versions immutable, whatever code runs the SQL.

PostgreSQL and SQLite both refuse an UPDATE or DELETE of a `studio_version` row. `manage.py flush`
(which test runs use between transactional tests) is the one sanctioned way to erase them: on
PostgreSQL it truncates, which row triggers do not see; on SQLite the studio's `flush` command lifts
the delete trigger for the duration of the flush.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db.backends.base.base import BaseDatabaseWrapper

MESSAGE = "published pack versions are immutable"

POSTGRES_CREATE = [
    "CREATE OR REPLACE FUNCTION studio_version_immutable() RETURNS trigger LANGUAGE plpgsql AS "
    f"$$ BEGIN RAISE EXCEPTION '{MESSAGE}'; END $$",
    "CREATE TRIGGER studio_version_immutable BEFORE UPDATE OR DELETE ON studio_version "
    "FOR EACH ROW EXECUTE FUNCTION studio_version_immutable()",
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS studio_version_immutable ON studio_version",
    "DROP FUNCTION IF EXISTS studio_version_immutable()",
]
SQLITE_NO_UPDATE = (
    "CREATE TRIGGER studio_version_no_update BEFORE UPDATE ON studio_version "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
)
SQLITE_NO_DELETE = (
    "CREATE TRIGGER studio_version_no_delete BEFORE DELETE ON studio_version "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
)
SQLITE_CREATE = [SQLITE_NO_UPDATE, SQLITE_NO_DELETE]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS studio_version_no_update",
    "DROP TRIGGER IF EXISTS studio_version_no_delete",
]


def _run(connection: BaseDatabaseWrapper, statements: list[str]) -> None:
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def create_triggers(connection: BaseDatabaseWrapper) -> None:
    """Install the triggers on the vendors that have them (others rely on the model alone)."""
    statements = {"postgresql": POSTGRES_CREATE, "sqlite": SQLITE_CREATE}
    _run(connection, statements.get(connection.vendor, []))


def drop_triggers(connection: BaseDatabaseWrapper) -> None:
    statements = {"postgresql": POSTGRES_DROP, "sqlite": SQLITE_DROP}
    _run(connection, statements.get(connection.vendor, []))


@contextmanager
def flushing(connection: BaseDatabaseWrapper) -> Iterator[None]:
    """Let a flush erase versions on SQLite (DELETE FROM every table), then guard them again."""
    if connection.vendor != "sqlite":
        yield
        return
    _run(connection, ["DROP TRIGGER IF EXISTS studio_version_no_delete"])
    try:
        yield
    finally:
        _run(connection, [SQLITE_NO_DELETE])
