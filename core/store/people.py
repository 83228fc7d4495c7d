"""The people who have used the app: id, name and email as they last signed in.

Only names for screens that count across people (admin analytics, the bookings of the team); ownership of
rows never depends on this table (rows carry `owner_id`). Times are UTC epoch seconds.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Column, String, Table, select

from core.people import LOCAL_PERSON_ID, LOCAL_PERSON_NAME, MAX_ID_CHARS, Person
from core.store.base import EpochSeconds, Repository
from core.store.db import metadata

people = Table(
    "people",
    metadata,
    Column("id", String(MAX_ID_CHARS), primary_key=True),
    Column("name", String, nullable=False, default=""),
    Column("email", String, nullable=False, default=""),
    Column("last_seen_at", EpochSeconds, nullable=False),
)


class PeopleRepository(Repository):
    """Remember who signed in; look names up by id."""

    def remember(self, person: Person) -> None:
        """Insert or refresh the person's name and email (one short transaction)."""
        values = {"name": person.name, "email": person.email, "last_seen_at": self.now()}
        with self.engine.begin() as conn:
            found = conn.execute(select(people.c.id).where(people.c.id == person.id)).first()
            if found is None:
                conn.execute(people.insert().values(id=person.id, **values))
            else:
                conn.execute(people.update().where(people.c.id == person.id).values(**values))

    def names(self, ids: Iterable[str]) -> dict[str, str]:
        """id -> name for the ids given (the local person is always known; unknown ids are left out)."""
        wanted = sorted(set(ids))
        found = {LOCAL_PERSON_ID: LOCAL_PERSON_NAME} if LOCAL_PERSON_ID in wanted else {}
        if wanted:
            with self.engine.connect() as conn:
                rows = conn.execute(select(people.c.id, people.c.name).where(people.c.id.in_(wanted)))
                found.update({str(i): str(n) for i, n in rows})
        return found
