"""Two stores migrated at once in one process (a page and the job interface's opening thread, each opening a
store) must not clobber each other: Alembic keeps the running migration in module globals."""

from __future__ import annotations

import threading
from pathlib import Path

from core.store import open_store
from core.store.migrate import current_revision, head_revision


def test_stores_opened_on_four_threads_at_once_all_reach_head(tmp_path: Path) -> None:
    start = threading.Barrier(4)
    errors: list[BaseException] = []
    engines = []

    def open_one(i: int) -> None:
        start.wait()
        try:
            engines.append(open_store(tmp_path / f"store{i}"))
        except BaseException as exc:  # noqa: BLE001 - the test reports whatever a thread raised
            errors.append(exc)

    threads = [threading.Thread(target=open_one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    assert [current_revision(e) for e in engines] == [head_revision()] * 4
