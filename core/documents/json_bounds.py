"""JSON from an upload read within bounds: nesting depth checked before parsing, errors as Japanese text.

Python's json parser recurses: a file of 100,000 opening brackets raises RecursionError (or, in a thread with a
small stack, worse). `nesting_depth` measures the depth without parsing (strings skipped, no recursion), so a
file nested deeper than MAX_DEPTH is refused with a message before json.loads ever sees it. Used by every
upload reader (the review JSON import, the debug JSONL import and the replay uploader). No Streamlit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

MAX_DEPTH = 64  # real exports nest less than 10 levels
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays/objects in JSON text (brackets inside strings ignored); linear, iterative."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    return max(0, max(accumulate(1 if c in "[{" else -1 for c in brackets)))


@dataclass(frozen=True)
class Parsed:
    """A parsed JSON value, or a Japanese error (then `value` is None)."""

    value: Any = None
    error: str | None = None


def parse_bounded(text: str, max_depth: int = MAX_DEPTH) -> Parsed:
    """json.loads(text) with the depth checked first; never raises (syntax, depth and recursion are errors)."""
    depth = nesting_depth(text)
    if depth > max_depth:
        return Parsed(error=f"入れ子が深すぎます（{depth:,} 段。上限 {max_depth} 段）。")
    try:
        return Parsed(json.loads(text))
    except json.JSONDecodeError as exc:
        return Parsed(
            error=f"JSONとして読み取れませんでした（{exc.lineno}行目 {exc.colno}文字目: {exc.msg}）。"
        )
    except (ValueError, RecursionError) as exc:
        return Parsed(error=f"JSONとして読み取れませんでした（{type(exc).__name__}）。")
