"""Local, cheapest-first JSON recovery for model replies. Valid JSON is never rewritten.

Each fix is named so the guard can record it on the attempt. A reply cut off mid-object is
reported as truncated, never closed with guessed brackets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|jsonc)?[ \t]*\r?\n(.*?)\r?\n?[ \t]*```", re.S)


@dataclass
class LocalParse:
    ok: bool
    value: Any = None
    fixes: list[str] = field(default_factory=list)
    error: str = ""
    truncated: bool = False


def parse_json_locally(raw: str) -> LocalParse:
    """Strict `json.loads`; then BOM, code fence, prose around the JSON, comments, trailing commas."""
    try:
        return LocalParse(True, json.loads(raw))
    except (json.JSONDecodeError, RecursionError) as exc:
        first_error = f"{exc}"
    text, fixes = raw, []  # type: str, list[str]
    if text.startswith("\ufeff"):
        text, fixes = text.lstrip("\ufeff"), [*fixes, "strip_bom"]
    fence = _FENCE.search(text)
    if fence:
        # the fence's first closing ``` may sit inside a string (「{"": "```"}」): then the JSON inside, string-aware
        inner = fence.group(1)
        text, fixes = (None if _loads(inner) else _outer_json(text)) or inner, [*fixes, "code_fence"]
    else:
        body = _outer_json(text)
        if body is not None and body != text.strip():
            text, fixes = body, [*fixes, "extract_from_prose"]
    for name, fix in (("strip_comments", _strip_comments), ("trailing_commas", _strip_trailing_commas)):
        try:
            return LocalParse(True, json.loads(text), fixes)
        except (json.JSONDecodeError, RecursionError):
            fixed = fix(text)
            if fixed != text:
                text, fixes = fixed, [*fixes, name]
    try:
        return LocalParse(True, json.loads(text), fixes)
    except (json.JSONDecodeError, RecursionError) as exc:
        return LocalParse(
            False, fixes=fixes, error=first_error if not fixes else f"{exc}", truncated=looks_truncated(raw)
        )


def _loads(text: str) -> bool:
    """`text` is JSON as it stands."""
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def looks_truncated(raw: str) -> bool:
    """True when the text opens a JSON object/array that never closes (cut off mid-reply)."""
    starts = [i for i in (raw.find("{"), raw.find("[")) if i >= 0]
    return bool(starts) and _balanced_end(raw, min(starts)) is None


def _outer_json(text: str) -> str | None:
    """The first balanced {...} or [...] in the text (string-aware), or None."""
    for start, ch in enumerate(text):
        if ch in "{[":
            end = _balanced_end(text, start)
            if end is not None:
                return text[start : end + 1]
            return None
    return None


def _balanced_end(text: str, start: int) -> int | None:
    depth, in_str, esc = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i
    return None


def _scan_outside_strings(text: str, handle: Callable[[str, int, list[str]], int]) -> str:
    out, i, in_str, esc = [], 0, False, False
    while i < len(text):
        ch = text[i]
        if in_str:
            out.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            i += 1
            continue
        if ch == '"':
            in_str = True
            out.append(ch)
            i += 1
            continue
        consumed = handle(text, i, out)
        i += consumed if consumed else 1
        if not consumed:
            out.append(ch)
    return "".join(out)


def _strip_comments(text: str) -> str:
    def handle(t: str, i: int, out: list[str]) -> int:
        if t.startswith("//", i):
            end = t.find("\n", i)
            return (len(t) if end < 0 else end) - i
        if t.startswith("/*", i):
            end = t.find("*/", i + 2)
            return (len(t) if end < 0 else end + 2) - i
        return 0

    return _scan_outside_strings(text, handle)


def _strip_trailing_commas(text: str) -> str:
    def handle(t: str, i: int, out: list[str]) -> int:
        if t[i] == ",":
            j = i + 1
            while j < len(t) and t[j] in " \t\r\n":
                j += 1
            if j < len(t) and t[j] in "}]":
                return 1
        return 0

    return _scan_outside_strings(text, handle)
