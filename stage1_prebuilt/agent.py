"""第 1 阶段（黑盒）：用 LangGraph 预置的 create_react_agent 跑通 ReAct Agent。

一行 ``create_react_agent(llm, TOOLS, prompt=SYSTEM_PROMPT)`` 就得到一个会"思考 → 调工具
→ 看结果 → 再思考"的 agent。我们只看得见输入（一句话）和输出（一串消息），中间的循环、
状态、终止条件全被封装在预置图里——这就是"黑盒"。第 2 阶段会把它拆成 StateGraph，
第 3 阶段再拆成一个 for 循环。

文章概念 → 本文件：
    ReAct 循环（思考→行动→观察）  <==>  create_react_agent 内部的预置图
    工具 schema 下发给模型        <==>  它内部的 llm.bind_tools(TOOLS)
    执行工具                      <==>  ToolNode(TOOLS, ...)（prebuilt 本来会自己建一个；这里显式
                                          传入一个配置过错误处理的，见 build_agent）
    recursion_limit（文章: 默认 25）<==>  config={"recursion_limit": recursion_limit_for(max_steps)}
    app.invoke({"messages": ...}) <==>  run_agent(user_input)

库的实际行为和文章说的不同，有的在文章用的版本里就已如此（证据见 README「库的变化」）：
- ``create_react_agent`` 已弃用：它所在的 langgraph-prebuilt 从 1.0.0 起就标了弃用（langgraph 1.2.9
  装的是 prebuilt 1.1.3），新家是 ``langchain.agents.create_agent``（一个带 middleware 的同类 agent，
  见同目录的 create_agent.py）。本阶段讲的就是这个黑盒本身，所以保留它，只把弃用警告静音，
  不让学习者第一眼看到一屏警告。
- ``recursion_limit`` 的默认值不是文章说的 25（langgraph 1.1.4 起、包括文章用的 1.2.9，都是 10007）。默认值一大，
  "步数上限"就形同虚设，所以这里显式传入，并用和第 3 阶段同一个 ``max_steps`` 换算。
- 它的步数守卫不抛异常：剩余步数不够再走一轮工具时，它把模型的回复替换成
  "Sorry, need more steps to process this request." 然后正常结束。run record 把这种结局
  记为 status ``max_steps``（shared/run_record.py），而不是"答完了"。

本文件不包含：流式输出、记忆/checkpointer、结构化输出、middleware（都是第 1 篇之外的话题）。
"""
from __future__ import annotations

import warnings

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10

from shared.harness.graph_picture import draw_mermaid
from shared.harness.implementation import About
from shared.llm import chat_model
from shared.prompts import SYSTEM_PROMPT
from shared.step_budget import recursion_limit_for
from shared.tools import TOOLS, format_tool_error, reject_unknown_tool


def build_agent(llm: BaseChatModel):
    # ToolNode 默认只把"参数校验失败"回给模型，工具内部抛的异常会直接炸掉整个 graph；
    # 未知工具名则回一段它自己的英文模板。为了让三个阶段对模型说同一种话，这里显式配置：
    #   handle_tool_errors=format_tool_error  —— 任何工具异常都变成同一种中文错误文本；
    #   wrap_tool_call=reject_unknown_tool     —— 未知工具名也走这条路。
    tools_node = ToolNode(TOOLS, handle_tool_errors=format_tool_error,
                          wrap_tool_call=reject_unknown_tool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)   # 见模块 docstring
        # prompt= 在每次调模型前把系统提示词放到最前面（它不写进 state 的 messages）
        return create_react_agent(llm, tools_node, prompt=SYSTEM_PROMPT)


def run_agent(user_input: str, max_steps: int = 10, *, llm: BaseChatModel | None = None,
              app=None) -> list[BaseMessage]:
    """黑盒的全部用法：invoke 一次，拿回完整的 messages 历史。没给 llm 就用配置的模型。"""
    # 建 agent 就在下面两行。app 是 compare 传进来的一张编好的图：它用同一个模型、同样的设置跑几百次，
    # 而编一次图（建 ToolNode、create_react_agent 编译）比离线模型回答一次还贵；图里不存任何一次运行的状态
    # （状态全在 invoke 的输入里），所以它只编一次 build_agent(llm)，之后每次复用，
    # 发出的请求和 trace 一字不差（tests/test_reuse.py 检查）。单独运行时不传，就在这里现编一张。
    if app is None:
        app = build_agent(llm or chat_model())
    result = app.invoke(
        {"messages": [HumanMessage(content=user_input)]},
        config={"recursion_limit": recursion_limit_for(max_steps)},
    )
    return result["messages"]


# 条件边上写的字：预置图的 tools_condition 返回的就是目标节点名，LangGraph 画图时便不标字，这里补上
EDGE_LABELS = {"tools": "有 tool_calls", "__end__": "没有 tool_calls"}


def mermaid() -> str:
    """预置图的样子，Mermaid 格式（--graph）：和第 2 阶段手搭的那张图对照着看。"""
    return draw_mermaid(build_agent, EDGE_LABELS)


# ---- 名片：命令行和 compare 靠它认出这个实现（不是 lesson 的一部分） ----
ABOUT = About(
    name="prebuilt", tier="黑盒：LangGraph 预置的 create_react_agent", command="python -m stage1_prebuilt",
    step_limit="create_react_agent 的 remaining_steps 守卫：不再调工具，回答 "
               "'Sorry, need more steps to process this request.'")
