"""五个 LangChain 工具（三篇文章共用的 tools.py）与"tools 节点"的一次执行。

每个工具都是 ``@tool`` 包装的普通函数（见 :mod:`shared.tool_functions`）：函数签名 +
中文 docstring 就是下发给模型的 JSON schema（"决策侧"），``TOOL_MAP`` 是名字到工具的
查找表（"执行侧"）。

:func:`execute_tool_call` is the body of the article's inner ``for tc in resp.tool_calls``
loop; stages 2 and 3 call it, and stage 1's prebuilt ``ToolNode`` is configured to return
the very same error texts (:func:`reject_unknown_tool` + ``format_tool_error``).

Two more tool messages every function-calling tier sends, so that all of them say the
same words: :func:`refusal` (a dangerous call the human refused, never executed) and
:func:`hold_back_extra_calls` (``--serial``: only a reply's first call runs).
"""
from __future__ import annotations

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from shared import tool_functions
from shared.tool_functions import REFUSED_MESSAGE, SERIAL_HELD_BACK, UnknownToolError, format_tool_error

get_weather = tool(tool_functions.get_weather)
get_current_time = tool(tool_functions.get_current_time)
calculate = tool(tool_functions.calculate)
get_stock_price = tool(tool_functions.get_stock_price)
place_order = tool(tool_functions.place_order)       # 危险工具：DANGEROUS_TOOLS 里有它，执行前要先问人

TOOLS = [get_weather, get_current_time, calculate, get_stock_price, place_order]
TOOL_MAP = {t.name: t for t in TOOLS}


def lookup_tool(name: str):
    """``TOOL_MAP[name]``, with an error that lists the real tools instead of a bare KeyError."""
    try:
        return TOOL_MAP[name]
    except KeyError:
        raise UnknownToolError(name) from None


def execute_tool_call(tool_call: dict) -> ToolMessage:
    """【tools 节点】执行一个工具调用，结果（或错误）包成 ToolMessage 回填给模型。

    Errors are not raised: they go back to the model as the tool's answer, so it can
    correct itself (the article's ``except Exception as e: output = f"工具执行出错: {e}"``).
    """
    try:
        output = lookup_tool(tool_call["name"]).invoke(tool_call["args"])
    except Exception as error:  # noqa: BLE001 — 任何工具失败都回给模型，而不是让循环崩溃
        output = format_tool_error(error)
    return ToolMessage(content=str(output), tool_call_id=tool_call["id"], name=tool_call["name"])


def reject_unknown_tool(request, execute):
    """``ToolNode(wrap_tool_call=...)`` hook: an unknown tool name raises our UnknownToolError.

    Left alone, ``ToolNode`` answers an unknown name with its own English template
    ("Error: x is not a valid tool, try one of [...]"). Raising here sends the error through
    ``handle_tool_errors=format_tool_error`` like every other failure, so all tiers agree.
    """
    lookup_tool(request.tool_call["name"])
    return execute(request)


def refusal(tool_call: dict) -> ToolMessage:
    """A dangerous call the human refused: not executed; the refusal is its result (第二篇方向 3 的原话)."""
    return ToolMessage(content=REFUSED_MESSAGE.format(tool_name=tool_call["name"]),
                       tool_call_id=tool_call["id"], name=tool_call["name"])


def hold_back_extra_calls(tool_calls: list[dict]) -> tuple[list[dict], list[ToolMessage]]:
    """``--serial`` enforced: ``(the first call, a "not run" ToolMessage for each other call)``.

    ``parallel_tool_calls=False`` only *asks* the provider; one that ignores it still sends
    several calls. Every call id must get an answer (the API rejects a request with an
    unanswered call), so the others are answered with :data:`SERIAL_HELD_BACK`, not dropped.
    """
    held_back = [ToolMessage(content=SERIAL_HELD_BACK.format(tool_name=call["name"]),
                             tool_call_id=call["id"], name=call["name"]) for call in tool_calls[1:]]
    return list(tool_calls[:1]), held_back
