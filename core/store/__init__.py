"""SQLAlchemy Core tables (one module per flow) and small repositories on one engine."""

from core.store.db import StoreUnavailable, init_db, make_engine, metadata, open_store

__all__ = ["StoreUnavailable", "init_db", "make_engine", "metadata", "open_store"]
