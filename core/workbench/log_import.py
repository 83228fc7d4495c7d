"""An uploaded debug-log export (JSON Lines) checked against the event schema before anything reads it.

Both uploaders of the debug page (the import box and the replay tab) read files through `read_debug_jsonl`:
every line must be a JSON object no deeper than core.documents.json_bounds.MAX_DEPTH whose known keys have the types
DebugEvent declares (`messages` a list of {role, content} strings, `turn` an integer, ids strings, ...); the
file holds at most MAX_LINES events. A failing line is reported by its number in Japanese and nothing is
read, so a hostile or damaged file can never reach the trace, cost or replay code. No Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.debuglog.events import DebugEvent
from core.documents.json_bounds import parse_bounded

MAX_LINES = (
    50_000  # events of one file (the session keeps 2,000; an export of several sessions stays far below)
)
MAX_ERRORS_SHOWN = 10

Check = tuple[Callable[[Any], bool], str]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (_is_int(v) or isinstance(v, float)) and math.isfinite(v)


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _messages(v: Any) -> bool:
    return isinstance(v, list) and all(
        isinstance(m, dict) and all(isinstance(k, str) and isinstance(x, str) for k, x in m.items())
        for m in v
    )


TEXT = (_is_str, "文字列")
OPTIONAL_TEXT = (_optional(_is_str), "文字列か null")
CHECKS: dict[str, Check] = {
    **dict.fromkeys(
        ("flow", "step", "kind", "call_id", "provider", "model", "session_id", "conversation_id"), TEXT
    ),
    **dict.fromkeys(("parent_id", "user_input"), TEXT),
    **dict.fromkeys(
        ("schema_name", "raw", "error_type", "response_format", "request_id", "base_host", "sdk"),
        OPTIONAL_TEXT,
    ),
    "ts": (_is_number, "数値"),
    "attempt": (_is_int, "整数"),
    "turn": (lambda v: _is_int(v) and v >= 0, "0以上の整数"),
    "max_tokens": (_optional(_is_int), "整数か null"),
    **dict.fromkeys(("latency_ms", "ttft_ms", "temperature"), (_optional(_is_number), "数値か null")),
    **dict.fromkeys(("ok", "strict"), (_optional(lambda v: isinstance(v, bool)), "true / false か null")),
    "usage_estimated": (lambda v: isinstance(v, bool), "true / false"),
    **dict.fromkeys(
        ("errors", "fixes", "notes"),
        (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "文字列のリスト"),
    ),
    "messages": (_messages, "role と content（文字列）の組のリスト"),
    "usage": (
        lambda v: (
            isinstance(v, dict) and all(isinstance(k, str) and _is_int(x) and x >= 0 for k, x in v.items())
        ),
        "トークン数（0以上の整数）の表",
    ),
    **dict.fromkeys(
        ("wire_schema", "turn_input"), (_optional(lambda v: isinstance(v, dict)), "オブジェクトか null")
    ),
    "feedback": (lambda v: isinstance(v, dict), "オブジェクト"),
}
_FIELDS = set(DebugEvent.__dataclass_fields__)
_REQUIRED = ("flow", "step", "kind")


@dataclass
class DebugImport:
    """The events of a file that passed every check, or the Japanese problems (then no events)."""

    events: list[DebugEvent] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def line_problems(number: int, data: Any) -> list[str]:
    """What is wrong with one parsed line (`number` is 1-based), in Japanese; empty when it can be read."""
    if not isinstance(data, dict):
        return [f"{number}行目: JSONのオブジェクト（{{…}}）ではありません。"]
    problems = [f"{number}行目: {key} がありません。" for key in _REQUIRED if key not in data]
    for key, value in data.items():
        check = CHECKS.get(key)
        if check is not None and not check[0](value):
            problems.append(f"{number}行目: {key} を「{check[1]}」にしてください。")
    return problems


def read_debug_jsonl(data: bytes, max_lines: int = MAX_LINES) -> DebugImport:
    """An uploaded JSONL export checked line by line; never raises."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return DebugImport(errors=["ファイルを UTF-8 のテキストとして読めませんでした。"])
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        return DebugImport(errors=["ログが1件もありません（空のファイルです）。"])
    if len(lines) > max_lines:
        return DebugImport(errors=[f"ログが多すぎます（{len(lines):,} 行。上限 {max_lines:,} 行）。"])
    errors: list[str] = []
    rows: list[dict[str, Any]] = []
    for number, line in lines:
        parsed = parse_bounded(line)
        found = [f"{number}行目: {parsed.error}"] if parsed.error else line_problems(number, parsed.value)
        errors.extend(found)
        if not found:
            rows.append(parsed.value)
    if errors:
        more = len(errors) - MAX_ERRORS_SHOWN
        shown = errors[:MAX_ERRORS_SHOWN] + ([f"…ほか {more:,} 件"] if more > 0 else [])
        return DebugImport(errors=shown)
    return DebugImport(events=[DebugEvent(**{k: v for k, v in row.items() if k in _FIELDS}) for row in rows])
