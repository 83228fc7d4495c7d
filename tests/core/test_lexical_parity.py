"""Japanese lexical search behaves the same on SQLite and PostgreSQL (issue #14 item 3).

The memory keyword lanes (trigram, 2-character, Sudachi lexical keys, the unicode61 baseline), the whole
retrieval pack and the knowledge base search (terms ANDed, Sudachi key groups) run the same queries on both
engines and must return the same units in the same order with the same scores; every memory search returns
only the units of the person asking, with the whole lane's statistics (as FTS5 has them). The PostgreSQL ranking is a Python model of FTS5's bm25(); its first test checks
the model against FTS5 itself, so it runs (and guards the model) even where PostgreSQL is absent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, select, text

from core.flows.memory.evaluation import build_eval_store, load_eval_set
from core.flows.memory.lanes import keyword_lanes, unicode61_lane, unicode61_terms
from core.flows.memory.retrieval import retrieve
from core.flows.memory.text import bigram_document, normalize, query_terms
from core.flows.registry import demo_client
from core.people import LOCAL_PERSON
from core.store import open_store
from core.store.knowledge.entries import ENTRY_FIELDS, KnowledgeBaseRepository
from core.store.lexical import (
    best,
    count_overlapping,
    fts5_bm25,
    like_pattern,
    trigram_token_count,
    unicode61_tokens,
)
from core.store.memory.keyword_lanes import (
    FTS_BIGRAM,
    FTS_LEXICAL,
    FTS_TRIGRAM,
    FTS_UNICODE61,
    fts_search,
    fts_upsert,
)
from core.store.memory.lanes_pg import KEEP_DIACRITICS, LANES, phrase, token_document
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import units
from core.text.japanese import lexical_document, lexical_keys
from core.text.textnorm import fold
from tests.persons import ALICE, BOB

OWNER = LOCAL_PERSON.id

NOW = 1_795_000_000
QUERIES = [q["query"] for q in load_eval_set()["queries"]] + [
    "ラーメン",
    "締切日まで",
    "ＡＢＳ　ランプ",
    "abs",
    "100%の_確率",
    "ブラック・ジャック",
    "ああああ",
    "",
    "ねこ、元気？",
    "締め切りはいつ",
    "パソコンが壊れた",
]
BOB_EPISODES = [
    "うちのねこが最近ごはんを残す。",
    "新宿でラーメンを食べた。締切は金曜日。",
    "パソコンを買い替えた。",
]


def _lane_queries() -> list[tuple[str, list[str]]]:
    lanes = []
    for query in QUERIES:
        long_terms, short_terms = query_terms(query)
        lanes += [
            (FTS_TRIGRAM, long_terms),
            (FTS_BIGRAM, short_terms),
            (FTS_LEXICAL, lexical_keys(query)),
            (FTS_UNICODE61, unicode61_terms(query)),
        ]
    return [(table, terms) for table, terms in lanes if terms]


def _model_search(
    conn: Connection, table: str, terms: list[str], k: int, owner_id: str
) -> list[tuple[int, float]]:
    """The PostgreSQL ranking, computed in Python over the FTS5 table's own documents: every row counts in the
    statistics, only `owner_id`'s units are returned."""
    lane = LANES[table]
    docs = {}
    for row_id, body in conn.execute(text(f"SELECT rowid, body FROM {table}")):
        if lane == "trigram":
            docs[int(row_id)] = (body, trigram_token_count(body))
        else:
            docs[int(row_id)] = token_document(body, remove_diacritics=lane not in KEEP_DIACRITICS)
    hits = []
    for term in terms:
        needle = phrase(lane, term)
        counts = {r: count_overlapping(body, needle) for r, (body, _) in docs.items()} if needle else {}
        hits.append({r: c for r, c in counts.items() if c})
    lengths = {r: n for r, (_, n) in docs.items()}
    mine = set(conn.execute(select(units.c.id).where(units.c.owner_id == owner_id)).scalars())
    scored = [hit for hit in fts5_bm25(hits, lengths, len(docs), sum(lengths.values())) if hit[0] in mine]
    return best(scored, k)


