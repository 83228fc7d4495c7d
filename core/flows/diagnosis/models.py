"""Data model of the diagnosis flow (spec 04 §8): steps, session state, requests and responses."""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any, TypeAlias

from core.flows.chat_item import ChatItem
from core.flows.diagnosis.constants import MAX_DIAGNOSTIC_TURNS
from core.people import LOCAL_PERSON_ID


class ChatStep(StrEnum):
    """The state-machine steps (spec 04 §2)."""

    VEHICLE_ID = "vehicle_id"
    PHOTO_CONFIRM = "photo_confirm"
    FREE_TEXT = "free_text"
    SPEC_CHECK = "spec_check"
    DIAGNOSING = "diagnosing"
    URGENCY_CHECK = "urgency_check"
    RESERVATION = "reservation"
    BOOKING_INFO = "booking_info"
    BOOKING_CONFIRM = "booking_confirm"
    DONE = "done"


# Fields a dump leaves out: the rewind snapshots themselves, and where the store is (a rewind keeps it).
NOT_DUMPED = ("state_snapshots", "store_version")
URGENCY_ORDER = ("none", "low", "medium", "high", "critical")
VISIT_URGENCY_ORDER = ("when_convenient", "this_week", "today", "immediate")


@dataclass
class SessionState:
    """Everything an interview accumulates (spec 04 §8 SessionState), plus what the page needs to redraw."""

    session_id: str
    current_step: ChatStep = ChatStep.VEHICLE_ID
    vehicle_id: str = ""
    make: str = ""
    model: str = ""
    year: int = 0
    symptom_text: str = ""
    collected_symptoms: list[str] = field(default_factory=list)
    # core.flows.chat_item ChatItems; the page draws this very list (st.session_state.chat["diagnosis"])
    conversation_history: list[ChatItem] = field(default_factory=list)
    diagnostic_turn: int = 0
    max_diagnostic_turns: int = MAX_DIAGNOSTIC_TURNS
    last_confidence: float = 0.0
    candidates_shown: bool = False
    solutions_tried: int = 0
    conversation_summary: str = ""
    rewritten_query: str = ""
    urgency_level: str = "none"
    can_drive: bool = True
    manual_coverage: str = ""
    visit_urgency: str = ""
    state_snapshots: list[dict[str, Any]] = field(default_factory=list)
    spec_hint: bool = False
    spec_check_shown: bool = False
    booking_type: str = ""
    booking_data: dict[str, str] = field(default_factory=dict)
    # Not in the spec's table: what the page redraws and the guards compare against.
    urgency_reasons: list[str] = field(default_factory=list)
    last_prompt: dict[str, Any] = field(default_factory=dict)
    last_rag_sources: list[dict[str, Any]] = field(default_factory=list)
    asked_questions: list[str] = field(default_factory=list)
    booking_id: int | None = None
    # Every step the session has been in, in order (the page's step indicator marks the others skipped).
    visited_steps: list[str] = field(default_factory=list)
    # Whose session this is: the session store hands it only to this person.
    owner_id: str = LOCAL_PERSON_ID
    # The stored version this copy was loaded at or last saved as (0: never stored); not part of a dump.
    store_version: int = 0

    def __post_init__(self) -> None:
        if not self.visited_steps:
            self.visited_steps.append(str(self.current_step))

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "current_step":
            visited = self.__dict__.get("visited_steps")
            if visited is not None and str(value) not in visited:
                visited.append(str(value))

    def dump(self) -> dict[str, Any]:
        """A deep copy of every field except `state_snapshots` and `store_version` (what a snapshot stores,
        spec 04 §4 D.2)."""
        data = {
            f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self) if f.name not in NOT_DUMPED
        }
        data["current_step"] = str(self.current_step)
        return data

    def restore(self, data: dict[str, Any]) -> None:
        """Set every field from a dump, leaving `state_snapshots` and `store_version` alone (spec 04 §4 A.2)."""
        for f in fields(self):
            if f.name == "conversation_history" and f.name in data:
                # in place: the page holds this list object as chat["diagnosis"]
                self.conversation_history[:] = copy.deepcopy(data[f.name])
            elif f.name not in NOT_DUMPED and f.name in data:
                setattr(self, f.name, copy.deepcopy(data[f.name]))
        # set last: setting current_step appends to visited_steps, which must stay as dumped
        self.__dict__["current_step"] = ChatStep(self.current_step)

    @property
    def all_symptom_text(self) -> str:
        """The first symptom and every later answer, one per line."""
        parts = [self.symptom_text, *self.collected_symptoms]
        seen: list[str] = []
        for part in parts:
            if part and part not in seen:
                seen.append(part)
        return "\n".join(seen)


@dataclass
class ChatRequest:
    """One user turn (spec 04 §8): typed text, or a button (`action`, `action_value`), or a rewind."""

    session_id: str | None = None
    message: str = ""
    action: str | None = None
    action_value: str | None = None
    rewind_to_turn: int | None = None


@dataclass
class PromptInfo:
    """What the page shows next (spec 04 §8). type: text | single_choice | reservation_choice | booking_form | booking_confirm."""

    type: str = "text"
    message: str = ""
    choices: list[dict[str, str]] = field(default_factory=list)
    booking_type: str | None = None
    booking_fields: list[dict[str, Any]] = field(default_factory=list)
    booking_summary: dict[str, str] = field(default_factory=dict)
    action: str | None = None  # the ChatRequest.action the choice buttons send

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PromptInfo:
        names = {f.name for f in fields(cls)}
        return cls(**{k: copy.deepcopy(v) for k, v in data.items() if k in names})


@dataclass
class UrgencyInfo:
    """Urgency shown as a banner (spec 04 §7). level: low | medium | high | critical."""

    level: str
    can_drive: bool
    visit_urgency: str
    reasons: list[str] = field(default_factory=list)
    message: str = ""


@dataclass
class ChatResponse:
    """The reply to one request (spec 04 §8)."""

    session_id: str
    current_step: str
    prompt: PromptInfo
    urgency: UrgencyInfo | None = None
    rag_sources: list[dict[str, Any]] = field(default_factory=list)
    manual_coverage: str | None = None
    diagnostic_turn: int = 0
    rewound_to_turn: int | None = None


@dataclass(frozen=True)
class Next:
    """A handler's "run this step now, in this same request" (spec 04 §2 arrows taken without a new input).

    `process_step` sets `session.current_step = step` and runs that step's handler with `request`
    (or, when None, the request being processed).
    """

    step: ChatStep
    request: ChatRequest | None = None


# What a step handler returns: the reply that ends the request, or the step to run next.
StepOutcome: TypeAlias = ChatResponse | Next
