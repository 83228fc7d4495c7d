"""Read models for the memory browser: filtered, paged pandas tables of units,
entities and edges. Pages call these instead of SQL; times are shown in local (Japan) time. Every read is of
the repository's person only."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, func, select

from core.clock import format_local, from_local
from core.flows.memory.indexing import display_name
from core.flows.memory.normalize import SPEAKER
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import (
    KIND_EPISODE,
    KIND_FACT,
    KIND_LOOP,
    KIND_SUMMARY,
    STATE_ACTIVE,
    edges,
    entities,
    entity_aliases,
    mine,
    payload_episode,
    payload_fact,
    payload_loop,
    payload_summary,
    unit_entities,
    unit_versions,
    units,
)

if TYPE_CHECKING:
    import pandas as pd

UNIT_COLUMNS = ("id", "occurred_at", "state", "confidence", "salience", "sensitivity", "pin", "topic_tags")
KIND_COLUMNS = {
    KIND_EPISODE: (
        "input_text",
        "reply_text",
        "persona_affect_label",
        "persona_affect_intensity",
        "extract_state",
    ),
    KIND_FACT: ("subject", "predicate", "object_text", "valid_from", "valid_to", "evidence_unit_ids_json"),
    KIND_LOOP: ("loop_text", "due_at", "expires_at", "source_unit_id"),
    KIND_SUMMARY: ("scope_label", "scope_key", "summary_text", "evidence_unit_ids_json"),
}
TIME_COLUMNS = ("occurred_at", "valid_from", "valid_to", "due_at", "expires_at")


@dataclass
class Filters:
    state: str = "all"  # all | active | deleted
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    entity_id: int | None = None
    tag: str = ""
    emotion_labels: tuple[str, ...] = ()
    max_sensitivity: int = 2
    page: int = 1
    page_size: int = 20


def _day_start(day: dt.date) -> int:
    """Midnight of a local (Japan) day as epoch seconds."""
    return from_local(dt.datetime.combine(day, dt.time()))


def local_time(value: Any) -> str:
    """An epoch column value as local time text ("" for a missing time)."""
    import pandas as pd  # noqa: PLC0415 - pandas takes ~0.5 s to import; only the memory browser needs it

    return "" if value is None or pd.isna(value) else format_local(int(value))


def units_frame(repo: MemoryRepository, kind: str, filters: Filters) -> tuple[pd.DataFrame, int]:
    """One page of units of `kind` matching the filters (newest first) and the total count."""
    import pandas as pd  # noqa: PLC0415 - pandas takes ~0.5 s to import; only the memory browser needs it

    table = {
        KIND_EPISODE: payload_episode,
        KIND_FACT: payload_fact,
        KIND_LOOP: payload_loop,
        KIND_SUMMARY: payload_summary,
    }[kind]
    cols = [units.c[c] for c in UNIT_COLUMNS] + [
        units.c.persona_affect_label,
        units.c.persona_affect_intensity,
        units.c.extract_state,
    ]
    extra = [table.c[c] for c in KIND_COLUMNS[kind] if c in table.c and c not in ("persona_affect_label",)]
    version = (
        select(func.max(unit_versions.c.version))
        .where(unit_versions.c.unit_id == units.c.id)
        .scalar_subquery()
        .label("version")
    )
    query = select(*cols, *extra, version).join(table, table.c.unit_id == units.c.id)
    if kind == KIND_FACT:
        query = query.add_columns(entities.c.name.label("subject")).outerjoin(
            entities, entities.c.id == payload_fact.c.subject_entity_id
        )
    conds: list[Any] = [
        units.c.kind == kind,
        units.c.sensitivity <= filters.max_sensitivity,
        mine(repo.owner_id),
    ]
    if filters.state != "all":
        conds.append(units.c.state == filters.state)
    if kind == KIND_LOOP:  # an expired loop leaves the browser at once, before a turn purges it
        conds.append(payload_loop.c.expires_at > repo.now())
    if filters.date_from:
        conds.append(units.c.occurred_at >= _day_start(filters.date_from))
    if filters.date_to:
        conds.append(units.c.occurred_at < _day_start(filters.date_to + dt.timedelta(days=1)))
    if filters.tag:  # lower() on both sides: LIKE ignores case on SQLite, not on PostgreSQL
        conds.append(func.lower(units.c.topic_tags).contains(filters.tag.lower(), autoescape=True))
    if filters.emotion_labels:
        conds.append(units.c.persona_affect_label.in_(filters.emotion_labels))
    if filters.entity_id is not None:
        conds.append(
            units.c.id.in_(
                select(unit_entities.c.unit_id).where(unit_entities.c.entity_id == filters.entity_id)
            )
        )
    query = query.where(and_(*conds))
    with repo.connect() as conn:
        total = int(conn.execute(select(func.count()).select_from(query.subquery())).scalar() or 0)
        rows = (
            conn.execute(
                query.order_by(units.c.occurred_at.desc(), units.c.id.desc())
                .limit(filters.page_size)
                .offset((max(1, filters.page) - 1) * filters.page_size)
            )
            .mappings()
            .all()
        )
    wanted = [*UNIT_COLUMNS, *KIND_COLUMNS[kind], "version"]  # version: as read, for the stale-edit check
    frame = pd.DataFrame([{c: r.get(c) for c in wanted} for r in rows], columns=wanted)
    for col in TIME_COLUMNS:
        if col in frame:
            frame[col] = frame[col].map(local_time).astype(str)
    frame["topic_tags"] = frame["topic_tags"].map(lambda t: "、".join(json.loads(t or "[]")))
    frame["pin"] = frame["pin"].astype(bool)
    if "subject" in frame:
        frame["subject"] = frame["subject"].map(lambda n: display_name(n or SPEAKER))
    if "evidence_unit_ids_json" in frame:
        frame["evidence_unit_ids_json"] = frame["evidence_unit_ids_json"].map(
            lambda e: "、".join(f"#{i}" for i in json.loads(e or "[]"))
        )
    if "scope_key" in frame:
        frame["scope_label"] = frame["scope_label"].map(lambda k: SCOPE_JA.get(k, k))
        frame["scope_key"] = frame["scope_key"].map(lambda k: _scope_target(repo, k))
    return frame, total


SCOPE_JA = {"bond": "絆", "person": "人物", "topic": "トピック"}


def _scope_target(repo: MemoryRepository, scope_key: str) -> str:
    """rolling:7d -> 直近7日; entity:<id> -> the entity's name."""
    if scope_key == "rolling:7d":
        return "直近7日"
    if scope_key.startswith("entity:"):
        with repo.connect() as conn:
            name = conn.execute(
                select(entities.c.name).where(
                    entities.c.id == int(scope_key.split(":", 1)[1]), entities.c.owner_id == repo.owner_id
                )
            ).scalar()
        return display_name(name) if name else scope_key
    return scope_key


