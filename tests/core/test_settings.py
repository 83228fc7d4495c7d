"""Settings: KATACHI_SERVER and the server profile labels."""

from __future__ import annotations

import pytest

from core.llm.openai_client import OpenAIClient
from core.llm.server_profiles import PROFILES
from core.services.clients import build_client
from core.settings import DEFAULT_SERVER, SERVER_LABELS, SERVERS, Settings, load_settings

LOCAL = {"KATACHI_PROVIDER": "openai", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}


def test_server_defaults_to_auto() -> None:
    assert DEFAULT_SERVER == "auto"
    assert load_settings(env={}).server == "auto"
    assert load_settings(env=LOCAL).server == "auto"
    assert Settings().server == "auto"


@pytest.mark.parametrize("name", SERVERS)
def test_every_profile_is_read_from_the_environment(name: str) -> None:
    assert load_settings(env={**LOCAL, "KATACHI_SERVER": name}).server == name


def test_server_value_is_case_insensitive_and_unknown_means_auto() -> None:
    assert load_settings(env={**LOCAL, "KATACHI_SERVER": " LlamaCpp "}).server == "llamacpp"
    assert load_settings(env={**LOCAL, "KATACHI_SERVER": "tgi"}).server == "auto"
    assert load_settings(env={**LOCAL, "KATACHI_SERVER": ""}).server == "auto"


def test_secrets_win_over_env_for_the_server() -> None:
    s = load_settings(env={**LOCAL, "KATACHI_SERVER": "vllm"}, secrets={"KATACHI_SERVER": "ollama"})
    assert s.server == "ollama"


def test_labels_cover_every_profile_in_japanese() -> None:
    assert set(SERVERS) == set(PROFILES) == set(SERVER_LABELS)
    assert SERVER_LABELS["auto"].startswith("自動")


def test_with_server_and_with_provider_keep_the_choice() -> None:
    s = load_settings(env=LOCAL).with_server("lmstudio")
    assert s.server == "lmstudio"
    assert s.with_provider("openai", base_url="http://127.0.0.1:1234/v1").server == "lmstudio"
    with pytest.raises(ValueError):
        s.with_server("mystery")


def test_registry_passes_the_server_profile_to_the_openai_client() -> None:
    client = build_client(load_settings(env={**LOCAL, "KATACHI_SERVER": "llamacpp"}))
    assert isinstance(client, OpenAIClient) and client.profile.name == "llamacpp"


def test_storage_servers_come_from_the_environment_or_secrets() -> None:
    s = load_settings(env={"DATABASE_URL": "postgresql://katachi:s3cret@db.internal:5432/katachi"})
    assert s.database_url == "postgresql://katachi:s3cret@db.internal:5432/katachi"
    assert s.database_label == "postgresql://db.internal:5432/katachi"
    assert "s3cret" in s.secrets and s.database_url in s.secrets  # redacted wherever secrets are
    assert "s3cret" not in repr(s)
    assert (
        load_settings(env={}, secrets={"DATABASE_URL": "sqlite:////tmp/x.db"}).database_url
        == "sqlite:////tmp/x.db"
    )
    embedded = load_settings(env={})
    assert (embedded.database_url, embedded.chroma_host, embedded.chroma_port) == (None, None, 8000)
    assert embedded.database_label == "SQLite（組み込み）" and embedded.secrets == []
    assert Settings(database_url="::not a url::").database_label == "（DATABASE_URL を読み取れません）"
