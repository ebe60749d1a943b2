"""打印 ReAct 循环每一步，格式与文章一致，方便几个实现横向对比。

The articles print a message list: ``[i] 👤 用户``, ``[i] 🤖 AI 调用工具``, ``[i] 🔧 工具返回``,
``[i] 🤖 AI 回答``, with ``i`` the message's position (1 = the system prompt, not shown).
This printer works on a :class:`~shared.harness.run_record.RunRecord`, so the very same printer
serves every tier, LangChain or not (a Python session may also hand it what a lesson's
``run_agent`` returned: a message list or a ``LoopResult``); the numbering is the one the message list of
a function-calling run has (all calls of a round share the AI message's number, as in the
article's section 5: ``[3] get_current_time``, ``[3] get_stock_price``, ``[3] calculate``).
"""
from __future__ import annotations

import sys

from shared.harness.text import for_terminal
from shared.harness.run_record import LoopResult, RunRecord, Status, as_record

STATUS_LINES = {
    Status.MAX_STEPS: "⚠️ 达到最大步数，强制结束：{detail}",
    Status.ERROR: "❌ 运行出错：{detail}",
}
STOPPED_LINE = "⛔ 被守卫终止：{detail}"


def print_trace(run: RunRecord | LoopResult | list, file=None) -> None:
    record, file = as_record(run), file or sys.stdout    # 运行时才取 sys.stdout：重定向也能接住

    def show(line: str) -> None:                         # 模型和工具写的字可能带控制字符：先变成可见的
        print(for_terminal(line), file=file)

    show("\n-- Agent 推理过程 --")
    index = 2                                      # [1] 是系统提示词，不打印
    show(f"[{index}] 👤 用户: {record.prompt}")
    for round_ in record.rounds:
        index += 1
        for call in round_:
            show(f"[{index}] 🤖 AI 调用工具: {call['name']}({call['args']})")
        for call in round_:
            if call.get("result") is not None:
                index += 1
                show(f"[{index}] 🔧 工具返回: {call['result']}")
    if record.status == Status.ANSWERED:
        show(f"[{index + 1}] 🤖 AI 回答: {record.answer}")
    else:
        template = STATUS_LINES.get(record.status, STOPPED_LINE)
        show(template.format(detail=record.stopped_at or record.error or record.status))
    for flag in record.flags:
        show(f"⚠️ {flag['kind']}（第 {flag['round']} 轮 {flag['tool']}）：{flag['detail']}")
    show("-- 推理结束 --")
