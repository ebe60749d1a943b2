"""跑一次：某个实现 × 一个问题 → 一条 RunRecord。所有入口（命令行、compare、测试）都走这里。

This is where the tiers are made comparable: each gets its model from the same
:class:`~shared.endpoint.Endpoint` with a fresh :class:`~shared.meter.ExchangeLog`, and
whatever it returns (a LangChain message list or a JSON loop's LoopResult) becomes the
same record. A failed run is data, not a crash: any exception becomes status ``error``
with a one-line message (the API key scrubbed from it), so a sweep goes on.
"""
from __future__ import annotations

import importlib
import time
from dataclasses import dataclass

from shared.endpoint import Endpoint
from shared.implementations import JSON_PROTOCOL, Implementation, get_implementation
from shared.meter import ExchangeLog
from shared.run_record import (
    ERROR, MAX_STEPS, RunRecord, guessed_argument_flags, outcome_from_messages, rounds_from_messages,
)
from shared.tool_functions import clock_fixed_at


@dataclass(frozen=True)
class RunOptions:
    temperature: float = 0.0
    max_steps: int = 10
    serial: bool = False
    seed: int | None = None
    run: int = 0
    disabled_fixes: frozenset[str] = frozenset()
    clock: str | None = None          # 固定 get_current_time 的"现在"（AGENT_CLOCK）；None = 真实时钟


def run_once(impl: Implementation | str, prompt: str, endpoint: Endpoint,
             options: RunOptions = RunOptions()) -> RunRecord:
    """Run one implementation on one prompt; never raises for a failed run."""
    impl = get_implementation(impl) if isinstance(impl, str) else impl
    record = RunRecord(impl=impl.name, prompt=prompt, temperature=options.temperature, run=options.run)
    log = ExchangeLog(secret=endpoint.api_key)
    module = importlib.import_module(impl.module)     # 先 import：框架的加载时间不算进这次运行
    started = time.perf_counter()
    try:
        with clock_fixed_at(options.clock):
            _run(module, impl, prompt, endpoint, options, log, record)
    except Exception as error:  # noqa: BLE001 — 一次失败的运行是数据，不是崩溃
        record.status, record.answer = ERROR, None
        record.error = _one_line(error, secret=endpoint.api_key)
    record.seconds = round(time.perf_counter() - started, 3)
    record.exchanges = log.exchanges
    record.llm_calls = log.llm_calls
    record.usage = log.usage
    record.flags = guessed_argument_flags(prompt, record.rounds)
    if record.status == MAX_STEPS and not record.stopped_at:
        record.stopped_at = f"{impl.step_limit}（max_steps={options.max_steps}）"
    return record


def _run(module, impl, prompt, endpoint, options, log, record) -> None:
    if impl.protocol == JSON_PROTOCOL:
        _run_json_loop(module, impl, prompt, endpoint, options, log, record)
    else:
        _run_langchain(module, prompt, endpoint, options, log, record)


def _run_langchain(module, prompt, endpoint, options, log, record) -> None:
    llm = endpoint.chat_model(temperature=options.temperature, serial=options.serial,
                              seed=options.seed, log=log)
    messages = module.run_agent(prompt, options.max_steps, llm=llm)
    record.rounds = rounds_from_messages(messages)
    record.status, record.answer, record.error = outcome_from_messages(messages)


def _run_json_loop(module, impl, prompt, endpoint, options, log, record) -> None:
    switches = {"disabled_fixes": options.disabled_fixes} if impl.fixes else {}
    result = module.run_agent(prompt, options.max_steps, client=endpoint.openai_client(log=log),
                              model=endpoint.model, temperature=options.temperature,
                              seed=options.seed, **switches)
    record.rounds, record.status, record.answer = result.rounds, result.status, result.answer
    record.error, record.stopped_at = result.error, result.stopped_at


def _one_line(error: Exception, *, secret: str) -> str:
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return text.replace(secret, "***") if secret else text
