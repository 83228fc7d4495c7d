"""A job's model calls reach the debug log of the person it works for, whichever process runs it.

A job queued by a page on the in-process worker carries the page's sink (the session's debug log). A job run
anywhere else (the team's job engine in a replica or in `python -m core.jobs`, or owed work the sweep queued)
has none: `for_person` gives it a `StoredCallSink`, which keeps each redacted event under the person's id
(core.store.job_calls); the debug page adds those to the person's log. The person is the job's `owner`
argument (every task that calls a model has one).

Only what the person asked to record is kept: the page queues a job with DEBUG_ARG when its session logs
calls (the sidebar's 「LLM呼び出しを記録する」 is on), and a job without it (DEBUG off, or owed work the sweep
found, which nobody queued) keeps nothing, as the toggle promises.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from core.debuglog.events import DebugEvent, events_to_jsonl
from core.jobs.tasks import JobContext

if TYPE_CHECKING:  # SQLAlchemy is imported by the store when an engine opens
    from sqlalchemy.engine import Engine


DEBUG_ARG = "_debug"  # a job argument: the person who queued it records model calls


def records_calls(sink: object) -> bool:
    """Whether a page's sink forwards to a debug log: a CaptureSink only does when it has an inner log (the
    session's, while DEBUG is on); any other sink is a log itself."""
    return sink is not None and getattr(sink, "inner", sink) is not None


class StoredCallSink:
    """Debug events of one job, kept in the database under its person (redacted first)."""

    def __init__(self, engine: Engine, owner_id: str, job_id: str, secrets: Iterable[str] = ()):
        self.engine, self.owner_id, self.job_id = engine, owner_id, job_id
        self.secrets = [s for s in secrets if s and len(s) >= 4]
        self._pruned = False

    def emit(self, event: DebugEvent) -> None:
        from core.store.job_calls import prune_calls, record_call  # noqa: PLC0415 - SQLAlchemy: when a job logs

        if not self._pruned:  # once per job: the person's oldest job events beyond the limit go
            prune_calls(self.engine, self.owner_id)
            self._pruned = True
        line = events_to_jsonl([event], self.secrets)
        record_call(self.engine, self.owner_id, self.job_id, event.ts, line)


def for_person(ctx: JobContext, args: dict[str, Any]) -> JobContext:
    """`ctx` with a StoredCallSink for the job's person when it has no sink of its own, names its person and
    was queued by someone who records calls (DEBUG_ARG, removed from `args`); otherwise `ctx` as it is."""
    wanted = bool(args.pop(DEBUG_ARG, False))
    owner = args.get("owner")
    if ctx.sink is not None or not owner or not wanted:
        return ctx
    return replace(ctx, sink=StoredCallSink(ctx.engine, str(owner), ctx.job_id, ctx.secrets))
