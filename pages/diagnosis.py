"""車両診断: vehicle, photo, symptom interview with choice buttons, urgency, rewind, booking (spec 04)."""

import streamlit as st

from core.flows.diagnosis import (
    FREE_INPUT_VALUE,
    ChatRequest,
    ChatStep,
    PromptInfo,
    find_vehicle,
    load_vehicles,
    local_now,
    snapshot_turns,
    turn_preview,
)
from pages.ui.diagnosis import widgets as w
from pages.ui.diagnosis.session import (
    bookings,
    current_session,
    ensure_index,
    failed_request_card,
    load_demo,
    restart,
    send,
    team_bookings_view,
)
from pages.ui.shell import chat_scroll, last_call, state
from pages.ui.shell.error_card import fallback_notice
from pages.ui.shell.render import llm_caption, llm_markdown

state.ensure_shell("pages/diagnosis.py")
ss = st.session_state
st.title("車両診断")
st.caption(
    "症状を聞き取り、取扱説明書を検索して原因を絞り込みます。危険な症状はすぐに予約・出張手配へご案内します。"
)
state.demo_badge()

rag = ensure_index()
if ss.pop("diagnosis_demo_request", False):
    load_demo(rag)
session = current_session()
prompt = PromptInfo.from_dict(session.last_prompt) if session.last_prompt else None
step = session.current_step

w.step_indicator(session)
top_left, top_right = st.columns([3, 1])
if top_right.button("最初からやり直す", key="diagnosis_restart", width="stretch"):
    restart()
    st.rerun()
if top_left.button("デモを読み込む（警告灯の問診）", key="diagnosis_demo"):
    load_demo(rag)
    st.rerun()

if rag is not None:
    with st.sidebar.expander("車両診断: 取扱説明書の索引"):
        st.caption(f"登録済みの取扱説明書チャンク: {rag.chunk_count()} 件（サンプル車両 3 台分）")
        if st.button("索引を作り直す", key="diagnosis_reindex", icon=":material/refresh:"):
            bar = st.progress(0.0, text="取扱説明書を索引に登録しています…")
            count = rag.reindex(
                lambda done, total, _label: bar.progress(done / total, text=f"登録中… {done}/{total}")
            )
            bar.empty()
            st.success(f"索引を作り直しました（{count} 件）。")
        if st.button("索引を照合する", key="diagnosis_reconcile", icon=":material/sync:"):
            added, removed = rag.reconcile()
            st.success(f"索引を照合しました（登録 {added} 件・削除 {removed} 件）。")


def act(request: ChatRequest) -> None:
    """Send one request through core (which records it in the history) and redraw."""
    if send(request, rag) is not None:
        st.rerun()


# --- vehicle selection and photo confirmation -----------------------------------------------
if step == ChatStep.VEHICLE_ID:
    st.subheader("お車を選んでください")
    vehicles = load_vehicles()
    c1, c2, c3 = st.columns(3)
    make = c1.selectbox("メーカー", sorted({v.make for v in vehicles}), key="diagnosis_make")
    model = c2.selectbox("車種", sorted({v.model for v in vehicles if v.make == make}), key="diagnosis_model")
    years = sorted({v.year for v in vehicles if v.make == make and v.model == model}, reverse=True)
    year = c3.selectbox("年式", years, key="diagnosis_year")
    chosen = find_vehicle(make, model, year)
    if chosen is not None and st.button("この車両で問診を始める", key="diagnosis_select", type="primary"):
        act(ChatRequest(action="select_vehicle", action_value=chosen.vehicle_id))
    st.stop()

w.vehicle_card(session, width=260)
if step == ChatStep.PHOTO_CONFIRM and prompt is not None:
    llm_markdown(prompt.message)
    photo_choice = w.choice_buttons(prompt, "diagnosis_photo")
    if photo_choice:
        act(ChatRequest(action="photo_confirm", action_value=photo_choice["value"]))
    st.stop()


