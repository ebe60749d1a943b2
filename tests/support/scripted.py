"""A scripted model for tests: it answers request N with the N-th scripted decision.

Like openai-agents-python's test model, it fails when called past its script: the
embedded server turns the exception into an HTTP 500, and the run ends with status
``error`` instead of quietly looping. It speaks through the real embedded server and the
real wire format, so every implementation (LangChain or raw ``openai``, function calling
or JSON protocol) sees it exactly as it sees any model.
"""
from __future__ import annotations

import itertools
import threading

from shared.offline_llm.completion import build_completion
from shared.offline_llm.conversation import read_conversation
from shared.offline_llm.decision import Decision, ToolCall


class ScriptExhausted(RuntimeError):
    pass


def call(name: str, **args) -> Decision:
    return Decision(tool_calls=(ToolCall(name, args),))


def answer(text: str) -> Decision:
    return Decision(text=text)


class ScriptedBrain:
    def __init__(self, *decisions: Decision, repeat_last: bool = False):
        self._decisions = list(decisions)
        self._repeat_last = repeat_last
        self._lock = threading.Lock()
        self._count = itertools.count()
        self.requests: list[dict] = []

    def __call__(self, request: dict) -> dict:
        with self._lock:
            index = next(self._count)
            self.requests.append(request)
        if index >= len(self._decisions) and not self._repeat_last:
            raise ScriptExhausted(f"scripted model called {index + 1} times, script has {len(self._decisions)}")
        decision = self._decisions[min(index, len(self._decisions) - 1)]
        return build_completion(request, read_conversation(request), decision)
