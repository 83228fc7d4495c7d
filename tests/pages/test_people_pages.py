"""Pages as two signed-in people (issue #14; AppTest with `[auth]` in the secrets and st.user given): nothing but
the sign-in page before sign-in; each person sees only their own interviews, threads, memories and bookings,
by list and by deep link; the knowledge base is shared with its authors; admins see the team's counts.
"""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.flows.diagnosis.booking import list_bookings
from core.flows.diagnosis.deps import open_deps
from core.flows.diagnosis.models import ChatRequest
from core.flows.diagnosis.service import ChatService
from core.flows.diagnosis.service import run_turn as run_diagnosis
from core.flows.knowledge import base as kb
from core.flows.knowledge import turn as kt
from core.flows.knowledge.stores import knowledge_stores
from core.flows.memory.chat import run_turn
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.registry import demo_client
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import open_store
from core.store.diagnosis import DiagnosisRepository
from tests.core.diagnosis_fixtures import diag
from tests.pages.conftest import claims, make_app, make_signed_in_app
from tests.persons import ADMIN, ALICE, BOB

ALICE_USER = claims("alice", ALICE.name, ALICE.email)
BOB_USER = claims("bob", BOB.name, BOB.email)
ADMIN_USER = claims("carol", ADMIN.name, ADMIN.email)
ADMINS = [ADMIN.email]
SECRET = "来月転職する予定で、上司の佐藤さんにはまだ言っていない"
CUSTOMER = {"booking_type": "visit", "name": "顧客一郎", "phone": "090-1111-2222"}


def page_text(at: AppTest) -> str:
    """Everything a person can read on the page (text elements and tables)."""
    parts = [
        e.value
        for kind in ("markdown", "caption", "info", "warning", "success", "text")
        for e in at.get(kind)
    ]
    parts += [e.value.to_string() for e in at.dataframe]
    parts += [str(o) for box in at.selectbox for o in box.options]
    return "\n".join(str(p) for p in parts)


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def test_before_sign_in_only_the_sign_in_page_is_shown(tmp_path: Path) -> None:
    at = make_signed_in_app(tmp_path, {"is_logged_in": False})
    assert not at.exception
    assert [b.label for b in at.button] == ["サインイン"]
    assert at.title[0].value == "Katachi（形）"
    assert "chat" not in at.session_state and "app_person" not in at.session_state
    assert not at.sidebar.selectbox  # no settings, no pages
    assert "ログアウト" not in [b.label for b in at.button]


def test_the_sidebar_names_the_signed_in_person_and_offers_logout(tmp_path: Path) -> None:
    at = make_signed_in_app(tmp_path, ALICE_USER)
    assert not at.exception and at.session_state["app_person"] == ALICE
    assert any(ALICE.name in m.value for m in at.sidebar.markdown)
    assert "ログアウト" in [b.label for b in at.sidebar.button]


def test_without_auth_the_app_runs_as_the_local_person_and_says_so(tmp_path: Path) -> None:
    at = make_app(tmp_path)
    assert at.session_state["app_person"] == LOCAL_PERSON
    assert any("ローカル利用者" in c.value and "サインインなし" in c.value for c in at.sidebar.caption)
    assert "ログアウト" not in [b.label for b in at.sidebar.button]


def test_a_review_thread_link_of_another_person_reads_not_found(tmp_path: Path) -> None:
    alice = make_signed_in_app(tmp_path, ALICE_USER, page="pages/review_chat.py", client=ReplayClient(["A1"]))
    alice.text_area(key="review_draft").input("§11 はどう評価されていますか？")
    alice.button(key="review_send").click()
    run(alice)
    thread = alice.session_state["review_thread_id"]
    assert thread is not None and alice.query_params["review_thread"] == str(thread)

    bob = make_signed_in_app(
        tmp_path, BOB_USER, page="pages/review_chat.py", query={"review_thread": str(thread)}
    )
    assert not bob.exception
    assert any("見つかりません" in w.value for w in bob.warning)
    assert bob.session_state["review_thread_id"] is None and bob.session_state["chat"]["review"] == []
    assert bob.selectbox(key="review_thread_picker").options == ["新しいスレッド"]
    assert "§11 はどう評価" not in page_text(bob)

    again = make_signed_in_app(
        tmp_path, ALICE_USER, page="pages/review_chat.py", query={"review_thread": str(thread)}
    )
    assert again.session_state["review_thread_id"] == thread
    assert [i["content"] for i in again.session_state["chat"]["review"]] == [
        "§11 はどう評価されていますか？",
        "A1",
    ]


