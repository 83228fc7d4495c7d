"""Rewind (spec 04 §4 A, F1): one snapshot per diagnostic turn, at most max_diagnostic_turns kept."""

from __future__ import annotations

from typing import Any

from core.flows.diagnosis.models import SessionState


def save_snapshot(session: SessionState, turn: int, state: dict[str, Any]) -> None:
    """spec 04 §4 D.2: store {turn, state}; a turn saved again replaces its old snapshot; oldest dropped past the cap.

    `state` is the dump taken while this turn's question was on screen, so restoring it shows the
    question again and the staff member can answer differently.
    """
    session.state_snapshots = [s for s in session.state_snapshots if s["turn"] != turn]
    session.state_snapshots.append({"turn": turn, "state": state})
    overflow = len(session.state_snapshots) - session.max_diagnostic_turns
    if overflow > 0:
        del session.state_snapshots[:overflow]


def snapshot_turns(session: SessionState) -> list[int]:
    """The turns one can rewind to, in order (the page's select_slider options)."""
    return [s["turn"] for s in session.state_snapshots]


def rewind(session: SessionState, turn: int) -> bool:
    """spec 04 §4 A: restore the snapshot of `turn` (every field but the snapshots) and drop later snapshots.

    Returns False (nothing changed) when there is no snapshot of that turn.
    """
    snapshot = next((s for s in session.state_snapshots if s["turn"] == turn), None)
    if snapshot is None:
        return False
    session.restore(snapshot["state"])
    session.state_snapshots = [s for s in session.state_snapshots if s["turn"] <= turn]
    return True
