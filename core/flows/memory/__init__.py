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


The names below load on first use (PEP 562): importing the package (or one of its modules) does not
import the whole flow, so the shell starts without the heavy libraries a page may never need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.flows.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from core.flows.memory.background import memory_job_key
    from core.flows.memory.browse import (
        Filters,
        counts,
        edges_frame,
        entities_frame,
        entity_options,
        units_frame,
    )
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
        FLOW,
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
        VECTOR_LANE_WEIGHT,
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
    from core.flows.memory.conversation import load_conversation, save_conversation
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
    from core.flows.memory.items import (
        TurnDetails,
        refresh_items,
        reply_item,
        turn_details_of,
        unexpected_error_item,
    )
    from core.flows.memory.job_status import unfinished_episodes
    from core.flows.memory.provenance import affect_series, extraction_of_episode, latest_trace, unit_summary
    from core.flows.memory.provenance import (
        provenance as unit_provenance,
    )
    from core.flows.memory.reconcile import reconcile_memory_index
    from core.flows.memory.retrieval import RetrievalResult, format_pack, retrieve, save_trace_for
    from core.flows.memory.sample_data import DEMO_TURNS, SAMPLE_EPISODES, load_demo_samples
    from core.flows.memory.stores import memory_collection, memory_repository
    from core.flows.memory.summaries import SummaryOutcome, run_summaries
    from core.flows.memory.tasks import defer_memory_retry, register_memory_tasks
    from core.flows.memory.trailer import split_raw_reply
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
    "DEMO_TURNS",
    "DROP_BELOW",
    "EDITABLE_COLUMNS",
    "FACT_POOL",
    "FACT_TOP",
    "FACT_W_CONFIDENCE",
    "FACT_W_PIN",
    "FACT_W_RECENCY",
    "FACT_W_SALIENCE",
    "FLOW",
    "HISTORY_MESSAGES_FOR_Q2",
    "INJECT_MAX_SENSITIVITY",
    "INJECT_MIN_BEST",
    "LANE_K",
    "LEX_CHARS",
    "LEX_FULL_GRAMS",
    "MAX_INJECTED",
    "RECENCY_TAU_DAYS",
    "RRF_K",
    "RRF_TOP",
    "SAMPLE_EPISODES",
    "VECTOR_LANE_WEIGHT",
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
    "TurnDetails",
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
    "load_conversation",
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
    "retry_pending_extractions",
    "revert_unit",
    "run_summaries",
    "save_conversation",
    "save_trace_for",
    "soft_delete",
    "split_raw_reply",
    "stale_comparison",
    "stream_continuation",
    "stream_reply",
    "turn_details_of",
    "unexpected_error_item",
    "unfinished_episodes",
    "unit_provenance",
    "unit_summary",
    "units_frame",
    "versions_of",
]

