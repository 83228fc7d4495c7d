"""Rule-based urgency (spec 04 §6): keyword_urgency_check walks the levels of the rules
(core.flows.diagnosis.urgency_rules) from the most to the least urgent; a text whose dangers are all told in a harmless
frame (core.flows.diagnosis.urgency_frames: a hypothetical, a preparation, a repair already done, somebody else's
car, the news) goes no higher than medium. Also how two judgements merge (merge_urgency) and the levels' order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.flows.diagnosis.models import URGENCY_ORDER, VISIT_URGENCY_ORDER
from core.flows.diagnosis.urgency_frames import frame_spans, told_in_a_frame
from core.flows.diagnosis.urgency_rules import (
    LEVEL_ACTIONS,
    LEVEL_RULES,
    VEHICLE_RULES,
    match_starts,
    normalize_symptom,
)


@dataclass
class UrgencyResult:
    """spec 04 §6: level (low | medium | high | critical), can_drive, visit_urgency, reasons."""

    level: str
    can_drive: bool
    visit_urgency: str
    reasons: list[str] = field(default_factory=list)


FRAME_CAP = "medium"
FRAME_NOTE = (
    "（仮定・備え・修理済み・他人の車・ニュースなどの話として書かれているため、この判定では緊急度は中まで）"
)


def capped_at_medium(reasons: list[str], note: str) -> UrgencyResult:
    """The rules' finding capped at medium (FRAME_CAP): its first reason says why with `note`."""
    return UrgencyResult(FRAME_CAP, *LEVEL_ACTIONS[FRAME_CAP], [reasons[0] + note, *reasons[1:]])


def keyword_urgency_check(text: str, vehicle_kind: str = "") -> UrgencyResult:
    """spec 04 §6 (1): match the symptom text against the rules; the most urgent matching level wins. With the kind
    of the owner's car (`vehicle_kind`, one of VEHICLE_KINDS, from the catalog), that kind's rules count too.

    No match gives level "low" (can drive, when_convenient, no reasons).
    """
    normalized = normalize_symptom(text)
    frames = frame_spans(normalized)
    for level, level_rules, can_drive, visit_urgency in LEVEL_RULES:
        rules = (*level_rules, *VEHICLE_RULES.get(vehicle_kind, {}).get(level, ()))
        found = [(rule, match_starts(rule, normalized)) for rule in rules]
        reasons = [rule.reason for rule, starts in found if starts]
        framed = bool(frames) and all(
            told_in_a_frame(normalized, frames, at) for _, starts in found for at in starts
        )
        if reasons and framed and urgency_rank(level) > urgency_rank(FRAME_CAP):
            return capped_at_medium(reasons, FRAME_NOTE)
        if reasons:
            return UrgencyResult(level, can_drive, visit_urgency, reasons)
    return not_urgent()


def not_urgent() -> UrgencyResult:
    """Low: drive on, a visit when convenient, no reason."""
    return UrgencyResult("low", True, "when_convenient", [])


def urgency_rank(level: str | None) -> int:
    """Position of a level in none < low < medium < high < critical (unknown -> 0)."""
    return URGENCY_ORDER.index(level) if level in URGENCY_ORDER else 0


def visit_rank(visit_urgency: str | None) -> int:
    return VISIT_URGENCY_ORDER.index(visit_urgency) if visit_urgency in VISIT_URGENCY_ORDER else -1


def merge_urgency(keyword: UrgencyResult, llm: UrgencyResult | None) -> UrgencyResult:
    """spec 04 §6 (3): the higher level wins and reasons are merged.

    Safety first where the two disagree: can_drive only if both allow it, and the more urgent
    visit_urgency is kept.
    """
    if llm is None:
        return UrgencyResult(keyword.level, keyword.can_drive, keyword.visit_urgency, list(keyword.reasons))
    level = keyword.level if urgency_rank(keyword.level) >= urgency_rank(llm.level) else llm.level
    visit = (
        keyword.visit_urgency
        if visit_rank(keyword.visit_urgency) >= visit_rank(llm.visit_urgency)
        else llm.visit_urgency
    )
    reasons = list(dict.fromkeys([*keyword.reasons, *llm.reasons]))
    return UrgencyResult(level, keyword.can_drive and llm.can_drive, visit, reasons)
