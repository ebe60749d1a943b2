"""The sliding window of the hardened loop (翻车现场 3): bounded, but never loses the
question and never separates a call from its result."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stage3_pure_loop.context_window import (
    count_message_tokens, slide_window, split_blocks,
)

SYSTEM = {"role": "system", "content": "你是一个智能助手。"}
QUESTION = {"role": "user", "content": "现在几点了？腾讯股票多少钱？"}


def call(n: int, size: int = 10) -> dict:
    return {"role": "assistant", "content": f'{{"tool": "t{n}", "args": {{}}}}' + "想" * size}


def result(n: int) -> dict:
    return {"role": "user", "content": f"工具 t{n} 的执行结果：{n}"}


# 一段 JSON 协议的对话：每个块 = 一条 assistant 消息 + 0..2 条回给它的 user 消息
blocks_strategy = st.lists(
    st.tuples(st.integers(0, 300), st.integers(0, 2)), min_size=0, max_size=12,
).map(lambda spec: [
    [call(i, size)] + [{"role": "user", "content": f"回复 {i}.{j} " + "x" * size} for j in range(answers)]
    for i, (size, answers) in enumerate(spec)
])


@given(blocks_strategy, st.one_of(st.none(), st.integers(0, 30)), st.one_of(st.none(), st.integers(0, 2000)))
def test_window_keeps_head_keeps_blocks_whole_and_respects_bounds(blocks, max_messages, max_tokens):
    messages = [SYSTEM, QUESTION] + [m for block in blocks for m in block]
    window = slide_window(messages, max_messages=max_messages, max_tokens=max_tokens)

    # 1. system prompt 和问题永远在最前面
    assert window[:2] == [SYSTEM, QUESTION]
    # 2. 留下的是原来的块，完整的、按原顺序的一段"最新的后缀"：调用和它的结果从不分开
    kept = split_blocks(window[2:])
    assert kept == blocks[len(blocks) - len(kept):]
    # 3. 最新的块一定在（模型必须知道刚发生了什么）
    if blocks:
        assert kept and kept[-1] == blocks[-1]
    # 4. 多于一个块时，窗口在界内；而且能多装一个块时不会少装（只丢必须丢的）
    if len(kept) > 1:
        if max_messages is not None:
            assert len(window) <= max_messages
        if max_tokens is not None:
            assert sum(map(count_message_tokens, window)) <= max_tokens
    if len(kept) < len(blocks):
        bigger = [SYSTEM, QUESTION] + [m for b in blocks[len(blocks) - len(kept) - 1:] for m in b]
        too_many = max_messages is not None and len(bigger) > max_messages
        too_long = max_tokens is not None and sum(map(count_message_tokens, bigger)) > max_tokens
        assert too_many or too_long


def test_the_articles_cut_would_drop_the_question_and_split_a_pair():
    messages = [SYSTEM, QUESTION] + [m for n in range(12) for m in (call(n), result(n))]
    article = [messages[0]] + messages[-(20 - 1):]              # 文章的写法
    assert QUESTION not in article
    assert article[1]["role"] == "user"                         # 窗口以一个"没有调用的结果"开头

    window = slide_window(messages, max_messages=20)
    assert window[:2] == [SYSTEM, QUESTION]
    assert window[2]["role"] == "assistant"
    assert len(window) <= 20
    assert window[-2:] == [call(11), result(11)]


def test_function_calling_messages_stay_with_their_tool_messages():
    ai = {"role": "assistant", "content": None,
          "tool_calls": [{"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}},
                         {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}}]}
    tools = [{"role": "tool", "tool_call_id": "a", "content": "1"}, {"role": "tool", "tool_call_id": "b", "content": "2"}]
    messages = [SYSTEM, QUESTION] + [call(0), result(0)] + [ai, *tools]
    assert slide_window(messages, max_messages=5) == [SYSTEM, QUESTION, ai, *tools]


def test_window_does_not_change_the_history():
    messages = [SYSTEM, QUESTION] + [m for n in range(5) for m in (call(n), result(n))]
    before = list(messages)
    slide_window(messages, max_messages=4)
    assert messages == before


def test_message_tokens_are_the_offline_models_count_of_the_message_json():
    # 与离线模型的 prompt_tokens 同一个数法：窗口在这里装得下，服务器那边就不会超
    from shared.tokens import prompt_tokens

    messages = [SYSTEM, QUESTION, call(0, 50), result(0)]
    assert prompt_tokens({"messages": messages}) == sum(map(count_message_tokens, messages)) + 1  # 外层的 [ ]
    assert count_message_tokens({"role": "user", "content": "腾讯" * 10}) - \
        count_message_tokens({"role": "user", "content": ""}) == 20
