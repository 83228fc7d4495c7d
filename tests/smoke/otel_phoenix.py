"""Opt-in smoke test (`make smoke-otel`): a demo session's trace into a real Arize Phoenix on 127.0.0.1, once as
the OTLP protobuf file (POST /v1/traces) and once live through core.workbench.otel_send, then read back through Phoenix's
REST API: every span arrived, prompts and replies on the LLM spans, token counts once, the tree intact, the
conversation as the session. Prints a table; exits 1 when a check fails."""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.contracts.schemas import load_schema  # noqa: E402
from core.debuglog.events import DebugEvent, ListSink  # noqa: E402
from core.guard.json_guard import guarded_json, guarded_text  # noqa: E402
from core.llm.demo import DemoClient, instance_from_schema  # noqa: E402
from core.llm.replay import ReplayClient  # noqa: E402
from core.workbench.otel import otlp_proto  # noqa: E402
from core.workbench.otel_send import send_trace  # noqa: E402


def demo_session(conversation: str) -> list[DebugEvent]:
    """Two turns of a demo conversation: a structured turn repaired once, and a free-text reply."""
    schema = load_schema("knowledge_llm_turn")
    valid = json.dumps(instance_from_schema(schema), ensure_ascii=False)
    events: list[DebugEvent] = []
    sink = ListSink(events)
    messages = [
        {"role": "system", "content": "JSONで答えてください。"},
        {"role": "user", "content": "契約の更新手順は？"},
    ]
    guarded_json(
        ReplayClient(["{broken", valid]),
        messages,
        schema,
        name="Turn",
        sink=sink,
        tags={"flow": "knowledge", "step": "turn"},
    )
    turn_one = len(events)
    guarded_text(
        DemoClient(),
        [*messages, {"role": "user", "content": "ありがとう"}],
        sink=sink,
        tags={"flow": "knowledge", "step": "reply"},
    )
    return [
        replace(
            e,
            conversation_id=conversation,
            session_id="browser-1",
            turn=1 if i < turn_one else 2,
            flow="knowledge",
        )
        for i, e in enumerate(events)
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flat(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: value}


def spans_of(base: str, project: str, want: int) -> list[dict[str, Any]]:
    for _ in range(60):
        try:
            data = get(f"{base}/v1/projects/{project}/spans?limit=500")["data"]
            if len(data) >= want:
                return list(data)
        except OSError:
            pass
        time.sleep(0.5)
    return []


def check(spans: list[dict[str, Any]], expected: list[Any]) -> dict[str, str]:
    attrs = [flat(s.get("attributes") or {}) for s in spans]
    ids = {s["context"]["span_id"] for s in spans}
    llm = [a for a, s in zip(attrs, spans, strict=True) if s.get("span_kind") == "LLM"]
    want_tokens = sum(int(e.usage.get("input_tokens", 0)) for e in expected)
    got_tokens = sum(int(a.get("llm.token_count.prompt", 0)) for a in llm)
    roots = [s for s in spans if not s.get("parent_id")]
    return {
        "spans": f"{len(spans)}",
        "LLM spans": f"{len(llm)}",
        "prompts+replies": "ok"
        if llm and all("llm.input_messages.0.message.content" in a and "output.value" in a for a in llm)
        else "MISSING",
        f"prompt tokens (want {want_tokens})": f"{got_tokens}"
        + ("" if got_tokens == want_tokens else " MISMATCH"),
        "tree": "ok"
        if all(s.get("parent_id") in ids for s in spans if s.get("parent_id")) and len(roots) == 2
        else "BROKEN",
        "roots": ", ".join(sorted(s.get("span_kind", "?") for s in roots)),
        "session.id": ", ".join(sorted({str(a.get("session.id")) for a in attrs})),
    }


def screenshots(base: str, out: Path) -> None:
    """Phoenix's own pages in Chromium (/usr/bin/chromium, when there): the project's traces, then one trace."""
    if not Path("/usr/bin/chromium").exists():
        print("no /usr/bin/chromium: no screenshots")
        return
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only for this optional step

    out.mkdir(parents=True, exist_ok=True)
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    args += ["--disable-component-update", "--disable-sync", "--no-first-run"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{base}/projects", wait_until="networkidle")
        page.get_by_text("katachi-live").first.click()
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(1500)
        page.screenshot(path=str(out / "phoenix-traces.png"))
        page.locator("table tbody tr").first.click()
        page.wait_for_timeout(2500)
        page.screenshot(path=str(out / "phoenix-trace.png"))
        browser.close()
    print(f"screenshots: {out}/phoenix-traces.png, {out}/phoenix-trace.png")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phoenix", default=str(ROOT / ".venv-otel" / "bin" / "phoenix"))
    parser.add_argument(
        "--screenshots", default=str(ROOT / "artifacts" / "phoenix"), help="where to save them"
    )
    args = parser.parse_args()
    # Two conversations: the file and the live route must not send the same span ids (Phoenix keeps the first).
    events, live_events = demo_session("demo-thread-file"), demo_session("demo-thread-live")
    calls = [e for e in events if e.kind in ("call", "error")]
    port, grpc = free_port(), free_port()
    work = tempfile.mkdtemp(prefix="katachi-phoenix-")
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_WORKING_DIR": work,
    }
    log = open(f"{work}/phoenix.log", "w")  # noqa: SIM115 - open for the server's whole life
    server = subprocess.Popen([args.phoenix, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        request = otlp_proto(events)  # the file route: the protobuf export, posted as is
        project = request.resource_spans[0].resource.attributes.add()
        project.key, project.value.string_value = "openinference.project.name", "katachi-file"
        post = urllib.request.Request(
            f"{base}/v1/traces", request.SerializeToString(), {"content-type": "application/x-protobuf"}
        )
        status_file = urllib.request.urlopen(post, timeout=10).status
        os.environ["OTEL_RESOURCE_ATTRIBUTES"] = "openinference.project.name=katachi-live"
        sent = send_trace(live_events, env={"OTEL_EXPORTER_OTLP_ENDPOINT": base})
        total = len(request.resource_spans[0].scope_spans[0].spans)
        rows = {
            f"file (HTTP {status_file})": check(spans_of(base, "katachi-file", total), calls),
            f"live ({sent} sent)": check(spans_of(base, "katachi-live", total), calls),
        }
        screenshots(base, Path(args.screenshots))
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()
    keys = list(next(iter(rows.values())))
    print(f"Phoenix on {base} (log: {work}/phoenix.log); expected spans: {total}")
    print(f"| route | {' | '.join(keys)} |")
    print(f"|---|{'---|' * len(keys)}")
    failed = False
    for name, row in rows.items():
        print(f"| {name} | {' | '.join(row[k] for k in keys)} |")
        failed |= row["spans"] != str(total) or any(
            w in " ".join(row.values()) for w in ("MISSING", "MISMATCH", "BROKEN")
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
