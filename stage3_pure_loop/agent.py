"""第 3 阶段（白盒）：脱离 StateGraph，纯 Python 手写 agent loop。

把第 2 阶段被 StateGraph 封装起来的那个循环，手动展开。
没有 State / Node / 条件边——就是一个 for 循环 + 一个 messages 列表。
agent 的核心，其实就这么十几行。

与第 2 阶段 StateGraph 概念的逐项对照（文章第 3 节）：
    StateGraph 概念             <==>   这里的等价物
    -----------------------------------------------------------
    State (messages + reducer)  <==>   一个 list，手动 append
    agent 节点                  <==>   llm_with_tools.invoke(messages)
    tools 节点                  <==>   for tc in resp.tool_calls: execute_tool_call(tc)
    条件边 (tool_calls 非空?)   <==>   if not resp.tool_calls: return
    recursion_limit             <==>   for step in range(max_steps)
    app.invoke(...)             <==>   run_agent(user_input)

第三篇 §7 的可控性，在这一层都得自己写（第 1、2 阶段由框架提供钩子）：
    人工确认（方向 3）   执行前 approve(name, args)；拒绝的调用不执行，拒绝作为它的结果
    强制串行（--serial） 一条回复里只执行第一个调用，其余各回一句"未执行"（hold_back_extra_calls）
    步数上限             最多 max_steps 次模型调用；最后一次要的工具不执行（结果已没有模型会读）

关键区别只在状态的合并方式：StateGraph 的节点返回增量、由 add_messages 追加；
这里没有 reducer，直接 messages.append(resp)——"状态就是消息列表的不断增长"。

和文章原文的两处不同，都是为了三个阶段可比：
- 模型不再是模块级全局变量，而是参数 llm（同一个 ChatOpenAI，离线或真实端点都一样）；
  不传就用配置的模型（shared/llm.py，相当于文章的 config.py），所以 run_agent("...") 照样能跑；
- 内层 try/except 抽成了 shared/tools.py 的 execute_tool_call（第 2 阶段的 tools 节点
  调用的也是它），错误文本全仓库只有一种格式。它等价于文章里这几行：
      try:    output = TOOL_MAP[tc["name"]].invoke(tc["args"])
      except Exception as e:  output = f"工具执行出错: {e}"
      messages.append(ToolMessage(content=str(output), tool_call_id=tc["id"], name=tc["name"]))
  只多了统一的错误文案：未知工具会列出真实工具，参数不对会说哪个参数不对
  （文章原样捕获的是 KeyError，模型只会看到一句 "工具执行出错: 'send_email'"）。

本文件不包含：记忆、流式输出、并发执行工具、重试与超时（见第二篇的"从 Demo 到生产"）。
"""
from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from shared.approval import Approver, default_approver, needs_approval
from shared.harness.implementation import About
from shared.llm import chat_model
from shared.prompts import SYSTEM_PROMPT
from shared.tools import TOOLS, execute_tool_call, hold_back_extra_calls, refusal


def run_agent(user_input: str, max_steps: int = 10, *, llm: BaseChatModel | None = None,
              approve: Approver | None = None, serial: bool = False) -> list[BaseMessage]:
    """纯 Python 的 ReAct loop。返回完整 messages 历史。"""
    llm = llm or chat_model()                    # 没给模型：用配置的端点（默认内置离线模型）
    approve = approve or default_approver()      # 没给审批人：终端上问人，否则一律拒绝
    llm_with_tools = llm.bind_tools(TOOLS)       # 决策侧：schema 下发给模型

    # 【State】状态就是一个普通列表（第 2 阶段的 State 在这里退化成 list）
    messages: list[BaseMessage] = [
        SystemMessage(content=SYSTEM_PROMPT),
        HumanMessage(content=user_input),
    ]

    # 用 for 代替 while：range 自带步数上限，就是 recursion_limit 的等价物
    for step in range(max_steps):
        # 【agent 节点】调 LLM，决定回答 or 调工具
        resp: AIMessage = llm_with_tools.invoke(messages)
        messages.append(resp)

        # 【条件边】没有 tool_calls 就结束（等价于导向 END，循环终止）
        if not resp.tool_calls:
            return messages
        # 【步数上限】这是最后一次模型调用：它要的工具不执行——结果已经没有模型会读了
        if step == max_steps - 1:
            break

        # 【强制串行】只执行第一个调用，其余各回一句"未执行"（模型可能无视 parallel_tool_calls=False）
        calls, held_back = hold_back_extra_calls(resp.tool_calls) if serial else (resp.tool_calls, [])
        messages += held_back
        # 【人工确认】危险调用先全部问完再执行任何一个；被拒绝的不执行，拒绝就是它的结果
        refused = [tc for tc in calls if needs_approval(tc["name"]) and not approve(tc["name"], tc["args"])]
        messages += [refusal(tc) for tc in refused]

        # 【tools 节点】执行其余工具调用，结果（或错误）作为 ToolMessage 回填进 messages
        for tc in calls:
            if tc not in refused:
                messages.append(execute_tool_call(tc))
        # 循环回到顶部：带着工具结果再次调 LLM（等价于 tools -> agent 回流边）

    # 步数耗尽仍未结束（等价于 recursion_limit 超限）。文章在这里 print 一行警告；
    # 这里交给 run record：最后一条不是回答 → status "max_steps"，trace 打印同一句警告。
    return messages


# ---- 名片：命令行和 compare 靠它认出这个实现（不是 lesson 的一部分） ----
ABOUT = About(name="pure_loop", tier="白盒：纯 Python for 循环 + messages 列表",
              command="python -m stage3_pure_loop",
              step_limit="for step in range(max_steps) 的最后一步：模型要的工具不执行")
