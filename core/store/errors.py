"""The store's error a page may catch, in a module that imports nothing heavy (the shell starts without
SQLAlchemy)."""

from __future__ import annotations


class StoreUnavailable(RuntimeError):
    """The database cannot be reached or opened (server down, wrong DATABASE_URL, disk full); the message
    names the database without its password."""


class StoreBusy(RuntimeError):
    """Every connection of this replica's pool is in use and none came free within the pool's wait (QueuePool's
    TimeoutError). The message is Japanese and says what to do; it names no host or password."""
