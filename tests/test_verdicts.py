"""compare.verdicts：手工构造的运行记录 -> 判定、第一处差异、漂移统计。"""
from __future__ import annotations

import json

import pytest

from compare.verdicts import (DIVERGED, EQUIVALENT, STRATEGY_DIFFERS, drift, drift_by_impl, mean_pass_hat_k,
                              pass_hat_k, verdict)
from shared.harness.run_record import GUESSED_ARGUMENT, RunRecord, Status

PROMPT = "北京和上海的天气怎么样？腾讯股票多少钱？持有 100 股市值多少？"
BEIJING = {"name": "get_weather", "args": {"city": "北京"}, "result": "北京：晴"}
SHANGHAI = {"name": "get_weather", "args": {"city": "上海"}, "result": "上海：小雨"}
TENCENT = {"name": "get_stock_price", "args": {"symbol": "腾讯"}, "result": "腾讯（0700.HK）当前股价：385.6 HKD"}
VALUE = {"name": "calculate", "args": {"expression": "385.6 * 100"}, "result": "38560.0"}
ROUNDS = [[BEIJING, SHANGHAI, TENCENT], [VALUE]]
ANSWER = "北京晴，上海小雨；腾讯 385.6 港元，100 股市值 38560 港元。"


def record(impl: str = "prebuilt", rounds=ROUNDS, *, run: int = 0, status: str = Status.ANSWERED,
           answer: str | None = ANSWER, **extra) -> RunRecord:
    return RunRecord(impl=impl, prompt=PROMPT, temperature=0.0, run=run, status=status,
                     rounds=[[dict(call) for call in round_] for round_ in rounds], answer=answer, **extra)


def judge(*others: RunRecord):
    return verdict([record(), *others])


def first(result) -> dict:
    return result.details["first_difference"]


# ---------------------------------------------------------------- equivalent

def test_identical_records_are_equivalent():
    result = judge(record("stategraph"), record("pure_loop"))
    assert result.verdict == EQUIVALENT
    assert first(result) is None


def test_arguments_are_compared_by_value():
    commuted = {**VALUE, "args": {"expression": "100*385.6"}}
    spaced = {**BEIJING, "args": {"city": " 北京 "}}
    result = judge(record("pure_loop", [[spaced, SHANGHAI, TENCENT], [commuted]]))
    assert result.verdict == EQUIVALENT


def test_answers_compare_up_to_whitespace():
    assert judge(record("pure_loop", answer=f"  {ANSWER}\n")).verdict == EQUIVALENT


def test_verdict_to_dict_is_the_contract_object():
    data = judge(record("pure_loop")).to_dict()
    assert set(data) == {"prompt", "temperature", "verdict", "details"}
    assert data["prompt"] == PROMPT and data["temperature"] == 0.0
    json.dumps(data)                                  # --json 要能直接输出


def test_a_dict_record_works_like_a_run_record():
    assert verdict([record().to_dict(), record("pure_loop").to_dict()]).verdict == EQUIVALENT


# ---------------------------------------------------------------- strategy_differs

def test_reversed_order_in_one_round_is_a_strategy_difference():
    result = judge(record("stategraph"), record("reversed", [[SHANGHAI, BEIJING, TENCENT], [VALUE]]))
    assert result.verdict == STRATEGY_DIFFERS
    assert first(result) | {"message": ""} == {
        "impl": "reversed", "run": 0, "round": 1, "call": 1, "field": "args.city",
        "expected": "北京", "actual": "上海", "kind": STRATEGY_DIFFERS, "message": ""}
    assert "北京" in first(result)["message"] and "上海" in first(result)["message"]


def test_serial_against_parallel_is_a_strategy_difference():
    serial = [[BEIJING], [SHANGHAI], [TENCENT], [VALUE]]
    result = judge(record("serial", serial))
    assert result.verdict == STRATEGY_DIFFERS
    assert first(result)["field"] == "calls" and first(result)["round"] == 1
    assert [c["name"] for c in first(result)["expected"]] == ["get_weather", "get_weather", "get_stock_price"]
    assert len(first(result)["actual"]) == 1


# ---------------------------------------------------------------- diverged