# --- rewind: above the conversation, so it is never hidden under the chat input ---------------
@st.fragment
def rewind_panel() -> None:
    """The rewind slider reruns only this panel while it moves; confirming reruns the whole page."""
    turns = snapshot_turns(session)
    if not turns:
        return
    with st.expander("やり直し: 前の質問に戻って、別の回答を試す", icon=":material/undo:"):
        if len(turns) == 1:
            target = turns[0]
        else:
            target = st.select_slider(
                "戻る質問のターン",
                options=turns,
                value=turns[-1],
                key=f"diagnosis_rewind_{turns[0]}_{turns[-1]}",  # fresh default when the turns change
                format_func=lambda t: f"ターン{t}",
            )
        question, answer = turn_preview(session, int(target))
        llm_caption(f"ターン{target}の質問: {question or '（記録なし）'}")
        if answer:
            llm_caption(f"そのときの回答: {answer}")
        if st.button(f"ターン{target}の質問に戻る", key="diagnosis_rewind_go"):
            ss["diagnosis_free_input"] = False
            act(ChatRequest(rewind_to_turn=int(target)))


rewind_panel()
if ss.get("diagnosis_last_rewound"):
    st.info(
        f"ターン{ss['diagnosis_last_rewound']}の質問に戻りました。別の回答を選んでください。",
        icon=":material/undo:",
    )

# --- conversation (chat["diagnosis"] is the session's own history list) ------------------------
w.urgency_banner(session)
w.conversation(ss.chat["diagnosis"], session.session_id)
chat_scroll.follow("diagnosis")

for failure in ss.get("diagnosis_last_failures") or []:
    fallback_notice(
        f"AIの応答を取得できませんでした（{failure['text']}）",
        error_type=failure["error_type"],
        errors=failure["errors"],
        raw=failure["raw"],
    )
failed_request_card(rag)

if prompt is not None and step not in (ChatStep.BOOKING_INFO, ChatStep.BOOKING_CONFIRM, ChatStep.DONE):
    if prompt.type in ("single_choice", "reservation_choice") and prompt.choices:
        st.caption("選択肢から選ぶか、下の入力欄に自由に入力してください。")
        choice = w.choice_buttons(prompt, f"diagnosis_choice_t{session.diagnostic_turn}_{step}")
        if choice and choice["value"] == FREE_INPUT_VALUE:
            ss["diagnosis_free_input"] = True
            w.focus_chat_input()
        elif choice:
            act(ChatRequest(action=prompt.action, action_value=choice["value"]))
    if ss.get("diagnosis_free_input"):
        st.info("画面下の入力欄に、症状や状況を自由に入力してください。", icon=":material/edit:")

# --- booking form, confirmation, done ------------------------------------------------------
if prompt is not None and step == ChatStep.BOOKING_INFO:
    st.subheader("予約情報の入力")
    llm_markdown(prompt.message)
    submitted = w.booking_form(session, prompt, local_now())
    if submitted:
        act(ChatRequest(action="submit_booking", action_value=submitted))
    if st.button("予約方法の選択に戻る", key="diagnosis_back"):
        act(ChatRequest(action="back"))
elif prompt is not None and step == ChatStep.BOOKING_CONFIRM:
    st.subheader("予約内容の確認")
    llm_markdown(prompt.message)
    w.booking_summary_table(prompt)
    choice = w.choice_buttons(prompt, "diagnosis_confirm")
    if choice:
        act(ChatRequest(action="booking_confirm", action_value=choice["value"]))
elif step == ChatStep.DONE:
    st.success("問診は完了しました。新しい症状は「最初からやり直す」から始めてください。")
    if st.button("最初からやり直す", key="diagnosis_restart_done", type="primary"):
        restart()
        st.rerun()


# --- sources, LLM I/O, bookings ------------------------------------------------------------
w.coverage_note(session)
w.sources_expander(session)
last_call.render("diagnosis")
with st.expander("予約一覧（あなたが受け付けた予約）", expanded=step == ChatStep.DONE):
    w.bookings_table(bookings())
team = team_bookings_view()
if team is not None:
    with st.expander("チーム全体の予約（管理者）", icon=":material/groups:"):
        w.bookings_table(*team)

if step in (ChatStep.FREE_TEXT, ChatStep.DIAGNOSING, ChatStep.SPEC_CHECK):
    placeholder = (
        "症状を入力してください（例: ブレーキを踏むとキーキー音がする）"
        if step == ChatStep.FREE_TEXT
        else "回答や気になることを自由に入力…"
    )
    typed = st.chat_input(placeholder, key="diagnosis_input")
    if typed:
        ss["diagnosis_free_input"] = False
        act(ChatRequest(message=typed))
