"""Browser, two replicas (issue #14 item 6): two `streamlit run` processes on different ports and data dirs,
sharing one PostgreSQL database and one Chroma server. A knowledge entry saved on replica 1 is in the
knowledge base on replica 2; a memory turn on replica 1 is found (keyword and vector lanes) on replica 2.
Skipped, with the reason, without PostgreSQL's binaries or when `chroma run` cannot start."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import AppServer
from tests.e2e.helpers import open_page, shot, wait_idle
from tests.servers import ChromaServer, PgCluster

pytestmark = pytest.mark.e2e
MEMORY = "同僚の田中さんと新宿でラーメンを食べたよ。来週また行く約束をした。"


@pytest.fixture(scope="module")
def replicas(
    pg_cluster: PgCluster, chroma_server: ChromaServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    env = {
        "DATABASE_URL": pg_cluster.url(pg_cluster.create_database()),  # empty: the first replica migrates it
        "CHROMA_HOST": chroma_server.host,
        "CHROMA_PORT": str(chroma_server.port),
    }
    servers = [AppServer(Path(tmp_path_factory.mktemp(f"replica{i}")), env=env) for i in (1, 2)]
    yield servers[0].url, servers[1].url
    for server in servers:
        server.stop()


@pytest.fixture
def two_pages(browser, replicas):  # type: ignore[no-untyped-def]
    contexts = [
        browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP") for _ in replicas
    ]
    pages = [c.new_page() for c in contexts]
    for pg in pages:
        pg.set_default_timeout(60_000)
    yield pages
    for c in contexts:
        c.close()


def test_what_one_replica_saves_the_other_shows(two_pages, replicas) -> None:  # type: ignore[no-untyped-def]
    first, second = two_pages
    url1, url2 = replicas
    # Replica 1: the knowledge demo to a draft, saved to the knowledge base.
    first.goto(url1)
    wait_idle(first)
    first.get_by_test_id("stMain").get_by_role("button", name="ワンクリックデモ").first.click()
    wait_idle(first, timeout=60_000)
    main1 = first.get_by_test_id("stMain")
    for _ in range(2):
        main1.get_by_role("button", name=re.compile("デモの回答例を送る")).click()
        wait_idle(first, timeout=60_000)
    main1.get_by_text("ナレッジの草案を作成しました").first.wait_for()
    title = main1.get_by_label("ナレッジ名").input_value()
    main1.get_by_role("button", name="ナレッジベースに保存").click()
    wait_idle(first)
    main1.get_by_text("ナレッジベースに保存しました").first.wait_for()
    # Replica 2: the entry is in its knowledge base.
    open_page(second, url2, "ナレッジ聞き取り")
    main2 = second.get_by_test_id("stMain")
    second.get_by_role("tab", name="ナレッジベース").click()
    wait_idle(second)
    main2.get_by_label("確認・編集するナレッジ").click()
    second.get_by_role("option", name=re.compile(re.escape(title))).first.wait_for()
    shot(second, "team-replica2-knowledge")
    second.keyboard.press("Escape")
    # Replica 1: one memory turn.
    open_page(first, url1, "コンパニオン記憶")
    first.get_by_test_id("stChatInputTextArea").fill(MEMORY)
    first.keyboard.press("Enter")
    wait_idle(first, timeout=60_000)
    main1.get_by_text("このターンの記憶").first.wait_for()
    # Replica 2: the memory is retrieved from the shared database and Chroma server.
    open_page(second, url2, "コンパニオン記憶")
    main2.get_by_role("tab", name="検索テスト").click()
    wait_idle(second)
    main2.get_by_label("検索したい発話").fill("新宿のラーメン、覚えてる？")
    main2.get_by_role("button", name="検索する").click()
    wait_idle(second)
    main2.get_by_text("注入される内容").first.wait_for()
    text = main2.inner_text()
    assert "新宿でラーメンを食べたよ" in text
    vector_hits = r"ベクトル（類似度 [0-9.]+ 以上） / [^（]+（[1-9]\d*件）"  # from the Chroma server
    assert re.search(vector_hits, text)
    assert re.search(r"キーワード（3文字以上） / [^（]+（[1-9]\d*件）", text)  # hits from PostgreSQL
    shot(second, "team-replica2-memory")
    assert "Traceback" not in first.content() + second.content()
