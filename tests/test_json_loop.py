"""The second article's 50-line agent (stage3_pure_loop/json_loop.py): runnable, and naive on purpose."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.support.agents import ARTICLE_QUESTION, ARTICLE_ROUNDS, ROOT, Agent
from tests.support.cli import run_cli
from tests.support.scripted import ScriptedBrain, answer, call
from compare.implementations import IMPLEMENTATIONS
from shared.offline_llm.decision import Decision
from shared.harness.run_record import Status
from stage3_pure_loop import json_loop

NAIVE = Agent(IMPLEMENTATIONS["json_loop"])


def test_importing_the_zero_framework_loops_loads_no_framework():
    # fc_loop 也在这里：function calling 同样不需要框架
    code = ("import sys, stage3_pure_loop.json_loop, stage3_pure_loop.hardened_loop, stage3_pure_loop.fc_loop; "
            "print([m for m in sys.modules if m.startswith(('langchain', 'langgraph'))])")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={"PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_system_prompt_is_the_articles_with_the_tool_registry():
    system = json_loop.build_messages("问题")[0]["content"]
    assert '{"tool": "工具名", "args": {"参数名": "参数值"}}' in system        # {{ }} 转义后是单个花括号
    for name in ("get_weather", "get_current_time", "calculate", "get_stock_price"):
        assert f"\n- {name}: " in system
    assert json_loop.TOOLS["calculate"]["description"].startswith("执行数学计算")


def test_the_articles_question_gives_the_articles_trace():
    record = NAIVE(ARTICLE_QUESTION)
    assert record.status == Status.ANSWERED
    assert record.rounds == ARTICLE_ROUNDS
    assert "38,560 港元" in record.answer
    # 纯文本协议：请求里没有 tools，调用以 JSON 文本出现在 assistant 的 content 里
    last_request = record.exchanges[-1]["request"]
    assert "tools" not in last_request
    assert [m["role"] for m in last_request["messages"]] == ["system", "user"] + ["assistant", "user"] * 3
    assert json.loads(last_request["messages"][2]["content"]) == {"tool": "get_current_time", "args": {}}
    assert last_request["messages"][3]["content"] == json_loop.RESULT_MESSAGE.format(
        tool_name="get_current_time", result="2026-11-30 18:04:51")


def test_agent_loop_keeps_the_articles_shape():
    from openai import OpenAI

    from shared.offline_llm import OfflineServer

    with OfflineServer() as server:
        client = OpenAI(base_url=server.base_url, api_key="offline")
        assert "38,560 港元" in json_loop.agent_loop(ARTICLE_QUESTION, client=client, model="offline")
        assert json_loop.agent_loop("一直算下去", client=client, model="offline")   # 能力说明，一句话


def test_text_around_the_call_is_taken_for_the_final_answer():
    # 翻车现场 1：回复不以 { 开头 → 不算调用 → 原样当成最终答案返回
    chatty = Decision(text='好的，我来查一下时间：{"tool": "get_current_time", "args": {}}')
    record = NAIVE("几点了", brain=ScriptedBrain(chatty))
    assert record.status == Status.ANSWERED and record.rounds == []
    assert record.answer.startswith("好的，我来查一下时间")


def test_broken_json_is_taken_for_the_final_answer():
    broken = Decision(text='{"tool": "get_current_time", "args": {}')        # 少一个 }，但以 } 结尾
    record = NAIVE("几点了", brain=ScriptedBrain(broken))
    assert record.status == Status.ANSWERED and record.rounds == []
    assert record.answer == '{"tool": "get_current_time", "args": {}'


def test_an_unknown_tool_gets_the_articles_error_but_the_call_itself_is_not_kept():
    brain = ScriptedBrain(call("send_email", to="boss"), answer("邮件发不了。"))
    record = NAIVE("给老板发邮件", brain=brain)
    assert record.status == Status.ANSWERED
    assert record.rounds[0][0]["result"] == "错误：未知工具 send_email。可用工具：get_weather, get_current_time, calculate, get_stock_price, place_order。请重新选择。"
    second = brain.requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "user"]      # 模型自己的那条调用不见了


def test_the_same_call_forever_runs_into_max_iter():
    brain = ScriptedBrain(call("get_current_time"), repeat_last=True)
    record = NAIVE("几点了", brain=brain)
    assert record.status == Status.MAX_STEPS and record.llm_calls == json_loop.MAX_ITER == 10
    assert len(record.rounds) == 10
    assert record.stopped_at == json_loop.MAX_ITER_MESSAGE


def test_the_command_line_prints_the_articles_trace():
    done = run_cli("stage3_pure_loop.json_loop", "-q", ARTICLE_QUESTION)
    assert done.returncode == 0, done.stderr
    assert "🤖 AI 调用工具: calculate({'expression': '385.6 * 100'})" in done.stdout
    assert "38,560 港元" in done.stdout
