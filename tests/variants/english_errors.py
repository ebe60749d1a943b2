"""变体：工具出错时回给模型的是另一句话（LangChain ToolNode 默认的英文模板），其余与纯 loop 相同。

The other tiers all use :func:`shared.tool_functions.format_tool_error`; a tier that words
errors its own way changes what the model reads, which compare must report as a different
tool result, not as "the same trace".
"""
from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage

from shared.prompts import SYSTEM_PROMPT
from shared.tools import TOOL_MAP, TOOLS

ERROR_TEXT = "Error: {error}\n Please fix your mistakes."


def _execute(call: dict) -> ToolMessage:
    try:
        output = str(TOOL_MAP[call["name"]].invoke(call["args"]))
    except Exception as error:  # noqa: BLE001 — 与纯 loop 相同，只是措辞不同
        output = ERROR_TEXT.format(error=repr(error))
    return ToolMessage(content=output, tool_call_id=call["id"], name=call["name"])


def run_agent(user_input: str, max_steps: int = 10, *, llm, **controls):   # 审批、串行：这个变体不涉及
    model = llm.bind_tools(TOOLS)
    messages = [SystemMessage(content=SYSTEM_PROMPT), HumanMessage(content=user_input)]
    for _ in range(max_steps):
        messages.append(model.invoke(messages))
        if not messages[-1].tool_calls:
            break
        messages.extend(_execute(call) for call in messages[-1].tool_calls)
    return messages
