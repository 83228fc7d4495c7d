"""The throwaway servers say why they cannot run (the skip reason make test prints without them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import servers


def test_without_postgresql_binaries_the_reason_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(servers, "pg_bin_dir", lambda: None)
    with pytest.raises(servers.ServerUnavailable, match=r"apt-get install postgresql"):
        servers.PgCluster()


def test_without_the_chroma_command_the_reason_names_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(servers, "CHROMA", tmp_path / "chroma")
    with pytest.raises(servers.ServerUnavailable, match="chromadb package"):
        servers.ChromaServer()
