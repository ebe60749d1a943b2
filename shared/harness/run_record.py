"""运行记录：每个实现跑完一个问题，都交出同一种记录（README「运行记录」一节）。

One record type for every tier is what makes them comparable: compare diffs records,
the trace printer prints records, ``--json`` prints a record. A LangChain tier's record is
built from its message list (:func:`rounds_from_messages`); a JSON-protocol loop hands
over a :class:`LoopResult` it built as it went.

Also here: the ``guessed_argument`` finding, the article's section-5
observation made mechanical: a number in a tool call's arguments that the model could
not have known yet (not in the question, not in any result returned before that call).

No LangChain import: messages are read by duck typing, so the zero-framework loops can
use this module with only the ``openai`` SDK installed.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from shared.harness.text import content_text


class Status(StrEnum):
    """How a run ended. A ``str``: it serialises as its value in every record."""

    ANSWERED = "answered"      # the model gave a non-empty final answer
    MAX_STEPS = "max_steps"    # the step budget ran out
    ERROR = "error"            # the run could not go on (the model endpoint, the transport)
    STOPPED = "stopped"        # a guard ended it (repeated calls, unknown tools, bad answers)

# create_react_agent 的步数守卫：剩余步数不够再走一轮工具时，它不抛异常，
# 而是用这句话替换模型的回复（langgraph/prebuilt/chat_agent_executor.py）。
# 所以"回答是这句话"在 stage 1 里意味着 max_steps，而不是模型真的答完了。
PREBUILT_STEP_GUARD_TEXT = "Sorry, need more steps to process this request."
# create_agent 的 ModelCallLimitMiddleware(exit_behavior="end")：调模型的次数用完时，它在第
# N+1 次调模型之前结束，追加一条 AI 消息 "Model call limits exceeded: run limit (N/N)"
# （langchain/agents/middleware/model_call_limit.py）。同样意味着 max_steps。
MODEL_CALL_LIMIT_TEXT = "Model call limits exceeded: "

# 模型返回了工具调用，但参数不是合法 JSON：LangChain 把它放进 invalid_tool_calls 而不是
# tool_calls，三个 stage 的循环都会把这条消息当成"最终回答"（内容往往是空的）。记成 error，
# 而不是一个空的 answered。
ERR_INVALID_TOOL_CALL = "模型返回了无法解析的工具调用 {name}({args})：{detail}"

GUESSED_ARGUMENT = "guessed_argument"
GUESS_DETAIL = "{number} 既不在问题里，也不在此前返回的工具结果里"

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass
class RunRecord:
    impl: str
    prompt: str
    temperature: float
    run: int = 0
    status: Status = Status.ANSWERED
    rounds: list[list[dict]] = field(default_factory=list)
    answer: str | None = None
    error: str | None = None
    flags: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})
    llm_calls: int = 0
    seconds: float = 0.0
    stopped_at: str | None = None          # 扩展字段：步数上限/守卫在哪里结束了这次运行
    run_id: str = ""                       # 这次运行的 id：place_order 写下的订单记着它
    exchanges: list[dict] = field(default_factory=list, repr=False)  # 不进 to_dict()

    def to_dict(self) -> dict:
        data = asdict(self)
        data.pop("exchanges")
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "RunRecord":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["status"] = Status(known.get("status", Status.ANSWERED))
        return cls(**known)


@dataclass
class LoopResult:
    """What a JSON-protocol loop returns; the runner turns it into a :class:`RunRecord`."""
    messages: list[dict]
    rounds: list[list[dict]]
    status: Status
    answer: str | None
    error: str | None = None
    stopped_at: str | None = None


def rounds_from_messages(messages: list) -> list[list[dict]]:
    """Group a LangChain message list into rounds: one per AI message that asked for tools.

    Each call gets the content of the ToolMessage that answered it (matched by
    ``tool_call_id``), or ``None`` if it was never executed (a step limit hit first).
    """
    results = {m.tool_call_id: m.content for m in messages if getattr(m, "type", "") == "tool"}
    return [
        [{"name": tc["name"], "args": tc["args"], "result": results.get(tc["id"])}
         for tc in m.tool_calls]
        for m in messages
        if getattr(m, "type", "") == "ai" and getattr(m, "tool_calls", None)
    ]


def rounds_from_wire(messages: list[dict]) -> list[list[dict]]:
    """Rounds read off a chat-completions request body (function calling): what a run did before it failed.

    When the endpoint fails mid-run, the lesson's ``run_agent`` raises and its own messages
    are gone; the last request it sent still holds every call and result so far.
    """
    results = {m.get("tool_call_id"): content_text(m.get("content")) for m in messages if m.get("role") == "tool"}
    rounds = []
    for message in messages:
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        round_ = []
        for call in message["tool_calls"]:
            function = call.get("function") or {}
            try:
                args = json.loads(function.get("arguments") or "{}")
            except (TypeError, ValueError):
                args = function.get("arguments")
            round_.append({"name": function.get("name"), "args": args, "result": results.get(call.get("id"))})
        rounds.append(round_)
    return rounds


def outcome_from_messages(messages: list) -> tuple[Status, str | None, str | None]:
    """``(status, answer, error)`` of a LangChain run, read off its last message."""
    last = messages[-1] if messages else None
    if getattr(last, "type", "") == "ai" and not getattr(last, "tool_calls", None):
        if last.content == PREBUILT_STEP_GUARD_TEXT or content_text(last.content).startswith(MODEL_CALL_LIMIT_TEXT):
            return Status.MAX_STEPS, None, None
        if invalid := getattr(last, "invalid_tool_calls", None):
            bad = invalid[0]
            detail = " ".join(str(bad.get("error") or "参数不是合法 JSON").split())
            return Status.ERROR, None, ERR_INVALID_TOOL_CALL.format(name=bad.get("name"), args=bad.get("args"),
                                                                    detail=detail)
        return Status.ANSWERED, content_text(last.content), None
    return Status.MAX_STEPS, None, None  # 最后一条还是工具调用/工具结果：步数用完了


def as_record(run: RunRecord | LoopResult | list) -> RunRecord:
    """A record for whatever a run produced: a record, a JSON loop's result, or a message list.

    For a Python session: ``print_trace(run_agent("..."))`` works for every lesson.
    """
    if isinstance(run, RunRecord):
        return run
    if isinstance(run, LoopResult):
        prompt = next((m["content"] for m in run.messages if m.get("role") == "user"), "")
        record = RunRecord(impl="", prompt=prompt, temperature=0.0, rounds=run.rounds, status=run.status,
                           answer=run.answer, error=run.error, stopped_at=run.stopped_at)
    else:
        prompt = next((content_text(m.content) for m in run if getattr(m, "type", "") == "human"), "")
        status, answer, error = outcome_from_messages(run)
        record = RunRecord(impl="", prompt=prompt, temperature=0.0, rounds=rounds_from_messages(run),
                           status=status, answer=answer, error=error)
    record.flags = guessed_argument_flags(record.prompt, record.rounds)
    return record


def guessed_argument_flags(prompt: str, rounds: list[list[dict]]) -> list[dict]:
    """Numbers in tool arguments that appear neither in the question nor in earlier results."""
    known = _numbers(prompt)
    flags = []
    for index, round_ in enumerate(rounds, 1):
        for call in round_:
            for number in sorted(_numbers(_flatten(call["args"])) - known):
                flags.append({"kind": GUESSED_ARGUMENT, "round": index, "tool": call["name"],
                              "detail": GUESS_DETAIL.format(number=_show(number))})
        # 这一轮的结果要等这一轮的调用都发出之后才回来：同一轮里的调用看不到彼此的结果
        for call in round_:
            known |= _numbers(call.get("result") or "")
    return flags


def _numbers(text: str) -> set[float]:
    return {float(n) for n in _NUMBER.findall(text.replace(",", ""))}


def _flatten(value) -> str:
    if isinstance(value, dict):
        return " ".join(_flatten(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return " ".join(_flatten(v) for v in value)
    return str(value)


def _show(number: float) -> str:
    return str(int(number)) if number.is_integer() else str(number)

