"""文章里手写的修复，今天 langchain 自带的 middleware：每个一条命令，在离线模型上演示。

    python -m stage1_prebuilt.middleware_demo NAME      # NAME 见下表；不带 NAME 列出全部

    NAME               middleware                   文章里对应的是                      离线模型上怎么演示
    -----------------------------------------------------------------------------------------------------------
    model_call_limit   ModelCallLimitMiddleware     recursion_limit / MAX_ITER          --faults loop：模型永远重复最后一个调用
    tool_call_limit    ToolCallLimitMiddleware      修复 2：死循环                      --faults loop，同上
    tool_error         ToolErrorMiddleware          修复 4 与 except Exception          100 / 0 让 calculate 抛异常；--faults hallucinate
    tool_retry         ToolRetryMiddleware          生产方向：工具重试                  一个第一次必然超时的 get_stock_price
    model_retry        ModelRetryMiddleware         生产方向：模型调用重试              端点前 3 次返回 HTTP 500
    human_in_the_loop  HumanInTheLoopMiddleware     方向 3：危险工具前人工确认          calculate 需要批准；这里自动批准

每个演示都是 ``create_agent(llm, TOOLS, system_prompt=SYSTEM_PROMPT, middleware=[...])``，
只换 middleware；永远用内置离线模型（故障模式只有它有），时钟固定，输出可复现。
``tests/test_create_agent.py`` 跑每一个演示并检查它演示的那件事。

没有演示的：SummarizationMiddleware（上下文爆炸的现成修法）——它要一个会读会写的语言模型来写摘要，
离线模型只是一张规则表：它写不出摘要，也读不懂摘要（它靠 ToolMessage 判断哪些已经查过，
摘要把它们换成一段文字后，它会从头再查），演示只会误导；修复 5（校验最终答案）没有现成的
middleware，可以用 ``after_model`` 自己写。

本文件不包含：异步（``ainvoke``）、真实的人工输入（审批决定是写死的 approve）、流式输出。
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from langchain.agents import create_agent
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware, ModelCallLimitMiddleware, ModelRetryMiddleware, ToolCallLimitMiddleware,
    ToolErrorMiddleware, ToolRetryMiddleware,
)
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from shared import tool_functions
from shared.harness.arguments import OneLineParser
from shared.harness.config import REPRODUCIBLE_CLOCK, load_settings
from shared.harness.endpoint import open_endpoint
from shared.harness.text import content_text
from shared.harness.trace import print_trace
from shared.offline_llm import PolicyBrain
from shared.prompts import SYSTEM_PROMPT
from shared.tool_functions import clock_fixed_at, format_tool_error
from shared.tools import TOOLS
from stage1_prebuilt.create_agent import same_error_text

ARTICLE_QUESTION = "现在几点了？腾讯股票多少钱？持有 100 股市值多少港元？"
DIVIDE_BY_ZERO = "帮我算一下 100 / 0"
LIMIT = 3                     # 两个"次数上限"演示用的上限
ENDPOINT_FAILURES = 3         # model_retry：端点前几次返回 HTTP 500

PROG = "python -m stage1_prebuilt.middleware_demo"
HEADING = "== {name}：{what}"
LAST_MESSAGE = "最后一条消息（{kind}）：{text}"
CRASHED = "💥 run 崩溃：{kind}: {error}"


@dataclass(frozen=True)
class Demo:
    what: str                                     # 一行：演示什么
    run: Callable[[], None]                        # 在离线模型上跑，打印 trace


def offline_model(*, faults: tuple[str, ...] = (), brain=None):
    """内置离线模型（不读环境变量和 .env：演示永远离线），可带故障模式或换一个"大脑"。"""
    settings = load_settings(env={}, dotenv=None, offline_faults=faults or None)
    return open_endpoint(settings, brain=brain)


def ask(middleware: list, question: str, *, faults: tuple[str, ...] = (), brain=None, tools=TOOLS,
        **agent_options) -> list[BaseMessage]:
    """建一个带这些 middleware 的 create_agent，问一句，打印 trace 和最后一条消息。"""
    with offline_model(faults=faults, brain=brain) as endpoint:
        app = create_agent(endpoint.chat_model(temperature=0.0), tools, system_prompt=SYSTEM_PROMPT,
                           middleware=middleware, **agent_options)
        messages = app.invoke({"messages": [HumanMessage(content=question)]})["messages"]
    show(messages)
    return messages


def show(messages: list[BaseMessage]) -> None:
    print_trace(messages)
    last = messages[-1]
    print(LAST_MESSAGE.format(kind=type(last).__name__, text=content_text(last.content)))


# ---- 每个演示 ----

def model_call_limit() -> None:
    # 模型卡在死循环里：不设上限，create_agent 会走到 recursion_limit 9_999 才抛 GraphRecursionError
    ask([ModelCallLimitMiddleware(run_limit=LIMIT, exit_behavior="end"), same_error_text],
        ARTICLE_QUESTION, faults=("loop",))


def tool_call_limit() -> None:
    # 数的是工具调用（可只数某一个工具：tool_name=...），不是"同一个调用重复了几次"——
    # 和 hardened_loop 的修复 2 不完全一样：那里连续 3 次相同的调用才停
    ask([ToolCallLimitMiddleware(run_limit=LIMIT, exit_behavior="end"), same_error_text],
        ARTICLE_QUESTION, faults=("loop",))


def tool_error() -> None:
    print("1) 没有任何 middleware：calculate 抛异常，整个 run 崩溃")
    try:
        ask([], DIVIDE_BY_ZERO)
    except Exception as error:  # noqa: BLE001 — 演示的就是这个异常
        print(CRASHED.format(kind=type(error).__name__, error=error))
    on_error = ToolErrorMiddleware(on_error=lambda error, request: format_tool_error(error))
    print("\n2) ToolErrorMiddleware(on_error=...)：工具抛的异常变成错误文本，回给模型")
    ask([on_error], DIVIDE_BY_ZERO)
    print("\n3) 同一个 ToolErrorMiddleware 看不见未知工具名：ToolNode 先用自己的英文模板回答了"
          "（所以 create_agent.py 用自己的 wrap_tool_call）")
    ask([on_error], ARTICLE_QUESTION, faults=("hallucinate",))


def tool_retry() -> None:
    attempts = []

    @tool
    def get_stock_price(symbol: str) -> str:
        """查询股票的当前价格。参数 symbol: 股票名称或代码，如 腾讯、0700.HK、AAPL。"""
        attempts.append(symbol)
        if len(attempts) == 1:                     # 行情接口第一次超时，第二次正常
            raise TimeoutError("行情接口超时")
        return tool_functions.get_stock_price(symbol)

    flaky_tools = [get_stock_price if t.name == "get_stock_price" else t for t in TOOLS]
    # initial_delay=0：演示不必等退避；真实环境用默认的指数退避（1 秒起，每次翻倍）
    ask([same_error_text, ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)],
        ARTICLE_QUESTION, tools=flaky_tools)
    print(f"get_stock_price 被调用了 {len(attempts)} 次（第 1 次超时，ToolRetryMiddleware 重试成功）")


def model_retry() -> None:
    requests = []
    policy = PolicyBrain()

    def flaky_endpoint(request: dict) -> dict:
        requests.append(request)
        if len(requests) <= ENDPOINT_FAILURES:      # 内置服务器把异常变成 HTTP 500
            raise RuntimeError("模型端点暂时不可用")
        return policy(request)

    ask([ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False), same_error_text],
        ARTICLE_QUESTION, brain=flaky_endpoint)
    print(f"端点收到 {len(requests)} 个请求：前 {ENDPOINT_FAILURES} 个返回 HTTP 500——openai SDK 自己先重试了 2 次"
          "（shared/harness/endpoint.py 的 MAX_RETRIES）后放弃，ModelRetryMiddleware 再调一次模型，成功")


def human_in_the_loop() -> None:
    # 人工审批要"暂停、等人、再继续"：暂停的状态存在 checkpointer 里，用 thread_id 找回来
    gate = HumanInTheLoopMiddleware(interrupt_on={"calculate": True})
    config = {"configurable": {"thread_id": "demo"}}
    with offline_model() as endpoint:
        app = create_agent(endpoint.chat_model(temperature=0.0), TOOLS, system_prompt=SYSTEM_PROMPT,
                           middleware=[gate, same_error_text], checkpointer=InMemorySaver())
        result = app.invoke({"messages": [HumanMessage(content=ARTICLE_QUESTION)]}, config)
        while interrupts := result.get("__interrupt__"):
            requests = interrupts[0].value["action_requests"]
            for request in requests:
                print(f"⏸ 等待批准：{request['name']}({request['args']})")
            # 决定按顺序一一对应：approve / edit（改参数）/ reject（带理由，作为工具结果回给模型）
            decisions = [{"type": "approve"} for _ in requests]
            print(f"▶ 人的决定：{decisions}")
            result = app.invoke(Command(resume={"decisions": decisions}), config)
    show(result["messages"])


DEMOS: dict[str, Demo] = {
    "model_call_limit": Demo(f"ModelCallLimitMiddleware(run_limit={LIMIT})，模型陷入死循环（--faults loop）", model_call_limit),
    "tool_call_limit": Demo(f"ToolCallLimitMiddleware(run_limit={LIMIT})，模型陷入死循环（--faults loop）", tool_call_limit),
    "tool_error": Demo("工具抛异常：不处理会崩溃；ToolErrorMiddleware 能接住什么、接不住什么", tool_error),
    "tool_retry": Demo("ToolRetryMiddleware：工具第一次超时，重试成功", tool_retry),
    "model_retry": Demo(f"ModelRetryMiddleware：模型端点前 {ENDPOINT_FAILURES} 次返回 HTTP 500", model_retry),
    "human_in_the_loop": Demo("HumanInTheLoopMiddleware：calculate 执行前暂停等批准", human_in_the_loop),
}


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog=PROG, description="在离线模型上演示 langchain 自带的 middleware")
    parser.add_argument("name", nargs="?", choices=list(DEMOS), metavar="NAME",
                        help=f"演示哪一个：{', '.join(DEMOS)}")
    args = parser.parse_args(argv)
    if args.name is None:
        for name, demo in DEMOS.items():
            print(f"{name:18} {demo.what}")
        return 0
    demo = DEMOS[args.name]
    print(HEADING.format(name=args.name, what=demo.what))
    with clock_fixed_at(REPRODUCIBLE_CLOCK):
        demo.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
