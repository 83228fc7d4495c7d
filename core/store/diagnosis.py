"""Bookings and sessions of the diagnosis flow (spec 04 §7): tables + a small repository.

`created_at` is when the booking was taken, UTC epoch seconds (core.clock). `preferred_time` is the
visit the person picked ("2026-11-25 10:00", a local appointment), stored as they picked it. Bookings hold
customers' names and phone numbers: each belongs to the person who took it (`owner_id`), and the
repository lists only theirs; `team_bookings` (admins) reads across. What the interview learned travels with
a booking in diagnosis_booking_details (every symptom, the answers to the questions, the summary, the manual
coverage); a detail row belongs to its booking's owner and is read only through that booking.
diagnosis_sessions keeps each session's state as JSON after every turn, so a session survives a browser
reload (its id is in the page's URL) and a server restart; each row carries its person's `owner_id`, and
another person's session id reads as unknown. Each row has a `version`: a save names the version it started
from and changes the row only if it is still that one, so a replica holding an older copy cannot overwrite
a turn another replica stored (`SessionConflict`). A booking carries the session version it was confirmed
from (`confirm_key`, unique per person), so a confirmation run twice stores one booking.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import (
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    and_,
    delete,
    desc,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from core.store.base import EpochSeconds, OwnedRepository
from core.store.db import metadata
from core.store.owners import owned_by, owner_column

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
    Column("created_at", EpochSeconds, nullable=False),  # UTC epoch seconds
    owner_column(),
    # "<session id>@<stored version it was confirmed from>" (migration v0016): two replicas (or two presses)
    # confirming the same session version store one booking; NULL for bookings without a stored session
    Column("confirm_key", String(100), nullable=True),
    Index("uq_diagnosis_bookings_confirm", "owner_id", "confirm_key", unique=True),
)

diagnosis_booking_details = Table(
    "diagnosis_booking_details",
    metadata,
    Column("booking_id", Integer, ForeignKey("diagnosis_bookings.id", ondelete="CASCADE"), primary_key=True),
    Column("symptoms", Text, nullable=False, default="[]"),  # JSON list: the first symptom and every answer
    Column("answers", Text, nullable=False, default="[]"),  # JSON list of {"question", "answer"}
    Column("summary", Text, nullable=False, default=""),
    Column("manual_coverage", String, nullable=False, default=""),
)

diagnosis_sessions = Table(
    "diagnosis_sessions",
    metadata,
    Column("session_id", String(64), primary_key=True),
    Column("state", Text, nullable=False),  # JSON of the SessionState (snapshots included)
    Column("updated_at", EpochSeconds, nullable=False),  # UTC epoch seconds
    owner_column(),
    Column("version", Integer, nullable=False),  # 1 for the first save, +1 for every later one
)
DETAIL_FIELDS = ("symptoms", "answers", "summary", "manual_coverage")

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


class SessionConflict(Exception):
    """A save named a stored version the session no longer has: another replica saved a turn (or restarted
    the session) since this copy was loaded. Nothing was written; reload and apply the turn again."""

    def __init__(self, session_id: str, expected: int):
        super().__init__(f"diagnosis session {session_id} is no longer at version {expected}")
        self.session_id = session_id
        self.expected = expected


def _row(mapping: Any) -> dict[str, Any]:
    data = dict(mapping)
    data["can_drive"] = bool(data["can_drive"])
    data["reasons"] = json.loads(data["reasons"] or "[]")
    data["symptoms"] = json.loads(data.get("symptoms") or "[]")
    data["answers"] = json.loads(data.get("answers") or "[]")
    data["summary"] = data.get("summary") or ""
    data["manual_coverage"] = data.get("manual_coverage") or ""
    data.pop("booking_id", None)
    return data


def _bookings_query() -> Any:
    return select(diagnosis_bookings, diagnosis_booking_details).outerjoin(
        diagnosis_booking_details, diagnosis_booking_details.c.booking_id == diagnosis_bookings.c.id
    )


class DiagnosisRepository(OwnedRepository):
    """Save and list one person's diagnosis bookings and sessions on the shared engine; `created_at` and
    `updated_at` come from the clock. `DiagnosisRepository(engine, clock, owner_id=...)`."""

    def save_booking(self, booking: dict[str, Any]) -> int:
        """Insert one booking of this person (spec 04 §7 BOOKING_CONFIRM); returns its id, the 受付番号. A
        booking with the `confirm_key` of one already stored is that booking (INSERT ... ON CONFLICT DO
        NOTHING, both engines): its id is returned and nothing is written."""
        row: dict[str, Any] = {k: str(booking.get(k) or "") for k in FIELDS}
        row["can_drive"] = 1 if booking.get("can_drive", True) else 0
        row["reasons"] = json.dumps(list(booking.get("reasons") or []), ensure_ascii=False)
        row["created_at"] = self.now()
        row["owner_id"] = self.owner_id
        row["confirm_key"] = booking.get("confirm_key") or None
        details = {
            "symptoms": json.dumps(list(booking.get("symptoms") or []), ensure_ascii=False),
            "answers": json.dumps(list(booking.get("answers") or []), ensure_ascii=False),
            "summary": str(booking.get("summary") or ""),
            "manual_coverage": str(booking.get("manual_coverage") or ""),
        }
        with self.engine.begin() as conn:
            dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
            statement = (
                dialect.insert(diagnosis_bookings)
                .values(**row)
                .on_conflict_do_nothing(index_elements=["owner_id", "confirm_key"])
                .returning(diagnosis_bookings.c.id)
            )
            booking_id = conn.execute(statement).scalar()
            if booking_id is None:  # confirmed already (another replica, or a second press)
                return int(
                    conn.execute(
                        select(diagnosis_bookings.c.id).where(
                            owned_by(diagnosis_bookings, self.owner_id),
                            diagnosis_bookings.c.confirm_key == row["confirm_key"],
                        )
                    ).scalar_one()
                )
            conn.execute(diagnosis_booking_details.insert().values(booking_id=booking_id, **details))
            return int(booking_id)

    def list_bookings(self, limit: int = 100) -> list[dict[str, Any]]:
        """This person's bookings, newest first, each with its details (symptoms, answers, summary,
        manual_coverage)."""
        query = (
            _bookings_query()
            .where(owned_by(diagnosis_bookings, self.owner_id))
            .order_by(desc(diagnosis_bookings.c.id))
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [_row(r._mapping) for r in conn.execute(query)]

    def team_bookings(self, limit: int = 200) -> list[dict[str, Any]]:
        """Every person's bookings (with `owner_id` and details), newest first: admin analytics only, callers
        check."""
        query = _bookings_query().order_by(desc(diagnosis_bookings.c.id)).limit(limit)
        with self.engine.connect() as conn:
            return [_row(r._mapping) for r in conn.execute(query)]

    def get_booking(self, booking_id: int) -> dict[str, Any] | None:
        """One of this person's bookings with its details, or None (also for another person's)."""
        query = _bookings_query().where(
            diagnosis_bookings.c.id == booking_id, owned_by(diagnosis_bookings, self.owner_id)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return None if row is None else _row(row._mapping)

    def _own_session(self, session_id: str) -> Any:
        return and_(
            diagnosis_sessions.c.session_id == session_id, owned_by(diagnosis_sessions, self.owner_id)
        )

    def save_session(self, session_id: str, state: dict[str, Any], expected_version: int = 0) -> int:
        """Store one of this person's sessions as JSON, stamped with the clock, if the stored row is still at
        `expected_version` (0: no row yet, the first save inserts it); returns the new version. Raises
        SessionConflict, writing nothing, when the row moved on, was deleted, or (first save) already exists;
        another person's row of the same id is never touched."""
        body = json.dumps(
            state, ensure_ascii=False, default=str
        )  # a stray non-JSON value must not end the turn
        version = expected_version + 1
        if expected_version == 0:
            row = {"session_id": session_id, "state": body, "owner_id": self.owner_id, "version": version}
            try:
                with self.engine.begin() as conn:
                    conn.execute(diagnosis_sessions.insert().values(**row, updated_at=self.now()))
            except IntegrityError as exc:  # the id is stored already (saved by another replica)
                raise SessionConflict(session_id, expected_version) from exc
            return version
        with self.engine.begin() as conn:
            changed = conn.execute(
                update(diagnosis_sessions)
                .where(self._own_session(session_id), diagnosis_sessions.c.version == expected_version)
                .values(state=body, updated_at=self.now(), version=version)
            ).rowcount
        if changed != 1:
            raise SessionConflict(session_id, expected_version)
        return version

    def session_version(self, session_id: str) -> int | None:
        """The stored version of one of this person's sessions (None: no such row, or another person's)."""
        query = select(diagnosis_sessions.c.version).where(self._own_session(session_id))
        with self.engine.connect() as conn:
            version = conn.execute(query).scalar()
        return None if version is None else int(version)

    def load_session(self, session_id: str, max_age: int | None = None) -> dict[str, Any] | None:
        """One of this person's stored sessions with its stored version as `store_version`, or None when
        unknown, another person's, or older than `max_age` seconds."""
        query = select(
            diagnosis_sessions.c.state, diagnosis_sessions.c.updated_at, diagnosis_sessions.c.version
        ).where(self._own_session(session_id))
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        if row is None or (max_age is not None and self.now() - int(row[1]) > max_age):
            return None
        state: dict[str, Any] = json.loads(row[0])
        state["store_version"] = int(row[2])
        return state

    def delete_session(self, session_id: str) -> None:
        """Forget one of this person's stored sessions (「最初からやり直す」); another person's is left alone."""
        with self.engine.begin() as conn:
            conn.execute(delete(diagnosis_sessions).where(self._own_session(session_id)))
