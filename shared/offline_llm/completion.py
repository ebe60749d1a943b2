"""把一个 Decision 说成 OpenAI 的话：一个完整的非流式 ``chat.completion`` 对象。

The wire format, in one place. The policy decides *what* to say (:class:`Decision`);
this module says it the way an OpenAI-compatible server does, in the request's protocol:

- function calling: ``message.tool_calls`` (``arguments`` is a JSON *string*, written with
  ``ensure_ascii=False`` like DeepSeek, vLLM or Ollama do), ``finish_reason`` ``tool_calls``;
  otherwise ``content`` and ``stop``;
- JSON protocol: everything is plain ``content``; a call is exactly
  ``{"tool": "get_stock_price", "args": {"symbol": "腾讯"}}``.

Ids are deterministic: ``call_`` + a short hash of the conversation (the question and its
position) + the turn and the call's index, so a replayed run gets the very same ids.

Left out: streaming (``streaming.py``: it slices this object into chunks).
"""
from __future__ import annotations

import hashlib
import json
import time

from shared.offline_llm.conversation import JSON_PROTOCOL, Conversation
from shared.offline_llm.decision import Decision, ToolCall
from shared.tokens import usage

DEFAULT_MODEL = "offline"
# system_fingerprint：客户端可据此知道回答来自哪个"模型版本"
SYSTEM_FINGERPRINT = "offline-rule-policy-1"


def build_completion(request: dict, conversation: Conversation, decision: Decision) -> dict:
    """The ``chat.completion`` object for ``decision``, in the conversation's protocol."""
    conversation_id = _conversation_id(conversation)
    if conversation.protocol == JSON_PROTOCOL:
        message = {"role": "assistant", "content": render_json_protocol(decision)}
    else:
        message = {"role": "assistant", "content": decision.text}
        if decision.tool_calls:
            message["tool_calls"] = [_wire_call(call, f"call_{conversation_id}_{conversation.turn}_{i}")
                                     for i, call in enumerate(decision.tool_calls)]
    return {
        "id": f"chatcmpl-{conversation_id}-{conversation.turn}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model") or DEFAULT_MODEL,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": usage(request, message),
    }


def render_json_protocol(decision: Decision) -> str:
    """The reply text of the JSON protocol: the text (if any), then one JSON object per call."""
    parts = [decision.text] if decision.text else []
    parts += [_json_call(call) for call in decision.tool_calls]
    return "\n".join(parts)


def arguments_text(args: dict | str) -> str:
    """A call's ``arguments`` on the wire: JSON text; a ``str`` (a fault's broken JSON) verbatim."""
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def _wire_call(call: ToolCall, call_id: str) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": call.name, "arguments": arguments_text(call.args)}}


def _json_call(call: ToolCall) -> str:
    # 与文章 system prompt 要求的格式一致：{"tool": 工具名, "args": {参数名: 参数值}}
    if isinstance(call.args, dict):
        return json.dumps({"tool": call.name, "args": call.args}, ensure_ascii=False)
    return f'{{"tool": {json.dumps(call.name, ensure_ascii=False)}, "args": {call.args}}}'


def _conversation_id(conversation: Conversation) -> str:
    text = f"{conversation.question_index}|{conversation.question}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
