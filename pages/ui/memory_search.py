"""Memory page, 検索テスト tab: run retrieval on a query and see why each memory was or was not chosen."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.flows.memory.retrieval import format_pack, retrieve, save_trace_for
from pages.ui import memory_actions as actions

DECISION_JA = {"selected": "採用", "over_limit": "上限5件を超過", "inactive": "削除済み"}


def _decision(text: str) -> str:
    if text.startswith("below_"):
        return f"スコア{text.removeprefix('below_')}未満"
    if text.startswith("duplicate_of_"):
        return f"#{text.removeprefix('duplicate_of_')} とほぼ重複"
    if text.startswith("best_below_"):
        return f"最高スコアが{text.removeprefix('best_below_')}未満のため注入なし"
    return DECISION_JA.get(text, text)


def render_search() -> None:
    st.caption(
        "会話と同じ検索（ベクトル・キーワード〈3文字以上/2文字〉・エンティティの4レーン → RRF → 再ランク）を、"
        "LLMを使わずに実行します。直近の会話を文脈（Q2）として使います。"
    )
    query = st.text_input(
        "検索したい発話", key="memory_search_query", placeholder="例: 田中さんとラーメンの話、覚えてる？"
    )
    use_history = st.checkbox("会話タブの直近6件を文脈に含める", value=True, key="memory_search_history")
    if (
        not st.button("検索する", key="memory_search_run", icon=":material/search:", type="primary")
        or not query.strip()
    ):
        return
    history = [m for m in st.session_state.chat["memory"] if not m.get("error")] if use_history else []
    result = retrieve(actions.engine(), actions.collection(), history, query.strip(), actions.now())
    save_trace_for(actions.engine(), result, actions.now(), "search_test")
    st.markdown(f"**Q1**（入力）: {result.q1}")
    st.text(
        "Q2（直近の会話 + 入力）:\n" + result.q2 if result.q2 != result.q1 else "Q2: Q1と同じため1回だけ検索"
    )
    if result.matched_entities:
        st.caption("エンティティ一致: " + "、".join(result.matched_entities))
    st.caption(f"検索時間 {result.elapsed_ms:.1f} ms")
    st.markdown("#### レーンごとのヒット")
    lane_cols = st.columns(2)
    for i, (lane, hits) in enumerate(result.lanes.items()):
        with lane_cols[i % 2]:
            st.markdown(f"**{lane}**（{len(hits)}件）")
            if hits:
                st.dataframe(
                    pd.DataFrame(hits).rename(
                        columns={"rank": "順位", "unit_id": "ID", "raw_score": "生スコア"}
                    ),
                    hide_index=True,
                    height=180,
                    width="stretch",
                )
    st.markdown("#### スコア表（final = 0.55·rrf_norm + 0.35·lex + 0.10·rec）")
    rows = []
    for c in result.candidates:
        row = c.row()
        row["decision"] = _decision(row["decision"])
        row["text"] = c.body[:80]
        rows.append(row)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.markdown("#### 注入される内容")
    st.text(format_pack(result))
