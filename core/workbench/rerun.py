"""Re-run and compare one recorded call: the exact request again, on several models.

A recorded call is turned into a `RerunRequest` (the ORIGINAL stack of its first attempt, never a repair
stack, with its schema and wire settings); `edit` replaces the system prompt and the last user message (the
playground); `rerun` sends it to each client in parallel through the real guard and returns one
`RerunOutcome` per client. Events go to a per-client CaptureSink only: nothing is logged or stored, and
the saved conversation never changes. Pure data, no Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from core.contracts.schemas import load_schema, schema_names
from core.debuglog.events import CaptureSink, DebugEvent
from core.flows.knowledge import TURN_JSON_NAME, entry_schema, turn_schema, wire_turn_schema
from core.guard.json_guard import GuardResult, guarded_json, guarded_text
from core.llm.base import LLMClient, Message
from core.llm.replay import ReplayExhausted
from core.settings import Settings, default_model, provider_label, provider_names
from core.workbench.cost import call_cost
from core.workbench.prices import Cost

CALL_KINDS = ("call", "error")
REPAIR_TAIL = 2  # spec 00: a repair stack is the original stack + [assistant = raw, user = repair prompt]
MAX_PARALLEL = 4


@dataclass(frozen=True)
class Target:
    """A model to re-run on: `current` is the session's own client; otherwise a configured provider."""

    provider: str
    model: str
    current: bool = False

    @property
    def label(self) -> str:
        name = f"{provider_label(self.provider)} / {self.model}"
        return f"現在のクライアント（{name}）" if self.current else name


@dataclass
class RerunRequest:
    """What a recorded call sent: the stack, schema and wire settings, and its flow / step tags."""

    messages: list[Message]
    schema_name: str | None = None
    wire_schema: dict[str, Any] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    tags: dict[str, str] = field(default_factory=dict)
    call_id: str = ""

    @property
    def system(self) -> str:
        """The system prompt ("" when the stack has none)."""
        return next((m["content"] for m in self.messages if m.get("role") == "system"), "")

    @property
    def last_user(self) -> str:
        """The last user message ("" when the stack has none)."""
        return next((m["content"] for m in reversed(self.messages) if m.get("role") == "user"), "")


@dataclass
class RerunOutcome:
    """One client's answer to a re-run: raw output, validity, repairs, latency, tokens, error."""

    provider: str
    model: str
    raw: str
    valid: bool
    repairs: int
    latency_ms: float
    input_tokens: int
    output_tokens: int
    error_type: str | None = None
    error: str = ""  # Japanese message for a staff member ("" when valid)
    cost: Cost | None = None  # under the price file (core.workbench.prices); unpriced models say so
    events: list[DebugEvent] = field(default_factory=list)  # what the guard emitted (never logged)


def first_attempt(event: DebugEvent, events: Sequence[DebugEvent] = ()) -> DebugEvent:
    """The first attempt of `event`'s call among `events` (the event itself when it is not found)."""
    same = [e for e in events if e.call_id and e.call_id == event.call_id and e.kind in CALL_KINDS]
    return min(same, key=lambda e: e.attempt) if same else event


def rerun_request(event: DebugEvent, events: Sequence[DebugEvent] = ()) -> RerunRequest:
    """The request of `event`'s call as first sent: the first attempt's stack and settings.

    With `events` (the log) the call's attempt 1 is looked up; a lone repair attempt loses its repair
    tail (spec 00: original stack + assistant raw + user repair prompt), so the original stack is re-sent.
    """
    first = first_attempt(event, events)
    messages = [dict(m) for m in first.messages]
    if first.attempt > 1 and len(messages) > REPAIR_TAIL:
        messages = messages[:-REPAIR_TAIL]
    return RerunRequest(
        messages=messages,
        schema_name=first.schema_name,
        wire_schema=first.wire_schema
        if first.wire_schema is not None
        else known_wire_schema(first.schema_name),
        temperature=first.temperature,
        max_tokens=first.max_tokens,
        tags={k: v for k, v in (("flow", first.flow), ("step", first.step)) if v},
        call_id=first.call_id,
    )


def edit(request: RerunRequest, *, system: str | None = None, last_user: str | None = None) -> RerunRequest:
    """A copy with the system prompt and / or the last user message replaced (the playground).

    A stack without a system message gets one in front; the request itself is left unchanged.
    """
    messages = [dict(m) for m in request.messages]
    if system is not None:
        index = next((i for i, m in enumerate(messages) if m.get("role") == "system"), None)
        if index is None:
            messages.insert(0, {"role": "system", "content": system})
        else:
            messages[index]["content"] = system
    if last_user is not None:
        index = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
        if index is None:
            messages.append({"role": "user", "content": last_user})
        else:
            messages[index]["content"] = last_user
    return replace(request, messages=messages, tags=dict(request.tags))


