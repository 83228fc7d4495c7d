"""Alembic environment: runs on the connection core.store.migrate passes in (`config.attributes`)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from core.store.db import load_table_modules, metadata

# What engine-specific revisions manage and `metadata` does not declare (FTS5 and its shadow tables on
# SQLite, the lexical documents and pg_trgm indexes on PostgreSQL): autogenerate must neither drop nor
# create them.
UNMANAGED_PREFIXES = ("memory_fts_", "memory_lex_")
UNMANAGED_INDEX_SUFFIX = "_trgm"


def include_name(name: str | None, type_: str, _parents: object) -> bool:
    """Whether autogenerate (and the schema test) compares this object with `metadata`."""
    if name is None:
        return True
    if type_ == "table":
        return not name.startswith(UNMANAGED_PREFIXES)
    return not (type_ == "index" and name.endswith(UNMANAGED_INDEX_SUFFIX))


def run(connection: Connection) -> None:
    load_table_modules()
    context.configure(
        connection=connection,
        target_metadata=metadata,
        include_name=include_name,  # type: ignore[arg-type]  # alembic types the parents mapping precisely
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("run migrations through core.store.migrate (it passes the connection in)")
run(connection)
