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
    recursion_limit（文章: 默认 25）<==>  不再用作步数上限（见下文"可控性"）
    app.invoke({"messages": ...}) <==>  run_agent(user_input)

第三篇 §7 的可控性，用预置 agent 自己提供的接口：
    人工确认   checkpointer + interrupt_before=["tools"]：图在每次执行工具之前停下，run_agent
               只就这一轮的危险调用问人；被拒绝的调用以 post_model_hook 的名义写入拒绝消息
               （update_state），框架的路由就只把其余调用送进 tools；再 invoke(None) 恢复
    强制串行   post_model_hook=hold_back_extra_calls：模型回复之后、工具之前的钩子，
               只留第一个调用，其余各回一句"未执行"
    步数上限   run_agent 最多恢复 max_steps − 1 次（每次恢复 = 执行工具 + 再调一次模型）

库的实际行为和文章说的不同，有的在文章用的版本里就已如此（证据见 README「库的变化」）：
- ``create_react_agent`` 已弃用：它所在的 langgraph-prebuilt 从 1.0.0 起就标了弃用（langgraph 1.2.9
  装的是 prebuilt 1.1.3），新家是 ``langchain.agents.create_agent``（一个带 middleware 的同类 agent，
  见同目录的 create_agent.py）。本阶段讲的就是这个黑盒本身，所以保留它，只把弃用警告静音，
  不让学习者第一眼看到一屏警告。
- ``recursion_limit`` 的默认值不是文章说的 25（langgraph 1.1.4 起、包括文章用的 1.2.9，都是 10007）。默认值一大，
  "步数上限"就形同虚设；它又按每次 invoke 计数（审批暂停、恢复后从头数），所以这里不靠它，
  而由 run_agent 数模型调用（见上文"可控性"）。
- 它的步数守卫不抛异常：剩余步数不够再走一轮工具时，它把模型的回复替换成
  "Sorry, need more steps to process this request." 然后正常结束——模型最后要的调用就从
  记录里消失了，比其他实现少记一轮。所以这里不靠它，而由 run_agent 数模型调用
  （shared/step_budget.py 写着各层同一个"步数"含义）。

本文件不包含：流式输出、跨会话记忆（checkpointer 在这里只用来暂停和恢复一次运行）、结构化输出、
middleware（都是第 1 篇之外的话题）。
"""
from __future__ import annotations

import warnings

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10

from shared.harness.graph_picture import draw_mermaid
from shared.approval import Approver, default_approver, needs_approval
from shared.harness.implementation import About
from shared.llm import chat_model
from shared.prompts import SYSTEM_PROMPT
from shared.run_thread import own_thread
from shared.tools import TOOLS, format_tool_error, hold_back_extra_calls, refusal, reject_unknown_tool


def build_agent(llm: BaseChatModel, *, serial: bool = False):
    # ToolNode 默认只把"参数校验失败"回给模型，工具内部抛的异常会直接炸掉整个 graph；
    # 未知工具名则回一段它自己的英文模板。为了让三个阶段对模型说同一种话，这里显式配置：
    #   handle_tool_errors=format_tool_error  —— 任何工具异常都变成同一种中文错误文本；
    #   wrap_tool_call=reject_unknown_tool     —— 未知工具名也走这条路。
    tools_node = ToolNode(TOOLS, handle_tool_errors=format_tool_error,
                          wrap_tool_call=reject_unknown_tool)

    def after_model(state) -> dict | None:
        """post_model_hook：模型回复之后、工具之前。--serial 时只留第一个调用（模型可能无视
        parallel_tool_calls=False），其余各回一句"未执行"。框架的路由只把还没有回复的调用送进 tools。"""
        _, held_back = hold_back_extra_calls(state["messages"][-1].tool_calls)
        return {"messages": held_back} if serial and held_back else None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)   # 见模块 docstring
        # prompt= 在每次调模型前把系统提示词放到最前面（它不写进 state 的 messages）
        return create_react_agent(llm, tools_node, prompt=SYSTEM_PROMPT, post_model_hook=after_model,
                                  checkpointer=InMemorySaver(), interrupt_before=["tools"])


def run_agent(user_input: str, max_steps: int = 10, *, llm: BaseChatModel | None = None,
              approve: Approver | None = None, serial: bool = False, app=None) -> list[BaseMessage]:
    """invoke 一次；每次停在 tools 之前，就问过危险调用再恢复。返回完整的 messages 历史。

    app：一张 build_agent 编好的图。不传就现编一张；compare 同样的设置跑几百次，编一次、每次传进来
    （编图比离线模型回答一次还贵）。图里不存任何一次运行的状态，每次运行用自己的 thread（shared/run_thread.py）。
    """
    app = app or build_agent(llm or chat_model(), serial=serial)
    approve = approve or default_approver()          # 没给审批人：终端上问人，否则一律拒绝
    with own_thread(app) as config:                  # checkpointer 按 thread_id 存取这次运行
        app.invoke({"messages": [HumanMessage(content=user_input)]}, config)   # 第 1 次模型调用
        for _ in range(max_steps - 1):               # 每次恢复 = 执行这一轮工具 + 再调一次模型
            paused = app.get_state(config)
            if not paused.next:                      # 没停在 tools 之前：模型已经回答了
                break
            refused = [refusal(call) for call in pending_calls(paused.values["messages"])
                       if needs_approval(call["name"]) and not approve(call["name"], call["args"])]
            if refused:  # 以 post_model_hook 的名义写入拒绝：路由重新计算，只把其余调用送进 tools
                app.update_state(config, {"messages": refused}, as_node="post_model_hook")
            app.invoke(None, config)
        return app.get_state(config).values["messages"]


def pending_calls(messages: list[BaseMessage]) -> list[dict]:
    """最后一条 AI 消息里还没有工具消息回复的调用：框架接下来要执行的那些。"""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    last = next(m for m in reversed(messages) if isinstance(m, AIMessage))
    return [call for call in last.tool_calls if call["id"] not in answered]


# 条件边上写的字：预置图的 tools_condition 返回的就是目标节点名，LangGraph 画图时便不标字，这里补上
# 路由在 post_model_hook 之后：调用都已有结果（被拒绝、串行时未执行）就直接回到 agent
EDGE_LABELS = {"tools": "有 tool_calls", "__end__": "没有 tool_calls", "agent": "调用都已有结果"}


def mermaid() -> str:
    """预置图的样子，Mermaid 格式（--graph）：和第 2 阶段手搭的那张图对照着看。"""
    return draw_mermaid(build_agent, EDGE_LABELS)


# ---- 名片：命令行和 compare 靠它认出这个实现（不是 lesson 的一部分） ----
ABOUT = About(
    name="prebuilt", tier="黑盒：LangGraph 预置的 create_react_agent", command="python -m stage1_prebuilt",
    step_limit="run_agent 恢复了 max_steps − 1 次：图停在 tools 之前，模型要的工具不执行")