def test_a_different_tool_error_text_diverges_naming_round_and_result():
    error = {**VALUE, "args": {"expression": "385.6 / 0"}, "result": "工具执行出错: 除数不能为零"}
    reworded = {**error, "result": "Error: division by zero"}
    result = verdict([record(rounds=[[TENCENT], [error]]), record("stategraph", [[TENCENT], [error]]),
                      record("other_error", [[TENCENT], [reworded]])])
    assert result.verdict == DIVERGED
    assert first(result)["impl"] == "other_error"
    assert (first(result)["round"], first(result)["call"], first(result)["field"]) == (2, 1, "result")
    assert first(result)["expected"] == "工具执行出错: 除数不能为零"
    assert first(result)["actual"] == "Error: division by zero"


def test_stopping_one_step_early_diverges_naming_the_missing_round_and_status():
    early = record("early", ROUNDS[:1], status=Status.MAX_STEPS, answer=None, stopped_at="range(1) 循环结束")
    result = judge(early)
    assert result.verdict == DIVERGED
    assert (first(result)["field"], first(result)["round"]) == ("rounds", 2)
    assert (first(result)["expected"], first(result)["actual"]) == (2, 1)
    [comparison] = result.details["comparisons"]
    fields = [d["field"] for d in comparison["differences"]]
    assert fields == ["rounds", "call", "status"]
    assert comparison["differences"][-1] | {"message": ""} == {
        "impl": "early", "run": 0, "round": None, "call": None, "field": "status",
        "expected": Status.ANSWERED, "actual": Status.MAX_STEPS, "kind": DIVERGED, "message": ""}


def test_a_different_argument_diverges_naming_it():
    guessed = {**VALUE, "args": {"expression": "385.6 * 300"}}
    result = judge(record("guess", [[BEIJING, SHANGHAI, TENCENT], [guessed]]))
    assert result.verdict == DIVERGED
    assert first(result) | {"message": ""} == {
        "impl": "guess", "run": 0, "round": 2, "call": 1, "field": "args.expression",
        "expected": "385.6 * 100", "actual": "385.6 * 300", "kind": DIVERGED, "message": ""}


def test_an_extra_call_diverges():
    result = judge(record("extra", [*ROUNDS, [VALUE]]))
    assert result.verdict == DIVERGED
    assert (first(result)["field"], first(result)["round"]) == ("rounds", 3)


def test_a_different_answer_diverges():
    result = judge(record("pure_loop", answer="我不知道。"))
    assert result.verdict == DIVERGED
    assert first(result)["field"] == "answer" and first(result)["actual"] == "我不知道。"


def test_divergence_is_reported_before_an_earlier_regrouping():
    # 先换了分组（策略差异），后面又有一个工具结果不同（机制差异）：第一处差异报后者
    changed = {**VALUE, "result": "38560"}
    result = judge(record("both", [[BEIJING], [SHANGHAI, TENCENT], [changed]]))
    assert result.verdict == DIVERGED
    assert (first(result)["field"], first(result)["round"]) == ("result", 3)
    kinds = [d["kind"] for d in result.details["comparisons"][0]["differences"]]
    assert kinds == [STRATEGY_DIFFERS, DIVERGED]


def test_the_worst_record_decides_and_names_itself():
    result = judge(record("serial", [[BEIJING], [SHANGHAI], [TENCENT], [VALUE]]),
                   record("broken", status=Status.ERROR, answer=None, error="boom"))
    assert result.verdict == DIVERGED
    assert first(result)["impl"] == "broken" and first(result)["field"] == "status"
    assert {c["impl"]: c["verdict"] for c in result.details["comparisons"]} == {
        "serial": STRATEGY_DIFFERS, "broken": DIVERGED}


def test_a_chosen_reference():
    records = [record("a", [[BEIJING], [SHANGHAI], [TENCENT], [VALUE]]), record("b"), record("c")]
    assert verdict(records).details["reference"] == {"impl": "a", "run": 0}
    chosen = verdict(records, reference=("b", 0))
    assert chosen.details["reference"] == {"impl": "b", "run": 0}
    assert first(chosen)["impl"] == "a"
    with pytest.raises(ValueError):
        verdict(records, reference=("nobody", 0))


def test_no_records_is_an_error():
    with pytest.raises(ValueError):
        verdict([])


# ---------------------------------------------------------------- step budgets, errors, flags

