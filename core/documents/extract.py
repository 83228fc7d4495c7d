"""Run attachment extraction in a subprocess with a time and memory budget, once per file.

`extract_in_worker` starts `python -m core.documents.extract_worker`, hands it the bytes, and waits at most
`budget.seconds`; the child lowers its own address-space limit, so a file that expands past every
check fails there with a Japanese message instead of taking the app (and every session in it) down.
`on_tick` is called about five times a second with the progress so far: a page draws a progress bar
there, and returning False (or raising, as Streamlit does when the person clicks elsewhere) stops the
child at once. `ExtractionCache` keeps each file's outcome, document or error, keyed by its bytes'
hash, so a rerun never extracts the same attachment again.
"""

from __future__ import annotations

import hashlib
import json
import os
import selectors
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from core.documents.attachments import (
    DEFAULT_LIMITS,
    AttachmentError,
    AttachmentLimits,
    ExtractedDocument,
    attachment_name,
)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SECONDS = 30.0
DEFAULT_MEMORY_MB = 1024
TICK_SECONDS = 0.2


@dataclass(frozen=True)
class WorkerBudget:
    """Wall-clock seconds and address-space bytes one extraction may use."""

    seconds: float = DEFAULT_SECONDS
    memory_bytes: int = DEFAULT_MEMORY_MB * 1024 * 1024

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerBudget:
        """KATACHI_EXTRACT_TIMEOUT_S and KATACHI_EXTRACT_MEMORY_MB (defaults 30 s, 1024 MB)."""
        env = os.environ if env is None else env
        seconds = _positive(env.get("KATACHI_EXTRACT_TIMEOUT_S"), DEFAULT_SECONDS)
        memory_mb = _positive(env.get("KATACHI_EXTRACT_MEMORY_MB"), DEFAULT_MEMORY_MB)
        return cls(seconds, int(memory_mb * 1024 * 1024))


def _positive(value: str | None, default: float) -> float:
    try:
        number = float(value) if value else default
    except ValueError:
        return default
    return number if number > 0 else default


@dataclass(frozen=True)
class Tick:
    """Progress of one extraction: seconds so far, and PDF pages read (0 of 0 until known)."""

    filename: str
    elapsed: float
    done: int = 0
    total: int = 0

    @property
    def fraction(self) -> float | None:
        return self.done / self.total if self.total else None


OnTick = Callable[[Tick], bool | None]  # False cancels


def _request(
    name: str, data: bytes, password: str | None, limits: AttachmentLimits, budget: WorkerBudget
) -> bytes:
    header = {
        "filename": name,
        "password": password or None,
        "limits": asdict(limits),
        "memory_bytes": budget.memory_bytes,
        "cpu_seconds": int(budget.seconds) + 2,
    }
    return json.dumps(header, ensure_ascii=False).encode() + b"\n" + data


def _child_env() -> dict[str, str]:
    """Only what Python needs: no API keys or other secrets reach the child."""
    env = {"PYTHONPATH": str(ROOT), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    if "PATH" in os.environ:
        env["PATH"] = os.environ["PATH"]
    return env


def _feed(proc: subprocess.Popen[bytes], payload: bytes) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(payload)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the child died early; its exit is reported by the reader


def _outcome(name: str, message: dict[str, Any], budget: WorkerBudget) -> ExtractedDocument:
    if message.get("ok"):
        return ExtractedDocument.from_dict(message["document"])
    code = str(message.get("code") or "worker_failed")
    details = dict(message.get("details") or {})
    if code == "memory":
        details = {"limit": budget.memory_bytes}
    try:
        error = AttachmentError(code, name, **details)
    except (KeyError, IndexError, ValueError):  # a code or details this version does not know
        error = AttachmentError("worker_failed", name)
    raise error


def extract_in_worker(
    filename: str,
    data: bytes,
    *,
    password: str | None = None,
    limits: AttachmentLimits = DEFAULT_LIMITS,
    budget: WorkerBudget | None = None,
    on_tick: OnTick | None = None,
) -> ExtractedDocument:
    """core.documents.attachments.extract_text_from_document in a subprocess, within `budget`.

    Raises AttachmentError: the file's own errors, and `timeout`, `memory`, `cancelled` (on_tick
    returned False) or `worker_failed`. The child is killed whenever this returns or raises.
    """
    budget = budget or WorkerBudget.from_env()
    name = attachment_name(filename)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.documents.extract_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(ROOT),
        env=_child_env(),
    )
    feeder = threading.Thread(
        target=_feed, args=(proc, _request(name, data, password, limits, budget)), daemon=True
    )
    feeder.start()
    try:
        return _wait(proc, name, started, budget, on_tick)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
        feeder.join(timeout=1)


