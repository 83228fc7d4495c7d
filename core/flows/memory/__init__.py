"""Companion memory (spec 03): persona chat with a hidden trailer, extraction, LLM-free retrieval, summaries.

Modules: constants (spec-fixed numbers), trailer (stream splitter), loops (TTL), normalize (extraction
output), text (n-grams, query terms), indexing (FTS5 + Chroma), repository (units and payloads),
versions (edits, revert, delete), lanes + retrieval (search and rerank), mood, extraction, summaries,
chat (one turn), sample_data (seeded sample memories), demo (the demo model's persona).
"""
