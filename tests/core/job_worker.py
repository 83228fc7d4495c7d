"""A worker process for the job-engine tests and the bench: `python -m tests.core.job_worker URL CALLS [--hold]`.

It runs the app's own tasks (core.services.task_registry) on procrastinate, as `python -m core.jobs` does,
but with the demo model behind a counting wrapper: every model call appends `start <step> <marker>` when it
begins and `done <step> <marker> <pid>` when its reply is back to the CALLS file (one line per write, so two
processes can share it). `--hold` makes every call wait forever after its start line (a process to kill
mid-job). Short heartbeats and sweeps, so a killed worker's jobs are found stalled within seconds.
"""

from __future__ import annotations

import argparse
import os
import re
import threading
import time

from core.flows.registry import demo_client
from core.jobs.engine import EngineQueue
from core.jobs.tasks import JobContext
from core.llm.base import LLMClient, LLMReply, LLMRequest, TextStream, stream_from_reply
from core.services import task_registry
from core.store import make_engine

MARKER = re.compile(r"【(M[^】]+)】")  # what a test writes into an episode or a thread's messages


def marker(request: LLMRequest) -> str:
    found = MARKER.findall(" ".join(str(m.get("content", "")) for m in request.messages))
    return found[0] if found else "-"


class CountingClient:
    """The demo model; each call recorded in a file shared by processes (append, one write per line)."""

    provider, model = "demo", "counting"

    def __init__(self, path: str, hold: bool = False, delay: float = 0.0):
        self.inner: LLMClient = demo_client()
        self.path, self.hold, self.delay = path, hold, delay

    def _log(self, line: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)

    def complete(self, request: LLMRequest) -> LLMReply:
        step, mark = request.tags.get("step", ""), marker(request)
        self._log(f"start {step} {mark} {os.getpid()}")
        if self.hold:
            threading.Event().wait()
        if self.delay:
            time.sleep(self.delay)
        reply = self.inner.complete(request)
        self._log(f"done {step} {mark} {os.getpid()}")
        return reply

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("calls")
    parser.add_argument("--hold", action="store_true")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    engine = make_engine(url=args.url)
    client = CountingClient(args.calls, args.hold, args.delay)
    queue = EngineQueue(
        engine,
        task_registry(),
        lambda: JobContext(engine, client),
        concurrency=args.concurrency,
        sweep_every=1.0,
        stalled_after=2.0,
        heartbeat=0.5,
        poll=0.5,
    )
    queue.run_worker()


if __name__ == "__main__":
    main()
