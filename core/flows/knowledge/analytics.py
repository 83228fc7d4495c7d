"""Interview analytics (spec 01 §7.2): turns needed to reach draft_knowledge / finalize, and where interviews stopped.

The pure functions take turn rows; `interview_overview` reads a person's own from the repository, and
`team_overview` every person's for an admin (team analytics; counts only, no titles or text).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.flows.knowledge.interview import PHASES
from core.flows.knowledge.stores import store_errors
from core.people import Person
from core.store.knowledge.interviews import KnowledgeRepository

STOPPED_NOWHERE = "未応答"  # an interview whose turns all failed (no phase yet)


def interview_progress(turns: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per interview: user turns, the turn that first reached draft_knowledge and finalize, the last phase.

    `turns` are rows with interview_id, turn_no, ok, phase, mode (KnowledgeRepository.turn_phases), in order.
    Turn numbers count user inputs, so a retried input is not counted twice.
    """
    by_interview: dict[str, dict[str, Any]] = {}
    for row in turns:
        item = by_interview.setdefault(
            row["interview_id"],
            {
                "interview_id": row["interview_id"],
                "turns": 0,
                "to_draft": None,
                "to_finalize": None,
                "last_phase": None,
                "last_mode": None,
            },
        )
        item["turns"] = max(item["turns"], int(row["turn_no"]))
        if not row["ok"]:
            continue
        if item["to_draft"] is None and row["phase"] in ("draft_knowledge", "review_knowledge"):
            item["to_draft"] = int(row["turn_no"])
        if item["to_finalize"] is None and row["mode"] == "finalize":
            item["to_finalize"] = int(row["turn_no"])
        item["last_phase"], item["last_mode"] = row["phase"], row["mode"]
    return list(by_interview.values())


def stop_phase_counts(progress: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many interviews stopped in each phase (all four phases present, in order)."""
    counts = Counter(p["last_phase"] or STOPPED_NOWHERE for p in progress)
    out = {phase: counts.get(phase, 0) for phase in PHASES}
    if counts.get(STOPPED_NOWHERE):
        out[STOPPED_NOWHERE] = counts[STOPPED_NOWHERE]
    return out


ARCHIVED_SCAN = 100_000  # archived interviews read to leave them out of the analysis


@dataclass
class InterviewOverview:
    """The interviews tab: stored interviews (newest first), per-interview progress, where they stopped."""

    interviews: list[dict[str, Any]]
    progress: list[dict[str, Any]]
    stop_counts: dict[str, int]


def interview_overview(repo: KnowledgeRepository, limit: int = 50) -> InterviewOverview:
    """Read the interviews and their turns' phases once (spec 01 §7.2 analysis); KnowledgeStoreError on failure.

    Archived interviews are left out, as from every list; the admins' team counts keep them."""
    with store_errors():
        interviews = repo.list_interviews(limit)
        archived = {i["id"] for i in repo.list_interviews(ARCHIVED_SCAN, archived=True)}
        progress = [p for p in interview_progress(repo.turn_phases()) if p["interview_id"] not in archived]
    return InterviewOverview(interviews, progress, stop_phase_counts(progress))


@dataclass
class TeamOverview:
    """Interview drop-off across the team (admins): per-interview progress, where they stopped, and per
    person (owner id) how many interviews they ran and how many reached a draft."""

    progress: list[dict[str, Any]]
    stop_counts: dict[str, int]
    per_person: dict[str, dict[str, int]]


def team_overview(repo: KnowledgeRepository, person: Person) -> TeamOverview | None:
    """Every person's interviews as counts (spec 01 §7.2 analysis across the team); None unless `person` is
    an admin (`[katachi] admins`). KnowledgeStoreError on failure."""
    if not person.is_admin:
        return None
    with store_errors():
        rows = repo.team_turn_phases()
    owners = {r["interview_id"]: r["owner_id"] for r in rows}
    progress = interview_progress(rows)
    per_person: dict[str, dict[str, int]] = {}
    for p in progress:
        counts = per_person.setdefault(owners[p["interview_id"]], {"interviews": 0, "drafts": 0})
        counts["interviews"] += 1
        counts["drafts"] += p["to_draft"] is not None
    return TeamOverview(progress, stop_phase_counts(progress), per_person)