def _remember(repo: MemoryRepository, body: str, reply: str = "うん。") -> int:
    """An episode of the repository's person, indexed in every lane (no LLM)."""
    with repo.begin() as conn:
        uid = repo.save_episode(body, reply, {"salience": 1}, source="default", now=NOW, conn=conn)
        fts_upsert(conn, uid, normalize(body), bigram_document(body), lexical_document(body))
    return uid


@pytest.fixture(scope="module")
def sqlite_eval(tmp_path_factory: pytest.TempPathFactory) -> MemoryRepository:
    engine = open_store(tmp_path_factory.mktemp("parity-sqlite"))
    repo = MemoryRepository(engine, owner_id=OWNER)
    build_eval_store(repo, None, demo_client(), NOW)
    special = _remember(repo, "特別")
    bob = MemoryRepository(engine, owner_id=BOB.id)
    for body in BOB_EPISODES:
        _remember(bob, body)
    with repo.begin() as conn:
        for table, body in (
            (FTS_TRIGRAM, "ああああああ abab ブラック・ジャック"),
            (FTS_BIGRAM, "ああ ク・ ・ジ ジャ"),
            (FTS_LEXICAL, "ああ ブラック ジャック café syn00001"),
        ):
            conn.execute(text(f"UPDATE {table} SET body = :b WHERE rowid = :id"), {"b": body, "id": special})
    return repo


def test_the_python_ranking_equals_fts5_bm25(sqlite_eval: MemoryRepository) -> None:
    compared = 0
    with sqlite_eval.connect() as conn:
        for table, terms in [*_lane_queries(), (FTS_LEXICAL, ["cafe", "café", "syn00001"])]:
            for owner in (OWNER, BOB.id, ALICE.id):
                model = _model_search(conn, table, terms, 30, owner)
                assert model == fts_search(conn, table, terms, 30, owner), (table, terms, owner)
            compared += 1
    assert compared > 100


@pytest.fixture(scope="module")
def both_engines(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[MemoryRepository, MemoryRepository]]:
    """The labelled evaluation set (315 episodes through the pipeline) on each engine, built the same way."""
    cluster = request.getfixturevalue("pg_cluster")
    template = request.getfixturevalue("pg_template")
    name = cluster.create_database(template=template)
    pg = open_store(url=cluster.url(name))
    sqlite = open_store(tmp_path_factory.mktemp("parity"))
    repos = MemoryRepository(sqlite, owner_id=OWNER), MemoryRepository(pg, owner_id=OWNER)
    for repo in repos:
        build_eval_store(repo, None, demo_client(), NOW)
        bob = MemoryRepository(repo.engine, owner_id=BOB.id)
        for body in BOB_EPISODES:
            _remember(bob, body)
    yield repos
    pg.dispose()
    cluster.drop_database(name)


def test_memory_keyword_lanes_return_the_same_units_on_both_engines(
    both_engines: tuple[MemoryRepository, MemoryRepository],
) -> None:
    sqlite, pg = both_engines
    with sqlite.connect() as a, pg.connect() as b:
        for query in QUERIES:
            for owner in (OWNER, BOB.id, ALICE.id):
                lanes = keyword_lanes(a, owner, query, 30)
                assert lanes == keyword_lanes(b, owner, query, 30), (query, owner)
                assert unicode61_lane(a, owner, query, 30) == unicode61_lane(b, owner, query, 30), query
                if owner == ALICE.id:  # no units of hers: nothing, whatever the others hold
                    assert not any(lanes.values()), query


def test_the_lexical_lane_finds_variants_and_only_the_persons_units_on_both_engines(
    both_engines: tuple[MemoryRepository, MemoryRepository],
) -> None:
    found = []
    for repo in both_engines:
        with repo.connect() as conn:
            lexical = {
                owner: [u for u, _ in keyword_lanes(conn, owner, "ねこと締め切り、PC", 30)["lexical"]]
                for owner in (OWNER, BOB.id)
            }
            bob_units = set(conn.execute(select(units.c.id).where(units.c.owner_id == BOB.id)).scalars())
        assert lexical[BOB.id] and set(lexical[BOB.id]) <= bob_units  # ねこ, 締切, パソコン: all three found
        assert not set(lexical[OWNER]) & bob_units
        found.append(lexical)
    assert found[0] == found[1]


