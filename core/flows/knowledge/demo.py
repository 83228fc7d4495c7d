"""Demo persona for the knowledge interview: a deterministic interviewer for the offline demo model.

It replays the user's messages of the request to rebuild what it knows (six slots), asks for
the missing items one or two at a time, reads 第N条 headings from attached text, and drafts a
full knowledge entry as soon as everything is known (within 5 user turns). core.flows.registry lists it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from core.flows.knowledge.demo_drafting import case_title, clause_topic, suggest_sample
from core.flows.knowledge.edit_request import EditRequest, read_edit_request
from core.flows.knowledge.interview import ATTACHMENT_HEADER, DRAFT_HEADER, REFERENCE_HEADER, USER_TEXT_HEADER
from core.llm.base import LLMRequest

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "samples" / "knowledge"
SAMPLE_FILES = ("service_agreement.docx", "service_agreement.pdf", "service_agreement_sjis.txt")
DEMO_SAMPLE = "service_agreement.docx"
# The one-click demo: the first message (sent with the sample contract) and suggested answers.
DEMO_OPENING = "添付の業務委託契約について、相手方から秘密保持義務の存続期間を「契約終了後3年」に限定する案が出ました。ナレッジにまとめたいです。"
DEMO_SCRIPT = (
    "運用保守で預けるデータには顧客情報も含まれ、契約が更新されれば関係が3年を超えます。終了後3年で義務が切れると、漏えい時に責任を問えなくなるおそれがあります。",
    "存続期間を5年とするよう修正を求め、個人情報は期間の定めなく存続させることで合意しました。文言は「前項の義務は、本契約終了後5年間存続する。ただし、個人情報については期間の定めなく存続する。」です。",
    "問題ありません。確定してください。",
)
REPAIR_HEADER = "以下は、あなたが直前に出力した JSON 文字列です。"

SLOT_LABELS = {
    "contract_type": "契約書の種類",
    "target_clause": "問題になった条項（条番号・見出し）",
    "issue": "相手方の提示内容・起きたこと",
    "risk": "当方にとってのリスク",
    "action": "実際の対応（修正交渉の内容）",
    "sample": "修正後の条項文言",
}
ASK_GROUPS = (("contract_type", "target_clause"), ("issue",), ("risk",), ("action", "sample"))
QUESTIONS = {
    "contract_type": "この事例はどの種類の契約書に関するものですか（例：業務委託契約、秘密保持契約）？",
    "target_clause": "問題になった条項の条番号と見出しを教えてください（例：第8条（秘密保持））。",
    "issue": "相手方からどのような提示・修正があったのか、具体的に教えてください。",
    "risk": "その内容のままだと、当方にとってどのようなリスクがありますか？",
    "action": "実際にはどのように対応しましたか（修正交渉の内容、落としどころ）？",
    "sample": "最終的な条項の文言があれば教えてください（なければ「おまかせ」で結構です）。",
}
CONTRACT_TYPES = (
    "業務委託",
    "秘密保持",
    "売買",
    "請負",
    "ライセンス",
    "賃貸借",
    "共同開発",
    "販売代理店",
    "取引基本",
    "派遣",
    "保守",
    "利用",
)
_TYPE_RE = re.compile(r"(" + "|".join(CONTRACT_TYPES) + r")契約")
_CLAUSE_RE = re.compile(r"第\s*([0-9０-９一二三四五六七八九十百]+)\s*条")
_HEADING_RE = re.compile(r"^(第\s*[0-9０-９一二三四五六七八九十百]+\s*条)\s*[（(]([^）)]{1,20})[）)]")
CLAUSE_TOPICS = (
    "秘密保持",
    "損害賠償",
    "再委託",
    "契約解除",
    "解除",
    "知的財産",
    "委託料",
    "支払",
    "保証",
    "責任制限",
    "競業",
    "個人情報",
    "委託期間",
    "契約期間",
    "更新",
    "検収",
    "瑕疵",
    "契約不適合",
    "管轄",
)
_ISSUE_HINT = re.compile(r"相手方|先方|提示|限定|上限|要求|求められ|削除|追加|変更|修正案|ドラフト")
_QUOTE_RE = re.compile(r"「([^「」]{10,})」")
_APPROVE_RE = re.compile(r"問題ありません|問題なし|OK|ＯＫ|確定|これでよい|これで良い|大丈夫|結構です")
_NONE_RE = re.compile(r"おまかせ|お任せ|なし|ありません|わから|分から")
_UNSURE_RE = re.compile(r"わから|分から|わかりません|分かりません|不明|知らな")
UNSURE_MAX_CHARS = 20  # a longer answer that mentions 分からない still says something
UNCONFIRMED = "（未確認）"
UNSURE_LEAD = (
    "分かる範囲で構いません。分からなければもう一度「分からない」とお送りください。"
    "その項目は未確認として草案を作ります。"
)


@dataclass
class Interview:
    slots: dict[str, str] = field(default_factory=dict)
    headings: list[tuple[str, str]] = field(default_factory=list)  # (第N条, 見出し)
    bodies: dict[str, list[str]] = field(default_factory=dict)  # 第N条 -> lines
    asked: tuple[str, ...] = ()
    drafted: bool = False
    approved: bool = False
    corrections: list[str] = field(default_factory=list)
    clarify: bool = False
    unsure: dict[str, int] = field(default_factory=dict)  # slot -> "分からない" answers so far
    edits: dict[str, str] = field(default_factory=dict)  # the draft card as the person edited it
    requested: dict[str, str] = field(default_factory=dict)  # items changed on request in the chat
    last_edit: EditRequest | None = None  # the request the latest message made (its reply says what changed)
    awaiting: str | None = (
        None  # an item the person asked to change without saying how: the next message is it
    )


def split_payload(payload: str) -> tuple[str, str]:
    """(user text, attachment text) of a spec 00 user payload (an edited draft part left out)."""
    text, attached, _ = split_payload_parts(payload)
    return text, attached


def split_payload_parts(payload: str) -> tuple[str, str, dict[str, str] | None]:
    """(user text, attachment text, the edited draft or None) of a user payload (spec 00)."""
    draft: dict[str, str] | None = None
    marker = "\n\n" + DRAFT_HEADER
    if payload.startswith(DRAFT_HEADER):
        payload, draft_text = "", payload[len(DRAFT_HEADER) :]
        draft = _draft(draft_text)
    elif marker in payload:
        payload, draft_text = payload.split(marker, 1)
        draft = _draft(draft_text)
    text, attached = payload, ""
    if text.startswith(ATTACHMENT_HEADER):
        return "", text[len(ATTACHMENT_HEADER) :], draft
    marker = "\n\n" + ATTACHMENT_HEADER
    if marker in text:
        text, attached = text.split(marker, 1)
    return text.removeprefix(USER_TEXT_HEADER), attached, draft


def _draft(text: str) -> dict[str, str] | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None


def _read_attachment(iv: Interview, attached: str) -> None:
    current = None
    for line in attached.splitlines():
        match = _HEADING_RE.match(line.strip())
        if match:
            current = re.sub(r"\s", "", match.group(1))
            if current not in iv.bodies:
                iv.headings.append((current, match.group(2)))
                iv.bodies[current] = []
        elif current and line.strip():
            iv.bodies[current].append(line.strip())
    if "contract_type" not in iv.slots and (m := _TYPE_RE.search(attached[:300])):
        iv.slots["contract_type"] = m.group(0)


def _find_clause(iv: Interview, text: str) -> str | None:
    if m := _CLAUSE_RE.search(text):
        number = re.sub(r"\s", "", m.group(0))
        typed = re.match(r"\s*[（(]([^）)]{1,20})[）)]", text[m.end() :])  # 「第8条（秘密保持）」 as typed
        title = next((t for n, t in iv.headings if n == number), typed.group(1) if typed else "")
        return f"{number}（{title}）" if title else number
    heading = next((f"{n}（{t}）" for n, t in iv.headings if t in text), None)
    if heading:
        return heading
    topic = next((t for t in CLAUSE_TOPICS if t in text), None)
    return f"{topic}条項（条番号は未確認）" if topic else None


def _absorb(iv: Interview, text: str) -> None:
    """Take what one user message says: first by pattern, then as the answer to what was asked."""
    iv.clarify = False
    iv.last_edit = None
    if not text.strip():
        return
    if iv.drafted:
        _absorb_review(iv, text.strip())
        return
    found: list[str] = []
    rest = text  # what is left for the clause once the contract type is taken out (秘密保持契約 is no clause)
    if "contract_type" not in iv.slots and (m := _TYPE_RE.search(text)):
        iv.slots["contract_type"], found = m.group(0), [*found, "contract_type"]
        rest = text.replace(m.group(0), "")
    if "target_clause" not in iv.slots and (clause := _find_clause(iv, _TYPE_RE.sub("", rest))):
        iv.slots["target_clause"], found = clause, [*found, "target_clause"]
    if "sample" not in iv.slots and (q := _QUOTE_RE.search(text)) and q.group(1).endswith("。"):
        iv.slots["sample"], found = q.group(1), [*found, "sample"]
    open_asked = [s for s in iv.asked if s not in iv.slots]
    if "issue" not in iv.slots and "issue" not in iv.asked and _ISSUE_HINT.search(text) and len(text) >= 15:
        iv.slots["issue"], found = _case_text(text), [*found, "issue"]
    if open_asked and not any(s in found for s in iv.asked):
        slot = open_asked[0]
        # "おまかせ" / "なし" for the clause wording: the demo drafts one itself.
        declines = bool(_NONE_RE.search(text)) and (
            slot == "sample" or ("sample" in open_asked and len(text) < 12)
        )
        unsure = slot != "sample" and len(text.strip()) < UNSURE_MAX_CHARS and _UNSURE_RE.search(text)
        if unsure:  # ask once more; the second "分からない" leaves the item unconfirmed
            iv.unsure[slot] = iv.unsure.get(slot, 0) + 1
            if iv.unsure[slot] >= 2:
                iv.slots[slot] = UNCONFIRMED
        elif declines:
            iv.slots["sample"] = ""
        else:
            iv.slots[slot] = text.strip()
    elif open_asked and "action" in open_asked and "sample" in found:
        quote = _QUOTE_RE.search(text)  # found when "sample" is in `found`
        before = text[: quote.start()] if quote else text
        iv.slots["action"] = (
            before[: before.rfind("。") + 1] if "。" in before else before
        ).strip() or text.strip()
    iv.clarify = bool(iv.asked) and any(s not in iv.slots for s in iv.asked)


def _absorb_review(iv: Interview, text: str) -> None:
    """After the draft: an item to change (asked for by name, or the answer to 「どう変えますか」), approval, or a
    remark that goes to the review points."""
    request = read_edit_request(text)
    if request is None and iv.awaiting and not _APPROVE_RE.search(text):
        request = EditRequest(iv.awaiting, text)
    iv.awaiting = None
    if request is not None:
        iv.approved = False
        iv.last_edit = request
        if request.value is None:
            iv.awaiting = request.item
            return
        if request.append:
            current = build_entry(iv).get(request.item, "")
            iv.requested[request.item] = (current + "\n" if current else "") + request.value
        else:
            iv.requested[request.item] = request.value
        return
    if _APPROVE_RE.search(text):
        iv.approved = True
    else:
        iv.approved = False
        iv.corrections.append(text)


def _case_text(text: str) -> str:
    """The case description without the request around it (「…について、」, 「ナレッジにまとめたい」)."""
    sentences = [x for x in re.split(r"(?<=。)", text.strip()) if x and "ナレッジ" not in x]
    body = "".join(sentences) or text.strip()
    return body.split("について、", 1)[-1] if "について、" in body[:40] else body


def _next_ask(iv: Interview) -> tuple[str, ...]:
    for group in ASK_GROUPS:
        missing = tuple(s for s in group if s not in iv.slots)
        if missing:
            return missing
    return ()


def build_entry(iv: Interview) -> dict[str, str]:
    s = iv.slots
    review = f"【事例】{s.get('issue', '')}\n【リスク】{s.get('risk', '')}"
    if iv.corrections:
        review += "\n【補足】" + "\n".join(iv.corrections)
    entry = {
        "contract_type": s.get("contract_type", ""),
        "knowledge_title": case_title(clause_topic(s.get("target_clause", "")), s.get("issue", "")),
        "target_clause": s.get("target_clause", ""),
        "review_points": review,
        "action_plan": s.get("action", ""),
        "clause_sample": s.get("sample") or suggest_sample(s, iv.bodies),
    }
    # the person's edits of the card win, except where a later correction was added
    edited = {k: v for k, v in iv.edits.items() if k in entry and v.strip()}
    if iv.corrections and "review_points" in edited:
        edited["review_points"] += "\n【補足】" + "\n".join(iv.corrections[-1:])
    return entry | edited | iv.requested


def _question_text(iv: Interview, ask: tuple[str, ...], first: bool) -> str:
    lead = "ありがとうございます。" if not first else "契約審査ナレッジの聞き取りを始めます。"
    if iv.clarify:
        lead = UNSURE_LEAD if any(iv.unsure.get(slot) == 1 for slot in ask) else "確認させてください。"
    if first and iv.headings:
        shown = "、".join(f"{n}（{t}）" for n, t in iv.headings[:4])
        more = f"など全{len(iv.headings)}か条" if len(iv.headings) > 4 else ""
        lead += f"添付の契約書から {shown}{more}を確認しました。"
    known = []
    if "target_clause" in iv.slots and "target_clause" not in ask and first:
        known.append(f"対象は{iv.slots['target_clause']}ですね。")
    return lead + "".join(known) + "".join(QUESTIONS[s] for s in ask)


def reply_for(user_texts: list[str]) -> dict[str, object]:
    """The turn JSON for a conversation whose user payloads are `user_texts` (oldest first)."""
    iv = Interview()
    ask: tuple[str, ...] = ()
    just_drafted = False
    for number, payload in enumerate(user_texts):
        text, attached, edits = split_payload_parts(payload)
        if attached:
            _read_attachment(iv, attached)
        if edits:  # the card as the person edited it: what they changed there wins over earlier requests
            iv.edits = edits
            iv.requested = {k: v for k, v in iv.requested.items() if edits.get(k, v) == v}
        was_drafted = iv.drafted
        _absorb(iv, text)
        ask = _next_ask(iv)
        iv.asked = ask
        first = number == 0
        just_drafted = not ask and not was_drafted
        if not ask:
            iv.drafted = True
    if ask:
        phase = (
            "collect_case"
            if any(s in ("contract_type", "target_clause", "issue") for s in ask)
            else "organize_risks"
        )
        return _turn(
            "clarify" if iv.clarify else "interview",
            phase,
            [SLOT_LABELS[s] for s in _all_missing(iv)],
            _question_text(iv, ask, first),
            None,
        )
    entry = build_entry(iv)
    if just_drafted:
        message = (
            "ヒアリングした内容をもとに、ナレッジの草案を作成しました。右の「ナレッジ草案」をご確認ください。"
            "表現や対応方針に直したい点があればお知らせください。問題なければ「問題ありません」とお送りください。"
        )
        return _turn("finalize", "draft_knowledge", [], message, entry)
    if iv.last_edit is not None:
        return _turn("clarify", "review_knowledge", ["草案への最終確認"], _edit_message(iv.last_edit), entry)
    if iv.approved:
        message = "ナレッジを確定しました。右のカードから保存すると、チームで再利用できるようになります。"
        return _turn("finalize", "review_knowledge", [], message, entry)
    message = "ご指摘を審査ポイントの補足として反映しました。ほかに直す点がなければ「問題ありません」とお送りください。"
    return _turn("clarify", "review_knowledge", ["草案への最終確認"], message, entry)


def _edit_message(request: EditRequest) -> str:
    if request.value is None:
        return f"{request.label}をどのように変更しますか？新しい{request.label}をそのままお送りください。"
    done = "に次の内容を追記しました" if request.append else "を次のとおり変更しました"
    return (
        f"{request.label}{done}。右の「ナレッジ草案」をご確認ください。\n\n「{request.value}」\n\n"
        "ほかに直す点がなければ「問題ありません」とお送りください。"
    )


def _all_missing(iv: Interview) -> list[str]:
    return [s for group in ASK_GROUPS for s in group if s not in iv.slots]


def _turn(
    mode: str, phase: str, missing: list[str], message: str, entry: dict[str, str] | None
) -> dict[str, object]:
    return {
        "control": {"schema_version": "1.0", "mode": mode},
        "state": {"phase": phase, "missing_info": missing},
        "assistant_message": message,
        "knowledge_json": entry,
    }


def knowledge_persona(request: LLMRequest) -> str:
    """The demo model's reply to a knowledge interview request (repair requests get the same valid turn;
    reference blocks of similar entries are read past)."""
    messages = list(request.messages)
    while (
        len(messages) >= 2
        and messages[-1]["role"] == "user"
        and messages[-1]["content"].startswith(REPAIR_HEADER)
    ):
        messages = messages[:-2]
    # the similar-entries reference block is not the person's answer
    user_texts = [
        m["content"]
        for m in messages
        if m["role"] == "user" and not m["content"].startswith(REFERENCE_HEADER)
    ]
    return json.dumps(reply_for(user_texts), ensure_ascii=False)
