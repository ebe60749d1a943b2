"""The four tools: the articles' values, name resolution, clear not-found texts, one error format."""
import pytest

from shared import tool_functions
from shared.tool_functions import FUNCTIONS, format_tool_error, run_tool
from shared.tools import TOOL_MAP, TOOLS, execute_tool_call


def test_tencent_is_the_articles_price():
    assert "385.6 港元" in tool_functions.get_stock_price("腾讯")


@pytest.mark.parametrize("names, ticker", [
    (("腾讯", "Tencent", "0700.HK", "tencent"), "0700.HK"),
    (("阿里巴巴", "Alibaba", "9988.HK"), "9988.HK"),
    (("贵州茅台", "茅台", "600519.SS"), "600519.SS"),
    (("苹果", "Apple", "AAPL", "aapl"), "AAPL"),
    (("英伟达", "NVIDIA", "NVDA"), "NVDA"),
])
def test_stock_names_resolve(names, ticker):
    for name in names:
        assert ticker in tool_functions.get_stock_price(name)


@pytest.mark.parametrize("names", [
    ("北京", "Beijing"), ("上海", "Shanghai"), ("深圳", "Shenzhen"), ("广州", "Guangzhou"), ("杭州", "Hangzhou"),
])
def test_cities_resolve(names):
    results = {tool_functions.get_weather(name) for name in names}
    assert len(results) == 1 and "°C" in results.pop()


def test_unknown_names_list_what_is_known():
    stock = tool_functions.get_stock_price("特斯拉")
    assert "未找到" in stock and "腾讯" in stock and "AAPL" in stock
    city = tool_functions.get_weather("纽约")
    assert "未找到" in city and "北京" in city and "杭州" in city


def test_clock_is_fixed_by_agent_clock(monkeypatch):
    monkeypatch.setenv("AGENT_CLOCK", "2026-11-30T18:04:51+08:00")
    assert tool_functions.get_current_time() == "2026-11-30 18:04:51"


def test_langchain_tools_are_the_plain_functions_with_their_docstrings():
    assert [t.name for t in TOOLS] == list(FUNCTIONS) == list(TOOL_MAP)
    for t in TOOLS:
        assert t.description == FUNCTIONS[t.name].__doc__     # 中文 docstring 就是 schema
    assert TOOL_MAP["calculate"].args["expression"]["type"] == "string"


@pytest.mark.parametrize("call, expected", [
    ({"name": "calculate", "args": {"expression": "1/0"}}, "工具执行出错: 除数不能为零"),
    ({"name": "send_email", "args": {"to": "x"}}, "工具执行出错: 未知工具 'send_email'"),
    ({"name": "calculate", "args": {"expression": "__import__('os')"}}, "工具执行出错: 不支持"),
])
def test_both_executors_return_the_same_error_text(call, expected):
    via_langchain = execute_tool_call({**call, "id": "call_1"}).content
    via_plain = run_tool(call["name"], call["args"])
    assert via_langchain.startswith(expected)
    assert via_plain == via_langchain


def test_invalid_arguments_are_reported_not_raised():
    message = execute_tool_call({"name": "calculate", "args": {"expr": "1"}, "id": "c"}).content
    assert message.startswith("工具执行出错: 工具 calculate 的参数无效")
    assert run_tool("calculate", {"expr": "1"}).startswith("工具执行出错: 工具 calculate 的参数无效")


def test_format_tool_error_unwraps_toolnode_errors():
    from langgraph.prebuilt.tool_node import ToolInvocationError
    from pydantic import ValidationError

    try:
        TOOL_MAP["calculate"].invoke({"expr": "1"})
    except ValidationError as error:
        wrapped = ToolInvocationError("calculate", error, {"expr": "1"})
        assert format_tool_error(wrapped) == format_tool_error(error)
    else:
        pytest.fail("invalid arguments were accepted")
