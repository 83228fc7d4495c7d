"""Diagnosis: stored sessions (each person's) and what the interview learned with a booking.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22

`diagnosis_sessions` keeps each session's state as JSON after every turn (a reload or restart resumes it);
`diagnosis_booking_details` travels with a booking (every symptom, the answers, the summary, the manual
coverage). A database whose tables main's create_all era already made keeps them (a sessions table without
owners gets `owner_id`, its rows the local person's).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

ID = sa.String(255)  # core.people.MAX_ID_CHARS
EPOCH = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _sessions() -> None:
    inspector = sa.inspect(op.get_bind())
    if not inspector.has_table("diagnosis_sessions"):
        op.create_table(
            "diagnosis_sessions",
            sa.Column("session_id", sa.String(64), primary_key=True),
            sa.Column("state", sa.Text, nullable=False),
            sa.Column("updated_at", EPOCH, nullable=False),
            sa.Column("owner_id", ID, nullable=False),
        )
    elif not any(c["name"] == "owner_id" for c in inspector.get_columns("diagnosis_sessions")):
        op.add_column("diagnosis_sessions", sa.Column("owner_id", ID, nullable=False, server_default="local"))
        if op.get_bind().dialect.name != "sqlite":
            op.alter_column("diagnosis_sessions", "owner_id", server_default=None)
    indexes = {i["name"] for i in sa.inspect(op.get_bind()).get_indexes("diagnosis_sessions")}
    if "ix_diagnosis_sessions_owner_id" not in indexes:
        op.create_index("ix_diagnosis_sessions_owner_id", "diagnosis_sessions", ["owner_id"])


def upgrade() -> None:
    _sessions()
    if not sa.inspect(op.get_bind()).has_table("diagnosis_booking_details"):
        op.create_table(
            "diagnosis_booking_details",
            sa.Column(
                "booking_id",
                sa.Integer,
                sa.ForeignKey("diagnosis_bookings.id", ondelete="CASCADE"),
                primary_key=True,
            ),
            sa.Column("symptoms", sa.Text, nullable=False),
            sa.Column("answers", sa.Text, nullable=False),
            sa.Column("summary", sa.Text, nullable=False),
            sa.Column("manual_coverage", sa.String, nullable=False),
        )


def downgrade() -> None:
    op.drop_table("diagnosis_booking_details")
    op.drop_table("diagnosis_sessions")
