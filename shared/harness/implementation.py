"""One implementation as the harness sees it: a lesson's ``run_agent`` plus a few facts about it.

Each lesson declares its own facts (:class:`About`) next to its code, and its ``__main__``
hands its own ``run_agent`` to the shared CLI. compare lists every implementation in
``compare/implementations.py``. Nothing here imports a lesson: the layering is
``shared`` <- stages <- ``compare``.

Two independent facts describe an implementation. Its *protocol* is how tool calls travel
(``function_calling``: the API's ``tools`` / ``tool_calls`` fields; ``json``: JSON in the
text); compare groups wire-level checks by it. Its *SDK* is what ``run_agent`` takes and
returns, and picks the typed adapter that turns one call into an :class:`Outcome` (a value;
the runner builds the record from it):

- LangChain: ``run_agent(user_input, max_steps, *, llm, approve, serial) -> list[BaseMessage]``
  (a ``ChatOpenAI``);
- raw ``openai``: ``run_agent(user_input, max_steps, *, client, model, temperature, seed, approve)
  -> LoopResult`` (an ``openai.OpenAI``), plus ``serial`` for function calling and
  ``disabled_fixes`` for an implementation that declares fixes.

The JSON protocol is only spoken through the raw SDK (one call per reply, so ``--serial``
holds by construction); function calling through both (the LangChain tiers, and ``fc_loop``).

``approve`` is the run's approver (:mod:`shared.approval`; a run without one refuses every
dangerous call); ``serial`` asks the tier to *enforce* one call per reply, not only to send
``parallel_tool_calls=False``.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from shared.approval import refuse_all
from shared.harness.run_record import LoopResult, Status, outcome_from_messages, rounds_from_messages

if TYPE_CHECKING:
    from shared.harness.endpoint import Endpoint
    from shared.harness.runner import RunOptions


class Protocol(StrEnum):
    FUNCTION_CALLING = "function_calling"
    JSON = "json"


class Sdk(StrEnum):
    LANGCHAIN = "langchain"
    OPENAI = "openai"


@dataclass(frozen=True)
class About:
    """What the CLI, the run records and compare say about an implementation."""

    name: str                         # the run record's "impl"
    tier: str                         # one line for the banner and --help
    command: str                      # how a user starts it: "python -m stage3_pure_loop"
    step_limit: str                   # how it stops when the step budget runs out (stopped_at)
    protocol: Protocol = Protocol.FUNCTION_CALLING
    sdk: Sdk | None = None            # None: LangChain for function calling, openai for the JSON protocol
    fixes: tuple[str, ...] = ()       # what --no-fix can switch off (only hardened_loop has any)


@dataclass(frozen=True)
class Outcome:
    """What one call of ``run_agent`` produced, in the run record's terms."""

    rounds: list[list[dict]]
    status: Status
    answer: str | None = None
    error: str | None = None
    stopped_at: str | None = None


@dataclass(frozen=True)
class Implementation:
    about: About
    run_agent: Callable
    # The lesson's own builder, ``build(llm, max_steps=, serial=)``, when its ``run_agent`` also takes
    # a built ``app=`` (the three graph lessons): the harness then compiles the graph once per
    # endpoint and settings, not once per run. Each run keeps its state in a thread of its own
    # (shared/run_thread.py), so one compiled graph serves concurrent runs and approval pauses.
    build: Callable | None = None

    @property
    def name(self) -> str:
        return self.about.name

    @property
    def protocol(self) -> Protocol:
        return self.about.protocol

    @property
    def sdk(self) -> Sdk:
        if self.about.sdk is not None:
            return self.about.sdk
        return Sdk.OPENAI if self.protocol is Protocol.JSON else Sdk.LANGCHAIN

    @property
    def module(self) -> str:
        """Where ``run_agent`` is defined (what a fresh process must import to run it)."""
        return self.run_agent.__module__

    def run(self, prompt: str, endpoint: Endpoint, options: RunOptions) -> Outcome:
        adapter = run_openai_sdk if self.sdk is Sdk.OPENAI else run_langchain
        return adapter(self, prompt, endpoint, options)


def run_langchain(impl: Implementation, prompt: str, endpoint: Endpoint, options: RunOptions) -> Outcome:
    # 聊天模型只由 (temperature, serial, seed) 决定，编好的图再加 max_steps：每个端点各建一次，各次运行共用
    # （键里有它依赖的全部设置，一次运行拿到的正是它自己会建的那个）
    settings = (options.temperature, options.serial, options.seed)
    llm = endpoint.reuse.get(("chat_model", *settings), lambda: endpoint.chat_model(
        temperature=options.temperature, serial=options.serial, seed=options.seed))
    built = {}
    if impl.build is not None:
        built["app"] = endpoint.reuse.get(("app", impl.name, *settings, options.max_steps), lambda: impl.build(
            llm, max_steps=options.max_steps, serial=options.serial))
    messages = impl.run_agent(prompt, options.max_steps, llm=llm, approve=options.approve or refuse_all,
                              serial=options.serial, **built)
    status, answer, error = outcome_from_messages(messages)
    return Outcome(rounds_from_messages(messages), status, answer, error)


def run_openai_sdk(impl: Implementation, prompt: str, endpoint: Endpoint, options: RunOptions) -> Outcome:
    switches: dict = {"disabled_fixes": options.disabled_fixes} if impl.about.fixes else {}
    if impl.protocol is Protocol.FUNCTION_CALLING:      # the JSON protocol is one call per reply anyway
        switches["serial"] = options.serial
    client = endpoint.reuse.get("openai_client", endpoint.openai_client)
    result: LoopResult = impl.run_agent(
        prompt, options.max_steps, client=client, model=endpoint.model,
        temperature=options.temperature, seed=options.seed, approve=options.approve or refuse_all, **switches)
    return Outcome(result.rounds, result.status, result.answer, result.error, result.stopped_at)
