"""Constants the diagnosis spec fixes (spec 04), in one place."""

from __future__ import annotations

from pathlib import Path

from core.guard.reply_limits import ReplyLimits, register_reply_limits

FLOW_TAG = "diagnosis"
REPLY_LIMITS = register_reply_limits(FLOW_TAG, ReplyLimits(max_tokens=2048, max_chars=20_000))
# The calls of a request the workbench's replay compares (the 3-turn summary runs in the background).
REPLAY_STEPS = frozenset({"diagnosing", "spec_check", "urgency_check", "rag_answer"})

# spec 04 §8: max_diagnostic_turns defaults to 8.
MAX_DIAGNOSTIC_TURNS = 8
# spec 04 §4 D.5: the conversation is summarized every 3 turns.
SUMMARY_EVERY_TURNS = 3
# spec 04 §4 D.6: candidates are shown once confidence >= 0.7 or from turn 4.
CANDIDATE_CONFIDENCE = 0.7
CANDIDATE_TURN = 4
# spec 04 §4 D.7: the prompt carries the 4 most recent conversation items.
RECENT_TURN_ITEMS = 4
# spec 04 §4 B: more than 3 failed solutions -> URGENCY_CHECK.
MAX_SOLUTIONS_TRIED = 3
# Handlers one request may run (process_step): the longest real chain is 4,
# FREE_TEXT -> SPEC_CHECK -> DIAGNOSING -> URGENCY_CHECK; more means handlers hand over in a loop.
MAX_STEPS_PER_REQUEST = 6

# spec 04 §10: 5 results per search, keep only score > 0.3.
RAG_N_RESULTS = 5
RAG_SCORE_THRESHOLD = 0.3
RAG_DENSE_POOL = 600  # dense candidates per query: every vector of one vehicle's manual (about 400)
RAG_LEXICAL_POOL = 20
RAG_LEXICAL_WEIGHT = 0.5  # the lexical lane's weight in the fusion (the dense lane's is 1)
# Lexical coverage (IDF-weighted share of the query's keys a chunk holds) below which the lexical lane alone
# keeps nothing (rag.lexical_relevance; tuned on the tune half of tests/data/meaning/manual_queries.json).
RAG_LEXICAL_FLOOR = 0.6
# A query nearer to small talk than to the manual by more than this cosine is unrelated (rag._off_topic; tune
# half of tests/data/meaning/manual_queries.json: 7 of 8 unrelated queries dropped, 2 of 62 related lost).
RAG_OFF_TOPIC_MARGIN = 0.02
RAG_COLLECTION = "diagnosis_manuals"

# spec 04 §3: spec-check routing (score >= 0.50, spec-type count and share >= 50%).
SPEC_SCORE_MIN = 0.50
SPEC_MIN_COUNT = 2
SPEC_SHARE_MIN = 0.5
SPEC_CONTENT_TYPES = ("procedure", "specification", "general")
DANGER_CONTENT_TYPES = ("warning", "danger")
# Soft threshold for the spec hint flag (spec 04 §3 step 5).
SPEC_HINT_SCORE = 0.40

# spec 04 §12 step 4: the diagnostic call runs at temperature 0.3.
DIAGNOSTIC_TEMPERATURE = 0.3

# In-memory session lifetime (spec 04 §1 "TTL付き").
SESSION_TTL_SECONDS = 2 * 60 * 60

# spec 04 §12 エラーハンドリング: the fallback shown when the diagnostic call fails.
FALLBACK_MESSAGE = "他に気になる症状や状況があれば教えてください。"
EMPTY_INPUT_MESSAGE = "症状について教えてください。"

# spec 04 §4 choices: the two defaults appended to every choice list.
DONT_KNOW = "わからない"
FREE_INPUT = "自由入力"
DONT_KNOW_VALUE = "dont_know"
FREE_INPUT_VALUE = "free_input"

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "samples" / "diagnosis"
ICON_DIR_NAME = "icons/warning-lights"
