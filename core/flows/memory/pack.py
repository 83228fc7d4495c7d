"""What retrieval injects besides the reranked memories: facts, open loops, the bond summary,
and the plain-text pack that goes into the system prompt. Units above INJECT_MAX_SENSITIVITY never go in,
and neither does anything of another person (every read takes `owner_id`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from core.flows.memory.constants import FACT_POOL, INJECT_MAX_SENSITIVITY, LOOPS_INJECTED
from core.store.memory.tables import (
    KIND_FACT,
    STATE_ACTIVE,
    entities,
    mine,
    payload_fact,
    payload_loop,
    payload_summary,
    units,
)

INJECTABLE = (units.c.state == STATE_ACTIVE) & (units.c.sensitivity <= INJECT_MAX_SENSITIVITY)


def load_fact_pool(conn: Connection, owner_id: str, pool: int = FACT_POOL) -> list[dict[str, Any]]:
    """`owner_id`'s latest 200 active facts with what select_facts needs (and names for display)."""
    rows = (
        conn.execute(
            select(
                units.c.id,
                units.c.occurred_at,
                units.c.confidence,
                units.c.salience,
                units.c.pin,
                payload_fact.c.subject_entity_id,
                payload_fact.c.predicate,
                payload_fact.c.object_text,
                payload_fact.c.valid_to,
                entities.c.name.label("subject"),
            )
            .join(payload_fact, payload_fact.c.unit_id == units.c.id)
            .outerjoin(entities, entities.c.id == payload_fact.c.subject_entity_id)
            .where((units.c.kind == KIND_FACT) & INJECTABLE & mine(owner_id))
            .order_by(units.c.occurred_at.desc(), units.c.id.desc())
            .limit(pool)
        )
        .mappings()
        .all()
    )
    return [{**dict(r), "unit_id": r["id"]} for r in rows]


def load_open_loops(
    conn: Connection, owner_id: str, now: int, limit: int = LOOPS_INJECTED
) -> list[dict[str, Any]]:
    """`owner_id`'s active, unexpired loops; those with a due date first (soonest first), then the newest."""
    rows = (
        conn.execute(
            select(
                units.c.id,
                units.c.occurred_at,
                payload_loop.c.loop_text,
                payload_loop.c.due_at,
                payload_loop.c.expires_at,
            )
            .join(payload_loop, payload_loop.c.unit_id == units.c.id)
            .where(INJECTABLE & mine(owner_id) & (payload_loop.c.expires_at > now))
        )
        .mappings()
        .all()
    )
    ordered = sorted(rows, key=lambda r: (r["due_at"] is None, r["due_at"] or 0, -r["occurred_at"]))
    return [{**dict(r), "unit_id": r["id"]} for r in ordered[:limit]]


def load_bond_summary(conn: Connection, owner_id: str) -> dict[str, Any] | None:
    """`owner_id`'s rolling 7-day bond summary, if one exists and is active."""
    row = (
        conn.execute(
            select(
                units.c.id,
                units.c.occurred_at,
                payload_summary.c.summary_text,
                payload_summary.c.summary_json,
            )
            .join(payload_summary, payload_summary.c.unit_id == units.c.id)
            .where((payload_summary.c.scope_label == "bond") & INJECTABLE & mine(owner_id))
        )
        .mappings()
        .first()
    )
    return {**dict(row), "unit_id": row["id"]} if row else None
