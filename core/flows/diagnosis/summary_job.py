"""spec 04 §4 D.5, the 3-turn conversation summary, and how much of it leaves the send path.

Its result is used by the same turn: D.7 puts it in DIAGNOSTIC_PROMPT's SUMMARY (and the demo persona reads
it to know which manual sections it already cited), so moving it after the reply would change what the
model gets and, through its answers, the transitions. What can move without changing anything: the summary
and the RAG answer call (D.4) both only read the session, so with a worker the summary starts before D.4
(its messages built first; the job never touches the live session) and D.5 waits for it. The turn then
waits for the longer of the two calls instead of their sum. Without a worker (tests, scripts) or with a
full queue, D.5 makes the call itself, as the spec orders it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.flows.diagnosis.constants import FLOW_TAG, SUMMARY_EVERY_TURNS
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import SessionState
from core.flows.diagnosis.prompting import build_summary_messages
from core.guard.json_guard import GuardResult, guarded_text
from core.jobs.worker import JobFailed

SUMMARY_JOB_KIND = "summary"
SUMMARY_JOB_LABEL = "問診の要約"
# Ours: how long D.5 waits for a summary started on the worker; after that the old summary is kept.
SUMMARY_WAIT_SECONDS = 60.0


def summary_due(session: SessionState) -> bool:
    """spec 04 §4 D.5: turns 3, 6, … refresh the summary."""
    return session.diagnostic_turn > 0 and session.diagnostic_turn % SUMMARY_EVERY_TURNS == 0


def summary_job_key(session: SessionState, owner: str) -> tuple[str, str]:
    return (owner, f"diagnosis:{session.session_id}")


def summary_call(deps: DiagnosisDeps, messages: list[dict[str, str]]) -> GuardResult[str]:
    """The summary call through the guard (free text; tags step=summary)."""
    return guarded_text(deps.client, messages, sink=deps.sink, tags={"flow": FLOW_TAG, "step": "summary"})


@dataclass
class StartedSummary:
    """A summary call running on the worker; `results` gets its GuardResult when it ends."""

    key: tuple[str, str]
    results: list[GuardResult[str]] = field(default_factory=list)


def start_summary(session: SessionState, deps: DiagnosisDeps) -> StartedSummary | None:
    """Start a due summary on the worker (None: not due, no worker, or a full queue: D.5 calls it then)."""
    if deps.worker is None or not summary_due(session):
        return None
    messages = build_summary_messages(session)
    started = StartedSummary(summary_job_key(session, deps.owner))

    def run() -> str:
        result = summary_call(deps, messages)
        started.results.append(result)
        if not result.ok:
            raise JobFailed(f"問診の要約に失敗しました（{result.message}）。前回までの要約のまま続けます。")
        return "問診の要約を更新しました。"

    job = deps.worker.submit(started.key, SUMMARY_JOB_KIND, SUMMARY_JOB_LABEL, run)
    return started if job is not None else None


def summary_result(
    session: SessionState, deps: DiagnosisDeps, started: StartedSummary | None
) -> GuardResult[str] | None:
    """The summary of this turn: awaited when started on the worker (None after SUMMARY_WAIT_SECONDS),
    else called now."""
    if started is None or deps.worker is None:
        return summary_call(deps, build_summary_messages(session))
    deps.worker.wait(started.key, SUMMARY_JOB_KIND, SUMMARY_WAIT_SECONDS)
    return started.results[0] if started.results else None
