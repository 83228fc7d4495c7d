"""A candidate's own answer of 12 paragraphs and a review of 5 items, as the registration form takes them."""

from __future__ import annotations

from core.flows.review_chat import ItemDraft, MaterialDraft

QUESTION = "甲は乙に対し、売買代金の支払を求めた。乙の反論の当否を論ぜよ。"
PARAGRAPHS = [
    "第1　請求の根拠",
    "甲の請求は、売買契約に基づく代金支払請求である。",
    "乙は、同時履行の抗弁権を主張すると考えられる。\n目的物の引渡しがまだだからである。",
    "同時履行の抗弁権の要件は、双務契約であること、相手方の債務が弁済期にあることである。",
    "本件売買は双務契約であり、引渡債務の弁済期も到来している。",
    "したがって、乙の抗弁は認められる。",
    "第2　反論の検討",
    "甲は、乙が先に受領を拒んだと再反論しうる。",
    "しかし、一度の受領拒絶で抗弁権は失われない。",
    "よって、甲の再反論は認められない。",
    "第3　結論",
    "甲の請求は引換給付判決の限度で認められる。",
]
PASTED = "\n\n".join(PARAGRAPHS) + "\n"
OVERALL = "論点には気付けているが、要件の当てはめが薄い。"
ITEMS = [
    ItemDraft("strengths", "請求の特定", "訴訟物を冒頭で示している。", [2]),
    ItemDraft("strengths", "抗弁の発見", "同時履行の抗弁に気付いている。", [3, 4]),
    ItemDraft("weaknesses", "当てはめ不足", "弁済期の事実を拾っていない。", [5]),
    ItemDraft("weaknesses", "再反論の理由", "理由づけがない。", [9]),
    ItemDraft("important_points", "引換給付判決", "結論の形を意識すること。", [12]),
]


def draft(**changes: object) -> MaterialDraft:
    """The form filled in: the answer split from PASTED, the 5 items; `changes` replace fields."""
    base = MaterialDraft(
        question_text=QUESTION,
        paragraphs=list(PARAGRAPHS),
        overall_review=OVERALL,
        items=[ItemDraft(i.category, i.title, i.description, list(i.paragraph_numbers)) for i in ITEMS],
        title="売買代金請求（自作答案）",
    )
    for key, value in changes.items():
        setattr(base, key, value)
    return base
