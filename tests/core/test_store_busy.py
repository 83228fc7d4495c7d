"""A replica whose connection pool is exhausted says so in Japanese (StoreBusy), naming the limits and the
settings that change them, instead of QueuePool's TimeoutError."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from core.settings import PoolSettings
from core.store import StoreBusy, make_engine

BUSY = (
    "データベースへの接続が混み合っています（このサーバーの接続 1 本がすべて使用中で、0.5 秒待っても"
    "空きませんでした）。少し待ってから、もう一度操作してください。続くときは管理者に連絡してください"
    "（KATACHI_DB_POOL_SIZE / KATACHI_DB_MAX_OVERFLOW を増やすか、PgBouncer を使います）。"
)


def test_an_exhausted_pool_raises_store_busy_in_japanese(pg_database: str) -> None:
    engine = make_engine(url=pg_database, pool=PoolSettings(size=1, max_overflow=0, timeout_s=0.5))
    try:
        with engine.connect() as held:
            held.execute(text("SELECT 1"))
            with pytest.raises(StoreBusy) as caught, engine.connect():
                pass
            assert str(caught.value) == BUSY
            assert "postgresql" not in str(caught.value) and "127.0.0.1" not in str(caught.value)
        with engine.connect() as again:  # the held connection is back: the next request gets it
            assert again.execute(text("SELECT 1")).scalar() == 1
    finally:
        engine.dispose()
