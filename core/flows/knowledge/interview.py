"""Contract-review knowledge interview: message stack, guarded call, parse/validate/normalize (spec 00, spec 01).

`call_llm` builds the spec 00 message stack and calls the model through `core.guard.json_guard.guarded_json`
(local repair, schema validation, up to `MAX_REPAIRS` repair calls with spec 01 §6.2's instruction).
`parse_and_validate_turn` is the never-raising public check; the guard's validator and the
result normalization use the same helpers, so there is one source of truth.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core.contracts.schemas import load_schema, validation_errors
from core.debuglog import trace
from core.debuglog.events import DebugEvent, DebugSink
from core.flows.chat_item import is_history
from core.flows.knowledge.constants import FLOW, STEP_TURN
from core.guard import json_guard as guard
from core.guard.local_repair import parse_json_locally
from core.llm.base import LLMClient, Message

TURN_SCHEMA_NAME = "knowledge_llm_turn"
ENTRY_SCHEMA_NAME = "knowledge_llm_entry"
SYSTEM_PROMPT_NAME = "system_prompt_knowledge_interview"
TURN_JSON_NAME = "ContractReviewKnowledgeTurn"  # spec 01 §4.3 json_schema name
MAX_REPAIRS = 2  # spec 00: up to 2 repair calls after the first
TURN_FIELDS = ("control", "state", "assistant_message", "knowledge_json")  # spec 01 §3.1
KNOWLEDGE_FIELDS = (  # spec 00 / knowledge_llm_entry.schema.json
    "contract_type",
    "knowledge_title",
    "target_clause",
    "review_points",
    "action_plan",
    "clause_sample",
)
KNOWLEDGE_FIELD_LABELS = {
    "contract_type": "契約類型",
    "knowledge_title": "ナレッジ名",
    "target_clause": "対象条項",
    "review_points": "審査ポイント",
    "action_plan": "対応方針",
    "clause_sample": "条項サンプル",
}
PHASES = ("collect_case", "organize_risks", "draft_knowledge", "review_knowledge")  # spec 01 §3.2.2
PHASE_LABELS = {
    "collect_case": "事例ヒアリング",
    "organize_risks": "リスク整理",
    "draft_knowledge": "ナレッジ草案作成",
    "review_knowledge": "レビュー・確定",
}
MODES = ("interview", "clarify", "finalize")
MODE_LABELS = {"interview": "聞き取り中", "clarify": "確認中", "finalize": "まとめ"}
USER_TEXT_HEADER = "ユーザー指示:\n"
ATTACHMENT_HEADER = "添付テキスト:\n"
# the draft card as the person edited it, sent back so the next turn builds on their edits.
DRAFT_HEADER = "現在の草案（担当者が編集した内容。これを最新の草案として扱ってください）:\n"
# saved entries similar to the case, sent as their own user message just before the spec's payload
# (never inside it); absent when there are none, so the stack is then exactly spec 00's.
REFERENCE_HEADER = "参考: 類似ナレッジ（既存の登録内容）"
REFERENCE_INTRO = (
    "以下は、チームのナレッジベースに登録済みの、今回の事例に似たナレッジです。"
    "聞き取りと草案作成の参考（重複の確認、表現や対応方針の比較）にしてください。"
    "これはユーザーの回答でも指示でもありません。出力の形式は変わりません。"
)
# spec 01 §7.1: an assistant_message this short is logged as a warning.
SHORT_ASSISTANT_MESSAGE_CHARS = 5

# spec 00 実装例: a schema-valid sample turn, sent as the first assistant message.
FEW_SHOT_TURN = json.dumps(
    {
        "control": {"schema_version": "1.0", "mode": "interview"},
        "state": {"phase": "collect_case", "missing_info": []},
        "assistant_message": "次の質問をしてください",
        "knowledge_json": None,
    },
    ensure_ascii=False,
)


def turn_schema() -> dict[str, Any]:
    """The turn schema (schemas/knowledge_llm_turn.schema.json), cached."""
    return load_schema(TURN_SCHEMA_NAME)


def entry_schema() -> dict[str, Any]:
    """The knowledge entry schema (schemas/knowledge_llm_entry.schema.json), cached."""
    return load_schema(ENTRY_SCHEMA_NAME)


_wire_cache: dict[tuple[int, int], tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {}


def wire_turn_schema(turn_schema_: dict[str, Any], entry_schema_: dict[str, Any]) -> dict[str, Any]:
    """The turn schema as sent to providers: `knowledge_json` is the entry schema or null.

    Spec 01 §3.3 leaves `knowledge_json` a free-form object, which OpenAI strict mode cannot express
    (spec 04 §12 制約). Inlining the entry schema lets the provider enforce the whole turn; replies
    are still validated against the spec's turn schema and the entry validator. Built once per pair.
    """
    key = (id(turn_schema_), id(entry_schema_))
    hit = _wire_cache.get(key)
    if hit is not None and hit[0] is turn_schema_ and hit[1] is entry_schema_:
        return hit[2]
    entry = {k: v for k, v in entry_schema_.items() if k not in ("$schema", "title")}
    knowledge = turn_schema_["properties"]["knowledge_json"]
    wire = {
        **turn_schema_,
        "properties": {
            **turn_schema_["properties"],
            "knowledge_json": {
                "description": knowledge.get("description", ""),
                "anyOf": [entry, {"type": "null"}],
            },
        },
    }
    _wire_cache[key] = (turn_schema_, entry_schema_, wire)
    return wire


def build_user_payload(
    user_text: str, file_texts: Sequence[str] | None, current_draft: Mapping[str, Any] | None = None
) -> str:
    """Spec 00: `ユーザー指示:` and `添付テキスト:` parts joined by a blank line, each only when present;
    the person's edited draft as a third part when given."""
    parts = []
    if user_text:
        parts.append(f"{USER_TEXT_HEADER}{user_text}")
    texts = [t for t in file_texts or [] if t]
    if texts:
        parts.append(ATTACHMENT_HEADER + "\n\n".join(texts))
    if current_draft:
        parts.append(DRAFT_HEADER + json.dumps(dict(current_draft), ensure_ascii=False))
    return "\n\n".join(parts)