def alice_interview(tmp_path: Path) -> str:
    stores = knowledge_stores(open_store(tmp_path), ALICE)
    turn = {
        "control": {"schema_version": "1.0", "mode": "interview"},
        "state": {"phase": "collect_case", "missing_info": []},
        "assistant_message": "契約書の種類を教えてください。",
        "knowledge_json": None,
    }
    outcome = kt.run_turn(
        [],
        kt.TurnInput("アリスだけの相談：取引先Xとの秘密保持契約"),
        interview_id=None,
        client=ReplayClient([json.dumps(turn, ensure_ascii=False)]),
        repo=stores.interviews,
    )
    entry = {
        "contract_type": "秘密保持契約",
        "knowledge_title": "共有ナレッジ：存続期間",
        "target_clause": "第8条",
        "review_points": "存続期間",
        "action_plan": "5年とする",
        "clause_sample": "本契約終了後5年間存続する。",
    }
    kb.save_draft(stores.base, entry, by=ALICE, interview_id=outcome.interview_id, saved_entry_id=None)
    assert outcome.interview_id is not None
    return outcome.interview_id


def test_interviews_are_private_and_the_knowledge_base_is_shared(tmp_path: Path) -> None:
    interview = alice_interview(tmp_path)
    bob = make_signed_in_app(tmp_path, BOB_USER, page="pages/knowledge.py", query={"interview": interview})
    assert not bob.exception
    assert (
        bob.session_state["chat"]["knowledge"] == [] and bob.session_state["knowledge_interview_id"] is None
    )
    assert "interview" not in bob.query_params
    text = page_text(bob)
    assert "あなたが記録した聞き取りはまだありません" in text and "アリスだけの相談" not in text
    assert "共有ナレッジ：存続期間" in text and ALICE.name in text  # shared, with its author
    assert "チーム全体の分析" not in text

    alice = make_signed_in_app(
        tmp_path, ALICE_USER, page="pages/knowledge.py", query={"interview": interview}
    )
    assert alice.session_state["knowledge_interview_id"] == interview
    assert alice.session_state["chat"]["knowledge"][0]["content"].endswith(
        "アリスだけの相談：取引先Xとの秘密保持契約"
    )

    admin = make_signed_in_app(tmp_path, ADMIN_USER, page="pages/knowledge.py", admins=ADMINS)
    text = page_text(admin)
    assert "チーム全体の分析（管理者）" in text and "アリスだけの相談" not in text
    assert ALICE.name in text  # the per-person counts name the people who interviewed


def test_memories_are_one_companion_per_person(tmp_path: Path) -> None:
    repo = memory_repository(open_store(tmp_path), ALICE)
    _, told = run_turn(repo, memory_collection(open_chroma(tmp_path), ALICE), demo_client(), [], SECRET)
    assert told.ok
    bob = make_signed_in_app(tmp_path, BOB_USER, page="pages/memory.py")
    assert not bob.exception
    assert "転職" not in page_text(bob) and "佐藤" not in page_text(bob)
    alice = make_signed_in_app(tmp_path, ALICE_USER, page="pages/memory.py")
    assert "転職" in page_text(alice)


