"""翻车现场 3 的修复：滑动窗口——上下文有上限，但问题和"调用+结果"永远成对。

The article's fix keeps the system prompt and the last N-1 messages::

    if len(messages) > MAX_CONTEXT_MESSAGES:
        messages = [messages[0]] + messages[-(MAX_CONTEXT_MESSAGES - 1):]

Two things go wrong with that cut, and this module avoids both:

1. it can drop the user's question (``messages[1]``): after a few rounds the model sees
   tool results for a task it no longer knows;
2. it cuts at any message: the window may start with a tool *result* whose call was
   dropped (in the JSON protocol a ``工具 X 的执行结果`` message with nothing before it; in
   function calling a ``tool`` message without its ``tool_calls``, which the API rejects
   with a 400).

So the window works on **blocks**, not messages:

- the *head* is pinned: everything up to and including the first ``user`` message (the
  system prompt and the question);
- the rest is cut into blocks, each an ``assistant`` message plus the messages that
  answer it (its tool result, an error, a nudge);
- blocks are dropped oldest first until the window fits; the newest block always stays
  (without it the model would not know what just happened).

The bound is a message count (the article's) and/or a token count, measured with
:func:`count_message_tokens`, a simple documented estimate (no tokenizer download).

Left out: summarising what is dropped (LangChain's ``ConversationSummaryMemory``); the
window forgets, by design, and the hardened loop sizes it so that a normal task fits.
"""
from __future__ import annotations

import json
from collections.abc import Callable

from shared.tokens import count_tokens

MAX_CONTEXT_MESSAGES = 20      # 文章的取值


def count_message_tokens(message: dict) -> int:
    """Tokens of one chat message as it travels: the message serialized as JSON.

    The counter is the offline model's (:func:`shared.tokens.count_tokens`: a
    CJK character or a word is one token), the one it uses for ``usage`` and for its
    context limit, so a window bounded here is bounded there too. On a real endpoint it
    is an estimate of the right size, which is all a bound needs.
    """
    return count_tokens(json.dumps(message, ensure_ascii=False)) + 1   # +1：列表里的逗号


def slide_window(messages: list[dict], *, max_messages: int | None = MAX_CONTEXT_MESSAGES,
                 max_tokens: int | None = None,
                 count: Callable[[dict], int] = count_message_tokens) -> list[dict]:
    """The messages to send: the pinned head plus the newest blocks that fit the bounds.

    Returns a new list (``messages`` is not changed): the loop keeps the full history
    for its record, and sends the window.
    """
    head_size = pinned_head_size(messages)
    head, blocks = messages[:head_size], split_blocks(messages[head_size:])
    used_messages, used_tokens = len(head), sum(count(m) for m in head)
    kept: list[list[dict]] = []
    for block in reversed(blocks):          # 从最新的块往回装，装不下就停（只丢最老的）
        block_tokens = sum(count(m) for m in block)
        fits = ((max_messages is None or used_messages + len(block) <= max_messages)
                and (max_tokens is None or used_tokens + block_tokens <= max_tokens))
        if kept and not fits:
            break
        kept.append(block)                  # 最新的一块无论如何都保留
        used_messages += len(block)
        used_tokens += block_tokens
    return head + [m for block in reversed(kept) for m in block]


def pinned_head_size(messages: list[dict]) -> int:
    """How many leading messages are pinned: up to and including the first ``user`` message."""
    for index, message in enumerate(messages):
        if message.get("role") == "user":
            return index + 1
    return len(messages)


def split_blocks(messages: list[dict]) -> list[list[dict]]:
    """Cut messages into blocks: each ``assistant`` message with what follows it.

    Messages before the first ``assistant`` message (if any) form a block of their own.
    """
    blocks: list[list[dict]] = []
    for message in messages:
        if message.get("role") == "assistant" or not blocks:
            blocks.append([message])
        else:
            blocks[-1].append(message)
    return blocks
