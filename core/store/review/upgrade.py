"""Upgrade of rows written by older code (run by migration v0002, SQLite only): text times -> epoch seconds.

Review chat: older databases declared `created_at` / `updated_at` as text; SQLite keeps numbers in such a
column as text, so those tables are rebuilt with integer columns (same ids, same rows), inside one
savepoint. The tables are rebuilt as the baseline (v0001) declares them, frozen here, so that later
revisions (new columns) apply on top unchanged. Diagnosis: `created_at` written as a naive local DateTime
text becomes epoch seconds in place.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import (
    CheckConstraint,
    Column,
    Connection,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    func,
    inspect,
    select,
    type_coerce,
)

from core.clock import from_local

_baseline = MetaData()  # the review tables as revision v0001 creates them
review_reviews = Table(
    "review_reviews",
    _baseline,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("title", String, nullable=False),
    Column("question_text", Text, nullable=False),
    Column("purpose_text", Text, nullable=False),
    Column("grading_impression_text", Text, nullable=False),
    Column("review_json", Text, nullable=False),
    Column("answer_text", Text, nullable=False),
    Column("sample_key", String, unique=True, nullable=True),
    Column("created_at", Integer, nullable=False),
    Column("updated_at", Integer, nullable=False),
)
review_threads = Table(
    "review_threads",
    _baseline,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "review_id", Integer, ForeignKey("review_reviews.id", ondelete="CASCADE"), nullable=False, index=True
    ),
    Column("title", String, nullable=False),
    Column("conversation_summary", Text, nullable=False),
    Column("summary_up_to_turn", Integer, nullable=False),
    Column("last_section_mention_turn", Integer, nullable=True),
    Column("last_section_paragraph_numbers", Text, nullable=True),
    Column("created_at", Integer, nullable=False),
    Column("updated_at", Integer, nullable=False),
)
review_messages = Table(
    "review_messages",
    _baseline,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "thread_id", Integer, ForeignKey("review_threads.id", ondelete="CASCADE"), nullable=False, index=True
    ),
    Column("turn", Integer, nullable=False),
    Column("role", String, nullable=False),
    Column("content", Text, nullable=False),
    Column("meta", Text, nullable=False),
    Column("created_at", Integer, nullable=False),
    CheckConstraint("role IN ('user', 'assistant')", name="review_messages_role"),
)
TABLES = (review_reviews, review_threads, review_messages)  # parents first
_bookings = sa.table("diagnosis_bookings", sa.column("id", Integer), sa.column("created_at", Integer))


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
    """Idempotent: review tables whose timestamps are declared as text are rebuilt and any text values left
    converted; diagnosis bookings with a text `created_at` are converted."""
    if conn.dialect.name != "sqlite":  # only SQLite databases were ever written with text timestamps
        return
    names = set(inspect(conn).get_table_names())
    if "diagnosis_bookings" in names:
        upgrade_bookings(conn)
    if not all(t.name in names for t in TABLES):
        return
    # A savepoint opens a real SQLite transaction even before any DML, so the rebuild is all or nothing.
    with conn.begin_nested():
        if any(_declared_as_text(conn, t) for t in TABLES):
            _rebuild(conn)
        for table in TABLES:
            _convert_text_values(conn, table)


def upgrade_bookings(conn: Connection) -> None:
    """Older code stored a booking's `created_at` as a naive local DateTime text ("2026-11-21 10:00:00")."""
    created = type_coerce(_bookings.c.created_at, String)
    old = conn.execute(
        select(_bookings.c.id, created).where(func.typeof(_bookings.c.created_at) == "text")
    ).all()
    for booking_id, text in old:
        when = from_local(datetime.fromisoformat(text))
        conn.execute(_bookings.update().where(_bookings.c.id == booking_id).values(created_at=when))
