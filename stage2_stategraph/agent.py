"""第 2 阶段（灰盒）：手写 StateGraph，拆解 ReAct 循环的状态机实现。

第 1 阶段的 create_react_agent 里面就是这样一张图。这里把它亲手搭一遍：

    START → agent ─(有 tool_calls?)─是→ tools → agent → ...
                   └────────────────否→ END

文章概念 → 本文件：
    State（messages + add_messages reducer） <==>  class AgentState
    agent 节点                               <==>  agent_node()   （预置版：create_react_agent 内部的 call_model）
    tools 节点                               <==>  tools_node()   （预置版：ToolNode(TOOLS)）
    条件边（tool_calls 非空?）               <==>  should_continue()（预置版：tools_condition）
    tools → agent 回流边                     <==>  graph.add_edge("tools", "agent")
    recursion_limit                          <==>  recursion_limit_for(max_steps)（shared/step_budget.py，与第 1 阶段同一换算）
    步数用完                                 <==>  GraphRecursionError（预置版会回一句 "need more steps"，这里是异常）

节点只返回"增量" {"messages": [新消息]}，由 add_messages 这个 reducer 追加进 state——
这就是第 3 阶段里那句 messages.append() 被框架藏起来的样子。

本文件不包含：checkpointer/记忆、流式 token、人工审批中断（interrupt）、子图。
"""
from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from shared.harness.graph_picture import draw_mermaid
from shared.harness.implementation import About
from shared.llm import chat_model
from shared.prompts import SYSTEM_PROMPT
from shared.step_budget import recursion_limit_for
from shared.tools import TOOLS, execute_tool_call


class AgentState(TypedDict):
    # 【State】只有一个字段：消息列表。Annotated 里的 add_messages 是 reducer：
    # 节点返回的新消息会被"追加"而不是"覆盖"（按 id 去重/替换）。
    messages: Annotated[list[BaseMessage], add_messages]


def build_graph(llm: BaseChatModel):
    # 决策侧：把工具 schema 绑定到模型上，模型才知道能调什么（prebuilt 在内部做同一件事）
    llm_with_tools = llm.bind_tools(TOOLS)

    def agent_node(state: AgentState) -> dict:
        """【agent 节点】调 LLM，决定回答 or 调工具。系统提示词每次放在最前面，不存进 state。"""
        response = llm_with_tools.invoke([SystemMessage(content=SYSTEM_PROMPT), *state["messages"]])
        return {"messages": [response]}          # 只返回增量，reducer 负责追加

    def tools_node(state: AgentState) -> dict:
        """【tools 节点】执行最后一条 AI 消息里的全部工具调用（prebuilt 版：ToolNode）。"""
        last: AIMessage = state["messages"][-1]
        # execute_tool_call 捕获任何工具错误，把统一格式的错误文本作为 ToolMessage 回给模型
        return {"messages": [execute_tool_call(call) for call in last.tool_calls]}

    def should_continue(state: AgentState) -> Literal["tools", "__end__"]:
        """【条件边】最后一条消息有 tool_calls 就去 tools，否则结束（prebuilt 版：tools_condition）。"""
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    graph = StateGraph(AgentState)
    graph.add_node("agent", agent_node)
    graph.add_node("tools", tools_node)
    graph.add_edge(START, "agent")                          # 入口：先让模型想
    graph.add_conditional_edges("agent", should_continue,   # 分叉：调工具，还是结束
                                {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")                        # 回流：带着工具结果再问模型
    return graph.compile()


def run_agent(user_input: str, max_steps: int = 10, *, llm: BaseChatModel | None = None,
              app=None) -> list[BaseMessage]:
    """跑一张图，返回完整 messages 历史；步数用完时返回已走到的那部分。没给 llm 就用配置的模型。"""
    # 建 agent 就在下面两行。app 是 compare 传进来的一张编好的图：它用同一个模型、同样的设置跑几百次，
    # 而编一次图（bind_tools、加节点和边、compile）比离线模型回答一次还贵；图里不存任何一次运行的状态
    # （状态全在 invoke 的输入里），所以它只编一次 build_graph(llm)，之后每次复用，
    # 发出的请求和 trace 一字不差（tests/test_reuse.py 检查）。单独运行时不传，就在这里现编一张。
    if app is None:
        app = build_graph(llm or chat_model())
    inputs = {"messages": [HumanMessage(content=user_input)]}
    config = {"recursion_limit": recursion_limit_for(max_steps)}
    # 用 stream(stream_mode="values") 而不是 invoke：每走完一个超步就拿到一份完整 state。
    # 这样即使撞上 recursion_limit（GraphRecursionError），手里也还有最后一份 state。
    state = inputs
    try:
        for state in app.stream(inputs, config, stream_mode="values"):
            pass
    except GraphRecursionError:
        pass        # 步数用完 == 第 3 阶段 range(max_steps) 走完；run record 记为 max_steps
    return state["messages"]


# 条件边上写的字：should_continue 返回的就是目标节点名，LangGraph 画图时便不标字，这里补上
EDGE_LABELS = {"tools": "有 tool_calls", END: "没有 tool_calls"}


def mermaid() -> str:
    """编译后的图，Mermaid 格式（--graph），条件边标上条件。画图不需要真的模型（用占位模型编译）。"""
    return draw_mermaid(build_graph, EDGE_LABELS)


# ---- 名片：命令行和 compare 靠它认出这个实现（不是 lesson 的一部分） ----
ABOUT = About(
    name="stategraph", tier="灰盒：手写 StateGraph（agent 节点 + tools 节点 + 条件边）",
    command="python -m stage2_stategraph", step_limit="recursion_limit 用完：LangGraph 抛出 GraphRecursionError")
