"""The knowledge interview's flow tag, its main step and its reply limits (spec 01), in one place."""

from __future__ import annotations

from core.guard.reply_limits import ReplyLimits, register_reply_limits

FLOW = "knowledge"  # flow tag: chat key, demo persona, debug-log grouping
STEP_TURN = "interview_turn"
# A whole draft entry can come back in one turn: more output tokens and characters than the other flows.
REPLY_LIMITS = register_reply_limits(FLOW, ReplyLimits(max_tokens=4096, max_chars=30_000))
