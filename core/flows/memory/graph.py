"""Entities, their aliases, unit-entity links and edges between entities (spec 03: Entity抽出).

Entities are per person: one person's 「佐藤さん」 is not another's. Links and edges join a
person's units and entities only.

an extracted name resolves to the person's entity of the same type whose name or alias has the
same name key (core.text.japanese.name_key: honorific stripped, folded, kana as katakana), so 田中, 田中さん and
an alias たなっち the model reported become one entity. A new person is named without the honorific; the
form the model wrote is kept as an alias.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, and_, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from core.store.base import inserted_id
from core.store.memory.tables import dumps, edges, entities, entity_aliases, unit_entities
from core.text.japanese import name_key, strip_honorific

PERSON = "PERSON"


def find_entity(conn: Connection, owner_id: str, type_label: str, names: list[str]) -> int | None:
    """`owner_id`'s entity of `type_label` named exactly `names[0]`, else the first whose name or alias has the
    name key of one of `names` (spec 03: entity aliases). Other people's entities are never found."""
    mine = and_(entities.c.owner_id == owner_id, entities.c.type_label == type_label)
    exact = conn.execute(select(entities.c.id).where(mine, entities.c.name == names[0])).scalar()
    if exact is not None:
        return int(exact)
    keys = {name_key(n) for n in names} - {""}
    for entity_id, name in conn.execute(
        select(entities.c.id, entities.c.name).where(mine).order_by(entities.c.id)
    ):
        if name_key(name) in keys:
            return int(entity_id)
    for entity_id, alias in conn.execute(
        select(entity_aliases.c.entity_id, entity_aliases.c.alias)
        .join(entities, entities.c.id == entity_aliases.c.entity_id)
        .where(mine)
        .order_by(entity_aliases.c.entity_id)
    ):
        if name_key(alias) in keys:
            return int(entity_id)
    return None


def _canonical(name: str) -> str:
    """A person's name without the honorific (田中さん -> 田中), unless what is left is a short hiragana
    nickname (なっちゃん stays: its ちゃん is part of how the person is called)."""
    stripped = strip_honorific(name)
    if len(stripped) < 2 or all("\u3041" <= c <= "\u309f" for c in stripped):
        return name.strip()
    return stripped


def upsert_entity(conn: Connection, owner_id: str, entity: dict[str, Any], now: int) -> int:
    """Insert or update an entity of `owner_id` resolved by type and name key (find_entity); roles and
    aliases are merged."""
    name = entity["name"]
    aliases = [a for a in entity.get("aliases", []) if a]
    entity_id_found = find_entity(conn, owner_id, entity["type_label"], [name, *aliases])
    row = (
        conn.execute(select(entities).where(entities.c.id == entity_id_found)).mappings().first()
        if entity_id_found is not None
        else None
    )
    roles = list(entity.get("roles", []))
    if row is None:
        canonical = _canonical(name) if entity["type_label"] == PERSON else name
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        # ON CONFLICT under uq_memory_entity: a concurrent writer's row is the one kept (and merged below)
        conn.execute(
            dialect.insert(entities)
            .values(
                type_label=entity["type_label"],
                name=canonical,
                roles_json=dumps(roles),
                confidence=entity.get("confidence", 0.5),
                created_at=now,
                updated_at=now,
                owner_id=owner_id,
            )
            .on_conflict_do_nothing(index_elements=["owner_id", "type_label", "name"])
        )
        row = (
            conn.execute(
                select(entities).where(
                    entities.c.owner_id == owner_id,
                    entities.c.type_label == entity["type_label"],
                    entities.c.name == canonical,
                )
            )
            .mappings()
            .one()
        )
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
    current = conn.execute(select(entities.c.name).where(entities.c.id == entity_id)).scalar()
    known = set(
        conn.execute(select(entity_aliases.c.alias).where(entity_aliases.c.entity_id == entity_id)).scalars()
    )
    known.add(current)
    for alias in [name, *aliases]:
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
