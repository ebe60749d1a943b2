"""The hardened zero-framework loop: each of the article's five fixes, each switchable.

Here every guard is driven by a scripted model (exact replies, exact counts); the fault
modes of the offline model are exercised against both loops in ``test_faults.py``.
"""
from __future__ import annotations

import json

import pytest

from tests.support.agents import ARTICLE_QUESTION, ROOT, Agent
from tests.support.cli import run_cli
from tests.support.scripted import ScriptedBrain, answer, call
from compare.implementations import IMPLEMENTATIONS
from shared.offline_llm.decision import Decision
from shared.harness.run_record import Status
from stage3_pure_loop import hardened_loop
from stage3_pure_loop.context_window import count_message_tokens

HARDENED = Agent(IMPLEMENTATIONS["hardened_loop"])
NAIVE = Agent(IMPLEMENTATIONS["json_loop"])


def test_the_articles_question_with_every_fix_on():
    # 温和提醒只禁止"重复"，不禁止"下一步"：三步链照样走完（文章原话会把它拦在第一步之后）
    record = HARDENED(ARTICLE_QUESTION)
    assert record.status == Status.ANSWERED and "38,560 港元" in record.answer
    assert [r[0]["name"] for r in record.rounds] == ["get_current_time", "get_stock_price", "calculate"]
    result_message = record.exchanges[1]["request"]["messages"][3]["content"]
    assert result_message.endswith("不要重复调用同一个工具。") and "不要再调用工具" not in result_message


# ---- 修复 1 extract ----

@pytest.mark.parametrize("reply", [
    '好的，我来查一下：{"tool": "get_current_time", "args": {}} 查到后填进 {结果} 里。',
    '```json\n{"tool": "get_current_time", "args": {}}\n```',
    '{"thought": "先看时间"}\n{"tool": "get_current_time", "args": {}}',
])
def test_the_call_is_found_in_any_text(reply):
    brain = ScriptedBrain(Decision(text=reply), answer("现在是傍晚六点。"))
    record = HARDENED("几点了", brain=brain)
    assert record.status == Status.ANSWERED
    assert record.rounds == [[{"name": "get_current_time", "args": {}, "result": "2026-11-30 18:04:51"}]]


def test_without_extract_the_chatty_call_is_not_a_call():
    reply = '好的，我来查一下：{"tool": "get_current_time", "args": {}}'
    record = HARDENED("几点了", brain=ScriptedBrain(Decision(text=reply), answer("现在是傍晚六点。"),
                                                 answer("现在是傍晚六点。"), answer("现在是傍晚六点。")),
                      disabled_fixes=frozenset({"extract", "validate"}))
    assert record.status == Status.ANSWERED and record.rounds == [] and record.answer == reply


# ---- 修复 2 repeat ----

def test_the_same_call_three_times_in_a_row_is_stopped():
    record = HARDENED("几点了", brain=ScriptedBrain(call("get_current_time"), repeat_last=True))
    assert record.status == Status.STOPPED and record.llm_calls == 3
    assert "重复工具调用" in record.error and "get_current_time" in record.error
    assert record.stopped_at.startswith("RepeatedCall: ")
    # 第三次调用被拦下，没有执行
    assert [c[0]["result"] is None for c in record.rounds] == [False, False, True]


def test_the_same_tool_with_other_arguments_is_not_a_repeat():
    brain = ScriptedBrain(*(call("calculate", expression=f"{i} + 1") for i in range(4)), answer("算完了：4。"))
    record = HARDENED("算几次", brain=brain)
    assert record.status == Status.ANSWERED and len(record.rounds) == 4


def test_without_repeat_the_loop_runs_to_max_steps():
    brain = ScriptedBrain(call("get_current_time"), repeat_last=True)
    record = HARDENED("几点了", brain=brain, disabled_fixes=frozenset({"repeat"}))
    assert record.status == Status.MAX_STEPS and record.llm_calls == 10


# ---- 修复 3 window ----

