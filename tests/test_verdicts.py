"""compare.verdicts：手工构造的运行记录 -> 判定、第一处差异、协议组、通过与漂移统计。"""
from __future__ import annotations

import pytest

from compare.suite import Expectation
from compare.verdicts import (DIVERGED, EQUIVALENT, STRATEGY_DIFFERS, compare_runs, drift, failure, group_verdict,
                              pass_hat_k)
from shared.harness.run_record import GUESSED_ARGUMENT, RunRecord, Status

PROMPT = "北京和上海的天气怎么样？腾讯股票多少钱？持有 100 股市值多少？"
BEIJING = {"name": "get_weather", "args": {"city": "北京"}, "result": "北京：晴"}
SHANGHAI = {"name": "get_weather", "args": {"city": "上海"}, "result": "上海：小雨"}
TENCENT = {"name": "get_stock_price", "args": {"symbol": "腾讯"}, "result": "腾讯（0700.HK）当前股价：385.6 HKD"}
VALUE = {"name": "calculate", "args": {"expression": "385.6 * 100"}, "result": "38560.0"}
ROUNDS = [[BEIJING, SHANGHAI, TENCENT], [VALUE]]
SERIAL = [[BEIJING], [SHANGHAI], [TENCENT], [VALUE]]
ANSWER = "北京晴，上海小雨；腾讯 385.6 港元，100 股市值 38,560 港元。"


def record(impl: str = "prebuilt", rounds=ROUNDS, *, run: int = 0, status: str = Status.ANSWERED,
           answer: str | None = ANSWER, **extra) -> RunRecord:
    return RunRecord(impl=impl, prompt=PROMPT, temperature=0.0, run=run, status=status,
                     rounds=[[dict(call) for call in round_] for round_ in rounds], answer=answer, **extra)


def against_base(other: RunRecord):
    return compare_runs(record(), other)


def test_identical_and_by_value_equal_runs_are_equivalent():
    commuted = {**VALUE, "args": {"expression": "100*385.6"}}
    spaced = {**BEIJING, "args": {"city": " 北京 "}}
    assert against_base(record("pure_loop", [[spaced, SHANGHAI, TENCENT], [commuted]])) == (EQUIVALENT, None)
    assert against_base(record("pure_loop", answer=f"  {ANSWER}\n"))[0] == EQUIVALENT


def test_reversed_order_in_one_round_is_a_strategy_difference_naming_the_argument():
    kind, first = against_base(record("reversed", [[SHANGHAI, BEIJING, TENCENT], [VALUE]]))
    assert kind == STRATEGY_DIFFERS
    assert (first.impl, first.round, first.call, first.field, first.expected, first.actual) == (
        "reversed", 1, 1, "args.city", "北京", "上海")


def test_serial_against_parallel_is_a_strategy_difference():
    kind, first = against_base(record("serial", SERIAL))
    assert kind == STRATEGY_DIFFERS and (first.field, first.round) == ("calls", 1)
    assert len(first.expected) == 3 and len(first.actual) == 1


def test_a_different_tool_result_diverges_naming_round_and_call():
    error = {**VALUE, "args": {"expression": "385.6 / 0"}, "result": "工具执行出错: 除数不能为零"}
    kind, first = compare_runs(record(rounds=[[TENCENT], [error]]),
                               record("other", [[TENCENT], [{**error, "result": "Error: division by zero"}]]))
    assert kind == DIVERGED
    assert (first.round, first.call, first.field, first.actual) == (2, 1, "result", "Error: division by zero")


def test_a_guessed_argument_diverges_naming_it_even_after_a_regrouping():
    guessed = {**VALUE, "args": {"expression": "385.6 * 300"}}
    kind, first = against_base(record("guess", [[BEIJING], [SHANGHAI, TENCENT], [guessed]]))
    assert kind == DIVERGED
    assert (first.round, first.field, first.expected, first.actual) == (3, "args.expression", "385.6 * 100",
                                                                        "385.6 * 300")


def test_an_extra_or_missing_call_diverges():
    assert against_base(record("extra", [*ROUNDS, [TENCENT]]))[1].field == "call"
    kind, first = against_base(record("short", ROUNDS[:1]))
    assert kind == DIVERGED and (first.field, first.expected) == ("call", VALUE)


def test_status_and_answer_diverge_but_where_a_run_stopped_does_not():
    kind, first = against_base(record("stop", status=Status.MAX_STEPS, answer=None, stopped_at="range"))
    assert kind == DIVERGED and (first.field, first.expected, first.actual) == ("status", "answered", "max_steps")
    assert against_base(record("other", answer="我不知道。"))[1].field == "answer"
    a = record("a", status=Status.MAX_STEPS, answer=None, stopped_at="GraphRecursionError")
    b = record("b", status=Status.MAX_STEPS, answer="Sorry, need more steps", stopped_at="remaining_steps 守卫")
    assert compare_runs(a, b)[0] == EQUIVALENT


def test_a_group_is_judged_against_the_run_that_meets_the_expectation():
    runs = [record("wrong", SERIAL), record("right"), record("also_right")]
    result = group_verdict("function_calling", runs, by_seed=False, passes=lambda r: r.impl != "wrong")
    assert result.baseline == ["right#0"]
    assert result.verdict == STRATEGY_DIFFERS and result.comparisons == {"wrong#0": STRATEGY_DIFFERS}
    assert result.first_difference.impl == "wrong"


def test_above_temperature_0_runs_are_compared_seed_by_seed():
    runs = [record("a", run=0), record("b", run=0), record("a", SERIAL, run=1), record("b", SERIAL, run=1)]
    assert group_verdict("fc", runs, by_seed=True).verdict == EQUIVALENT        # 不同 seed 的漂移不算机制
    assert group_verdict("fc", runs, by_seed=False).verdict == STRATEGY_DIFFERS


EXPECT = Expectation(match="strict", rounds=[[{"name": c["name"], "args": c["args"]} for c in r] for r in ROUNDS])


def test_a_run_passes_when_its_calls_meet_the_expectation_and_its_answer_is_right():
    assert failure(record(), EXPECT, ["38,560"]) is None
    assert "strict" in failure(record(rounds=SERIAL), EXPECT, ["38,560"])
    assert "38,560" in failure(record(answer="38560"), EXPECT, ["38,560"])
    assert "max_steps" in failure(record(status=Status.MAX_STEPS, answer=None), None, [])


def test_drift_statistics():
    flag = {"kind": GUESSED_ARGUMENT, "round": 1, "tool": "calculate", "detail": "300 既不在问题里"}
    runs = [record(run=0), record(run=1), record(rounds=SERIAL, run=2), record(run=3, flags=[flag, flag])]
    names = {"prebuilt#0": "A", "prebuilt#1": "A", "prebuilt#2": "B", "prebuilt#3": "A"}
    stats = drift(runs, names, lambda r: failure(r, EXPECT) is None and not r.flags)
    assert (stats.runs, stats.passes, stats.distinct_traces) == (4, 2, 2)
    assert stats.pass_hat_k == {1: 0.5, 2: pytest.approx(1 / 6), 3: 0.0, 4: 0.0}
    assert stats.strategy_share == {"A": 0.75, "B": 0.25}
    assert (stats.guessed_per_run, stats.flagged_runs) == (0.5, 1)


def test_pass_hat_k_as_in_tau_bench():
    assert pass_hat_k(4, 2, 1) == 0.5 and pass_hat_k(4, 4, 4) == 1.0 and pass_hat_k(4, 3, 4) == 0.0
    with pytest.raises(ValueError):
        pass_hat_k(2, 2, 3)
