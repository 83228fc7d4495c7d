"""What a replica uses, from its settings: the connection pool it may hold on the team's database, and a
replica that must not fall back to a local SQLite file or an embedded Chroma when the team's are not named."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.services import DeploymentView, ServerStoreRequired, Services, deployment_view, open_services
from core.settings import PoolSettings, Settings, load_settings
from core.store import make_engine


@contextmanager
def opened(settings: Settings) -> Iterator[Services]:
    """open_services with its in-process worker closed after the test (it starts two threads)."""
    services = open_services(settings)
    try:
        yield services
    finally:
        services.worker.close()


def test_pool_settings_have_documented_defaults_and_read_the_environment() -> None:
    assert load_settings(env={}).pool == PoolSettings(size=5, max_overflow=5, timeout_s=10.0)
    env = {"KATACHI_DB_POOL_SIZE": "8", "KATACHI_DB_MAX_OVERFLOW": "2", "KATACHI_DB_POOL_TIMEOUT": "3"}
    assert load_settings(env=env).pool == PoolSettings(size=8, max_overflow=2, timeout_s=3.0)
    assert load_settings(env={"KATACHI_DB_POOL_SIZE": "many"}).pool.size == 5


def test_a_server_engine_holds_at_most_the_configured_connections() -> None:
    engine = make_engine(
        url="postgresql://u:p@127.0.0.1:9/db", pool=PoolSettings(size=3, max_overflow=1, timeout_s=2)
    )
    assert (engine.pool.size(), engine.pool._max_overflow, engine.pool._timeout) == (3, 1, 2)  # type: ignore[attr-defined]
    engine.dispose()


@pytest.mark.parametrize("value", ["1", "true", "on"])
def test_a_replica_that_requires_the_team_store_refuses_sqlite_and_embedded_chroma(
    tmp_path: Path, value: str
) -> None:
    settings = load_settings(env={"KATACHI_REQUIRE_SERVER_STORE": value, "APP_DATA_DIR": str(tmp_path)})
    assert settings.require_server_store
    with opened(settings) as services:
        with pytest.raises(ServerStoreRequired, match="DATABASE_URL が設定されていません"):
            services.engine()
        with pytest.raises(ServerStoreRequired, match="CHROMA_HOST が設定されていません"):
            services.chroma()
    assert not (tmp_path / "app.db").exists() and not (tmp_path / "chroma").exists()


def test_without_the_requirement_the_embedded_default_still_opens(tmp_path: Path) -> None:
    with opened(load_settings(env={"APP_DATA_DIR": str(tmp_path)})) as services:
        assert not services.settings.require_server_store
        assert services.engine().dialect.name == "sqlite" and (tmp_path / "app.db").exists()


def test_the_deployment_view_names_model_servers_from_the_settings_when_the_client_does_not() -> None:
    anthropic = load_settings(
        env={"KATACHI_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "sk-ant-x", "APP_DATA_DIR": "/srv/k"}
    )
    assert deployment_view(anthropic) == DeploymentView(
        store="SQLite ファイル（/srv/k/app.db）",
        vectors="組み込みの Chroma（/srv/k/chroma）",
        jobs="このプロセス内のワーカー",
        model="Anthropic（api.anthropic.com）",
    )
    openai = load_settings(env={"KATACHI_PROVIDER": "openai", "OPENAI_API_KEY": "sk-x"})
    assert deployment_view(openai).model == "OpenAI・互換サーバー（api.openai.com）"
    assert (
        deployment_view(openai, "gateway.internal:8443").model
        == "OpenAI・互換サーバー（gateway.internal:8443）"
    )
    team = load_settings(env={"DATABASE_URL": "postgres://k:secret@db:5432/katachi", "CHROMA_HOST": "vec"})
    view = deployment_view(team)
    assert (view.store, view.vectors, view.jobs) == (
        "PostgreSQL（db:5432/katachi）",
        "Chroma サーバー（vec:8000）",
        "PostgreSQL のジョブキュー",
    )
    assert "secret" not in repr(view)
