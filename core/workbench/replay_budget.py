"""What a replay will cost before it starts: its turns and the model calls it will make (issue: a 20 MB file
can hold ~136,000 turns), and the bound above which the page asks first.

The threshold is REPLAY_CONFIRM_CALLS, or the environment variable KATACHI_REPLAY_CONFIRM_CALLS (a positive
integer) where an admin sets another; MAX_REPLAY_TURNS is a hard bound the page never exceeds. No Streamlit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from core.workbench.replay import RecordedTurn

REPLAY_CONFIRM_CALLS = 50  # more expected model calls than this: the page asks before starting
REPLAY_CONFIRM_ENV = "KATACHI_REPLAY_CONFIRM_CALLS"
MAX_REPLAY_TURNS = 500  # a conversation longer than this is not replayed (split the export)


def expected_calls(turns: Sequence[RecordedTurn]) -> int:
    """Model calls the replay will make: per turn, the calls its recording made (at least one)."""
    return sum(max(1, len({e.call_id for e in t.events if e.kind in ("call", "error")})) for t in turns)


def confirm_threshold(env: Mapping[str, str] | None = None) -> int:
    """The number of expected calls above which the page asks first (env override when a positive integer)."""
    env = os.environ if env is None else env
    raw = env.get(REPLAY_CONFIRM_ENV, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else REPLAY_CONFIRM_CALLS


def replay_plan_text(turns: Sequence[RecordedTurn]) -> str:
    """「12 ターン・モデル呼び出し 約15 回」: what the person is told before starting."""
    return f"{len(turns):,} ターン・モデル呼び出し 約{expected_calls(turns):,} 回"


def too_many_turns(turns: Sequence[RecordedTurn]) -> str | None:
    """The Japanese refusal for a conversation over MAX_REPLAY_TURNS, else None."""
    if len(turns) <= MAX_REPLAY_TURNS:
        return None
    return (
        f"この会話は {len(turns):,} ターンあり、リプレイの上限（{MAX_REPLAY_TURNS:,} ターン）を超えています。"
    )
