"""Replay an exported conversation through its flow: the regression check before a switch.

`conversations(events)` lists the conversations of a debug log (or a JSONL export read back) with the
person's input of every turn (diagnosis: every request, with the request itself); `replay(flow, turns,
client)` sends those inputs again through the REAL flow code on a fresh temporary store
(core.workbench.replay_flows) and compares each turn with the recording: validity, the flow's key fields
(knowledge: phase; memory: the persona's affect; diagnosis: action and urgency; review chat: text only),
repairs, latency, tokens. A turn "changed" when validity, a key field or the repairs differ.
Pure data, no Streamlit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from core.debuglog import trace
from core.debuglog.events import CaptureSink, DebugEvent
from core.flows.diagnosis import ManualSearch
from core.flows.review_chat import ReviewRecord
from core.llm.base import LLMClient
from core.workbench.cost import call_cost, cost_text
from core.workbench.prices import Cost
from core.workbench.replay_flows import (
    CALL_FREE_TURNS,
    KEY_LABELS,
    PRIMARY_STEPS,
    REQUEST_TURNS,
    SECOND_KEY_LABELS,
    open_runner,
    turn_keys,
)
from core.workbench.tree import ConversationNode, build_tree


@dataclass
class RecordedTurn:
    """One recorded turn: its number, what the person typed or chose, the events of its calls, and the
    request itself where the text cannot rebuild it (diagnosis; core.debuglog.trace `turn_input`)."""

    turn: int
    user_input: str
    events: list[DebugEvent] = field(default_factory=list)
    turn_input: dict[str, Any] | None = None


@dataclass
class RecordedConversation:
    """One conversation of the log that can be replayed (it has numbered turns with their inputs)."""

    flow: str
    conversation_id: str
    turns: list[RecordedTurn] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.flow} / {self.conversation_id}（{len(self.turns)} ターン）"

    @property
    def started_at(self) -> float:
        """Epoch seconds of its first recorded event (0 without events)."""
        return min((e.ts for t in self.turns for e in t.events), default=0.0)

    @property
    def first_input(self) -> str:
        return next((t.user_input for t in self.turns if t.user_input), "")


@dataclass(frozen=True)
class TurnFacts:
    """What a turn's main calls came to: validity, the flow's key fields, repairs, latency, tokens, cost."""

    valid: bool
    key: str = ""
    second: str = ""  # the flow's second key field (diagnosis: urgency level)
    repairs: int = 0
    latency_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    length: int = 0  # characters of the (last) reply
    cost: Cost | None = None


@dataclass
class TurnRow:
    """One turn of a replay: the recording (`before`) against the replay (`after`)."""

    turn: int
    user_input: str
    before: TurnFacts
    after: TurnFacts

    @property
    def changes(self) -> list[str]:
        """Names of the compared fields that differ (validity, key fields, repairs)."""
        out = []
        if self.before.valid != self.after.valid:
            out.append("valid")
        if self.before.key != self.after.key:
            out.append("key")
        if self.before.second != self.after.second:
            out.append("second")
        if self.before.repairs != self.after.repairs:
            out.append("repairs")
        return out


@dataclass
class ReplayReport:
    """The per-turn table of a replay and its summary line."""

    flow: str
    provider: str
    model: str
    rows: list[TurnRow] = field(default_factory=list)
    stopped: bool = False  # ended by 停止 before the last turn

    @property
    def changed(self) -> int:
        return sum(1 for row in self.rows if row.changes)

    @property
    def summary(self) -> str:
        """e.g. 「3ターン: 有効 3、修復 0、フェーズの変化 2、記録との違い 0ターン」 (of the replay); diagnosis
        counts 「行動の変化 n、緊急度の変化 m」 over the turns that have the field (a button turn has none)."""
        rows = self.rows
        parts = [
            f"{len(rows)}ターン: 有効 {sum(r.after.valid for r in rows)}",
            f"修復 {sum(r.after.repairs for r in rows)}",
        ]
        skip_empty = self.flow in CALL_FREE_TURNS
        for label, values in (
            (KEY_LABELS.get(self.flow), [r.after.key for r in rows]),
            (SECOND_KEY_LABELS.get(self.flow), [r.after.second for r in rows]),
        ):
            if label:
                parts.append(f"{label}の変化 {_transitions(values, skip_empty)}")
        parts.append(f"記録との違い {self.changed}ターン")
        return "、".join(parts)

    def table(self) -> list[dict[str, Any]]:
        """One plain dict per turn (Japanese column names) for a table or a CSV download."""
        label = KEY_LABELS.get(self.flow)  # review chat has no key field: no column for it
        second = SECOND_KEY_LABELS.get(self.flow)
        names = {**CHANGE_LABELS, "key": label or CHANGE_LABELS["key"], "second": second or ""}
        out = []
        for r in self.rows:
            b, a = r.before, r.after
            row: dict[str, Any] = {
                "ターン": r.turn,
                "入力": r.user_input,
                "有効（記録→再生）": f"{_yes(b.valid)}→{_yes(a.valid)}",
            }
            if label:
                row[f"{label}（記録→再生）"] = f"{b.key or '-'}→{a.key or '-'}"
            if second:
                row[f"{second}（記録→再生）"] = f"{b.second or '-'}→{a.second or '-'}"
            out.append(
                {
                    **row,
                    "修復": f"{b.repairs}→{a.repairs}",
                    "レイテンシ(ms)": f"{b.latency_ms:.0f}→{a.latency_ms:.0f}",
                    "トークン": f"{b.input_tokens + b.output_tokens}→{a.input_tokens + a.output_tokens}",
                    "文字数": f"{b.length}→{a.length}",
                    "コスト": _cost(b.cost, a.cost),
                    "違い": "、".join(names[c] for c in r.changes) or "なし",
                }
            )
        return out


CHANGE_LABELS = {"valid": "有効/無効", "key": "主な値", "repairs": "修復回数"}


def _transitions(values: Sequence[str], skip_empty: bool) -> int:
    """How often a value differs from the one before (empty values left out when `skip_empty`)."""
    kept = [v for v in values if v or not skip_empty]
    return sum(1 for a, b in pairwise(kept) if a != b)


def _yes(valid: bool) -> str:
    return "有効" if valid else "無効"


def _cost(before: Cost | None, after: Cost | None) -> str:
    if before is None and after is None:
        return "-"
    return f"{cost_text(before)}→{cost_text(after)}"


def conversations(events: Sequence[DebugEvent]) -> list[RecordedConversation]:
    """The conversations of the log that can be replayed: a conversation id and numbered turns, each with
    the person's input (core.debuglog.trace `user_input`), in log order. Diagnosis: one turn per request (numbered
    1, 2, ... in log order) with its `turn_input`; a conversation recorded without it is left out."""
    out = []
    for node in build_tree(events):
        if not node.conversation_id:
            continue
        turns = _requests(node, events) if node.flow in REQUEST_TURNS else _turns(node, events)
        if turns:
            out.append(RecordedConversation(node.flow, node.conversation_id, turns))
    return out


def _turns(node: ConversationNode, events: Sequence[DebugEvent]) -> list[RecordedTurn]:
    turns = []
    for turn in node.turns:
        calls = turn.all_calls()
        turn_events = [events[i] for call in calls for i in call.indexes]
        text = next((e.user_input for e in turn_events if e.user_input), "")
        if turn.turn > 0 and text:
            turns.append(RecordedTurn(turn.turn, text, turn_events))
    return turns


def _requests(node: ConversationNode, events: Sequence[DebugEvent]) -> list[RecordedTurn]:
    """Every request of the conversation (each top call of a turn is one request's step span, with its
    calls under it), in log order; [] when one of them lacks its recorded request."""
    spans = sorted(
        sorted(i for c in call.walk() for i in c.indexes) for turn in node.turns for call in turn.calls
    )
    out = []
    for number, indexes in enumerate(spans, 1):
        span_events = [events[i] for i in indexes]
        head = next((e for e in span_events if e.turn_input is not None), None)
        if head is None:
            return []
        out.append(RecordedTurn(number, head.user_input, span_events, dict(head.turn_input or {})))
    return out


def facts(flow: str, events: Sequence[DebugEvent]) -> TurnFacts:
    """The facts of one turn from its events, counting only the flow's main calls (PRIMARY_STEPS): a
    background summary or extraction of the turn is left out, so recording and replay compare alike."""
    steps = PRIMARY_STEPS.get(flow)
    calls: dict[str, list[DebugEvent]] = {}
    for event in events:
        if steps is None or event.step in steps:
            calls.setdefault(event.call_id, []).append(event)
    valid, repairs, latency, tokens_in, tokens_out = True, 0, 0.0, 0, 0
    finals: list[tuple[DebugEvent, DebugEvent | None]] = []
    length = 0
    for call in calls.values():
        attempts = [e for e in call if e.kind in ("call", "error")]
        result = next((e for e in call if e.kind == "result"), None)
        ok = result.ok if result is not None else bool(attempts and attempts[-1].ok)
        valid = valid and bool(ok)
        repairs += max(len(attempts) - 1, 0)
        latency += sum(a.latency_ms or 0.0 for a in attempts)
        tokens_in += sum(int(a.usage.get("input_tokens", 0) or 0) for a in attempts)
        tokens_out += sum(int(a.usage.get("output_tokens", 0) or 0) for a in attempts)
        if attempts:
            finals.append((attempts[-1], result))
            length = len(attempts[-1].raw or "")
    key, second = turn_keys(flow, finals)
    head = next((e for e in events if e.provider), None)
    cost = call_cost(head.provider, head.model, tokens_in, tokens_out) if head else None
    valid = valid and (bool(calls) or flow in CALL_FREE_TURNS)
    return TurnFacts(valid, key, second, repairs, round(latency, 1), tokens_in, tokens_out, length, cost)


def replay(
    flow: str,
    turns: Sequence[RecordedTurn],
    client: LLMClient,
    *,
    rag: ManualSearch | None = None,
    review: ReviewRecord | None = None,
    on_turn: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    report: ReplayReport | None = None,
) -> ReplayReport:
    """Run every recorded input of `turns` again through `flow`'s real turn code with `client`, on a fresh
    temporary store (nothing of the session's data is read or written), and compare turn by turn.
    `rag` is the manual search a diagnosis replay uses (the app's; None: without the manuals); `review` the
    review a review-chat thread was about (core.flows.review_chat.review_of_thread; None: the sample review).

    `on_turn(i, n)` is called before turn i of n (a progress bar). Raises KeyError for a flow that cannot
    be replayed (core.workbench.replay_flows.REPLAYABLE). `should_stop()` is asked between turns: True ends the
    replay there (`stopped`; the rows so far are kept). `report`: the report to fill (a page keeps it before
    starting, so the turns done survive an interrupted run).
    """
    report = report if report is not None else ReplayReport(flow, client.provider, client.model)
    with open_runner(flow, client, rag=rag, review=review) as run:
        for index, recorded in enumerate(turns, 1):
            if should_stop is not None and should_stop():
                report.stopped = True
                break
            if on_turn is not None:
                on_turn(index, len(turns))
            sink = CaptureSink()
            with trace.bind(flow=flow, conversation_id="replay", turn=index, user_input=recorded.user_input):
                run(recorded.user_input, recorded.turn_input, sink)
            before = facts(flow, recorded.events)
            report.rows.append(TurnRow(recorded.turn, recorded.user_input, before, facts(flow, sink.events)))
    return report
