"""Issue #15 in the browser: nothing is fetched from outside the app's origin, a hostile payload in every
flow fetches nothing, a hostile name from the identity provider is shown as plain text and fetches
nothing either, and a bomb attachment in one session leaves another session served.

Every app here is an AppServer (tests/e2e/conftest.py) with a secrets file of its own (`--secrets.files`):
no `[auth]` (the local person) unless a test writes one, never the repository's `.streamlit/secrets.toml`.

Every request the page makes is logged with `context.on("request")`; the local model server
(tests/core/wire_server.py) logs every request it receives, so an image or link the model wrote that
the browser followed would show up in both.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import werkzeug.serving
from oidc_provider_mock import User
from oidc_provider_mock import app as oidc_app

from core.llm.base import JSONSchemaSpec, LLMRequest
from core.llm.demo import DemoClient
from tests.abuse.bombs import bomb_docx, bomb_pdf, whitespace_docx
from tests.abuse.hostile import MARK, _poison, payload
from tests.core.wire_server import Scripted, WireServer
from tests.e2e.conftest import AppServer, free_port
from tests.e2e.helpers import shot, wait_idle

FLOWS = ("knowledge", "review", "memory", "diagnosis")
KEY = "sk-test-E2E-ABUSE-0000000000"
LOCAL_SCHEMES = ("data:", "blob:", "about:")


def _hostile_reply(host: str):  # type: ignore[no-untyped-def]
    """The wire server's reply to any request: a schema instance or text, with the payload planted."""
    demo = DemoClient("wire-hostile")
    text = MARK + payload(host)

    def make(body: Any) -> str:
        fmt = (body or {}).get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
        messages = (body or {}).get("messages") or [{"role": "user", "content": "x"}]
        if isinstance(schema, dict):
            reply = demo.complete(LLMRequest(messages, JSONSchemaSpec("x", schema)))
            return json.dumps(_poison(json.loads(reply.text), text), ensure_ascii=False)
        return text + "\n\n本文です。"

    return make


@pytest.fixture
def hostile_wire() -> Iterator[WireServer]:
    with WireServer() as server:
        server.default = Scripted(kind="text", make_text=_hostile_reply(f"127.0.0.1:{server.port}"))
        yield server


def _logged_context(browser, origin: str) -> tuple[Any, list[str]]:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    seen: list[str] = []
    context.on("request", lambda request: seen.append(request.url))
    return context, seen


def _outside(seen: list[str], origin: str) -> list[str]:
    return [u for u in seen if not u.startswith(origin) and not u.startswith(LOCAL_SCHEMES)]


