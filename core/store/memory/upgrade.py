"""Upgrade of companion memory tables written before there were people: one companion per person.

Every existing memory belongs to the local person. `memory_units` and `memory_retrieval_traces` only gain an
`owner_id` column. Entities, loop payloads and summary payloads were unique across everyone (an entity by
(type, name), a loop by its text, a summary by its scope); they become unique per person, and SQLite cannot
change a table's constraints in place, so those tables, and the tables holding foreign keys to
`memory_entities`, are rebuilt from the current declarations (same ids, same rows, owner added), inside one
savepoint. Idempotent: nothing happens once `memory_entities` has its owner column.

Run on SQLite only, by migration v0005 (core/store/migrations/versions/v0005_people_and_owners.py), which
alters PostgreSQL's constraints in place instead.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, MetaData, Table, select

from core.people import LOCAL_PERSON_ID
from core.store.memory.tables import (
    edges,
    entities,
    entity_aliases,
    payload_fact,
    payload_loop,
    payload_summary,
    retrieval_traces,
    unit_entities,
    units,
)
from core.store.owners import OWNER, add_owner_column, has_column, table_exists

# Parents before children: created in this order, dropped in the reverse order.
REBUILT = (entities, entity_aliases, unit_entities, edges, payload_fact, payload_loop, payload_summary)


def _rows(conn: Connection, table: Table) -> list[dict[str, Any]]:
    """The rows as stored (read with the table's old declaration), each given the local owner where the new
    declaration has an owner column."""
    old = Table(table.name, MetaData(), autoload_with=conn)
    rows = [dict(r._mapping) for r in conn.execute(select(old))]
    if OWNER in table.c:
        for row in rows:
            row.setdefault(OWNER, LOCAL_PERSON_ID)
    return rows


def _rebuild(conn: Connection) -> None:
    copies = {t.name: _rows(conn, t) for t in REBUILT}
    for table in reversed(REBUILT):  # children first: no foreign key points at a table being dropped
        table.drop(conn)
    for table in REBUILT:
        table.create(conn)
        if copies[table.name]:
            conn.execute(table.insert(), copies[table.name])


def upgrade(conn: Connection) -> None:
    """Idempotent: owners for units and traces; rebuild the tables whose uniqueness becomes per person."""
    add_owner_column(conn, units)
    add_owner_column(conn, retrieval_traces)
    if not all(table_exists(conn, t.name) for t in REBUILT) or has_column(conn, entities.name, OWNER):
        return
    with conn.begin_nested():  # all or nothing (a savepoint is a real SQLite transaction)
        _rebuild(conn)
