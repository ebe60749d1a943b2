"""把一个 Decision 说成 OpenAI 的话：一个完整的非流式 ``chat.completion`` 对象。

The wire format, in one place. The policy decides *what* to say (:class:`Decision`);
this module says it the way an OpenAI-compatible server does, in the request's protocol:

- function calling: ``message.tool_calls`` (``arguments`` is a JSON *string*, written with
  ``ensure_ascii=False`` like DeepSeek, vLLM or Ollama do), ``finish_reason`` ``tool_calls``;
  otherwise ``content`` and ``stop``;
- JSON protocol: everything is plain ``content``; a call is exactly
  ``{"tool": "get_stock_price", "args": {"symbol": "腾讯"}}``;
- every message carries ``refusal: null`` (the schema requires the key; this model never
  refuses, it says what it cannot do in ``content``);
- one choice per decision (``n``), index 0, 1, ...;
- the generation limits of the request: ``stop`` cuts the content before the first stop
  sequence; ``max_tokens`` / ``max_completion_tokens`` cut the output (content first, then
  the calls' arguments, like a real model that runs out mid-JSON) and set
  ``finish_reason: "length"``.

Ids: unique per response, like a real endpoint (``chatcmpl-`` / ``call_`` + random hex).
``fixed_ids=True`` (a test or a replay that asks for it) gives deterministic ids instead:
a short hash of the conversation (the question and its position) + the turn and the index.

Left out: streaming (``streaming.py``: it slices this object into chunks).
"""
from __future__ import annotations

import hashlib
import json
import time
import uuid

from shared.offline_llm.conversation import JSON_PROTOCOL, Conversation
from shared.offline_llm.decision import Decision, ToolCall
from shared.offline_llm.lesson_wording import JSON_ARGS_KEY, JSON_CALL_KEY
from shared.tokens import completion_tokens, count_tokens, prompt_tokens

DEFAULT_MODEL = "offline"
# system_fingerprint：客户端可据此知道回答来自哪个"模型版本"
SYSTEM_FINGERPRINT = "offline-rule-policy-1"


def build_completion(request: dict, conversation: Conversation, *decisions: Decision,
                     fixed_ids: bool = False) -> dict:
    """The ``chat.completion`` object for ``decisions`` (one per choice), in the conversation's protocol."""
    conversation_id = _conversation_id(conversation) if fixed_ids else uuid.uuid4().hex[:24]
    choices, generated = [], 0
    for index, decision in enumerate(decisions):
        if conversation.protocol == JSON_PROTOCOL:
            message = {"role": "assistant", "content": render_json_protocol(decision), "refusal": None}
        else:
            message = {"role": "assistant", "content": decision.text, "refusal": None}
            if decision.tool_calls:
                message["tool_calls"] = [_wire_call(call, _call_id(conversation, conversation_id, index, i, fixed_ids))
                                         for i, call in enumerate(decision.tool_calls)]
        message, finish_reason = apply_limits(request, message)
        generated += completion_tokens(message)
        choices.append({"index": index, "message": message, "logprobs": None, "finish_reason": finish_reason})
    prompt = prompt_tokens(request)
    return {
        "id": f"chatcmpl-{conversation_id}-{conversation.turn}" if fixed_ids else f"chatcmpl-{conversation_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model") or DEFAULT_MODEL,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "choices": choices,
        "usage": {"prompt_tokens": prompt, "completion_tokens": generated,
                  "total_tokens": prompt + generated},
    }


def render_json_protocol(decision: Decision) -> str:
    """The reply text of the JSON protocol: the text (if any), then one JSON object per call."""
    parts = [decision.text] if decision.text else []
    parts += [_json_call(call) for call in decision.tool_calls]
    return "\n".join(parts)


def arguments_text(args: dict | str) -> str:
    """A call's ``arguments`` on the wire: JSON text; a ``str`` (a fault's broken JSON) verbatim."""
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def apply_limits(request: dict, message: dict) -> tuple[dict, str]:
    """``stop`` and ``max_tokens`` / ``max_completion_tokens`` applied; returns the message and finish_reason."""
    finish_reason = "tool_calls" if message.get("tool_calls") else "stop"
    content = message.get("content")
    stops = request.get("stop")
    stops = [stops] if isinstance(stops, str) else [s for s in stops or [] if s]
    if isinstance(content, str) and stops:
        cut = min((content.find(s) for s in stops if s in content), default=-1)
        if cut >= 0:                           # 停止序列本身不出现在输出里
            message = {**message, "content": content[:cut]}
            if not message.get("tool_calls"):
                return message, "stop"
    budget = output_budget(request)
    if budget is None or completion_tokens(message) <= budget:
        return message, finish_reason
    return _truncated(message, budget), "length"


def output_budget(request: dict) -> int | None:
    """The smaller of ``max_tokens`` and ``max_completion_tokens`` (None: no limit)."""
    limits = [v for v in (request.get("max_tokens"), request.get("max_completion_tokens")) if isinstance(v, int)]
    return min(limits) if limits else None


def _truncated(message: dict, budget: int) -> dict:
    content = message.get("content") or ""
    kept_content = _prefix_within(content, budget)
    budget -= count_tokens(kept_content)
    calls = []
    for call in message.get("tool_calls") or []:
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        if budget <= count_tokens(name):
            break
        budget -= count_tokens(name)
        kept = _prefix_within(arguments, budget)          # 参数写到一半：真实模型也是这样被截断的
        budget -= count_tokens(kept)
        calls.append({**call, "function": {"name": name, "arguments": kept}})
    truncated = {**message, "content": kept_content if (kept_content or message.get("content") is not None) else None}
    truncated.pop("tool_calls", None)
    if calls:
        truncated["tool_calls"] = calls
    return truncated


def _prefix_within(text: str, budget: int) -> str:
    """The longest prefix of ``text`` that counts at most ``budget`` tokens."""
    if count_tokens(text) <= budget:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if count_tokens(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def _wire_call(call: ToolCall, call_id: str) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": call.name, "arguments": arguments_text(call.args)}}


def _call_id(conversation: Conversation, conversation_id: str, choice: int, index: int, fixed: bool) -> str:
    if not fixed:
        return f"call_{uuid.uuid4().hex[:24]}"
    suffix = f"_{choice}" if choice else ""
    return f"call_{conversation_id}_{conversation.turn}_{index}{suffix}"


def _json_call(call: ToolCall) -> str:
    # 与文章 system prompt 要求的格式一致：{"tool": 工具名, "args": {参数名: 参数值}}
    if isinstance(call.args, dict):
        return json.dumps({JSON_CALL_KEY: call.name, JSON_ARGS_KEY: call.args}, ensure_ascii=False)
    return f'{{"{JSON_CALL_KEY}": {json.dumps(call.name, ensure_ascii=False)}, "{JSON_ARGS_KEY}": {call.args}}}'


def _conversation_id(conversation: Conversation) -> str:
    text = f"{conversation.question_index}|{conversation.question}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
