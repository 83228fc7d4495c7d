"""The debug log as a tree: conversation → turn → call → attempts, plus a latency waterfall.

Built from the trace fields every DebugEvent carries (core.debuglog.trace): events of one guarded call share a
`call_id`; a call whose `parent_id` names another call of the log hangs under it (a summary under the
reply that triggered it); calls without a known parent are the roots of their turn. Events recorded
before trace ids existed (no conversation) are grouped per flow under "（会話IDなし）". Pure data, no
Streamlit: the debug page draws what this returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.debuglog.events import DebugEvent

CALL_KINDS = ("call", "error")
NO_CONVERSATION = ""


@dataclass
class CallNode:
    """One guarded call: its attempts (call / error events, in order), the repair prompts between them,
    the final result, its notes, and the calls it caused (`children`)."""

    call_id: str
    flow: str
    step: str
    attempts: list[DebugEvent] = field(default_factory=list)
    repairs: list[DebugEvent] = field(default_factory=list)
    notes: list[DebugEvent] = field(default_factory=list)  # kind == "note" events of this call
    result: DebugEvent | None = None
    children: list[CallNode] = field(default_factory=list)
    indexes: list[int] = field(default_factory=list)  # positions of this call's events in the log

    @property
    def first(self) -> DebugEvent | None:
        return self.attempts[0] if self.attempts else self.result

    @property
    def called_model(self) -> bool:
        """False for a flow's step that only holds notes and the calls under it (no attempt, no result)."""
        return bool(self.attempts) or self.result is not None

    @property
    def ok(self) -> bool | None:
        if self.result is not None:
            return self.result.ok
        return self.attempts[-1].ok if self.attempts else None

    @property
    def latency_ms(self) -> float:
        """Time spent on all attempts of this call."""
        return sum(a.latency_ms or 0.0 for a in self.attempts)

    @property
    def start(self) -> float:
        """Epoch seconds the first attempt started (its event is stamped when it ended)."""
        first = self.first
        if first is None:  # a call known only by its notes
            return self.notes[0].ts if self.notes else 0.0
        return first.ts - (first.latency_ms or 0.0) / 1000

    @property
    def end(self) -> float:
        return max(
            (e.ts for e in (*self.attempts, *([self.result] if self.result else []), *self.notes)),
            default=0.0,
        )

    def usage(self, key: str) -> int:
        """Tokens of `key` ("input_tokens", "output_tokens", "cached_input_tokens") over all attempts."""
        return sum(int(a.usage.get(key, 0) or 0) for a in self.attempts)

    def walk(self) -> list[CallNode]:
        """This call and every call under it, depth first."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out


@dataclass
class TurnNode:
    """One turn of a conversation: the calls at its top (`calls`), each with its children."""

    turn: int
    calls: list[CallNode] = field(default_factory=list)

    def all_calls(self) -> list[CallNode]:
        return [node for call in self.calls for node in call.walk()]

    @property
    def start(self) -> float:
        return min((c.start for c in self.all_calls()), default=0.0)


@dataclass
class ConversationNode:
    """One conversation of one flow (events without a conversation id: one node per flow)."""

    flow: str
    conversation_id: str
    session_id: str = ""
    turns: list[TurnNode] = field(default_factory=list)

    def all_calls(self) -> list[CallNode]:
        return [node for turn in self.turns for node in turn.all_calls()]

    @property
    def label(self) -> str:
        return self.conversation_id or "（会話IDなし）"

    @property
    def started_at(self) -> float:
        """Epoch seconds its first call started (0 without calls)."""
        return min((t.start for t in self.turns), default=0.0)

    @property
    def first_input(self) -> str:
        """What the person said first (the turn's recorded input), "" when nothing was recorded."""
        for turn in self.turns:
            for call in turn.all_calls():
                for attempt in call.attempts:
                    if attempt.user_input:
                        return attempt.user_input
        return ""


def _calls(events: Sequence[DebugEvent]) -> dict[str, CallNode]:
    """Group events by call_id (events without one each make their own call), in log order."""
    nodes: dict[str, CallNode] = {}
    for index, event in enumerate(events):
        call_id = event.call_id or f"#event-{index}"
        node = nodes.get(call_id)
        if node is None:
            node = nodes[call_id] = CallNode(call_id, event.flow, event.step)
        node.indexes.append(index)
        if event.kind in CALL_KINDS:
            node.attempts.append(event)
        elif event.kind == "repair":
            node.repairs.append(event)
        elif event.kind == "result":
            node.result = event
        else:
            node.notes.append(event)
    return nodes


def _head(node: CallNode, events: Sequence[DebugEvent]) -> DebugEvent:
    return events[node.indexes[0]]


def build_tree(events: Sequence[DebugEvent]) -> list[ConversationNode]:
    """The log as conversations (in order of first appearance) → turns (ascending) → calls → children.

    A call's conversation and turn are those of its first event; a child is attached to its parent
    wherever the parent sits (a background summary stays under the reply that caused it).
    """
    nodes = _calls(events)
    conversations: dict[tuple[str, str], ConversationNode] = {}
    turns: dict[tuple[str, str, int], TurnNode] = {}
    for node in nodes.values():
        head = _head(node, events)
        parent = nodes.get(head.parent_id) if head.parent_id else None
        if parent is not None and parent is not node:
            parent.children.append(node)
            continue
        key = (head.flow, head.conversation_id or NO_CONVERSATION)
        conversation = conversations.get(key)
        if conversation is None:
            conversation = conversations[key] = ConversationNode(head.flow, key[1], head.session_id)
        turn_key = (*key, head.turn)
        turn = turns.get(turn_key)
        if turn is None:
            turn = turns[turn_key] = TurnNode(head.turn)
            conversation.turns.append(turn)
        turn.calls.append(node)
    for conversation in conversations.values():
        conversation.turns.sort(key=lambda t: t.turn)
    return list(conversations.values())


def find_conversation(
    tree: Sequence[ConversationNode], conversation_id: str, flow: str = ""
) -> ConversationNode | None:
    """The conversation with this id (and flow, when given), or None."""
    for conversation in tree:
        if conversation.conversation_id == conversation_id and (not flow or conversation.flow == flow):
            return conversation
    return None


def waterfall(turn: TurnNode) -> list[dict[str, Any]]:
    """One row per attempt of every call of the turn: depth, offset from the turn's start and duration
    (ms), for a latency waterfall. Rows are in start order within each call's subtree."""
    origin = turn.start
    rows: list[dict[str, Any]] = []

    def visit(node: CallNode, depth: int) -> None:
        for attempt in node.attempts:
            duration = attempt.latency_ms or 0.0
            start = attempt.ts - duration / 1000
            rows.append(
                {
                    "call_id": node.call_id,
                    "step": node.step,
                    "attempt": attempt.attempt,
                    "depth": depth,
                    "offset_ms": round((start - origin) * 1000, 1),
                    "duration_ms": round(duration, 1),
                    "ok": attempt.ok,
                }
            )
        for child in sorted(node.children, key=lambda c: c.start):
            visit(child, depth + 1)

    for call in sorted(turn.calls, key=lambda c: c.start):
        visit(call, 0)
    return rows
