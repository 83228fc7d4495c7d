"""Processes for the concurrency tests and benchmarks: `python -m tests.core.store_workers <command> ...`.

Each process, once imported, creates `<barrier>/ready-<pid>` and waits for `<barrier>/go` (start_together
creates it when every process is ready, so they all start at once), runs, and prints one JSON line:
{"ok": <successful operations>, "errors": [<messages>]}.

  init <url> <barrier>                                   open the store (migrations under the lock)
  kb-save <url> <barrier> <entry_id> <threads> <saves>   threads each save `saves` edits of one entry
  memory-edit <url> <barrier> <unit_id> <threads> <saves> threads each edit one memory unit
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from core.flows.memory.versions import edit_unit
from core.people import LOCAL_PERSON, Person
from core.store import init_db, make_engine
from core.store.knowledge.entries import ENTRY_FIELDS, KnowledgeBaseRepository
from core.store.memory.repository import MemoryRepository


def _threads(count: int, saves: int, save: Callable[[int, int], None], extra: int = 0) -> dict[str, object]:
    """`count` threads each calling save(thread, i) `saves` times (the first `extra` threads once more)."""
    errors: list[str] = []
    done = [0]
    lock = threading.Lock()

    def run(thread: int) -> None:
        for i in range(saves + (1 if thread < extra else 0)):
            try:
                save(thread, i)
            except Exception as exc:  # noqa: BLE001 - every failure is counted and reported, none may pass silently
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}"[:300])
            else:
                with lock:
                    done[0] += 1

    workers = [threading.Thread(target=run, args=(t,)) for t in range(count)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return {"ok": done[0], "errors": errors}


def kb_save(engine: Engine, entry_id: int, threads: int, saves: int) -> dict[str, object]:
    """`saves` edits per thread; a negative number is a total for the process, split over its threads."""
    repo = KnowledgeBaseRepository(engine)

    def save(thread: int, i: int) -> None:
        text = f"{os.getpid()}-{thread}-{i}"
        by = Person(f"p{os.getpid()}", f"p{os.getpid()}")
        repo.update_entry(entry_id, dict.fromkeys(ENTRY_FIELDS, text), by=by)

    if saves < 0:
        total = -saves
        return _threads(threads, total // threads, save, extra=total % threads)
    return _threads(threads, saves, save)


def memory_edit(engine: Engine, unit_id: int, threads: int, saves: int) -> dict[str, object]:
    repo = MemoryRepository(engine, owner_id=LOCAL_PERSON.id)

    def save(thread: int, i: int) -> None:
        edit_unit(repo, None, unit_id, {"input_text": f"{os.getpid()}-{thread}-{i}"}, note="concurrent")

    return _threads(threads, saves, save)


ROOT = Path(__file__).resolve().parents[2]


def start_together(
    url: str,
    count: int,
    command: str,
    *args: str,
    timeout: float = 600,
    module: str = "tests.core.store_workers",
    per_process: Callable[[int], list[str]] | None = None,
) -> list[dict[str, Any]]:
    """Run `count` worker processes (`python -m <module> <command> <url> <barrier> <args...>`, plus
    `per_process(i)`) that start their work at the same moment; their JSON results."""
    barrier = Path(tempfile.mkdtemp(prefix="katachi-barrier-"))
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                module,
                command,
                url,
                str(barrier),
                *args,
                *(per_process(i) if per_process else []),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(count)
    ]
    deadline = time.time() + 120
    while len(list(barrier.glob("ready-*"))) < count and time.time() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(0.05)
    (barrier / "go").touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"worker failed: {err[-2000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    shutil.rmtree(barrier, ignore_errors=True)
    return results


def wait_for_go(barrier: Path) -> None:
    """Tell start_together this process is ready, then wait until every process is."""
    (barrier / f"ready-{os.getpid()}").touch()
    while not (barrier / "go").exists():
        time.sleep(0.01)


def main(argv: list[str]) -> int:
    command, url, barrier = argv[0], argv[1], Path(argv[2])
    engine = make_engine(url=url)
    wait_for_go(barrier)
    if command == "init":
        try:
            init_db(engine)
            result: dict[str, object] = {"ok": 1, "errors": []}
        except Exception as exc:  # noqa: BLE001 - reported to the test, which fails on any error
            result = {"ok": 0, "errors": [f"{type(exc).__name__}: {exc}"[:500]]}
    elif command == "kb-save":
        result = kb_save(engine, int(argv[3]), int(argv[4]), int(argv[5]))
    elif command == "memory-edit":
        result = memory_edit(engine, int(argv[3]), int(argv[4]), int(argv[5]))
    else:
        raise SystemExit(f"unknown command {command}")
    engine.dispose()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