# public name -> (module, name in that module)
_EXPORTS: dict[str, tuple[str, str]] = {
    "AFFECT_LABELS": ("core.flows.memory.constants", "AFFECT_LABELS"),
    "AFFECT_LABELS_JA": ("core.flows.memory.constants", "AFFECT_LABELS_JA"),
    "DEDUPE_OVERLAP": ("core.flows.memory.constants", "DEDUPE_OVERLAP"),
    "DEMO_TURNS": ("core.flows.memory.sample_data", "DEMO_TURNS"),
    "DROP_BELOW": ("core.flows.memory.constants", "DROP_BELOW"),
    "EDITABLE_COLUMNS": ("core.flows.memory.edits", "EDITABLE_COLUMNS"),
    "EditError": ("core.flows.memory.versions", "EditError"),
    "EntityEditError": ("core.flows.memory.entities", "EntityEditError"),
    "FACT_POOL": ("core.flows.memory.constants", "FACT_POOL"),
    "FACT_TOP": ("core.flows.memory.constants", "FACT_TOP"),
    "FACT_W_CONFIDENCE": ("core.flows.memory.constants", "FACT_W_CONFIDENCE"),
    "FACT_W_PIN": ("core.flows.memory.constants", "FACT_W_PIN"),
    "FACT_W_RECENCY": ("core.flows.memory.constants", "FACT_W_RECENCY"),
    "FACT_W_SALIENCE": ("core.flows.memory.constants", "FACT_W_SALIENCE"),
    "FLOW": ("core.flows.memory.constants", "FLOW"),
    "Filters": ("core.flows.memory.browse", "Filters"),
    "HISTORY_MESSAGES_FOR_Q2": ("core.flows.memory.constants", "HISTORY_MESSAGES_FOR_Q2"),
    "INJECT_MAX_SENSITIVITY": ("core.flows.memory.constants", "INJECT_MAX_SENSITIVITY"),
    "INJECT_MIN_BEST": ("core.flows.memory.constants", "INJECT_MIN_BEST"),
    "InvalidEdit": ("core.flows.memory.edits", "InvalidEdit"),
    "LANE_K": ("core.flows.memory.constants", "LANE_K"),
    "LEX_CHARS": ("core.flows.memory.constants", "LEX_CHARS"),
    "LEX_FULL_GRAMS": ("core.flows.memory.constants", "LEX_FULL_GRAMS"),
    "MAX_INJECTED": ("core.flows.memory.constants", "MAX_INJECTED"),
    "RECENCY_TAU_DAYS": ("core.flows.memory.constants", "RECENCY_TAU_DAYS"),
    "RRF_K": ("core.flows.memory.constants", "RRF_K"),
    "RRF_TOP": ("core.flows.memory.constants", "RRF_TOP"),
    "RetrievalResult": ("core.flows.memory.retrieval", "RetrievalResult"),
    "SAMPLE_EPISODES": ("core.flows.memory.sample_data", "SAMPLE_EPISODES"),
    "StaleEdit": ("core.flows.memory.versions", "StaleEdit"),
    "StaleUnit": ("core.flows.memory.versions", "StaleUnit"),
    "SummaryOutcome": ("core.flows.memory.summaries", "SummaryOutcome"),
    "TurnDetails": ("core.flows.memory.items", "TurnDetails"),
    "VECTOR_LANE_WEIGHT": ("core.flows.memory.constants", "VECTOR_LANE_WEIGHT"),
    "VECTOR_MIN_SIMILARITY": ("core.flows.memory.constants", "VECTOR_MIN_SIMILARITY"),
    "W_LEX": ("core.flows.memory.constants", "W_LEX"),
    "W_REC": ("core.flows.memory.constants", "W_REC"),
    "W_RRF": ("core.flows.memory.constants", "W_RRF"),
    "affect_series": ("core.flows.memory.provenance", "affect_series"),
    "apply_edits": ("core.flows.memory.edits", "apply_edits"),
    "counts": ("core.flows.memory.browse", "counts"),
    "defer_memory_retry": ("core.flows.memory.tasks", "defer_memory_retry"),
    "describe_errors": ("core.flows.memory.extraction_store", "describe_errors"),
    "discard_cut_memory_turn": ("core.flows.memory.continuation", "discard_cut_memory_turn"),
    "edges_frame": ("core.flows.memory.browse", "edges_frame"),
    "entities_frame": ("core.flows.memory.browse", "entities_frame"),
    "entity_options": ("core.flows.memory.browse", "entity_options"),
    "extraction_of_episode": ("core.flows.memory.provenance", "extraction_of_episode"),
    "finish_continuation": ("core.flows.memory.continuation", "finish_continuation"),
    "finish_turn": ("core.flows.memory.chat", "finish_turn"),
    "format_pack": ("core.flows.memory.retrieval", "format_pack"),
    "hard_delete": ("core.flows.memory.deletion", "hard_delete"),
    "latest_trace": ("core.flows.memory.provenance", "latest_trace"),
    "load_conversation": ("core.flows.memory.conversation", "load_conversation"),
    "load_demo_samples": ("core.flows.memory.sample_data", "load_demo_samples"),
    "memory_collection": ("core.flows.memory.stores", "memory_collection"),
    "memory_job_key": ("core.flows.memory.background", "memory_job_key"),
    "memory_repository": ("core.flows.memory.stores", "memory_repository"),
    "merge_entities": ("core.flows.memory.entities", "merge_entities"),
    "overwrite_stale": ("core.flows.memory.edits", "overwrite_stale"),
    "prepare_continuation": ("core.flows.memory.continuation", "prepare_continuation"),
    "prepare_turn": ("core.flows.memory.chat", "prepare_turn"),
    "reconcile_memory_index": ("core.flows.memory.reconcile", "reconcile_memory_index"),
    "refresh_items": ("core.flows.memory.items", "refresh_items"),
    "register_memory_tasks": ("core.flows.memory.tasks", "register_memory_tasks"),
    "rename_entity": ("core.flows.memory.entities", "rename_entity"),
    "reply_item": ("core.flows.memory.items", "reply_item"),
    "restore": ("core.flows.memory.versions", "restore"),
    "retrieve": ("core.flows.memory.retrieval", "retrieve"),
    "retry_pending_extractions": ("core.flows.memory.extraction", "retry_pending_extractions"),
    "revert_unit": ("core.flows.memory.versions", "revert_unit"),
    "run_summaries": ("core.flows.memory.summaries", "run_summaries"),
    "save_conversation": ("core.flows.memory.conversation", "save_conversation"),
    "save_trace_for": ("core.flows.memory.retrieval", "save_trace_for"),
    "soft_delete": ("core.flows.memory.versions", "soft_delete"),
    "split_raw_reply": ("core.flows.memory.trailer", "split_raw_reply"),
    "stale_comparison": ("core.flows.memory.edits", "stale_comparison"),
    "stream_continuation": ("core.flows.memory.continuation", "stream_continuation"),
    "stream_reply": ("core.flows.memory.chat", "stream_reply"),
    "turn_details_of": ("core.flows.memory.items", "turn_details_of"),
    "unexpected_error_item": ("core.flows.memory.items", "unexpected_error_item"),
    "unfinished_episodes": ("core.flows.memory.job_status", "unfinished_episodes"),
    "unit_provenance": ("core.flows.memory.provenance", "provenance"),
    "unit_summary": ("core.flows.memory.provenance", "unit_summary"),
    "units_frame": ("core.flows.memory.browse", "units_frame"),
    "versions_of": ("core.flows.memory.versions", "versions_of"),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
