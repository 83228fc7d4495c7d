"""Plain data of the review chat (re-exported from the store, which returns these records)."""

from core.store.review.models import ChatMessage, ReviewRecord, ThreadState

__all__ = ["ChatMessage", "ReviewRecord", "ThreadState"]
