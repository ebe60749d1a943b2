"""Run once: one implementation x one prompt -> one RunRecord. Every entry point comes here.

This is where the tiers are made comparable: each gets its model from the same
:class:`~shared.harness.endpoint.Endpoint`, its requests are recorded in a fresh
:class:`~shared.harness.meter.ExchangeLog`, and whatever it returns becomes the same record.

Two kinds of failure, handled differently (as mini-swe-agent and smolagents do):

- an *expected* failure, outside the lesson's control (the model endpoint answers with an
  error, the transport fails, a cassette has no answer, which the embedded server reports
  as an HTTP error): the run ends with status ``error`` and a one-line cause, and a sweep
  goes on;
- anything else is a bug, most likely in a lesson file a learner is editing: it is
  recorded on the exception (``error.run_record``, the cause with its file and line) and
  re-raised, so the command line shows the traceback, and compare records it and goes on.
"""
from __future__ import annotations

import json
import time
import traceback
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai

from shared.harness.endpoint import MAX_RETRIES, Endpoint
from shared.harness.implementation import Implementation, Outcome, Protocol
from shared.harness.meter import REDACTED, ExchangeLog
from shared.harness.responses import failure_line
from shared.harness.run_record import RunRecord, Status, guessed_argument_flags, rounds_from_wire
from shared.orders import DEFAULT_DATA_DIR, orders_recorded_in
from shared.tool_functions import clock_fixed_at

# 端点或传输层的失败：不是 lesson 的错，记为 status "error"
EXPECTED_FAILURES: tuple[type[BaseException], ...] = (openai.APIError, httpx.HTTPError)
BUG_LINE = "{kind}: {message}（{where}）"
EMPTY_MESSAGE = "empty_message: 模型返回了空消息（没有文字，也没有工具调用）"
REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class RunOptions:
    temperature: float = 0.0
    max_steps: int = 10
    serial: bool = False
    seed: int | None = None
    run: int = 0
    disabled_fixes: frozenset[str] = frozenset()
    clock: str | None = None          # 固定 get_current_time 的"现在"（AGENT_CLOCK）；None = 真实时钟
    # 危险调用的审批人（shared.approval）；None = 没有人在场，一律拒绝
    approve: Callable[[str, dict], bool] | None = None
    data_dir: Path = DEFAULT_DATA_DIR  # place_order 写订单的目录（AGENT_DATA_DIR）


def run_once(impl: Implementation, prompt: str, endpoint: Endpoint,
             options: RunOptions = RunOptions()) -> RunRecord:
    """Run one implementation on one prompt; an expected failure is a record, a bug raises."""
    record = RunRecord(impl=impl.name, prompt=prompt, temperature=options.temperature, run=options.run,
                       run_id=uuid.uuid4().hex[:12])
    log = ExchangeLog(secret=endpoint.api_key)
    started = time.perf_counter()
    try:
        with ExitStack() as fixed:
            fixed.enter_context(clock_fixed_at(options.clock))
            fixed.enter_context(log.recording())
            fixed.enter_context(orders_recorded_in(options.data_dir, implementation=impl.name,
                                                   run_id=record.run_id))
            outcome = impl.run(prompt, endpoint, options)
    except EXPECTED_FAILURES as error:
        cause = failure_line(error, timeout=endpoint.timeout, retries=MAX_RETRIES)
        outcome = Outcome(rounds=rounds_so_far(impl, log), status=Status.ERROR,
                          error=one_line(cause, secret=endpoint.api_key))
    except Exception as bug:
        outcome = Outcome(rounds=[], status=Status.ERROR, error=bug_line(bug, secret=endpoint.api_key))
        bug.run_record = _finish(record, outcome, impl, options, log, started, endpoint.api_key)
        raise
    return _finish(record, outcome, impl, options, log, started, endpoint.api_key)


def rounds_so_far(impl: Implementation, log: ExchangeLog) -> list[list[dict]]:
    """The rounds a failed run made before the failure, from the last request it sent (function calling).

    A JSON-protocol loop's calls hide in its own wording, so its rounds are not rebuilt here.
    """
    requests = [e["request"] for e in log.exchanges if isinstance(e.get("request"), dict)]
    if impl.protocol is not Protocol.FUNCTION_CALLING or not requests:
        return []
    return rounds_from_wire(requests[-1].get("messages") or [])


def _finish(record: RunRecord, outcome: Outcome, impl: Implementation, options: RunOptions,
            log: ExchangeLog, started: float, endpoint_secret: str = "") -> RunRecord:
    record.rounds, record.status, record.answer = outcome.rounds, outcome.status, outcome.answer
    record.error, record.stopped_at = outcome.error, outcome.stopped_at
    if record.status == Status.ANSWERED and not (record.answer or "").strip():
        # 空消息（没有文字，也没有工具调用）不是回答：各实现的循环都会把它当成终答，这里统一改判
        record.status, record.answer, record.error = Status.ERROR, None, EMPTY_MESSAGE
    record.seconds = round(time.perf_counter() - started, 3)
    record.exchanges = log.exchanges
    record.llm_calls = log.llm_calls
    record.usage = log.usage
    record.flags = guessed_argument_flags(record.prompt, record.rounds)
    if endpoint_secret:
        scrub(record, endpoint_secret)
    if record.status == Status.MAX_STEPS and not record.stopped_at:
        record.stopped_at = f"{impl.about.step_limit}（max_steps={options.max_steps}）"
    return record


def scrub(record: RunRecord, secret: str) -> None:
    """The key out of everything the model or a tool said (a server may echo it in an answer)."""
    record.answer = record.answer and record.answer.replace(secret, REDACTED)
    record.error = record.error and record.error.replace(secret, REDACTED)
    for round_ in record.rounds:
        for call in round_:
            if isinstance(call.get("result"), str):
                call["result"] = call["result"].replace(secret, REDACTED)
            call["args"] = json.loads(json.dumps(call["args"], ensure_ascii=False).replace(secret, REDACTED))


def one_line(error: BaseException | str, *, secret: str) -> str:
    """``Type: message`` (or the text) on one line, the API key scrubbed."""
    text = " ".join((error if isinstance(error, str) else f"{type(error).__name__}: {error}").split())
    return text.replace(secret, "***") if secret else text


def bug_line(error: BaseException, *, secret: str) -> str:
    """A bug's one line plus where it happened: the innermost frame in this repository."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if Path(f.filename).resolve().is_relative_to(REPO_ROOT)
            and ".venv" not in Path(f.filename).parts] or frames
    where = "?"
    if ours:
        frame = ours[-1]
        path = Path(frame.filename).resolve()
        shown = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
        where = f"{shown}:{frame.lineno}"
    return BUG_LINE.format(kind=type(error).__name__, message=one_line(error, secret=secret).split(": ", 1)[-1],
                           where=where)
