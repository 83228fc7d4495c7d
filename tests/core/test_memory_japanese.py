"""Memory lanes and entities with Japanese spelling variants (issue 12 item 2), on a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select, text

from core.flows.memory.entities import EntityEditError, merge_entities, rename_entity
from core.flows.memory.graph import link_unit_entity, upsert_edge, upsert_entity
from core.flows.memory.indexing import index_units
from core.flows.memory.lanes import entity_lane, entity_names, keyword_lanes
from core.flows.memory.retrieval import retrieve
from core.people import LOCAL_PERSON
from core.store import open_store
from core.store.memory.keyword_lanes import FTS_LEXICAL, backfill_lexical, fts_count
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import edges, entities, entity_aliases, payload_fact, unit_entities
from core.text.japanese import lexical_document, lexical_keys, name_key, term_keys

NOW = 1_795_000_000


@pytest.fixture
def repo(tmp_path: Path) -> MemoryRepository:
    return MemoryRepository(open_store(tmp_path), lambda: NOW, owner_id=LOCAL_PERSON.id)


def add(repo: MemoryRepository, text: str, reply: str = "そうなんですね。", at: int = NOW - 3600) -> int:
    with repo.begin() as conn:
        uid = repo.save_episode(
            text, reply, {"salience": 0.5}, source="test", occurred_at=at, now=at, conn=conn
        )
        index_units(conn, None, [uid])
    return uid


def lexical_hits(repo: MemoryRepository, query: str) -> list[int]:
    with repo.connect() as conn:
        return [u for u, _ in keyword_lanes(conn, repo.owner_id, query, 5)["lexical"]]


@pytest.mark.parametrize(
    "a,b",
    [
        ("ねこ、元気になったよ", "うちのねこが…"),
        ("ねこ", "猫"),
        ("締め切り", "締切"),
        ("打合せ", "打ち合わせ"),
        ("パソコン", "PC"),
        ("スマホ", "スマートフォン"),
        ("ＮＤＡ", "NDA"),
        ("らーめん", "ラーメン"),
    ],
)
def test_variants_share_a_lexical_key(a: str, b: str) -> None:
    assert set(lexical_keys(a)) & set(lexical_keys(b))


def test_particles_honorifics_and_light_verbs_give_no_key() -> None:
    assert lexical_keys("田中さんがいる") == ["田中", "タナカ"]
    assert "する" not in lexical_keys("勉強をする") and "勉強" in lexical_keys("勉強をする")
    assert lexical_document("ねこが好き") == " ".join(lexical_keys("ねこが好き"))


def test_terms_split_at_spaces_and_commas() -> None:
    assert [t for t, _ in term_keys("秘密保持、損害賠償")] == ["秘密保持", "損害賠償"]
    assert [t for t, _ in term_keys("ＮＤＡ　第８条")] == ["nda", "第8条"]


def test_hiragana_memory_is_found_by_the_lexical_lane(repo: MemoryRepository) -> None:
    cat = add(repo, "うちのねこが最近ごはんを残すんだ。")
    add(repo, "新宿でラーメンを食べた。")
    deadline = add(repo, "プロジェクトの締切が延びた。")
    pc = add(repo, "パソコンが急に動かなくなった。")
    assert lexical_hits(repo, "ねこ、元気になったよ") == [cat]
    assert lexical_hits(repo, "締め切りはいつだっけ") == [deadline]
    assert lexical_hits(repo, "PCは直った？") == [pc]
    result = retrieve(repo, None, [], "ねこ、元気になったよ", NOW)
    assert cat in [c.unit_id for c in result.selected]
    before = retrieve(repo, None, [], "ねこ、元気になったよ", NOW, lexical=False)
    assert cat not in [c.unit_id for c in before.selected]  # the character lanes drop hiragana


def test_lexical_index_follows_deletes(repo: MemoryRepository) -> None:
    uid = add(repo, "うちのねこが元気です。")
    with repo.begin() as conn:
        assert fts_count(conn, FTS_LEXICAL, uid) == 1
        conn.execute(text(f"DELETE FROM {FTS_LEXICAL}"))
        assert backfill_lexical(conn) == 1  # migration v0007: units indexed before the lexical lane get keys
    assert lexical_hits(repo, "ねこ") == [uid]
    with repo.begin() as conn:
        assert backfill_lexical(conn) == 0  # idempotent
    with repo.connect() as conn:
        assert conn.execute(text(f"SELECT count(*) FROM {FTS_LEXICAL}")).scalar() == 1


def test_honorifics_and_aliases_resolve_to_one_entity(repo: MemoryRepository) -> None:
    with repo.begin() as conn:
        first = upsert_entity(
            conn, repo.owner_id, {"type_label": "PERSON", "name": "田中さん", "aliases": []}, NOW
        )
        second = upsert_entity(
            conn, repo.owner_id, {"type_label": "PERSON", "name": "田中", "aliases": ["たなっち"]}, NOW
        )
        third = upsert_entity(
            conn, repo.owner_id, {"type_label": "PERSON", "name": "たなっち", "aliases": []}, NOW
        )
        fourth = upsert_entity(
            conn, repo.owner_id, {"type_label": "PERSON", "name": "田中様", "aliases": []}, NOW
        )
        other = upsert_entity(
            conn, repo.owner_id, {"type_label": "PLACE", "name": "田中", "aliases": []}, NOW
        )
        assert first == second == third == fourth != other
        assert conn.execute(select(entities.c.name).where(entities.c.id == first)).scalar() == "田中"
        aliases = set(
            conn.execute(select(entity_aliases.c.alias).where(entity_aliases.c.entity_id == first)).scalars()
        )
        assert aliases == {"田中さん", "たなっち", "田中様"}
    assert name_key("田中くん") == name_key("田中") == "田中"
    assert name_key("みけちゃん") == "ミケ"


def test_entity_lane_matches_honorific_and_kana_forms(repo: MemoryRepository) -> None:
    uid = add(repo, "ミケが病院に行った。")
    with repo.begin() as conn:
        cat = upsert_entity(conn, repo.owner_id, {"type_label": "ANIMAL", "name": "ミケ", "aliases": []}, NOW)
        link_unit_entity(conn, uid, cat)
    with repo.connect() as conn:
        names = entity_names(conn, repo.owner_id)
        matched, hits = entity_lane(conn, repo.owner_id, "みけちゃんは元気？", 5, names)
    assert [e for _, e in matched] == [cat] and [u for u, _ in hits] == [uid]


def test_rename_keeps_the_old_name_as_alias(repo: MemoryRepository) -> None:
    with repo.begin() as conn:
        eid = upsert_entity(
            conn, repo.owner_id, {"type_label": "PERSON", "name": "たなっち", "aliases": []}, NOW
        )
        upsert_entity(conn, repo.owner_id, {"type_label": "PERSON", "name": "佐藤", "aliases": []}, NOW)
    assert rename_entity(repo, eid, "田中") == "田中"
    with repo.connect() as conn:
        assert conn.execute(select(entities.c.name).where(entities.c.id == eid)).scalar() == "田中"
        assert list(
            conn.execute(select(entity_aliases.c.alias).where(entity_aliases.c.entity_id == eid)).scalars()
        ) == ["たなっち"]
    with pytest.raises(EntityEditError, match="統合"):
        rename_entity(repo, eid, "佐藤")
    with pytest.raises(EntityEditError):
        rename_entity(repo, eid, "  ")


def test_merge_moves_links_facts_edges_and_aliases(repo: MemoryRepository) -> None:
    u1, u2 = add(repo, "田中さんとラーメン。"), add(repo, "たなっちと飲んだ。")
    with repo.begin() as conn:
        keep = upsert_entity(
            conn,
            repo.owner_id,
            {"type_label": "PERSON", "name": "田中", "aliases": [], "roles": ["colleague"]},
            NOW,
        )
        other = upsert_entity(
            conn,
            repo.owner_id,
            {"type_label": "PERSON", "name": "なっちゃん", "aliases": ["たなっち"], "roles": ["friend"]},
            NOW,
        )
        place = upsert_entity(
            conn, repo.owner_id, {"type_label": "PLACE", "name": "新宿", "aliases": []}, NOW
        )
        link_unit_entity(conn, u1, keep)
        link_unit_entity(conn, u2, other)
        link_unit_entity(conn, u1, other)
        upsert_edge(conn, keep, "related", place, 0.4, u1, "", NOW)
        upsert_edge(conn, other, "related", place, 0.9, u2, "", NOW)
        upsert_edge(conn, other, "friend", keep, 0.5, u2, "", NOW)  # becomes a self-loop: dropped
    fact_id, _ = repo.upsert_fact(
        {
            "predicate": "likes",
            "predicate_raw": "likes",
            "object_text": "ビール",
            "confidence": 0.8,
            "valid_from": None,
            "valid_to": None,
        },
        other,
        None,
        u2,
        NOW,
        NOW,
    )
    report = merge_entities(repo, keep, [other])
    assert report.merged == [other] and set(report.aliases_added) == {"なっちゃん", "たなっち"}
    with repo.connect() as conn:
        assert conn.execute(select(entities.c.id).where(entities.c.id == other)).first() is None
        linked = set(
            conn.execute(select(unit_entities.c.unit_id).where(unit_entities.c.entity_id == keep)).scalars()
        )
        assert {u1, u2} <= linked
        rows = conn.execute(select(edges.c.src_entity_id, edges.c.dst_entity_id, edges.c.weight)).all()
        assert [tuple(r) for r in rows] == [(keep, place, 0.9)]
        subject = conn.execute(
            select(payload_fact.c.subject_entity_id).where(payload_fact.c.unit_id == fact_id)
        )
        assert subject.scalar() == keep
        roles = conn.execute(select(entities.c.roles_json).where(entities.c.id == keep)).scalar()
        assert "friend" in roles and "colleague" in roles
    with pytest.raises(EntityEditError):
        merge_entities(repo, keep, [keep])
