"""Who is using the app (ARCHITECTURE.md "People"): a `Person` value that core functions take.

With `[auth]` in `.streamlit/secrets.toml` a person is whoever signed in through OpenID Connect (`st.user`
claims, turned into a Person by `person_from_claims`); without it the app runs as one local person,
「ローカル利用者」. Every personal row carries the person's `id` as `owner_id`; rows written before people
existed belong to the local person. The knowledge base is shared: its versions record `name` and `id`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

LOCAL_PERSON_ID = "local"
LOCAL_PERSON_NAME = "ローカル利用者"
MAX_ID_CHARS = 255  # owner_id columns are String(255)


@dataclass(frozen=True)
class Person:
    """One person: a stable `id` (the owner of their rows), a display `name`, `email`, and whether they are
    an admin (named in `[katachi] admins`: team-wide analytics)."""

    id: str
    name: str
    email: str = ""
    is_admin: bool = False

    @property
    def is_local(self) -> bool:
        """True for the one local person of a run without `[auth]`."""
        return self.id == LOCAL_PERSON_ID


LOCAL_PERSON = Person(LOCAL_PERSON_ID, LOCAL_PERSON_NAME)


def normalize_email(value: Any) -> str:
    """An email address as compared for admins: stripped, lower case ("" for anything that is not text)."""
    return value.strip().lower() if isinstance(value, str) else ""


def admin_emails(value: Any) -> frozenset[str]:
    """`[katachi] admins` as a set of normalized emails (a single string counts as one address)."""
    items: Iterable[Any] = (
        [value] if isinstance(value, str) else value if isinstance(value, list | tuple) else []
    )
    return frozenset(e for e in (normalize_email(v) for v in items) if e)


def person_id_from_claims(claims: Mapping[str, Any]) -> str | None:
    """The stable id of a signed-in person: issuer and subject (OpenID Connect Core §2: `sub` is unique
    only within its issuer); the email when a provider sends no `sub`; None when neither is there."""
    sub = claims.get("sub")
    iss = claims.get("iss")
    person_id: str | None
    if isinstance(sub, str) and sub.strip():
        issuer = iss.strip().rstrip("/") if isinstance(iss, str) else ""
        person_id = f"{issuer}|{sub.strip()}" if issuer else sub.strip()
    else:
        person_id = normalize_email(claims.get("email")) or None
    if person_id is None or person_id == LOCAL_PERSON_ID or len(person_id) > MAX_ID_CHARS:
        return None
    return person_id


def person_from_claims(claims: Mapping[str, Any], admins: Iterable[str] = ()) -> Person | None:
    """A signed-in person from the identity token's claims (`st.user`); None when the claims name nobody.

    The name falls back to the email, then to the id. An admin is a person whose email is in `admins`, unless
    the provider says the email is not verified (`email_verified: false`).
    """
    person_id = person_id_from_claims(claims)
    if person_id is None:
        return None
    email = normalize_email(claims.get("email"))
    raw_name = claims.get("name") or claims.get("preferred_username") or email or person_id
    name = " ".join(str(raw_name).split())[:100] or person_id
    verified = claims.get("email_verified") is not False
    is_admin = bool(email) and verified and email in {normalize_email(a) for a in admins}
    return Person(person_id, name, email, is_admin)
