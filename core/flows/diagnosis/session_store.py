"""In-memory session store with a TTL (spec 04 §1 services/session_store.py).

Sessions carry their owner: `get` hands a session only to the person who created it; for anyone
else its id is unknown.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

from core.flows.diagnosis.constants import SESSION_TTL_SECONDS
from core.flows.diagnosis.models import SessionState


class SessionStore:
    """Thread-safe dict of sessions; a session untouched for `ttl_seconds` is gone (spec 04 §1)."""

    def __init__(self, ttl_seconds: float = SESSION_TTL_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._items: dict[str, tuple[float, SessionState]] = {}

    def _purge(self, now: float) -> None:
        expired = [sid for sid, (touched, _) in self._items.items() if now - touched > self.ttl_seconds]
        for sid in expired:
            del self._items[sid]

    def create(self, owner_id: str) -> SessionState:
        """A new session of `owner_id` at VEHICLE_ID with a fresh id."""
        session = SessionState(session_id=uuid.uuid4().hex, owner_id=owner_id)
        with self._lock:
            now = self._clock()
            self._purge(now)
            self._items[session.session_id] = (now, session)
        return session

    def get(self, session_id: str | None, owner_id: str) -> SessionState | None:
        """The live session of `owner_id`, or None when unknown, expired or another person's; a hit refreshes
        its TTL."""
        if not session_id:
            return None
        with self._lock:
            now = self._clock()
            self._purge(now)
            hit = self._items.get(session_id)
            if hit is None or hit[1].owner_id != owner_id:
                return None
            self._items[session_id] = (now, hit[1])
            return hit[1]

    def update(self, session: SessionState) -> None:
        """Store (or re-store) the session and refresh its TTL."""
        with self._lock:
            self._items[session.session_id] = (self._clock(), session)

    def delete(self, session_id: str, owner_id: str) -> bool:
        """Forget a session of `owner_id`; True when it existed (another person's session is left alone)."""
        with self._lock:
            hit = self._items.get(session_id)
            if hit is None or hit[1].owner_id != owner_id:
                return False
            del self._items[session_id]
            return True

    def __len__(self) -> int:
        with self._lock:
            self._purge(self._clock())
            return len(self._items)
