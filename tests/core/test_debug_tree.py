"""core.workbench.tree: grouping of trace-stamped events into conversation → turn → call → children."""

from core.debuglog.events import DebugEvent
from core.workbench.tree import build_tree, find_conversation, waterfall


def ev(
    kind, call_id, conv="t1", turn=1, parent="", step="reply", ts=100.0, latency=None, ok=True, flow="review"
):
    return DebugEvent(
        flow=flow,
        step=step,
        kind=kind,
        call_id=call_id,
        conversation_id=conv,
        turn=turn,
        parent_id=parent,
        ts=ts,
        latency_ms=latency,
        ok=ok,
    )


def test_tree_groups_attempts_repairs_results_and_children():
    events = [
        ev("call", "a", ts=101.0, latency=1000, ok=False),
        ev("repair", "a", ts=101.0),
        ev("call", "a", ts=102.0, latency=1000),
        ev("result", "a", ts=102.0),
        ev("call", "b", turn=2, ts=110.0, latency=500),
        ev("result", "b", turn=2, ts=110.0),
        ev("call", "s", turn=2, parent="b", step="summary", ts=111.0, latency=800),
        ev("result", "s", turn=2, parent="b", step="summary", ts=111.0),
        ev("call", "x", conv="", turn=0, flow="memory", ts=120.0, latency=10),
    ]
    tree = build_tree(events)
    assert [(c.flow, c.conversation_id) for c in tree] == [("review", "t1"), ("memory", "")]
    review = tree[0]
    assert [t.turn for t in review.turns] == [1, 2]
    first = review.turns[0].calls
    assert [c.call_id for c in first] == ["a"]
    assert [e.kind for e in first[0].attempts] == ["call", "call"]
    assert len(first[0].repairs) == 1 and first[0].result is events[3]
    assert first[0].latency_ms == 2000
    second = review.turns[1]
    assert [c.call_id for c in second.calls] == ["b"]
    assert [c.call_id for c in second.calls[0].children] == ["s"]
    assert [c.call_id for c in second.all_calls()] == ["b", "s"]
    rows = waterfall(second)
    assert [(r["call_id"], r["depth"], r["offset_ms"], r["duration_ms"]) for r in rows] == [
        ("b", 0, 0.0, 500.0),
        ("s", 1, 700.0, 800.0),
    ]
    assert find_conversation(tree, "t1").label == "t1"
    assert find_conversation(tree, "", "memory").label == "（会話IDなし）"
    assert find_conversation(tree, "nope") is None


def test_child_whose_parent_is_missing_becomes_a_root_of_its_turn():
    tree = build_tree([ev("call", "s", parent="gone", step="summary")])
    assert [c.call_id for c in tree[0].turns[0].calls] == ["s"]