def _demo(page, origin: str, flow: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(origin)
    wait_idle(page)
    page.locator(f".st-key-home_demo_{flow} button").click()
    wait_idle(page, timeout=90_000)
    page.wait_for_timeout(500)
    wait_idle(page, timeout=90_000)


def test_no_page_fetches_anything_outside_the_app(browser, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # An app of its own: the four demos write data (the memory samples among them) that the shared
    # `app_url` server's other tests expect not to be there yet (test_memory_e2e loads the samples).
    app = AppServer(tmp_path)
    app_url = app.url
    context, seen = _logged_context(browser, app_url)
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        for flow in FLOWS:
            _demo(page, app_url, flow)
        page.goto(f"{app_url}/debug_log")
        wait_idle(page)
        shot(page, "abuse-no-outside-requests")
        assert seen, "no request was logged"
        assert not _outside(seen, app_url), _outside(seen, app_url)[:10]
    finally:
        context.close()
        app.stop()


def test_hostile_payload_in_every_flow_fetches_nothing(browser, hostile_wire, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {
        "KATACHI_PROVIDER": "openai",
        "KATACHI_MODEL": "wire-hostile",
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": hostile_wire.openai_base_url,
    }
    app = AppServer(tmp_path, env=env)
    context, seen = _logged_context(browser, app.url)
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        for flow in FLOWS:
            _demo(page, app.url, flow)
            assert MARK in page.inner_text("body"), f"{flow}: the payload was not shown"
            shot(page, f"abuse-hostile-{flow}")
            page.get_by_test_id("stSidebarNav").get_by_text("デバッグログ").click()
            wait_idle(page)
        page.wait_for_timeout(1000)
        gets = [r.path for r in hostile_wire.requests if r.method == "GET"]
        assert not gets, f"the browser fetched what the model wrote: {gets[:5]}"
        assert not _outside(seen, app.url), _outside(seen, app.url)[:10]
        assert page.locator("img[src*='pixel']").count() == 0
        assert KEY not in page.content()
    finally:
        context.close()
        app.stop()


def test_a_bomb_in_one_session_leaves_another_served(browser, app_url) -> None:  # type: ignore[no-untyped-def]
    attacker = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    other = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    try:
        page = attacker.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{app_url}/knowledge")
        wait_idle(page)
        page.get_by_test_id("stChatInputTextArea").fill("この契約書を確認してください")
        files = [
            {"name": "bomb.docx", "mimeType": "application/octet-stream", "buffer": bomb_docx()},
            {"name": "spaces.docx", "mimeType": "application/octet-stream", "buffer": whitespace_docx()},
        ]
        started = time.monotonic()
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(files)
        # meanwhile another person's page loads and answers
        second = other.new_page()
        second.set_default_timeout(60_000)
        second.goto(f"{app_url}/review_chat")
        wait_idle(second)
        assert second.get_by_text("答案レビュー").first.is_visible()
        wait_idle(page)
        body = page.inner_text("body")
        assert "展開後のサイズが大きすぎます（bomb.docx" in body, body[:2000]
        assert "展開後のサイズが大きすぎます（spaces.docx" in body
        assert time.monotonic() - started < 15
        shot(page, "abuse-bomb-refused")
        # the typed message is still there
        assert page.get_by_test_id("stChatInputTextArea").input_value() == "この契約書を確認してください"
    finally:
        attacker.close()
        other.close()


def test_a_slow_attachment_shows_progress_and_can_be_cancelled(browser, app_url) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{app_url}/knowledge")
        wait_idle(page)
        slow = bomb_pdf(12 << 20, pages=5)  # within every limit, about 6 s to read
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
            [{"name": "slow.pdf", "mimeType": "application/pdf", "buffer": slow}]
        )
        page.get_by_text("を読み取り中").first.wait_for(timeout=20_000)
        shot(page, "abuse-attachment-progress")
        page.get_by_role("button", name="読み取りを中止").click()
        wait_idle(page)
        assert "読み取りを取り消しました（slow.pdf）" in page.inner_text("body")
    finally:
        context.close()


# A person as an identity provider could name them (issue #14): not model text, still shown as plain text.
HOSTILE_NAME = f"{MARK} ![x](http://127.0.0.1:9/pixel?name=1) <img src=http://127.0.0.1:9/pixel?html=1> **b**"


@pytest.fixture
def hostile_idp(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """oidc-provider-mock on 127.0.0.1 whose one user has the hostile name."""
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain http on the loopback
    claims = {"email": "mallory@example.com", "email_verified": True, "name": HOSTILE_NAME}
    server = werkzeug.serving.make_server(
        "127.0.0.1", 0, oidc_app(user_claims=[User(sub="mallory", claims=claims)]), threaded=True
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(5)


def test_a_hostile_name_from_the_identity_provider_is_plain_text(browser, hostile_idp, tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    secrets = f"""
[auth]
redirect_uri = "http://127.0.0.1:{port}/oauth2callback"
cookie_secret = "e2e-abuse-cookie-secret-0123456789"
client_id = "katachi-e2e"
client_secret = "e2e-client-secret"
server_metadata_url = "{hostile_idp}/.well-known/openid-configuration"
"""
    app = AppServer(tmp_path, port=port, secrets=secrets)
    context, seen = _logged_context(browser, app.url)
    context.route(
        re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort()
    )  # the provider's CDN css
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(app.url)
        wait_idle(page)
        page.get_by_test_id("stMain").get_by_role("button", name="サインイン").wait_for()
        assert not _outside(seen, app.url), _outside(seen, app.url)[:10]  # the sign-in page itself
        page.get_by_role("button", name="サインイン").click()
        page.wait_for_url(f"{hostile_idp}/oauth2/authorize**")
        page.get_by_placeholder("sub").fill("mallory")
        page.get_by_role("button", name="Authorize").click()
        page.wait_for_url(f"{app.url}/**")
        wait_idle(page)
        seen.clear()  # from here on, only the app's own pages
        page.goto(f"{app.url}/knowledge")
        wait_idle(page)
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_text(MARK).first.wait_for()
        shown = sidebar.inner_text().replace("\u200b", "")  # URLs carry a zero-width space (no autolink)
        assert "<img src=http://127.0.0.1:9/pixel?html=1>" in shown and "**b**" in shown, shown[:500]
        shot(page, "abuse-hostile-name")
        page.wait_for_timeout(500)
        assert page.locator("img[src*='pixel']").count() == 0
        assert page.locator("a[href*='pixel']").count() == 0
        assert sidebar.locator("a[href^='mailto:']").count() == 0  # the email is text, not a link
        assert "mallory@example.com" in shown
        assert not _outside(seen, app.url), _outside(seen, app.url)[:10]
    finally:
        context.close()
        app.stop()