def known_wire_schema(name: str | None) -> dict[str, Any] | None:
    """The schema a flow sends under this json_schema name (for events recorded without their wire schema):
    the knowledge turn with its entry schema inlined, else the bundled schema of that name."""
    if name == TURN_JSON_NAME:
        return wire_turn_schema(turn_schema(), entry_schema())
    return load_schema(name) if name and name in schema_names() else None


def validation_schema(request: RerunRequest) -> dict[str, Any]:
    """The schema replies are checked against: the flow's schema of that name, else the recorded wire schema.
    Flow-specific validators beyond the schema (e.g. the knowledge entry checks) are not run."""
    if request.schema_name == TURN_JSON_NAME:
        return turn_schema()
    if request.schema_name and request.schema_name in schema_names():
        return load_schema(request.schema_name)
    return request.wire_schema or {}


def _guarded(request: RerunRequest, client: LLMClient, sink: CaptureSink) -> GuardResult[Any]:
    if request.schema_name:
        return guarded_json(
            client,
            list(request.messages),
            validation_schema(request),
            name=request.schema_name,
            sink=sink,
            tags=dict(request.tags),
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            wire_schema=request.wire_schema,
        )
    return guarded_text(
        client,
        list(request.messages),
        sink=sink,
        tags=dict(request.tags),
        max_tokens=request.max_tokens,
        temperature=request.temperature,
    )


def rerun_one(request: RerunRequest, client: LLMClient) -> RerunOutcome:
    """One client through the real guard (guarded_json with the recorded schema, else guarded_text)."""
    sink = CaptureSink()
    try:
        result = _guarded(request, client, sink)
    except ReplayExhausted as exc:  # a Replay client with too few outputs: shown, not raised into the page
        return RerunOutcome(client.provider, client.model, "", False, 0, 0.0, 0, 0, "replay", str(exc))
    tokens_in = sum(a.usage.get("input_tokens", 0) for a in result.attempts)
    tokens_out = sum(a.usage.get("output_tokens", 0) for a in result.attempts)
    return RerunOutcome(
        provider=client.provider,
        model=client.model,
        raw=result.raw,
        valid=result.ok,
        repairs=max(len(result.attempts) - 1, 0),
        latency_ms=round(sum(a.latency_ms for a in result.attempts), 1),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        error_type=result.error_type,
        error=result.message,
        cost=call_cost(client.provider, client.model, tokens_in, tokens_out),
        events=sink.events,
    )


def rerun(request: RerunRequest, clients: Sequence[LLMClient]) -> list[RerunOutcome]:
    """Send `request` to every client at once (threads); outcomes in the order of `clients`."""
    if not clients:
        return []
    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(clients))) as pool:
        return list(pool.map(lambda c: rerun_one(request, c), clients))


def configured_providers(settings: Settings) -> list[str]:
    """Providers this server can call: each registered provider whose descriptor says it is ready (the demo
    model always; OpenAI with a key or a base URL; Anthropic with a key; the cloud providers with theirs)."""
    return [p for p in provider_names() if replace(settings, provider=p).has_key]


def parse_typed_models(text: str, settings: Settings) -> list[Target]:
    """Model names a person typed (comma or newline separated), `provider:model` or a bare model for the
    current provider; names of providers that are not configured are dropped."""
    usable = configured_providers(settings)
    out: list[Target] = []
    for piece in text.replace("\n", ",").split(","):
        name = piece.strip()
        if not name:
            continue
        provider, _, model = (
            name.partition(":") if name.split(":", 1)[0] in provider_names() else ("", "", name)
        )
        target = Target(provider or settings.provider, model.strip())
        if target.model and target.provider in usable and target not in out:
            out.append(target)
    return out


def targets(settings: Settings, typed: str = "") -> list[Target]:
    """The current client first, then each configured provider's model, then the typed models."""
    out = [Target(settings.provider, settings.model, current=True)]
    for provider in configured_providers(settings):
        model = settings.model if provider == settings.provider else default_model(provider)
        if Target(provider, model) not in out and provider != settings.provider:
            out.append(Target(provider, model))
    out.extend(t for t in parse_typed_models(typed, settings) if t not in out)
    return out


def target_settings(settings: Settings, target: Target) -> Settings:
    """The settings a client for `target` is built from (keys, base URLs and timeouts of `settings`)."""
    base_url = settings.base_url if target.provider == "openai" and settings.provider == "openai" else None
    return settings.with_provider(target.provider, target.model, base_url=base_url)
