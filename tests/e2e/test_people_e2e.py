"""Browser: sign in through a real OpenID Connect provider (oidc-provider-mock on 127.0.0.1) as two people in
two browser contexts (issue #14). Neither sees the other's memories, review threads, interviews or bookings,
by list or by deep link; both see the shared knowledge base with the right authors; sign-out works.

The app runs with `[auth]` in a secrets file of its own (`--secrets.files`), never the repository's.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import werkzeug.serving
from oidc_provider_mock import User
from oidc_provider_mock import app as oidc_app

from core.flows.knowledge import demo as kd
from core.store import open_store
from core.store.diagnosis import DiagnosisRepository
from tests.e2e.conftest import AppServer, free_port
from tests.e2e.helpers import shot, wait_idle

pytestmark = pytest.mark.e2e

PEOPLE = {
    "alice": {"email": "alice@example.com", "email_verified": True, "name": "山田 花子"},
    "bob": {"email": "bob@example.com", "email_verified": True, "name": "佐藤 太郎"},
}
SECRET = "来月転職する予定で、上司の佐藤さんにはまだ言っていない"
MEMORY_QUESTION = "佐藤さんに転職のことをいつ話せばいいと思う？"
ALICE_QUESTION = "アリスの質問：§11 の書き方で減点されたのはどこですか？"
ALICE_CUSTOMER = {"booking_type": "visit", "name": "顧客花子", "phone": "090-5555-6666"}
NOT_LOCAL = re.compile(r"^https?://(?!127\.0\.0\.1[:/])")  # the provider's pages link a CDN stylesheet


@dataclass
class SignedIn:
    app: AppServer
    idp: str

    def person_id(self, sub: str) -> str:
        return f"{self.idp}|{sub}"  # core.people.person_id_from_claims: issuer | subject


@pytest.fixture(scope="module")
def idp(monkeypatch_module: pytest.MonkeyPatch) -> Iterator[str]:
    """oidc-provider-mock on 127.0.0.1 with Alice and Bob as its users."""
    monkeypatch_module.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain http on the loopback
    users = [User(sub=sub, claims=claims) for sub, claims in PEOPLE.items()]
    server = werkzeug.serving.make_server("127.0.0.1", 0, oidc_app(user_claims=users), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(5)


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def signed_in(idp: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SignedIn]:
    port = free_port()
    secrets = f"""
[auth]
redirect_uri = "http://127.0.0.1:{port}/oauth2callback"
cookie_secret = "e2e-cookie-secret-0123456789abcdef"
client_id = "katachi-e2e"
client_secret = "e2e-client-secret"
server_metadata_url = "{idp}/.well-known/openid-configuration"

