"""core.workbench.diff: failed vs accepted raw output of a repaired call, the exact changed JSON paths, and
the local fixes each attempt needed."""

import json

from core.contracts.schemas import load_schema
from core.debuglog.events import ListSink
from core.guard.json_guard import guarded_json
from core.llm.replay import ReplayClient
from core.workbench.diff import PathChange, attempt_diff, json_changes, json_path
from core.workbench.tree import build_tree

FAILED = (
    '```json\n{"control": {"schema_version": "1.0", "mode": "chat"}, "state": {"phase": "intake"}, '
    '"assistant_message": "はい", "extra": [1, 2]}\n```'
)
VALID = {
    "control": {"schema_version": "1.0", "mode": "interview"},
    "state": {"phase": "collect_case", "missing_info": ["契約の種類"]},
    "assistant_message": "契約書の種類を教えてください。",
    "knowledge_json": None,
}


def repaired_call():
    events = []
    result = guarded_json(
        ReplayClient([FAILED, json.dumps(VALID, ensure_ascii=False)]),
        [{"role": "user", "content": "秘密保持の相談"}],
        load_schema("knowledge_llm_turn"),
        name="Turn",
        sink=ListSink(events),
        tags={"flow": "knowledge", "step": "turn"},
    )
    assert result.ok
    return build_tree(events)[0].turns[0].calls[0]


def test_a_repaired_call_shows_failed_beside_accepted_with_the_exact_changed_paths():
    diff = attempt_diff(repaired_call())
    assert diff is not None and diff.comparable
    assert (diff.failed.attempt, diff.accepted.attempt) == (1, 2)
    assert diff.failed.raw == FAILED and diff.failed.ok is False and diff.failed.error_type == "schema_error"
    assert diff.failed.fixes == ["code_fence"]  # applied to the failed raw text
    assert diff.accepted.fixes == [] and diff.accepted.parsed == VALID
    assert [(c.path, c.kind) for c in diff.changes] == [
        ("$.control.mode", "changed"),
        ("$.state.phase", "changed"),
        ("$.state.missing_info", "added"),
        ("$.assistant_message", "changed"),
        ("$.extra", "removed"),
        ("$.knowledge_json", "added"),
    ]
    assert diff.changes[0] == PathChange("$.control.mode", "changed", "chat", "interview")
    assert diff.changes[4] == PathChange("$.extra", "removed", [1, 2], None)
    assert [(a.attempt, a.fixes) for a in diff.attempts] == [(1, ["code_fence"]), (2, [])]


def test_a_single_attempt_has_no_diff():
    events = []
    guarded_json(
        ReplayClient([json.dumps(VALID)]),
        [{"role": "user", "content": "x"}],
        load_schema("knowledge_llm_turn"),
        name="Turn",
        sink=ListSink(events),
    )
    assert attempt_diff(build_tree(events)[0].turns[0].calls[0]) is None


def test_unparseable_failed_output_is_not_compared_and_says_why():
    events = []
    guarded_json(
        ReplayClient(['{"control": {"mode": ', json.dumps(VALID)]),
        [{"role": "user", "content": "x"}],
        load_schema("knowledge_llm_turn"),
        name="Turn",
        sink=ListSink(events),
    )
    diff = attempt_diff(build_tree(events)[0].turns[0].calls[0])
    assert diff is not None and not diff.comparable and diff.changes == []
    assert diff.failed.parsed is None and diff.failed.parse_error.startswith("Expecting value")
    assert diff.failed.error_type == "truncated"


def test_json_changes_lists_and_type_changes_and_odd_keys():
    assert json_changes({"a": [1, 2, 3], "b c": 1, "n": 1}, {"a": [1, 5], "b c": "1", "n": 1.0}) == [
        PathChange("$.a[1]", "changed", 2, 5),
        PathChange("$.a[2]", "removed", 3, None),
        PathChange('$["b c"]', "changed", 1, "1"),
        PathChange("$.n", "changed", 1, 1.0),
    ]
    assert json_changes([{"x": 1}], [{"x": 1}, {"y": 2}]) == [PathChange("$[1]", "added", None, {"y": 2})]
    assert json_path("$", 'say "hi"') == '$["say \\"hi\\""]'
    assert json_changes({"a": None}, {"a": None}) == []