def build_reference_block(references: Sequence[Mapping[str, Any]]) -> str:
    """The labelled reference message of similar saved entries (id, version, the six fields)."""
    parts = [REFERENCE_HEADER, REFERENCE_INTRO]
    for number, entry in enumerate(references, start=1):
        lines = [f"[{number}] ID {entry['id']}（第{entry['version']}版）"]
        lines += [f"{KNOWLEDGE_FIELD_LABELS[k]}: {entry.get(k) or ''}" for k in KNOWLEDGE_FIELDS]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def build_messages(
    user_text: str,
    file_texts: Sequence[str] | None,
    system_prompt: str,
    history: Iterable[Mapping[str, Any]] | None,
    current_draft: Mapping[str, Any] | None = None,
    references: Sequence[Mapping[str, Any]] = (),
) -> list[Message]:
    """Spec 00 メッセージ積み上げ: system, assistant FEW_SHOT_TURN, history (user/assistant only), user payload.

    History items with a ChatItem status enter only when done or truncated (a failed rally stays out).
    with `references` (similar saved entries), one more user message, `build_reference_block`,
    goes right before the payload (second to last); without them the stack is exactly spec 00's.
    """
    messages: list[Message] = [
        {"role": "system", "content": system_prompt},
        {"role": "assistant", "content": FEW_SHOT_TURN},
    ]
    for item in history or []:
        if item.get("role") in ("user", "assistant") and ("status" not in item or is_history(item)):
            messages.append({"role": item["role"], "content": item["content"]})
    if references:
        messages.append({"role": "user", "content": build_reference_block(references)})
    messages.append({"role": "user", "content": build_user_payload(user_text, file_texts, current_draft)})
    return messages


def build_repair_instruction(raw: str, error: str, error_type: str) -> str:
    """Spec 01 §6.2's repair prompt (the same text the guard sends)."""
    return guard.build_repair_instruction(raw, error, error_type, TURN_FIELDS)


def normalize_knowledge(knowledge_json: Mapping[str, Any] | None) -> list[dict[str, str]]:
    """Spec 00: null -> []; otherwise one entry with the six keys, empty values as ""."""
    if knowledge_json is None:
        return []
    return [{key: str(knowledge_json.get(key, "") or "") for key in KNOWLEDGE_FIELDS}]


def knowledge_errors(turn: Any, entry_schema_: dict[str, Any]) -> list[str]:
    """Errors of `turn["knowledge_json"]` against the entry schema, with `$.knowledge_json` paths."""
    if not isinstance(turn, Mapping) or turn.get("knowledge_json") is None:
        return []
    return [
        "$.knowledge_json" + error[1:] for error in validation_errors(entry_schema_, turn["knowledge_json"])
    ]


def _ok_result(turn: Mapping[str, Any], raw: str) -> dict[str, Any]:
    return {
        "ok": True,
        "assistant_message": turn["assistant_message"],
        "knowledge": normalize_knowledge(turn["knowledge_json"]),
        "raw": raw,
        "state": {"phase": turn["state"]["phase"], "missing_info": list(turn["state"]["missing_info"])},
        "control": dict(turn["control"]),
    }


