"""Reflection fallback and entity / fact / loop extraction after each episode (spec 03).

The episode is already saved when this runs (in the background job, core/flows/memory/background.py). An
episode saved without a valid trailer has a default reflection marked pending; `process_episode` fills it
in before extracting. A failed extraction is logged (memory_extraction_log, extract_state=failed) and
retried later by `retry_pending_extractions`, which also catches up on episodes whose job never ran (a full
queue); the upserts are idempotent.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from core.clock import format_local
from core.contracts.prompts import fill, load_prompt
from core.contracts.schemas import load_schema
from core.debuglog.events import DebugSink
from core.flows.memory.constants import (
    DEFAULT_EXTRACTION,
    EXTRACT_MAX_ATTEMPTS,
    EXTRACTION_COMBINED,
    EXTRACTION_SEPARATE,
    FLOW,
)
from core.flows.memory.extraction_store import (
    FINISHED_STEP,
    ExtractionOutcome,
    apply_extraction,
    claim_extraction,
    log_step,
    store_reflection,
)
from core.guard.json_guard import GuardResult, guarded_json
from core.llm.base import LLMClient, Message
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import KIND_EPISODE, mine, payload_episode, units

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

__all__ = [
    "DEFAULT_REFLECTION",
    "REFLECTION_PENDING",
    "STEPS",
    "ExtractionOutcome",
    "apply_extraction",
    "call_extractors",
    "episode_block",
    "extract_for_episode",
    "extraction_messages",
    "fill_pending_reflection",
    "format_time",
    "inline_claim",
    "pending_episode_ids",
    "process_episode",
    "retry_pending_extractions",
    "run_reflection",
]

STEPS = ("entities", "facts", "loops")
COMBINED_STEP = "extraction"  # prompts/memory_extraction.md + schemas/memory_extraction.schema.json
REFLECTION_PENDING = "pending"  # reflection_source of an episode saved before its reflection is known
DEFAULT_REFLECTION: dict[str, Any] = {
    "reflection_text": "",
    "persona_affect_label": "neutral",
    "persona_affect_intensity": 0.0,
    "topic_tags": [],
    "salience": 0.3,
    "confidence": 0.3,
}


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
) -> GuardResult[Any]:
    """Spec 03 Reflection: fills the trailer's fields when the trailer was missing or invalid."""
    return guarded_json(
        client,
        extraction_messages("reflection", input_text, reply_text, occurred_at, now),
        load_schema("memory_reflection"),
        name="memory_reflection",
        sink=sink,
        tags={"flow": FLOW, "step": "reflection"},
        max_tokens=600,
        clamp=True,
    )


def _extract(
    client: LLMClient, step: str, messages: list[Message], sink: DebugSink | None
) -> GuardResult[Any]:
    return guarded_json(
        client,
        messages,
        load_schema(f"memory_{step}"),
        name=f"memory_{step}",
        sink=sink,
        tags={"flow": FLOW, "step": f"extract_{step}" if step in STEPS else "extract_all"},
        max_tokens=1500 if step in STEPS else 3000,
        clamp=True,
    )


def call_extractors(
    client: LLMClient,
    input_text: str,
    reply_text: str,
    occurred_at: int,
    now: int,
    sink: DebugSink | None = None,
    mode: str = DEFAULT_EXTRACTION,
) -> dict[str, GuardResult[Any]]:
    """Spec 03 Entity / Fact / OpenLoops 抽出, keyed by step: three guarded JSON calls (mode "separate"),
    or one call whose answer holds the three spec shapes (mode "combined"; a failure fails all three)."""
    if mode == EXTRACTION_SEPARATE:
        return {
            step: _extract(
                client, step, extraction_messages(step, input_text, reply_text, occurred_at, now), sink
            )
            for step in STEPS
        }
    if mode != EXTRACTION_COMBINED:
        raise ValueError(f"unknown extraction mode: {mode}")
    messages = extraction_messages(COMBINED_STEP, input_text, reply_text, occurred_at, now)
    result = _extract(client, COMBINED_STEP, messages, sink)
    if not result.ok:
        return dict.fromkeys(STEPS, result)
    return {
        step: GuardResult(True, result.value[step], raw=result.raw, attempts=result.attempts)
        for step in STEPS
    }


