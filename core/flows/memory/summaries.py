"""Bond, person and topic summaries on their schedule, or on demand (spec 03).

Summaries are of one person's memories: every read takes the repository's `owner_id`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func, select

from core.contracts.prompts import fill, load_prompt
from core.contracts.schemas import load_schema
from core.debuglog.events import DebugSink
from core.flows.memory.constants import (
    BOND_EVERY,
    BOND_MAX_EPISODES,
    BOND_WINDOW,
    ENTITY_SUMMARY_EPISODES,
    ENTITY_SUMMARY_EVERY,
    ENTITY_SUMMARY_MAX,
    ENTITY_SUMMARY_WINDOW,
    FLOW,
)
from core.flows.memory.extraction import format_time
from core.flows.memory.indexing import index_units
from core.guard.json_guard import guarded_json
from core.llm.base import LLMClient, Message
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import (
    KIND_EPISODE,
    STATE_ACTIVE,
    entities,
    mine,
    payload_episode,
    payload_summary,
    unit_entities,
    units,
)

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

BOND_SCOPE_KEY = "rolling:7d"


def bond_summary_due(last_run_at: int | None, last_episode_at: int | None, now: int) -> bool:
    """At most every 6 h, and only when an episode arrived after the last run."""
    if last_episode_at is None:
        return False
    if last_run_at is None:
        return True
    return now - last_run_at >= BOND_EVERY and last_episode_at > last_run_at


def entity_summary_due(last_run_at: int | None, now: int) -> bool:
    """Each person / topic summary at most every 12 h."""
    return last_run_at is None or now - last_run_at >= ENTITY_SUMMARY_EVERY


@dataclass
class SummaryOutcome:
    scope_label: str
    scope_key: str
    ok: bool
    unit_id: int | None = None
    message: str = ""
    name: str = ""  # the person or topic (empty for the bond summary)

    def label(self) -> str:
        """A Japanese label for the UI: 絆サマリー（直近7日）, 人物サマリー「田中」, トピックサマリー「読書」."""
        if self.scope_label == "bond":
            return "絆サマリー（直近7日）"
        kind = {"person": "人物", "topic": "トピック"}.get(self.scope_label, self.scope_label)
        return f"{kind}サマリー「{self.name}」"


def _last_run(conn: Connection, owner_id: str, scope_label: str, scope_key: str) -> int | None:
    return conn.execute(
        select(units.c.occurred_at)
        .join(payload_summary, payload_summary.c.unit_id == units.c.id)
        .where(
            (payload_summary.c.scope_label == scope_label)
            & (payload_summary.c.scope_key == scope_key)
            & mine(owner_id)
        )
    ).scalar()


def _episodes(
    conn: Connection, owner_id: str, since: int, limit: int, entity_id: int | None = None
) -> list[Any]:
    query = (
        select(units.c.id, units.c.occurred_at, payload_episode.c.input_text, payload_episode.c.reply_text)
        .join(payload_episode, payload_episode.c.unit_id == units.c.id)
        .where(
            (units.c.kind == KIND_EPISODE)
            & (units.c.state == STATE_ACTIVE)
            & (units.c.occurred_at >= since)
            & mine(owner_id)
        )
    )
    if entity_id is not None:
        query = query.join(unit_entities, unit_entities.c.unit_id == units.c.id).where(
            unit_entities.c.entity_id == entity_id
        )
    rows = conn.execute(query.order_by(units.c.occurred_at.desc()).limit(limit)).all()
    return list(reversed(rows))


def top_entities(
    conn: Connection, owner_id: str, type_label: str, now: int, limit: int = ENTITY_SUMMARY_MAX
) -> list[tuple[int, str, int]]:
    """`owner_id`'s most-mentioned entities of a type in the last 14 days' episodes: (id, name, mentions)."""
    n = func.count(unit_entities.c.unit_id).label("n")
    rows = conn.execute(
        select(entities.c.id, entities.c.name, n)
        .join(unit_entities, unit_entities.c.entity_id == entities.c.id)
        .join(units, units.c.id == unit_entities.c.unit_id)
        .where(
            (entities.c.type_label == type_label)
            & (units.c.kind == KIND_EPISODE)
            & (units.c.state == STATE_ACTIVE)
            & (units.c.occurred_at >= now - ENTITY_SUMMARY_WINDOW)
            & mine(owner_id)
        )
        .group_by(entities.c.id, entities.c.name)
        .order_by(n.desc(), entities.c.id)
        .limit(limit)
    ).all()
    return [(int(r[0]), str(r[1]), int(r[2])) for r in rows]


def summary_messages(prompt_name: str, episodes: list[Any], name: str = "") -> list[Message]:
    """[system = the summary prompt, user = the episodes with their unit ids]."""
    lines = [
        f"[unit_id={e.id}] {format_time(e.occurred_at)} ユーザー: {e.input_text[:200]} / 灯: {e.reply_text[:200]}"
        for e in episodes
    ]
    return [
        {"role": "system", "content": fill(load_prompt(prompt_name), NAME=name)},
        {"role": "user", "content": "\n".join(lines)},
    ]


def _run_one(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    scope_label: str,
    scope_key: str,
    episodes: list[Any],
    now: int,
    sink: DebugSink | None,
    name: str = "",
) -> SummaryOutcome:
    if not episodes:
        return SummaryOutcome(
            scope_label, scope_key, False, message="対象のエピソードがありません。", name=name
        )
    result = guarded_json(
        client,
        summary_messages(f"memory_{scope_label}_summary", episodes, name),
        load_schema(f"memory_{scope_label}_summary"),
        name=f"memory_{scope_label}_summary",
        sink=sink,
        tags={"flow": FLOW, "step": f"summary_{scope_label}"},
        max_tokens=1200,
    )
    if not result.ok:
        return SummaryOutcome(scope_label, scope_key, False, message=result.message, name=name)
    known = {e.id for e in episodes}
    data = dict(result.value)
    for key in ("key_events", "favorability_reasons"):
        if key in data:
            data[key] = [ev for ev in data[key] if ev.get("unit_id") in known]
    with repo.begin() as conn:
        unit_id = repo.upsert_summary(
            scope_label,
            scope_key,
            episodes[0].occurred_at,
            episodes[-1].occurred_at,
            data,
            sorted(known),
            now,
            conn=conn,
        )
        index_units(conn, collection, [unit_id])
    return SummaryOutcome(scope_label, scope_key, True, unit_id, name=name)


def run_summaries(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    now: int | None = None,
    sink: DebugSink | None = None,
    force: bool = False,
) -> list[SummaryOutcome]:
    """Run every summary that is due (all of them with force=True): the bond summary from up to 200 episodes
    of the last 7 days, then person and topic summaries for the 3 most-mentioned of each in 14 days."""
    now = repo.now() if now is None else now
    owner = repo.owner_id
    outcomes: list[SummaryOutcome] = []
    with repo.connect() as conn:
        last_episode = conn.execute(
            select(func.max(units.c.created_at)).where((units.c.kind == KIND_EPISODE) & mine(owner))
        ).scalar()
        if force or bond_summary_due(_last_run(conn, owner, "bond", BOND_SCOPE_KEY), last_episode, now):
            bond_episodes = _episodes(conn, owner, now - BOND_WINDOW, BOND_MAX_EPISODES)
        else:
            bond_episodes = None
        jobs = []
        for scope_label, type_label in (("person", "PERSON"), ("topic", "TOPIC")):
            for entity_id, name, _ in top_entities(conn, owner, type_label, now):
                key = f"entity:{entity_id}"
                if force or entity_summary_due(_last_run(conn, owner, scope_label, key), now):
                    eps = _episodes(
                        conn, owner, now - ENTITY_SUMMARY_WINDOW, ENTITY_SUMMARY_EPISODES, entity_id
                    )
                    jobs.append((scope_label, key, eps, name))
    if bond_episodes is not None:
        outcomes.append(_run_one(repo, collection, client, "bond", BOND_SCOPE_KEY, bond_episodes, now, sink))
    for scope_label, key, eps, name in jobs:
        outcomes.append(_run_one(repo, collection, client, scope_label, key, eps, now, sink, name))
    return outcomes
