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
    recursion_limit                          <==>  recursion_limit_for(max_steps)（shared/step_budget.py：框架的后备上限）
    步数上限（max_steps 次模型调用）         <==>  should_continue 数 state 里的 AI 消息，到数就导向 END

节点只返回"增量" {"messages": [新消息]}，由 add_messages 这个 reducer 追加进 state——
这就是第 3 阶段里那句 messages.append() 被框架藏起来的样子。

第三篇 §7 的可控性，在这张图上各有一个位置：
    人工确认   tools 节点里的 interrupt()：图暂停、状态存进 checkpointer，run_agent 问完人，
               用 Command(resume=答案) 恢复（预置版：interrupt_before=["tools"]）
    强制串行   tools 节点只执行第一个调用，其余各回一句"未执行"（预置版：post_model_hook）
    步数上限   should_continue 在条件边上数模型调用。为什么不只靠 recursion_limit：它按每次
               invoke 计数，审批一暂停、一恢复，计数就从头开始；数 state 里的消息则不会

本文件不包含：跨会话记忆（checkpointer 在这里只用来暂停和恢复一次运行）、流式 token、子图。
"""
from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

from shared.harness.graph_picture import draw_mermaid
from shared.approval import Approver, default_approver, needs_approval
from shared.harness.implementation import About
from shared.llm import chat_model
from shared.prompts import SYSTEM_PROMPT
from shared.run_thread import own_thread
from shared.step_budget import recursion_limit_for
from shared.tools import TOOLS, execute_tool_call, hold_back_extra_calls, refusal


class AgentState(TypedDict):
    # 【State】只有一个字段：消息列表。Annotated 里的 add_messages 是 reducer：
    # 节点返回的新消息会被"追加"而不是"覆盖"（按 id 去重/替换）。
    messages: Annotated[list[BaseMessage], add_messages]


def build_graph(llm: BaseChatModel, *, max_steps: int = 10, serial: bool = False):
    # 决策侧：把工具 schema 绑定到模型上，模型才知道能调什么（prebuilt 在内部做同一件事）
    llm_with_tools = llm.bind_tools(TOOLS)

    def agent_node(state: AgentState) -> dict:
        """【agent 节点】调 LLM，决定回答 or 调工具。系统提示词每次放在最前面，不存进 state。"""
        response = llm_with_tools.invoke([SystemMessage(content=SYSTEM_PROMPT), *state["messages"]])
        return {"messages": [response]}          # 只返回增量，reducer 负责追加

    def tools_node(state: AgentState) -> dict:
        """【tools 节点】执行最后一条 AI 消息里的工具调用（prebuilt 版：ToolNode）。"""
        last: AIMessage = state["messages"][-1]
        # 强制串行：只执行第一个调用，其余各回一句"未执行"（模型可能无视 parallel_tool_calls=False）
        calls, held_back = hold_back_extra_calls(last.tool_calls) if serial else (last.tool_calls, [])
        # 人工确认：interrupt() 让图在这里暂停，run_agent 拿去问人，恢复时它返回人的回答。
        # 恢复后节点会从头再跑一遍，所以先把危险调用全部问完、再执行任何一个——
        # 否则已经执行过的下单会在重跑时再下一次。
        approved = {call["id"]: interrupt({"tool": call["name"], "args": call["args"]})
                    for call in calls if needs_approval(call["name"])}
        refused = [call for call in calls if approved.get(call["id"]) is False]
        # execute_tool_call 捕获任何工具错误，把统一格式的错误文本作为 ToolMessage 回给模型
        executed = [execute_tool_call(call) for call in calls if call not in refused]
        return {"messages": [*held_back, *(refusal(call) for call in refused), *executed]}

    def should_continue(state: AgentState) -> Literal["tools", "__end__"]:
        """【条件边】最后一条消息有 tool_calls 就去 tools，否则结束（prebuilt 版：tools_condition）。

        步数上限也在这里：模型已经被调用 max_steps 次，它最后要的工具就不执行了。
        """
        last = state["messages"][-1]
        if not (isinstance(last, AIMessage) and last.tool_calls):
            return END
        model_calls = sum(isinstance(m, AIMessage) for m in state["messages"])
        return END if model_calls >= max_steps else "tools"

    graph = StateGraph(AgentState)
    graph.add_node("agent", agent_node)
    graph.add_node("tools", tools_node)
    graph.add_edge(START, "agent")                          # 入口：先让模型想
    graph.add_conditional_edges("agent", should_continue,   # 分叉：调工具，还是结束
                                {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")                        # 回流：带着工具结果再问模型
    # interrupt() 需要 checkpointer：暂停时把状态存下来，恢复时从这里接着走
    return graph.compile(checkpointer=InMemorySaver())


def run_agent(user_input: str, max_steps: int = 10, *, llm: BaseChatModel | None = None,
              approve: Approver | None = None, serial: bool = False, app=None) -> list[BaseMessage]:
    """跑一张图，返回完整 messages 历史。没给 llm 就用配置的模型，没给审批人就在终端上问（没有终端就拒绝）。

    app：一张 build_graph 编好的图（同样的 max_steps、serial）。不传就现编一张；compare 编一次、每次传进来。
    图里不存任何一次运行的状态，每次运行用自己的 thread（shared/run_thread.py）。
    """
    app = app or build_graph(llm or chat_model(), max_steps=max_steps, serial=serial)
    approve = approve or default_approver()
    # thread_id：checkpointer 按它存取这次运行的状态，暂停了也能接着走
    with own_thread(app, recursion_limit=recursion_limit_for(max_steps)) as config:
        payload: dict | Command = {"messages": [HumanMessage(content=user_input)]}
        while True:
            app.invoke(payload, config)
            paused = app.get_state(config).interrupts    # 停在 tools 节点的 interrupt() 上？
            if not paused:
                return app.get_state(config).values["messages"]
            request = paused[0].value                    # 一次问一个：{"tool": ..., "args": ...}
            payload = Command(resume=approve(request["tool"], request["args"]))


# 条件边上写的字：should_continue 返回的就是目标节点名，LangGraph 画图时便不标字，这里补上
EDGE_LABELS = {"tools": "有 tool_calls", END: "没有 tool_calls"}


def mermaid() -> str:
    """编译后的图，Mermaid 格式（--graph），条件边标上条件。画图不需要真的模型（用占位模型编译）。"""
    return draw_mermaid(build_graph, EDGE_LABELS)


# ---- 名片：命令行和 compare 靠它认出这个实现（不是 lesson 的一部分） ----
ABOUT = About(
    name="stategraph", tier="灰盒：手写 StateGraph（agent 节点 + tools 节点 + 条件边）",
    command="python -m stage2_stategraph",
    step_limit="should_continue 数到 max_steps 次模型调用：导向 END，模型要的工具不执行")
