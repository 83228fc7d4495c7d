"""Rename and merge entities from the memory browser (aliases resolve to one entity).

A rename keeps the old name as an alias. A merge moves everything of the merged entities onto the one kept:
unit links, facts (subject and object; a fact that becomes the same as an active one of the kept entity is
merged into it and soft-deleted), edges (a duplicate keeps the larger weight, a self-loop is dropped),
aliases (their names become aliases) and roles; an entity summary moves too unless the kept entity has one,
in which case the merged one's summary is soft-deleted. The merged entities are then deleted.

Both work only within the repository's person: another person's entity id reads as unknown, and
a name clash is checked against the person's own entities only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sqlalchemy import Connection, and_, delete, insert, select, update

from core.flows.memory.normalize import SPEAKER
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import (
    STATE_DELETED,
    dumps,
    edges,
    entities,
    entity_aliases,
    payload_fact,
    payload_summary,
    unit_entities,
    units,
)
from core.store.owners import owned_by


class EntityEditError(ValueError):
    """A rename or merge the store cannot take (message in Japanese, shown as is)."""


@dataclass
class MergeReport:
    kept: int
    merged: list[int]
    links_moved: int
    edges_moved: int
    aliases_added: list[str]
    facts_merged: int = 0  # facts that became the same as one of the kept entity's, merged into it


def _aliases(conn: Connection, entity_id: int) -> set[str]:
    return set(
        conn.execute(select(entity_aliases.c.alias).where(entity_aliases.c.entity_id == entity_id)).scalars()
    )


def _add_aliases(conn: Connection, entity_id: int, names: list[str]) -> list[str]:
    name = conn.execute(select(entities.c.name).where(entities.c.id == entity_id)).scalar()
    known = _aliases(conn, entity_id) | {name}
    added = []
    for alias in names:
        alias = alias.strip()
        if alias and alias not in known and alias != SPEAKER:
            conn.execute(insert(entity_aliases).values(entity_id=entity_id, alias=alias))
            known.add(alias)
            added.append(alias)
    return added


def rename_entity(repo: MemoryRepository, entity_id: int, new_name: str) -> str:
    """Give one of the person's entities a new name; the old one stays as an alias. Returns the new name.

    Raises EntityEditError for an empty name, the speaker, an unknown (or another person's) id, or a name
    another of the person's entities of the same type already has (merge them instead)."""
    new_name = new_name.strip()
    if not new_name:
        raise EntityEditError("新しい名前を入力してください。")
    mine = owned_by(entities, repo.owner_id)
    with repo.begin() as conn:
        row = conn.execute(select(entities).where(entities.c.id == entity_id, mine)).mappings().first()
        if row is None:
            raise EntityEditError("そのエンティティは見つかりません（削除された可能性があります）。")
        if row["name"] == SPEAKER:
            raise EntityEditError("ユーザー本人のエンティティの名前は変えられません。")
        if new_name == row["name"]:
            return new_name
        clash = conn.execute(
            select(entities.c.id).where(
                and_(mine, entities.c.type_label == row["type_label"], entities.c.name == new_name)
            )
        ).scalar()
        if clash is not None:
            raise EntityEditError(
                f"「{new_name}」という同じ種類のエンティティ（ID {clash}）がすでにあります。統合してください。"
            )
        conn.execute(
            update(entities).where(entities.c.id == entity_id).values(name=new_name, updated_at=repo.now())
        )
        conn.execute(
            delete(entity_aliases).where(
                and_(entity_aliases.c.entity_id == entity_id, entity_aliases.c.alias == new_name)
            )
        )
        _add_aliases(conn, entity_id, [row["name"]])
    return new_name


def _move_links(conn: Connection, keep: int, other: int) -> int:
    linked = set(
        conn.execute(select(unit_entities.c.unit_id).where(unit_entities.c.entity_id == keep)).scalars()
    )
    moved = 0
    for unit_id, role in conn.execute(
        select(unit_entities.c.unit_id, unit_entities.c.role).where(unit_entities.c.entity_id == other)
    ).all():
        if unit_id not in linked:
            conn.execute(insert(unit_entities).values(unit_id=unit_id, entity_id=keep, role=role))
            moved += 1
    conn.execute(delete(unit_entities).where(unit_entities.c.entity_id == other))
    return moved


def _move_edges(conn: Connection, keep: int, other: int) -> int:
    moved = 0
    rows = conn.execute(
        select(edges).where((edges.c.src_entity_id == other) | (edges.c.dst_entity_id == other))
    ).mappings()
    for edge in list(rows):
        src = keep if edge["src_entity_id"] == other else edge["src_entity_id"]
        dst = keep if edge["dst_entity_id"] == other else edge["dst_entity_id"]
        conn.execute(delete(edges).where(edges.c.id == edge["id"]))
        if src == dst:
            continue
        cond = and_(
            edges.c.src_entity_id == src, edges.c.relation == edge["relation"], edges.c.dst_entity_id == dst
        )
        existing = conn.execute(select(edges.c.id, edges.c.weight).where(cond)).first()
        if existing is None:
            values = {k: v for k, v in edge.items() if k != "id"}
            conn.execute(insert(edges).values(**{**values, "src_entity_id": src, "dst_entity_id": dst}))
        else:
            conn.execute(update(edges).where(cond).values(weight=max(existing[1], edge["weight"])))
        moved += 1
    return moved


def _move_facts(conn: Connection, repo: MemoryRepository, keep: int, other: int) -> int:
    """Point the facts about (and objects of) `other` at `keep`; a fact that becomes the same as an active fact
    of `keep` is merged into it (evidence joined, soft-deleted). Returns how many facts were merged."""
    moved = list(
        conn.execute(
            select(payload_fact.c.unit_id).where(payload_fact.c.subject_entity_id == other)
        ).scalars()
    )
    for column in (payload_fact.c.subject_entity_id, payload_fact.c.object_entity_id):
        conn.execute(update(payload_fact).where(column == other).values({column.name: keep}))
    merged = 0
    for unit_id in moved:
        twin = repo.sync_fact_key(unit_id, conn=conn)
        if twin is not None:
            repo.merge_fact(twin, unit_id, repo.now(), conn=conn)
            merged += 1
    return merged


def _move_summary(conn: Connection, owner_id: str, keep: int, other: int) -> None:
    old_key, new_key = f"entity:{other}", f"entity:{keep}"
    mine = owned_by(payload_summary, owner_id)
    theirs = conn.execute(
        select(payload_summary.c.unit_id).where(payload_summary.c.scope_key == old_key, mine)
    ).scalar()
    if theirs is None:
        return
    ours = conn.execute(
        select(payload_summary.c.unit_id).where(payload_summary.c.scope_key == new_key, mine)
    ).scalar()
    if ours is None:
        conn.execute(
            update(payload_summary).where(payload_summary.c.unit_id == theirs).values(scope_key=new_key)
        )
    else:
        conn.execute(update(units).where(units.c.id == theirs).values(state=STATE_DELETED))


def merge_entities(repo: MemoryRepository, keep: int, others: list[int]) -> MergeReport:
    """Merge the person's entities `others` into their `keep` (see the module docstring); returns what moved.

    Raises EntityEditError for an unknown (or another person's) id, the speaker among `others`, or nothing
    to merge."""
    others = [o for o in dict.fromkeys(others) if o != keep]
    if not others:
        raise EntityEditError("統合するエンティティを選んでください（残すものとは別のもの）。")
    report = MergeReport(keep, others, 0, 0, [])
    with repo.begin() as conn:
        rows = {
            int(r["id"]): r
            for r in conn.execute(
                select(entities).where(entities.c.id.in_([keep, *others]), owned_by(entities, repo.owner_id))
            ).mappings()
        }
        if keep not in rows or any(o not in rows for o in others):
            raise EntityEditError("選んだエンティティが見つかりません（削除された可能性があります）。")
        if any(rows[o]["name"] == SPEAKER for o in others):
            raise EntityEditError("ユーザー本人のエンティティは、ほかのエンティティに統合できません。")
        roles = json.loads(rows[keep]["roles_json"])
        confidence = rows[keep]["confidence"]
        for other in others:
            report.links_moved += _move_links(conn, keep, other)
            report.edges_moved += _move_edges(conn, keep, other)
            report.facts_merged += _move_facts(conn, repo, keep, other)
            _move_summary(conn, repo.owner_id, keep, other)
            report.aliases_added += _add_aliases(
                conn, keep, [rows[other]["name"], *sorted(_aliases(conn, other))]
            )
            roles += json.loads(rows[other]["roles_json"])
            confidence = max(confidence, rows[other]["confidence"])
            conn.execute(delete(entity_aliases).where(entity_aliases.c.entity_id == other))
            conn.execute(delete(entities).where(entities.c.id == other))
        conn.execute(
            update(entities)
            .where(entities.c.id == keep)
            .values(
                roles_json=dumps(list(dict.fromkeys(roles))), confidence=confidence, updated_at=repo.now()
            )
        )
    return report