def entities_frame(repo: MemoryRepository) -> pd.DataFrame:
    """The person's entities with aliases and how many units mention them."""
    import pandas as pd  # noqa: PLC0415 - pandas takes ~0.5 s to import; only the memory browser needs it

    own = entities.c.owner_id == repo.owner_id
    with repo.connect() as conn:
        rows = (
            conn.execute(
                select(
                    entities.c.id,
                    entities.c.type_label,
                    entities.c.name,
                    entities.c.roles_json,
                    entities.c.confidence,
                ).where(own)
            )
            .mappings()
            .all()
        )
        aliases: dict[int, list[str]] = {}
        for eid, alias in conn.execute(
            select(entity_aliases.c.entity_id, entity_aliases.c.alias)
            .join(entities, entities.c.id == entity_aliases.c.entity_id)
            .where(own)
        ):
            aliases.setdefault(eid, []).append(alias)
        mentions: dict[int, int] = {
            int(k): int(v)
            for k, v in conn.execute(
                select(unit_entities.c.entity_id, func.count())
                .join(entities, entities.c.id == unit_entities.c.entity_id)
                .where(own)
                .group_by(unit_entities.c.entity_id)
            )
        }
    data = [
        {
            "id": r["id"],
            "type_label": r["type_label"],
            "name": display_name(r["name"]),
            "aliases": "、".join(aliases.get(r["id"], [])),
            "roles": "、".join(json.loads(r["roles_json"])),
            "confidence": r["confidence"],
            "units": mentions.get(r["id"], 0),
        }
        for r in rows
    ]
    columns = ["id", "type_label", "name", "aliases", "roles", "confidence", "units"]
    return pd.DataFrame(data, columns=columns).sort_values(
        ["units", "id"], ascending=[False, True], ignore_index=True
    )


def edges_frame(repo: MemoryRepository) -> pd.DataFrame:
    """Edges between the person's entities, with names."""
    import pandas as pd  # noqa: PLC0415 - pandas takes ~0.5 s to import; only the memory browser needs it

    src, dst = entities.alias("src"), entities.alias("dst")
    with repo.connect() as conn:
        rows = (
            conn.execute(
                select(
                    edges.c.id,
                    src.c.name.label("src"),
                    edges.c.relation,
                    dst.c.name.label("dst"),
                    edges.c.weight,
                    edges.c.evidence_unit_id,
                    edges.c.evidence_text,
                    edges.c.last_seen_at,
                )
                .join(src, src.c.id == edges.c.src_entity_id)
                .join(dst, dst.c.id == edges.c.dst_entity_id)
                .where(src.c.owner_id == repo.owner_id, dst.c.owner_id == repo.owner_id)
                .order_by(edges.c.last_seen_at.desc())
            )
            .mappings()
            .all()
        )
    frame = pd.DataFrame(
        [dict(r) for r in rows],
        columns=[
            "id",
            "src",
            "relation",
            "dst",
            "weight",
            "evidence_unit_id",
            "evidence_text",
            "last_seen_at",
        ],
    )
    frame["src"] = frame["src"].replace(SPEAKER, "ユーザー")
    frame["dst"] = frame["dst"].replace(SPEAKER, "ユーザー")
    frame["last_seen_at"] = frame["last_seen_at"].map(local_time).astype(str)
    return frame


def entity_options(repo: MemoryRepository) -> dict[int, str]:
    """Entity id -> "TYPE: name" for the entity filter."""
    with repo.connect() as conn:
        rows = conn.execute(
            select(entities.c.id, entities.c.type_label, entities.c.name)
            .where(entities.c.owner_id == repo.owner_id)
            .order_by(entities.c.name)
        ).all()
    return {int(i): f"{t}: {'ユーザー' if n == 'SPEAKER' else n}" for i, t, n in rows}


def counts(repo: MemoryRepository) -> dict[str, int]:
    """The person's active units per kind (a deleted fact no longer counts as one the companion knows)."""
    with repo.connect() as conn:
        return {
            k: int(n)
            for k, n in conn.execute(
                select(units.c.kind, func.count())
                .where(mine(repo.owner_id), units.c.state == STATE_ACTIVE)
                .group_by(units.c.kind)
            )
        }