def _wait(
    proc: subprocess.Popen[bytes], name: str, started: float, budget: WorkerBudget, on_tick: OnTick | None
) -> ExtractedDocument:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buffer = b""
    done = total = 0
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            elapsed = time.monotonic() - started
            if elapsed > budget.seconds:
                raise AttachmentError("timeout", name, seconds=round(budget.seconds))
            if on_tick is not None and on_tick(Tick(name, elapsed, done, total)) is False:
                raise AttachmentError("cancelled", name)
            if not selector.select(timeout=min(TICK_SECONDS, max(budget.seconds - elapsed, 0.01))):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:  # the child exited without a result: killed by a limit, or crashed
                raise AttachmentError("worker_failed", name)
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                if "progress" in message:
                    done, total = (int(n) for n in message["progress"])
                    continue
                return _outcome(name, message, budget)


class ExtractionCache:
    """Outcomes (document or error) of recent extractions keyed by the bytes' hash; bounded, thread-safe.

    The password is part of the key (hashed, never kept); cancellations are not remembered.
    """

    def __init__(self, max_entries: int = 32, max_chars: int = 4_000_000):
        self.max_entries, self.max_chars = max_entries, max_chars
        self._items: OrderedDict[str, ExtractedDocument | AttachmentError] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(data: bytes, password: str | None, limits: AttachmentLimits) -> str:
        digest = hashlib.sha256(data)
        digest.update(b"\0" + hashlib.sha256((password or "").encode()).digest())
        digest.update(repr(limits).encode())
        return digest.hexdigest()

    def get(self, key: str, filename: str) -> ExtractedDocument | AttachmentError | None:
        """The remembered outcome under this file's name, or None."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
        name = attachment_name(filename)
        if isinstance(item, ExtractedDocument):
            return replace(
                item, filename=name, paragraphs=list(item.paragraphs), warnings=list(item.warnings)
            )
        return AttachmentError(item.code, name, **item.details)

    def put(self, key: str, outcome: ExtractedDocument | AttachmentError) -> None:
        if isinstance(outcome, AttachmentError) and outcome.code == "cancelled":
            return
        with self._lock:
            self._items[key] = outcome
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries or (
                len(self._items) > 1 and self._chars() > self.max_chars
            ):
                self._items.popitem(last=False)

    def _chars(self) -> int:
        return sum(i.char_count for i in self._items.values() if isinstance(i, ExtractedDocument))

    def __len__(self) -> int:
        return len(self._items)


def extract_once(
    cache: ExtractionCache,
    filename: str,
    data: bytes,
    *,
    password: str | None = None,
    limits: AttachmentLimits = DEFAULT_LIMITS,
    budget: WorkerBudget | None = None,
    on_tick: OnTick | None = None,
) -> ExtractedDocument:
    """The attachment's document from `cache`, else from the worker (then remembered); errors raise."""
    key = cache.key(data, password, limits)
    outcome = cache.get(key, filename)
    if outcome is None:
        try:
            outcome = extract_in_worker(
                filename, data, password=password, limits=limits, budget=budget, on_tick=on_tick
            )
        except AttachmentError as exc:
            outcome = exc
        cache.put(key, outcome)
    if isinstance(outcome, AttachmentError):
        raise outcome
    return outcome
