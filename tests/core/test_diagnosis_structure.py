"""The shape of the diagnosis package: handlers stand alone, imports at the top (a heavy library may be imported
where it is used, with its reason), no cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from core.flows.diagnosis.models import ChatRequest, ChatResponse, ChatStep, Next, PromptInfo
from core.flows.diagnosis.state_machine import STEP_HANDLERS, StepLoopError, process_step
from tests.core.diagnosis_fixtures import diag, make_deps, make_session

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "core" / "flows" / "diagnosis"
HANDLERS = "core.flows.diagnosis.handlers"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST) -> set[str]:
    """Every module an AST imports, at any depth (module level or inside functions)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, "relative import"
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def modules() -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("*.py"))}


def test_no_handler_module_imports_another_handler_module() -> None:
    handler_modules = {name: tree for name, tree in modules().items() if name.startswith(HANDLERS + ".")}
    assert len(handler_modules) >= 8
    for name, tree in handler_modules.items():
        others = {m for m in imported(tree) if m == HANDLERS or m.startswith(HANDLERS + ".")}
        assert not others, f"{name} imports {sorted(others)}"


def test_no_imports_inside_functions_without_a_reason() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = [n for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)]
                unexplained = [n for n in inner if "# noqa: PLC0415 - " not in lines[n.lineno - 1]]
                assert not unexplained, f"{module_name(path)}.{node.name} imports inside the function"


def test_the_package_has_no_import_cycle() -> None:
    trees = modules()
    graph = {name: {m for m in imported(tree) if m in trees and m != name} for name, tree in trees.items()}
    done: set[str] = set()

    def visit(name: str, stack: list[str]) -> None:
        if name in stack:
            raise AssertionError("import cycle: " + " -> ".join([*stack[stack.index(name) :], name]))
        if name in done:
            return
        for target in sorted(graph[name]):
            visit(target, [*stack, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])


# --- dispatch by the returned next step -------------------------------------------------------


def test_handlers_hand_over_through_process_step_in_one_request() -> None:
    """FREE_TEXT -> DIAGNOSING runs in one request; the session passes through both steps."""
    deps = make_deps([diag()])
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, ChatRequest("s1", message="ドアがきしむ"), deps)
    assert isinstance(r, ChatResponse) and r.current_step == "diagnosing"
    assert s.visited_steps[-2:] == ["free_text", "diagnosing"] and s.diagnostic_turn == 1


def test_a_handler_returns_next_instead_of_calling_the_next_handler() -> None:
    s = make_session(ChatStep.SPEC_CHECK, spec_check_shown=True)
    outcome = STEP_HANDLERS[ChatStep.SPEC_CHECK](
        s, ChatRequest("s1", action="spec_check", action_value="not_resolved"), make_deps()
    )
    assert isinstance(outcome, Next) and outcome.step == ChatStep.DIAGNOSING
    assert outcome.request is not None and outcome.request.message.startswith("仕様の説明")
    assert s.current_step == ChatStep.SPEC_CHECK  # process_step, not the handler, moves the session


def test_handlers_handing_over_forever_stop_with_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    ping = {ChatStep.RESERVATION: ChatStep.DONE, ChatStep.DONE: ChatStep.RESERVATION}
    for step, target in ping.items():
        monkeypatch.setitem(STEP_HANDLERS, step, lambda s, r, d, target=target: Next(target))
    s = make_session(ChatStep.RESERVATION)
    with pytest.raises(StepLoopError, match="reservation -> done -> reservation"):
        process_step(s, ChatRequest("s1"), make_deps())


def test_a_rewind_goes_to_diagnosing_whatever_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[ChatStep] = []

    def fake(session, request, deps):  # type: ignore[no-untyped-def]
        seen.append(ChatStep.DIAGNOSING)
        return ChatResponse(session.session_id, str(session.current_step), PromptInfo(message="戻りました"))

    monkeypatch.setitem(STEP_HANDLERS, ChatStep.DIAGNOSING, fake)
    s = make_session(ChatStep.BOOKING_CONFIRM)
    r = process_step(s, ChatRequest("s1", rewind_to_turn=1), make_deps())
    assert seen == [ChatStep.DIAGNOSING] and r.prompt.message == "戻りました"
