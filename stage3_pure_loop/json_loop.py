"""零框架 agent：第二篇文章的 50 行核心循环，只用 ``openai`` SDK，原样可跑。

Agent = LLM 推理 × 工具执行 × 循环迭代。这个文件按文章的顺序，把三件事各写一遍：

    文章的部分              这里                          LangChain 的对应物
    ---------------------------------------------------------------------------------
    工具注册表 TOOLS dict   TOOLS（名字 -> 函数 + 描述）   BaseTool / @tool
    Prompt 构造             SYSTEM_PROMPT.format(...)      ChatPromptTemplate
    LLM 推理                client.chat.completions.create llm.invoke
    解析 LLM 输出           startswith("{") + json.loads   AgentOutputParser
    执行工具                run_tool(name, args)           ToolExecutor / ToolNode
    循环控制                for iteration in range(MAX_ITER) max_iterations / recursion_limit
    上下文管理              messages.append(...)           AgentAction / AgentFinish
    人工确认（方向 3）      DANGEROUS_TOOLS + approve()    interrupt / HumanInTheLoopMiddleware

和 function calling（stage 1-3）最大的不同：没有 ``tools=`` 参数。工具清单写在 system
prompt 里，模型被要求"只输出 ``{"tool": ..., "args": {...}}``"，调用藏在普通文本里，
由我们自己解析。这正是它脆弱的地方——文章第五节的五个翻车现场，全都出在这里。
本文件**故意保留**文章的天真写法（修复版见 ``hardened_loop.py``），离线模型的故障模式
（``--faults chatty`` 等）能把它一个个弄坏。

和文章原文的不同，每一处都有原因（逐条的完整清单在 README「json_loop 和第二篇原文的每一处不同」）：
- 工具用仓库共享的五个纯函数（``shared.tool_functions``，不依赖 LangChain），计算器叫
  ``calculate``（第三篇和三个 stage 的名字，不是 ``calculator``），是 AST 安全求值，不是
  ``eval``（文章"方向 2"自己指出的隐患）；工具出错一律变成回给模型的一句话（原文参数名
  不对会让整个循环崩溃）；
- ``client`` / ``model`` 是参数，不是模块级全局变量：同一份代码接离线模型或真实端点；
  不传就用配置的端点（``shared/llm.py``），所以 ``run_agent("...")`` 照样能跑；
- 第 2 步的判断抽成了 ``parse_reply``：加固版的修复 1 就是换掉这一个函数；
- ``run_agent`` 一边循环一边记下每轮调用（``rounds``），交给 ``shared.harness.runner`` 变成和
  三个 stage 同一格式的运行记录，compare 才能逐轮对比；
- SYSTEM_PROMPT 里的 JSON 花括号写成 ``{{ }}``：文章原文直接 ``.format()`` 会 KeyError；
- ``message.content`` 为 ``None`` 时当空串（原文的 ``.strip()`` 会 AttributeError）；
- 文章第七节"方向 3"的人工确认原样加进了循环，只把 ``input()`` 换成可注入的 ``approve``
  （终端上它就是那个 ``input()``，见 ``shared/approval.py``）：这里有一个真会下单的工具；
- 最后一次循环里模型要的工具不执行（各层"步数上限"同一个含义：最多 max_steps 次模型调用，
  最后一次要的工具，结果已经没有模型会读了）。

Left out on purpose: every fix of section five (``hardened_loop.py``), streaming,
function calling (that is stages 1-3), memory across questions.
"""
from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING

from shared import llm
from shared.approval import Approver, default_approver
from shared.harness.implementation import About, Protocol
from shared.harness.run_record import LoopResult, Status
from shared.tool_functions import DANGEROUS_TOOLS, FUNCTIONS, REFUSED_MESSAGE, run_tool

if TYPE_CHECKING:                     # 只为类型标注；运行时不需要先 import openai
    from openai import OpenAI

MAX_ITER = 10  # 最大循环次数，防止死循环（LangChain 叫 max_iterations，AutoGPT 叫 max_cycles）

# ============ 工具注册表 ============
# 工具的本质 = 名字 + 描述 + 函数指针，一个 dict 完全够用（文章 4.1）。
# 描述直接取函数的中文 docstring——它同时是 LangChain 版工具（shared/tools.py）的 schema。
TOOLS: dict[str, dict] = {
    name: {"function": function, "description": inspect.getdoc(function)}
    for name, function in FUNCTIONS.items()
}

# ============ Prompt 构造 ============
# Agent 的"大脑说明书"（文章 4.2）：什么时候用工具、用什么格式返回，全在这段话里。
# 注意 {{ }}：str.format 里字面的花括号要写两遍，否则 "{"tool"...}" 会被当成占位符。
SYSTEM_PROMPT = """你是一个智能助手，可以调用工具来完成任务。
当你需要调用工具时，请严格按以下JSON格式输出，不要输出任何其他内容：
{{"tool": "工具名", "args": {{"参数名": "参数值"}}}}
当你不需要调用工具、任务已完成时，请直接输出最终答案，不要使用JSON格式。
可用工具：
{tools_desc}"""

# 回填给模型的文字（文章原文）
RESULT_MESSAGE = "工具 {tool_name} 的执行结果：{result}\n\n请根据这个结果继续完成任务。如果任务已完成，请给出最终答案。"
UNKNOWN_TOOL_MESSAGE = "错误：未知工具 {tool_name}。可用工具：{available}。请重新选择。"
MAX_ITER_MESSAGE = "已达到最大循环次数，任务可能陷入了死循环。请检查工具定义和任务复杂度。"


def build_tools_desc() -> str:
    """工具描述文本：每个工具一行 ``- 名字: 描述``（模型从这几行知道有哪些工具）。"""
    return "\n".join(f"- {name}: {info['description']}" for name, info in TOOLS.items())


