"""What the background work has done for episodes, read back from the store: the page's
per-reply details fill in from here, and the failures shown at the top of the page come from here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from core.flows.memory.constants import EXTRACT_MAX_ATTEMPTS
from core.flows.memory.extraction_store import FINISHED_STEP, describe_errors
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import KIND_EPISODE, extraction_log, mine, payload_episode, units

EXCERPT_CHARS = 40


def background_states(repo: MemoryRepository, episode_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """For each stored episode: whether its background work finished, its extraction state, its reflection
    (and where it came from), the extraction summary (once extracted) and the summary lines its job logged."""
    ids = sorted({int(i) for i in episode_ids})
    if not ids:
        return {}
    with repo.connect() as conn:
        rows = conn.execute(
            select(
                units.c.id,
                units.c.extract_state,
                units.c.extract_attempts,
                payload_episode.c.reflection_json,
                payload_episode.c.reflection_source,
                payload_episode.c.extraction_json,
            )
            .join(payload_episode, payload_episode.c.unit_id == units.c.id)
            .where(units.c.id.in_(ids), mine(repo.owner_id))
        ).all()
        ids = [int(r.id) for r in rows]  # the person's own episodes only
        logs = conn.execute(
            select(extraction_log.c.unit_id, extraction_log.c.step, extraction_log.c.detail)
            .where(extraction_log.c.unit_id.in_(ids))
            .where((extraction_log.c.step == FINISHED_STEP) | extraction_log.c.step.like("summary_%"))
            .order_by(extraction_log.c.id)
        ).all()
    out: dict[int, dict[str, Any]] = {}
    for r in rows:
        extracted = r.extract_state in ("done", "failed")
        out[int(r.id)] = {
            "finished": False,
            "extract_state": r.extract_state,
            "extract_attempts": int(r.extract_attempts),
            "reflection": json.loads(r.reflection_json or "{}"),
            "reflection_source": r.reflection_source,
            "extraction": json.loads(r.extraction_json or "{}") if extracted else None,
            "summaries": [],
        }
    for unit_id, step, detail in logs:
        state = out.get(int(unit_id))
        if state is None:
            continue
        if step == FINISHED_STEP:
            state["finished"] = True
        else:
            state["summaries"].append(detail)
    return out


@dataclass(frozen=True)
class UnfinishedEpisode:
    """An episode whose extraction failed, or that no job has processed yet (a full queue)."""

    unit_id: int
    state: str  # failed | pending
    attempts: int
    errors: dict[str, str]
    excerpt: str

    @property
    def retryable(self) -> bool:
        return self.attempts < EXTRACT_MAX_ATTEMPTS

    def describe(self) -> str:
        """One Japanese line: 「#3「田中さんと…」: 抽出に失敗（人物・関係・事実・約束: LLM呼び出しエラー: …）」."""
        head = f"#{self.unit_id}「{self.excerpt}」"
        if self.state == "pending":
            return f"{head}: まだ整理されていません"
        reasons = describe_errors(self.errors) or "理由不明"
        tail = "" if self.retryable else "（再試行の上限に達しました）"
        return f"{head}: 抽出に失敗（{reasons}）{tail}"


def unfinished_episodes(repo: MemoryRepository, limit: int = 20) -> list[UnfinishedEpisode]:
    """Episodes whose extraction failed or is still pending, oldest first."""
    with repo.connect() as conn:
        rows = conn.execute(
            select(
                units.c.id,
                units.c.extract_state,
                units.c.extract_attempts,
                payload_episode.c.input_text,
                payload_episode.c.extraction_json,
            )
            .join(payload_episode, payload_episode.c.unit_id == units.c.id)
            .where(
                (units.c.kind == KIND_EPISODE)
                & units.c.extract_state.in_(["failed", "pending"])
                & mine(repo.owner_id)
            )
            .order_by(units.c.id)
            .limit(limit)
        ).all()
    out = []
    for r in rows:
        errors = (
            json.loads(r.extraction_json or "{}").get("errors", {}) if r.extract_state == "failed" else {}
        )
        text = " ".join(str(r.input_text).split())
        excerpt = text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else "")
        out.append(UnfinishedEpisode(int(r.id), r.extract_state, int(r.extract_attempts), errors, excerpt))
    return out