def test_the_window_bounds_every_request_and_keeps_question_and_pairs(monkeypatch):
    monkeypatch.setattr(hardened_loop, "WINDOW_MAX_TOKENS", 600)
    long_calls = [Decision(text=json.dumps({"tool": "calculate", "args": {"expression": f"{i} + 1"},
                                            "thought": "想" * 150}, ensure_ascii=False)) for i in range(8)]
    brain = ScriptedBrain(*long_calls, answer("算完了。"))
    record = HARDENED("一直算下去", brain=brain)
    assert record.status == Status.ANSWERED and len(record.rounds) == 8
    for request in brain.requests:
        messages = request["messages"]
        assert [m["role"] for m in messages[:2]] == ["system", "user"] and messages[1]["content"] == "一直算下去"
        assert [m["role"] for m in messages[2:]] == ["assistant", "user"] * ((len(messages) - 2) // 2)
        assert sum(map(count_message_tokens, messages)) <= 600
        # 历史里存的是读懂的调用，不是模型的长篇思考
        assert all("thought" not in m["content"] for m in messages if m["role"] == "assistant")
    assert len(brain.requests[-1]["messages"]) < 2 + 2 * 8          # 真的丢了最老的块


def test_without_window_the_history_grows_with_the_models_words():
    long_call = Decision(text=json.dumps({"tool": "get_current_time", "args": {}, "thought": "想" * 300},
                                         ensure_ascii=False))
    brain = ScriptedBrain(long_call, answer("现在是傍晚六点。"))
    HARDENED("几点了", brain=brain, disabled_fixes=frozenset({"window"}))
    assert "想" * 300 in brain.requests[1]["messages"][2]["content"]


# ---- 修复 4 unknown_tool ----

def test_an_unknown_tool_is_retried_with_the_call_kept_in_context():
    brain = ScriptedBrain(call("send_email", to="boss"), call("get_current_time"), answer("现在是傍晚六点。"))
    record = HARDENED("几点了", brain=brain)
    assert record.status == Status.ANSWERED
    assert record.rounds[0][0]["result"].startswith("错误：send_email 不是可用工具。可用工具有：get_weather")
    second = brain.requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert json.loads(second[2]["content"])["tool"] == "send_email"


def test_more_than_three_unknown_tools_stop_the_run():
    brain = ScriptedBrain(call("send_email", to="boss"), repeat_last=True)
    record = HARDENED("给老板发邮件", brain=brain)
    assert record.status == Status.STOPPED and record.stopped_at.startswith("UnknownToolLimit: ")
    assert record.llm_calls == 1 + hardened_loop.MAX_UNKNOWN_TOOL_RETRIES
    assert "send_email" in record.error


def test_without_unknown_tool_the_naive_handling_has_no_limit():
    brain = ScriptedBrain(call("send_email", to="boss"), repeat_last=True)
    record = HARDENED("给老板发邮件", brain=brain, disabled_fixes=frozenset({"unknown_tool"}))
    assert record.status == Status.MAX_STEPS and record.llm_calls == 10


# ---- 修复 5 validate ----

@pytest.mark.parametrize("bad", ["", "。", "The market value is 38560 HKD.", '{"result": "完成"}',
                                 '{"tool": "get_current_time", "args": {}'])
def test_a_bad_answer_is_sent_back_and_a_good_one_accepted(bad):
    brain = ScriptedBrain(answer(bad), answer("现在是傍晚六点。"))
    record = HARDENED("几点了", brain=brain)
    assert record.status == Status.ANSWERED and record.answer == "现在是傍晚六点。"
    feedback = brain.requests[1]["messages"][-1]
    assert feedback["role"] == "user" and feedback["content"].startswith("你的上一条回复不能作为最终答案")


def test_three_bad_answers_in_a_row_give_the_fallback():
    record = HARDENED("几点了", brain=ScriptedBrain(answer(""), repeat_last=True))
    assert record.status == Status.STOPPED and record.stopped_at.startswith("BadAnswerLimit: ")
    assert record.answer == hardened_loop.FALLBACK_ANSWER and record.llm_calls == 3


def test_an_english_question_may_get_an_english_answer():
    record = HARDENED("what time is it", brain=ScriptedBrain(answer("It is six o'clock.")))
    assert record.status == Status.ANSWERED


def test_without_validate_a_bad_answer_is_returned():
    # 没有修复 5，循环把空回复当成终答交了出去；运行记录不把空消息算作回答，而是点名它
    record = HARDENED("几点了", brain=ScriptedBrain(answer("")), disabled_fixes=frozenset({"validate"}))
    assert record.status == Status.ERROR and record.error.startswith("empty_message") and record.llm_calls == 1
    record = HARDENED("几点了", brain=ScriptedBrain(answer("Six.")), disabled_fixes=frozenset({"validate"}))
    assert record.status == Status.ANSWERED and record.answer == "Six."


# ---- 人工确认（文章方向 3）----

def _run_direct(brain, **kwargs):
    from openai import OpenAI

    from shared.offline_llm import OfflineServer

    with OfflineServer(brain=brain) as server:
        client = OpenAI(base_url=server.base_url, api_key="offline")
        return hardened_loop.run_agent("算一下 1+1", client=client, model="offline", **kwargs)


def test_a_dangerous_tool_needs_approval(tmp_path):
    from shared.approval import Scripted
    from shared.orders import database_path, list_orders, orders_recorded_in

    order = call("place_order", symbol="腾讯", shares=100, side="buy")
    with orders_recorded_in(tmp_path, implementation="hardened_loop", run_id="t"):
        refused = _run_direct(ScriptedBrain(order, answer("没有下单。")), approve=Scripted([False]))
        assert refused.rounds[0][0]["result"] == "用户拒绝了 place_order 操作。请尝试替代方案。"
        assert list_orders(database_path(tmp_path)) == []
        asked = Scripted([True])
        approved = _run_direct(ScriptedBrain(order, answer("已下单。")), approve=asked)
    assert approved.rounds[0][0]["result"].startswith("已下单：买入 100 股腾讯")
    assert len(asked.questions) == 1 and "38,560 港元" in asked.questions[0]
    assert [o["shares"] for o in list_orders(database_path(tmp_path))] == [100]


# ---- 开关本身 ----

def test_an_unknown_fix_name_is_an_error():
    with pytest.raises(ValueError, match="未知修复"):
        hardened_loop.enabled_fixes(frozenset({"nope"}))
    # 不是模型的错，是调用者的错（bug）：runner 不把它变成 status "error"，而是原样抛出，
    # 并在异常上附带这次运行的记录（compare 记下它、继续跑别的）
    with pytest.raises(ValueError, match="未知修复") as raised:
        HARDENED("几点了", brain=ScriptedBrain(answer("六点。")), disabled_fixes=frozenset({"nope"}))
    record = raised.value.run_record
    assert record.status == Status.ERROR and "未知修复" in record.error and "hardened_loop.py:" in record.error


def test_the_command_line_takes_no_fix_and_rejects_unknown_names():
    ok = run_cli("stage3_pure_loop.hardened_loop", "-q", ARTICLE_QUESTION, "--no-fix", "window",
                 "--no-fix", "repeat", "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["status"] == Status.ANSWERED
    bad = run_cli("stage3_pure_loop.hardened_loop", "-q", "x", "--no-fix", "nope")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "nope" in bad.stderr
