"""Upgrade of review chat rows written by older code: owners, and ISO-8601 text timestamps -> UTC epoch seconds.

Imported reviews and threads stored before there were people (issue #14) get an `owner_id`: the local
person's; the bundled sample stays shared (owner NULL). Older databases declared `created_at` / `updated_at`
as text; SQLite keeps numbers in such a column as text, so those tables are rebuilt with integer columns
(same ids, same rows, owners included), inside one savepoint.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Integer, MetaData, Table, func, inspect, select

from core.store.owners import add_owner_column
from core.store.review import review_messages, review_reviews, review_threads

TABLES = (review_reviews, review_threads, review_messages)  # parents first


def epoch_seconds(value: Any) -> int:
    """A stored timestamp as UTC epoch seconds: ints stay, digit text is read, ISO text (naive = UTC) is
    converted; anything unreadable becomes 0 (oldest)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int | float):
        return int(value)
    text = str(value or "").strip()
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return 0
    return int((parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp())


def _time_columns(table: Table) -> list[str]:
    return [name for name in ("created_at", "updated_at") if name in table.c]


def _declared_as_text(conn: Connection, table: Table) -> bool:
    declared = {c["name"]: c["type"] for c in inspect(conn).get_columns(table.name)}
    return any(not isinstance(declared.get(name), Integer) for name in _time_columns(table))


def _converted(row: dict[str, Any], table: Table) -> dict[str, Any]:
    return {**row, **{name: epoch_seconds(row[name]) for name in _time_columns(table)}}


def _rebuild(conn: Connection) -> None:
    """Copy the rows out (read with the old declared types), drop children first, recreate, copy back."""
    old = MetaData()
    rows = {
        t.name: [dict(r._mapping) for r in conn.execute(select(Table(t.name, old, autoload_with=conn)))]
        for t in TABLES
    }
    for table in reversed(TABLES):  # children first: no ON DELETE CASCADE reaches a table still holding rows
        table.drop(conn)
    for table in TABLES:
        table.create(conn)
        if rows[table.name]:
            conn.execute(table.insert(), [_converted(row, table) for row in rows[table.name]])


def _convert_text_values(conn: Connection, table: Table) -> None:
    """Rows whose timestamps are still stored as text (none after a rebuild; kept for idempotency)."""
    for name in _time_columns(table):
        column = table.c[name]
        found = conn.execute(select(table.c.id, column).where(func.typeof(column) != "integer")).all()
        for row_id, value in found:
            conn.execute(table.update().where(table.c.id == row_id).values({name: epoch_seconds(value)}))


def upgrade(conn: Connection) -> None:
    """Idempotent: owners first (so a rebuild copies them), then rebuild tables whose timestamps are declared
    as text, then convert any text values left."""
    add_owner_column(conn, review_reviews, where=review_reviews.c.sample_key.is_(None))
    add_owner_column(conn, review_threads)
    if conn.dialect.name != "sqlite":  # only SQLite databases were ever written with text timestamps
        return
    names = set(inspect(conn).get_table_names())
    if not all(t.name in names for t in TABLES):
        return
    # A savepoint opens a real SQLite transaction even before any DML, so the rebuild is all or nothing.
    with conn.begin_nested():
        if any(_declared_as_text(conn, t) for t in TABLES):
            _rebuild(conn)
        for table in TABLES:
            _convert_text_values(conn, table)
