"""Hand-made debug logs (DebugEvents with trace and wire fields) for the debug page's tests, browser test
and benchmark: a small log with a repaired call, a child call and notes, and a large synthetic one."""

from __future__ import annotations

import json
from typing import Any

from core.debuglog.events import DebugEvent
from core.guard.json_guard import build_repair_instruction

T0 = 1_790_000_000.0  # a fixed epoch second, so timings are exact
SYSTEM = {"role": "system", "content": "あなたは契約審査のナレッジを聞き取るアシスタントです。"}
USER = {"role": "user", "content": "秘密保持契約の審査で迷った事例です。"}
FAILED_RAW = (
    '```json\n{"control": {"schema_version": "1.0", "mode": "chat"}, "state": {"phase": "intake"}, '
    '"assistant_message": "はい"}\n```'
)
ACCEPTED = {
    "control": {"schema_version": "1.0", "mode": "interview"},
    "state": {"phase": "collect_case", "missing_info": ["契約の種類"]},
    "assistant_message": "契約書の種類を教えてください。",
    "knowledge_json": None,
}
ACCEPTED_RAW = json.dumps(ACCEPTED, ensure_ascii=False)
SCHEMA_ERROR = "'interview' was expected at $.control.mode"
REPAIR_PROMPT = build_repair_instruction(
    FAILED_RAW, SCHEMA_ERROR, "schema_error", ["control", "state", "assistant_message", "knowledge_json"]
)
SHORT_NOTE = "assistant_message が短すぎます（2 文字）: spec 01 §7.1"
DOWNGRADE = "response_format json_schema not accepted by this server; downgraded to json_object+schema"
WIRE = {"type": "object", "properties": {"control": {"type": "object"}}, "required": ["control"]}
OPENAI = {
    "provider": "openai",
    "model": "gpt-4.1-mini",
    "temperature": 0.2,
    "max_tokens": 1200,
    "base_host": "api.openai.com",
    "sdk": "openai 1.99.0",
}


def _ev(kind: str, call_id: str, ts: float, **kw: Any) -> DebugEvent:
    return DebugEvent(step=kw.pop("step", "interview_turn"), kind=kind, call_id=call_id, ts=T0 + ts, **kw)


def sample_log() -> list[DebugEvent]:
    """Knowledge interview iv-1 (turn 1: a repaired call + a note; turn 2: a downgraded call), review
    thread th-7 (a reply with a summary under it), and a memory call from before trace ids existed."""
    k = {"flow": "knowledge", "conversation_id": "iv-1", "session_id": "sess-a", "schema_name": "Turn"}
    wire = {**OPENAI, "wire_schema": WIRE, "strict": True, "response_format": "json_schema strict"}
    first = [SYSTEM, USER]
    repair_stack = [
        *first,
        {"role": "assistant", "content": FAILED_RAW},
        {"role": "user", "content": REPAIR_PROMPT},
    ]
    usage1 = {"input_tokens": 1200, "cached_input_tokens": 200, "output_tokens": 300}
    usage2 = {"input_tokens": 1500, "cached_input_tokens": 1000, "output_tokens": 200}
    r = {"flow": "review", "conversation_id": "th-7", "session_id": "sess-a", "provider": "anthropic"}
    r.update(model="claude-sonnet-4-5", sdk="anthropic 0.60.0", base_host="api.anthropic.com")
    return [
        _ev(
            "call",
            "k1",
            2.0,
            turn=1,
            attempt=1,
            messages=first,
            raw=FAILED_RAW,
            ok=False,
            error_type="schema_error",
            errors=[SCHEMA_ERROR],
            fixes=["code_fence"],
            usage=usage1,
            latency_ms=2000,
            request_id="req_k1a",
            user_input=USER["content"],
            **k,
            **wire,
        ),
        _ev(
            "repair",
            "k1",
            2.0,
            turn=1,
            attempt=1,
            messages=repair_stack[-2:],
            error_type="schema_error",
            errors=[SCHEMA_ERROR],
            **k,
        ),
        _ev(
            "call",
            "k1",
            3.5,
            turn=1,
            attempt=2,
            messages=repair_stack,
            raw=ACCEPTED_RAW,
            parsed=ACCEPTED,
            ok=True,
            usage=usage2,
            latency_ms=1500,
            request_id="req_k1b",
            **k,
            **wire,
        ),
        _ev("result", "k1", 3.5, turn=1, attempt=2, ok=True, parsed=ACCEPTED, **k),
        _ev("note", "k1", 3.6, turn=1, notes=[SHORT_NOTE], ok=True, **k),
        _ev(
            "call",
            "k2",
            20.8,
            turn=2,
            attempt=1,
            messages=first,
            raw=ACCEPTED_RAW,
            parsed=ACCEPTED,
            ok=True,
            usage={"input_tokens": 800, "output_tokens": 100},
            latency_ms=800,
            notes=[DOWNGRADE],
            request_id="req_k2",
            **k,
            **{**wire, "strict": False, "response_format": "json_object+schema"},
        ),
        _ev("result", "k2", 20.8, turn=2, attempt=1, ok=True, parsed=ACCEPTED, **k),
        _ev(
            "call",
            "r1",
            31.0,
            step="reply",
            turn=1,
            attempt=1,
            messages=[USER],
            raw="第2段落の論点は…",
            ok=True,
            usage={"input_tokens": 2000, "output_tokens": 500},
            latency_ms=1000,
            ttft_ms=350.0,
            **r,
        ),
        _ev("result", "r1", 31.0, step="reply", turn=1, attempt=1, ok=True, **r),
        _ev(
            "call",
            "s1",
            32.5,
            step="summary",
            turn=1,
            parent_id="r1",
            attempt=1,
            messages=[USER],
            raw="要約: …",
            ok=True,
            usage={"input_tokens": 3000, "output_tokens": 200},
            latency_ms=1200,
            **r,
        ),
        _ev("result", "s1", 32.5, step="summary", turn=1, parent_id="r1", attempt=1, ok=True, **r),
        _ev(
            "call",
            "m1",
            40.0,
            step="reply",
            flow="memory",
            provider="openai",
            model="local-llm",
            attempt=1,
            messages=[USER],
            raw="こんにちは",
            ok=True,
            usage={"input_tokens": 50, "output_tokens": 20},
            latency_ms=300,
        ),
    ]


