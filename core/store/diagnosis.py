"""Bookings made by the diagnosis flow (spec 04 §7): table + a small repository (SQLAlchemy Core).

`created_at` is when the booking was taken, UTC epoch seconds (core.clock). `preferred_time` is the
visit the person picked ("2026-11-25 10:00", a local appointment), stored as they picked it. Bookings hold
customers' names and phone numbers: each belongs to the person who took it (`owner_id`, issue #14), and the
repository lists only theirs; `team_bookings` (admins) reads across.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Column, Connection, Integer, String, Table, Text, desc, func, select, type_coerce

from core.clock import from_local
from core.store.base import OwnedRepository, inserted_id
from core.store.db import metadata
from core.store.owners import add_owner_column, owned_by, owner_column

diagnosis_bookings = Table(
    "diagnosis_bookings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String, nullable=False, default=""),
    Column("booking_type", String, nullable=False),  # dispatch | visit
    Column("vehicle_id", String, nullable=False, default=""),
    Column("vehicle_label", String, nullable=False, default=""),
    Column("name", String, nullable=False),
    Column("phone", String, nullable=False),
    Column("address", String, nullable=False, default=""),
    Column("preferred_time", String, nullable=False, default=""),
    Column("note", Text, nullable=False, default=""),
    Column("symptom", Text, nullable=False, default=""),
    Column("urgency_level", String, nullable=False, default=""),
    Column("visit_urgency", String, nullable=False, default=""),
    Column("can_drive", Integer, nullable=False, default=1),
    Column("reasons", Text, nullable=False, default="[]"),
    Column("created_at", Integer, nullable=False),  # UTC epoch seconds
    owner_column(),
)

FIELDS = (
    "session_id",
    "booking_type",
    "vehicle_id",
    "vehicle_label",
    "name",
    "phone",
    "address",
    "preferred_time",
    "note",
    "symptom",
    "urgency_level",
    "visit_urgency",
)


def _row(mapping: Any) -> dict[str, Any]:
    data = dict(mapping)
    data["can_drive"] = bool(data["can_drive"])
    data["reasons"] = json.loads(data["reasons"] or "[]")
    return data


class DiagnosisRepository(OwnedRepository):
    """Save and list one person's diagnosis bookings on the shared engine; `created_at` comes from the clock.
    `DiagnosisRepository(engine, clock, owner_id=...)`."""

    def save_booking(self, booking: dict[str, Any]) -> int:
        """Insert one booking of this person (spec 04 §7 BOOKING_CONFIRM); returns its id, the 受付番号."""
        row: dict[str, Any] = {k: str(booking.get(k) or "") for k in FIELDS}
        row["can_drive"] = 1 if booking.get("can_drive", True) else 0
        row["reasons"] = json.dumps(list(booking.get("reasons") or []), ensure_ascii=False)
        row["created_at"] = self.now()
        row["owner_id"] = self.owner_id
        with self.engine.begin() as conn:
            return inserted_id(conn.execute(diagnosis_bookings.insert().values(**row)))

    def list_bookings(self, limit: int = 100) -> list[dict[str, Any]]:
        """This person's bookings, newest first."""
        query = (
            select(diagnosis_bookings)
            .where(owned_by(diagnosis_bookings, self.owner_id))
            .order_by(desc(diagnosis_bookings.c.id))
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [_row(r._mapping) for r in conn.execute(query)]

    def team_bookings(self, limit: int = 200) -> list[dict[str, Any]]:
        """Every person's bookings (with `owner_id`), newest first: admin analytics only, callers check."""
        query = select(diagnosis_bookings).order_by(desc(diagnosis_bookings.c.id)).limit(limit)
        with self.engine.connect() as conn:
            return [_row(r._mapping) for r in conn.execute(query)]

    def get_booking(self, booking_id: int) -> dict[str, Any] | None:
        """One of this person's bookings, or None (also for another person's)."""
        query = select(diagnosis_bookings).where(
            diagnosis_bookings.c.id == booking_id, owned_by(diagnosis_bookings, self.owner_id)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return None if row is None else _row(row._mapping)


def upgrade(conn: Connection) -> None:
    """Bookings taken before there were people belong to the local person. Older code stored `created_at` as
    a naive local DateTime text ("2026-11-21 10:00:00"); make it epoch.

    Idempotent: the owner column is added once; only rows whose value is still text are converted (SQLite
    keeps each value's own type).
    """
    add_owner_column(conn, diagnosis_bookings)
    if conn.dialect.name != "sqlite":
        return
    created = type_coerce(diagnosis_bookings.c.created_at, String)
    old = conn.execute(
        select(diagnosis_bookings.c.id, created).where(func.typeof(diagnosis_bookings.c.created_at) == "text")
    ).all()
    for booking_id, text in old:
        when = from_local(datetime.fromisoformat(text))
        conn.execute(
            diagnosis_bookings.update().where(diagnosis_bookings.c.id == booking_id).values(created_at=when)
        )