def test_memory_index_is_reconciled_per_person_when_their_page_opens(tmp_path: Path) -> None:
    """Issue #15's reconcile on start, per person (issue #14): Bob's first visit checks only his own units
    and collection; Alice's first visit restores the vector a crash took from her collection."""
    chroma = open_chroma(tmp_path)
    repo, vectors = memory_repository(open_store(tmp_path), ALICE), memory_collection(chroma, ALICE)
    _, told = run_turn(repo, vectors, demo_client(), [], SECRET)
    assert told.ok and told.episode_id is not None
    vectors.delete(ids=[str(told.episode_id)])  # a crash between the commit and the Chroma upsert
    bob = make_signed_in_app(tmp_path, BOB_USER, page="pages/memory.py")
    assert not bob.exception
    assert "記憶の索引を照合しました" not in page_text(bob)
    assert memory_collection(chroma, BOB).count() == 0
    assert str(told.episode_id) not in vectors.get(include=[])["ids"]  # Bob's visit left Alice's alone
    alice = make_signed_in_app(tmp_path, ALICE_USER, page="pages/memory.py")
    assert not alice.exception
    assert "記憶の索引を照合しました" in page_text(alice)
    assert str(told.episode_id) in vectors.get(include=[])["ids"]


def diagnosis_page(tmp_path: Path, user: dict[str, object], admins: list[str] | None = None) -> AppTest:
    """The diagnosis page past the vehicle step (the one-click demo), where the bookings are listed."""
    at = make_signed_in_app(tmp_path, user, page="pages/diagnosis.py", admins=admins)
    at.session_state["diagnosis_demo_request"] = True
    return run(at)


def test_bookings_are_listed_for_their_person_and_the_team_for_admins(tmp_path: Path) -> None:
    engine = open_store(tmp_path)
    DiagnosisRepository(engine, owner_id=ALICE.id).save_booking(CUSTOMER)
    assert list_bookings(engine, BOB) == []
    bob = diagnosis_page(tmp_path, BOB_USER)
    assert "予約一覧（あなたが受け付けた予約）" in [e.label for e in bob.expander]
    assert "顧客一郎" not in page_text(bob) and "090-1111-2222" not in page_text(bob)
    assert "チーム全体の予約（管理者）" not in [e.label for e in bob.expander]
    assert "顧客一郎" in page_text(diagnosis_page(tmp_path, ALICE_USER))
    admin = diagnosis_page(tmp_path, ADMIN_USER, admins=ADMINS)
    assert "チーム全体の予約（管理者）" in [e.label for e in admin.expander]
    assert "顧客一郎" in page_text(admin) and ALICE.name in page_text(admin)


def test_a_diagnosis_link_of_another_person_reads_not_found(tmp_path: Path) -> None:
    engine = open_store(tmp_path)
    deps = open_deps(ReplayClient([diag(message="いつ音がしますか？")]), engine, ALICE)
    service = ChatService()  # not the page's: the session comes back from the store, as after a restart
    session, _ = run_diagnosis(
        service, ChatRequest(action="select_vehicle", action_value="minato-soleil-2022"), deps
    )
    for request in (
        ChatRequest(action="photo_confirm", action_value="yes"),
        ChatRequest(message="ドアがきしむ"),
    ):
        request.session_id = session.session_id
        run_diagnosis(service, request, deps)
    link = {"diagnosis": session.session_id}
    bob = make_signed_in_app(tmp_path, BOB_USER, page="pages/diagnosis.py", query=link)
    assert not bob.exception
    assert any("見つかりません" in w.value for w in bob.warning)
    assert "ドアがきしむ" not in page_text(bob)
    assert bob.query_params["diagnosis"] == bob.session_state["diagnosis_session_id"] != session.session_id
    alice = make_signed_in_app(tmp_path, ALICE_USER, page="pages/diagnosis.py", query=link)
    assert not alice.exception and not [w for w in alice.warning if "見つかりません" in w.value]
    assert "ドアがきしむ" in page_text(alice)
    assert alice.query_params["diagnosis"] == session.session_id
