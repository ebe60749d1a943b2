"""The tool-call extractor of the hardened loop (翻车现场 1): finds the call in any text."""
from __future__ import annotations

import json
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from stage3_pure_loop.json_extract import ToolCall, extract_tool_call, iter_json_objects

# ---- strategies ----
# 工具名与参数：参数值里专门混进花括号、引号、反斜杠、反引号、中文——最容易骗过正则的字符
names = st.sampled_from(["get_weather", "get_current_time", "calculate", "get_stock_price", "send_email"])
tricky_text = st.text(alphabet=st.sampled_from(list('{}"\\`abc 1*+()腾讯，：\n')), max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | tricky_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(tricky_text, children, max_size=3),
    max_leaves=8,
)
args_dicts = st.dictionaries(tricky_text, json_values, max_size=3)
calls = st.builds(ToolCall, names, args_dicts)
# 调用前后的"闲聊"：不含 {，这样它本身不会构成另一个合法对象
chatter = st.text(alphabet=st.characters(blacklist_characters="{", blacklist_categories=("Cs",)), max_size=40)


def render(call: ToolCall, *, indent: int | None = None) -> str:
    return json.dumps({"tool": call.name, "args": call.args}, ensure_ascii=False, indent=indent)


# ---- properties ----

@given(st.text())
@settings(max_examples=300)
@example("{" * 5000)
@example('{"' * 3000)
@example('{"tool": "x", "args": {"a": "\\"}"}')
@example("[" * 2000 + "{}" + "]" * 2000)
def test_never_raises_on_any_text(text):
    result = extract_tool_call(text)
    assert result is None or isinstance(result, ToolCall)


@given(chatter, calls, chatter, st.booleans())
def test_finds_the_call_between_any_chatter(before, call, after, as_fence):
    body = render(call, indent=2)
    if as_fence:                                   # ```json 代码块
        body = f"```json\n{body}\n```"
    assert extract_tool_call(before + body + after) == call


@given(calls, calls, chatter)
def test_two_objects_take_the_first(first, second, between):
    text = render(first) + between + render(second)
    assert extract_tool_call(text) == first


@given(chatter, calls)
def test_a_non_call_object_before_the_call_is_skipped(before, call):
    text = '{"thought": "先想一想 {x}"} ' + before + render(call)
    assert extract_tool_call(text) == call


@given(calls)
def test_call_wrapped_in_another_object_is_found(call):
    text = json.dumps({"action": {"tool": call.name, "args": call.args}}, ensure_ascii=False)
    assert extract_tool_call(text) == call


@given(tricky_text)
def test_braces_and_escaped_quotes_inside_strings(value):
    call = ToolCall("calculate", {"expression": value})
    assert extract_tool_call("好的：" + render(call) + " 完成后给出 {答案}") == call


def test_the_articles_greedy_regex_fails_where_the_scanner_holds():
    # 文章的修复：re.search(r"\{.*\}", reply, re.DOTALL)。贪婪匹配从第一个 { 吞到最后一个 }
    replies = [
        '{"tool": "get_current_time", "args": {}} 然后再 {"tool": "calculate", "args": {}}',
        '我来查时间：{"tool": "get_current_time", "args": {}}，结果会填进 {结果} 里。',
    ]
    for reply in replies:
        greedy = re.search(r"\{.*\}", reply, re.DOTALL).group()
        try:
            json.loads(greedy)
            parsed = True
        except json.JSONDecodeError:
            parsed = False
        assert not parsed
        assert extract_tool_call(reply) == ToolCall("get_current_time", {})


def test_non_greedy_regex_fails_on_a_brace_inside_a_string():
    reply = '{"tool": "calculate", "args": {"expression": "}"}}'
    lazy = re.search(r"\{.*?\}", reply, re.DOTALL).group()
    assert lazy == '{"tool": "calculate", "args": {"expression": "}'
    assert extract_tool_call(reply) == ToolCall("calculate", {"expression": "}"})


def test_what_is_not_a_tool_call():
    assert extract_tool_call("") is None
    assert extract_tool_call("腾讯的股价是 385.6 港元。") is None
    assert extract_tool_call('{"tool": "calculate", "args": {"expression": "1+1"}') is None  # 少一个 }
    assert extract_tool_call('{"tool": "", "args": {}}') is None
    assert extract_tool_call('{"tool": 3, "args": {}}') is None
    assert extract_tool_call('{"tool": "calculate", "args": "1+1"}') is None
    assert extract_tool_call("{'tool': 'calculate', 'args': {}}") is None     # 单引号不是 JSON


def test_missing_args_counts_as_empty_like_the_article():
    assert extract_tool_call('{"tool": "get_current_time"}') == ToolCall("get_current_time", {})


def test_iter_json_objects_finds_nested_objects_in_order():
    found = list(iter_json_objects('x {"a": {"b": 1}} y {"c": "}"}'))
    assert found == [{"a": {"b": 1}}, {"b": 1}, {"c": "}"}]
