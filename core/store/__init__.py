"""SQLAlchemy Core tables and small repositories on one engine: a package per flow (memory, review,
knowledge), a module for the small ones (diagnosis, feedback, people), shared pieces (db, migrate, owners,
lexical, base)."""

from core.store.db import StoreBusy, StoreUnavailable, init_db, make_engine, metadata, open_store

__all__ = ["StoreBusy", "StoreUnavailable", "init_db", "make_engine", "metadata", "open_store"]
