"""A replica with no free database connection (a pool of 1, held by another request) shows the Japanese card
with what to do and 「再試行」, never a traceback; once the connection is free, 再試行 opens the page."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.jobs.engine import EngineQueue
from core.settings import PoolSettings, Settings
from pages.ui.shell.state import _services
from tests.core.test_store_busy import BUSY
from tests.pages.conftest import APP, AUTH_SECRETS, claims


def test_an_exhausted_pool_shows_the_japanese_card_and_retry_opens_the_page(
    tmp_path: Path, pg_database: str
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        database_url=pg_database,
        pool=PoolSettings(size=1, max_overflow=0, timeout_s=0.5),
    )
    # the replica's own engine (the shell's cached services for these settings), its one connection taken
    services = _services(str(tmp_path), pg_database, None, settings.chroma_port, settings)
    engine = services.engine()
    held = engine.connect()
    at = AppTest.from_file(APP, default_timeout=30)
    at.secrets["auth"] = dict(AUTH_SECRETS)
    at.user = claims("alice", "Alice", "alice@example.com")  # the shell records a signed-in person
    at.session_state["app_settings"] = settings
    try:
        at.run()
        assert not at.exception, at.exception
        assert [e.value for e in at.error] == [BUSY]
        assert [b.label for b in at.main.button] == ["再試行"]
        assert not at.title  # no page ran
    finally:
        held.close()
    at.button(key="app_store_busy_retry").click().run()
    assert not at.exception, at.exception
    assert not at.error
    assert at.title[0].value == "Katachi（形）"
    jobs = services.jobs()  # the shell opened the team job engine: stop its worker before the database goes
    assert isinstance(jobs, EngineQueue)
    jobs.stop_worker()
    engine.dispose()
