"""工具的 JSON schema：``llm.bind_tools(TOOLS)`` 发给模型的那一份，不用 LangChain，从纯函数算出来。

function calling 的"决策侧"就是请求里的 ``tools=[...]``：每个工具一段
``{"type": "function", "function": {"name", "description", "parameters"}}``。LangChain 的 ``@tool``
是这样得到它的：从函数签名建一个 pydantic 模型（参数名、类型、必填与否），取它的 JSON schema、
去掉 pydantic 加的 ``title``；description 是函数的 docstring。这里对
:mod:`shared.tool_functions` 的五个纯函数做同一件事，所以只装了 ``openai`` SDK（pydantic 是它的
依赖）的 ``stage3_pure_loop/fc_loop.py`` 发出的 ``tools`` 和四个 LangChain 实现逐字节相同——
``tests/test_fc_loop.py`` 拿它和 ``convert_to_openai_tool(shared.tools.TOOLS)`` 比较。

同一个 pydantic 模型也做"执行侧"的参数校验（:func:`validated_arguments`）：参数不对时的
ValidationError 和 LangChain 的 ``tool.invoke`` 抛出的逐字相同，错误文本也就相同。

本文件不包含：嵌套对象或列表参数（五个工具只有字符串和整数参数；更复杂的签名请直接用 pydantic 模型）、
``strict`` 模式、LangChain 的 docstring 参数解析（``parse_docstring=True``）。
"""
from __future__ import annotations

import inspect

from pydantic import BaseModel, create_model

from shared.tool_functions import FUNCTIONS, UnknownToolError


def argument_model(function) -> type[BaseModel]:
    """函数签名 → pydantic 模型：参数名、类型注解，没有默认值的就是必填（``...``）。"""
    signature = inspect.signature(function, eval_str=True)
    fields = {
        name: (param.annotation, ... if param.default is inspect.Parameter.empty else param.default)
        for name, param in signature.parameters.items()
    }
    return create_model(function.__name__, **fields)     # 模型名 = 工具名：校验错误里的 title


def without_titles(schema: dict) -> dict:
    """去掉 pydantic 给模型和每个参数加的 ``title``（LangChain 也去掉它们；名叫 title 的参数保留）。"""
    cleaned = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key == "properties":
            cleaned[key] = {name: without_titles(prop) for name, prop in value.items()}
        elif isinstance(value, dict):
            cleaned[key] = without_titles(value)
        else:
            cleaned[key] = value
    return cleaned


def openai_tool(function) -> dict:
    """一个纯函数在请求里的样子：名字、docstring、参数的 JSON schema。"""
    return {
        "type": "function",
        "function": {
            "name": function.__name__,
            "description": inspect.getdoc(function),
            "parameters": without_titles(ARGUMENT_MODELS[function.__name__].model_json_schema()),
        },
    }


ARGUMENT_MODELS: dict[str, type[BaseModel]] = {name: argument_model(f) for name, f in FUNCTIONS.items()}
OPENAI_TOOLS: list[dict] = [openai_tool(f) for f in FUNCTIONS.values()]


def validated_arguments(name: str, args: dict) -> dict:
    """按工具的参数模型校验 ``args``：未知工具抛 UnknownToolError，参数不对抛 pydantic 的 ValidationError。"""
    model = ARGUMENT_MODELS.get(name)
    if model is None:
        raise UnknownToolError(name)
    return model.model_validate(args).model_dump()