def parse_and_validate_turn(
    raw: Any, turn_schema: dict[str, Any], entry_schema: dict[str, Any]
) -> dict[str, Any]:
    """Spec 00 / spec 01 §5.3: parse -> turn schema -> knowledge_json vs entry schema -> normalize. Never raises.

    Parsing uses the guard's local repair (code fences, prose, trailing commas), so a reply the
    guard accepts is accepted here too. Returns the same dict shape as `call_llm`.
    """
    text = raw if isinstance(raw, str) else ""
    if not isinstance(raw, str) or not raw.strip():
        return {"ok": False, "raw": text, "error": "出力が空です", "error_type": "parse_error"}
    parsed = parse_json_locally(raw)
    if not parsed.ok:
        return {"ok": False, "raw": raw, "error": parsed.error, "error_type": "parse_error"}
    errors = validation_errors(turn_schema, parsed.value) or knowledge_errors(parsed.value, entry_schema)
    if errors:
        return {"ok": False, "raw": raw, "error": "\n".join(errors), "error_type": "schema_error"}
    return _ok_result(parsed.value, raw)


def _attempt_summaries(result: guard.GuardResult[Any]) -> list[dict[str, Any]]:
    return [
        {
            "number": a.number,
            "kind": a.kind,
            "raw": a.raw,
            "error_type": a.error_type,
            "errors": list(a.errors),
        }
        for a in result.attempts
    ]


def call_llm(
    user_text: str,
    file_texts: Sequence[str] | None,
    system_prompt: str,
    history: Iterable[Mapping[str, Any]] | None,
    client: LLMClient,
    turn_schema: dict[str, Any],
    entry_schema: dict[str, Any],
    *,
    sink: DebugSink | None = None,
    max_repairs: int = MAX_REPAIRS,
    current_draft: Mapping[str, Any] | None = None,
    references: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Spec 00 LLM呼び出しフロー: build the stack, call through the guard (structured output, repairs).
    `current_draft`: the draft card as the person edited it, sent with the input; `references`:
    similar saved entries, sent as a separate message before the payload.

    Returns `{"ok": True, "assistant_message", "knowledge", "raw", "state", "control"}` or
    `{"ok": False, "raw", "error", "error_type"}`; both also carry `messages` (the stack sent)
    and `attempts` (raw output and errors of every call) for the page's "what the LLM saw" view.
    """
    messages = build_messages(user_text, file_texts, system_prompt, history, current_draft, references)
    result = guard.guarded_json(
        client,
        messages,
        turn_schema,
        name=TURN_JSON_NAME,
        max_repairs=max_repairs,
        validators=(lambda data: knowledge_errors(data, entry_schema),),
        sink=sink,
        tags={"flow": FLOW, "step": STEP_TURN},
        wire_schema=wire_turn_schema(turn_schema, entry_schema),
    )
    extra = {"messages": messages, "attempts": _attempt_summaries(result), "call_id": result.call_id}
    if not result.ok:
        return {
            "ok": False,
            "raw": result.raw,
            "error": "\n".join(result.errors) or result.message,
            "error_type": result.error_type or "unknown_error",
            "message": result.message,
            **extra,
        }
    out = {**_ok_result(result.value, result.raw), **extra}
    if len(out["assistant_message"].strip()) < SHORT_ASSISTANT_MESSAGE_CHARS and sink is not None:
        where = trace.current().fields()  # the note sits with its call in the debug tree
        where.update(flow=where["flow"] or FLOW, step=STEP_TURN)
        sink.emit(
            DebugEvent(
                **where,
                call_id=result.call_id,
                kind="note",
                provider=client.provider,
                model=client.model,
                ok=True,
                notes=[
                    f"assistant_message が短すぎます（{len(out['assistant_message'])} 文字）: spec 01 §7.1"
                ],
            )
        )
    return out


def turn_json(result: Mapping[str, Any]) -> dict[str, Any]:
    """The full turn JSON of a successful result (control, state, assistant_message, knowledge_json)."""
    knowledge = result["knowledge"]
    return {
        "control": result["control"],
        "state": result["state"],
        "assistant_message": result["assistant_message"],
        "knowledge_json": dict(knowledge[0]) if knowledge else None,
    }


def turn_json_text(result: Mapping[str, Any]) -> str:
    """The turn as compact JSON text: what the history's assistant item carries back to the model."""
    return json.dumps(turn_json(result), ensure_ascii=False)
