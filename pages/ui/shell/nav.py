"""The pages of the app: one list the shell and the home page both read. A page is listed only if its file exists.

This is the one place a flow is added to the app: its entry in FLOW_PAGES names the flow from
core.flows.registry, and the session's chat keys (pages/ui/shell/state.py CHAT_FLOWS) derive from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.flows.registry import FLOWS, FlowInfo

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class PageInfo:
    path: str  # relative to the repo root
    title: str
    icon: str
    flow: FlowInfo | None  # the flow this page runs (chat key, demo persona), None for tool pages
    summary: str  # one line for the home page (Japanese)

    @property
    def exists(self) -> bool:
        return (ROOT / self.path).is_file()

    @property
    def flow_name(self) -> str | None:
        return self.flow.name if self.flow is not None else None

    @property
    def demo_request_key(self) -> str:
        """Session key the home page sets to ask this page to load its one-click demo."""
        return f"{self.flow_name}_demo_request"


HOME = PageInfo("pages/home.py", "ホーム", ":material/home:", None, "")
FLOW_PAGES = [
    PageInfo(
        "pages/knowledge.py",
        "ナレッジ聞き取り",
        ":material/gavel:",
        FLOWS["knowledge"],
        "契約審査の事例をAIが段階的に聞き取り、再利用できるナレッジ（6項目）に整えます。PDF・DOCX・TXTを添付できます。",
    ),
    PageInfo(
        "pages/review_chat.py",
        "答案レビュー・チャット",
        ":material/school:",
        FLOWS["review"],
        "答案と講評について質問できます。§番号で段落を指定すると、該当段落と関連する講評を自動で添えて回答します。",
    ),
    PageInfo(
        "pages/memory.py",
        "コンパニオン記憶",
        ":material/psychology:",
        FLOWS["memory"],
        "ペルソナと会話し、エピソード・事実・約束を記憶します。記憶ブラウザで中身を確認・修正できます。",
    ),
    PageInfo(
        "pages/diagnosis.py",
        "車両診断",
        ":material/car_repair:",
        FLOWS["diagnosis"],
        "症状を聞き取り、取扱説明書を検索して原因を絞り込みます。危険な症状は入庫予約へ誘導します。",
    ),
]
TOOL_PAGES = [
    PageInfo(
        "pages/debug_log.py",
        "デバッグログ",
        ":material/bug_report:",
        None,
        "LLMに送った内容と返ってきた内容、修復の経過を確認・エクスポートできます。",
    ),
]


def existing_pages() -> list[PageInfo]:
    return [p for p in [HOME, *FLOW_PAGES, *TOOL_PAGES] if p.exists]
