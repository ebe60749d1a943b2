"""数 token：离线模型报告的用量是数出来的，不是写死的常数。

Real servers count tokens with the model's tokenizer. The offline model has none, so it
uses a small, documented approximation that still behaves like a token count (a longer
prompt costs more, a Chinese character costs about one token):

- each CJK character = 1 token;
- each run of ASCII letters, digits and ``_`` (a word, a number's integer or fraction
  part) = 1 token;
- each other non-space character (punctuation, symbols, ``.`` in ``385.6``) = 1 token;
- whitespace is free.

``prompt_tokens`` counts the request's ``messages`` and ``tools`` serialized as JSON
(``ensure_ascii=False``), so the schema of every tool offered costs tokens, as it does on a
real endpoint. ``completion_tokens`` counts the reply's text and each tool call's name and
arguments.

Left out: any real tokenizer (tiktoken...), per-message overheads, cached tokens.
"""
from __future__ import annotations

import json
import re

_TOKEN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[A-Za-z0-9_]+|\S")


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def prompt_tokens(request: dict) -> int:
    tokens = count_tokens(json.dumps(request.get("messages") or [], ensure_ascii=False))
    if request.get("tools"):
        tokens += count_tokens(json.dumps(request["tools"], ensure_ascii=False))
    return tokens


def completion_tokens(message: dict) -> int:
    tokens = count_tokens(message.get("content") or "")
    for call in message.get("tool_calls") or []:
        tokens += count_tokens(call["function"]["name"]) + count_tokens(call["function"]["arguments"])
    return tokens


def usage(request: dict, message: dict) -> dict[str, int]:
    """The ``usage`` object of a completion: prompt, completion and their sum."""
    prompt, completion = prompt_tokens(request), completion_tokens(message)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
