"""对账：计划里的哪些步骤已经做过了（调用发出去、结果也回来了）。

The offline model remembers nothing between requests; like a real model it re-reads the
conversation every turn. :func:`track_progress` pairs each step of the plan with the
observed call that did it:

1. steps with fixed arguments (time, weather, price, arithmetic) take the first unused
   observed call with the same tool and the same arguments (compared by value: case and
   whitespace do not matter);
2. a holding's ``calculate`` (its arguments depend on a price) takes the next unused
   ``calculate`` call that has an ``expression``: in a parallel round that is the guessed
   ``300 * 100``, and the final answer will say so.

Calls that match no step (a repeated call, a tool that does not exist) are simply left
over: the plan goes on as if they had not happened.

Left out: choosing the next step (``policy.py``), wording (``answer.py``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from shared.offline_llm.conversation import Observation
from shared.offline_llm.intents import HOLDING, Step

# 同一个工具在不同 agent 里可能叫法不同：第二篇文章的 50 行代码把计算器叫 calculator
TOOL_ALIASES = {"calculate": ("calculator",)}
_CANONICAL = {alias: name for name, aliases in TOOL_ALIASES.items() for alias in aliases}

# 从 get_stock_price 的结果里抄出股价和币种："腾讯（0700.HK）当前股价：385.6 港元"
_PRICE = re.compile(r"(?:股价|price)\s*[:：]\s*(\d[\d,]*(?:\.\d+)?)\s*([^\s\d,，。;；)）]*)", re.IGNORECASE)


@dataclass(frozen=True)
class Price:
    text: str       # 原样照抄的数字，如 "385.6"（不做四舍五入、不加千分位）
    currency: str   # 如 "港元"；结果里没有就是 ""


@dataclass(frozen=True)
class Progress:
    plan: tuple[Step, ...]
    observed: tuple[Observation | None, ...]   # 与 plan 一一对应；None = 还没做
    offered: tuple[str, ...]                   # 这次请求提供的工具名

    def offered_name(self, step: Step) -> str | None:
        """The name under which ``step``'s tool is offered (``calculate`` or ``calculator``)."""
        for name in (step.tool, *TOOL_ALIASES.get(step.tool, ())):
            if name in self.offered:
                return name
        return None

    def price_for(self, index: int) -> Price | None:
        """For a holding step: the price its price step brought back (None: not yet / not found)."""
        step = self.plan[index]
        found = self.observed[step.depends_on] if step.depends_on is not None else None
        return parse_price(found.result) if found is not None else None

    def holding_expression(self, index: int) -> str | None:
        """``"385.6 * 100"``: the observed price, copied verbatim, times the share count."""
        price = self.price_for(index)
        return f"{price.text} * {self.plan[index].quantity}" if price is not None else None

    def is_callable(self, index: int) -> bool:
        """Offered, and (for a holding) its price step is offered too."""
        step = self.plan[index]
        if self.offered_name(step) is None:
            return False
        return step.depends_on is None or self.is_callable(step.depends_on)

    def ready(self) -> list[int]:
        """Steps that can be called now: not done, offered, and their inputs are known."""
        return [i for i, step in enumerate(self.plan)
                if self.observed[i] is None and self.is_callable(i)
                and (step.kind != HOLDING or self.holding_expression(i) is not None)]


def track_progress(plan: tuple[Step, ...], observations: tuple[Observation, ...],
                   offered: tuple[str, ...]) -> Progress:
    matched: list[Observation | None] = [None] * len(plan)
    unused = list(observations)
    for index, step in enumerate(plan):           # 第 1 遍：参数固定的步骤，按值精确匹配
        if step.args is not None:
            matched[index] = _take(unused, lambda o, s=step: _same_call(s, o))
    for index, step in enumerate(plan):           # 第 2 遍：持仓的 calculate，取下一个 calculate 调用
        if step.args is None:
            matched[index] = _take(unused, lambda o, s=step: canonical_tool(o.name) == s.tool
                                   and isinstance(o.args, dict) and isinstance(o.args.get("expression"), str))
    return Progress(plan, tuple(matched), offered)


def canonical_tool(name: str) -> str:
    return _CANONICAL.get(name, name)


def parse_price(result: str) -> Price | None:
    found = _PRICE.search(result)
    return Price(found.group(1).replace(",", ""), found.group(2)) if found else None


def _take(observations: list[Observation], wanted) -> Observation | None:
    for position, observation in enumerate(observations):
        if wanted(observation):
            return observations.pop(position)
    return None


def _same_call(step: Step, observation: Observation) -> bool:
    if canonical_tool(observation.name) != step.tool or not isinstance(observation.args, dict):
        return False
    return _by_value(observation.args) == _by_value(step.args or {})


def _by_value(args: dict) -> dict:
    # "Tencent" 与 "tencent"、"365 * 24" 与 "365*24" 视为同一个参数
    return {k: "".join(v.split()).casefold() if isinstance(v, str) else v for k, v in args.items()}
