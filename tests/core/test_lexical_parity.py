"""Japanese lexical search behaves the same on SQLite and PostgreSQL (issue #14 item 3).

The memory keyword lanes (trigram, 2-character, the unicode61 baseline), the whole retrieval pack and the
knowledge base search run the same queries on both engines and must return the same units in the same
order with the same scores. The PostgreSQL ranking is a Python model of FTS5's bm25(); its first test checks
the model against FTS5 itself, so it runs (and guards the model) even where PostgreSQL is absent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, text

from core.flows.memory.evaluation import build_eval_store, load_eval_set
from core.flows.memory.lanes import keyword_lanes, unicode61_lane, unicode61_terms
from core.flows.memory.retrieval import retrieve
from core.flows.memory.text import query_terms
from core.flows.registry import demo_client
from core.store import open_store
from core.store.knowledge_base import ENTRY_FIELDS, KnowledgeBaseRepository
from core.store.lexical import (
    best,
    count_overlapping,
    fts5_bm25,
    lexical_key,
    like_pattern,
    trigram_token_count,
    unicode61_tokens,
)
from core.store.memory_fts import FTS_BIGRAM, FTS_TRIGRAM, FTS_UNICODE61, fts_search
from core.store.memory_fts_pg import LANES, phrase, token_document
from core.store.memory_repository import MemoryRepository

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
]


def _lane_queries() -> list[tuple[str, list[str]]]:
    lanes = []
    for query in QUERIES:
        long_terms, short_terms = query_terms(query)
        lanes += [
            (FTS_TRIGRAM, long_terms),
            (FTS_BIGRAM, short_terms),
            (FTS_UNICODE61, unicode61_terms(query)),
        ]
    return [(table, terms) for table, terms in lanes if terms]


def _model_search(conn: Connection, table: str, terms: list[str], k: int) -> list[tuple[int, float]]:
    """The PostgreSQL ranking, computed in Python over the FTS5 table's own documents."""
    lane = LANES[table]
    docs = {}
    for row_id, body in conn.execute(text(f"SELECT rowid, body FROM {table}")):
        docs[int(row_id)] = token_document(body) if lane != "trigram" else (body, trigram_token_count(body))
    hits = []
    for term in terms:
        needle = phrase(lane, term)
        counts = {r: count_overlapping(body, needle) for r, (body, _) in docs.items()} if needle else {}
        hits.append({r: c for r, c in counts.items() if c})
    lengths = {r: n for r, (_, n) in docs.items()}
    return best(fts5_bm25(hits, lengths, len(docs), sum(lengths.values())), k)


@pytest.fixture(scope="module")
def sqlite_eval(tmp_path_factory: pytest.TempPathFactory) -> MemoryRepository:
    repo = MemoryRepository(open_store(tmp_path_factory.mktemp("parity-sqlite")))
    build_eval_store(repo, None, demo_client(), NOW)
    with repo.begin() as conn:
        conn.execute(
            text(
                f"INSERT INTO {FTS_TRIGRAM}(rowid, body) VALUES (9001, 'ああああああ abab ブラック・ジャック')"
            )
        )
        conn.execute(text(f"INSERT INTO {FTS_BIGRAM}(rowid, body) VALUES (9001, 'ああ ク・ ・ジ ジャ')"))
    return repo


def test_the_python_ranking_equals_fts5_bm25(sqlite_eval: MemoryRepository) -> None:
    compared = 0
    with sqlite_eval.connect() as conn:
        for table, terms in _lane_queries():
            assert _model_search(conn, table, terms, 30) == fts_search(conn, table, terms, 30), (table, terms)
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
    repos = MemoryRepository(open_store(tmp_path_factory.mktemp("parity"))), MemoryRepository(pg)
    for repo in repos:
        build_eval_store(repo, None, demo_client(), NOW)
    yield repos
    pg.dispose()
    cluster.drop_database(name)


def test_memory_keyword_lanes_return_the_same_units_on_both_engines(
    both_engines: tuple[MemoryRepository, MemoryRepository],
) -> None:
    sqlite, pg = both_engines
    with sqlite.connect() as a, pg.connect() as b:
        for query in QUERIES:
            assert keyword_lanes(a, query, 30) == keyword_lanes(b, query, 30), query
            assert unicode61_lane(a, query, 30) == unicode61_lane(b, query, 30), query


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
]
KB_QUERIES = [
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
        base.save_entry(dict(zip(ENTRY_FIELDS, (contract, title, clause, "", "", ""), strict=True)))
    found = {q: [e["knowledge_title"] for e in base.list_entries(search=q)] for q in KB_QUERIES}
    assert found == {
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
    assert lexical_key("ＮＤＡ　ＡＢＳ") == "nda abs"


def test_an_empty_store_ranks_nothing(tmp_path: Path) -> None:
    assert fts5_bm25([{}], {}, 0, 0) == []
    repo = MemoryRepository(open_store(tmp_path))
    with repo.connect() as conn:
        assert keyword_lanes(conn, "ラーメン", 5) == {"trigram": [], "bigram": []}
