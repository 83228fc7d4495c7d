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


@dataclass(frozen=True, slots=True)
class InterviewSummary:
    """One of the person's stored interviews as the interviews tab lists it."""

    id: str
    title: str
    created_at: int
    updated_at: int
    turns: int  # turn rows stored (a retried input counts again)
    last_phase: str | None  # the phase of the last successful turn (None: no answer yet)
    archived_at: int | None
    archived_by: str | None


def interview_summaries(rows: Iterable[Mapping[str, Any]]) -> list[InterviewSummary]:
    """KnowledgeRepository.list_interviews rows as InterviewSummary."""
    return [
        InterviewSummary(
            r["id"],
            r["title"] or "",
            r["created_at"],
            r["updated_at"],
            int(r["turns"] or 0),
            r["last_phase"],
            r["archived_at"],
            r["archived_by"],
        )
        for r in rows
    ]


@dataclass(frozen=True, slots=True)
class InterviewProgress:
    """How far one interview got: user turns, the turn that first reached draft_knowledge and finalize, and
    where it stands now."""

    interview_id: str
    turns: int
    to_draft: int | None
    to_finalize: int | None
    last_phase: str | None
    last_mode: str | None


@dataclass(frozen=True, slots=True)
class PersonCounts:
    """One person's interviews on the team view: how many they ran, how many reached a draft."""

    interviews: int
    drafts: int


def interview_progress(turns: Iterable[Mapping[str, Any]]) -> list[InterviewProgress]:
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
    return [InterviewProgress(**item) for item in by_interview.values()]


def stop_phase_counts(progress: Iterable[InterviewProgress]) -> dict[str, int]:
    """How many interviews stopped in each phase (all four phases present, in order)."""
    counts = Counter(p.last_phase or STOPPED_NOWHERE for p in progress)
    out = {phase: counts.get(phase, 0) for phase in PHASES}
    if counts.get(STOPPED_NOWHERE):
        out[STOPPED_NOWHERE] = counts[STOPPED_NOWHERE]
    return out


ARCHIVED_SCAN = 100_000  # archived interviews read to leave them out of the analysis


@dataclass
class InterviewOverview:
    """The interviews tab: stored interviews (newest first), per-interview progress, where they stopped."""

    interviews: list[InterviewSummary]
    progress: list[InterviewProgress]
    stop_counts: dict[str, int]


def interview_overview(repo: KnowledgeRepository, limit: int = 50) -> InterviewOverview:
    """Read the interviews and their turns' phases once (spec 01 §7.2 analysis); KnowledgeStoreError on failure.

    Archived interviews are left out, as from every list; the admins' team counts keep them."""
    with store_errors():
        interviews = interview_summaries(repo.list_interviews(limit))
        archived = {i["id"] for i in repo.list_interviews(ARCHIVED_SCAN, archived=True)}
        progress = [p for p in interview_progress(repo.turn_phases()) if p.interview_id not in archived]
    return InterviewOverview(interviews, progress, stop_phase_counts(progress))


@dataclass
class TeamOverview:
    """Interview drop-off across the team (admins): per-interview progress, where they stopped, and per
    person (owner id) how many interviews they ran and how many reached a draft."""

    progress: list[InterviewProgress]
    stop_counts: dict[str, int]
    per_person: dict[str, PersonCounts]


def team_overview(repo: KnowledgeRepository, person: Person) -> TeamOverview | None:
    """Every person's interviews as counts (spec 01 §7.2 analysis across the team); None unless `person` is
    an admin (`[katachi] admins`). KnowledgeStoreError on failure."""
    if not person.is_admin:
        return None
    with store_errors():
        rows = repo.team_turn_phases()
    owners = {r["interview_id"]: r["owner_id"] for r in rows}
    progress = interview_progress(rows)
    per_person: dict[str, PersonCounts] = {}
    for p in progress:
        counts = per_person.get(owners[p.interview_id], PersonCounts(0, 0))
        per_person[owners[p.interview_id]] = PersonCounts(
            counts.interviews + 1, counts.drafts + (p.to_draft is not None)
        )
    return TeamOverview(progress, stop_phase_counts(progress), per_person)
