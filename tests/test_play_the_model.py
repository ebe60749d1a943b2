"""``--model human``: the learner answers every request, over the same HTTP path as any model.

Driven by scripted input in-process (``run_cli(..., input=...)``): each line is what the
learner types at the ``模型>`` prompt (the stage commands read their question from ``-q``).
"""
from __future__ import annotations

import json
import re

import pytest
from langchain_core.tools import tool

import shared.tools
from shared.harness.human import PROMPT, ReplyError, ToolSchema, parse_reply
from shared.offline_llm.decision import Decision, ToolCall
from tests.support.agents import ARTICLE_QUESTION, ROOT
from tests.support.cli import run_cli

PLAY = ("--model", "human")


def trace_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("[") and " " in line and line[1].isdigit()]


def test_the_learner_plays_the_articles_serial_chain():
    typed = "\n".join([
        "get_current_time",
        "get_stock_price symbol=腾讯",
        'calculate expression="385.6 * 100"',
        "现在是 18:04，腾讯 385.6 港元，100 股市值 38,560 港元。",
    ]) + "\n"
    done = run_cli("stage3_pure_loop", "-q", ARTICLE_QUESTION, *PLAY, input=typed)
    assert done.returncode == 0, done.stderr
    assert trace_lines(done.stdout)[1:] == [
        "[3] 🤖 AI 调用工具: get_current_time({})",
        "[4] 🔧 工具返回: 2026-11-30 18:04:51",
        "[5] 🤖 AI 调用工具: get_stock_price({'symbol': '腾讯'})",
        "[6] 🔧 工具返回: 腾讯（0700.HK）当前股价：385.6 港元",
        "[7] 🤖 AI 调用工具: calculate({'expression': '385.6 * 100'})",
        "[8] 🔧 工具返回: 38560.0",
        "[9] 🤖 AI 回答: 现在是 18:04，腾讯 385.6 港元，100 股市值 38,560 港元。",
    ]
    # 紧凑：系统提示词和工具 schema 只显示一次，之后每次只显示新消息
    assert done.stdout.count("[system]") == 1 and done.stdout.count("[tools]") == 1
    assert done.stdout.count(f"[user] {ARTICLE_QUESTION}") == 1
    assert "[tool get_stock_price] 腾讯（0700.HK）当前股价：385.6 港元" in done.stdout


def test_a_parallel_round_is_several_calls_separated_by_semicolons():
    typed = 'get_current_time; get_stock_price symbol=腾讯; calculate expression="300 * 100"\n好了。\n'
    done = run_cli("stage3_pure_loop", "-q", ARTICLE_QUESTION, *PLAY, "--json", input=typed)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)            # --json：stdout 只有运行记录，玩的过程在 stderr
    assert [[c["name"] for c in r] for r in record["rounds"]] == [["get_current_time", "get_stock_price", "calculate"]]
    assert record["flags"][0]["kind"] == "guessed_argument"
    assert PROMPT in done.stderr


def test_a_typo_is_one_line_and_the_question_again():
    typed = "get_wether city=北京\nget_weather town=北京\ncalculate expression=\"1 +\nget_weather city=北京\n晴。\n"
    done = run_cli("stage3_pure_loop", "-q", "北京天气", *PLAY, input=typed)
    assert done.returncode == 0, done.stderr
    assert "✗ 未知工具 'get_wether'；这次请求提供的工具: get_weather, get_current_time, calculate, get_stock_price" in done.stdout
    assert "✗ get_weather 没有参数 'town'；它的参数: city" in done.stdout
    assert "No closing quotation" in done.stdout
    assert "[3] 🤖 AI 调用工具: get_weather({'city': '北京'})" in done.stdout


def test_the_json_protocol_gets_the_reply_as_json_text():
    done = run_cli("stage3_pure_loop.json_loop", "-q", "北京天气", *PLAY,
                   input="get_weather city=北京\n北京晴。\n")
    assert done.returncode == 0, done.stderr
    assert '[assistant（你）] {"tool": "get_weather", "args": {"city": "北京"}}' in done.stdout
    assert "[5] 🤖 AI 回答: 北京晴。" in done.stdout


