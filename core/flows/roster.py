"""People as the pages need them: remember who signed in, and their names for team views.

The Person value itself and how sign-in claims become one live in core/people.py; pages reach the people
table only through these functions.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from core.people import Person
from core.store.people import PeopleRepository


def remember_person(engine: Engine, person: Person) -> bool:
    """Record the person's current name and email (shown to admins in team views); False when the database
    could not be written (signing in goes on: nothing personal depends on this row)."""
    try:
        PeopleRepository(engine).remember(person)
    except SQLAlchemyError:
        return False
    return True


def people_names(engine: Engine, ids: Iterable[str]) -> dict[str, str]:
    """id -> display name; an id nobody has signed in with is shown as itself."""
    wanted = list(ids)
    try:
        known = PeopleRepository(engine).names(wanted)
    except SQLAlchemyError:
        known = {}
    return {i: known.get(i, i) for i in wanted}
