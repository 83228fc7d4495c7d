"""Open loops as a short-lived memo: expiry from due_at, capped (spec 03: OpenLoops)."""

from __future__ import annotations

from core.flows.memory.constants import LOOP_DEFAULT_TTL, LOOP_GRACE_AFTER_DUE, LOOP_MAX_TTL


def compute_loop_expires_at(due_at: int | None, now: int) -> int:
    """Spec 03 with a grace period: due_at in the future -> expires_at = due_at + 3 days, else now + 7 days;
    never beyond now + 30 days."""
    expires = due_at + LOOP_GRACE_AFTER_DUE if due_at is not None and due_at > now else now + LOOP_DEFAULT_TTL
    return min(expires, now + LOOP_MAX_TTL)


def cap_due_at(due_at: int | None, now: int) -> int | None:
    """Spec 03: due_at is rounded down to at most 30 days from now (None stays None)."""
    if due_at is None:
        return None
    return min(due_at, now + LOOP_MAX_TTL)


def loop_times(due_at: int | None, now: int) -> tuple[int | None, int]:
    """(due_at capped, expires_at) of a loop extracted at `now` (spec 03: OpenLoops)."""
    due = cap_due_at(due_at, now)
    return due, compute_loop_expires_at(due, now)
