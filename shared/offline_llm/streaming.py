"""流式输出：把一个完整的 completion 切成 server-sent events（``stream: true``）。

What ``stream=True`` clients (the ``openai`` SDK, LangChain's ``ChatOpenAI`` streaming,
curl ``-N``) expect from an OpenAI-compatible server, in order:

1. a role chunk: ``delta {"role": "assistant", "content": "", "refusal": null}``;
2. content deltas, a few characters each;
3. tool-call deltas: per call, a first chunk with ``index``, ``id``, ``type`` and the
   function ``name`` (``arguments: ""``), then its ``arguments`` split over several chunks
   (clients must concatenate by ``index``: this is the part naive clients get wrong);
4. a finish chunk: empty ``delta`` with ``finish_reason``;
5. with ``stream_options.include_usage``: a last chunk with ``choices: []`` and ``usage``
   (every earlier chunk then carries ``usage: null``, as OpenAI sends it);
6. ``data: [DONE]``.

With ``n`` > 1, steps 1-4 are repeated for each choice (``index`` 0, 1, ...).

Any brain's completion streams the same way, so a replayed cassette streams too.

Left out: the HTTP side (``server.py`` writes these lines).
"""
from __future__ import annotations

import json
from collections.abc import Iterator

PIECE_CHARS = 8          # 每个 delta 最多几个字符：小到能看出"流"，又不至于太碎
DONE_LINE = b"data: [DONE]\n\n"


def stream_chunks(completion: dict, *, include_usage: bool) -> Iterator[dict]:
    """The ``chat.completion.chunk`` objects that spell out ``completion`` (every choice, in turn)."""

    def chunk(index: int, delta: dict, finish_reason: str | None = None) -> dict:
        body = {"id": completion["id"], "object": "chat.completion.chunk",
                "created": completion["created"], "model": completion["model"],
                "system_fingerprint": completion.get("system_fingerprint"),
                "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}
        if include_usage:
            body["usage"] = None
        return body

    for choice in completion["choices"]:
        index, message = choice.get("index", 0), choice.get("message") or {}
        yield chunk(index, {"role": "assistant", "content": "", "refusal": None})
        for piece in _pieces(message.get("content") or ""):
            yield chunk(index, {"content": piece})
        for call_index, call in enumerate(message.get("tool_calls") or []):
            function = call["function"]
            yield chunk(index, {"tool_calls": [{"index": call_index, "id": call["id"], "type": "function",
                                                "function": {"name": function["name"], "arguments": ""}}]})
            for piece in _pieces(function["arguments"]):
                yield chunk(index, {"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]})
        yield chunk(index, {}, choice.get("finish_reason") or "stop")
    if include_usage:
        final = chunk(0, {})
        final["choices"], final["usage"] = [], completion.get("usage")
        yield final


def sse_event(chunk: dict) -> bytes:
    """One server-sent event: ``data: {...}`` and a blank line."""
    return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode("utf-8")


def _pieces(text: str) -> list[str]:
    return [text[i:i + PIECE_CHARS] for i in range(0, len(text), PIECE_CHARS)]
