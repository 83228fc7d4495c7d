"""Memory page, 検索テスト tab: run retrieval on a query and see why each memory was or was not chosen."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from core.flows import memory as c
from core.flows.chat_item import history
from core.flows.memory import RetrievalResult, format_pack, retrieve, save_trace_for
from pages.ui.memory import actions
from pages.ui.shell.render import llm_caption, llm_cell

LANE_JA = {
    "vector": f"ベクトル（類似度 {c.VECTOR_MIN_SIMILARITY} 以上）",
    "trigram": "キーワード（3文字以上）",
    "bigram": "キーワード（2文字）",
    "lexical": "語（Sudachi の正規形・同義語）",
    "entity": "エンティティ",
}
SCORE_JA = {
    "vector": "類似度",
    "trigram": "全文検索の順位点（小さいほど良い）",
    "bigram": "全文検索の順位点（小さいほど良い）",
    "lexical": "全文検索の順位点（小さいほど良い）",
    "entity": "一致数",
}
KIND_JA = {"EPISODE": "会話", "FACT": "事実", "LOOP": "約束", "SUMMARY": "サマリー"}
DECISION_JA = {
    "selected": "採用",
    "over_limit": f"上限{c.MAX_INJECTED}件を超過",
    "inactive": "削除済みのため除外",
    "sensitive": f"機微度が{c.INJECT_MAX_SENSITIVITY}より高いため注入しない",
}
LANE_SHORT = {
    "vector": "ベクトル",
    "trigram": "3文字",
    "bigram": "2文字",
    "lexical": "語",
    "entity": "エンティティ",
}
# Score table columns in display order (Japanese names for the trace's fields).
COLUMNS_JA = {
    "unit_id": "ID",
    "kind": "種類",
    "decision": "判定",
    "final": "最終スコア",
    "rrf_norm": "順位統合",
    "lex": "語の重なり",
    "sem": "意味の近さ",
    "rec": "新しさ",
    "rrf": "順位統合（正規化前）",
    "lanes": "ヒットしたレーン",
    "text": "本文",
}
HOW_IT_WORKS = f"""
1. **2つの固定クエリ**: Q1 = 入力そのもの、Q2 = 直近{c.HISTORY_MESSAGES_FOR_Q2}件の会話 + `---` + 入力（Q1と同じなら1回だけ）。
2. **候補集め（LLMなし）**: クエリごとに各レーン最大{c.LANE_K}件。
   - ベクトル: 埋め込み（サイドバーの「検索の埋め込み」。既定は文の意味を読むモデルと、語の意味の近さ
     ＝「弦楽器」と「ギター」を知る語ベクトルの組み合わせ）の類似度を 0〜1 に換算した値。
     **{c.VECTOR_MIN_SIMILARITY} 未満は除外**します（低い類似度はノイズです。元の設計にない、このアプリ独自のしきい値です）。
   - キーワード: 3文字以上の語は全文検索（3文字ずつの索引）、「締切」のような2文字の語は2文字索引で探します。
   - 語: Sudachi で正規化した語と同義語（「ねこ」と「猫」、「締め切り」と「締切」、「パソコン」と「PC」）で探します。
   - エンティティ: 入力に含まれる人物・場所などの名前（別名を含む、最長一致）に結びついた記憶。
3. **順位で統合（RRF）**: 各リストの順位 r（0始まり）に 1/({c.RRF_K}+r+1) を足し合わせ、上位{c.RRF_TOP}件。
   ベクトルのリストは **{c.VECTOR_LANE_WEIGHT:g}倍** で足します（同じ言葉に票を入れるキーワード・語の3つに対し、意味で探すのは1つだけのため。このアプリ独自の重み）。
   順位統合 = その和 ÷（ヒットのあったリストすべてで1位だった場合の値。重みを含む）。
4. **再ランク**: 最終スコア = {c.W_RRF:.2f}·順位統合 + {c.W_LEX:.2f}·max(語の重なり, 意味の近さ) + {c.W_REC:.2f}·新しさ。
   意味の近さ = ベクトルの類似度（0〜1 に換算したもの）。
   語の重なり = 3文字ずつの一致率（ダイス係数。クエリ末尾{c.LEX_CHARS}字 × 記憶の先頭{c.LEX_CHARS}字）×
   （クエリの3文字組の数 ÷ {c.LEX_FULL_GRAMS}、最大1）、新しさ = exp(−経過日数/{c.RECENCY_TAU_DAYS:g})。
5. **選別**: 最終スコア {c.DROP_BELOW:.2f} 未満は捨てる → 採用済みとの重なり {c.DEDUPE_OVERLAP:.2f} 以上は重複として飛ばす →
   最大{c.MAX_INJECTED}件 → 最高点が {c.INJECT_MIN_BEST:.2f} 未満なら何も注入しない。
   削除済みの記憶と、機微度 {c.INJECT_MAX_SENSITIVITY + 1}（秘密）の記憶は注入しません。
6. **事実**: 最新{c.FACT_POOL}件から {c.FACT_W_CONFIDENCE:.2f}·確信度 + {c.FACT_W_SALIENCE:.2f}·重要度 +
   {c.FACT_W_RECENCY:.2f}·exp(−経過日数/{c.RECENCY_TAU_DAYS:g}) + {c.FACT_W_PIN:.2f}·固定 の上位{c.FACT_TOP}件
   （有効期限切れは除外、「名前」「目標」など1つしか成り立たない述語は最新のみ）。
