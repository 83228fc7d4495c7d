"""Alembic environment: runs on the connection core.store.migrate passes in (`config.attributes`)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from core.store.db import load_table_modules, metadata
from core.store.migrate import include_name


def run(connection: Connection) -> None:
    load_table_modules()
    context.configure(
        connection=connection,
        target_metadata=metadata,
        include_name=include_name,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("run migrations through core.store.migrate (it passes the connection in)")
run(connection)
