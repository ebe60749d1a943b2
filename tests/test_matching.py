"""compare.matching：参数比较的三种方式、调用轨迹的四种匹配方式、最佳配对。"""
from __future__ import annotations

import pytest

from compare.matching import (ARGS_SUPERSET, BY_VALUE, EXACT, IGNORE, STRICT, SUBSET, SUPERSET, UNORDERED,
                              Call, args_equal, as_rounds, calls_equal, expressions_equal, match_calls,
                              max_pairing, pair_calls, trace_of)
from shared.harness.run_record import RunRecord

BEIJING = {"name": "get_weather", "args": {"city": "北京"}, "result": "北京：晴"}
SHANGHAI = {"name": "get_weather", "args": {"city": "上海"}, "result": "上海：小雨"}
TENCENT = {"name": "get_stock_price", "args": {"symbol": "腾讯"}, "result": "腾讯（0700.HK）当前股价：385.6 HKD"}
VALUE = {"name": "calculate", "args": {"expression": "385.6 * 100"}, "result": "38560.0"}


# ---------------------------------------------------------------- argument modes

def test_exact_ignores_key_order_but_not_whitespace():
    assert args_equal({"a": 1, "b": "x"}, {"b": "x", "a": 1}, mode=EXACT)
    assert not args_equal({"city": " 北京"}, {"city": "北京"}, mode=EXACT)


def test_exact_is_python_equality_after_json_as_in_agentevals():
    # agentevals 的 exact 是 json.loads 之后的 ==：1 == 1.0 在 Python 里成立
    assert args_equal({"n": 1}, {"n": 1.0}, mode=EXACT)
    assert not args_equal({"n": 1}, {"n": "1"}, mode=EXACT)


def test_by_value_numbers_compare_by_value():
    assert args_equal({"shares": 1}, {"shares": 1.0}, mode=BY_VALUE)
    assert args_equal({"x": 385.6 * 100 / 100}, {"x": 385.6}, mode=BY_VALUE)   # 只差最后一位
    assert not args_equal({"shares": 100}, {"shares": 300}, mode=BY_VALUE)
    assert not args_equal({"shares": 1}, {"shares": "1"}, mode=BY_VALUE)


def test_by_value_strings_compare_stripped_and_key_order_is_free():
    assert args_equal({"city": "  北京\n", "unit": "c"}, {"unit": "c", "city": "北京"}, mode=BY_VALUE)
    assert args_equal({"q": "New   York"}, {"q": "New York"}, mode=BY_VALUE)
    assert not args_equal({"city": "北京"}, {"city": "上海"}, mode=BY_VALUE)


def test_by_value_needs_the_same_keys():
    assert not args_equal({"city": "北京", "unit": "c"}, {"city": "北京"}, mode=BY_VALUE)


def test_by_value_recurses_into_lists_and_dicts():
    assert args_equal({"items": [{"n": 1, "s": " a"}]}, {"items": [{"s": "a", "n": 1.0}]}, mode=BY_VALUE)
    assert not args_equal({"items": [1, 2]}, {"items": [2, 1]}, mode=BY_VALUE)


def test_ignore_compares_names_only():
    assert args_equal({"city": "北京"}, {"city": "上海"}, mode=IGNORE)
    assert calls_equal(Call("get_weather", {"city": "北京"}), Call("get_weather", {}), arg_mode=IGNORE)
    assert not calls_equal(Call("get_weather", {}), Call("get_stock_price", {}), arg_mode=IGNORE)


def test_unknown_argument_mode_is_an_error():
    with pytest.raises(ValueError, match="by_value"):
        args_equal({}, {}, mode="fuzzy")


# ---------------------------------------------------------------- calculate expressions

@pytest.mark.parametrize("a, b", [
    ("385.6 * 100", "100 * 385.6"),                 # 交换律
    ("385.6*100", "385.6 * 100"),                   # 空白
    ("2 * (3 * 4)", "(4 * 2) * 3"),                 # 结合律
    ("0.1 + 0.2 + 0.3", "0.3 + (0.2 + 0.1)"),
    ("100 * 385.6", "38560"),                       # 同一个数
    ("385.6 × 100", "100*385.6"),                   # 模型写的乘号：Python 解析不了，按值比
    ("1/0 + 2", "2 + 1/0"),                         # 算不出值：只能靠 AST 形状
])
def test_calculate_expressions_equal(a, b):
    assert expressions_equal(a, b)
    assert args_equal({"expression": a}, {"expression": b}, mode=BY_VALUE, tool="calculate")


@pytest.mark.parametrize("a, b", [
    ("385.6 * 100", "385.6 * 300"),
    ("5 - 3", "3 - 5"),                             # 减法不可交换
    ("8 / 2", "2 / 8"),
    ("1/0", "2/0"),                                 # 都算不出值，形状也不同
])
def test_calculate_expressions_differ(a, b):
    assert not expressions_equal(a, b)


