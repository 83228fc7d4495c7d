"""One SQLAlchemy Core engine factory and one MetaData for every flow's tables.

SQLite (a file under the data dir, WAL) is the embedded default; `DATABASE_URL` (any SQLAlchemy URL, e.g.
`postgresql://user:pass@host/katachi`) selects a database server. The schema is built and changed only by the
Alembic migrations in core/store/migrations (run by `init_db`, see core/store/migrate.py); `metadata` is what
the repositories query with and what a new migration is compared against.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.pool import ConnectionPoolEntry, QueuePool

from core.settings import PoolSettings
from core.store.errors import StoreBusy, StoreUnavailable

STORE_DIR = (
    Path(__file__).resolve().parent
)  # core/store: every module here, or in a package here, may declare tables
SQLITE_BUSY_TIMEOUT_S = 30  # how long a SQLite writer waits for another one before "database is locked"
metadata = MetaData()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def database_url(url: str) -> str:
    """A URL as SQLAlchemy should get it: `postgresql://` / `postgres://` use the psycopg (v3) driver."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


class ReportingQueuePool(QueuePool):
    """QueuePool whose exhaustion raises StoreBusy with a Japanese message naming the limits and the settings
    that change them, so the page can say it instead of a traceback."""

    def _do_get(self) -> ConnectionPoolEntry:
        try:
            return super()._do_get()
        except PoolTimeout as exc:
            limit = self.size() + max(self._max_overflow, 0)
            raise StoreBusy(
                f"データベースへの接続が混み合っています（このサーバーの接続 {limit} 本がすべて使用中で、"
                f"{self._timeout:g} 秒待っても空きませんでした）。少し待ってから、もう一度操作してください。"
                "続くときは管理者に連絡してください（KATACHI_DB_POOL_SIZE / KATACHI_DB_MAX_OVERFLOW を"
                "増やすか、PgBouncer を使います）。"
            ) from exc


def make_engine(
    data_dir: Path | str = ".data", *, url: str | None = None, pool: PoolSettings | None = None
) -> Engine:
    """An engine on `url` (a database server, with `pool`'s connection limits) or on `data_dir/app.db`
    (SQLite: WAL, foreign keys)."""
    if url is None:
        path = Path(data_dir)
        path.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{path / 'app.db'}"
    url = database_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_S}
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    # A server closes idle connections; pre-ping replaces them instead of failing the next save.
    pool = pool or PoolSettings()
    return create_engine(
        url,
        poolclass=ReportingQueuePool,
        pool_pre_ping=True,
        pool_size=pool.size,
        max_overflow=pool.max_overflow,
        pool_timeout=pool.timeout_s,
    )


def load_table_modules() -> None:
    """Import every module of core.store and its per-domain packages so each flow's tables join `metadata`."""
    for info in pkgutil.walk_packages([str(STORE_DIR)], prefix="core.store."):
        if info.name not in ("core.store.db", "core.store.migrate") and ".migrations" not in info.name:
            importlib.import_module(info.name)


def schema_differences(engine: Engine) -> list[Any]:
    """What differs between the database and `metadata` (empty when the migrations built what the code
    declares; engine-specific lexical tables left out, see core.store.migrate.include_name)."""
    from alembic.autogenerate import compare_metadata  # noqa: PLC0415 - alembic: only when comparing
    from alembic.runtime.migration import MigrationContext  # noqa: PLC0415

    from core.store import migrate  # noqa: PLC0415 - imports alembic (~0.5 s): the shell starts without it

    load_table_modules()
    with engine.connect() as conn:
        opts = {"include_name": migrate.include_name, "compare_type": True}
        return list(compare_metadata(MigrationContext.configure(conn, opts=opts), metadata))


def init_db(engine: Engine) -> None:
    """Bring the schema to the newest migration (idempotent; safe when several processes start at once)."""
    from core.store import migrate  # noqa: PLC0415 - imports alembic (~0.5 s): only when a store opens

    migrate.upgrade(engine)


def open_store(
    data_dir: Path | str = ".data", *, url: str | None = None, pool: PoolSettings | None = None
) -> Engine:
    """make_engine + init_db: the one call the shell makes (`url`: DATABASE_URL, else SQLite in data_dir).

    Raises StoreUnavailable when the database cannot be reached.
    """
    engine = make_engine(data_dir, url=url, pool=pool)
    try:
        init_db(engine)
    except DBAPIError as exc:
        engine.dispose()
        where = engine.url.render_as_string(hide_password=True)
        raise StoreUnavailable(f"{where}: {type(exc.orig).__name__}") from exc
    return engine