def test_end_of_input_stops_the_run_without_asking_again():
    done = run_cli("stage3_pure_loop", "-q", "北京天气", *PLAY, input="")
    assert done.returncode == 1
    assert "输入结束" in done.stdout and done.stdout.count(PROMPT) == 1   # 客户端重试不会再问一遍


def test_compare_plays_one_implementation(tmp_path):
    done = run_cli("compare", "--impl", "pure_loop", "--prompt", "北京天气", *PLAY, "--json",
                   "--out", str(tmp_path), input="get_weather city=北京\n北京晴。\n")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["prompts"][0]["verdict"] == "equivalent"


@pytest.mark.parametrize("impls", [(), ("pure_loop", "json_loop")], ids=["all", "two"])
def test_compare_refuses_to_play_more_than_one_implementation(impls, tmp_path):
    done = run_cli("compare", *(("--impl", *impls) if impls else ()), *PLAY, "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--model human 只能配一个实现" in done.stderr


README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_tool_walkthrough():
    """The README's added tool (its code, run as written) and the trace the README shows."""
    code = re.search(r"<!-- human-tool:begin -->\n```python\n(.*?)```", README, flags=re.S).group(1)
    namespace: dict = {}
    exec(code, namespace)                     # noqa: S102 — README 里的代码，原样
    trace = re.search(r"```\n(-- Agent 推理过程 --\n\[2\] 👤 用户: 100 美元是多少港元？\n.*?-- 推理结束 --)\n```",
                      README, flags=re.S).group(1)
    return tool(namespace["get_exchange_rate"]), trace


def test_a_tool_the_learner_adds_is_usable_offline(monkeypatch):
    get_exchange_rate, readme_trace = readme_tool_walkthrough()
    shared.tools.TOOLS.append(get_exchange_rate)      # README 的第 2 步：加进 TOOLS（finally 里移除）
    monkeypatch.setitem(shared.tools.TOOL_MAP, "get_exchange_rate", get_exchange_rate)
    try:
        done = run_cli("stage3_pure_loop", "--model", "human", "-q", "100 美元是多少港元？",
                       input="get_exchange_rate base=USD quote=HKD\n100 美元约 780 港元。\n")
    finally:
        shared.tools.TOOLS.remove(get_exchange_rate)
    assert done.returncode == 0, done.stderr
    assert "get_exchange_rate(base: string, quote: string)  查询汇率。" in done.stdout   # 它的 schema 在请求里
    assert done.stdout[done.stdout.index("-- Agent 推理过程 --"):].strip() == readme_trace


SCHEMAS = {"calculate": ToolSchema("calculate", ("expression",), ("expression",), {"expression": "string"}),
           "roll": ToolSchema("roll", ("sides", "fair"), (), {"sides": "integer", "fair": "boolean"})}
OFFERED = tuple(SCHEMAS)


@pytest.mark.parametrize("typed, decision", [
    ('calculate expression="385.6 * 100"', Decision.calls(("calculate", {"expression": "385.6 * 100"}))),
    ('calculate {"expression": "1 + 1"}', Decision.calls(("calculate", {"expression": "1 + 1"}))),
    ("roll sides=6 fair=true", Decision.calls(("roll", {"sides": 6, "fair": True}))),
    ("roll; roll sides=20", Decision.calls(("roll", {}), ("roll", {"sides": 20}))),
    ("!send_email to=boss", Decision(tool_calls=(ToolCall("send_email", {"to": "boss"}),))),
    ("OK，好的", Decision.answer("OK，好的")),
    ("> calculate 是个好工具", Decision.answer("calculate 是个好工具")),
])
def test_reply_syntax(typed, decision):
    assert parse_reply(typed, OFFERED, SCHEMAS) == decision


@pytest.mark.parametrize("typed", ["", "calculate", "calculate 是个好工具", "send_email to=boss", "calculate {1}"])
def test_reply_typos(typed):
    with pytest.raises(ReplyError):
        parse_reply(typed, OFFERED, SCHEMAS)