def _episode_row(repo: MemoryRepository, unit_id: int) -> Any:
    """The person's episode (NoResultFound for another person's unit)."""
    with repo.connect() as conn:
        return conn.execute(
            select(
                payload_episode.c.input_text,
                payload_episode.c.reply_text,
                payload_episode.c.reflection_source,
                units.c.occurred_at,
            )
            .join(units, units.c.id == payload_episode.c.unit_id)
            .where(units.c.id == unit_id, mine(repo.owner_id))
        ).one()


def extract_for_episode(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    unit_id: int,
    now: int | None = None,
    sink: DebugSink | None = None,
    mode: str = DEFAULT_EXTRACTION,
) -> ExtractionOutcome:
    """Extract, normalize and upsert everything one episode says; index the new units."""
    now = repo.now() if now is None else now
    row = _episode_row(repo, unit_id)
    results = call_extractors(client, row.input_text, row.reply_text, int(row.occurred_at), now, sink, mode)
    return apply_extraction(repo, collection, unit_id, int(row.occurred_at), results, now)


def fill_pending_reflection(
    repo: MemoryRepository,
    client: LLMClient,
    unit_id: int,
    now: int | None = None,
    sink: DebugSink | None = None,
) -> tuple[dict[str, Any], str] | None:
    """Spec 03 Reflection for an episode saved with a pending default (no valid trailer): the reflection
    call, or the default when it fails; stored on the episode. None when nothing was pending."""
    now = repo.now() if now is None else now
    row = _episode_row(repo, unit_id)
    if row.reflection_source != REFLECTION_PENDING:
        return None
    occurred_at = int(row.occurred_at)
    result = run_reflection(client, row.input_text, row.reply_text, occurred_at, now, sink)
    reflection, source = (
        (dict(result.value), "reflection") if result.ok else (dict(DEFAULT_REFLECTION), "default")
    )
    store_reflection(repo, unit_id, reflection, source, result, now)
    return reflection, source


def inline_claim() -> str:
    """A claim token for work run outside a job (scripts, tests, a page without a worker)."""
    return f"inline-{uuid.uuid4().hex[:12]}"


def process_episode(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    unit_id: int,
    now: int | None = None,
    sink: DebugSink | None = None,
    mode: str = DEFAULT_EXTRACTION,
    claim: str = "",
) -> ExtractionOutcome | None:
    """A pending reflection first, then the extraction of one episode (logged as the end of its background
    work, so the page stops waiting for it). None when another job holds (or finished) the episode."""
    now = repo.now() if now is None else now
    if not claim_extraction(repo, unit_id, claim or inline_claim(), now):
        return None
    fill_pending_reflection(repo, client, unit_id, now, sink)
    out = extract_for_episode(repo, collection, client, unit_id, now, sink, mode)
    with repo.begin() as conn:
        log_step(conn, unit_id, FINISHED_STEP, out.ok, now, detail="再試行")
    return out


def pending_episode_ids(repo: MemoryRepository, limit: int = 5, before: int | None = None) -> list[int]:
    """The person's episodes whose extraction is pending or failed and may be retried (older than `before` when given:
    a newer pending episode has its own job queued)."""
    query = select(units.c.id).where(
        (units.c.kind == KIND_EPISODE)
        & units.c.extract_state.in_(["pending", "failed"])
        & (units.c.extract_attempts < EXTRACT_MAX_ATTEMPTS)
        & mine(repo.owner_id)
    )
    if before is not None:
        query = query.where(units.c.id < before)
    with repo.connect() as conn:
        return [int(i) for i in conn.execute(query.order_by(units.c.id).limit(limit)).scalars()]


def retry_pending_extractions(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    now: int | None = None,
    sink: DebugSink | None = None,
    limit: int = 3,
    mode: str = DEFAULT_EXTRACTION,
    before: int | None = None,
    claim: str = "",
) -> list[ExtractionOutcome]:
    """Retry extraction of episodes that failed earlier or were never processed (at most
    EXTRACT_MAX_ATTEMPTS tries each), filling a pending reflection first; episodes another job claimed
    are left to it."""
    now = repo.now() if now is None else now
    claim = claim or inline_claim()
    outcomes = (
        process_episode(repo, collection, client, uid, now, sink, mode, claim)
        for uid in pending_episode_ids(repo, limit, before)
    )
    return [out for out in outcomes if out is not None]