def test_retrieval_injects_the_same_memories_on_both_engines(
    both_engines: tuple[MemoryRepository, MemoryRepository],
) -> None:
    sqlite, pg = both_engines
    for query in QUERIES[:45]:
        a, b = (retrieve(repo, None, [], query, NOW) for repo in (sqlite, pg))
        assert a.lanes == b.lanes, query
        assert [c.row() for c in a.candidates] == [c.row() for c in b.candidates], query
        assert [c.unit_id for c in a.selected] == [c.unit_id for c in b.selected], query
        assert (a.facts, a.loops, a.matched_entities) == (b.facts, b.loops, b.matched_entities), query


KB_ENTRIES = [
    ("秘密保持契約", "損害賠償の上限", "第8条（損害賠償）"),
    ("業務委託契約", "再委託の禁止", "第12条"),
    ("NDA", "Confidential Information の定義", "Article 1"),
    ("ライセンス契約", "ロイヤリティ 100%_前払い", "第3条"),
    ("請負契約", "納品物の締切日", "第5条（納期）"),
]
KB_QUERIES = [
    "損害 上限",
    "損害、委託",
    "締め切り",
    "締め切り 納品",
    "締め切り 損害",
    "ライセンス ロイヤリティ",
    "損害賠償",
    "nda",
    "ＮＤＡ",
    "confidential",
    "第8条",
    "100%",
    "_前払",
    "%",
    "_",
    "委託",
    "",
    "存在しない",
]


def test_knowledge_base_search_is_the_same_on_both_engines(engine: Engine) -> None:
    base = KnowledgeBaseRepository(engine, clock=lambda: NOW)
    for contract, title, clause in KB_ENTRIES:
        base.save_entry(dict(zip(ENTRY_FIELDS, (contract, title, clause, "", "", ""), strict=True)), by=ALICE)
    found = {q: [e["knowledge_title"] for e in base.list_entries(search=q)] for q in KB_QUERIES}
    assert found == {
        "損害 上限": ["損害賠償の上限"],  # terms are ANDed
        "損害、委託": [],
        "締め切り": ["納品物の締切日"],  # Sudachi keys: 締め切り = 締切
        "締め切り 納品": ["納品物の締切日"],
        "締め切り 損害": [],
        "ライセンス ロイヤリティ": ["ロイヤリティ 100%_前払い"],
        "損害賠償": ["損害賠償の上限"],
        "nda": ["Confidential Information の定義"],
        "ＮＤＡ": ["Confidential Information の定義"],
        "confidential": ["Confidential Information の定義"],
        "第8条": ["損害賠償の上限"],
        "100%": ["ロイヤリティ 100%_前払い"],
        "_前払": ["ロイヤリティ 100%_前払い"],
        "%": ["ロイヤリティ 100%_前払い"],
        "_": ["ロイヤリティ 100%_前払い"],
        "委託": ["再委託の禁止"],
        "": [t for _, t, _ in reversed(KB_ENTRIES)],
        "存在しない": [],
    }
    assert base.contract_types() == sorted(c for c, _, _ in KB_ENTRIES)


def test_tokens_and_patterns() -> None:
    assert unicode61_tokens("ブラック・ジャック Café_au-lait 100%") == [
        "ブラック",
        "ジャック",
        "cafe",
        "au",
        "lait",
        "100",
    ]
    assert trigram_token_count("あいう") == 1 and trigram_token_count("あい") == 0
    assert count_overlapping("ああああ", "ああ") == 3 and count_overlapping("abc", "") == 0
    assert like_pattern("100%_\\") == "%100\\%\\_\\\\%"
    assert fold("ＮＤＡ　ＡＢＳ") == "nda abs"  # the knowledge base's folded key
    assert unicode61_tokens("Café ガ", remove_diacritics=False) == ["café", "ガ"]  # the lexical lane


def test_an_empty_store_ranks_nothing(tmp_path: Path) -> None:
    assert fts5_bm25([{}], {}, 0, 0) == []
    repo = MemoryRepository(open_store(tmp_path), owner_id=OWNER)
    with repo.connect() as conn:
        assert keyword_lanes(conn, OWNER, "ラーメン", 5) == {"trigram": [], "bigram": [], "lexical": []}
