"""第 1 阶段的今天：``langchain.agents.create_agent``，create_react_agent 的继任者。

``create_react_agent`` 在 LangGraph 1.x 里已弃用，弃用信息让人改用
``from langchain.agents import create_agent``（见 README「库的变化」）。它仍是一个黑盒：
一行 ``create_agent(llm, TOOLS, system_prompt=SYSTEM_PROMPT)`` 得到同一个 ReAct 循环。
新东西是 middleware：在"调模型""调工具"前后插进去的钩子，文章里手写的修复大多有了现成的一个。

文章概念 → 本文件：
    ReAct 循环（思考→行动→观察）  <==>  create_agent 内部的图（model 节点 + tools 节点 + middleware 节点）
    工具 schema 下发给模型        <==>  它内部的 model.bind_tools(TOOLS)（与 create_react_agent 发出的请求逐字节相同）
    系统提示词                    <==>  system_prompt=SYSTEM_PROMPT（create_react_agent 叫 prompt=）
    执行工具、错误回给模型        <==>  它自己建的 ToolNode + 下面的 same_error_text（wrap_tool_call middleware）
    步数上限（max_steps）         <==>  ModelCallLimitMiddleware(run_limit=max_steps, exit_behavior="end")
    app.invoke({"messages": ...}) <==>  run_agent(user_input)

它的默认行为和 create_react_agent 不一样，三处都会让第 1 阶段的写法在这里失效
（版本：langchain 1.5.2、langgraph 1.2.24、langgraph-prebuilt 1.1.3；测试
tests/test_create_agent.py 通过公开行为逐条检查，库一变测试先报）：

1. 工具抛异常 → 整个 run 崩溃。create_agent 自己建 ToolNode，不接受传入的 ToolNode
   （``tools=ToolNode(...)`` 得到 ``TypeError: 'ToolNode' object is not iterable``），建的时候
   也不传 ``handle_tool_errors``（langchain/agents/factory.py 约 1144 行），于是用 ToolNode 的默认
   ``_default_handle_tool_errors``（langgraph/prebuilt/tool_node.py 405-413 行）：只把参数校验错误
   回给模型，工具内部抛的异常原样抛出 invoke。第 1 阶段靠传一个配置好的 ToolNode 解决；这里
   只能用 middleware：``same_error_text``。
   为什么不直接用库自带的 ``ToolErrorMiddleware(on_error=...)``（langchain 1.4.0 起才有）：它只看得到
   工具*执行*时的异常；参数校验错误和未知工具名在它之前就被 ToolNode 换成了英文模板
   （"Error invoking tool ..." / "Error: x is not a valid tool"），和其他实现对模型说的话不一样。
   ``python -m stage1_prebuilt.middleware_demo tool_error`` 演示这一点。
2. 步数用完 → ``GraphRecursionError``。create_react_agent 有 remaining_steps 守卫，步数不够时把
   回复换成 "Sorry, need more steps to process this request."（chat_agent_executor.py 约 684-691 行）；
   create_agent 没有这个守卫，图走到 recursion_limit 就抛异常，已经走过的消息随异常丢掉。
3. 默认步数上限是 9_999。factory.py 1900-1925 行：``config = {"recursion_limit": 9_999}`` …
   ``.with_config(config)``（langchain 1.2.14 起；更早的版本用 langgraph 的默认值，1.2.x 是 10007）。
   9_999 个超步，约等于"没有上限"。

所以这里用两个 middleware 让它和其他实现说同一种话：

    旋钮                                           管什么
    ----------------------------------------------------------------------------------------
    ModelCallLimitMiddleware(run_limit=max_steps,  --max-steps 的含义：最多调 max_steps 次模型。第 max_steps+1 次
        exit_behavior="end")                       调模型之前结束，追加一条 AI 消息 "Model call limits exceeded: ..."
                                                   （运行记录把它记为 status max_steps，见 shared/harness/run_record.py）。
                                                   exit_behavior="error" 则抛 ModelCallLimitExceededError。
    recursion_limit（不传，即 9_999）              图的超步数，兜底的安全网。不能照搬第 1、2 阶段的
                                                   2 * max_steps：每个 middleware 的钩子都是图里的一个节点，
                                                   一轮不止两个超步，2 * max_steps 会在用完 max_steps 次模型调用
                                                   之前就抛 GraphRecursionError。
    same_error_text（wrap_tool_call）              工具的一切失败（未知工具名、参数不对、工具自己抛异常）都变成
                                                   shared/tool_functions.py 的同一种错误文本，回给模型。

文章的修复与方向，今天 langchain 自带的 middleware（每行一条命令，在离线模型上演示；
``stage1_prebuilt/middleware_demo.py``）：

    文章里的修复 / 方向                  middleware                         演示
    -----------------------------------------------------------------------------------------------------------
    recursion_limit / max_iterations     ModelCallLimitMiddleware           python -m stage1_prebuilt.middleware_demo model_call_limit
    修复 2：死循环（同一调用反复出现）   ToolCallLimitMiddleware            python -m stage1_prebuilt.middleware_demo tool_call_limit
    修复 3：上下文爆炸（滑动窗口）       SummarizationMiddleware            python -m stage1_prebuilt.middleware_demo summarization
    修复 4：幻觉工具（错误回给模型）     ToolErrorMiddleware / wrap_tool_call python -m stage1_prebuilt.middleware_demo tool_error
    生产方向：工具重试                   ToolRetryMiddleware                python -m stage1_prebuilt.middleware_demo tool_retry
    生产方向：模型调用重试               ModelRetryMiddleware               python -m stage1_prebuilt.middleware_demo model_retry
    方向 3：危险工具前人工确认           HumanInTheLoopMiddleware           python -m stage1_prebuilt.middleware_demo human_in_the_loop
    修复 1：非法 JSON                    （不需要：function calling 的参数由 API 的 tool_calls 字段传递）
    修复 5：非确定性 / 校验最终答案      未演示（可用 after_model / wrap_model_call 自己写）

本文件不包含：人工审批（HumanInTheLoopMiddleware 需要 checkpointer 和 thread_id，见 middleware_demo）、
记忆/checkpointer、流式输出、结构化输出（response_format）。
"""
from __future__ import annotations

