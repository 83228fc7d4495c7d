"""Whose a row is: the `owner_id` column of personal tables, and the upgrade that adds it.

Personal rows carry the id of the person who made them (core.people.Person.id); repositories bound to a
person filter every read and write by it. Rows written before there were people belong to the local
person (`LOCAL_PERSON_ID`): migration v0005 adds the column to older tables and gives them that id
(`add_owner_column`, used by its SQLite memory rebuild).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, ColumnElement, Connection, String, Table, inspect, update

from core.people import LOCAL_PERSON_ID, MAX_ID_CHARS

OWNER = "owner_id"


def owner_column(*, nullable: bool = False, index: bool = True) -> Column[str]:
    """The `owner_id` column of a personal table (the person's id; core.people.Person.id)."""
    return Column(OWNER, String(MAX_ID_CHARS), nullable=nullable, index=index)


def has_column(conn: Connection, table_name: str, column: str) -> bool:
    return any(c["name"] == column for c in inspect(conn).get_columns(table_name))


def table_exists(conn: Connection, table_name: str) -> bool:
    return table_name in inspect(conn).get_table_names()


def add_column(conn: Connection, table: Table, column: str, fill: Any = None, where: Any = None) -> bool:
    """Idempotent: add `table.c[column]` (nullable in the old table) to a database table that lacks it, give
    existing rows `fill` (those matching `where` when given) and create the column's indexes. True when
    the column was added."""
    if not table_exists(conn, table.name) or has_column(conn, table.name, column):
        return False
    col = table.c[column]
    type_sql = col.type.compile(dialect=conn.dialect)
    conn.exec_driver_sql(f'ALTER TABLE "{table.name}" ADD COLUMN "{column}" {type_sql}')
    if fill is not None:
        statement = update(table).values({column: fill})
        conn.execute(statement.where(where) if where is not None else statement)
    for index in table.indexes:
        if column in index.columns:
            index.create(conn, checkfirst=True)
    return True


def add_owner_column(conn: Connection, table: Table, where: Any = None) -> bool:
    """Idempotent: add `owner_id` to an older table; its rows (those matching `where`) go to the local person."""
    return add_column(conn, table, OWNER, LOCAL_PERSON_ID, where)


def owned_by(table: Table, owner_id: str) -> ColumnElement[bool]:
    """`table.owner_id = owner_id`: the condition every read of a personal table carries."""
    return table.c[OWNER] == owner_id