def test_max_steps_compares_on_status_and_only_reports_where_each_stopped():
    prebuilt = record("prebuilt", ROUNDS, status=Status.MAX_STEPS, answer="Sorry, need more steps to process this request.",
                      stopped_at="remaining_steps 守卫")
    stategraph = record("stategraph", ROUNDS, status=Status.MAX_STEPS, answer=None, stopped_at="GraphRecursionError")
    result = verdict([prebuilt, stategraph])
    assert result.verdict == EQUIVALENT
    assert [s["stopped_at"] for s in result.details["stopped_at"]] == ["remaining_steps 守卫", "GraphRecursionError"]
    notes = {n["field"] for n in result.details["comparisons"][0]["notes"]}
    assert notes == {"stopped_at", "answer"}


def test_error_texts_do_not_decide_but_are_noted():
    result = verdict([record("a", [], status=Status.ERROR, answer=None, error="HTTP 500"),
                      record("b", [], status=Status.ERROR, answer=None, error="InternalServerError: 500")])
    assert result.verdict == EQUIVALENT
    assert result.details["comparisons"][0]["notes"][0]["field"] == "error"


def test_guessed_argument_flags_are_carried_with_their_run():
    flag = {"kind": GUESSED_ARGUMENT, "round": 1, "tool": "calculate", "detail": "300 既不在问题里"}
    result = judge(record("stategraph", run=2, flags=[flag, {"kind": "other", "round": 1, "tool": "x", "detail": ""}]))
    assert result.details["flags"] == [{"impl": "stategraph", "run": 2, **flag}]


# ---------------------------------------------------------------- drift

def test_drift_statistics():
    serial = [[BEIJING], [SHANGHAI], [TENCENT], [VALUE]]
    flag = {"kind": GUESSED_ARGUMENT, "round": 1, "tool": "calculate", "detail": "300"}
    guessed = [[BEIJING, SHANGHAI, TENCENT, {**VALUE, "args": {"expression": "385.6 * 300"}}]]
    runs = [record(run=0), record(run=1), record(rounds=serial, run=2),
            record(rounds=guessed, run=3, flags=[flag])]
    stats = drift(runs, expected=[BEIJING, SHANGHAI, TENCENT, VALUE])
    assert stats.runs == 4 and stats.distinct_traces == 3 and stats.distinct_share == 0.75
    assert stats.parallel_share == 0.75
    assert stats.expected_share == 0.75                # 猜了 300 的那次没有 385.6 * 100
    assert stats.passes == 3
    assert stats.pass_hat_k == {1: 0.75, 2: 0.5, 3: 0.25, 4: 0.0}
    assert (stats.guessed_arguments, stats.flagged_runs) == (1, 1)
    assert json.loads(json.dumps(stats.to_dict()))["pass_hat_k"]["2"] == 0.5


def test_a_run_that_did_not_answer_does_not_pass():
    stats = drift([record(), record(run=1, status=Status.MAX_STEPS, answer=None)])
    assert stats.expected_share is None and stats.passes == 1


def test_expected_calls_in_rounds_with_a_chosen_mode():
    runs = [record(rounds=[[BEIJING], [SHANGHAI]])]
    assert drift(runs, expected=[[BEIJING, SHANGHAI]], mode="strict").expected_share == 0.0
    assert drift(runs, expected=[[BEIJING, SHANGHAI]], mode="unordered").expected_share == 1.0


def test_drift_by_impl_adds_the_overall_line():
    stats = drift_by_impl([record("a"), record("a", run=1), record("b", [[BEIJING]])])
    assert set(stats) == {"a", "b", "*"}
    assert stats["a"].distinct_traces == 1 and stats["*"].distinct_traces == 2


def test_pass_hat_k_as_in_tau_bench():
    assert pass_hat_k(4, 2, 1) == 0.5
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(4, 4, 4) == 1.0 and pass_hat_k(4, 3, 4) == 0.0
    assert mean_pass_hat_k([(4, 2), (4, 4)], 2) == pytest.approx((1 / 6 + 1) / 2)
    with pytest.raises(ValueError):
        pass_hat_k(2, 2, 3)


def test_records_of_different_prompts_are_not_judged_together():
    other = record("pure_loop")
    other.prompt = "另一个问题"
    with pytest.raises(ValueError, match="同一个问题"):
        judge(other)
