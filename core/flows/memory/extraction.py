"""Reflection fallback and entity / fact / loop extraction after each episode (spec 03; issue 5).

The episode is already saved when this runs. A failed extraction is logged (memory_extraction_log,
extract_state=failed) and retried later by `retry_pending_extractions`; the upserts are idempotent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chromadb.api.models.Collection import Collection
from sqlalchemy import Connection, insert, select, update

from core.clock import format_local
from core.debuglog import DebugSink
from core.flows.memory.constants import EXTRACT_MAX_ATTEMPTS, FLOW
from core.flows.memory.graph import link_unit_entity, upsert_edge, upsert_entity
from core.flows.memory.indexing import index_units
from core.flows.memory.loops import loop_times
from core.flows.memory.normalize import SPEAKER, normalize_entities, normalize_facts, normalize_loops
from core.guard import GuardResult, guarded_json
from core.llm.base import LLMClient, Message
from core.prompts import fill, load_prompt
from core.schemas import load_schema
from core.store.memory import KIND_EPISODE, dumps, extraction_log, payload_episode, units
from core.store.memory_repository import MemoryRepository

STEPS = ("entities", "facts", "loops")


def format_time(ts: int) -> str:
    """UNIX seconds as local (Japan) time, as the prompts show it."""
    return format_local(ts)


def episode_block(input_text: str, reply_text: str, occurred_at: int) -> str:
    """The user message every extraction call gets: the exchange and its time."""
    return f"日時: {format_time(occurred_at)}\nユーザー: {input_text}\n灯: {reply_text}"


def extraction_messages(
    step: str, input_text: str, reply_text: str, occurred_at: int, now: int
) -> list[Message]:
    """[system prompt of the step, user = the episode]; the loops prompt carries the current time."""
    prompt = fill(load_prompt(f"memory_{step}"), NOW_UNIX=str(now), NOW=format_time(now))
    return [
        {"role": "system", "content": prompt},
        {"role": "user", "content": episode_block(input_text, reply_text, occurred_at)},
    ]


def run_reflection(
    client: LLMClient,
    input_text: str,
    reply_text: str,
    occurred_at: int,
    now: int,
    sink: DebugSink | None = None,
) -> GuardResult:
    """Spec 03 Reflection: fills the trailer's fields when the trailer was missing or invalid."""
    return guarded_json(
        client,
        extraction_messages("reflection", input_text, reply_text, occurred_at, now),
        load_schema("memory_reflection"),
        name="memory_reflection",
        sink=sink,
        tags={"flow": FLOW, "step": "reflection"},
        max_tokens=600,
    )


