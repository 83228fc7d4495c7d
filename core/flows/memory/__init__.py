"""Companion memory (spec 03): persona chat with a hidden trailer, extraction, LLM-free retrieval, summaries.

Modules: constants (spec-fixed numbers), trailer (stream splitter), loops (TTL), normalize (extraction
output), text (n-grams, query terms), indexing (FTS5 + Chroma), repository (units and payloads), graph
(entities, aliases, edges), versions (edits, revert, soft delete), deletion (cascading hard delete), lanes +
scoring + retrieval + pack (search, rerank, what is injected), mood, extraction, summaries, chat (one turn),
browse + provenance + edits (the memory browser), sample_data + evaluation (seeded samples, recall),
demo + demo_patterns (the demo model's persona).
"""
