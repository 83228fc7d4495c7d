"""The companion memory's repository: units with their payloads and versions.

Every new unit gets version 1; every edit appends a version with a snapshot of the editable fields.
Version numbers are read and written while the unit's row is locked (`lock_unit`: SELECT ... FOR UPDATE on
PostgreSQL, a no-op UPDATE that takes the database's write lock on SQLite), so concurrent writers never
number two versions alike and a stale-edit check cannot race; (unit_id, version) is unique besides.
Times are UTC epoch seconds, passed by the flow (a turn uses one `now` throughout) or read from the clock.
A method takes `conn` to join the caller's transaction (the flow indexes and traces in the same one);
without it, the method runs in a transaction of its own.

One companion per person: the repository is bound to a person (`owner_id`); it writes units,
loops and summaries as theirs and finds existing ones only among theirs. The flows filter every read of
units by `repo.owner_id` (core.store.memory.mine) and open the person's own Chroma collection.

The writers of facts, loops and summaries (derived from episodes, each unique by what "the same" means) are
in core/store/memory/derived.py, a mixin of this class.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from sqlalchemy import Connection, Table, delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from core.store.after_commit import begin_then
from core.store.base import OwnedRepository, inserted_id
from core.store.memory.derived import DerivedUnits
from core.store.memory.tables import (
    KIND_EPISODE,
    PAYLOAD_FIELDS,
    PAYLOAD_TABLES,
    STATE_ACTIVE,
    UNIT_FIELDS,
    clamp01,
    dumps,
    mine,
    payload_loop,
    unit_versions,
    units,
)


class MemoryRepository(DerivedUnits, OwnedRepository):
    """Writes of one person's memory units (episodes, facts, loops, summaries) and their versions, on one
    engine and clock: `MemoryRepository(engine, clock, owner_id=...)`."""

    def owns(self, unit_id: int, *, conn: Connection | None = None) -> bool:
        """True when the unit exists and is this person's."""
        with self._tx(conn) as c:
            return (
                c.execute(select(units.c.id).where(units.c.id == unit_id, mine(self.owner_id))).first()
                is not None
            )

    def begin(self) -> AbstractContextManager[Connection]:
        """A transaction on the store (commits on success); the vector writes registered in it
        (core.store.after_commit) run after the commit."""
        return begin_then(self.engine)

    def connect(self) -> Connection:
        """A read connection."""
        return self.engine.connect()

    @contextmanager
    def _tx(self, conn: Connection | None) -> Iterator[Connection]:
        """The caller's connection, or a transaction of our own."""
        if conn is not None:
            yield conn
            return
        with self.engine.begin() as own:
            yield own

    def _at(self, now: int | None) -> int:
        return self.now() if now is None else now

    def lock_unit(self, conn: Connection, unit_id: int) -> bool:
        """Hold the person's unit's row for the rest of the transaction (False: no such unit of theirs)."""
        if conn.dialect.name == "postgresql":
            query = select(units.c.id).where(units.c.id == unit_id, mine(self.owner_id)).with_for_update()
            return conn.execute(query).first() is not None
        result = conn.execute(
            update(units)
            .where(units.c.id == unit_id, mine(self.owner_id))
            .values(updated_at=units.c.updated_at)
        )
        return bool(result.rowcount)

    def latest_version(self, unit_id: int, *, conn: Connection | None = None) -> int:
        """The newest version number of a unit (0 when it has none)."""
        with self._tx(conn) as c:
            last = c.execute(
                select(func.max(unit_versions.c.version)).where(unit_versions.c.unit_id == unit_id)
            ).scalar()
        return int(last or 0)

    def snapshot(self, unit_id: int, *, conn: Connection | None = None) -> dict[str, Any]:
        """The editable state of a unit (unit fields + payload fields), as stored in unit_versions."""
        with self._tx(conn) as c:
            row = c.execute(select(units).where(units.c.id == unit_id)).mappings().one()
            snap = {name: row[name] for name in UNIT_FIELDS}
            table = PAYLOAD_TABLES[row["kind"]]
            payload: Any = c.execute(select(table).where(table.c.unit_id == unit_id)).mappings().first() or {}
        snap.update({name: payload.get(name) for name in PAYLOAD_FIELDS[row["kind"]]})
        return snap

    def record_version(
        self,
        unit_id: int,
        change_kind: str,
        now: int | None = None,
        note: str = "",
        *,
        conn: Connection | None = None,
    ) -> int:
        """Append the unit's current state as its next version; returns the version number."""
        with self._tx(conn) as c:
            self.lock_unit(c, unit_id)
            version = self.latest_version(unit_id, conn=c) + 1
            c.execute(
                insert(unit_versions).values(
                    unit_id=unit_id,
                    version=version,
                    changed_at=self._at(now),
                    change_kind=change_kind,
                    snapshot_json=dumps(self.snapshot(unit_id, conn=c)),
                    note=note,
                )
            )
        return version

    def insert_unit(
        self,
        kind: str,
        payload: Mapping[str, Any],
        *,
        occurred_at: int | None = None,
        now: int | None = None,
        conn: Connection | None = None,
        **fields: Any,
    ) -> int:
        """Insert a unit (defaults for the fields not given) and its payload row, then record version 1."""
        now = self._at(now)
        values = self._unit_values(kind, now if occurred_at is None else occurred_at, now, fields)
        table = PAYLOAD_TABLES[kind]
        extra = {"owner_id": self.owner_id} if "owner_id" in table.c else {}
        with self._tx(conn) as c:
            unit_id = inserted_id(c.execute(insert(units).values(**values)))
            c.execute(insert(table).values(unit_id=unit_id, **payload, **extra))
            self.record_version(unit_id, "create", now, conn=c)
        return unit_id

    def _unit_values(
        self, kind: str, occurred_at: int, now: int, fields: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A new unit row: the defaults, then `fields`; always this repository's person."""
        return {
            "kind": kind,
            "occurred_at": occurred_at,
            "created_at": now,
            "updated_at": now,
            "state": STATE_ACTIVE,
            "confidence": 0.5,
            "salience": 0.5,
            "sensitivity": 0,
            "pin": 0,
            "topic_tags": "[]",
            "extract_state": "none",
            **fields,
            "owner_id": self.owner_id,
        }

    def insert_unit_once(
        self,
        kind: str,
        payload: Mapping[str, Any],
        unique: list[str],
        *,
        occurred_at: int,
        now: int,
        conn: Connection,
        **fields: Any,
    ) -> int | None:
        """Insert a unit whose payload is unique by `unique` columns with ON CONFLICT DO NOTHING (both engines):
        the new unit id, or None when an equal payload exists (a concurrent job wrote it first; the unit row
        just made is removed in the same transaction, so nothing is doubled and nothing raises). Callers look
        for the existing row first, so ids stay the same on both engines unless two writers race."""
        values = self._unit_values(kind, occurred_at, now, fields)
        table: Table = PAYLOAD_TABLES[kind]
        unit_id = inserted_id(conn.execute(insert(units).values(**values)))
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        row = {"unit_id": unit_id, **payload, "owner_id": self.owner_id}
        statement = dialect.insert(table).values(**row).on_conflict_do_nothing(index_elements=unique)
        if conn.execute(statement.returning(table.c.unit_id)).first() is None:
            conn.execute(delete(units).where(units.c.id == unit_id))
            return None
        self.record_version(unit_id, "create", now, conn=conn)
        return unit_id

    def save_episode(
        self,
        input_text: str,
        reply_text: str,
        reflection: Mapping[str, Any],
        *,
        source: str,
        occurred_at: int | None = None,
        now: int | None = None,
        conn: Connection | None = None,
    ) -> int:
        """Store one exchange as an EPISODE with its reflection (spec 03: Reflection); extraction pending."""
        return self.insert_unit(
            KIND_EPISODE,
            {
                "input_text": input_text,
                "reply_text": reply_text,
                "reflection_json": dumps(dict(reflection)),
                "reflection_source": source,
            },
            occurred_at=occurred_at,
            now=now,
            conn=conn,
            confidence=clamp01(reflection.get("confidence")),
            salience=clamp01(reflection.get("salience")),
            topic_tags=dumps(list(reflection.get("topic_tags", []))),
            persona_affect_label=reflection.get("persona_affect_label", "neutral"),
            persona_affect_intensity=clamp01(reflection.get("persona_affect_intensity"), 0.0),
            extract_state="pending",
        )

    def expired_loop_ids(self, now: int | None = None, *, conn: Connection | None = None) -> list[int]:
        """This person's loops whose expires_at has passed (spec 03: deleted by the server)."""
        with self._tx(conn) as c:
            ids = c.execute(
                select(payload_loop.c.unit_id).where(
                    payload_loop.c.expires_at <= self._at(now), payload_loop.c.owner_id == self.owner_id
                )
            )
            return [int(i) for i in ids.scalars()]
