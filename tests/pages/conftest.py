"""AppTest helpers: the whole app (shell + navigation) on a temp data dir, optionally with a pinned client.

Note: under st.navigation, AppTest re-runs only the current page after the first run (the shell and its
sidebar do not run again), so shell behaviour is tested on the first run.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from core.llm.base import LLMClient
from core.settings import Settings

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")
# How long a page test waits for a background job of the process's one worker: a cap, not a target. That worker
# (two threads) serves every page test in the process, so on a busy two-core machine a job can wait behind
# earlier tests' memory extractions (30 s ran out once in a full run).
JOB_WAIT_S = 120.0


@pytest.fixture(autouse=True)
def jobs_open_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell opens the job interface JOBS_OPEN_DELAY_S after the first page so a browser's first paint does
    not compete with it; AppTest draws nothing, and a test that stops the job worker at its end (the database
    goes with it) needs the opening to have happened during the test, not two seconds later."""
    from pages.ui.shell import state  # noqa: PLC0415 - imports Streamlit

    monkeypatch.setattr(state, "JOBS_OPEN_DELAY_S", 0.0)


@pytest.fixture(autouse=True)
def no_sweep_or_job_outlives_its_test() -> Iterator[None]:
    """Every page test opens its own data dir on the process's one worker, and opening it starts a sweep of that
    database's owed work every minute. At the end of the test the sweeps stop and the test's jobs finish: a
    finished test's database is no longer read, and its owed work neither competes for the worker's two threads
    with later tests nor waits under a later test's key (every test's first review thread is ('local',
    'review:1')), which once held a job of a later test past JOB_WAIT_S late in a full run."""
    yield
    state = sys.modules.get("pages.ui.shell.state")
    if state is None:
        return
    shell_worker = state.worker()
    shell_worker.stop_sweeps()
    assert shell_worker.wait_idle(timeout=JOB_WAIT_S), "background jobs of this test still unfinished"


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


# An [auth] section as secrets.toml would hold it (never used to reach a provider in AppTest: st.user is given).
AUTH_SECRETS = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "test-cookie-secret-0123456789abcdef",
    "client_id": "katachi",
    "client_secret": "test-client-secret",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}
ISSUER = "https://idp.example"


def claims(sub: str, name: str, email: str) -> dict[str, Any]:
    """What st.user holds for a person signed in through OpenID Connect."""
    return {"is_logged_in": True, "iss": ISSUER, "sub": sub, "name": name, "email": email}


def make_signed_in_app(
    tmp_path: Path,
    user: dict[str, Any],
    page: str | None = None,
    client: LLMClient | None = None,
    admins: list[str] | None = None,
    query: dict[str, str] | None = None,
) -> AppTest:
    """The whole app with `[auth]` configured and `user` as st.user (a signed-in person, or
    {"is_logged_in": False}); run once, then switched to `page` (with `query` in the URL) when given."""
    at = AppTest.from_file(APP, default_timeout=30)
    at.secrets["auth"] = dict(AUTH_SECRETS)
    at.secrets["katachi"] = {"admins": admins or []}
    at.user = dict(user)
    at.session_state["app_settings"] = Settings(data_dir=tmp_path)
    if client is not None:
        at.session_state["llm_client"] = client
        at.session_state["llm_client_pinned"] = True
    at.run()
    if page is not None:
        for key, value in (query or {}).items():
            at.query_params[key] = value
        at.switch_page(page)
        at.run()
    return at


@pytest.fixture
def app_factory(tmp_path: Path):  # type: ignore[no-untyped-def]
    def factory(client: LLMClient | None = None, page: str | None = None, debug: bool = True) -> AppTest:
        return make_app(tmp_path, client, page, debug)

    return factory