"""


def _decision(text: str) -> str:
    if text.startswith("below_"):
        return f"最終スコアが {text.removeprefix('below_')} 未満"
    if text.startswith("duplicate_of_"):
        return f"#{text.removeprefix('duplicate_of_')} とほぼ重複"
    if text.startswith("best_below_"):
        return f"最高点が {text.removeprefix('best_below_')} 未満のため注入なし"
    return DECISION_JA.get(text, text)


def _lane_title(name: str) -> str:
    lane, _, query = name.partition("/")
    return f"{LANE_JA.get(lane, lane)} / {query}"


def score_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Candidate rows of a trace (scoring.Candidate.row(), optionally with "text") as a Japanese table."""
    out = []
    for row in rows:
        lanes = [n.partition("/") for n in str(row.get("lanes", "")).split(",") if n]
        out.append(
            {
                **row,
                "kind": KIND_JA.get(row["kind"], row["kind"]),
                "lanes": "・".join(LANE_SHORT.get(lane, lane) + query for lane, _, query in lanes),
                "decision": _decision(row["decision"]),
            }
        )
    columns = [col for col in COLUMNS_JA if col in out[0]] if out else list(COLUMNS_JA)
    return pd.DataFrame(out, columns=columns).rename(columns=COLUMNS_JA)


def _render_lanes(result: RetrievalResult) -> None:
    st.markdown("#### レーンごとのヒット")
    lane_cols = st.columns(2)
    for i, (lane, hits) in enumerate(result.lanes.items()):
        with lane_cols[i % 2]:
            st.markdown(f"**{_lane_title(lane)}**（{len(hits)}件）")
            if hits:
                score = SCORE_JA.get(lane.partition("/")[0], "生スコア")
                st.dataframe(
                    pd.DataFrame(hits).rename(columns={"rank": "順位", "unit_id": "ID", "raw_score": score}),
                    hide_index=True,
                    height=180,
                    width="stretch",
                )


def _render_scores(result: RetrievalResult) -> None:
    st.markdown(
        f"#### スコア表（最終スコア = {c.W_RRF:.2f}·順位統合 + {c.W_LEX:.2f}·max(語の重なり, 意味の近さ) + "
        f"{c.W_REC:.2f}·新しさ）"
    )
    rows = [{**cand.row(), "text": cand.body[:80]} for cand in result.candidates]
    if rows:
        st.dataframe(score_table(rows), hide_index=True, width="stretch")
    else:
        st.caption("どのレーンにもヒットしませんでした。")
    st.markdown("#### 事実のスコア（上位だけが注入されます）")
    if result.facts:
        facts = [
            {
                "ID": f.unit_id,
                "内容": llm_cell(result.texts.get(f.unit_id, "")),
                "確信度": round(f.confidence, 2),
                "重要度": round(f.salience, 2),
                "新しさ": f.rec,
                "固定": bool(f.pin),
                "スコア": f.score,
            }
            for f in result.facts
        ]
        st.dataframe(pd.DataFrame(facts), hide_index=True, width="stretch")
    else:
        st.caption("注入できる事実はありません。")


def render_search() -> None:
    st.caption(
        "会話と同じ検索を、LLMを使わずに実行します。ある記憶がなぜ選ばれたか（選ばれなかったか）を、"
        "レーンごとのヒットとスコア表で確かめられます。"
    )
    with st.expander("検索の仕組みとしきい値", icon=":material/help:"):
        st.markdown(HOW_IT_WORKS)
    query = st.text_input(
        "検索したい発話", key="memory_search_query", placeholder="例: 田中さんとラーメンの話、覚えてる？"
    )
    use_history = st.checkbox(
        f"会話タブの直近{c.HISTORY_MESSAGES_FOR_Q2}件を文脈（Q2）に含める",
        value=True,
        key="memory_search_history",
    )
    if st.button("検索する", key="memory_search_run", icon=":material/search:", type="primary"):
        if not query.strip():
            st.warning("検索したい発話を入力してください。")
        else:
            context = history(st.session_state.chat["memory"]) if use_history else []
            try:
                found = retrieve(actions.repo(), actions.collection(), context, query.strip())
                save_trace_for(actions.repo(), found, source="search_test")
            except Exception:  # noqa: BLE001 - the user sees a message, never a traceback
                st.error("検索中にエラーが発生しました。記憶の索引を確認するか、もう一度お試しください。")
                return
            st.session_state["memory_search_last"] = found
    result = st.session_state.get("memory_search_last")
    if result is None:
        return
    st.text(f"Q1（入力）: {result.q1}")
    st.text(
        "Q2（直近の会話 + 入力）:\n" + result.q2 if result.q2 != result.q1 else "Q2: Q1と同じため1回だけ検索"
    )
    if result.matched_entities:
        llm_caption("エンティティ一致: " + "、".join(result.matched_entities))
    st.caption(f"検索時間 {result.elapsed_ms:.1f} ms")
    _render_lanes(result)
    _render_scores(result)
    st.markdown("#### 注入される内容")
    st.text(format_pack(result))
