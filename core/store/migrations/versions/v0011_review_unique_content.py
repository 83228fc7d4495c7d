"""A person's review is unique by content: unique index on review_reviews (owner_id, content_hash).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25

Two imports of the same review by one person at the same moment both passed the "already stored?" lookup and
stored two rows (v0009 kept duplicates for that reason). Now the database refuses the second row and the
insert is `ON CONFLICT DO NOTHING` (core.store.review.manage), so concurrent imports end as one row.

Before the index: duplicates of one person's content are merged into the oldest row (lowest id); the threads
of the others are re-pointed to it, then the others are deleted. The shared sample (owner NULL) is left out:
NULLs never conflict in a unique index, on SQLite or PostgreSQL.

Idempotent: only duplicates are merged; the index is created when missing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

TABLE = "review_reviews"
INDEX = "uq_review_reviews_owner_content"


def _merge_duplicates(conn: sa.Connection) -> None:
    reviews = sa.table(
        TABLE,
        sa.column("id", sa.Integer),
        sa.column("owner_id", sa.String),
        sa.column("content_hash", sa.String),
    )
    threads = sa.table("review_threads", sa.column("id", sa.Integer), sa.column("review_id", sa.Integer))
    groups = conn.execute(
        sa.select(reviews.c.owner_id, reviews.c.content_hash, sa.func.min(reviews.c.id))
        .where(reviews.c.owner_id.is_not(None), reviews.c.content_hash.is_not(None))
        .group_by(reviews.c.owner_id, reviews.c.content_hash)
        .having(sa.func.count() > 1)
    ).all()
    for owner_id, digest, keep in groups:
        others = sa.select(reviews.c.id).where(
            reviews.c.owner_id == owner_id, reviews.c.content_hash == digest, reviews.c.id != keep
        )
        doomed = [row[0] for row in conn.execute(others)]
        conn.execute(threads.update().where(threads.c.review_id.in_(doomed)).values(review_id=keep))
        conn.execute(reviews.delete().where(reviews.c.id.in_(doomed)))


def upgrade() -> None:
    conn = op.get_bind()
    _merge_duplicates(conn)
    if INDEX not in {i["name"] for i in sa.inspect(conn).get_indexes(TABLE)}:
        op.create_index(INDEX, TABLE, ["owner_id", "content_hash"], unique=True)


def downgrade() -> None:
    op.drop_index(INDEX, table_name=TABLE)
