"""Re-indexing the knowledge base as a job: entries whose vector write was lost are found in the database and
indexed by any worker, without anyone opening the knowledge page.

An entry records the version whose vector was written (core.store.knowledge.index_marks). The sweep's finder
(`owed_knowledge_index`, database only) queues one job for the team's base when an active entry's mark is not
its version, or an archived entry is still marked, past the reconcile grace period; the job
(`reindex_knowledge`) reconciles the index as the page's button does, which also marks what it finds
current (a base stored before the marks existed is checked once and marked).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine

from core.clock import utc_now
from core.flows.knowledge.index import knowledge_collection, reconcile_knowledge_index
from core.jobs.tasks import JobContext, OwedJob, Task, TaskRegistry
from core.search.vector_age import RECONCILE_GRACE_SECONDS
from core.store.knowledge.entries import KnowledgeBaseRepository
from core.store.knowledge.index_marks import index_owed, mark_indexed

INDEX_JOB_KIND = "knowledge_index"
INDEX_JOB_LABEL = "ナレッジの類似検索の索引の補完"
INDEX_JOB_KEY = ("knowledge", "index")  # the team's one knowledge base: one job at a time


def owed_knowledge_index(engine: Engine, now: int | None = None) -> list[OwedJob]:
    """One re-indexing job when any entry's vector write is owed past the grace period, else none."""
    now = utc_now() if now is None else now
    stale, archived = index_owed(engine, settled_before=now - RECONCILE_GRACE_SECONDS)
    if not stale and not archived:
        return []
    return [OwedJob(KNOWLEDGE_INDEX_TASK, INDEX_JOB_KEY, {}, "index")]


def reindex_knowledge(ctx: JobContext, args: dict[str, Any]) -> str:
    """The job: reconcile the knowledge base's vector index (a Japanese line of what it did)."""
    base = KnowledgeBaseRepository(ctx.engine)
    if ctx.chroma is None:  # nothing to write into: what is owed is settled as it is
        stale, archived = index_owed(ctx.engine)
        mark_indexed(ctx.engine, {**stale, **dict.fromkeys(archived)})
        return "ベクトルストアがないため、類似検索の索引は更新しませんでした。"
    return reconcile_knowledge_index(base, knowledge_collection(ctx.chroma(), ctx.embedder)).describe()


KNOWLEDGE_INDEX_TASK = Task(
    "knowledge.index", INDEX_JOB_KIND, INDEX_JOB_LABEL, reindex_knowledge, queueing_lock=True
)


def register_knowledge_tasks(registry: TaskRegistry) -> None:
    """The knowledge base's re-indexing task and its finder of owed vector writes, for the composition root."""
    registry.add(KNOWLEDGE_INDEX_TASK)
    registry.owe(owed_knowledge_index)