def synthetic_log(events: int = 2000, conversations: int = 20) -> list[DebugEvent]:
    """About `events` events: conversations of several flows, turns with a reply (every third one
    repaired once), a child summary every other turn, notes; timestamps increase."""
    flows = ["knowledge", "review", "memory", "diagnosis"]
    out: list[DebugEvent] = []
    turn = 0
    while len(out) < events:
        turn += 1
        for c in range(conversations):
            if len(out) >= events:
                break
            flow = flows[c % len(flows)]
            base = {"flow": flow, "conversation_id": f"{flow}-{c}", "session_id": f"s{c % 3}", "turn": turn}
            base.update(OPENAI, schema_name="Turn", messages=[SYSTEM, USER])
            ts = float(turn * 100 + c)
            call = f"c{c}-t{turn}"
            usage = {"input_tokens": 1000 + turn, "cached_input_tokens": 500, "output_tokens": 100}
            if turn % 3 == 0:
                out.append(
                    _ev(
                        "call",
                        call,
                        ts,
                        attempt=1,
                        raw=FAILED_RAW,
                        ok=False,
                        error_type="schema_error",
                        fixes=["code_fence"],
                        usage=usage,
                        latency_ms=900,
                        **base,
                    )
                )
                out.append(_ev("repair", call, ts, attempt=1, error_type="schema_error", **base))
                ts += 1
            out.append(
                _ev(
                    "call",
                    call,
                    ts,
                    attempt=2 if turn % 3 == 0 else 1,
                    raw=ACCEPTED_RAW,
                    ok=True,
                    usage=usage,
                    latency_ms=700,
                    notes=[DOWNGRADE] if turn % 5 == 0 else [],
                    **base,
                )
            )
            out.append(_ev("result", call, ts, ok=True, parsed=ACCEPTED, **base))
            if turn % 2 == 0:
                child = {**base, "step": "summary", "parent_id": call}
                out.append(
                    _ev(
                        "call",
                        f"{call}-s",
                        ts + 2,
                        attempt=1,
                        raw="要約",
                        ok=True,
                        usage=usage,
                        latency_ms=500,
                        **child,
                    )
                )
                out.append(_ev("result", f"{call}-s", ts + 2, ok=True, **child))
    return out[:events]
