"""Review content hashes: re-importing or registering the same review finds the stored one.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-22

- `review_reviews.content_hash` (String(64), nullable, indexed `ix_review_reviews_content_hash`): sha256 of
  the normalized question + answer + review JSON (core.store.review.models.content_hash, the one function
  every later save uses; a change of it needs a revision that recomputes the hashes).
- Existing rows get their hash. Reviews imported twice before this revision keep both rows (and the same
  hash); the lookup then finds the older one. Not a unique index for that reason.

Idempotent: the column and the index are added only when missing; only missing hashes are written.
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

from core.store.review.models import content_hash

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

TABLE = "review_reviews"
INDEX = "ix_review_reviews_content_hash"


def _fill_hashes(conn: sa.Connection) -> None:
    table = sa.table(
        TABLE,
        sa.column("id", sa.Integer),
        sa.column("question_text", sa.Text),
        sa.column("answer_text", sa.Text),
        sa.column("review_json", sa.Text),
        sa.column("content_hash", sa.String),
    )
    rows = conn.execute(
        sa.select(table.c.id, table.c.question_text, table.c.answer_text, table.c.review_json).where(
            table.c.content_hash.is_(None)
        )
    ).all()
    for row in rows:
        try:
            review = json.loads(row.review_json)
        except ValueError:
            review = row.review_json  # unreadable JSON: hashed as the text it is
        digest = content_hash(row.question_text, row.answer_text, review)
        conn.execute(table.update().where(table.c.id == row.id).values(content_hash=digest))


def upgrade() -> None:
    conn = op.get_bind()
    inspector = sa.inspect(conn)
    if not any(c["name"] == "content_hash" for c in inspector.get_columns(TABLE)):
        op.add_column(TABLE, sa.Column("content_hash", sa.String(64), nullable=True))
    if INDEX not in {i["name"] for i in sa.inspect(conn).get_indexes(TABLE)}:
        op.create_index(INDEX, TABLE, ["content_hash"])
    _fill_hashes(conn)


def downgrade() -> None:
    op.drop_index(INDEX, table_name=TABLE)
    op.drop_column(TABLE, "content_hash")
