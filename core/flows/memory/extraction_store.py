"""Writing what the background work found for an episode (spec 03 Reflection, Entity / Fact / OpenLoops
抽出): the reflection that replaces a pending default, the extracted units, and one log row per step.

The extraction state of an episode (memory_units.extract_state, memory_extraction_log) is where results and
failures of the background job land: pages read them back from here, never from the job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, and_, insert, or_, select, update

from core.flows.memory.graph import link_unit_entity, upsert_edge, upsert_entity
from core.flows.memory.indexing import index_units
from core.flows.memory.loops import loop_times
from core.flows.memory.normalize import SPEAKER, normalize_entities, normalize_facts, normalize_loops
from core.guard.error_texts import ERROR_TYPE_LABELS
from core.guard.json_guard import GuardResult
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import (
    KIND_EPISODE,
    clamp01,
    dumps,
    extraction_log,
    mine,
    payload_episode,
    units,
)

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

REFLECTION_NOTE = "トレーラーが無かったため内省（Reflection）で補完"
# memory_extraction_log.step of the row that ends the background work on an episode (its job or a retry).
FINISHED_STEP = "background"


# Ours: a claim older than this belongs to a job that died without a heartbeat the engine saw (the embedded
# worker's process was killed); the episode may be claimed again.
CLAIM_STALE_S = 600


def claim_extraction(repo: MemoryRepository, unit_id: int, claim: str, now: int | None = None) -> bool:
    """Move the person's episode from pending (or failed, with tries left) to running for `claim`, in one
    UPDATE (a compare-and-set on both engines). True for the claimer; a second claimer updates 0 rows and
    must do nothing. The same claim (a retried job) or a stale one may take a running episode again."""
    now = repo.now() if now is None else now
    takeable = or_(
        units.c.extract_state.in_(["pending", "failed"]),
        and_(
            units.c.extract_state == "running",
            or_(units.c.extract_claim == claim, units.c.extract_claimed_at < now - CLAIM_STALE_S),
        ),
    )
    with repo.begin() as conn:
        result = conn.execute(
            update(units)
            .where(units.c.id == unit_id, units.c.kind == KIND_EPISODE, mine(repo.owner_id))
            .where(takeable)
            .values(extract_state="running", extract_claim=claim, extract_claimed_at=now)
        )
        return result.rowcount == 1


def release_claim(repo: MemoryRepository, unit_id: int, claim: str) -> None:
    """Give a claimed episode back as pending (the job stopped before extracting: a provider error left it
    owed, not failed)."""
    with repo.begin() as conn:
        conn.execute(
            update(units)
            .where(units.c.id == unit_id, units.c.extract_state == "running", units.c.extract_claim == claim)
            .values(extract_state="pending", extract_claim=None, extract_claimed_at=None)
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


STEP_WORDS = {"entities": "人物・関係", "facts": "事実", "loops": "約束"}


def describe_errors(errors: dict[str, str]) -> str:
    """「人物・関係・事実・約束: LLM呼び出しエラー: …」 (the stored errors are 「provider_error: …」 per step): steps
    that failed alike (one combined call) share a line; steps and error types in Japanese."""
    steps: dict[str, list[str]] = {}
    for step, message in errors.items():
        steps.setdefault(message, []).append(STEP_WORDS.get(step, step))
    return " / ".join(f"{'・'.join(names)}: {_error_words(message)}" for message, names in steps.items())


def _error_words(message: str) -> str:
    kind, sep, rest = message.partition(": ")
    return f"{ERROR_TYPE_LABELS[kind]}{sep}{rest}" if kind in ERROR_TYPE_LABELS else message


def log_step(
    conn: Connection,
    unit_id: int,
    step: str,
    ok: bool,
    now: int,
    error_type: str | None = None,
    detail: str = "",
) -> None:
    """One row of memory_extraction_log: what a background step did for the episode."""
    conn.execute(
        insert(extraction_log).values(
            unit_id=unit_id, at=now, step=step, ok=int(ok), error_type=error_type, detail=detail
        )
    )


def store_reflection(
    repo: MemoryRepository,
    unit_id: int,
    reflection: dict[str, Any],
    source: str,
    result: GuardResult[Any],
    now: int,
) -> None:
    """Replace an episode's pending reflection (spec 03 Reflection: units persona_affect_* / salience /
    confidence, payload_episode.reflection_json) and record it as a version of the unit."""
    with repo.begin() as conn:
        conn.execute(
            update(units)
            .where(units.c.id == unit_id)
            .values(
                confidence=clamp01(reflection.get("confidence")),
                salience=clamp01(reflection.get("salience")),
                topic_tags=dumps(list(reflection.get("topic_tags", []))),
                persona_affect_label=reflection.get("persona_affect_label", "neutral"),
                persona_affect_intensity=clamp01(reflection.get("persona_affect_intensity"), 0.0),
                updated_at=now,
            )
        )
        conn.execute(
            update(payload_episode)
            .where(payload_episode.c.unit_id == unit_id)
            .values(reflection_json=dumps(dict(reflection)), reflection_source=source)
        )
        repo.record_version(unit_id, "edit", now, REFLECTION_NOTE, conn=conn)
        log_step(
            conn,
            unit_id,
            "reflection",
            result.ok,
            now,
            result.error_type,
            "" if result.ok else result.raw[:500],
        )


def apply_extraction(
    repo: MemoryRepository,
    collection: Collection | None,
    unit_id: int,
    occurred_at: int,
    results: dict[str, GuardResult[Any]],
    now: int | None = None,
) -> ExtractionOutcome:
    """Store the successful parts of an extraction (idempotent) and mark the episode done or failed."""
    now = repo.now() if now is None else now
    with repo.begin() as conn:
        out = store_extraction(repo, conn, unit_id, occurred_at, results, now)
        if out.new_unit_ids:
            index_units(conn, collection, sorted(set(out.new_unit_ids)))
    return out


def store_extraction(
    repo: MemoryRepository,
    conn: Connection,
    unit_id: int,
    occurred_at: int,
    results: dict[str, GuardResult[Any]],
    now: int,
) -> ExtractionOutcome:
    """The writes of `apply_extraction` in the caller's transaction, without indexing the new units (a caller
    storing many episodes indexes them once)."""
    out = ExtractionOutcome(unit_id, all(r.ok for r in results.values()))
    out.errors = {s: f"{r.error_type}: {r.message}" for s, r in results.items() if not r.ok}
    if results["entities"].ok:
        _store_entities(conn, repo.owner_id, out, unit_id, normalize_entities(results["entities"].value), now)
    if results["facts"].ok:
        out.facts = normalize_facts(results["facts"].value)
        for fact in out.facts:
            subject = upsert_entity(
                conn, repo.owner_id, {"type_label": fact["subject"][0], "name": fact["subject"][1]}, now
            )
            obj = (
                upsert_entity(
                    conn, repo.owner_id, {"type_label": fact["object"][0], "name": fact["object"][1]}, now
                )
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
        .values(
            extract_state="done" if out.ok else "failed",
            extract_attempts=attempts + 1,
            extract_claim=None,
            extract_claimed_at=None,
        )
    )
    conn.execute(
        update(payload_episode)
        .where(payload_episode.c.unit_id == unit_id)
        .values(extraction_json=dumps(out.summary()))
    )
    for step, result in results.items():
        log_step(
            conn, unit_id, step, result.ok, now, result.error_type, "" if result.ok else result.raw[:500]
        )
    return out


def _store_entities(
    conn: Connection, owner_id: str, out: ExtractionOutcome, unit_id: int, data: dict[str, Any], now: int
) -> None:
    ids: dict[tuple[str, str], int] = {}
    for entity in data["entities"]:
        entity_id = upsert_entity(conn, owner_id, entity, now)
        ids[(entity["type_label"], entity["name"])] = entity_id
        if entity["name"] != SPEAKER:
            link_unit_entity(conn, unit_id, entity_id, (entity["roles"] or ["mentioned"])[0])
        out.entities.append({**entity, "entity_id": entity_id})
    for rel in data["relations"]:
        src = ids.get(rel["src"]) or upsert_entity(
            conn, owner_id, {"type_label": rel["src"][0], "name": rel["src"][1]}, now
        )
        dst = ids.get(rel["dst"]) or upsert_entity(
            conn, owner_id, {"type_label": rel["dst"][0], "name": rel["dst"][1]}, now
        )
        upsert_edge(conn, src, rel["relation"], dst, rel["confidence"], unit_id, rel["evidence"], now)
        out.relations.append(rel)
