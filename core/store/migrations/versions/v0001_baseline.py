"""Baseline: the schema the create_all era built (commit dee2926), every table written out.

Revision ID: 0001
Revises:
Create Date: 2026-11-22

A database made by that code already has these tables: each one (and each index) is created only when it
is missing, so such a database is brought under Alembic by this revision without touching its rows, and a
new database gets the whole schema. Times are UTC epoch seconds (BIGINT on PostgreSQL). On SQLite the
memory flow's keyword indexes are FTS5 tables (trigram tokenizer + a unicode61 table of 2-character
tokens); PostgreSQL gets its lexical tables in v0004.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

EPOCH = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
KNOWLEDGE_FIELDS = (
    "contract_type",
    "knowledge_title",
    "target_clause",
    "review_points",
    "action_plan",
    "clause_sample",
)
FTS5 = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts_trigram USING fts5(body, tokenize='trigram')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts_bigram USING fts5(body, tokenize='unicode61')",
)


def _id() -> sa.Column[int]:
    return sa.Column("id", sa.Integer, primary_key=True, autoincrement=True)


def _unit_fk(name: str = "unit_id", *, primary_key: bool = True) -> sa.Column[int]:
    return sa.Column(
        name,
        sa.Integer,
        sa.ForeignKey("memory_units.id", ondelete="CASCADE"),
        primary_key=primary_key,
        nullable=False,
    )


def _table(name: str, *items: sa.schema.SchemaItem) -> None:
    if not sa.inspect(op.get_bind()).has_table(name):
        op.create_table(name, *items)


def _index(name: str, table: str, columns: list[str]) -> None:
    if name not in {i["name"] for i in sa.inspect(op.get_bind()).get_indexes(table)}:
        op.create_index(name, table, columns)


def _knowledge() -> None:
    _table(
        "knowledge_interviews",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("title", sa.String, nullable=False),
        sa.Column("created_at", EPOCH, nullable=False),
        sa.Column("updated_at", EPOCH, nullable=False),
        sa.Column("provider", sa.String, nullable=False),
        sa.Column("model", sa.String, nullable=False),
    )
    _table(
        "knowledge_turns",
        _id(),
        sa.Column(
            "interview_id",
            sa.String(32),
            sa.ForeignKey("knowledge_interviews.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("turn_no", sa.Integer, nullable=False),
        sa.Column("created_at", EPOCH, nullable=False),
        sa.Column("provider", sa.String, nullable=False),
        sa.Column("model", sa.String, nullable=False),
        sa.Column("user_text", sa.Text, nullable=False),
        sa.Column("attachments_json", sa.Text, nullable=False),
        sa.Column("ok", sa.Boolean, nullable=False),
        sa.Column("turn_json", sa.Text),
        sa.Column("phase", sa.String),
        sa.Column("mode", sa.String),
        sa.Column("raw", sa.Text, nullable=False),
        sa.Column("error_type", sa.String),
        sa.Column("error", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False),
    )
    _index("ix_knowledge_turns_interview_id", "knowledge_turns", ["interview_id"])
    _table(
        "knowledge_entries",
        _id(),
        *(sa.Column(name, sa.Text, nullable=False) for name in KNOWLEDGE_FIELDS),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("source_interview_id", sa.String(32)),
        sa.Column("created_at", EPOCH, nullable=False),
        sa.Column("created_by", sa.String, nullable=False),
        sa.Column("updated_at", EPOCH, nullable=False),
        sa.Column("updated_by", sa.String, nullable=False),
    )
    _table(
        "knowledge_entry_versions",
        _id(),
        sa.Column(
            "entry_id", sa.Integer, sa.ForeignKey("knowledge_entries.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("version", sa.Integer, nullable=False),
        *(sa.Column(name, sa.Text, nullable=False) for name in KNOWLEDGE_FIELDS),
        sa.Column("edited_at", EPOCH, nullable=False),
        sa.Column("edited_by", sa.String, nullable=False),
        sa.Column("note", sa.String, nullable=False),
    )
    _index("ix_knowledge_entry_versions_entry_id", "knowledge_entry_versions", ["entry_id"])


def _review() -> None:
    _table(
        "review_reviews",
        _id(),
        sa.Column("title", sa.String, nullable=False),
        sa.Column("question_text", sa.Text, nullable=False),
        sa.Column("purpose_text", sa.Text, nullable=False),
        sa.Column("grading_impression_text", sa.Text, nullable=False),
        sa.Column("review_json", sa.Text, nullable=False),
        sa.Column("answer_text", sa.Text, nullable=False),
        sa.Column("sample_key", sa.String, unique=True, nullable=True),
        sa.Column("created_at", EPOCH, nullable=False),
        sa.Column("updated_at", EPOCH, nullable=False),
    )
    _table(
        "review_threads",
        _id(),
        sa.Column(
            "review_id", sa.Integer, sa.ForeignKey("review_reviews.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("title", sa.String, nullable=False),
        sa.Column("conversation_summary", sa.Text, nullable=False),
        sa.Column("summary_up_to_turn", sa.Integer, nullable=False),
        sa.Column("last_section_mention_turn", sa.Integer, nullable=True),
        sa.Column("last_section_paragraph_numbers", sa.Text, nullable=True),
        sa.Column("created_at", EPOCH, nullable=False),
        sa.Column("updated_at", EPOCH, nullable=False),
    )
    _index("ix_review_threads_review_id", "review_threads", ["review_id"])
    _table(
        "review_messages",
        _id(),
        sa.Column(
            "thread_id", sa.Integer, sa.ForeignKey("review_threads.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("role", sa.String, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("meta", sa.Text, nullable=False),
        sa.Column("created_at", EPOCH, nullable=False),
        sa.CheckConstraint("role IN ('user', 'assistant')", name="review_messages_role"),
    )
    _index("ix_review_messages_thread_id", "review_messages", ["thread_id"])


def _diagnosis() -> None:
    texts = ("session_id", "booking_type", "vehicle_id", "vehicle_label", "name", "phone", "address")
    _table(
        "diagnosis_bookings",
        _id(),
        *(sa.Column(name, sa.String, nullable=False) for name in texts),
        sa.Column("preferred_time", sa.String, nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("symptom", sa.Text, nullable=False),
        sa.Column("urgency_level", sa.String, nullable=False),
        sa.Column("visit_urgency", sa.String, nullable=False),
        sa.Column("can_drive", sa.Integer, nullable=False),
        sa.Column("reasons", sa.Text, nullable=False),
        sa.Column("created_at", EPOCH, nullable=False),
    )


def _memory_units() -> None:
    _table(
        "memory_units",
        _id(),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("occurred_at", EPOCH, nullable=False),
        sa.Column("created_at", EPOCH, nullable=False),
        sa.Column("updated_at", EPOCH, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("confidence", sa.Float, nullable=False),
        sa.Column("salience", sa.Float, nullable=False),
        sa.Column("sensitivity", sa.Integer, nullable=False),
        sa.Column("pin", sa.Integer, nullable=False),
        sa.Column("topic_tags", sa.Text, nullable=False),
        sa.Column("persona_affect_label", sa.String(16), nullable=True),
        sa.Column("persona_affect_intensity", sa.Float, nullable=True),
        sa.Column("extract_state", sa.String(16), nullable=False),
        sa.Column("extract_attempts", sa.Integer, nullable=False),
    )
    _index("ix_memory_units_kind_time", "memory_units", ["kind", "occurred_at"])
    _table(
        "memory_entities",
        _id(),
        sa.Column("type_label", sa.String(32), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("roles_json", sa.Text, nullable=False),
        sa.Column("confidence", sa.Float, nullable=False),
        sa.Column("created_at", EPOCH, nullable=False),
        sa.Column("updated_at", EPOCH, nullable=False),
        sa.UniqueConstraint("type_label", "name", name="uq_memory_entity"),
    )


def _memory_payloads() -> None:
    _table(
        "memory_payload_episode",
        _unit_fk(),
        sa.Column("input_text", sa.Text, nullable=False),
        sa.Column("reply_text", sa.Text, nullable=False),
        sa.Column("reflection_json", sa.Text, nullable=False),
        sa.Column("reflection_source", sa.String(16), nullable=False),
        sa.Column("extraction_json", sa.Text, nullable=False),
    )
    _table(
        "memory_payload_fact",
        _unit_fk(),
        sa.Column("subject_entity_id", sa.Integer, sa.ForeignKey("memory_entities.id"), nullable=True),
        sa.Column("predicate", sa.String(64), nullable=False),
        sa.Column("predicate_raw", sa.String(128), nullable=False),
        sa.Column("object_text", sa.Text, nullable=False),
        sa.Column("object_entity_id", sa.Integer, sa.ForeignKey("memory_entities.id"), nullable=True),
        sa.Column("valid_from", EPOCH, nullable=True),
        sa.Column("valid_to", EPOCH, nullable=True),
        sa.Column("evidence_unit_ids_json", sa.Text, nullable=False),
    )
    _table(
        "memory_payload_loop",
        _unit_fk(),
        sa.Column("loop_text", sa.Text, nullable=False, unique=True),
        sa.Column("due_at", EPOCH, nullable=True),
        sa.Column("expires_at", EPOCH, nullable=False),
        sa.Column("source_unit_id", sa.Integer, nullable=True),
    )
    _table(
        "memory_payload_summary",
        _unit_fk(),
        sa.Column("scope_label", sa.String(16), nullable=False),
        sa.Column("scope_key", sa.String(200), nullable=False),
        sa.Column("range_start", EPOCH, nullable=False),
        sa.Column("range_end", EPOCH, nullable=False),
        sa.Column("summary_text", sa.Text, nullable=False),
        sa.Column("summary_json", sa.Text, nullable=False),
        sa.Column("evidence_unit_ids_json", sa.Text, nullable=False),
        sa.UniqueConstraint("scope_label", "scope_key", name="uq_memory_summary_scope"),
    )


def _memory_graph() -> None:
    entity_fk = sa.ForeignKey("memory_entities.id", ondelete="CASCADE")
    _table(
        "memory_entity_aliases",
        sa.Column("entity_id", sa.Integer, entity_fk, primary_key=True),
        sa.Column("alias", sa.String(200), primary_key=True),
    )
    _table(
        "memory_unit_entities",
        _unit_fk(),
        sa.Column(
            "entity_id",
            sa.Integer,
            sa.ForeignKey("memory_entities.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("role", sa.String(32), nullable=False),
    )
    _index("ix_memory_unit_entities_entity", "memory_unit_entities", ["entity_id"])
    _table(
        "memory_edges",
        _id(),
        sa.Column(
            "src_entity_id",
            sa.Integer,
            sa.ForeignKey("memory_entities.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("relation", sa.String(64), nullable=False),
        sa.Column(
            "dst_entity_id",
            sa.Integer,
            sa.ForeignKey("memory_entities.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("weight", sa.Float, nullable=False),
        sa.Column("first_seen_at", EPOCH, nullable=False),
        sa.Column("last_seen_at", EPOCH, nullable=False),
        sa.Column(
            "evidence_unit_id",
            sa.Integer,
            sa.ForeignKey("memory_units.id", ondelete="CASCADE"),
            nullable=True,
        ),
        sa.Column("evidence_text", sa.Text, nullable=False),
        sa.UniqueConstraint("src_entity_id", "relation", "dst_entity_id", name="uq_memory_edge"),
    )


def _memory_logs() -> None:
    _table(
        "memory_unit_versions",
        _id(),
        _unit_fk(primary_key=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("changed_at", EPOCH, nullable=False),
        sa.Column("change_kind", sa.String(16), nullable=False),
        sa.Column("snapshot_json", sa.Text, nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.UniqueConstraint("unit_id", "version", name="uq_memory_unit_version"),
    )
    _table(
        "memory_retrieval_traces",
        _id(),
        sa.Column("created_at", EPOCH, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("query_input", sa.Text, nullable=False),
        sa.Column("q1", sa.Text, nullable=False),
        sa.Column("q2", sa.Text, nullable=False),
        sa.Column("trace_json", sa.Text, nullable=False),
        sa.Column("injected_unit_ids_json", sa.Text, nullable=False),
        sa.Column("episode_unit_id", sa.Integer, nullable=True),
    )
    _table(
        "memory_extraction_log",
        _id(),
        sa.Column("unit_id", sa.Integer, nullable=False),
        sa.Column("at", EPOCH, nullable=False),
        sa.Column("step", sa.String(32), nullable=False),
        sa.Column("ok", sa.Integer, nullable=False),
        sa.Column("error_type", sa.String(32), nullable=True),
        sa.Column("detail", sa.Text, nullable=False),
    )


def upgrade() -> None:
    _knowledge()
    _review()
    _diagnosis()
    _memory_units()
    _memory_payloads()
    _memory_graph()
    _memory_logs()
    if op.get_bind().dialect.name == "sqlite":
        for statement in FTS5:
            op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("the baseline is not undone; restore a backup instead")
