"""Memory page: the repository and collection, the toolbar (sample memories, summaries now, retry
extraction), the one-click demo."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.flows.memory import (
    DEMO_TURNS,
    SAMPLE_EPISODES,
    SummaryOutcome,
    counts,
    load_demo_samples,
    memory_collection,
    memory_job_key,
    memory_repository,
    reconcile_memory_index,
    retry_pending_extractions,
    run_summaries,
)
from pages.ui.shell import state


def repo() -> Any:
    """The signed-in person's memory repository on the shared engine (the clock is UTC now)."""
    return memory_repository(state.engine(), state.person())


def collection() -> Any:
    """The signed-in person's memory units collection on the shared Chroma client."""
    return memory_collection(state.chroma(), state.person(), state.embedder())


def job_key() -> tuple[str, str]:
    """The worker key of this person's memory jobs."""
    return memory_job_key(state.person().id)


def reconcile_on_start() -> None:
    """Once per process, data dir, person and embedder, on the first visit of their memory page: make the
    person's units and their Chroma collection agree (after a crash; after another embedder was chosen, every
    unit is embedded again, with a progress bar) and say so when it changed something."""
    key = ("memory", str(state.settings().data_dir), state.person().id, state.embedder().key)
    try:
        report = state.once_per_process(
            key,
            "記憶の索引を作っています…",
            lambda progress: reconcile_memory_index(repo(), collection(), progress=progress),
        )
    except Exception:  # noqa: BLE001 - the page works without it; the button says what failed
        return
    if report is not None and report.changed and not st.session_state.get("memory_reconcile_seen"):
        st.session_state["memory_reconcile_seen"] = True
        st.session_state["memory_notice"] = report.describe()


def load_samples() -> int:
    """Load the seeded sample conversation (the flow uses the offline demo model) with a progress bar in a
    status box; 0 when already loaded."""
    with st.status("サンプル記憶を読み込んでいます…", expanded=True) as box:
        bar = st.progress(0.0, text="会話を記憶に整理しています…")

        def progress(done: int, total: int) -> None:
            bar.progress(done / total, text=f"会話を記憶に整理しています…（{done} / {total} 件）")

        loaded = load_demo_samples(repo(), collection(), state.sink(), progress=progress)
        box.update(label=f"サンプル記憶を {loaded} 件読み込みました", state="complete", expanded=False)
    return loaded


def load_demo() -> None:
    """One-click demo: sample memories (once) and the first demo turn."""
    if counts(repo()).get("EPISODE", 0) == 0:
        try:
            load_samples()
        except Exception:  # noqa: BLE001 - the user sees a message, never a traceback
            st.session_state["memory_error"] = (
                "サンプル記憶の読み込み中にエラーが発生しました。もう一度お試しください。"
            )
            return
    if not st.session_state.chat["memory"]:
        st.session_state["memory_pending_input"] = DEMO_TURNS[0]
    st.toast("サンプル記憶を読み込みました。会話タブで続きを話しかけてみてください。")


def render_toolbar() -> None:
    n = counts(repo())
    with st.container(border=True):
        st.markdown(
            f"**記憶の件数** エピソード {n.get('EPISODE', 0)} ・ 事実 {n.get('FACT', 0)} ・ "
            f"約束 {n.get('LOOP', 0)} ・ サマリー {n.get('SUMMARY', 0)}"
        )
        # one row that wraps, each button as wide as its label (four equal columns cut the labels at 1280 px)
        row = st.container(horizontal=True, gap="small")
        if row.button(
            "サンプル記憶を読み込む",
            key="memory_load_samples",
            icon=":material/upload:",
            help=f"約{SAMPLE_EPISODES}件の会話（固定シード）を、デモモデルで抽出しながら読み込みます。",
        ):
            try:
                loaded = load_samples()
            except Exception:  # noqa: BLE001 - the user sees a message, never a traceback
                st.session_state["memory_error"] = "サンプル記憶の読み込み中にエラーが発生しました。"
            else:
                st.session_state["memory_notice"] = (
                    f"サンプル記憶を {loaded} 件読み込みました。"
                    if loaded
                    else "サンプル記憶はすでに読み込まれています（同じ会話を重ねて追加しないため、何もしませんでした）。"
                )
            st.rerun()
        if row.button("サマリーを今すぐ作成", key="memory_run_summaries", icon=":material/summarize:"):
            try:
                with st.spinner("サマリーを作成しています…"):
                    outcomes = run_summaries(
                        repo(), collection(), state.client(), sink=state.sink(), force=True
                    )
            except Exception:  # noqa: BLE001 - the user sees a message, never a traceback
                st.session_state["memory_error"] = "サマリーの作成中にエラーが発生しました。"
            else:
                st.session_state["memory_notice"] = summaries_notice(outcomes)
            st.rerun()
        if row.button(
            "抽出を再試行",
            key="memory_retry_extraction",
            icon=":material/refresh:",
            help="失敗したエピソードの抽出（人物・事実・約束）をやり直します。",
        ):
            try:
                with st.spinner("抽出をやり直しています…"):
                    results = retry_pending_extractions(
                        repo(), collection(), state.client(), sink=state.sink(), limit=10
                    )
            except Exception:  # noqa: BLE001 - the user sees a message, never a traceback
                st.session_state["memory_error"] = "抽出の再試行中にエラーが発生しました。"
            else:
                st.session_state["memory_notice"] = (
                    f"{len(results)} 件を再試行し、{sum(r.ok for r in results)} 件成功しました。"
                    if results
                    else "再試行が必要なエピソードはありません。"
                )
            st.rerun()
        if row.button(
            "索引を照合",
            key="memory_reconcile",
            icon=":material/sync:",
            help="データベースとベクトル索引（Chroma）を突き合わせ、索引のない記憶を登録し、記憶のないベクトルを削除します。",
        ):
            try:
                with st.spinner("索引を照合しています…"):
                    report = reconcile_memory_index(repo(), collection())
            except Exception:  # noqa: BLE001 - the user sees a message, never a traceback
                st.session_state["memory_error"] = "索引の照合中にエラーが発生しました。"
            else:
                st.session_state["memory_notice"] = report.describe()
            st.rerun()
        show_notices()  # inside the toolbar box, so the tabs below keep their place (and their selection)


def show_notices() -> None:
    """The outcome of the last action (set before st.rerun)."""
    notice = st.session_state.pop("memory_notice", None)
    if notice:
        st.success(notice)
    error = st.session_state.pop("memory_error", None)
    if error:
        st.error(error)


def summaries_notice(outcomes: list[SummaryOutcome]) -> str:
    """「サマリーを 3 件作成しました。」 with the names, and the first failure if any."""
    if not outcomes:
        return "サマリーの対象になるエピソードがありません。"
    made = [o.label() for o in outcomes if o.ok]
    failed = [o for o in outcomes if not o.ok]
    text = f"サマリーを {len(made)} 件作成しました" + (f"（{'、'.join(made)}）。" if made else "。")
    if failed:
        text += f" 失敗 {len(failed)} 件: {failed[0].label()} — {failed[0].message}"
    return text
