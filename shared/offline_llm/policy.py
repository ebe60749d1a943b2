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
  1  the question matches no request              greeting / thanks / 你是谁 / bye: a short direct
     (time, weather, price, holding, arithmetic)  answer in Chinese; anything else: CAPABILITY_SENTENCE
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
                                                  Stock.stale_price: calculate("300 * 100") for 腾讯
  6  otherwise, a step is ready                   exactly one call: the first ready step in plan order;
                                                  a holding's expression copies the observed price
                                                  verbatim: calculate({"expression": "385.6 * 100"})
  7  nothing left to call                         the final answer in Chinese from the observed results
                                                  (answer.py): time, 385.6 港元, 38,560 港元; a tool
                                                  error relayed; a 300-guess named and corrected

An order (``帮我买 100 股腾讯``) is one more step, ``place_order``; a human's refusal counts as
its result: the model answers that nothing was ordered and never asks again. The 50-line
loop (the article's code) appends only the refusal, not the model's own call, so a refusal
found anywhere after the question also counts (:func:`_with_refusals`).

Temperature 0 (or absent) therefore always gives the serial chain, one call per round:
get_current_time({}) -> get_stock_price({"symbol": "腾讯"}) -> calculate({"expression":
"385.6 * 100"}) -> "...385.6 × 100 = 38,560 港元。".

Every decision then passes through :func:`shared.offline_llm.faults.apply_faults` (the
fault modes of ``OFFLINE_LLM_FAULTS``), and ``completion.py`` puts it on the wire: as
``tool_calls`` in function calling, or as ``{"tool": ..., "args": ...}`` plain content in
the JSON protocol, one call per reply. The same policy decides in both protocols, so the
answers are identical for the same observed results.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from shared import market_data
from shared.calculator import format_number
from shared.offline_llm.answer import CAPABILITY_SENTENCE, SMALL_TALK_REPLIES, final_answer, plain_number
from shared.offline_llm.completion import build_completion
from shared.offline_llm.conversation import (FUNCTION_CALLING, Conversation, Observation, message_text,
                                             read_conversation)
from shared.offline_llm.decision import Decision, ToolCall
from shared.offline_llm.faults import FaultContext, apply_faults, check_fault_modes
from shared.offline_llm.intents import HOLDING, ORDER, make_plan, small_talk
from shared.offline_llm.progress import Progress, track_progress
from shared.offline_llm.sampling import chooses_parallel, derived_rng, seed_material, temperature_of
from shared.tool_functions import REFUSED_MESSAGE

__all__ = ["CAPABILITY_SENTENCE", "PolicyBrain", "decide"]


@dataclass(frozen=True)
class PolicyBrain:
    """The default brain of :class:`~shared.offline_llm.OfflineServer`: request body -> completion.

    ``seed`` is ``OFFLINE_LLM_SEED``; ``faults`` the enabled fault modes (checked here, so
    an unknown name fails at start-up, not at the first request).
    """

    seed: int | None = None
    faults: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "faults", check_fault_modes(tuple(self.faults)))

    def __call__(self, request: dict) -> dict:
        conversation = read_conversation(request)
        material = seed_material(request, conversation.question, self.seed)
        decision = decide(request, conversation, material)
        context = FaultContext(faults=self.faults, request=request, protocol=conversation.protocol,
                               conversation=conversation,
                               rng=derived_rng(material, f"faults|turn {conversation.turn}"))
        return build_completion(request, conversation, apply_faults(decision, context))


def decide(request: dict, conversation: Conversation, material: str) -> Decision:
    """Rules 1-7 above: this turn's decision, before any fault."""
    plan = make_plan(conversation.question)
    if not plan:                                                   # 规则 1
        return Decision.answer(SMALL_TALK_REPLIES.get(small_talk(conversation.question) or "",
                                                      CAPABILITY_SENTENCE))
    progress = track_progress(plan, conversation.observations, conversation.offered_tools)   # 规则 2-4
    progress = _with_refusals(progress, request, conversation)
    ready = progress.ready()
    if not ready:                                                  # 规则 7
        return Decision.answer(final_answer(progress))
    if _parallel_round(request, conversation, progress, material):  # 规则 5
        calls = [call for i in range(len(plan)) if (call := _guessed_call(progress, i)) is not None]
        if len(calls) >= 2:
            return Decision(tool_calls=tuple(calls))
    return Decision(tool_calls=(_call(progress, ready[0]),))      # 规则 6


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
    ``Stock.stale_price`` (腾讯 -> 300), exactly the article's ``calculate("300 * 100")``.
    A stock it has never heard of has no such memory: that call is left out.
    """
    step = progress.plan[index]
    if not progress.is_callable(index):
        return None
    if step.kind != HOLDING:
        return _call(progress, index)
    stock = market_data.find_stock(step.subject)
    if stock is None:
        return None
    guess = f"{plain_number(format_number(stock.stale_price))} * {step.quantity}"
    return ToolCall(progress.offered_name(step) or step.tool, {"expression": guess})



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
