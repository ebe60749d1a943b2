"""历史记录的配对规则：调用和结果必须成对，真实端点对坏历史一律回 400。

In function calling, an assistant message with ``tool_calls`` must be followed by one
``tool`` message per call id, before any other message; a ``tool`` message must answer a
call of the assistant message right before its run of tool messages. OpenAI, DeepSeek and
vLLM answer a history that breaks this with HTTP 400, and that is exactly what a careless
sliding context window produces: it drops the assistant's call and keeps its result, or
keeps the call and drops a result (the second article's fix 3). The offline model refuses
the same histories, so a learner sees that failure offline too. The messages name the real
endpoints' wording first, then say in Chinese what to fix.

Left out: the JSON protocol (no ``tool_calls`` there: its results are plain user messages),
the deprecated ``function`` role.
"""
from __future__ import annotations

ERR_ORPHAN_TOOL = ("Invalid parameter: messages with role 'tool' must be a response to a preceding message with "
                   "'tool_calls' (messages[{index}] 是工具结果，但它前面没有发出这个调用的 assistant 消息；"
                   "截断历史时，调用和它的结果要一起保留或一起丢掉).")
ERR_UNKNOWN_ID = ("Invalid parameter: messages with role 'tool' must be a response to a preceding message with "
                  "'tool_calls': tool_call_id '{call_id}' is not among the calls of messages[{assistant}] "
                  "(messages[{index}] 回答的调用 id 不在前一条 assistant 消息的 tool_calls 里).")
ERR_UNANSWERED = ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                  "'tool_call_id'. The following tool_call_ids did not have response messages: {ids} "
                  "(messages[{index}] 发出的调用没有全部得到 tool 结果，下一条消息就来了；每个调用都要有一条 tool 消息回答它).")


def history_problem(messages: list[dict]) -> tuple[str, str] | None:
    """``(message, param)`` for a history a real endpoint refuses (``validation.py`` makes it a 400); None if fine."""
    pending: dict[str, None] = {}          # 最近一条带 tool_calls 的 assistant 消息里，还没回答的 id
    asked_at = -1                          # 那条 assistant 消息的位置
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if asked_at < 0:
                return ERR_ORPHAN_TOOL.format(index=index), f"messages[{index}].role"
            call_id = message["tool_call_id"]
            if call_id not in pending and call_id not in _ids(messages[asked_at]):
                return (ERR_UNKNOWN_ID.format(call_id=call_id, assistant=asked_at, index=index),
                        f"messages[{index}].tool_call_id")
            pending.pop(call_id, None)
            continue
        if pending:
            return ERR_UNANSWERED.format(ids=", ".join(pending), index=asked_at), f"messages[{asked_at}].tool_calls"
        asked_at = -1
        if role == "assistant" and message.get("tool_calls"):
            asked_at, pending = index, dict.fromkeys(_ids(message))
    if pending:
        return ERR_UNANSWERED.format(ids=", ".join(pending), index=asked_at), f"messages[{asked_at}].tool_calls"
    return None


def _ids(message: dict) -> list[str]:
    return [call["id"] for call in message.get("tool_calls") or []]
