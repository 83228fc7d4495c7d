"""`python -m core.jobs`: a worker process of its own, for a team deployment (DATABASE_URL on PostgreSQL).

It runs the same tasks as the worker inside each replica (the registry and job context come from
core.services, the composition root: an allowed upward import, listed in pyproject's import-linter
ignores), looks for owed work on start and every KATACHI_JOB_SWEEP_S seconds, and puts jobs of dead
workers back in the queue. Replicas that leave all jobs to such processes set KATACHI_JOB_WORKER=off. Stop
it with SIGTERM or Ctrl-C: the running jobs get a few seconds to finish; a job killed mid-way is found
stalled by another worker and run again (jobs are safe to run twice).
"""

from __future__ import annotations

import logging
import signal
import sys
import threading

from core.services import open_services
from core.settings import load_settings


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = load_settings()
    services = open_services(settings)
    if services.engine().dialect.name != "postgresql":
        print(
            "core.jobs: DATABASE_URL が PostgreSQL ではありません。組み込み構成ではアプリ内のワーカーが処理します。"
        )
        return 2
    from core.jobs.engine import EngineQueue  # noqa: PLC0415 - procrastinate only for PostgreSQL

    queue = EngineQueue(
        services.engine(),
        services.registry,
        services.job_context,
        concurrency=settings.jobs.concurrency,
        sweep_every=settings.jobs.sweep_s,
    )
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    queue.start_worker()
    print(
        f"core.jobs: worker started ({len(services.registry.tasks)} tasks: {', '.join(services.registry.tasks)})"
    )
    stop.wait()
    queue.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
