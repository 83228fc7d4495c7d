"""Constants the diagnosis spec fixes (spec 04), in one place."""

from __future__ import annotations

from pathlib import Path

FLOW_TAG = "diagnosis"

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
FREE_INPUT = "✏️ 自由入力"
DONT_KNOW_VALUE = "dont_know"
FREE_INPUT_VALUE = "free_input"

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "samples" / "diagnosis"
ICON_DIR_NAME = "icons/warning-lights"
