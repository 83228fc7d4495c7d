"""Alembic migrations of the store (env.py, versions/vNNNN_*.py); run by core.store.migrate, configured in code.

Each revision is written for both engines: portable `op.*` calls, plus engine-specific SQL (SQLite FTS5,
PostgreSQL pg_trgm) behind `op.get_bind().dialect.name`. Revisions never import the current table modules:
a revision describes the schema as it was when it was written, so later changes cannot alter it. The
exceptions say why in their docstrings: v0005 rebuilds SQLite's memory tables with core/store/memory/upgrade.py
(SQLite cannot alter constraints), v0007 computes search keys with the app's one key function.
"""