from langchain.agents import create_agent
from langchain.agents.middleware import ModelCallLimitMiddleware, wrap_tool_call
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langgraph.errors import GraphBubbleUp

from shared.harness.implementation import About
from shared.llm import chat_model
from shared.prompts import SYSTEM_PROMPT
from shared.tools import TOOLS, format_tool_error, lookup_tool


@wrap_tool_call
def same_error_text(request, handler):
    """每个工具调用都从这里经过：任何失败都变成全仓库同一种错误文本，作为工具结果回给模型。

    ``handler(request)`` 是 ToolNode 真正执行工具的那一步。它自己会把未知工具名和参数校验错误
    变成英文模板的 ToolMessage（不抛异常），所以这两样要在调用它之前先查：用的是同一张
    TOOL_MAP 和同一个参数 schema（``tool.invoke`` 校验参数用的就是 ``args_schema``）。
    """
    call = request.tool_call
    try:
        tool = lookup_tool(call["name"])                  # 未知工具名：UnknownToolError，列出真实工具
        tool.args_schema.model_validate(call["args"])     # 参数不对：pydantic 的 ValidationError
        return handler(request)                           # 工具自己抛的异常也从这里冒出来
    except GraphBubbleUp:
        raise                       # interrupt（人工审批等）是控制流，不是工具错误，必须放行
    except Exception as error:      # noqa: BLE001 — 任何工具失败都回给模型，而不是让 run 崩溃
        return ToolMessage(content=format_tool_error(error), tool_call_id=call["id"],
                           name=call["name"], status="error")


def build_agent(llm: BaseChatModel, max_steps: int):
    """create_agent 加两个 middleware：步数的含义、错误的文本和其他实现一致（见模块 docstring 的表）。"""
    return create_agent(
        llm, TOOLS, system_prompt=SYSTEM_PROMPT,
        middleware=[
            # 想加人工审批：再加一个 HumanInTheLoopMiddleware(interrupt_on={...})，并给
            # create_agent 传 checkpointer（见 middleware_demo.py 的 human_in_the_loop）
            ModelCallLimitMiddleware(run_limit=max_steps, exit_behavior="end"),
            same_error_text,
        ],
    )


def run_agent(user_input: str, max_steps: int = 10, *, llm: BaseChatModel | None = None,
              app=None) -> list[BaseMessage]:
    """invoke 一次，拿回完整的 messages 历史。没给 llm 就用配置的模型。

    不传 recursion_limit：步数由 ModelCallLimitMiddleware 管，create_agent 自带的 9_999 只是安全网。
    """
    # 建 agent 就在下面两行。app 是 compare 传进来的一张编好的图：它用同一个模型、同样的设置跑几百次，
    # 而编一次图（create_agent 建图、装 middleware）比离线模型回答一次还贵；图里不存任何一次运行的状态
    # （状态全在 invoke 的输入里），所以它只编一次 build_agent(llm, max_steps)，之后每次复用，
    # 发出的请求和 trace 一字不差（tests/test_reuse.py 检查）。单独运行时不传，就在这里现编一张。
    if app is None:
        app = build_agent(llm or chat_model(), max_steps)
    result = app.invoke({"messages": [HumanMessage(content=user_input)]})
    return result["messages"]


# ---- 名片：命令行和 compare 靠它认出这个实现（不是 lesson 的一部分） ----
ABOUT = About(
    name="create_agent", tier="黑盒（今天的 API）：langchain.agents.create_agent + middleware",
    command="python -m stage1_prebuilt.create_agent",
    step_limit="ModelCallLimitMiddleware(run_limit=max_steps, exit_behavior='end')：第 max_steps+1 次"
               "调模型之前结束，回一条 'Model call limits exceeded' 的 AI 消息")


if __name__ == "__main__":
    from shared.harness.cli import main

    raise SystemExit(main(run_agent, ABOUT))
