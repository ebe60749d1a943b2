# -*- coding: utf-8 -*-
"""第 3 阶段：脱离 StateGraph，纯 Python 手写 agent loop。

把第 2 阶段被 StateGraph 封装起来的那个循环，手动展开。
没有 State / Node / 条件边——就是一个 for 循环 + 一个 messages 列表。

目的：看清拿掉框架之后，ReAct 的最小实现到底长什么样。
你会看到：agent 的核心，其实就这么十几行。

与第 2 阶段 StateGraph 概念的逐项对照：
    StateGraph 概念             <==>   这里的等价物
    -----------------------------------------------------------
    State (messages + reducer)  <==>   一个 list，手动 append
    agent 节点                  <==>   llm_with_tools.invoke(messages)
    tools 节点                  <==>   for tc: TOOL_MAP[...].invoke(...)
    条件边 (tool_calls 非空?)   <==>   if not resp.tool_calls: break
    recursion_limit (默认 25)   <==>   for step in range(max_steps)
    app.invoke(...)             <==>   run_agent(user_input)

运行：conda activate agent && python agent_loop.py
"""
from langchain_openai import ChatOpenAI
from langchain_core.messages import (
    AIMessage, HumanMessage, ToolMessage, SystemMessage, BaseMessage,
)

from config import LLM_BASE_URL, LLM_API_KEY, LLM_MODEL
from tools import get_weather, get_current_time, calculate, get_stock_price

# ---- 准备 LLM + 工具（和前两阶段完全一致）----
llm = ChatOpenAI(
    model=LLM_MODEL, base_url=LLM_BASE_URL, api_key=LLM_API_KEY, temperature=0.7,
)
TOOLS = [get_weather, get_current_time, calculate, get_stock_price]
llm_with_tools = llm.bind_tools(TOOLS)          # 决策侧：schema 下发给模型
TOOL_MAP = {t.name: t for t in TOOLS}           # 执行侧：名字 -> 函数 查找表

SYSTEM_PROMPT = (
    "你是一个能干的个人助手，可以查天气、查时间、做计算、查股票。"
    "回答用户问题时，请优先调用合适的工具获取信息或完成计算，不要凭空编造。"
    "需要组合多个工具才能完成的任务，大胆分步组合使用。回答用中文。"
)


def run_agent(user_input: str, max_steps: int = 10) -> list[BaseMessage]:
    """纯 Python 的 ReAct loop。返回完整 messages 历史。"""
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

        # 【tools 节点】执行所有工具调用，结果作为 ToolMessage 回填进 messages
        for tc in resp.tool_calls:
            try:
                output = TOOL_MAP[tc["name"]].invoke(tc["args"])
            except Exception as e:
                output = f"工具执行出错: {e}"
            messages.append(ToolMessage(
                content=str(output),
                tool_call_id=tc["id"],
                name=tc["name"],
            ))
        # 循环回到顶部：带着工具结果再次调 LLM（等价于 tools -> agent 回流边）

    # 步数耗尽仍未结束（等价于 recursion_limit 超限）
    print(f"⚠️ 达到最大步数 {max_steps}，强制结束")
    return messages


def print_trace(messages):
    """打印 ReAct 循环每一步（与前三阶段格式一致，方便横向对比）。"""
    print("\n-- Agent 推理过程 --")
    for i, m in enumerate(messages, 1):
        if isinstance(m, SystemMessage):
            continue
        if isinstance(m, HumanMessage):
            print(f"[{i}] 👤 用户: {m.content}")
        elif isinstance(m, AIMessage):
            if m.tool_calls:
                for tc in m.tool_calls:
                    print(f"[{i}] 🤖 AI 调用工具: {tc['name']}({tc['args']})")
            else:
                print(f"[{i}] 🤖 AI 回答: {m.content}")
        elif isinstance(m, ToolMessage):
            print(f"[{i}] 🔧 工具返回: {m.content}")
    print("-- 推理结束 --")


def main():
    print("=" * 50)
    print("  纯 Python Agent Loop 已就绪（输入 quit 退出）")
    print("=" * 50)
    while True:
        user = input("\n你: ").strip()
        if user.lower() in ("quit", "exit", "q"):
            print("再见！")
            break
        if not user:
            continue
        messages = run_agent(user)
        print_trace(messages)


if __name__ == "__main__":
    main()
