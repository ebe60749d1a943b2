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
    步数上限（max_steps）         <==>  after_model middleware stop_at_the_budget（见下）
    app.invoke({"messages": ...}) <==>  run_agent(user_input)

第三篇 §7 的可控性，全用 middleware（框架今天给的接口），和其他实现同一个含义：
    人工确认   HumanInTheLoopMiddleware(interrupt_on={"place_order": ...}) + checkpointer：模型要调危险工具时
               图暂停（interrupt），run_agent 问过人再 Command(resume={"decisions": [...]}) 恢复。拒绝用
               "respond" 决定：人替工具回一句话，正是各层同一句「用户拒绝了 place_order 操作。请尝试替代方案。」
               （"reject" 决定会换成库自己的英文句子）
    强制串行   after_model middleware hold_back_extra：模型回复之后只留第一个调用待执行，其余各回一句"未执行"
               （create_agent 的路由只把还没有结果的调用送进工具节点）
    步数上限   after_model middleware stop_at_the_budget：第 max_steps 次模型调用之后，它要的工具不执行，直接结束

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

所以这里用 middleware 让它和其他实现说同一种话：

    旋钮                                           管什么
    ----------------------------------------------------------------------------------------
    stop_at_the_budget（after_model，可跳到 end）  --max-steps 的含义：最多调 max_steps 次模型，最后一次要的工具不执行。
                                                   库自带的 ModelCallLimitMiddleware(run_limit=N, exit_behavior="end")
                                                   管的是"第 N+1 次调模型之前结束"：第 N 次要的工具照样执行，和
                                                   其他实现的含义差一轮（middleware_demo model_call_limit 演示它）。
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

本文件不包含：跨会话记忆（checkpointer 在这里只用来暂停和恢复一次运行）、流式输出、
结构化输出（response_format）。
"""
from __future__ import annotations

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware, after_model, wrap_tool_call
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command

from shared.harness.implementation import About
from shared.llm import chat_model
from shared.prompts import SYSTEM_PROMPT
from shared.run_thread import own_thread
from shared.approval import Approver, default_approver
from shared.tool_functions import DANGEROUS_TOOLS, REFUSED_MESSAGE
from shared.tools import TOOLS, format_tool_error, hold_back_extra_calls, lookup_tool


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


def hold_back_extra(max_steps: int, serial: bool):
    """两个 after_model middleware：强制串行与步数上限（模型回复之后、工具之前）。"""

    @after_model
    def hold_back_extra_calls_(state, runtime):
        last = state["messages"][-1]
        if not serial or len(getattr(last, "tool_calls", None) or []) < 2:
            return None
        _, held_back = hold_back_extra_calls(last.tool_calls)
        return {"messages": held_back}          # 其余调用各有了"结果"：路由只把第一个送进工具节点

    @after_model(can_jump_to=["end"])
    def stop_at_the_budget(state, runtime):
        model_calls = sum(isinstance(m, AIMessage) for m in state["messages"])
        if model_calls >= max_steps and getattr(state["messages"][-1], "tool_calls", None):
            return {"jump_to": "end"}           # 最后一次模型调用要的工具：结果已经没有模型会读了
        return None

    # after_model 钩子按列表的倒序执行：先看步数（不执行就不必问人、不必串行），再串行，再人工审批
    return [hold_back_extra_calls_, stop_at_the_budget]


def build_agent(llm: BaseChatModel, *, max_steps: int = 10, serial: bool = False):
    """create_agent 加 middleware：审批、串行、步数、错误文本都和其他实现同一个含义（见模块 docstring）。"""
    approval = HumanInTheLoopMiddleware(
        interrupt_on={name: {"allowed_decisions": ["approve", "respond"]} for name in DANGEROUS_TOOLS})
    return create_agent(
        llm, TOOLS, system_prompt=SYSTEM_PROMPT,
        middleware=[approval, *hold_back_extra(max_steps, serial), same_error_text],
        checkpointer=InMemorySaver(),          # interrupt 暂停时把状态存下来，恢复时从这里接着走
    )


def run_agent(user_input: str, max_steps: int = 10, *, llm: BaseChatModel | None = None,
              approve: Approver | None = None, serial: bool = False, app=None) -> list[BaseMessage]:
    """invoke 一次；每次因危险调用暂停，就问过人再恢复。返回完整的 messages 历史。

    不传 recursion_limit：步数由 stop_at_the_budget 管，create_agent 自带的 9_999 只是安全网。
    app：一张 build_agent 编好的图（同样的 max_steps、serial）。不传就现编一张；compare 编一次、每次传进来。
    图里不存任何一次运行的状态，每次运行用自己的 thread（shared/run_thread.py）。
    """
    approve = approve or default_approver()      # 没给审批人：终端上问人，否则一律拒绝
    app = app or build_agent(llm or chat_model(), max_steps=max_steps, serial=serial)
    with own_thread(app) as config:
        result = app.invoke({"messages": [HumanMessage(content=user_input)]}, config)
        while result.get("__interrupt__"):         # 【人工确认】图停在危险调用之前
            requests = result["__interrupt__"][0].value["action_requests"]
            decisions = [{"type": "approve"} if approve(r["name"], r["args"])
                         else {"type": "respond", "message": REFUSED_MESSAGE.format(tool_name=r["name"])}
                         for r in requests]
            result = app.invoke(Command(resume={"decisions": decisions}), config)
        return result["messages"]


# ---- 名片：命令行和 compare 靠它认出这个实现（不是 lesson 的一部分） ----
ABOUT = About(
    name="create_agent", tier="黑盒（今天的 API）：langchain.agents.create_agent + middleware",
    command="python -m stage1_prebuilt.create_agent",
    step_limit="after_model 的 stop_at_the_budget：第 max_steps 次模型调用要的工具不执行，跳到 end")


if __name__ == "__main__":
    from shared.harness.cli import main

    raise SystemExit(main(run_agent, ABOUT))
