"""Companion memory tables, SQLAlchemy Core on the shared metadata.

Table names carry a `memory_` prefix so they never collide with another flow's tables. Times are
UNIX seconds. JSON columns hold text (`dumps`: json.dumps, ensure_ascii=False). FTS5 tables live in
core/store/memory/keyword_lanes.py; the repository (writes of units, payloads and versions) in
core/store/memory/repository.py, its writers of facts, loops and summaries in core/store/memory/derived.py.

One companion per person: units, entities, retrieval traces, and the fact, loop and summary payloads
(whose uniqueness is per person) carry `owner_id`; every other memory table hangs off a unit or an entity
and is reached through it. Rows of older databases are given owners by migration v0005.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

from core.store.base import EpochSeconds
from core.store.db import metadata
from core.store.owners import owned_by, owner_column

# Unit kinds and states: the values of memory_units.kind and memory_units.state.
KIND_EPISODE, KIND_FACT, KIND_LOOP, KIND_SUMMARY = "EPISODE", "FACT", "LOOP", "SUMMARY"
KINDS = (KIND_EPISODE, KIND_FACT, KIND_LOOP, KIND_SUMMARY)
STATE_ACTIVE, STATE_DELETED = "active", "deleted"

units = Table(
    "memory_units",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(16), nullable=False),  # EPISODE | FACT | LOOP | SUMMARY
    Column("occurred_at", EpochSeconds, nullable=False),
    Column("created_at", EpochSeconds, nullable=False),
    Column("updated_at", EpochSeconds, nullable=False),
    Column("state", String(16), nullable=False, default="active"),  # active | deleted (soft)
    Column("confidence", Float, nullable=False, default=0.5),
    Column("salience", Float, nullable=False, default=0.5),
    Column("sensitivity", Integer, nullable=False, default=0),  # 0 normal, 1 private, 2 secret
    Column("pin", Integer, nullable=False, default=0),
    Column("topic_tags", Text, nullable=False, default="[]"),
    Column("persona_affect_label", String(16), nullable=True),
    Column("persona_affect_intensity", Float, nullable=True),
    Column(
        "extract_state", String(16), nullable=False, default="none"
    ),  # none | pending | running | done | failed
    Column("extract_attempts", Integer, nullable=False, default=0),
    # the job that claimed the extraction (pending/failed -> running in one UPDATE), and when
    Column("extract_claim", String(64), nullable=True),
    Column("extract_claimed_at", EpochSeconds, nullable=True),
    owner_column(),
    # when the unit's vector was last written (migration v0017); NULL: never, or the unit was re-indexed since
    # and its vector write is still to come (or failed), so the job sweep finds it (core.flows.memory.index_job)
    Column("indexed_at", EpochSeconds, nullable=True),
    Index("ix_memory_units_kind_time", "kind", "occurred_at"),
    Index(
        "ix_memory_units_unindexed",
        "owner_id",
        "updated_at",
        sqlite_where=text("indexed_at IS NULL"),
        postgresql_where=text("indexed_at IS NULL"),
    ),
)

payload_episode = Table(
    "memory_payload_episode",
    metadata,
    Column("unit_id", Integer, ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True),
    Column("input_text", Text, nullable=False),
    Column("reply_text", Text, nullable=False),
    Column("reflection_json", Text, nullable=False, default="{}"),
    Column("reflection_source", String(16), nullable=False, default="trailer"),  # trailer|reflection|default
    Column("extraction_json", Text, nullable=False, default="{}"),
)

payload_fact = Table(
    "memory_payload_fact",
    metadata,
    Column("unit_id", Integer, ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True),
    Column("subject_entity_id", Integer, ForeignKey("memory_entities.id"), nullable=True),
    Column("predicate", String(64), nullable=False),
    Column("predicate_raw", String(128), nullable=False, default=""),
    Column("object_text", Text, nullable=False),
    Column("object_entity_id", Integer, ForeignKey("memory_entities.id"), nullable=True),
    Column("valid_from", EpochSeconds, nullable=True),
    Column("valid_to", EpochSeconds, nullable=True),
    Column("evidence_unit_ids_json", Text, nullable=False, default="[]"),
    # What "the same fact" means (migration v0015): fact_key(subject, predicate, object) while the unit is
    # active, NULL otherwise (NULLs never conflict), unique per person, so a concurrent write cannot double it.
    owner_column(nullable=True, index=False),
    Column("active_key", String(64), nullable=True),
    Index("uq_memory_fact_active", "owner_id", "active_key", unique=True),
)

payload_loop = Table(
    "memory_payload_loop",
    metadata,
    Column("unit_id", Integer, ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True),
    Column("loop_text", Text, nullable=False),
    Column("due_at", EpochSeconds, nullable=True),
    Column("expires_at", EpochSeconds, nullable=False),
    Column("source_unit_id", Integer, nullable=True),
    owner_column(index=False),
    UniqueConstraint("owner_id", "loop_text", name="uq_memory_loop_text"),
)

payload_summary = Table(
    "memory_payload_summary",
    metadata,
    Column("unit_id", Integer, ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True),
    Column("scope_label", String(16), nullable=False),  # bond | person | topic
    Column("scope_key", String(200), nullable=False),  # rolling:7d | entity:<id>
    Column("range_start", EpochSeconds, nullable=False),
    Column("range_end", EpochSeconds, nullable=False),
    Column("summary_text", Text, nullable=False),
    Column("summary_json", Text, nullable=False, default="{}"),
    Column("evidence_unit_ids_json", Text, nullable=False, default="[]"),
    owner_column(index=False),
    UniqueConstraint("owner_id", "scope_label", "scope_key", name="uq_memory_summary_scope"),
)

entities = Table(
    "memory_entities",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("type_label", String(32), nullable=False),
    Column("name", String(200), nullable=False),
    Column("roles_json", Text, nullable=False, default="[]"),
    Column("confidence", Float, nullable=False, default=0.5),
    Column("created_at", EpochSeconds, nullable=False),
    Column("updated_at", EpochSeconds, nullable=False),
    owner_column(index=False),
    UniqueConstraint("owner_id", "type_label", "name", name="uq_memory_entity"),
)

entity_aliases = Table(
    "memory_entity_aliases",
    metadata,
    Column("entity_id", Integer, ForeignKey("memory_entities.id", ondelete="CASCADE"), primary_key=True),
    Column("alias", String(200), primary_key=True),
)

unit_entities = Table(
    "memory_unit_entities",
    metadata,
    Column("unit_id", Integer, ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True),
    Column("entity_id", Integer, ForeignKey("memory_entities.id", ondelete="CASCADE"), primary_key=True),
    Column("role", String(32), nullable=False, default="mentioned"),
    Index("ix_memory_unit_entities_entity", "entity_id"),
)

edges = Table(
    "memory_edges",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("src_entity_id", Integer, ForeignKey("memory_entities.id", ondelete="CASCADE"), nullable=False),
    Column("relation", String(64), nullable=False),
    Column("dst_entity_id", Integer, ForeignKey("memory_entities.id", ondelete="CASCADE"), nullable=False),
    Column("weight", Float, nullable=False, default=0.5),
    Column("first_seen_at", EpochSeconds, nullable=False),
    Column("last_seen_at", EpochSeconds, nullable=False),
    Column("evidence_unit_id", Integer, ForeignKey("memory_units.id", ondelete="CASCADE"), nullable=True),
    Column("evidence_text", Text, nullable=False, default=""),
    UniqueConstraint("src_entity_id", "relation", "dst_entity_id", name="uq_memory_edge"),
)

unit_versions = Table(
    "memory_unit_versions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("unit_id", Integer, ForeignKey("memory_units.id", ondelete="CASCADE"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("changed_at", EpochSeconds, nullable=False),
    Column("change_kind", String(16), nullable=False),  # create | edit | revert | soft_delete | restore
    Column("snapshot_json", Text, nullable=False),
    Column("note", Text, nullable=False, default=""),
    UniqueConstraint("unit_id", "version", name="uq_memory_unit_version"),
)

retrieval_traces = Table(
    "memory_retrieval_traces",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created_at", EpochSeconds, nullable=False),
    Column("source", String(16), nullable=False, default="chat"),  # chat | search_test
    Column("query_input", Text, nullable=False),
    Column("q1", Text, nullable=False),
    Column("q2", Text, nullable=False),
    Column("trace_json", Text, nullable=False),
    Column("injected_unit_ids_json", Text, nullable=False, default="[]"),
    Column("episode_unit_id", Integer, nullable=True),
    owner_column(),
)

extraction_log = Table(
    "memory_extraction_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("unit_id", Integer, nullable=False),
    Column("at", EpochSeconds, nullable=False),
    Column("step", String(32), nullable=False),
    Column("ok", Integer, nullable=False),
    Column("error_type", String(32), nullable=True),
    Column("detail", Text, nullable=False, default=""),
)

PAYLOAD_TABLES = {
    KIND_EPISODE: payload_episode,
    KIND_FACT: payload_fact,
    KIND_LOOP: payload_loop,
    KIND_SUMMARY: payload_summary,
}
# Unit fields and payload fields an analyst may edit (and a version snapshot keeps).
UNIT_FIELDS = (
    "kind",
    "occurred_at",
    "state",
    "confidence",
    "salience",
    "sensitivity",
    "pin",
    "topic_tags",
    "persona_affect_label",
    "persona_affect_intensity",
)
PAYLOAD_FIELDS = {
    KIND_EPISODE: ("input_text", "reply_text"),
    KIND_FACT: ("predicate", "object_text", "valid_from", "valid_to"),
    KIND_LOOP: ("loop_text", "due_at", "expires_at"),
    KIND_SUMMARY: ("summary_text",),
}


def mine(owner_id: str) -> Any:
    """`memory_units.owner_id = owner_id`: the condition on every read of units."""
    return owned_by(units, owner_id)


def fact_key(subject_entity_id: int | None, predicate: str, object_text: str) -> str:
    """The identity of a fact (subject entity, predicate, object text) as a fixed-length key: a digest, so an
    object text of any length fits a unique index on PostgreSQL."""
    identity = json.dumps([subject_entity_id, predicate, object_text], ensure_ascii=False)
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


def dumps(value: Any) -> str:
    """JSON text for JSON columns (Japanese kept readable)."""
    return json.dumps(value, ensure_ascii=False)


def clamp01(value: Any, default: float = 0.5) -> float:
    """A number in 0.0..1.0 (confidence, salience, intensity); anything that is not a number becomes `default`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return min(1.0, max(0.0, float(value)))
