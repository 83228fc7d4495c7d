"""The 「トレース」 tab: pick a conversation, see it as a tree (turn → call → calls under it), a latency
waterfall of a turn, and the detail of one call. A deep link (`?flow=&conversation=&turn=&call=`)
opens a conversation, its turn and call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import altair as alt
import pandas as pd
import streamlit as st

from core.debuglog.events import DebugEvent
from core.workbench.notes import call_notes
from core.workbench.prices import Price, conversation_cost, cost, total
from core.workbench.ratings import Ratings
from core.workbench.report import RATING_WORDS
from core.workbench.tree import CallNode, ConversationNode, TurnNode, waterfall
from pages.ui.debug import call as debug_call
from pages.ui.debug.names import DEMO_LATENCY, DEMO_PROVIDER, conversation_title, latency
from pages.ui.shell import words
from pages.ui.shell.render import llm_label, plain_label

CONVERSATION_KEY = "debug_conversation"
CALL_KEY = "debug_trace_call"
LINK_SEEN = "debug_link_seen"
WATERFALL_ROW_PX = 30


@dataclass(frozen=True)
class DeepLink:
    """What a link to the debug page asks to open."""

    flow: str = ""
    conversation: str = ""
    turn: int = 0
    call: str = ""

    @property
    def wanted(self) -> bool:
        return bool(self.flow or self.conversation or self.call)


def link_from_query(params: Mapping[str, str]) -> DeepLink:
    """The deep link in the page's query parameters (a bad turn number is ignored)."""
    turn = params.get("turn", "")
    return DeepLink(
        params.get("flow", ""),
        params.get("conversation", ""),
        int(turn) if turn.isdigit() else 0,
        params.get("call", ""),
    )


def _find(tree: Sequence[ConversationNode], link: DeepLink) -> int | None:
    for index, conversation in enumerate(tree):
        if link.call and any(c.call_id == link.call for c in conversation.all_calls()):
            return index
    for index, conversation in enumerate(tree):
        if conversation.conversation_id == link.conversation and (
            not link.flow or conversation.flow == link.flow
        ):
            return index
    return None


def apply_link(tree: Sequence[ConversationNode], link: DeepLink) -> bool:
    """Select the linked conversation (and call) once per link; False when the log does not hold it."""
    if not link.wanted:
        return True
    index = _find(tree, link)
    if st.session_state.get(LINK_SEEN) == link:
        return index is not None
    st.session_state[LINK_SEEN] = link
    if index is None:
        return False
    st.session_state[CONVERSATION_KEY] = index
    calls = _ordered_calls(tree[index])
    picked = next((i for i, (_, c, _) in enumerate(calls) if c.call_id == link.call), None)
    if picked is None and link.turn:
        picked = next((i for i, (t, _, _) in enumerate(calls) if t.turn == link.turn), None)
    if picked is not None:
        st.session_state[CALL_KEY] = picked
    return True


def model_calls(nodes: Sequence[CallNode]) -> int:
    """How many of `nodes` called a model."""
    return sum(n.called_model for n in nodes)


def _conversation_label(tree: Sequence[ConversationNode], index: int) -> str:
    c = tree[index]
    calls = model_calls(c.all_calls())
    title = conversation_title(c.flow, c.started_at, c.first_input, c.conversation_id)
    return f"{title} — {len(c.turns)} ターン・{calls} 呼び出し"


def _ordered_calls(conversation: ConversationNode) -> list[tuple[TurnNode, CallNode, int]]:
    """(turn, call, depth) depth first, turns in order."""
    return [row for turn in conversation.turns for row in _turn_calls(turn)]


def _turn_calls(turn: TurnNode) -> list[tuple[TurnNode, CallNode, int]]:
    out = []

    def visit(node: CallNode, depth: int) -> None:
        out.append((turn, node, depth))
        for child in node.children:
            visit(child, depth + 1)

    for call in turn.calls:
        visit(call, 0)
    return out


def turn_label(turn: int) -> str:
    """「ターン 3」, or 「ターン（番号なし）」 for calls recorded outside a numbered turn."""
    return f"ターン {turn}" if turn else "ターン（番号なし）"


def _badge(node: CallNode) -> str:
    """A coloured Markdown badge for the call's outcome (emoji need fonts a server may not have)."""
    if node.ok is None:
        return ":gray-badge[結果なし]"
    return ":green-badge[成功]" if node.ok else ":red-badge[失敗]"


def _status(node: CallNode) -> str:
    return "結果なし" if node.ok is None else ("成功" if node.ok else "失敗")


def _call_line(node: CallNode, prices: Mapping[str, Price]) -> str:
    notes = len(call_notes(node))
    # a step of the flow that holds calls and notes, no model call of its own
    if not node.called_model:
        line = f":gray-badge[手順] **{plain_label(debug_call.step_label(node.step))}**"
        return line + (f" ・ メモ {notes}" if notes else "")
    first = node.first
    c = cost(node, prices)
    parts = [
        f"{_badge(node)} **{plain_label(debug_call.step_label(node.step))}**",
        plain_label(first.model if first else "-"),
        f"試行 {len(node.attempts)}",
        latency(node.latency_ms, first.provider if first else None),
        f"入力 {c.tokens.input:,} / 出力 {c.tokens.output:,}",
        plain_label(c.text()),
    ]
    if notes:
        parts.append(f"メモ {notes}")
    return " ・ ".join(parts)


