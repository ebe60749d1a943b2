"""Small text helpers that every printer and report shares (one copy each)."""
from __future__ import annotations

import json

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


# 终端会执行的不可见字符：C0/C1 控制字符（ESC 能清屏、改窗口标题）、DEL，以及改变显示方向的
# bidi 控制字符（RLO 能让 "gpj.exe" 显示成 "exe.jpg"）。换行和制表符照常输出。
_INVISIBLE = {*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F,
              *range(0x202A, 0x202F), *range(0x2066, 0x206A)} - {0x0A, 0x09}
_VISIBLE = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" for code in _INVISIBLE}
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in _INVISIBLE}


def for_terminal(text: str) -> str:
    """``text`` with every control and bidi character shown as a visible escape (``\\x1b``, ``\\u202e``).

    The one sanitiser for anything a model, a tool or a user wrote that reaches a terminal
    or a Markdown file: a model's answer must not be able to clear the screen or reorder
    what the reader sees. HTML has its own escaping.
    """
    return text.translate(_VISIBLE)


def json_for_terminal(data) -> str:
    """``data`` as one line of JSON in which no control or bidi character is left raw.

    ``json.dumps`` already escapes C0 controls; DEL, C1 controls and the bidi characters it
    leaves as they are. They can only occur inside strings, so writing them as ``\\uXXXX``
    keeps the JSON valid and the value the same.
    """
    return json.dumps(data, ensure_ascii=False).translate(_JSON_ESCAPES)
