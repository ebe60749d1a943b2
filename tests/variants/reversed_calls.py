"""变体：同一轮里的工具调用倒过来执行（模型给的顺序被改了），其余与纯 loop 相同。

The model's answer passes through one extra step that reverses ``tool_calls``; the loop is
:func:`stage3_pure_loop.agent.run_agent` itself.
"""
from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda

from stage3_pure_loop.agent import run_agent as pure_loop


class _ReversingModel:
    """A chat model whose ``bind_tools`` result reverses every reply's tool calls."""

    def __init__(self, llm):
        self._llm = llm

    def bind_tools(self, tools, **kwargs):
        return self._llm.bind_tools(tools, **kwargs) | RunnableLambda(_reverse)


def _reverse(message: AIMessage) -> AIMessage:
    return message.model_copy(update={"tool_calls": list(reversed(message.tool_calls))})


def run_agent(user_input: str, max_steps: int = 10, *, llm, **controls):
    return pure_loop(user_input, max_steps, llm=_ReversingModel(llm), **controls)
