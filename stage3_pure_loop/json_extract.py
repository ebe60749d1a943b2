"""翻车现场 1 的修复：从任意文本里找出工具调用 JSON（平衡括号扫描器）。

The model was asked to answer with nothing but ``{"tool": ..., "args": {...}}``; real
models often wrap it: "好的，我来查一下：{...} 稍等。", a Markdown code fence, a second
object in the explanation. The article's fix is one regex::

    re.search(r"\\{.*\\}", reply, re.DOTALL)

and it is greedy: ``.*`` runs from the *first* ``{`` to the *last* ``}`` of the reply.
Three ordinary replies break it:

- two objects: ``{"tool": "a", "args": {}} 然后 {"tool": "b", "args": {}}`` -> the match is
  both objects and the text between them, not valid JSON;
- a brace after the call: ``{"tool": ..., "args": {}} 结果会填进 {结果} 里`` -> same;
- braces inside strings: ``{"tool": "calculate", "args": {"expression": "}"}}``: a
  non-greedy ``\\{.*?\\}`` would stop at the ``}`` inside the string instead.

So we do what a JSON parser does, but only for ``{ } "`` and ``\\``: walk the text, count
braces, ignore everything inside strings (and the escaped quote ``\\"`` inside them). Every
balanced ``{...}`` is a candidate; the first candidate that ``json.loads`` accepts *and*
that has the shape of a tool call wins. Code fences need no special case: the scanner
starts at a ``{`` wherever it is, and backticks inside a JSON string are just characters.

Guarantee: :func:`extract_tool_call` never raises, whatever the text (tests check it
with hypothesis).

Left out: repairing broken JSON (trailing commas, single quotes, a missing brace).
Guessing what a broken call meant is worse than telling the model it is broken; the
hardened loop does the latter.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import NamedTuple

# 最坏情况的上限：成千上万个 "{" 时，每个起点都可能扫到文本末尾（平方级）。
# 扫描器总共最多走这么多个字符，之后不再找候选——正常回复连它的零头都用不到。
MAX_SCAN_STEPS = 1_000_000

# 合法 JSON 对象的开头只能是 "{" + 空白 + 引号或 "}"：其余的 "{" 不必扫
_OBJECT_START = re.compile(r'\{\s*["}]')


class ToolCall(NamedTuple):
    """A tool call found in a reply: ``{"tool": name, "args": args}``."""

    name: str
    args: dict


def extract_tool_call(text: str) -> ToolCall | None:
    """The first balanced JSON object in ``text`` that is a valid tool call, else ``None``.

    Valid means a JSON object with a non-empty string ``"tool"`` and, if present, an
    object ``"args"`` (missing ``"args"`` counts as ``{}``, like the article's
    ``tc.get("args", {})``).
    """
    for candidate in iter_json_objects(text):
        call = as_tool_call(candidate)
        if call is not None:
            return call
    return None


def as_tool_call(value: object) -> ToolCall | None:
    """``value`` as a :class:`ToolCall` if it has the shape ``{"tool": str, "args": dict}``."""
    if not isinstance(value, dict):
        return None
    name, args = value.get("tool"), value.get("args", {})
    if not isinstance(name, str) or not name.strip() or not isinstance(args, dict):
        return None
    return ToolCall(name.strip(), args)


def iter_json_objects(text: str) -> Iterator[dict]:
    """Every balanced ``{...}`` in ``text`` that parses as a JSON object, in order of its ``{``.

    Nested objects are found too (after the object that contains them), so a tool call
    wrapped in another object is still found.
    """
    if not isinstance(text, str):
        return
    budget = MAX_SCAN_STEPS
    for match in _OBJECT_START.finditer(text):
        start = match.start()
        end, scanned = balanced_end(text, start, limit=budget)
        budget -= scanned
        if end is not None:
            try:
                value = json.loads(text[start:end])
            except (ValueError, RecursionError):   # JSONDecodeError 是 ValueError；极深嵌套会递归超限
                value = None
            if isinstance(value, dict):
                yield value
        if budget <= 0:
            return


def balanced_end(text: str, start: int, *, limit: int | None = None) -> tuple[int | None, int]:
    """``(end, scanned)``: ``end`` is just past the ``}`` closing the ``{`` at ``start``, or ``None``.

    Inside a string (between unescaped ``"``), braces do not count; a backslash escapes
    the next character, so ``"\\""`` does not end the string. ``scanned`` is how many
    characters were looked at (at most ``limit``).
    """
    depth = 0
    in_string = escaped = False
    stop = len(text) if limit is None else min(len(text), start + max(limit, 1))
    for index in range(start, stop):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1, index + 1 - start
    return None, stop - start        # 没闭合（或预算用完）：不是完整对象
