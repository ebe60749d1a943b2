"""离线模型的"大脑"：一张确定性的规则表。它不是语言模型。

The offline model's brain is a deterministic, rule-based policy: pure functions from the
request body (messages, tools, temperature, seed, parallel_tool_calls) to a decision,
either tool calls or a final text. It exists so that every stage of this repo runs, and
can be compared turn by turn, without a network or an API key. It does **not** understand
language: it matches patterns (``intents.py``) and follows the rules below. Point
``LLM_BASE_URL`` / ``LLM_API_KEY`` / ``LLM_MODEL`` at a real model for anything else.

Rules, checked in this order every turn (the model is stateless: it re-reads the
conversation each time, ``conversation.py``)::

  #  when                                         then
  -  -------------------------------------------  ----------------------------------------------
  0  no tools, and a system prompt asking for a   say it only reads the article's {"tool", "args"}
     JSON call format with other keys             protocol, and how to use a real model
     (``{"action": ..., "input": ...}``)
  1  the question asks for an action no offered   that clause is taken out of the question; the
     tool can do (book a flight, sell shares...,  answer says plainly it cannot (actions.py) and
     ``actions.py``)                              still answers the rest
  1b the question matches no request              an action it cannot do: said so; a follow-up
     (time, weather, price, holding, arithmetic)  ("那上海呢？"): every question starts from zero;
                                                  greeting / thanks / 你是谁 / bye: a short direct
                                                  answer in Chinese; anything else: CAPABILITY_SENTENCE
                                                  (what works offline + how to configure a real model),
                                                  never a guessed tool call
  2  plan = the requests, in the order asked      e.g. 「现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？」
                                                  -> time, price(腾讯), holding(腾讯 × 100)
  3  a step is done when its call was observed   observed = assistant tool call + a tool result with
                                                  the same tool_call_id (JSON protocol: the user
                                                  message right after the call)
  4  a step whose tool is not offered             skipped; the final answer says it is missing
  5  first turn, temperature T > 0, ≥ 2 callable  with probability 1 − e^(−T), seeded (sampling.py):
     steps, parallel_tool_calls not false,        ONE round with every call at once; a holding's price
     function-calling protocol                    is not known yet, so it is guessed from
                                                  memory.py: calculate("300 * 100") for 腾讯
  6  otherwise, a step is ready                   exactly one call: the first ready step in plan order;
                                                  a holding's expression copies the observed price
                                                  verbatim: calculate({"expression": "385.6 * 100"})
  7  nothing left to call                         the final answer in Chinese from the observed results
                                                  (answer.py): time, 385.6 港元, 38,560 港元; a tool
                                                  error relayed; a 300-guess named and corrected;
                                                  what a tool could not serve (a forecast) said

The request's parameters bend these rules the way they bend a real model:

- ``tool_choice: "none"``: no tool is callable; the answer says which steps that left undone;
  ``"required"``: a call even when nothing is left (the first offered tool, its arguments
  filled from its schema); a named function: that function, for the step it serves or with
  arguments filled from its schema (``structured.py``: LangChain's
  ``with_structured_output(method="function_calling")``);
- ``response_format`` ``json_object`` / ``json_schema``: the final answer as JSON that
  validates (``structured.py``); tool calls are unaffected;
- ``n``: that many choices, each with its own seeded draw (identical at temperature 0);
- ``parallel_tool_calls: false``: never more than one call per round (rule 5 off).

An order (``帮我买 100 股腾讯``) is one more step, ``place_order``; a human's refusal counts as
its result: the model answers that nothing was ordered and never asks again. The 50-line
loop (the article's code) appends only the refusal, not the model's own call, so a refusal
found anywhere after the question also counts (:func:`_with_refusals`).

Temperature 0 (or absent) therefore always gives the serial chain, one call per round:
get_current_time({}) -> get_stock_price({"symbol": "腾讯"}) -> calculate({"expression":
"385.6 * 100"}) -> "...385.6 × 100 = 38,560 港元。".

Before any rule, the context window: a prompt over :data:`CONTEXT_WINDOW` tokens (128K, as
DeepSeek and GPT-4o) is refused with HTTP 400 ``context_length_exceeded``, as a real endpoint
does. Reading is linear in the length of the conversation (``intents.py``, ``actions.py``), so
the densest prompt inside the window is answered in about a second.

Every decision then passes through :func:`shared.offline_llm.faults.apply_faults` (the
fault modes of ``OFFLINE_LLM_FAULTS``), and ``completion.py`` puts it on the wire: as
``tool_calls`` in function calling, or as ``{"tool": ..., "args": ...}`` plain content in
the JSON protocol, one call per reply. The same policy decides in both protocols, so the
answers are identical for the same observed results.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from shared.calculator import format_number
from shared.offline_llm.actions import caveats_for, find_actions, without_clauses
from shared.offline_llm.answer import (CAPABILITY_SENTENCE, ONLY_ARTICLE_PROTOCOL, SMALL_TALK_REPLIES, action_sentence,
                                       final_answer, no_memory_sentence, plain_number,
                                       unclear_action_sentence)
from shared.offline_llm.completion import build_completion
from shared.offline_llm.conversation import (FUNCTION_CALLING, Conversation, Observation, message_text,
                                             read_conversation, system_text)
from shared.offline_llm.decision import Decision, ToolCall
from shared.offline_llm.faults import FaultContext, apply_faults, check_fault_modes, refuse_beyond_window
from shared.offline_llm.intents import (ARITHMETIC, HOLDING, ORDER, PRICE, WEATHER, follow_up_subject, make_plan,
                                        normalize, small_talk)
from shared.offline_llm.lesson_wording import REFUSED_MESSAGE, renamed_protocol_keys
from shared.offline_llm.memory import remembered_price
from shared.offline_llm.progress import Progress, parse_price, track_progress
from shared.offline_llm.sampling import chooses_parallel, derived_rng, seed_material, temperature_of
from shared.offline_llm.structured import Facts, fill, fill_json, json_object_answer

__all__ = ["CAPABILITY_SENTENCE", "PolicyBrain", "decide"]


# 上下文窗口（tokens.prompt_tokens 数出来的 token），和 DeepSeek、GPT-4o 的 128K 一样；超过就 400
# context_length_exceeded，像真实端点那样。规则表读一遍的时间和长度成正比，窗口内最密的问题也在一秒左右
CONTEXT_WINDOW = 128_000


@dataclass(frozen=True)
class PolicyBrain:
    """The default brain of :class:`~shared.offline_llm.OfflineServer`: request body -> completion.

    ``seed`` is ``OFFLINE_LLM_SEED``; ``faults`` the enabled fault modes (checked here, so
    an unknown name fails at start-up, not at the first request); ``fixed_ids``: deterministic
    completion and tool-call ids (for tests and replays that need them; a real endpoint's ids,
    and this model's by default, are unique per response).
    """

    seed: int | None = None
    faults: tuple[str, ...] = ()
    fixed_ids: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "faults", check_fault_modes(tuple(self.faults)))

    def __call__(self, request: dict) -> dict:
        refuse_beyond_window(request, CONTEXT_WINDOW)
        conversation = read_conversation(request)
        material = seed_material(request, conversation.question, self.seed)
        decisions = []
        for choice in range(request.get("n") or 1):       # n：每个 choice 各自抽签（温度 0 时都一样）
            drawn = material if choice == 0 else f"{material}|choice {choice}"
            context = FaultContext(faults=self.faults, request=request, protocol=conversation.protocol,
                                   conversation=conversation,
                                   rng=derived_rng(drawn, f"faults|turn {conversation.turn}"))
            decisions.append(apply_faults(decide(request, conversation, drawn), context))
        return build_completion(request, conversation, *decisions, fixed_ids=self.fixed_ids)


@dataclass(frozen=True)
class _Reading:
    """This turn's understanding: what is asked, what is offered, what the request allows."""

    text: str                        # 归一化后的问题
    plan: tuple                      # intents.Step，去掉了办不到的动作所在的子句
    progress: Progress
    unserved: tuple[str, ...]        # 办不到的动作：每个一句话
    tool_choice: str                 # auto / none / required / function
    forced: str | None               # tool_choice 点名的函数


def decide(request: dict, conversation: Conversation, material: str) -> Decision:
    """Rules 0-7 above, bent by the request's parameters: this turn's decision, before any fault."""
    if not request.get("tools") and (keys := renamed_protocol_keys(system_text(request.get("messages") or []))):
        return Decision.answer(ONLY_ARTICLE_PROTOCOL.format(call_key=keys[0], args_key=keys[1]))   # 规则 0
    reading = _read(request, conversation)
    decision = _decide(request, conversation, reading, material)
    if decision.tool_calls or decision.text is None:
        return decision
    return Decision.answer(_formatted(request, reading, decision.text))


def _read(request: dict, conversation: Conversation) -> _Reading:
    choice = request.get("tool_choice")
    forced = choice["function"]["name"] if isinstance(choice, dict) else None
    mode = "function" if forced else (choice if isinstance(choice, str) else "auto")
    offered = () if mode == "none" else conversation.offered_tools
    text = normalize(conversation.question)
    # 规则 1：办不到的动作（订机票、卖股票…），它所在的子句不再参与规划
    matched = find_actions(text)
    actions = [m for m in matched if m.action.tool not in offered]
    plan = make_plan(without_clauses(text, actions))
    unserved = tuple(action_sentence(m.action.task, m.action.tool, offered) for m in actions)
    # 工具给了，却没听懂要做什么（"帮我把茅台清仓"：卖多少股？）：如实说缺什么，不去猜
    planned_tools = {step.tool for step in plan}
    unserved += tuple(dict.fromkeys(unclear_action_sentence(m.action.task, m.action.tool) for m in matched
                                    if m.action.tool in offered and m.action.tool not in planned_tools))
    progress = _with_refusals(track_progress(plan, conversation.observations, offered), request, conversation)
    return _Reading(text, plan, progress, unserved, mode, forced)


def _decide(request: dict, conversation: Conversation, reading: _Reading, material: str) -> Decision:
    plan, progress = reading.plan, reading.progress
    if not plan and reading.forced is None and reading.tool_choice != "required":      # 规则 1b
        return Decision.answer(_nothing_to_do(conversation.question, reading))
    ready = progress.ready()
    if reading.forced is not None:                  # 点名的函数：为它能做的那一步调用它，否则按 schema 填参数
        serving = [i for i in ready if progress.offered_name(plan[i]) == reading.forced]
        if serving:
            return Decision(tool_calls=(_call(progress, serving[0]),))
        return Decision(tool_calls=(_schema_call(request, reading, reading.forced),))
    if not ready:                                   # 规则 7
        if reading.tool_choice == "required":
            return Decision(tool_calls=(_schema_call(request, reading, progress.offered[0]),))
        return Decision.answer(_final_text(reading))
    if _parallel_round(request, conversation, progress, material):  # 规则 5
        calls = [call for i in range(len(plan)) if (call := _guessed_call(progress, i)) is not None]
        if len(calls) >= 2:
            return Decision(tool_calls=tuple(calls))
    return Decision(tool_calls=(_call(progress, ready[0]),))      # 规则 6


def _nothing_to_do(question: str, reading: _Reading) -> str:
    if reading.unserved:
        return "".join(reading.unserved)
    if (name := follow_up_subject(question)) is not None:
        return no_memory_sentence(question, name)
    return SMALL_TALK_REPLIES.get(small_talk(question) or "", CAPABILITY_SENTENCE)


def _final_text(reading: _Reading) -> str:
    caveats = caveats_for(reading.text, {s.kind for s, done in zip(reading.plan, reading.progress.observed) if done})
    return final_answer(reading.progress, tools_forbidden=reading.tool_choice == "none",
                        extra=(*caveats, *reading.unserved))


def _parallel_round(request: dict, conversation: Conversation, progress: Progress, material: str) -> bool:
    callable_steps = [i for i in range(len(progress.plan)) if progress.is_callable(i)]
    return (conversation.turn == 0                       # 只在这个问题的第一轮做一次抉择
            and conversation.protocol == FUNCTION_CALLING  # JSON 协议一次只能回一个调用
            and request.get("parallel_tool_calls") is not False
            and len(callable_steps) >= 2
            and chooses_parallel(material, temperature_of(request)))


def _call(progress: Progress, index: int) -> ToolCall:
    """The call for a ready step; a holding copies the observed price into its expression."""
    step = progress.plan[index]
    name = progress.offered_name(step) or step.tool
    if step.kind == HOLDING:
        return ToolCall(name, {"expression": progress.holding_expression(index)})
    return ToolCall(name, dict(step.args or {}))


def _guessed_call(progress: Progress, index: int) -> ToolCall | None:
    """A step's call in the parallel round, where no result is known yet.

    A holding needs a price nobody has returned: the "model" fills in what it remembers,
    ``memory.remembered_price`` (腾讯 -> 300), exactly the article's ``calculate("300 * 100")``.
    A stock it has never heard of has no such memory: that call is left out.
    """
    step = progress.plan[index]
    if not progress.is_callable(index):
        return None
    if step.kind != HOLDING:
        return _call(progress, index)
    remembered = remembered_price(step.subject)
    if remembered is None:
        return None
    guess = f"{plain_number(format_number(remembered))} * {step.quantity}"
    return ToolCall(progress.offered_name(step) or step.tool, {"expression": guess})


# ---- 结构化输出（response_format、点名的函数）----

def _facts(reading: _Reading) -> Facts:
    plan, observed = reading.plan, reading.progress.observed
    subject = {kind: next((s.subject for s in plan if s.kind == kind), None) for kind in (WEATHER, PRICE, ARITHMETIC)}
    number = None
    for step, observation in zip(plan, observed):
        if observation is None:
            continue
        if step.kind in (ARITHMETIC, HOLDING):
            number = _as_number(observation.result) if _as_number(observation.result) is not None else number
        elif step.kind == PRICE and (price := parse_price(observation.result)) is not None:
            number = float(price.text)
    served = bool(plan) and all(o is not None for o in observed) and not reading.unserved
    return Facts(answer=_final_text(reading) if plan else _nothing_to_do(reading.text, reading),
                 question=reading.text, city=subject[WEATHER], stock=subject[PRICE], expression=subject[ARITHMETIC],
                 number=number, served=served)


def _formatted(request: dict, reading: _Reading, text: str) -> str:
    """The final answer in the requested ``response_format`` (text unchanged for ``text``)."""
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_object":
        return json_object_answer(_facts(reading))
    if fmt.get("type") == "json_schema":
        return fill_json(fmt["json_schema"].get("schema") or {"type": "object", "properties": {"answer": {}}},
                         _facts(reading))
    return text


def _schema_call(request: dict, reading: _Reading, name: str) -> ToolCall:
    """A call of ``name`` whose arguments are filled from its parameters schema."""
    tool = next(t["function"] for t in request.get("tools") or [] if t["function"]["name"] == name)
    arguments = fill(tool.get("parameters") or {"type": "object", "properties": {}}, _facts(reading))
    return ToolCall(name, arguments if isinstance(arguments, dict) else {})


def _as_number(text: str) -> float | None:
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        return None

def _with_refusals(progress: Progress, request: dict, conversation: Conversation) -> Progress:
    """An order step not observed, but refused by the human somewhere after the question, is done."""
    messages = (request.get("messages") or [])[conversation.question_index + 1:]
    said = [message_text(m) for m in messages if isinstance(m, dict) and m.get("role") in ("user", "tool")]
    observed = list(progress.observed)
    for index, step in enumerate(progress.plan):
        refusal = REFUSED_MESSAGE.format(tool_name=step.tool)
        if step.kind == ORDER and observed[index] is None and any(refusal in text for text in said):
            observed[index] = Observation(step.tool, dict(step.args or {}), refusal)
    return replace(progress, observed=tuple(observed))
