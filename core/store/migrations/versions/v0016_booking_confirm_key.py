"""A confirmed booking names the session version it was confirmed from: diagnosis_bookings.confirm_key.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26

The BOOKING_CONFIRM step saves the booking during the turn, and the session's version check (v0012) only
comes after: two replicas confirming one session at once (or a second press served by another replica) both
saved a booking. Now a booking carries "<session id>@<stored version>" and is unique per person by it; the
insert is ON CONFLICT DO NOTHING (core.store.diagnosis), so the second confirmation finds the first booking.
Bookings stored before have no key (NULL never conflicts).

Idempotent: the column and the index are created when missing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

TABLE = "diagnosis_bookings"
INDEX = "uq_diagnosis_bookings_confirm"


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "confirm_key" not in {c["name"] for c in inspector.get_columns(TABLE)}:
        op.add_column(TABLE, sa.Column("confirm_key", sa.String(100), nullable=True))
    if INDEX not in {i["name"] for i in inspector.get_indexes(TABLE)}:
        op.create_index(INDEX, TABLE, ["owner_id", "confirm_key"], unique=True)


def downgrade() -> None:
    op.drop_index(INDEX, table_name=TABLE)
