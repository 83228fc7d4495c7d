"""One SQLAlchemy Core engine factory and one MetaData for every flow's tables (SQLite, WAL)."""

from __future__ import annotations

import importlib
import pkgutil
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, create_engine, event, select

STORE_DIR = Path(__file__).resolve().parent  # core/store: every module here may declare tables
SCHEMA_VERSION = 1
metadata = MetaData()

schema_version = Table(
    "schema_version",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("version", Integer, nullable=False),
    Column("applied_at", Integer, nullable=False),
    Column("note", String, nullable=False, default=""),
)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_engine(data_dir: Path | str = ".data", *, url: str | None = None) -> Engine:
    """An engine on `data_dir/app.db` (or `url`); SQLite connections get WAL and foreign keys."""
    if url is None:
        path = Path(data_dir)
        path.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{path / 'app.db'}"
    engine = create_engine(url, connect_args={"check_same_thread": False} if url.startswith("sqlite") else {})
    if url.startswith("sqlite"):
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def load_table_modules() -> None:
    """Import every module of core.store so each flow's tables join `metadata`."""
    for info in pkgutil.iter_modules([str(STORE_DIR)]):
        if info.name != "db":
            importlib.import_module(f"core.store.{info.name}")


def _upgrades() -> list[Any]:
    """Each store module may define `upgrade(conn)`: an idempotent fix of rows written by older code."""
    found = []
    for info in sorted(pkgutil.iter_modules([str(STORE_DIR)]), key=lambda i: i.name):
        if info.name != "db":
            hook = getattr(importlib.import_module(f"core.store.{info.name}"), "upgrade", None)
            if callable(hook):
                found.append(hook)
    return found


def init_db(engine: Engine) -> None:
    """Create all tables (idempotent), run each store module's `upgrade(conn)`, record the schema version."""
    load_table_modules()
    metadata.create_all(engine)
    with engine.begin() as conn:
        for upgrade in _upgrades():
            upgrade(conn)
    with engine.begin() as conn:
        if conn.execute(select(schema_version.c.version).where(schema_version.c.id == 1)).first() is None:
            conn.execute(
                schema_version.insert().values(id=1, version=SCHEMA_VERSION, applied_at=int(time.time()))
            )


def open_store(data_dir: Path | str = ".data") -> Engine:
    """make_engine + init_db: the one call the shell makes."""
    engine = make_engine(data_dir)
    init_db(engine)
    return engine
