"""Who a signed-in person is (core/people.py): claims -> Person, admins by email (issue #14)."""

from __future__ import annotations

import pytest

from core.people import LOCAL_PERSON, LOCAL_PERSON_NAME, Person, admin_emails, person_from_claims

CLAIMS = {
    "iss": "https://login.example/tenant/",
    "sub": "00u1abc",
    "email": "Alice@Example.com",
    "name": "山田 花子",
    "is_logged_in": True,
}


def test_the_local_person_is_one_named_person() -> None:
    assert Person("local", LOCAL_PERSON_NAME) == LOCAL_PERSON and LOCAL_PERSON.is_local
    assert LOCAL_PERSON.name == "ローカル利用者" and not LOCAL_PERSON.is_admin


def test_a_person_is_issuer_and_subject_with_name_and_email() -> None:
    person = person_from_claims(CLAIMS)
    assert person == Person("https://login.example/tenant|00u1abc", "山田 花子", "alice@example.com")
    assert person is not None and not person.is_local


def test_the_same_subject_at_another_issuer_is_another_person() -> None:
    other = person_from_claims({**CLAIMS, "iss": "https://other.example"})
    assert other is not None and other.id != person_from_claims(CLAIMS).id  # type: ignore[union-attr]


def test_admins_are_matched_by_email_without_case_unless_the_email_is_unverified() -> None:
    admins = admin_emails(["alice@example.com ", "x@example.com"])
    assert person_from_claims(CLAIMS, admins).is_admin  # type: ignore[union-attr]
    assert not person_from_claims(CLAIMS, admin_emails("x@example.com")).is_admin  # type: ignore[union-attr]
    unverified = person_from_claims({**CLAIMS, "email_verified": False}, admins)
    assert unverified is not None and not unverified.is_admin


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ({"email": "Bob@Example.com"}, Person("bob@example.com", "bob@example.com", "bob@example.com")),
        ({"sub": "s1", "preferred_username": "bob"}, Person("s1", "bob")),
        ({"sub": "s1"}, Person("s1", "s1")),
    ],
)
def test_missing_claims_fall_back(claims: dict[str, str], expected: Person) -> None:
    assert person_from_claims(claims) == expected


@pytest.mark.parametrize("claims", [{}, {"name": "誰か"}, {"sub": "local"}, {"sub": "x" * 300}])
def test_claims_that_name_nobody_or_the_local_person_give_no_person(claims: dict[str, str]) -> None:
    assert person_from_claims(claims) is None


def test_admin_emails_accept_a_list_or_one_string_and_ignore_the_rest() -> None:
    assert admin_emails(["A@x.jp", "", 3]) == {"a@x.jp"}
    assert admin_emails("A@x.jp") == {"a@x.jp"}
    assert admin_emails(None) == frozenset()