def build_messages(user_query: str) -> list[dict]:
    """对话的起点：system prompt（含工具清单）+ 用户的问题。"""
    return [
        {"role": "system", "content": SYSTEM_PROMPT.format(tools_desc=build_tools_desc())},
        {"role": "user", "content": user_query},
    ]


def ask_llm(client: OpenAI, model: str, messages: list[dict], temperature: float,
            seed: int | None) -> str:
    """第 1 步 LLM 推理：发出整段对话，拿回一段纯文本。"""
    extra = {} if seed is None else {"seed": seed}   # 不传 seed 就别发 "seed": null
    response = client.chat.completions.create(
        model=model, messages=messages, temperature=temperature, **extra)
    return (response.choices[0].message.content or "").strip()


# ============ Agent 核心循环 ============
def run_agent(user_input: str, max_steps: int = MAX_ITER, *, client: OpenAI | None = None,
              model: str | None = None, temperature: float = 0.0, seed: int | None = None,
              approve: Approver | None = None) -> LoopResult:
    """Agent 核心循环：LLM 推理 → 工具执行 → 循环迭代。所有 Agent 框架共有的底层逻辑。"""
    client, model = client or llm.openai_client(), model or llm.model_name()   # 没给：用配置的端点
    approve = approve or default_approver()          # 文章的 input()：终端上问人，没有终端就拒绝
    messages = build_messages(user_input)
    rounds: list[list[dict]] = []          # 每轮的调用与结果：运行记录要的，文章里没有
    for iteration in range(max_steps):
        # ---- 第 1 步：LLM 推理 ----
        reply = ask_llm(client, model, messages, temperature, seed)

        # ---- 第 2 步：判断是否需要调用工具 ----
        call = parse_reply(reply)
        if call is None:                    # 没有工具调用 → 返回最终答案
            messages.append({"role": "assistant", "content": reply})
            return LoopResult(messages=messages, rounds=rounds, status=Status.ANSWERED, answer=reply)
        tool_name, tool_args = call
        if iteration == max_steps - 1:      # 最后一次循环：工具的结果已经没有模型会读，不执行
            rounds.append([{"name": tool_name, "args": tool_args, "result": None}])
            break
        if tool_name not in TOOLS:
            # 未知工具（翻车现场 4）：文章已经处理了，但有两个隐患——
            # 模型自己那条错误的调用没进 messages（它看不到自己错在哪），
            # 而且可以无限重试。hardened_loop 两个都修。
            error = UNKNOWN_TOOL_MESSAGE.format(tool_name=tool_name, available=", ".join(TOOLS))
            rounds.append([{"name": tool_name, "args": tool_args, "result": error}])
            messages.append({"role": "user", "content": error})
            continue

        # ---- 方向 3：高风险操作先问人（文章原样：拒绝时只追加一条 user 消息，然后 continue）----
        if tool_name in DANGEROUS_TOOLS and not approve(tool_name, tool_args):
            refusal = REFUSED_MESSAGE.format(tool_name=tool_name)
            rounds.append([{"name": tool_name, "args": tool_args, "result": refusal}])
            messages.append({"role": "user", "content": refusal})
            continue

        # ---- 第 3 步：执行工具，调用和结果追加到上下文（Agent 的"记忆"），循环迭代 ----
        # 文章这里是 TOOLS[tool_name]["function"](**tool_args)，它的 calculator 自己 try/except、
        # 把错误当结果返回；run_tool 对每个工具都这样做（参数不对、除以零……都变成一句错误
        # 文字回给模型），错误文案和三个 stage 完全相同，compare 才能比较。
        result = run_tool(tool_name, tool_args)
        rounds.append([{"name": tool_name, "args": tool_args, "result": result}])
        messages.append({"role": "assistant", "content": reply})
        messages.append({"role": "user", "content": RESULT_MESSAGE.format(tool_name=tool_name, result=result)})

    return LoopResult(messages=messages, rounds=rounds, status=Status.MAX_STEPS, answer=None,
                      stopped_at=MAX_ITER_MESSAGE)


def parse_reply(reply: str) -> tuple[str, dict] | None:
    """第 2 步，文章的判断：整段回复以 { 开头、以 } 结尾、能 json.loads，才算工具调用。

    模型多说一个字（"好的，{...}"）就不算了——翻车现场 1；解析失败也当成最终答案往下走
    （翻车现场 1 的另一半）。hardened_loop 的修复 1 换掉的就是这个函数。
    """
    if reply.startswith("{") and reply.endswith("}"):
        try:
            tool_call = json.loads(reply)
        except json.JSONDecodeError:
            return None
        return tool_call.get("tool", ""), tool_call.get("args", {})
    return None


def agent_loop(user_query: str, *, client: OpenAI | None = None, model: str | None = None) -> str:
    """文章的入口形状：问一句，返回一句（最终答案，或"已达到最大循环次数"）。"""
    result = run_agent(user_query, client=client, model=model)
    return result.answer if result.status == Status.ANSWERED else (result.stopped_at or result.error or "")


# ---- 名片：命令行和 compare 靠它认出这个实现（不是 lesson 的一部分） ----
ABOUT = About(name="json_loop", tier="零框架：openai SDK + 文本里的 JSON 工具调用（第二篇 50 行）",
              command="python -m stage3_pure_loop.json_loop", protocol=Protocol.JSON,
              step_limit="for iteration in range(MAX_ITER) 的最后一轮：模型要的工具不执行")


if __name__ == "__main__":
    from shared.harness.cli import main   # 放在这里：import 本模块不加载 LangChain（cli 会）

    raise SystemExit(main(run_agent, ABOUT))
