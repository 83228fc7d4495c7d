"""What follows a memory reply, as ONE background job per turn (spec 03 Reflection,
Entity / Fact / OpenLoops 抽出, summaries).

The turn saves the episode and returns; the job (the named task `memory.turn`, core/flows/memory/tasks.py)
first claims the episode (pending -> running in one UPDATE; a job that finds it claimed does nothing and says
so), then fills a pending reflection, extracts entities, facts and loops, catches up on one earlier failed or
unprocessed extraction, and runs the summaries that are due.
Results and failures land in the store (extraction state and log, see extraction_store.py); the job's
Japanese summary or failure message lands in the worker's job list. Jobs of one person run one at a time,
in order, under `memory_job_key(owner)`. Without a worker (scripts, tests) the same job runs inline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.debuglog.events import DebugSink
from core.flows.memory.constants import DEFAULT_EXTRACTION, EXTRACT_RETRIES_PER_TURN
from core.flows.memory.extraction import (
    ExtractionOutcome,
    extract_for_episode,
    fill_pending_reflection,
    inline_claim,
    retry_pending_extractions,
)
from core.flows.memory.extraction_store import FINISHED_STEP, claim_extraction, describe_errors, log_step
from core.flows.memory.summaries import SummaryOutcome, run_summaries
from core.llm.base import LLMClient
from core.store.memory.repository import MemoryRepository

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

MEMORY_JOB_KIND = "memory"
RETRY_JOB_KIND = "memory_retry"
MEMORY_JOB_LABEL = "記憶の整理（内省・抽出・サマリー）"
RETRY_JOB_LABEL = "抽出の再試行"
RETRY_LIMIT = 10  # episodes one 再試行 job catches up on


def memory_job_key(owner: str) -> tuple[str, str]:
    """The worker key of a person's memory jobs (one person's jobs run one at a time, in order)."""
    return (owner, "memory")


def summary_line(outcome: SummaryOutcome) -> str:
    """「絆サマリー（直近7日）を作成」 or 「人物サマリー「田中」の作成に失敗（…）」."""
    return outcome.label() + ("を作成" if outcome.ok else f"の作成に失敗（{outcome.message}）")


def extraction_failure(outcome: ExtractionOutcome) -> str:
    """The Japanese message of a failed extraction (the episode is kept and retried later)."""
    return (
        f"エピソード #{outcome.unit_id} の抽出に失敗しました（{describe_errors(outcome.errors)}）。"
        "エピソードは保存済みで、後で再試行できます。"
    )


def already_handled(episode_id: int) -> str:
    """The message of a job that found its episode claimed by another job (or already done)."""
    return (
        f"エピソード #{episode_id} は別の処理がすでに整理した（または整理中の）ため、"
        "この処理では何もしませんでした。"
    )


@dataclass
class MemoryJobResult:
    """What one turn's background job did (all of it is also in the store). `extraction` is None when
    another job had claimed the episode: this one did nothing."""

    episode_id: int
    extraction: ExtractionOutcome | None
    reflection: tuple[dict[str, Any], str] | None = None  # (reflection, source) when it was pending
    retried: list[ExtractionOutcome] = field(default_factory=list)
    summaries: list[SummaryOutcome] = field(default_factory=list)

    @property
    def failure(self) -> str | None:
        """A Japanese message when the episode's extraction failed, else None."""
        x = self.extraction
        return None if x is None or x.ok else extraction_failure(x)

    def message(self) -> str:
        """A one-line Japanese account for the page's job list."""
        x = self.extraction
        if x is None:
            return already_handled(self.episode_id)
        text = (
            f"エピソード #{self.episode_id} を記憶しました"
            f"（人物・場所など {len(x.entities)} 件・事実 {len(x.facts)} 件・約束 {len(x.loops)} 件）。"
        )
        if self.reflection is not None:
            text += " 内省を補完しました。" if self.reflection[1] == "reflection" else " 内省は既定値です。"
        if self.retried:
            text += f" 以前の抽出を {sum(r.ok for r in self.retried)}/{len(self.retried)} 件やり直しました。"
        if self.summaries:
            text += " サマリー: " + "、".join(summary_line(s) for s in self.summaries) + "。"
        return text


def run_memory_job(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    episode_id: int,
    now: int | None = None,
    sink: DebugSink | None = None,
    mode: str = DEFAULT_EXTRACTION,
    claim: str = "",
) -> MemoryJobResult:
    """The work after one episode (spec 03): claim it (pending -> running, atomically: a second job for the
    same episode stops here and says so), reflection when pending, extraction, one catch-up of an earlier
    episode (only when this extraction worked: the model answers again), then the due summaries, each
    summary and the end of the job logged on the episode. Inline or on a worker, the same function."""
    now = repo.now() if now is None else now
    claim = claim or inline_claim()
    if not claim_extraction(repo, episode_id, claim, now):
        return MemoryJobResult(episode_id, None)
    reflection = fill_pending_reflection(repo, client, episode_id, now, sink)
    extraction = extract_for_episode(repo, collection, client, episode_id, now, sink, mode)
    result = MemoryJobResult(episode_id, extraction, reflection)
    if extraction.ok:
        result.retried = retry_pending_extractions(
            repo,
            collection,
            client,
            now,
            sink,
            EXTRACT_RETRIES_PER_TURN,
            mode,
            before=episode_id,
            claim=claim,
        )
    result.summaries = run_summaries(repo, collection, client, now, sink)
    with repo.begin() as conn:
        for s in result.summaries:
            log_step(conn, episode_id, f"summary_{s.scope_label}", s.ok, now, detail=summary_line(s))
        log_step(
            conn, episode_id, FINISHED_STEP, extraction.ok, now, detail=result.failure or result.message()
        )
    return result