@dataclass
class ExtractionOutcome:
    unit_id: int
    ok: bool
    entities: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    loops: list[dict[str, Any]] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    new_unit_ids: list[int] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        def plain(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [{k: (list(v) if isinstance(v, tuple) else v) for k, v in i.items()} for i in items]

        return {
            "ok": self.ok,
            "entities": plain(self.entities),
            "relations": plain(self.relations),
            "facts": plain(self.facts),
            "loops": plain(self.loops),
            "errors": self.errors,
            "new_unit_ids": self.new_unit_ids,
        }


def call_extractors(
    client: LLMClient,
    input_text: str,
    reply_text: str,
    occurred_at: int,
    now: int,
    sink: DebugSink | None = None,
) -> dict[str, GuardResult]:
    """The three guarded JSON calls (entities, facts, loops), in that order."""
    return {
        step: guarded_json(
            client,
            extraction_messages(step, input_text, reply_text, occurred_at, now),
            load_schema(f"memory_{step}"),
            name=f"memory_{step}",
            sink=sink,
            tags={"flow": FLOW, "step": f"extract_{step}"},
            max_tokens=1500,
        )
        for step in STEPS
    }


def extract_for_episode(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    unit_id: int,
    now: int | None = None,
    sink: DebugSink | None = None,
) -> ExtractionOutcome:
    """Extract, normalize and upsert everything one episode says; index the new units."""
    now = repo.now() if now is None else now
    with repo.connect() as conn:
        row = conn.execute(
            select(payload_episode.c.input_text, payload_episode.c.reply_text, units.c.occurred_at)
            .join(units, units.c.id == payload_episode.c.unit_id)
            .where(units.c.id == unit_id)
        ).one()
    results = call_extractors(client, row.input_text, row.reply_text, int(row.occurred_at), now, sink)
    return apply_extraction(repo, collection, unit_id, int(row.occurred_at), results, now)


def apply_extraction(
    repo: MemoryRepository,
    collection: Collection | None,
    unit_id: int,
    occurred_at: int,
    results: dict[str, GuardResult],
    now: int | None = None,
) -> ExtractionOutcome:
    """Store the successful parts of an extraction (idempotent) and mark the episode done or failed."""
    now = repo.now() if now is None else now
    out = ExtractionOutcome(unit_id, all(r.ok for r in results.values()))
    out.errors = {s: f"{r.error_type}: {r.message}" for s, r in results.items() if not r.ok}
    with repo.begin() as conn:
        if results["entities"].ok:
            _store_entities(conn, out, unit_id, normalize_entities(results["entities"].value), now)
        if results["facts"].ok:
            out.facts = normalize_facts(results["facts"].value)
            for fact in out.facts:
                subject = upsert_entity(
                    conn, {"type_label": fact["subject"][0], "name": fact["subject"][1]}, now
                )
                obj = (
                    upsert_entity(conn, {"type_label": fact["object"][0], "name": fact["object"][1]}, now)
                    if fact["object"]
                    else None
                )
                fact_id, _ = repo.upsert_fact(fact, subject, obj, unit_id, occurred_at, now, conn=conn)
                for entity_id in (subject, obj):
                    if entity_id is not None:
                        link_unit_entity(conn, fact_id, entity_id, "fact")
                out.new_unit_ids.append(fact_id)
        if results["loops"].ok:
            out.loops = normalize_loops(results["loops"].value)
            for loop in out.loops:
                due, expires = loop_times(loop.get("due_at"), now)
                loop_id = repo.upsert_loop(
                    loop["loop_text"], loop["confidence"], due, expires, unit_id, occurred_at, now, conn=conn
                )
                for entity in out.entities:
                    if entity["name"] != SPEAKER and entity["name"] in loop["loop_text"]:
                        link_unit_entity(conn, loop_id, entity["entity_id"], "loop")
                out.new_unit_ids.append(loop_id)
        attempts = conn.execute(select(units.c.extract_attempts).where(units.c.id == unit_id)).scalar_one()
        conn.execute(
            update(units)
            .where(units.c.id == unit_id)
            .values(extract_state="done" if out.ok else "failed", extract_attempts=attempts + 1)
        )
        conn.execute(
            update(payload_episode)
            .where(payload_episode.c.unit_id == unit_id)
            .values(extraction_json=dumps(out.summary()))
        )
        for step, result in results.items():
            conn.execute(
                insert(extraction_log).values(
                    unit_id=unit_id,
                    at=now,
                    step=step,
                    ok=int(result.ok),
                    error_type=result.error_type,
                    detail="" if result.ok else result.raw[:500],
                )
            )
        if out.new_unit_ids:
            index_units(conn, collection, sorted(set(out.new_unit_ids)))
    return out


def _store_entities(
    conn: Connection, out: ExtractionOutcome, unit_id: int, data: dict[str, Any], now: int
) -> None:
    ids: dict[tuple[str, str], int] = {}
    for entity in data["entities"]:
        entity_id = upsert_entity(conn, entity, now)
        ids[(entity["type_label"], entity["name"])] = entity_id
        if entity["name"] != SPEAKER:
            link_unit_entity(conn, unit_id, entity_id, (entity["roles"] or ["mentioned"])[0])
        out.entities.append({**entity, "entity_id": entity_id})
    for rel in data["relations"]:
        src = ids.get(rel["src"]) or upsert_entity(
            conn, {"type_label": rel["src"][0], "name": rel["src"][1]}, now
        )
        dst = ids.get(rel["dst"]) or upsert_entity(
            conn, {"type_label": rel["dst"][0], "name": rel["dst"][1]}, now
        )
        upsert_edge(conn, src, rel["relation"], dst, rel["confidence"], unit_id, rel["evidence"], now)
        out.relations.append(rel)


def pending_episode_ids(repo: MemoryRepository, limit: int = 5) -> list[int]:
    """Episodes whose extraction is pending or failed and may be retried."""
    with repo.connect() as conn:
        return [
            int(i)
            for i in conn.execute(
                select(units.c.id)
                .where(
                    (units.c.kind == KIND_EPISODE)
                    & units.c.extract_state.in_(["pending", "failed"])
                    & (units.c.extract_attempts < EXTRACT_MAX_ATTEMPTS)
                )
                .order_by(units.c.id)
                .limit(limit)
            ).scalars()
        ]


def retry_pending_extractions(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    now: int | None = None,
    sink: DebugSink | None = None,
    limit: int = 3,
) -> list[ExtractionOutcome]:
    """Retry extraction of episodes that failed earlier (at most EXTRACT_MAX_ATTEMPTS tries each)."""
    now = repo.now() if now is None else now
    return [
        extract_for_episode(repo, collection, client, uid, now, sink)
        for uid in pending_episode_ids(repo, limit)
    ]
