"""The offline model says plainly what it cannot do, answers what it can, and reads common
written arithmetic: questions that no tool can serve, that tools serve only in part, or that
tools serve in an unusual form, in Chinese and English, driven like an agent loop would."""
from __future__ import annotations

import json

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from shared.offline_llm import CAPABILITY_SENTENCE
from shared.orders import orders_recorded_in
from shared.tool_functions import FUNCTIONS, run_tool
from shared.tools import TOOLS
from tests.support.offline import client, fixed_clock, server  # noqa: F401 (pytest fixtures)

# 四个不危险的工具：这里测的是"没有能下单的工具时"怎么说（有 place_order 时的行为见 tests/test_controls.py）
SCHEMAS = [convert_to_openai_tool(t) for t in TOOLS if t.name != "place_order"]
ORDER_TOOL = {"type": "function", "function": {"name": "place_order", "parameters": {"type": "object", "properties": {
    "symbol": {"type": "string"}, "shares": {"type": "integer"}, "side": {"type": "string"}}}}}


def converse(client, question, *, tools=SCHEMAS, messages=None, max_turns=6):
    """Drive one question turn by turn; return (calls, answer)."""
    messages = messages or [{"role": "user", "content": question}]
    calls = []
    for _ in range(max_turns):
        extra = {"tools": tools} if tools else {}
        message = client.chat.completions.create(model="offline", messages=messages, temperature=0,
                                                 **extra).choices[0].message
        if not message.tool_calls:
            return calls, message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            args = json.loads(call.function.arguments)
            calls.append((call.function.name, args))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": run_tool(call.function.name, args)})
    raise AssertionError(f"no answer after {max_turns} turns: {calls}")


# ---- asks for something no offered tool can do: no call, a plain "I cannot", the tool it would need ----

CANNOT = [
    ("帮我订一张明天去上海的机票", "订票", "book_travel"),
    ("Book me a hotel in Hangzhou", "订票或订酒店", "book_travel"),
    ("帮我买 100 股腾讯", "买卖股票", "place_order"),
    ("Sell 10 shares of Apple", "买卖股票", "place_order"),
    ("帮我把茅台清仓", "买卖股票", "place_order"),
    ("给老板发一封邮件说我今天请假", "发邮件", "send_message"),
    ("Send a message to my mom", "发邮件或消息", "send_message"),
    ("明早 7 点提醒我开会", "提醒", "set_reminder"),
    ("Remind me to call mom at 8pm", "提醒", "set_reminder"),
    ("今天有什么新闻？", "新闻", "search_web"),
    ("Search the web for LangGraph tutorials", "搜索", "search_web"),
    ("100 美元能换多少人民币？", "汇率", "get_exchange_rate"),
]


@pytest.mark.parametrize("question, task, tool", CANNOT, ids=[q for q, _, _ in CANNOT])
def test_an_action_no_offered_tool_can_do_is_declined_plainly(client, question, task, tool):
    calls, answer = converse(client, question)
    assert calls == []
    assert answer.startswith("我不能") and task in answer and tool in answer
    assert "get_weather" in answer              # it names what *was* offered


def test_with_no_tools_at_all_it_says_so(client):
    _, answer = converse(client, "帮我买 100 股腾讯", tools=None)
    assert "没有提供任何工具" in answer and "place_order" in answer


def test_an_offered_tool_for_the_action_is_not_apologised_for(client, tmp_path):
    # the order tool exists in this request: declining would be a lie (calling it is the plan's job);
    # the order it places goes to this test's own directory, not a .data/ wherever pytest was started
    with orders_recorded_in(tmp_path, implementation="test", run_id="honesty"):
        _, answer = converse(client, "帮我买 100 股腾讯", tools=[*SCHEMAS, ORDER_TOOL])
    assert "我不能" not in answer


# ---- partly served: the part it can do is done once, the rest declined ----

PARTLY = [
    ("北京天气怎么样？顺便订一张去上海的机票", [("get_weather", {"city": "北京"})], "订票"),
    ("苹果股价多少？顺便帮我把 10 股卖掉", [("get_stock_price", {"symbol": "苹果"})], "买卖股票"),
    ("What's the weather in Shanghai, and book me a flight to Beijing", [("get_weather", {"city": "Shanghai"})], "订票"),
    ("现在几点了？再帮我设个 8 点的闹钟", [("get_current_time", {})], "闹钟"),
    ("腾讯股价多少？帮我发邮件告诉老婆", [("get_stock_price", {"symbol": "腾讯"})], "发邮件"),
    ("算一下 365 * 24，然后搜一下今天的新闻", [("calculate", {"expression": "365 * 24"})], "新闻"),
]


@pytest.mark.parametrize("question, expected, declined", PARTLY, ids=[q for q, _, _ in PARTLY])
def test_the_part_it_can_serve_is_served_and_the_rest_declined(client, question, expected, declined):
    calls, answer = converse(client, question)
    assert calls == expected                      # never get_stock_price({'symbol': '卖掉'}), never a second city
    assert "我不能" in answer and declined in answer
    assert answer.index("我不能") > 0               # the served part comes first