[katachi]
admins = []
"""
    server = AppServer(tmp_path_factory.mktemp("e2e-people"), port=port, secrets=secrets)
    yield SignedIn(server, idp)
    server.stop()


def sign_in(browser, signed_in: SignedIn, sub: str):  # type: ignore[no-untyped-def]
    """A browser context of its own (another profile), signed in as `sub` through the provider's form."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    context.route(NOT_LOCAL, lambda route: route.abort())
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(signed_in.app.url)
    wait_idle(page)
    main = page.get_by_test_id("stMain")
    main.get_by_role("button", name="サインイン").wait_for()
    assert "LLMの設定" not in page.content()  # nothing but the sign-in page before sign-in
    page.get_by_role("button", name="サインイン").click()
    page.wait_for_url(f"{signed_in.idp}/oauth2/authorize**")
    page.get_by_placeholder("sub").fill(sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{signed_in.app.url}/**")
    wait_idle(page)
    page.get_by_test_id("stSidebar").get_by_text(PEOPLE[sub]["name"]).wait_for()
    return context, page


def last_call_text(page) -> str:  # type: ignore[no-untyped-def]
    """What the model was given and returned for the last turn (the shared expander, opened)."""
    expander = page.get_by_test_id("stExpander").filter(has_text="直近のターンでLLMに渡した内容と返答").first
    for _ in range(3):  # a rerun of a status fragment can redraw the expander closed while it is clicked
        if expander.get_by_text("送信メッセージ").first.is_visible():
            break
        expander.get_by_text("直近のターンでLLMに渡した内容と返答").click()
        wait_idle(page)
    expander.get_by_text("送信メッセージ").first.wait_for()
    return str(expander.inner_text())


def open_nav(page, title: str) -> None:  # type: ignore[no-untyped-def]
    page.get_by_test_id("stSidebarNav").get_by_text(title).click()
    wait_idle(page)


def chat(page, text: str, timeout: float = 60_000) -> None:  # type: ignore[no-untyped-def]
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")
    wait_idle(page, timeout=timeout)


def alice_leaves_her_traces(page) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Alice: a review thread, a memory, an interview with a draft saved to the knowledge base."""
    main = page.get_by_test_id("stMain")
    open_nav(page, "答案レビュー・チャット")
    main.get_by_label("質問").fill(ALICE_QUESTION)
    main.get_by_role("button", name="送信").click()
    wait_idle(page)
    page.wait_for_url(re.compile(r"review_thread=\d+"))
    thread = re.search(r"review_thread=(\d+)", page.url).group(1)  # type: ignore[union-attr]

    open_nav(page, "コンパニオン記憶")
    chat(page, SECRET)
    main.get_by_text("このターンの記憶").first.wait_for()

    open_nav(page, "ナレッジ聞き取り")
    chat(page, kd.DEMO_OPENING)
    chat(page, kd.DEMO_SCRIPT[0])
    chat(page, kd.DEMO_SCRIPT[1])
    main.get_by_text("ナレッジの草案を作成しました").first.wait_for()
    page.wait_for_url(re.compile(r"interview=\w+"))
    interview = re.search(r"interview=(\w+)", page.url).group(1)  # type: ignore[union-attr]
    main.get_by_role("button", name="ナレッジベースに保存").click()
    wait_idle(page)
    main.get_by_text("ナレッジベースに保存しました").first.wait_for()
    shot(page, "people-alice-saved")
    return {"thread": thread, "interview": interview}


def test_two_people_see_only_their_own_data_and_share_the_knowledge_base(browser, signed_in):  # type: ignore[no-untyped-def]
    alice_context, alice = sign_in(browser, signed_in, "alice")
    shot(alice, "people-alice-signed-in")
    traces = alice_leaves_her_traces(alice)
    # A booking taken by Alice (the customer's name and phone), written as the app would.
    DiagnosisRepository(
        open_store(signed_in.app.data_dir), owner_id=signed_in.person_id("alice")
    ).save_booking(ALICE_CUSTOMER)

    bob_context, bob = sign_in(browser, signed_in, "bob")
    main = bob.get_by_test_id("stMain")
    assert "山田 花子" not in bob.get_by_test_id("stSidebar").inner_text()

    # review: Alice's thread is neither listed nor reachable by its link
    bob.goto(f"{signed_in.app.url}/review_chat?review_thread={traces['thread']}")
    wait_idle(bob)
    main.get_by_text("見つかりません").first.wait_for()
    assert ALICE_QUESTION not in main.inner_text()
    shot(bob, "people-bob-thread-not-found")

    # memory: Bob asks what Alice told her companion about; what the model got holds nothing of hers
    open_nav(bob, "コンパニオン記憶")
    assert "転職" not in main.inner_text()
    chat(bob, MEMORY_QUESTION)
    main.get_by_text("このターンの記憶").first.wait_for()
    sent = last_call_text(bob)
    assert MEMORY_QUESTION in sent and "（関連する記憶はありません）" in sent
    assert "上司の佐藤さんにはまだ言っていない" not in sent and "転職する予定" not in sent
    shot(bob, "people-bob-memory")

    # knowledge: Alice's interview is neither listed nor reachable by its link; the knowledge base is shared
    bob.goto(f"{signed_in.app.url}/knowledge?interview={traces['interview']}")
    wait_idle(bob)
    main.get_by_role("heading", name="ナレッジ聞き取り").wait_for()
    assert "ナレッジの草案を作成しました" not in main.inner_text() and "interview=" not in bob.url
    bob.get_by_role("tab", name="聞き取り一覧・分析").click()
    wait_idle(bob)
    main.get_by_text("あなたが記録した聞き取りはまだありません").wait_for()
    bob.get_by_role("tab", name="ナレッジベース").click()
    wait_idle(bob)
    main.get_by_label("確認・編集するナレッジ").click()
    bob.get_by_role("option").first.click()
    wait_idle(bob)
    main.get_by_text(re.compile(r"作成: 山田 花子")).first.wait_for()  # the author, from her sign-in
    main.get_by_role("button", name="変更を保存（新しい版）").wait_for()
    shot(bob, "people-bob-shared-knowledge")

    # diagnosis: Alice's booking (her customer's name and phone) is not in Bob's list
    open_nav(bob, "車両診断")
    bob.get_by_role("button", name="デモを読み込む（警告灯の問診）").click()
    wait_idle(bob, timeout=60_000)
    bob.get_by_text("予約一覧（あなたが受け付けた予約）").click()  # a page with a chat input has no stMain
    wait_idle(bob)
    bob.get_by_text("まだ予約はありません。").wait_for()
    body = bob.inner_text("body")
    assert ALICE_CUSTOMER["name"] not in body and ALICE_CUSTOMER["phone"] not in body

    # and Alice still has all of hers: her thread by its link, her memory, her booking
    alice.goto(f"{signed_in.app.url}/review_chat?review_thread={traces['thread']}")
    wait_idle(alice)
    alice.get_by_test_id("stMain").get_by_text(ALICE_QUESTION).filter(visible=True).first.wait_for()
    open_nav(alice, "コンパニオン記憶")
    chat(alice, MEMORY_QUESTION)
    alice.get_by_test_id("stMain").get_by_text("このターンの記憶").first.wait_for()
    assert "## 関連する記憶" in last_call_text(alice)  # her own memory does come back to her
    open_nav(alice, "車両診断")
    alice.get_by_role("button", name="デモを読み込む（警告灯の問診）").click()
    wait_idle(alice, timeout=60_000)
    alice.get_by_text("予約一覧（あなたが受け付けた予約）").click()
    wait_idle(alice)
    bookings = alice.get_by_test_id("stExpander").filter(has_text="予約一覧（あなたが受け付けた予約）")
    bookings.get_by_test_id("stDataFrame").wait_for()  # her booking, under the id the app signs her in as

    # sign-out: back to the sign-in page, and a reload stays signed out
    bob.get_by_test_id("stSidebar").get_by_role("button", name="ログアウト").click()
    bob.wait_for_url(f"{signed_in.idp}/oauth2/end_session**")
    bob.get_by_role("button", name="End session").click()
    bob.wait_for_url(f"{signed_in.app.url}/**")
    wait_idle(bob)
    bob.get_by_test_id("stMain").get_by_role("button", name="サインイン").wait_for()
    bob.reload()
    wait_idle(bob)
    bob.get_by_test_id("stMain").get_by_role("button", name="サインイン").wait_for()
    assert "佐藤 太郎" not in bob.content()
    shot(bob, "people-bob-signed-out")
    alice_context.close()
    bob_context.close()
