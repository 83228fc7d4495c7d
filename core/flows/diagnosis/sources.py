"""The manual excerpts the session's last answer drew on, typed for the page (参照した取扱説明書).

The session keeps them as the search returned them (`SessionState.last_rag_sources`, stored with the session
as JSON); `manual_sources` reads them for the page.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.flows.diagnosis.models import SessionState


@dataclass(frozen=True, slots=True)
class ManualSource:
    """One manual chunk found for the session (spec 04 §10 metadata + score)."""

    chunk_id: str
    vehicle_id: str
    page: int
    section: str
    content_type: str  # procedure | specification | general | warning | danger
    has_warning: bool
    content: str
    score: float  # relevance in 0..1


def manual_sources(session: SessionState) -> list[ManualSource]:
    """The session's last search hits, best first."""
    return [
        ManualSource(
            chunk_id=str(s.get("chunk_id", "")),
            vehicle_id=str(s.get("vehicle_id", "")),
            page=int(s.get("page") or 0),
            section=str(s.get("section", "")),
            content_type=str(s.get("content_type", "")),
            has_warning=bool(s.get("has_warning")),
            content=str(s.get("content", "")),
            score=float(s.get("score") or 0.0),
        )
        for s in session.last_rag_sources
    ]
