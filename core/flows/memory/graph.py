"""Entities, their aliases, unit-entity links and edges between entities (issue 5 "Store"; spec 03: Entity抽出).

Entities are per person (issue #14): one person's 「佐藤さん」 is not another's. Links and edges join a
person's units and entities only.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, and_, insert, select, update

from core.store.base import inserted_id
from core.store.memory import dumps, edges, entities, entity_aliases, unit_entities


def upsert_entity(conn: Connection, owner_id: str, entity: dict[str, Any], now: int) -> int:
    """Insert or update an entity of `owner_id` by (TYPE, name); roles and aliases are merged."""
    row = (
        conn.execute(
            select(entities).where(
                and_(
                    entities.c.owner_id == owner_id,
                    entities.c.type_label == entity["type_label"],
                    entities.c.name == entity["name"],
                )
            )
        )
        .mappings()
        .first()
    )
    roles = list(entity.get("roles", []))
    if row is None:
        entity_id = inserted_id(
            conn.execute(
                insert(entities).values(
                    type_label=entity["type_label"],
                    name=entity["name"],
                    roles_json=dumps(roles),
                    confidence=entity.get("confidence", 0.5),
                    created_at=now,
                    updated_at=now,
                    owner_id=owner_id,
                )
            )
        )
    else:
        entity_id = int(row["id"])
        merged = list(dict.fromkeys([*json.loads(row["roles_json"]), *roles]))
        conn.execute(
            update(entities)
            .where(entities.c.id == entity_id)
            .values(
                roles_json=dumps(merged),
                confidence=max(row["confidence"], entity.get("confidence", 0.0)),
                updated_at=now,
            )
        )
    known = set(
        conn.execute(select(entity_aliases.c.alias).where(entity_aliases.c.entity_id == entity_id)).scalars()
    )
    for alias in entity.get("aliases", []):
        if alias not in known:
            conn.execute(insert(entity_aliases).values(entity_id=entity_id, alias=alias))
            known.add(alias)
    return entity_id


def link_unit_entity(conn: Connection, unit_id: int, entity_id: int, role: str = "mentioned") -> None:
    """Record that a unit mentions an entity (idempotent)."""
    exists = conn.execute(
        select(unit_entities.c.unit_id).where(
            and_(unit_entities.c.unit_id == unit_id, unit_entities.c.entity_id == entity_id)
        )
    ).first()
    if exists is None:
        conn.execute(insert(unit_entities).values(unit_id=unit_id, entity_id=entity_id, role=role))


def upsert_edge(
    conn: Connection,
    src: int,
    relation: str,
    dst: int,
    weight: float,
    evidence_unit_id: int,
    evidence_text: str,
    now: int,
) -> int:
    """Insert an edge or refresh it (weight = max, last_seen, latest evidence)."""
    cond = and_(edges.c.src_entity_id == src, edges.c.relation == relation, edges.c.dst_entity_id == dst)
    row = conn.execute(select(edges).where(cond)).mappings().first()
    if row is None:
        return inserted_id(
            conn.execute(
                insert(edges).values(
                    src_entity_id=src,
                    relation=relation,
                    dst_entity_id=dst,
                    weight=weight,
                    first_seen_at=now,
                    last_seen_at=now,
                    evidence_unit_id=evidence_unit_id,
                    evidence_text=evidence_text,
                )
            )
        )
    conn.execute(
        update(edges)
        .where(cond)
        .values(
            weight=max(row["weight"], weight),
            last_seen_at=now,
            evidence_unit_id=evidence_unit_id,
            evidence_text=evidence_text,
        )
    )
    return int(row["id"])
