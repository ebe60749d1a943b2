"""第 3 阶段，去掉最后一层框架：原生 ``openai`` SDK 的 function calling（第二篇"方向 1"）。

和 ``agent.py``（pure_loop）是同一个循环，一行对一行；只是不经过 LangChain：

    pure_loop（LangChain）                     这里（openai SDK）
    ---------------------------------------------------------------------------------------
    llm.bind_tools(TOOLS)                      tools=OPENAI_TOOLS（shared/tool_schemas.py，从同样的纯函数算出）
    llm_with_tools.invoke(messages)            client.chat.completions.create(model=..., messages=..., tools=...)
    SystemMessage / HumanMessage / AIMessage   {"role": "system" | "user" | "assistant", ...} 字典
    resp.tool_calls（args 已是 dict）          message.tool_calls（arguments 是 JSON 字符串，自己 json.loads）
    execute_tool_call(tc) -> ToolMessage       run_tool_call(...) -> {"role": "tool", "tool_call_id": ..., "content": ...}
    for step in range(max_steps)               for step in range(max_steps)

和第二篇的 50 行（``json_loop.py``）不同：工具清单不写进 system prompt，而是放进请求的 ``tools``
字段；模型的调用也不藏在文本里，而在回复的 ``tool_calls`` 字段——"怎么解析 JSON"这个问题
（翻车现场 1）整个消失了，交给了 API。

它发出的请求和四个 LangChain 实现逐字节相同（工具调用 id 规整后）：``python -m compare`` 的
"请求层"一行检查这一点，``tests/test_fc_loop.py`` 也查。也就是说，LangChain 在线路上什么都
没有多加：系统提示词、工具 schema、每条消息都是同一份。

和 pure_loop 的两处措辞差别，都是 SDK 与 LangChain 的差别，不是机制的差别：
- LangChain 把 ``arguments`` 解析成 dict、发回时再 ``json.dumps(args, ensure_ascii=False)``；这里把模型
  给的 assistant 消息原样放回 messages（离线模型写的正是同一格式，所以线路上一样）；
- 参数不是合法 JSON 时，LangChain 把它放进 ``invalid_tool_calls``；这里直接以 status ``error`` 结束，
  用运行记录里同一句错误文案。

本文件不包含：流式输出、并发执行工具、重试与超时（SDK 自带 ``max_retries``）、记忆。
import 它不会加载 LangChain（测试检查 ``sys.modules``）。
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from shared import llm
from shared.harness.implementation import About, Sdk
from shared.harness.run_record import ERR_INVALID_TOOL_CALL, LoopResult, Status
from shared.prompts import SYSTEM_PROMPT
from shared.approval import Approver, default_approver, needs_approval
from shared.tool_functions import FUNCTIONS, REFUSED_MESSAGE, SERIAL_HELD_BACK, format_tool_error
from shared.tool_schemas import OPENAI_TOOLS, validated_arguments

if TYPE_CHECKING:                     # 只为类型标注；运行时不需要先 import openai
    from openai import OpenAI


def run_tool_call(name: str, args: dict) -> str:
    """【tools 节点】执行一个工具调用；任何失败都变成同一种错误文本，作为结果回给模型。"""
    try:
        arguments = validated_arguments(name, args)     # 未知工具、参数不对：在这里就抛出
        return FUNCTIONS[name](**arguments)
    except Exception as error:  # noqa: BLE001 — 任何工具失败都回给模型，而不是让循环崩溃
        return format_tool_error(error)


def run_agent(user_input: str, max_steps: int = 10, *, client: OpenAI | None = None,
              model: str | None = None, temperature: float = 0.0, seed: int | None = None,
              approve: Approver | None = None, serial: bool = False) -> LoopResult:
    """原生 SDK 的 ReAct loop。``serial``：每轮最多执行一个工具调用（并发 ``parallel_tool_calls=False``）。"""
    client, model = client or llm.openai_client(), model or llm.model_name()   # 没给：用配置的端点
    approve = approve or default_approver()      # 没给审批人：终端上问人，否则一律拒绝
    extra = {} if seed is None else {"seed": seed}          # 不传 seed 就别发 "seed": null
    if serial:
        extra["parallel_tool_calls"] = False

    # 【State】状态就是一个普通列表，元素是 API 要的字典
    messages: list[dict] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_input},
    ]
    rounds: list[list[dict]] = []          # 每轮的调用与结果：运行记录要的

    for step in range(max_steps):
        # 【agent 节点】调 LLM：工具 schema 随每次请求下发
        response = client.chat.completions.create(
            model=model, messages=messages, tools=OPENAI_TOOLS, temperature=temperature, **extra)
        message = response.choices[0].message

        # 【条件边】没有 tool_calls 就结束
        if not message.tool_calls:
            messages.append({"role": "assistant", "content": message.content})
            return LoopResult(messages=messages, rounds=rounds, status=Status.ANSWERED,
                              answer=message.content or "")

        # 模型的这条回复（含它的调用）原样进历史：下一次请求，模型要看见自己调过什么
        messages.append({"role": "assistant", "content": message.content, "tool_calls": [
            {"id": tc.id, "type": "function",
             "function": {"name": tc.function.name, "arguments": tc.function.arguments}}
            for tc in message.tool_calls]})
        calls = []
        for tc in message.tool_calls:
            try:
                calls.append({"id": tc.id, "name": tc.function.name, "args": json.loads(tc.function.arguments)})
            except json.JSONDecodeError as bad:
                error = ERR_INVALID_TOOL_CALL.format(name=tc.function.name, args=tc.function.arguments, detail=bad)
                return LoopResult(messages=messages, rounds=rounds, status=Status.ERROR, answer=None, error=error)
        results: dict[str, str] = {}       # tool_call_id -> 回给模型的结果
        round_ = [{"name": c["name"], "args": c["args"], "result": None} for c in calls]   # 结果稍后填
        rounds.append(round_)
        # 【步数上限】这是最后一次模型调用：它要的工具不执行——结果已经没有模型会读了
        if step == max_steps - 1:
            break

        # 【强制串行】只执行第一个调用，其余各回一句"未执行"（模型可能无视 parallel_tool_calls=False）
        if serial:
            results |= {c["id"]: SERIAL_HELD_BACK.format(tool_name=c["name"]) for c in calls[1:]}
            calls = calls[:1]
        # 【人工确认】危险调用先全部问完再执行任何一个；被拒绝的不执行，拒绝就是它的结果
        refused = [c for c in calls if needs_approval(c["name"]) and not approve(c["name"], c["args"])]
        results |= {c["id"]: REFUSED_MESSAGE.format(tool_name=c["name"]) for c in refused}
        # 【tools 节点】执行其余工具调用，结果（或错误）以 role "tool" 回填，靠 tool_call_id 对上号
        results |= {c["id"]: run_tool_call(c["name"], c["args"]) for c in calls if c not in refused}

        # 回填的顺序和 pure_loop 一样：先"未执行"，再拒绝，再结果（线路上逐字节相同）
        for call_id, result in results.items():
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        for call, tc in zip(round_, message.tool_calls):
            call["result"] = results.get(tc.id)

    # 步数耗尽仍未结束：最后一条不是回答 → status "max_steps"
    return LoopResult(messages=messages, rounds=rounds, status=Status.MAX_STEPS, answer=None)


# ---- 名片：命令行和 compare 靠它认出这个实现（不是 lesson 的一部分） ----
ABOUT = About(name="fc_loop", tier="零框架 function calling：openai SDK 的 tools=[...] 与 tool_calls（第二篇方向 1）",
              command="python -m stage3_pure_loop.fc_loop", sdk=Sdk.OPENAI,
              step_limit="for step in range(max_steps) 的最后一步：模型要的工具不执行")


if __name__ == "__main__":
    from shared.harness.cli import main   # 放在这里：import 本模块不加载 LangChain（cli 会）

    raise SystemExit(main(run_agent, ABOUT))
