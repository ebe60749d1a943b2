"""四个工具的纯 Python 函数，以及工具出错时回给模型的唯一文案。

The tools as plain functions: no LangChain here, so the zero-framework agent of the
second article (``stage3_pure_loop.json_loop``) can use them with only the ``openai``
SDK installed. :mod:`shared.tools` wraps these same functions as LangChain tools: their
Chinese docstrings become the JSON schema the model sees.

One error format for every implementation: :func:`format_tool_error` is the only place
that turns a failed tool call into text for the model.

Left out: real market data and weather (see :mod:`shared.market_data`), the dangerous
``place_order`` tool (not yet in this repository).
"""
from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

from shared import market_data
from shared.calculator import evaluate, format_number

# ---- 错误文案（module constants：所有实现返回给模型的文字都出自这里） ----
TOOL_ERROR = "工具执行出错: {reason}"
UNKNOWN_TOOL = "未知工具 {name!r}，可用工具: {available}"
INVALID_ARGUMENTS = "工具 {name} 的参数无效: {details}"
STOCK_NOT_FOUND = "未找到股票 {symbol!r}。可查询: {known}"
CITY_NOT_FOUND = "未找到 {city!r} 的天气数据。可查询: {known}"
WRONG_TYPE = "{param} 应是 {expected}，收到 {actual}"

# "现在"是几点：默认读真实时钟；一次运行可以把它固定在某一刻（AGENT_CLOCK → Settings.clock →
# RunOptions.clock → 这里），trace 才可复现。用 ContextVar 而不是全局变量或环境变量：
# 每次运行（包括 compare 里并发的几次）各有各的值，互不干扰，运行结束自动还原。
FIXED_NOW: ContextVar[str | None] = ContextVar("fixed_now", default=None)


@contextmanager
def clock_fixed_at(iso_time: str | None) -> Iterator[None]:
    """Within the block, ``get_current_time`` answers ``iso_time`` (None: the real clock)."""
    token = FIXED_NOW.set(iso_time)
    try:
        yield
    finally:
        FIXED_NOW.reset(token)


def get_weather(city: str) -> str:
    """查询指定城市的天气。参数 city: 城市名称，如 北京、上海、Shenzhen。"""
    found = market_data.find_city(city)
    if found is None:
        known = "、".join(c.name for c in market_data.CITIES)
        return CITY_NOT_FOUND.format(city=city, known=known)
    return f"{found.name}：{found.weather}"


def get_current_time() -> str:
    """获取当前日期和时间。"""
    fixed = FIXED_NOW.get()             # 被固定了就用固定的"现在"（见 clock_fixed_at）
    now = datetime.fromisoformat(fixed) if fixed else datetime.now().astimezone()
    return now.strftime("%Y-%m-%d %H:%M:%S")


def calculate(expression: str) -> str:
    """执行数学计算，支持 + - * / // % ** 和括号。参数 expression: 数学表达式，如 385.6 * 100。"""
    return format_number(evaluate(expression))


def get_stock_price(symbol: str) -> str:
    """查询股票的当前价格。参数 symbol: 股票名称或代码，如 腾讯、0700.HK、AAPL。"""
    found = market_data.find_stock(symbol)
    if found is None:
        known = "、".join(f"{s.name}({s.ticker})" for s in market_data.STOCKS)
        return STOCK_NOT_FOUND.format(symbol=symbol, known=known)
    return f"{found.name}（{found.ticker}）当前股价：{found.price} {found.currency}"


# 名字 -> 函数：工具注册表的最朴素形态（第二篇文章 4.1 "一个 dict 完全够用"）
FUNCTIONS = {f.__name__: f for f in (get_weather, get_current_time, calculate, get_stock_price)}


class UnknownToolError(LookupError):
    """The model asked for a tool that does not exist."""

    def __init__(self, name: str):
        super().__init__(UNKNOWN_TOOL.format(name=name, available=", ".join(FUNCTIONS)))
        self.name = name


class InvalidArgumentsError(TypeError):
    """The model called a real tool with arguments that do not fit its signature."""

    def __init__(self, name: str, details: str):
        super().__init__(INVALID_ARGUMENTS.format(name=name, details=details))


def format_tool_error(error: Exception) -> str:
    """The one text every implementation returns to the model when a tool call fails.

    Accepts what each tier actually sees: the tool's own exception, pydantic's
    ``ValidationError`` for bad arguments (``tool.invoke`` raises it), the
    ``ToolInvocationError`` that LangGraph's ``ToolNode`` wraps it in, and the two
    errors of this module. Duck-typed, so this module needs no LangChain or pydantic.
    """
    error = getattr(error, "source", None) or error   # ToolNode 的 ToolInvocationError 包了一层
    if callable(getattr(error, "errors", None)) and hasattr(error, "title"):  # pydantic
        details = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'args'}: {e['msg']}" for e in error.errors()
        )
        reason = INVALID_ARGUMENTS.format(name=error.title, details=details)
    else:
        reason = str(error) or type(error).__name__
    return TOOL_ERROR.format(reason=reason)


def run_tool(name: str, args: dict) -> str:
    """Call a tool by name with a dict of arguments; a failure comes back as its error text.

    The plain-function twin of :func:`shared.tools.execute_tool_call`, for the JSON loops.
    """
    try:
        function = FUNCTIONS.get(name)
        if function is None:
            raise UnknownToolError(name)
        _check_arguments(name, function, args)
        return function(**args)
    except Exception as error:  # noqa: BLE001 — 任何工具失败都回给模型，而不是让循环崩溃
        return format_tool_error(error)


def _check_arguments(name: str, function, args) -> None:
    """What pydantic does for the LangChain tools: the right names, and strings where str is asked."""
    if not isinstance(args, dict):
        raise InvalidArgumentsError(name, WRONG_TYPE.format(param="args", expected="JSON 对象",
                                                            actual=type(args).__name__))
    signature = inspect.signature(function, eval_str=True)
    try:
        signature.bind(**args)
    except TypeError as mismatch:
        raise InvalidArgumentsError(name, str(mismatch)) from None
    for param, value in args.items():
        expected = signature.parameters[param].annotation
        if expected is str and not isinstance(value, str):
            raise InvalidArgumentsError(name, WRONG_TYPE.format(param=param, expected="字符串",
                                                                actual=type(value).__name__))
