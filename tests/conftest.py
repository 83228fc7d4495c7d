"""Fixtures shared by every test layer: the store on both engines, and a Chroma server.

`engine` runs a test twice, on SQLite (a file in tmp_path) and on PostgreSQL (a fresh database, copied from
a template migrated once per session, in a throwaway cluster on 127.0.0.1). Without PostgreSQL's binaries the
PostgreSQL run is skipped with the reason; `make test` works either way. KATACHI_TEST_PG=0 skips it too.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from core.jobs.engine import WORKER_THREAD
from core.store import init_db, make_engine, open_store
from tests.servers import ChromaServer, PgCluster, ServerUnavailable

ENGINES = ("sqlite", "postgresql")
TEMPLATE = "katachi_template"
POOL_THREAD = re.compile(r"pool-\d+(?=-(worker|scheduler))")
BACKGROUND_THREAD = "katachi-worker"  # core.jobs.worker.BackgroundWorker's threads (katachi-worker-<i>)
SHELL_STATE = "pages.ui.shell.state"  # holds the process's one BackgroundWorker (see _shell_worker_threads)
THREAD_EXIT_S = 2.0  # how long a closed worker's threads get to finish exiting before they count as left


def _pools() -> set[str]:
    """The psycopg pools with live threads in this process (their threads are named pool-N-worker-i / -scheduler),
    and the job workers running here (a worker's pool is async: it lives in the worker's thread)."""
    return {m.group(0) for t in threading.enumerate() if (m := POOL_THREAD.match(t.name))} | {
        f"{t.name} (thread {t.ident})" for t in threading.enumerate() if t.name == WORKER_THREAD
    }


@pytest.fixture(autouse=True)
def no_pool_outlives_its_test() -> Iterator[None]:
    """A job queue's connection pool opened by a test is closed by it: a pool left open keeps retrying against a
    database that is gone (after the session, lines of 「Connection refused」 below a green run)."""
    before = _pools()
    yield
    left = _pools() - before
    assert not left, f"psycopg pools still running after the test (close its EngineQueue): {sorted(left)}"


def _shell_worker_threads() -> set[threading.Thread]:
    """The threads of the app shell's BackgroundWorker (pages.ui.shell.state.worker, in st.cache_resource), left out
    of the guard by identity, not by name: it is process-wide on purpose. Every AppTest of the app (tests/pages)
    runs on it, and page tests wait on it after the app has run (`worker().wait(...)`), so no test closes it.
    Looked up only once the app's state module is imported; the call returns the cached worker (Streamlit's
    resource cache is process-wide, AppTest's runs included), or opens it as the app's first page would."""
    state = sys.modules.get(SHELL_STATE)
    return set(state.worker()._threads) if state is not None else set()


def background_threads() -> set[threading.Thread]:
    """The live threads of BackgroundWorkers in this process (named katachi-worker-<i>, or with a name= prefix
    that starts with katachi-worker), except those of the shell's process-wide worker."""
    live = {t for t in threading.enumerate() if t.name.startswith(BACKGROUND_THREAD)}
    return live - _shell_worker_threads() if live else live


@pytest.fixture(autouse=True)
def no_worker_outlives_its_test() -> Iterator[None]:
    """A BackgroundWorker opened by a test is closed by it (a fixture with yield + close, or try/finally): its
    daemon threads would otherwise wait on an empty queue until the session ends. close() joins them; a thread
    still alive after it gets THREAD_EXIT_S more to exit before the test fails."""
    before = background_threads()
    yield
    left = background_threads() - before
    deadline = time.monotonic() + THREAD_EXIT_S
    for thread in left:
        thread.join(max(0.0, deadline - time.monotonic()))
    names = sorted(f"{t.name} (thread {t.ident})" for t in left if t.is_alive())
    assert not names, f"BackgroundWorker threads still running after the test (close the worker): {names}"


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """A PostgreSQL cluster for the session (skipped, with the reason, when it cannot run here)."""
    if os.environ.get("KATACHI_TEST_PG") == "0":
        pytest.skip("KATACHI_TEST_PG=0: PostgreSQL tests skipped")
    try:
        cluster = PgCluster()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def pg_template(pg_cluster: PgCluster) -> str:
    """A database at the newest migration, copied for each test (CREATE DATABASE ... TEMPLATE)."""
    pg_cluster.create_database(name=TEMPLATE)
    engine = make_engine(url=pg_cluster.url(TEMPLATE))
    init_db(engine)
    engine.dispose()
    return TEMPLATE


@pytest.fixture
def pg_database(pg_cluster: PgCluster, pg_template: str) -> Iterator[str]:
    """The URL of a fresh PostgreSQL database at the newest migration, dropped after the test."""
    name = pg_cluster.create_database(template=pg_template)
    yield pg_cluster.url(name)
    pg_cluster.drop_database(name)


@pytest.fixture
def pg_engine(pg_database: str) -> Iterator[Engine]:
    engine = make_engine(url=pg_database)
    yield engine
    engine.dispose()


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """The store at the newest migration, on SQLite and on PostgreSQL (the test runs once per engine)."""
    if request.param == "sqlite":
        sqlite = open_store(tmp_path)
        yield sqlite
        sqlite.dispose()
        return
    yield request.getfixturevalue("pg_engine")


@pytest.fixture
def engine_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Engine]:
    """Another engine on the same database as `engine` (a second process or a restart)."""
    engine: Engine = request.getfixturevalue("engine")

    def factory() -> Engine:
        if engine.dialect.name == "sqlite":
            return open_store(tmp_path)
        return make_engine(url=engine.url.render_as_string(hide_password=False))

    return factory


@pytest.fixture(scope="session")
def chroma_server() -> Iterator[ChromaServer]:
    """`chroma run` for the session (skipped, with the reason, when it cannot start)."""
    try:
        server = ChromaServer()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    yield server
    server.stop()