def _rating(conversation: ConversationNode, turn: TurnNode, ratings: Ratings | None) -> str:
    """「 ・ :material/thumb_down: 低評価「comment」」 for a rated turn, "" otherwise."""
    found = (ratings or {}).get((conversation.flow, conversation.conversation_id, turn.turn))
    if not found:
        return ""
    score = int(found.get("score", -1))
    icon = ":material/thumb_down:" if score == 0 else ":material/thumb_up:"
    comment = str(found.get("comment") or "")
    return f" ・ {icon} {RATING_WORDS.get(score, '')}" + (f"「{plain_label(comment)}」" if comment else "")


def tree_markdown(
    conversation: ConversationNode, prices: Mapping[str, Price], ratings: Ratings | None = None
) -> str:
    """The conversation as a nested Markdown list: turns (with their rating), their calls, the calls under them."""
    lines = []
    for turn in conversation.turns:
        calls = turn.all_calls()
        c = total(calls, prices)
        demo = all(n.first is None or n.first.provider == DEMO_PROVIDER for n in calls)
        model_time = DEMO_LATENCY if demo else f"{sum(n.latency_ms for n in calls):,.0f} ms"
        lines.append(
            f"- **{turn_label(turn.turn)}** ・ {model_calls(calls)} 呼び出し ・ 経過 {turn_wall_ms(turn):,.0f} ms"
            f" ・ モデル時間 {model_time}"
            + (f" ・ {plain_label(c.text())}" if model_calls(calls) else "")
            + _rating(conversation, turn, ratings)
        )
        for _, node, depth in _turn_calls(turn):
            lines.append("    " * (depth + 1) + "- " + _call_line(node, prices))
    return "\n".join(lines)


def turn_wall_ms(turn: TurnNode) -> float:
    """From the start of the turn's first call to the last event of its calls (what the person waited for
    the calls, background work included), in ms."""
    calls = turn.all_calls()
    if not calls:
        return 0.0
    return max(0.0, (max(n.end for n in calls) - turn.start) * 1000)


def waterfall_chart(turn: TurnNode) -> alt.Chart | None:
    """A horizontal bar per attempt: offset from the turn's start → offset + duration (ms)."""
    rows = waterfall(turn)
    if not rows:
        return None
    frame = pd.DataFrame(rows)
    frame["呼び出し"] = [
        f"{i + 1:02d} {'  ' * r['depth']}{words.step(r['step'])} 試行{r['attempt']}"
        for i, r in enumerate(rows)
    ]
    frame["終了"] = frame["offset_ms"] + frame["duration_ms"]
    frame["結果"] = ["成功" if ok else "失敗" for ok in frame["ok"]]
    chart: alt.Chart = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("offset_ms:Q", title="ターン開始からの経過 (ms)"),
            x2="終了:Q",
            y=alt.Y("呼び出し:N", sort=None, title=None, axis=alt.Axis(labelLimit=320)),
            color=alt.Color("結果:N", scale=alt.Scale(domain=["成功", "失敗"], range=["#2e7d32", "#c62828"])),
            tooltip=["呼び出し", "offset_ms", "duration_ms", "結果"],
        )
        .properties(height=WATERFALL_ROW_PX * len(rows))
    )
    return chart


def render(
    tree: Sequence[ConversationNode],
    events: Sequence[DebugEvent],
    prices: Mapping[str, Price],
    ratings: Ratings | None = None,
) -> None:
    """The trace tab for `tree` (turns show their rating)."""
    if st.session_state.get(CONVERSATION_KEY) not in range(len(tree)):
        st.session_state.pop(CONVERSATION_KEY, None)
    index = st.selectbox(
        "会話",
        list(range(len(tree)))[::-1],
        format_func=lambda i: llm_label(_conversation_label(tree, i), 200),
        key=CONVERSATION_KEY,
        help="会話IDのない記録（トレース導入前のログなど）は、フローごとに「（会話IDなし）」にまとまります。",
    )
    if index is None:
        return
    conversation = tree[index]
    c = conversation_cost(conversation, prices)
    m = st.columns(4)
    m[0].metric("ターン", len(conversation.turns))
    m[1].metric("呼び出し", model_calls(conversation.all_calls()))
    m[2].metric("入力トークン", f"{c.tokens.input:,}")
    m[3].metric("出力トークン", f"{c.tokens.output:,}")
    debug_call.cost_line("この会話の費用", c)
    with st.container(border=True, key="debug_tree_view"):
        st.markdown("**会話のツリー**（ターン → 呼び出し → その呼び出しが起こした呼び出し）")
        st.markdown(tree_markdown(conversation, prices, ratings))
    calls = _ordered_calls(conversation)
    if st.session_state.get(CALL_KEY) not in range(len(calls)):
        st.session_state[CALL_KEY] = len(calls) - 1
    picked = st.selectbox(
        "詳しく見る呼び出し",
        list(range(len(calls))),
        format_func=lambda i: (
            f"{turn_label(calls[i][0].turn)} ▸ {'└ ' * calls[i][2]}"
            f"{llm_label(debug_call.step_label(calls[i][1].step))} ・ 試行 {len(calls[i][1].attempts)} ・ "
            f"{_status(calls[i][1])}"
        ),
        key=CALL_KEY,
    )
    if picked is None:
        return
    turn, node, _ = calls[picked]
    chart = waterfall_chart(turn)
    if chart is not None:
        st.markdown(f"**{turn_label(turn.turn)} のレイテンシ（ウォーターフォール）**")
        st.altair_chart(chart, width="stretch", height=WATERFALL_ROW_PX * len(waterfall(turn)) + 60)
    debug_call.render(node, events, prices, key="debug_trace")
