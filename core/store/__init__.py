"""SQLAlchemy Core tables and small repositories on one engine: a package per flow (memory, review,
knowledge), a module for the small ones (diagnosis, feedback, people), shared pieces (db, migrate, owners,
lexical, base).

The engine factory loads on first use (PEP 562): a module that only catches StoreUnavailable does not import
SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from core.store.errors import StoreBusy, StoreUnavailable

if TYPE_CHECKING:
    from core.store.db import init_db, make_engine, metadata, open_store

__all__ = ["StoreBusy", "StoreUnavailable", "init_db", "make_engine", "metadata", "open_store"]


def __getattr__(name: str) -> Any:
    if name not in ("init_db", "make_engine", "metadata", "open_store"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("core.store.db"), name)
    globals()[name] = value
    return value
