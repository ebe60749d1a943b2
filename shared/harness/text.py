"""Small text helpers that every printer and report shares (one copy each)."""
from __future__ import annotations

ELLIPSIS = "…"


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last one an ellipsis when cut."""
    return text if len(text) <= limit else text[:limit - 1] + ELLIPSIS


def content_text(content) -> str:
    """A chat message's ``content`` as plain text.

    Some models answer with content parts (``[{"type": "text", "text": ...}]``) instead of a
    string; ``None`` (a message with only tool calls) is the empty string.
    """
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return str(content)
