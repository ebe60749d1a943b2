"""compare 的四种调用匹配方式与 agentevals 的 trajectory match 一致。

The same records are turned into OpenAI-format message lists (one assistant message with
``tool_calls`` per round, its tool messages, a final answer) and judged by
``agentevals.trajectory.match.create_trajectory_match_evaluator``; our
:func:`compare.matching.match_calls` must say the same, for every
``trajectory_match_mode`` and for ``tool_args_match_mode`` ``exact`` and ``ignore``.

agentevals is a dev dependency: it is imported here and nowhere in the package.
agentevals' partial argument modes (``subset``/``superset`` of argument keys) are not kept
in compare (see compare/matching.py).
"""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentevals.trajectory.match import create_trajectory_match_evaluator
from compare.matching import EXACT, IGNORE, MATCH_MODES, match_calls
from shared.harness.run_record import RunRecord

ARG_MODES = (EXACT, IGNORE)
EVALUATORS = {(mode, args): create_trajectory_match_evaluator(trajectory_match_mode=mode, tool_args_match_mode=args)
              for mode in MATCH_MODES for args in ARG_MODES}


def messages(rounds: list[list[dict]], answer: str = "完成") -> list[dict]:
    """A record's rounds as the OpenAI chat messages a run would have produced."""
    out: list[dict] = [{"role": "user", "content": "问题"}]
    for r, round_ in enumerate(rounds):
        ids = [f"call_{r}_{c}" for c in range(len(round_))]
        out.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": id_, "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call["args"], ensure_ascii=False)}}
            for id_, call in zip(ids, round_)]})
        out += [{"role": "tool", "tool_call_id": id_, "content": call.get("result") or ""}
                for id_, call in zip(ids, round_)]
    out.append({"role": "assistant", "content": answer})
    return out


def agentevals_says(actual: list, reference: list, mode: str, args: str) -> bool:
    result = EVALUATORS[(mode, args)](outputs=messages(actual), reference_outputs=messages(reference))
    return bool(result["score"])


def record(rounds: list[list[dict]]) -> RunRecord:
    return RunRecord(impl="x", prompt="问题", temperature=0.0, rounds=rounds, answer="完成")


def we_say(actual: list, reference: list, mode: str, args: str) -> bool:
    # 从运行记录走一遍，和 compare 用的是同一条路
    return match_calls(record(actual).rounds, record(reference).rounds, mode=mode, arg_mode=args)


def call(name: str, **args) -> dict:
    return {"name": name, "args": args, "result": "r"}


BJ, SH = call("get_weather", city="北京"), call("get_weather", city="上海")
BJ_SPACED = call("get_weather", city=" 北京")
TX = call("get_stock_price", symbol="腾讯")
V100, V100_SWAPPED = call("calculate", expression="385.6 * 100"), call("calculate", expression="100 * 385.6")
ONE, ONE_FLOAT = call("calculate", expression="1", n=1), call("calculate", expression="1", n=1.0)
TIME = call("get_current_time")

TRICKY = {
    "identical": ([[BJ, SH], [V100]], [[BJ, SH], [V100]]),
    "reversed inside a round": ([[SH, BJ], [V100]], [[BJ, SH], [V100]]),
    "serial vs parallel": ([[BJ], [SH], [V100]], [[BJ, SH], [V100]]),
    "rounds swapped": ([[V100], [BJ, SH]], [[BJ, SH], [V100]]),
    "one round fewer": ([[BJ, SH]], [[BJ, SH], [V100]]),
    "an extra call": ([[BJ, SH, TX], [V100]], [[BJ, SH], [V100]]),
    "duplicate call": ([[BJ, BJ]], [[BJ, SH]]),
    "duplicates both sides": ([[BJ, BJ], [SH]], [[BJ], [BJ, SH]]),
    "no calls vs calls": ([], [[TIME]]),
    "no calls at all": ([], []),
    "whitespace in an argument": ([[BJ_SPACED]], [[BJ]]),
    "commuted expression": ([[V100_SWAPPED]], [[V100]]),
    "1 vs 1.0": ([[ONE]], [[ONE_FLOAT]]),
    "other tool same args": ([[call("get_stock_price", city="北京")]], [[BJ]]),
    "empty args": ([[TIME, TIME]], [[TIME], [TIME]]),
}


@pytest.mark.parametrize("mode", MATCH_MODES)
@pytest.mark.parametrize("args", ARG_MODES)
@pytest.mark.parametrize("case", TRICKY, ids=str)
def test_tricky_cases_agree(case, mode, args):
    actual, reference = TRICKY[case]
    assert we_say(actual, reference, mode, args) == agentevals_says(actual, reference, mode, args)
    assert we_say(reference, actual, mode, args) == agentevals_says(reference, actual, mode, args)


def test_the_tricky_cases_are_not_all_alike():
    # 一致性测试要有判别力：同一组用例在各模式下既有 True 也有 False
    outcomes = {we_say(a, r, mode, EXACT) for a, r in TRICKY.values() for mode in MATCH_MODES}
    assert outcomes == {True, False}


POOL = [BJ, SH, BJ_SPACED, TX, V100, V100_SWAPPED, ONE, ONE_FLOAT, TIME]
rounds_strategy = st.lists(st.lists(st.sampled_from(POOL), min_size=1, max_size=3), max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actual=rounds_strategy, reference=rounds_strategy, mode=st.sampled_from(MATCH_MODES),
       args=st.sampled_from(ARG_MODES))
def test_generated_trajectories_agree(actual, reference, mode, args):
    assert we_say(actual, reference, mode, args) == agentevals_says(actual, reference, mode, args)


@settings(max_examples=150, deadline=None)
@given(reference=rounds_strategy, data=st.data(), mode=st.sampled_from(MATCH_MODES),
       args=st.sampled_from(ARG_MODES))
def test_permuted_trajectories_agree(reference, data, mode, args):
    # 随机生成的两条轨迹多半毫不相干；打乱同一条轨迹，才常常落在"差一点就匹配"的边界上
    shuffled = [data.draw(st.permutations(round_)) for round_ in data.draw(st.permutations(reference))]
    assert we_say(shuffled, reference, mode, args) == agentevals_says(shuffled, reference, mode, args)
