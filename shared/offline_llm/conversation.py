"""读懂一次请求：问题是什么、已经调过哪些工具、拿到了什么结果、这次提供了哪些工具。

A chat-completion request carries the whole conversation, and the offline model is
stateless, exactly like a real one: every turn it re-reads the message list. This module
turns the list into a :class:`Conversation`, in either of the two protocols the
articles use:

- **function calling** (the LangChain tiers, the ``openai`` SDK with ``tools=``): the
  question is the last ``user`` message; a call is *observed* when an ``assistant``
  message asked for it (``tool_calls``) and a ``tool`` message answered it with the same
  ``tool_call_id``;
- **JSON protocol** (the second article's 50-line agent): no ``tools`` in the request,
  a system prompt that describes ``{"tool": ..., "args": ...}`` and lists the tools as
  ``- name: description`` lines. A call is an assistant message containing such a JSON
  object; its result is the ``user`` message right after it
  (``工具 X 的执行结果：...\\n\\n请根据这个结果继续完成任务。...``). The question is the last
  user message that is *not* such a result, unless it is the loop's feedback on the model's
  last reply (it follows an assistant message, or another user message, and asks for
  nothing the policy recognises: "你的上一条回复不能作为最终答案…", "错误：未知工具…"); then
  the question before it still stands.

Left out: deciding anything (``policy.py``), understanding the question (``intents.py``).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from shared.offline_llm.intents import make_plan, small_talk
from shared.offline_llm.lesson_wording import (FOLLOW_UP_NUDGE, JSON_PROTOCOL_MARKERS, RESULT_PREFIX, TOOL_LINE,
                                               is_feedback_wording)

FUNCTION_CALLING = "function_calling"
JSON_PROTOCOL = "json"
MAX_JSON_STARTS = 32           # 一条回复里最多从前 32 个 { 开始找工具调用

@dataclass(frozen=True)
class Observation:
    """A tool call the model made after the question, and the result it got back."""

    name: str
    args: dict | str      # 解析不了的参数原样保留为字符串
    result: str


@dataclass(frozen=True)
class Conversation:
    protocol: str                          # FUNCTION_CALLING 或 JSON_PROTOCOL
    question: str                          # "" 表示没有找到用户问题
    question_index: int                    # 问题在 messages 里的位置（没有则 -1）
    observations: tuple[Observation, ...]  # 问题之后、已拿到结果的调用，按调用顺序
    turn: int                              # 问题之后模型已经回复过几次（0 = 第一轮）
    offered_tools: tuple[str, ...]         # 这次请求提供的工具名


def read_conversation(request: dict) -> Conversation:
    """Read a (validated) chat-completion request body."""
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    if is_json_protocol(request):
        return _read_json_protocol(messages)
    return _read_function_calling(messages, _offered_functions(request))


def is_json_protocol(request: dict) -> bool:
    """No ``tools`` offered, and a system prompt that describes the JSON call format."""
    if request.get("tools"):
        return False
    system = system_text(request.get("messages") or [])
    return all(marker in system for marker in JSON_PROTOCOL_MARKERS)


def message_text(message: dict) -> str:
    """A message's text: a string, or the text parts of a content list."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def find_json_tool_call(text: str) -> tuple[str, dict | str] | None:
    """The first JSON object in ``text`` with a string ``"tool"`` key, as ``(name, args)``.

    ``raw_decode`` from each of the first :data:`MAX_JSON_STARTS` ``{``: good enough to
    *recognise* the model's own earlier replies (the hardened loop has its own, stricter
    extractor). The bound keeps a huge reply full of braces from costing a decode per brace.
    """
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(MAX_JSON_STARTS):
        if start < 0:
            return None
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):      # 嵌套太深的"JSON"也只是认不出来的文字
            start = text.find("{", start + 1)
            continue
        start = text.find("{", start + 1)
        if isinstance(value, dict) and isinstance(value.get("tool"), str):
            args = value.get("args", {})
            return value["tool"], args if isinstance(args, dict) else json.dumps(args, ensure_ascii=False)
    return None


