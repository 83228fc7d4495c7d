"""Vehicle diagnosis flow (spec 04): state machine, handlers, urgency, guards, RAG over manuals, booking.

The names below load on first use (PEP 562): importing the package (or one of its modules) does not
import the whole flow, so the shell starts without the heavy libraries a page may never need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.flows.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from core.flows.diagnosis.booking import local_now, validate_booking
    from core.flows.diagnosis.booking_rows import (
        BookingRow,
        InterviewAnswer,
        taken_bookings,
        team_booking_rows,
    )
    from core.flows.diagnosis.catalog import find_vehicle, get_vehicle, load_vehicles, sample_path
    from core.flows.diagnosis.constants import FREE_INPUT_VALUE
    from core.flows.diagnosis.deps import ManualSearch, open_deps, session_archive
    from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, PromptInfo, SessionState
    from core.flows.diagnosis.rag import RAGService
    from core.flows.diagnosis.responses import COVERAGE_NOTES, banner_severity, urgency_info
    from core.flows.diagnosis.service import ChatService, run_turn
    from core.flows.diagnosis.snapshots import snapshot_turns, turn_preview
    from core.flows.diagnosis.sources import ManualSource, manual_sources
    from core.flows.diagnosis.urgency_meaning import UrgencyJudge
    from core.flows.diagnosis.urgency_reasons import joined_reasons

__all__ = [
    "COVERAGE_NOTES",
    "FREE_INPUT_VALUE",
    "BookingRow",
    "ChatRequest",
    "ChatResponse",
    "ChatService",
    "ChatStep",
    "InterviewAnswer",
    "ManualSearch",
    "ManualSource",
    "PromptInfo",
    "RAGService",
    "SessionState",
    "UrgencyJudge",
    "banner_severity",
    "find_vehicle",
    "get_vehicle",
    "joined_reasons",
    "load_vehicles",
    "local_now",
    "manual_sources",
    "open_deps",
    "run_turn",
    "sample_path",
    "session_archive",
    "snapshot_turns",
    "taken_bookings",
    "team_booking_rows",
    "turn_preview",
    "urgency_info",
    "validate_booking",
]

# public name -> (module, name in that module)
_EXPORTS: dict[str, tuple[str, str]] = {
    "BookingRow": ("core.flows.diagnosis.booking_rows", "BookingRow"),
    "COVERAGE_NOTES": ("core.flows.diagnosis.responses", "COVERAGE_NOTES"),
    "ChatRequest": ("core.flows.diagnosis.models", "ChatRequest"),
    "ChatResponse": ("core.flows.diagnosis.models", "ChatResponse"),
    "ChatService": ("core.flows.diagnosis.service", "ChatService"),
    "ChatStep": ("core.flows.diagnosis.models", "ChatStep"),
    "FREE_INPUT_VALUE": ("core.flows.diagnosis.constants", "FREE_INPUT_VALUE"),
    "InterviewAnswer": ("core.flows.diagnosis.booking_rows", "InterviewAnswer"),
    "ManualSearch": ("core.flows.diagnosis.deps", "ManualSearch"),
    "ManualSource": ("core.flows.diagnosis.sources", "ManualSource"),
    "PromptInfo": ("core.flows.diagnosis.models", "PromptInfo"),
    "RAGService": ("core.flows.diagnosis.rag", "RAGService"),
    "SessionState": ("core.flows.diagnosis.models", "SessionState"),
    "UrgencyJudge": ("core.flows.diagnosis.urgency_meaning", "UrgencyJudge"),
    "banner_severity": ("core.flows.diagnosis.responses", "banner_severity"),
    "find_vehicle": ("core.flows.diagnosis.catalog", "find_vehicle"),
    "get_vehicle": ("core.flows.diagnosis.catalog", "get_vehicle"),
    "joined_reasons": ("core.flows.diagnosis.urgency_reasons", "joined_reasons"),
    "load_vehicles": ("core.flows.diagnosis.catalog", "load_vehicles"),
    "local_now": ("core.flows.diagnosis.booking", "local_now"),
    "manual_sources": ("core.flows.diagnosis.sources", "manual_sources"),
    "open_deps": ("core.flows.diagnosis.deps", "open_deps"),
    "run_turn": ("core.flows.diagnosis.service", "run_turn"),
    "sample_path": ("core.flows.diagnosis.catalog", "sample_path"),
    "session_archive": ("core.flows.diagnosis.deps", "session_archive"),
    "snapshot_turns": ("core.flows.diagnosis.snapshots", "snapshot_turns"),
    "taken_bookings": ("core.flows.diagnosis.booking_rows", "taken_bookings"),
    "team_booking_rows": ("core.flows.diagnosis.booking_rows", "team_booking_rows"),
    "turn_preview": ("core.flows.diagnosis.snapshots", "turn_preview"),
    "urgency_info": ("core.flows.diagnosis.responses", "urgency_info"),
    "validate_booking": ("core.flows.diagnosis.booking", "validate_booking"),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
