"""The persona's mood from recent episodes, and the response policy injected into the next turns."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, select

from core.flows.memory.constants import (
    AFFECT_LABELS,
    AFFECT_LABELS_JA,
    MOOD_EPISODES,
    MOOD_NEUTRAL_BELOW,
    MOOD_TAU_MAX,
    MOOD_TAU_MIN,
    REFUSAL_ANGER,
)
from core.store.memory.tables import KIND_EPISODE, STATE_ACTIVE, mine, payload_episode, units


def mood_tau(salience: float) -> float:
    """τ = 120 s + (6 h − 120 s)·salience² (important events fade slowly)."""
    return MOOD_TAU_MIN + (MOOD_TAU_MAX - MOOD_TAU_MIN) * salience**2


def impact(intensity: float, salience: float, confidence: float, dt_seconds: float) -> float:
    """impact = intensity × salience × confidence × exp(−Δt/τ)."""
    return intensity * salience * confidence * math.exp(-max(0.0, dt_seconds) / mood_tau(salience))


@dataclass
class Mood:
    levels: dict[str, float]
    label: str
    response_policy: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """The mood and policy as injected into the system prompt (Japanese)."""
        levels = "、".join(f"{AFFECT_LABELS_JA[k]} {v:.2f}" for k, v in self.levels.items() if k != "neutral")
        p = self.response_policy
        refusal = "断ってもよい" if p.get("refusal_allowed") else "断らず協力する"
        return (
            f"現在の気分: {AFFECT_LABELS_JA.get(self.label, self.label)}（{levels}）\n"
            f"応答方針: 協力度 {p.get('cooperation', 0.8):.2f}、断りやすさ {p.get('refusal_bias', 0.1):.2f}、{refusal}"
        )


def compute_mood(episodes: list[dict[str, Any]], now: int, last_policy: dict[str, Any] | None = None) -> Mood:
    """Sum impacts per label over the episodes, squash by 1 − e^(−x); the strongest label below 0.15 is
    neutral. The policy starts from the last trailer's persona_response_policy; refusal_allowed when that
    policy allowed it (the model's choice reaches the next turn) or anger ≥ 0.75. Each episode:
    label, intensity, salience, confidence, occurred_at."""
    sums = dict.fromkeys(AFFECT_LABELS, 0.0)
    for e in episodes:
        label = e.get("label") or "neutral"
        if label in sums:
            sums[label] += impact(
                e.get("intensity") or 0.0,
                e.get("salience") or 0.0,
                e.get("confidence") or 0.0,
                now - e["occurred_at"],
            )
    levels = {k: round(1 - math.exp(-v), 4) for k, v in sums.items()}
    strongest = max((k for k in AFFECT_LABELS if k != "neutral"), key=lambda k: levels[k])
    label = strongest if levels[strongest] >= MOOD_NEUTRAL_BELOW else "neutral"
    policy = {"cooperation": 0.8, "refusal_bias": 0.1, **(last_policy or {})}
    anger = levels["anger"]
    policy["refusal_allowed"] = bool(policy.get("refusal_allowed")) or anger >= REFUSAL_ANGER
    policy["cooperation"] = round(min(policy["cooperation"], 1.0 - 0.5 * anger), 3)
    policy["refusal_bias"] = round(max(policy["refusal_bias"], anger), 3)
    return Mood(levels, label, policy)


def load_mood(conn: Connection, owner_id: str, now: int, limit: int = MOOD_EPISODES) -> Mood:
    """compute_mood over `owner_id`'s last 500 active episodes, with the newest trailer policy."""
    rows = conn.execute(
        select(
            units.c.persona_affect_label,
            units.c.persona_affect_intensity,
            units.c.salience,
            units.c.confidence,
            units.c.occurred_at,
            payload_episode.c.reflection_json,
        )
        .join(payload_episode, payload_episode.c.unit_id == units.c.id)
        .where(
            (units.c.kind == KIND_EPISODE)
            & (units.c.state == STATE_ACTIVE)
            & (units.c.occurred_at <= now)
            & mine(owner_id)
        )
        .order_by(units.c.occurred_at.desc(), units.c.id.desc())
        .limit(limit)
    ).all()
    episodes = [
        {"label": r[0], "intensity": r[1], "salience": r[2], "confidence": r[3], "occurred_at": r[4]}
        for r in rows
    ]
    policy = None
    for r in rows:
        policy = json.loads(r[5] or "{}").get("persona_response_policy")
        if policy:
            break
    return compute_mood(episodes, now, policy)
