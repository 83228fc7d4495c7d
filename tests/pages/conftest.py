"""AppTest helpers: the whole app (shell + navigation) on a temp data dir, optionally with a pinned client.

Note: under st.navigation, AppTest re-runs only the current page after the first run (the shell and its
sidebar do not run again), so shell behaviour is tested on the first run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.llm.base import LLMClient
from core.settings import Settings

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")


def make_app(
    tmp_path: Path, client: LLMClient | None = None, page: str | None = None, debug: bool = True
) -> AppTest:
    """An AppTest of streamlit_app.py on `tmp_path`, run once (and switched to `page` when given)."""
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["app_settings"] = Settings(data_dir=tmp_path)
    at.session_state["app_debug"] = debug
    if client is not None:
        at.session_state["llm_client"] = client
        at.session_state["llm_client_pinned"] = True
    at.run()
    if page is not None:
        at.switch_page(page)
        at.run()
    return at


@pytest.fixture
def app_factory(tmp_path: Path):  # type: ignore[no-untyped-def]
    def factory(client: LLMClient | None = None, page: str | None = None, debug: bool = True) -> AppTest:
        return make_app(tmp_path, client, page, debug)

    return factory