def strip_result_message(text: str) -> str:
    """``工具 X 的执行结果：R\\n\\n请根据…`` -> ``R`` (text without the frame is kept whole)."""
    framed = RESULT_PREFIX.match(text)
    if not framed:
        return text.strip()
    return FOLLOW_UP_NUDGE.sub("", text[framed.end():]).strip()


# ---- function calling ----

def _read_function_calling(messages: list[dict], offered: tuple[str, ...]) -> Conversation:
    question_index = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    after = messages[question_index + 1:]
    calls: list[tuple[str, str, dict | str]] = []     # (id, name, args)，按模型给出的顺序
    results: dict[str, str] = {}
    for message in after:
        if message.get("role") == "assistant":
            calls.extend(assistant_calls(message))
        elif message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str):
            results.setdefault(message["tool_call_id"], message_text(message))
    observations = tuple(Observation(name, args, results[call_id])
                         for call_id, name, args in calls if call_id in results)
    return Conversation(
        protocol=FUNCTION_CALLING,
        question=_question_text(messages, question_index),
        question_index=question_index,
        observations=observations,
        turn=sum(1 for m in after if m.get("role") == "assistant"),
        offered_tools=offered,
    )


def assistant_calls(message: dict) -> list[tuple[str, str, dict | str]]:
    """``(id, name, args)`` of each function call in an assistant message (args parsed if they can be)."""
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(call.get("id"), str):
            calls.append((call["id"], str(function.get("name", "")), _parse_arguments(function.get("arguments"))))
    return calls


def _parse_arguments(arguments: object) -> dict | str:
    # 线上的 arguments 是 JSON 字符串；解析不了（或不是对象）就原样保留，交给工具去报错
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else None
    except ValueError:
        value = None
    return value if isinstance(value, dict) else str(arguments)


def _offered_functions(request: dict) -> tuple[str, ...]:
    names = []
    for tool in request.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return tuple(names)


# ---- JSON protocol ----

def _read_json_protocol(messages: list[dict]) -> Conversation:
    # 一条 user 消息若紧跟在"含工具调用 JSON 的 assistant 消息"之后，它就是工具结果，不是问题
    calls = [find_json_tool_call(message_text(m)) if m.get("role") == "assistant" else None
             for m in messages]
    is_result = [i > 0 and m.get("role") == "user" and calls[i - 1] is not None
                 for i, m in enumerate(messages)]
    questions = [i for i, m in enumerate(messages) if m.get("role") == "user" and not is_result[i]]
    # 循环对"答案"的反馈（加固版循环的"你的上一条回复不能作为最终答案…"）也是一条 user 消息，
    # 紧跟在模型自己的回复后面。它不是新问题：听不懂它时，回到它前面的那个问题
    while len(questions) > 1 and _is_feedback(messages, questions[-1]):
        questions.pop()
    question_index = questions[-1] if questions else -1
    observations = tuple(
        Observation(calls[i - 1][0], calls[i - 1][1], strip_result_message(message_text(messages[i])))
        for i in range(question_index + 1, len(messages)) if is_result[i]
    )
    return Conversation(
        protocol=JSON_PROTOCOL,
        question=_question_text(messages, question_index),
        question_index=question_index,
        observations=observations,
        turn=sum(1 for m in messages[question_index + 1:] if m.get("role") == "assistant"),
        offered_tools=tuple(dict.fromkeys(TOOL_LINE.findall(system_text(messages)))),
    )


def _is_feedback(messages: list[dict], index: int) -> bool:
    """A user message right after an assistant reply (or right after another user message),
    that asks for nothing the policy knows.

    "Right after another user message" is the 50-line loop's unknown-tool error: the
    article appends ``错误：未知工具 …`` *without* the model's own call, so it follows the
    previous result (or the question) directly (``stage3_pure_loop/json_loop.py``).
    """
    text = message_text(messages[index])
    return (messages[index - 1].get("role") in ("assistant", "user")
            and (is_feedback_wording(text) or (not make_plan(text) and small_talk(text) is None)))


def system_text(messages: list) -> str:
    """The text of every system / developer message, joined."""
    return "\n".join(message_text(m) for m in messages
                     if isinstance(m, dict) and m.get("role") in ("system", "developer"))


def _question_text(messages: list[dict], index: int) -> str:
    return message_text(messages[index]).strip() if index >= 0 else ""
