"""Vehicle diagnosis flow (spec 04): state machine, handlers, urgency, guards, RAG over manuals, booking."""

from core.flows.diagnosis.booking import list_bookings, local_now, team_bookings, validate_booking
from core.flows.diagnosis.catalog import find_vehicle, get_vehicle, load_vehicles, sample_path
from core.flows.diagnosis.constants import FREE_INPUT_VALUE
from core.flows.diagnosis.deps import open_deps, session_archive
from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, PromptInfo, SessionState
from core.flows.diagnosis.rag import RAGService
from core.flows.diagnosis.responses import COVERAGE_NOTES, banner_severity, urgency_info
from core.flows.diagnosis.service import ChatService, run_turn
from core.flows.diagnosis.snapshots import snapshot_turns, turn_preview
from core.flows.diagnosis.urgency_meaning import UrgencyJudge

__all__ = [
    "COVERAGE_NOTES",
    "FREE_INPUT_VALUE",
    "ChatRequest",
    "ChatResponse",
    "ChatService",
    "ChatStep",
    "PromptInfo",
    "RAGService",
    "SessionState",
    "UrgencyJudge",
    "banner_severity",
    "find_vehicle",
    "get_vehicle",
    "list_bookings",
    "load_vehicles",
    "local_now",
    "open_deps",
    "run_turn",
    "sample_path",
    "session_archive",
    "snapshot_turns",
    "team_bookings",
    "turn_preview",
    "urgency_info",
    "validate_booking",
]
