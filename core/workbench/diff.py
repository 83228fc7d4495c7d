"""Attempt diff for a repaired call: the failed raw output beside the accepted one, the JSON
paths that changed between them, and which local fixes each attempt's text needed. No Streamlit."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from core.debuglog.events import DebugEvent
from core.guard.local_repair import parse_json_locally
from core.workbench.tree import CallNode

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MISSING = object()


@dataclass(frozen=True)
class PathChange:
    """One difference between two JSON values: `kind` is added | removed | changed."""

    path: str
    kind: str
    before: Any = None
    after: Any = None


@dataclass(frozen=True)
class AttemptText:
    """One attempt's raw output, the local fixes applied to it, and what it parsed to (if anything)."""

    attempt: int
    raw: str
    fixes: list[str]
    ok: bool | None
    error_type: str | None
    parsed: Any = None
    parse_error: str = ""  # why the raw text is not JSON even after the local fixes ("" when it is)


@dataclass
class AttemptDiff:
    """A failed attempt beside the accepted (or last) one; `changes` is empty when either is not JSON."""

    failed: AttemptText
    accepted: AttemptText
    changes: list[PathChange] = field(default_factory=list)
    comparable: bool = True
    attempts: list[AttemptText] = field(default_factory=list)  # every attempt, for the fixes table


def attempt_text(event: DebugEvent) -> AttemptText:
    """Parse one attempt's raw output locally (core.guard.local_repair), recording the fixes that needed."""
    raw = event.raw or ""
    local = parse_json_locally(raw) if raw.strip() else None
    return AttemptText(
        attempt=event.attempt,
        raw=raw,
        fixes=list(event.fixes) or (list(local.fixes) if local else []),
        ok=event.ok,
        error_type=event.error_type,
        parsed=local.value if local and local.ok else None,
        parse_error="" if local and local.ok else (local.error if local else "出力が空です"),
    )


def json_path(parent: str, key: str | int) -> str:
    """`$.a.b`, `$.items[0]`, `$["key with space"]`."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{parent}.{key}"
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{parent}["{escaped}"]'


def json_changes(before: Any, after: Any, path: str = "$") -> list[PathChange]:
    """Every path where `after` differs from `before`, depth first, in key / index order."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[PathChange] = []
        for key in [*before, *(k for k in after if k not in before)]:
            out.extend(_member(json_path(path, key), before.get(key, _MISSING), after.get(key, _MISSING)))
        return out
    if isinstance(before, list) and isinstance(after, list):
        out = []
        for index in range(max(len(before), len(after))):
            old = before[index] if index < len(before) else _MISSING
            new = after[index] if index < len(after) else _MISSING
            out.extend(_member(json_path(path, index), old, new))
        return out
    if type(before) is not type(after) or before != after:
        return [PathChange(path, "changed", before, after)]
    return []


def _member(path: str, before: Any, after: Any) -> list[PathChange]:
    if before is _MISSING:
        return [PathChange(path, "added", None, after)]
    if after is _MISSING:
        return [PathChange(path, "removed", before, None)]
    return json_changes(before, after, path)


def attempt_diff(node: CallNode) -> AttemptDiff | None:
    """For a call with two or more attempts: its first failed attempt against the accepted one (the
    attempt that passed, else the last), with the changed JSON paths; None for a single attempt."""
    if len(node.attempts) < 2:
        return None
    texts = [attempt_text(a) for a in node.attempts]
    failed_index = next((i for i, a in enumerate(node.attempts) if not a.ok), 0)
    accepted_index = next(
        (i for i, a in enumerate(node.attempts) if a.ok and i != failed_index), len(texts) - 1
    )
    failed, accepted = texts[failed_index], texts[accepted_index]
    comparable = not failed.parse_error and not accepted.parse_error
    changes = json_changes(failed.parsed, accepted.parsed) if comparable else []
    return AttemptDiff(failed, accepted, changes, comparable, texts)
