"""人工确认（第二篇"方向 3"：生产环境 Agent 的最后一道安全防线）：每一层共用的审批策略。

文章的写法::

    if tool_name in DANGEROUS_TOOLS:
        confirm = input(f"Agent 请求执行高风险操作 {tool_name}，参数: {tool_args}\\n确认执行？(y/n): ")
        if confirm.lower() != "y":
            messages.append({"role": "user", "content": f"用户拒绝了 {tool_name} 操作。请尝试替代方案。"})
            continue

这里把 ``input()`` 那一行变成一个可以换掉的函数——*审批人*（approver）：
``approve(tool_name, args) -> bool``。每一层在执行危险调用之前都问它，只是"在哪里问"不同：
第 1 阶段在框架停在 tools 节点之前时问，第 2 阶段在 tools 节点里用 ``interrupt()`` 暂停后问，
第 3 阶段和两个 JSON 循环在执行之前直接问。四种审批人：

    ask_on_terminal   文章的 input() 确认（问题里有工具、参数和算出来的金额）
    approve_all       全部批准（--approve all）
    refuse_all        全部拒绝（--approve none；没有人在场时的默认）
    Scripted          测试用：按脚本回答，并记下被问了什么

被拒绝的调用不执行，拒绝本身作为它的结果回给模型：``用户拒绝了 place_order 操作。请尝试替代方案。``
（:data:`shared.tool_functions.REFUSED_MESSAGE`，每一层逐字相同）。

本文件不包含：哪些工具危险（``shared/tool_functions.py`` 的 ``DANGEROUS_TOOLS``，全仓库只标记这一处）、
审批之外的权限体系（角色、额度、审计日志）。
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from shared.tool_functions import DANGEROUS_TOOLS, quote_order

# 审批人：工具名 + 参数 -> 批准与否
Approver = Callable[[str, dict], bool]

# 文章的提示语，多了一项：算出来的金额（人要看到"这一下要花多少钱"才能做决定）
APPROVE_PROMPT = "Agent 请求执行高风险操作 {tool_name}，参数: {args}{detail}\n确认执行？(y/n): "
AMOUNT_DETAIL = "\n即将{quote}"
NO_AMOUNT_DETAIL = "\n（金额算不出来：{reason}；执行的话工具会报错，不会下单）"
POLICIES = ("ask", "all", "none")


def needs_approval(tool_name: str) -> bool:
    """危险工具才要问人；其余直接执行。"""
    return tool_name in DANGEROUS_TOOLS


def approval_question(tool_name: str, args: dict) -> str:
    """The question a human is asked: the tool, its arguments and, for an order, the amount."""
    detail = ""
    if tool_name == "place_order" and isinstance(args, dict):
        try:
            detail = AMOUNT_DETAIL.format(quote=quote_order(**args).describe())
        except (TypeError, ValueError) as error:
            detail = NO_AMOUNT_DETAIL.format(reason=error)
    return APPROVE_PROMPT.format(tool_name=tool_name, args=args, detail=detail)


def ask_on_terminal(tool_name: str, args: dict) -> bool:
    """文章的 input() 确认：只有回答 y 才执行。"""
    return input(approval_question(tool_name, args)).strip().lower() == "y"


def approve_all(tool_name: str, args: dict) -> bool:
    return True


def refuse_all(tool_name: str, args: dict) -> bool:
    return False


@dataclass
class Scripted:
    """For tests: answers from a script (the last answer repeats), and remembers every question."""

    answers: Iterable[bool] = (False,)
    questions: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._answers = list(self.answers) or [False]

    def __call__(self, tool_name: str, args: dict) -> bool:
        self.questions.append(approval_question(tool_name, args))
        return self._answers[min(len(self.questions), len(self._answers)) - 1]


def policy(name: str) -> Approver:
    """``--approve ask|all|none`` -> the approver."""
    return {"ask": ask_on_terminal, "all": approve_all, "none": refuse_all}[name]


def default_policy_name() -> str:
    """``ask`` when a human can answer (stdin is a terminal), ``none`` otherwise: no human, no order."""
    return "ask" if sys.stdin is not None and sys.stdin.isatty() else "none"


def default_approver() -> Approver:
    """What ``run_agent`` uses when it is given no approver (as in the articles' one-argument call)."""
    return policy(default_policy_name())