CAVEATS = [
    ("明天北京天气怎么样？", ("get_weather", {"city": "北京"}), "预报"),
    ("What will the weather be like in Shenzhen tomorrow?", ("get_weather", {"city": "Shenzhen"}), "预报"),
    ("去年腾讯的股价是多少？", ("get_stock_price", {"symbol": "腾讯"}), "历史"),
]


@pytest.mark.parametrize("question, call, lacking", CAVEATS, ids=[q for q, _, _ in CAVEATS])
def test_a_tool_that_only_serves_part_is_called_and_its_limit_said(client, question, call, lacking):
    calls, answer = converse(client, question)
    assert calls == [call] and lacking in answer and "注意" in answer


# ---- arithmetic in common written forms becomes an expression the calculator accepts ----

ARITHMETIC = [
    ("15% of 2400", "2400 * 15 / 100", "360"),
    ("2400 的 15% 是多少", "2400 * 15 / 100", "360"),
    ("sqrt(144)", "144 ** 0.5", "12"),
    ("144 的平方根是多少", "144 ** 0.5", "12"),
    ("What is the square root of 81?", "81 ** 0.5", "9"),
    ("2的10次方", "2 ** 10", "1024"),
    ("2^10", "2**10", "1024"),
    ("2 to the power of 8", "2 ** 8", "256"),
    ("3 乘以 7 等于几", "3 * 7", "21"),
    ("10 除以 4", "10 / 4", "2.5"),
    ("5 的平方", "5 ** 2", "25"),
]


@pytest.mark.parametrize("question, expression, result", ARITHMETIC, ids=[q for q, _, _ in ARITHMETIC])
def test_written_arithmetic_becomes_a_calculate_call(client, question, expression, result):
    calls, answer = converse(client, question)
    assert calls == [("calculate", {"expression": expression})]
    assert f"= {result}。" in answer and "工具执行出错" not in answer


# ---- a follow-up that needs an earlier turn: every question starts from zero ----

@pytest.mark.parametrize("question, suggestion", [
    ("那上海呢？", "上海天气怎么样？"),
    ("那腾讯呢？", "腾讯股价多少？"),
    ("What about Tencent?", "Tencent 股价多少？"),
    ("那明天呢？", "上海天气怎么样？"),
])
def test_a_follow_up_says_each_question_starts_from_zero(client, question, suggestion):
    calls, answer = converse(client, question)
    assert calls == [] and "从零开始" in answer and question in answer and suggestion in answer
    assert answer != CAPABILITY_SENTENCE


# ---- a JSON protocol it cannot read ----

def renamed_prompt(call_key: str, args_key: str) -> str:
    tools = "\n".join(f"- {name}: {f.__doc__.strip()}" for name, f in FUNCTIONS.items())
    return ("你是一个智能助手，可以调用工具来完成任务。\n当你需要调用工具时，请严格按以下JSON格式输出：\n"
            f'{{"{call_key}": "工具名", "{args_key}": {{"参数名": "参数值"}}}}\n可用工具：\n{tools}')


@pytest.mark.parametrize("keys", [("action", "input"), ("name", "arguments"), ("function", "params")])
def test_a_renamed_json_protocol_gets_told_what_is_read_and_how_to_use_a_real_model(client, keys):
    messages = [{"role": "system", "content": renamed_prompt(*keys)}, {"role": "user", "content": "北京天气怎么样？"}]
    calls, answer = converse(client, "", tools=None, messages=messages)
    assert calls == []
    assert '{"tool": ..., "args": ...}' in answer and f'"{keys[0]}"' in answer and "LLM_BASE_URL" in answer
    assert "没有提供" not in answer                   # it does not blame the agent


def test_the_articles_json_protocol_still_works(client):
    messages = [{"role": "system", "content": renamed_prompt("tool", "args")}, {"role": "user", "content": "北京天气怎么样？"}]
    reply = client.chat.completions.create(model="offline", messages=messages, temperature=0)
    assert json.loads(reply.choices[0].message.content) == {"tool": "get_weather", "args": {"city": "北京"}}


# ---- what still works as before ----

@pytest.mark.parametrize("question, expected", [
    ("买 10 股英伟达要多少钱", [("get_stock_price", {"symbol": "英伟达"}), ("calculate", {"expression": "131.8 * 10"})]),
    ("How much would it cost to buy 10 shares of Nvidia?",
     [("get_stock_price", {"symbol": "Nvidia"}), ("calculate", {"expression": "131.8 * 10"})]),
])
def test_a_cost_question_is_a_price_question_not_an_order(client, question, expected):
    calls, answer = converse(client, question)
    assert calls == expected and "我不能" not in answer and "1,318 美元" in answer


def test_a_language_task_still_gets_the_capability_sentence(client):
    assert converse(client, "Translate hello into French") == ([], CAPABILITY_SENTENCE)
