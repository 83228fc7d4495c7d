"""People the tests act as (issue #14): two signed-in colleagues and an admin; the local person is
core.people.LOCAL_PERSON."""

from __future__ import annotations

from core.people import Person

ALICE = Person("https://idp.example|alice", "山田 花子", "alice@example.com")
BOB = Person("https://idp.example|bob", "佐藤 太郎", "bob@example.com")
ADMIN = Person("https://idp.example|carol", "鈴木 管理", "carol@example.com", is_admin=True)
