"""Companion memory (spec 03): persona chat with a hidden trailer, extraction, LLM-free retrieval, summaries.

Modules: constants (spec-fixed numbers), stores (the repository and Chroma collection a page opens; the
repository itself is core/store/memory/repository.py), trailer (stream splitter), loops (TTL), normalize
(extraction output), text (n-grams, query terms), indexing (FTS5 + Chroma), graph (entities, aliases,
edges), versions (edits, revert, soft delete), deletion (cascading hard delete), lanes + scoring + retrieval
+ pack (search, rerank, what is injected), mood, extraction + extraction_store (reflection fill-in,
entities / facts / loops, one combined call or three), summaries, chat (one turn: prepare_turn ->
stream_reply -> finish_turn, run_turn) + background (the one job per turn after the reply) + job_status
(what the job stored, read back) + items (the turn as a ChatItem) + continuation (a reply cut short:
続きを生成 / 再試行), browse + provenance + edits + entities (the memory browser; rename and merge), sample_data + evaluation (seeded samples, recall), demo + demo_patterns (the demo model's
persona).
"""

from core.flows.memory.background import memory_job_key, retry_job, submit_memory_job
from core.flows.memory.browse import Filters, counts, edges_frame, entities_frame, entity_options, units_frame
from core.flows.memory.chat import finish_turn, prepare_turn, stream_reply
from core.flows.memory.constants import (
    AFFECT_LABELS,
    AFFECT_LABELS_JA,
    DEDUPE_OVERLAP,
    DROP_BELOW,
    FACT_POOL,
    FACT_TOP,
    FACT_W_CONFIDENCE,
    FACT_W_PIN,
    FACT_W_RECENCY,
    FACT_W_SALIENCE,
    HISTORY_MESSAGES_FOR_Q2,
    INJECT_MAX_SENSITIVITY,
    INJECT_MIN_BEST,
    LANE_K,
    LEX_CHARS,
    LEX_FULL_GRAMS,
    MAX_INJECTED,
    RECENCY_TAU_DAYS,
    RRF_K,
    RRF_TOP,
    VECTOR_MIN_SIMILARITY,
    W_LEX,
    W_REC,
    W_RRF,
)
from core.flows.memory.continuation import (
    discard_cut_memory_turn,
    finish_continuation,
    prepare_continuation,
    stream_continuation,
)
from core.flows.memory.deletion import hard_delete
from core.flows.memory.edits import (
    EDITABLE_COLUMNS,
    InvalidEdit,
    apply_edits,
    overwrite_stale,
    stale_comparison,
)
from core.flows.memory.entities import EntityEditError, merge_entities, rename_entity
from core.flows.memory.extraction import retry_pending_extractions
from core.flows.memory.extraction_store import describe_errors
from core.flows.memory.items import refresh_items, reply_item, unexpected_error_item
from core.flows.memory.job_status import unfinished_episodes
from core.flows.memory.provenance import (
    affect_series,
    extraction_of_episode,
    latest_trace,
    unit_summary,
)
from core.flows.memory.provenance import (
    provenance as unit_provenance,
)
from core.flows.memory.reconcile import reconcile_memory_index
from core.flows.memory.retrieval import RetrievalResult, format_pack, retrieve, save_trace_for
from core.flows.memory.sample_data import SAMPLE_EPISODES, load_demo_samples
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.memory.summaries import SummaryOutcome, run_summaries
from core.flows.memory.tasks import MEMORY_TURN_TASK, defer_memory_retry, register_memory_tasks
from core.flows.memory.versions import (
    EditError,
    StaleEdit,
    StaleUnit,
    restore,
    revert_unit,
    soft_delete,
    versions_of,
)

__all__ = [
    "AFFECT_LABELS",
    "AFFECT_LABELS_JA",
    "DEDUPE_OVERLAP",
    "DROP_BELOW",
    "EDITABLE_COLUMNS",
    "FACT_POOL",
    "FACT_TOP",
    "FACT_W_CONFIDENCE",
    "FACT_W_PIN",
    "FACT_W_RECENCY",
    "FACT_W_SALIENCE",
    "HISTORY_MESSAGES_FOR_Q2",
    "INJECT_MAX_SENSITIVITY",
    "INJECT_MIN_BEST",
    "LANE_K",
    "LEX_CHARS",
    "LEX_FULL_GRAMS",
    "MAX_INJECTED",
    "MEMORY_TURN_TASK",
    "RECENCY_TAU_DAYS",
    "RRF_K",
    "RRF_TOP",
    "SAMPLE_EPISODES",
    "VECTOR_MIN_SIMILARITY",
    "W_LEX",
    "W_REC",
    "W_RRF",
    "EditError",
    "EntityEditError",
    "Filters",
    "InvalidEdit",
    "RetrievalResult",
    "StaleEdit",
    "StaleUnit",
    "SummaryOutcome",
    "affect_series",
    "apply_edits",
    "counts",
    "defer_memory_retry",
    "describe_errors",
    "discard_cut_memory_turn",
    "edges_frame",
    "entities_frame",
    "entity_options",
    "extraction_of_episode",
    "finish_continuation",
    "finish_turn",
    "format_pack",
    "hard_delete",
    "latest_trace",
    "load_demo_samples",
    "memory_collection",
    "memory_job_key",
    "memory_repository",
    "merge_entities",
    "overwrite_stale",
    "prepare_continuation",
    "prepare_turn",
    "reconcile_memory_index",
    "refresh_items",
    "register_memory_tasks",
    "rename_entity",
    "reply_item",
    "restore",
    "retrieve",
    "retry_job",
    "retry_pending_extractions",
    "revert_unit",
    "run_summaries",
    "save_trace_for",
    "soft_delete",
    "stale_comparison",
    "stream_continuation",
    "stream_reply",
    "submit_memory_job",
    "unexpected_error_item",
    "unfinished_episodes",
    "unit_provenance",
    "unit_summary",
    "units_frame",
    "versions_of",
]
