"""五个工具的纯 Python 函数，以及工具出错时回给模型的唯一文案。

The tools as plain functions: no LangChain here, so the zero-framework agent of the
second article (``stage3_pure_loop.json_loop``) can use them with only the ``openai``
SDK installed. :mod:`shared.tools` wraps these same functions as LangChain tools: their
Chinese docstrings become the JSON schema the model sees.

One error format for every implementation: :func:`format_tool_error` is the only place
that turns a failed tool call into text for the model.

One place marks a tool dangerous: :data:`DANGEROUS_TOOLS` (the second article's 方向 3).
``place_order`` is the one dangerous tool: it writes a row to the order book
(:mod:`shared.orders`), so "never without approval" is something a test can check. The
texts the controls send back to the model live here too (:data:`REFUSED_MESSAGE`,
:data:`SERIAL_HELD_BACK`): every tier says the same words.

Left out: real market data, weather and trading (see :mod:`shared.market_data`,
:mod:`shared.orders`).
"""
from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

from shared import market_data, orders
from shared.calculator import evaluate, format_number

# ---- 错误文案（module constants：所有实现返回给模型的文字都出自这里） ----
TOOL_ERROR = "工具执行出错: {reason}"
UNKNOWN_TOOL = "未知工具 {name!r}，可用工具: {available}"
INVALID_ARGUMENTS = "工具 {name} 的参数无效: {details}"
STOCK_NOT_FOUND = "未找到股票 {symbol!r}。可查询: {known}"
CITY_NOT_FOUND = "未找到 {city!r} 的天气数据。可查询: {known}"
WRONG_TYPE = "{param} 应是 {expected}，收到 {actual}"
BAD_SHARES = "股数应是正整数，收到 {shares!r}"
BAD_SIDE = "side 应是 buy（买入）或 sell（卖出），收到 {side!r}"
# 不含订单号：同一笔订单在每个实现里的工具结果逐字相同，compare 才能比较
ORDER_PLACED = "已下单：{side_text} {shares} 股{name}（{ticker}），成交价 {price} {currency}，金额 {amount} {currency}"
# 人工确认被拒绝时回给模型的话（第二篇方向 3 的原文）：每一层都原样用它
REFUSED_MESSAGE = "用户拒绝了 {tool_name} 操作。请尝试替代方案。"
# --serial 时，一条回复里第一个之外的调用不执行，各得一条这样的工具消息（每一层同一句话）
SERIAL_HELD_BACK = "未执行：已开启串行调用，每轮只执行第一个工具调用。如果仍然需要 {tool_name}，请在下一轮单独调用它。"
SIDES = {"buy": "买入", "sell": "卖出"}

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


@dataclass(frozen=True)
class Quote:
    """A checked order before it is placed: what the approval question shows and what gets written."""

    stock: market_data.Stock
    shares: int
    side: str
    amount: float

    @property
    def amount_text(self) -> str:
        """``38560.0`` -> ``38,560``（千分位，去掉多余的 0）。"""
        return f"{self.amount:,.2f}".rstrip("0").rstrip(".")

    def describe(self) -> str:
        return (f"{SIDES[self.side]} {self.shares} 股{self.stock.name}（{self.stock.ticker}），"
                f"金额 {self.amount_text} {self.stock.currency}")


def quote_order(symbol: str, shares: int, side: str) -> Quote:
    """Check an order and price it with the stock tool's data; a bad argument raises ``ValueError``."""
    stock = market_data.find_stock(symbol)
    if stock is None:
        known = "、".join(f"{s.name}({s.ticker})" for s in market_data.STOCKS)
        raise ValueError(STOCK_NOT_FOUND.format(symbol=symbol, known=known))
    if isinstance(shares, float) and shares.is_integer():
        shares = int(shares)                       # JSON 里写成 100.0 的整数（pydantic 也这样接受）
    # bool 是 int 的子类：True 不是"1 股"
    if isinstance(shares, bool) or not isinstance(shares, int) or shares <= 0:
        raise ValueError(BAD_SHARES.format(shares=shares))
    if side not in SIDES:
        raise ValueError(BAD_SIDE.format(side=side))
    return Quote(stock, shares, side, round(stock.price * shares, 2))


def place_order(symbol: str, shares: int, side: str) -> str:
    """下单买入或卖出股票（高风险操作：会真实记录一笔订单）。参数 symbol: 股票名称或代码，如 腾讯、AAPL；shares: 股数（正整数）；side: buy（买入）或 sell（卖出）。"""
    quote = quote_order(symbol, shares, side)      # 先全部校验，任何一项不对都不写库
    orders.record_order(quote.stock.ticker, quote.shares, quote.side, quote.stock.price, quote.amount)
    return ORDER_PLACED.format(side_text=SIDES[quote.side], shares=quote.shares,
                               name=quote.stock.name, ticker=quote.stock.ticker, price=quote.stock.price,
                               amount=quote.amount_text, currency=quote.stock.currency)


# 名字 -> 函数：工具注册表的最朴素形态（第二篇文章 4.1 "一个 dict 完全够用"）
FUNCTIONS = {f.__name__: f for f in (get_weather, get_current_time, calculate, get_stock_price, place_order)}

# 高风险工具：执行前必须先问人（第二篇方向 3）。全仓库只在这里标记，每一层都读它
DANGEROUS_TOOLS: frozenset[str] = frozenset({"place_order"})


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
