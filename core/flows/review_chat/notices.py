"""The Japanese notices a review-chat turn or import hands to the page: (kind, text), kind success|info|warning|error."""

from __future__ import annotations

from core.flows.review_chat.summary import SummaryOutcome

Notice = tuple[str, str]

STORE_FAILED = (
    "回答は表示しましたが、会話を保存できませんでした。"
    "データフォルダ（APP_DATA_DIR）の空き容量や書き込み権限を確認してください。"
)
UNEXPECTED_REPLY = "回答の処理中に予期しないエラーが起きました。もう一度送信してください。"
UNEXPECTED_AFTER = "回答の後処理（会話の要約など）で予期しないエラーが起きました。"


def summarizing(segment: tuple[int, int]) -> str:
    """The line shown while a due summary is being made."""
    return f"ターン{segment[0]}～{segment[1]}の会話を要約しています…"


def summary_notices(outcome: SummaryOutcome) -> list[Notice]:
    """What a summary step tells the staff member: made, failed (retried after the next turn), or nothing."""
    if outcome.segment is None or outcome.result is None:
        return []
    start, end = outcome.segment
    if outcome.failed:
        return [
            (
                "warning",
                f"会話の要約を作成できませんでした（{outcome.result.message}）。"
                "要約ができるまでは会話履歴をそのまま送り、次のターンの後に再試行します。",
            )
        ]
    if outcome.already_summarised:
        return [
            (
                "info",
                f"ターン{start}～{end}はすでに要約済みでした（別の処理が先に保存）。今回の要約結果は使いませんでした。",
            )
        ]
    return [("success", f"ターン{start}～{end}の会話を要約しました。次のターンから要約を使います。")]


def imported(title: str, warnings: list[str]) -> Notice:
    """The notice after a review file was stored."""
    note = f"「{title}」を読み込みました。" + "".join(f" 注意: {w}" for w in warnings)
    return ("warning" if warnings else "success", note)


DUPLICATE = "同じ内容の講評がすでに登録されています"


def duplicate_notice(title: str) -> Notice:
    """The content imported or registered is already stored: that review is opened instead."""
    return ("warning", f"{DUPLICATE}（「{title}」）。登録済みの講評を開きました。")
