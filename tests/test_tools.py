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


def test_the_clock_can_be_fixed_for_a_block_and_is_real_outside_it():
    with tool_functions.clock_fixed_at("2031-01-02T03:04:05+08:00"):
        assert tool_functions.get_current_time() == "2031-01-02 03:04:05"
    assert tool_functions.get_current_time() != "2031-01-02 03:04:05"


@pytest.mark.parametrize("args, detail", [
    ({"expression": 38560}, "expression 应是 字符串，收到 int"),
    ({"expression": None}, "expression 应是 字符串，收到 NoneType"),
    ({"expr": "1"}, "missing a required argument: 'expression'"),
    ([1, 2], "args 应是 JSON 对象，收到 list"),
])
def test_plain_calls_with_wrong_arguments_come_back_as_text(args, detail):
    # JSON 协议里模型写什么都有可能：错误的类型也必须变成一句话回给模型，而不是让循环崩溃
    result = run_tool("calculate", args)
    assert result.startswith("工具执行出错: 工具 calculate 的参数无效") and detail in result


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
