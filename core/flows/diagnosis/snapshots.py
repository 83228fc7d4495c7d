"""Rewind (spec 04 §4 A, F1): one snapshot per diagnostic turn, at most max_diagnostic_turns kept."""

from __future__ import annotations

from typing import Any

from core.flows.diagnosis.models import ChatStep, SessionState
from core.flows.diagnosis.step_shared import SYMPTOM_QUESTION


def turn_start_state(session: SessionState) -> dict[str, Any]:
    """The state while this turn's question was on screen; turn 1's question is the symptom question (FREE_TEXT)."""
    state = session.dump()
    if session.diagnostic_turn == 0:
        first_user = next(
            (i for i, m in enumerate(session.conversation_history) if m["role"] == "user"), None
        )
        visited = state["visited_steps"]
        state.update(
            current_step=str(ChatStep.FREE_TEXT),
            visited_steps=visited[: visited.index(ChatStep.FREE_TEXT) + 1]
            if ChatStep.FREE_TEXT in visited
            else visited,
            symptom_text="",
            spec_hint=False,
            spec_check_shown=False,
            last_rag_sources=[],
            conversation_history=state["conversation_history"][:first_user],
            last_prompt={"type": "text", "message": SYMPTOM_QUESTION, "choices": []},
        )
    return state


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


def turn_preview(session: SessionState, turn: int, limit: int = 80) -> tuple[str, str]:
    """(question, answer) of a snapshot turn: what was on screen then, and what was answered to it.

    The page shows these under the rewind slider so staff know which question they return to.
    Both are shortened to `limit` characters; unknown turns give empty strings.
    """
    snapshot = next((s for s in session.state_snapshots if s["turn"] == turn), None)
    if snapshot is None:
        return "", ""
    state = snapshot["state"]
    question = str((state.get("last_prompt") or {}).get("message", ""))
    answered = len(state.get("collected_symptoms") or [])
    answer = session.collected_symptoms[answered] if answered < len(session.collected_symptoms) else ""
    return _shorten(question, limit), _shorten(answer, limit)


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
