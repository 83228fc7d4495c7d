"""The sidebar says which store, vector store, job engine and model server this replica uses, never a
password or key; and 「構造化出力の形式をもう一度試す」 forgets the structured-output form remembered for the
server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from core.llm.server_profiles import forget_forms, remember_form, remembered_forms
from core.settings import Settings
from tests.pages.conftest import APP

PASSWORD = "hunter2-db-pass"
API_KEY = "sk-test-DEPLOY-0123456789"
MODEL_URL = "http://127.0.0.1:9/v1"  # nothing listens: the home page makes no model call


@pytest.fixture(autouse=True)
def no_forms_left() -> Iterator[None]:
    forget_forms()
    yield
    forget_forms()


def start(settings: Settings) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["app_settings"] = settings
    at.run()
    return at


def deployment_lines(at: AppTest) -> list[str]:
    (expander,) = [e for e in at.sidebar.expander if e.label == "このサーバーの接続先"]
    return [t.value for t in expander.text]


def every_proto(node: Any) -> Iterator[str]:
    proto = getattr(node, "proto", None)
    if proto is not None:
        yield str(proto)
    children = getattr(node, "children", None) or {}
    for child in children.values():
        yield from every_proto(child)


def test_the_embedded_default_names_its_file_and_the_in_process_worker(tmp_path: Path) -> None:
    at = start(Settings(data_dir=tmp_path))
    assert not at.exception, at.exception
    assert deployment_lines(at) == [
        f"データベース: SQLite ファイル（{tmp_path / 'app.db'}）",
        f"ベクトル検索: 組み込みの Chroma（{tmp_path / 'chroma'}）",
        "バックグラウンド処理: このプロセス内のワーカー",
        "モデルサーバー: デモモデル（オフライン・サーバーなし）",
    ]


def test_a_team_replica_names_its_servers_and_never_a_secret(tmp_path: Path) -> None:
    settings = Settings(
        provider="openai",
        model="gpt-4o-mini",
        openai_api_key=API_KEY,
        base_url=MODEL_URL,
        data_dir=tmp_path,
        database_url=f"postgresql://katachi:{PASSWORD}@127.0.0.1:1/team_db",  # closed port: fails fast
        chroma_host="chroma.example.internal",
        chroma_port=8123,
    )
    at = start(settings)
    assert deployment_lines(at) == [
        "データベース: PostgreSQL（127.0.0.1:1/team_db）",
        "ベクトル検索: Chroma サーバー（chroma.example.internal:8123）",
        "バックグラウンド処理: PostgreSQL のジョブキュー",
        "モデルサーバー: OpenAI・互換サーバー（127.0.0.1:9）",
    ]
    shown = "\n".join(every_proto(at._tree))
    assert "このサーバーの接続先" in shown
    assert PASSWORD not in shown and API_KEY not in shown and "katachi:" not in shown


def test_the_retry_button_forgets_the_remembered_form(tmp_path: Path) -> None:
    remember_form(MODEL_URL, "json_object")
    at = start(Settings(provider="openai", model="local", base_url=MODEL_URL, data_dir=tmp_path))
    assert ":material/data_object: このサーバーで使える形式: json_object（スキーマなし）" in [
        c.value for c in at.sidebar.caption
    ]
    (button,) = [b for b in at.sidebar.button if b.label == "構造化出力の形式をもう一度試す"]
    button.click().run()
    assert not at.exception, at.exception
    assert MODEL_URL not in remembered_forms()
