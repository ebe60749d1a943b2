"""实现注册表：compare 和命令行认识的每一个实现，都在这里登记一行。

The one registry. A new implementation (another framework, another protocol) joins the
comparison with one line here; compare, the run records and the CLI pick it up.

Modules are named, not imported, so that listing the registry loads no framework (the
zero-framework loops must stay importable with only the ``openai`` SDK).

The two protocols differ in what ``run_agent`` takes and returns:
- ``function_calling``: ``run_agent(user_input, max_steps, *, llm) -> list[BaseMessage]``
  (a ``ChatOpenAI``; tool calls travel in the API's ``tool_calls`` field);
- ``json``: ``run_agent(user_input, max_steps, *, client, model, temperature, seed)
  -> LoopResult`` (a raw ``openai.OpenAI``; tool calls travel as JSON in the text).
"""
from __future__ import annotations

from dataclasses import dataclass

# hardened_loop 自己定义它的修复；它只依赖 openai SDK 和 shared，import 它不会加载任何框架
from stage3_pure_loop.hardened_loop import FIXES as HARDENED_FIXES

FUNCTION_CALLING, JSON_PROTOCOL = "function_calling", "json"
ERR_UNKNOWN = "未知实现 {name!r}；可用: {known}"


@dataclass(frozen=True)
class Implementation:
    name: str
    module: str
    tier: str
    protocol: str = FUNCTION_CALLING
    step_limit: str = ""              # 步数用完时它怎么停（写进 run record 的 stopped_at）
    fixes: tuple[str, ...] = ()       # --no-fix 可关掉的修复（只有 hardened_loop 有）


IMPLEMENTATIONS: dict[str, Implementation] = {impl.name: impl for impl in (
    Implementation("prebuilt", "stage1_prebuilt.agent", "黑盒：LangGraph 预置的 create_react_agent",
                   step_limit="create_react_agent 的 remaining_steps 守卫：不再调工具，回答 "
                              "'Sorry, need more steps to process this request.'"),
    Implementation("stategraph", "stage2_stategraph.agent", "灰盒：手写 StateGraph（agent 节点 + tools 节点 + 条件边）",
                   step_limit="recursion_limit 用完：LangGraph 抛出 GraphRecursionError"),
    Implementation("pure_loop", "stage3_pure_loop.agent", "白盒：纯 Python for 循环 + messages 列表",
                   step_limit="for step in range(max_steps) 循环结束"),
    Implementation("json_loop", "stage3_pure_loop.json_loop", "零框架：openai SDK + 文本里的 JSON 工具调用（第二篇 50 行）",
                   protocol=JSON_PROTOCOL, step_limit="for iteration in range(MAX_ITER) 循环结束"),
    Implementation("hardened_loop", "stage3_pure_loop.hardened_loop", "零框架 + 五个翻车现场的修复",
                   protocol=JSON_PROTOCOL, step_limit="for iteration in range(MAX_ITER) 循环结束",
                   fixes=HARDENED_FIXES),
)}


class UnknownImplementationError(KeyError):
    def __str__(self) -> str:        # KeyError 默认会给消息加引号
        return str(self.args[0])


def get_implementation(name: str) -> Implementation:
    try:
        return IMPLEMENTATIONS[name]
    except KeyError:
        known = ", ".join(IMPLEMENTATIONS)
        raise UnknownImplementationError(ERR_UNKNOWN.format(name=name, known=known)) from None
