"""Companion memory (spec 03): persona chat with a hidden trailer, extraction, LLM-free retrieval, summaries.

Modules: constants (spec-fixed numbers), stores (the repository and Chroma collection a page opens; the
repository itself is core/store/memory_repository.py), trailer (stream splitter), loops (TTL), normalize
(extraction output), text (n-grams, query terms), indexing (FTS5 + Chroma), graph (entities, aliases,
edges), versions (edits, revert, soft delete), deletion (cascading hard delete), lanes + scoring + retrieval
+ pack (search, rerank, what is injected), mood, extraction + extraction_store (reflection fill-in,
entities / facts / loops, one combined call or three), summaries, chat (one turn: prepare_turn ->
stream_reply -> finish_turn, run_turn) + background (the one job per turn after the reply) + job_status
(what the job stored, read back) + items (the turn as a ChatItem) + continuation (a reply cut short:
続きを生成 / 再試行), browse + provenance + edits + entities (the memory browser; rename and merge), sample_data + evaluation (seeded samples, recall), demo + demo_patterns (the demo model's
persona).
"""