def test_the_expression_rule_is_only_for_calculate():
    assert not args_equal({"expression": "1 + 2"}, {"expression": "2 + 1"}, mode=BY_VALUE, tool="get_weather")
    assert not args_equal({"expression": "1 + 2"}, {"expression": "2 + 1"}, mode=EXACT, tool="calculate")


# ---------------------------------------------------------------- trajectories

def test_trace_of_reads_a_record_and_its_dict_alike():
    record = RunRecord(impl="pure_loop", prompt="q", temperature=0.0, rounds=[[BEIJING, SHANGHAI], [VALUE]],
                       answer="好", stopped_at=None)
    assert trace_of(record) == trace_of(record.to_dict())
    trace = trace_of(record)
    assert [len(r) for r in trace.rounds] == [2, 1] and trace.parallel
    assert trace.calls[2] == Call("calculate", {"expression": "385.6 * 100"}, "38560.0")


def test_a_flat_list_is_one_call_per_round():
    assert as_rounds([BEIJING, SHANGHAI]) == as_rounds([[BEIJING], [SHANGHAI]])
    assert as_rounds([]) == ()


def test_a_call_needs_a_name():
    with pytest.raises(ValueError, match="name"):
        as_rounds([{"args": {}}])


def test_strict_needs_the_same_rounds():
    parallel, serial = [[BEIJING, SHANGHAI]], [[BEIJING], [SHANGHAI]]
    assert match_calls(parallel, [[BEIJING, SHANGHAI]], mode=STRICT)
    assert not match_calls(serial, parallel, mode=STRICT)
    assert not match_calls([[BEIJING, SHANGHAI], [VALUE]], parallel, mode=STRICT)


def test_strict_ignores_the_order_inside_one_round_as_agentevals_does():
    assert match_calls([[SHANGHAI, BEIJING]], [[BEIJING, SHANGHAI]], mode=STRICT)


def test_unordered_is_the_same_multiset():
    assert match_calls([[SHANGHAI], [BEIJING]], [[BEIJING, SHANGHAI]], mode=UNORDERED)
    assert not match_calls([[BEIJING], [BEIJING]], [[BEIJING, SHANGHAI]], mode=UNORDERED)
    assert not match_calls([[BEIJING, SHANGHAI, VALUE]], [[BEIJING, SHANGHAI]], mode=UNORDERED)


def test_subset_and_superset():
    reference = [[BEIJING, SHANGHAI]]
    assert match_calls([[SHANGHAI]], reference, mode=SUBSET)
    assert not match_calls([[SHANGHAI]], reference, mode=SUPERSET)
    assert match_calls([[TENCENT], [SHANGHAI, BEIJING]], reference, mode=SUPERSET)
    assert not match_calls([[TENCENT], [SHANGHAI, BEIJING]], reference, mode=SUBSET)
    # 重复的调用不能两次配给同一个参考调用
    assert not match_calls([[BEIJING, BEIJING]], reference, mode=SUBSET)


def test_matching_uses_the_argument_mode():
    other_expression = {"name": "calculate", "args": {"expression": "100*385.6"}}
    assert match_calls([[other_expression]], [[VALUE]], mode=STRICT, arg_mode=BY_VALUE)
    assert not match_calls([[other_expression]], [[VALUE]], mode=STRICT, arg_mode=EXACT)
    assert not match_calls([[TENCENT]], [[VALUE]], mode=STRICT, arg_mode=IGNORE)


def test_unknown_match_mode_is_an_error():
    with pytest.raises(ValueError, match="superset"):
        match_calls([], [], mode="sorted")


# ---------------------------------------------------------------- best pairing

def test_best_pairing_where_first_fit_fails():
    # 参考只要求 city（Y），或 city+unit（X）。实际的第一个调用两者都满足，第二个只满足 Y：
    # first-fit 把 X 的位置让给了别人就配不齐；最大匹配能配齐。
    pinned = {"name": "get_weather", "args": {"city": "北京"}}
    full = {"name": "get_weather", "args": {"city": "北京", "unit": "c"}}
    actual, reference = [[full, pinned]], [[pinned, full]]
    assert match_calls(actual, reference, mode=SUPERSET, arg_mode=ARGS_SUPERSET)
    assert match_calls(actual, reference, mode=STRICT, arg_mode=ARGS_SUPERSET)
    pairing = pair_calls([Call(**full), Call(**pinned)], [Call(**pinned), Call(**full)], arg_mode=ARGS_SUPERSET)
    assert pairing.pairs == {0: 1, 1: 0} and pairing.complete


def test_max_pairing_follows_augmenting_paths():
    # 0 配得上 0、1；1 只配得上 0；2 只配得上 1 和 2
    fits = {(0, 0), (0, 1), (1, 0), (2, 1), (2, 2)}
    pairs = max_pairing(3, 3, lambda i, j: (i, j) in fits)
    assert len(pairs) == 3 and len(set(pairs.values())) == 3
    assert all((i, j) in fits for i, j in pairs.items())


def test_pairing_keeps_positions_when_it_can():
    calls = [Call("get_weather", {"city": "北京"})] * 3
    assert pair_calls(calls, calls).pairs == {0: 0, 1: 1, 2: 2}
