"""Knowledge-base search with Japanese terms (issue 12 item 2): AND of terms, width and spelling variants."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, select

from core.flows.knowledge import base as kb
from core.people import Person
from core.store import open_store
from core.store.knowledge.entries import (
    ENTRY_FIELDS,
    KnowledgeBaseRepository,
    knowledge_entry_keys,
)
from core.store.knowledge.search import backfill_keys

NDA = {
    "contract_type": "秘密保持契約（NDA）",
    "knowledge_title": "秘密保持義務の存続期間と損害賠償",
    "target_clause": "第8条（秘密保持）",
    "review_points": "契約終了後の存続期間が長すぎないか。損害賠償の上限があるか。",
    "action_plan": "存続期間を3年に短縮する修正案を出す。",
    "clause_sample": "前項の義務は、本契約終了後3年間存続する。",
}
OUTSOURCING = {
    "contract_type": "業務委託契約",
    "knowledge_title": "再委託の事前承諾",
    "target_clause": "第５条（再委託）",
    "review_points": "再委託に書面の事前承諾が要るか。締め切りまでの打合せの頻度。",
    "action_plan": "承諾の方法を定める。",
    "clause_sample": "乙は、甲の書面による事前の承諾なく再委託してはならない。",
}
SALES = {
    "contract_type": "売買契約",
    "knowledge_title": "損害賠償の上限",
    "target_clause": "第12条（損害賠償）",
    "review_points": "損害賠償額の上限が代金額か。",
    "action_plan": "上限を設ける。",
    "clause_sample": "損害賠償の額は、代金の額を上限とする。",
}

YAMADA = Person("yamada", "山田")


@pytest.fixture
def base(tmp_path):
    repo = KnowledgeBaseRepository(open_store(tmp_path), lambda: 100)
    ids = {
        name: repo.save_entry(entry, by=YAMADA)
        for name, entry in (("nda", NDA), ("out", OUTSOURCING), ("sales", SALES))
    }
    return repo, ids


def found(repo: KnowledgeBaseRepository, search: str) -> set[int]:
    return {e["id"] for e in kb.find_entries(repo, search=search)}


@pytest.mark.parametrize(
    "query", ["秘密保持、損害賠償", "秘密保持 損害賠償", "秘密保持　損害賠償", " 秘密保持,損害賠償 "]
)
def test_placeholder_terms_are_anded(base, query):
    repo, ids = base
    assert found(repo, query) == {ids["nda"]}


def test_single_term_and_nothing(base):
    repo, ids = base
    assert found(repo, "損害賠償") == {ids["nda"], ids["sales"]}
    assert found(repo, "損害賠償 再委託") == set()
    assert found(repo, "") == set(ids.values())


@pytest.mark.parametrize(
    "query,key",
    [
        ("ＮＤＡ", "nda"),
        ("nda", "nda"),
        ("第８条", "nda"),
        ("第5条", "out"),
        ("締切", "out"),
        ("打ち合わせ", "out"),
    ],
)
def test_width_case_and_okurigana_variants(base, query, key):
    repo, ids = base
    assert found(repo, query) == {ids[key]}


def test_entries_with_the_terms_as_written_come_first(base):
    repo, ids = base
    first = kb.find_entries(repo, search="損害賠償の上限")[0]
    assert first["id"] == ids["sales"]
    assert set(first) >= set(ENTRY_FIELDS) and "folded" not in first


def test_edits_rekey_and_upgrade_backfills(base):
    repo, ids = base
    kb.edit_entry(repo, ids["sales"], {**SALES, "review_points": "違約金の定め"}, by=YAMADA)
    assert ids["sales"] in found(repo, "違約金")
    with repo.engine.begin() as conn:
        conn.execute(delete(knowledge_entry_keys))
        assert backfill_keys(conn) == 3  # what migration v0007 does for entries saved before the keys
        assert backfill_keys(conn) == 0  # idempotent
    assert found(repo, "秘密保持、損害賠償") == {ids["nda"]}
    with repo.engine.connect() as conn:
        assert len(conn.execute(select(knowledge_entry_keys)).all()) == 3
