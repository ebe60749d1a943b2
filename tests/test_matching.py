"""compare.matching：调用的规范键（exact / by_value / ignore）与四种轨迹匹配（多重集比较）。"""
from __future__ import annotations

import pytest

from compare.matching import (BY_VALUE, EXACT, IGNORE, STRICT, SUBSET, SUPERSET, UNORDERED, call_key,
                              expression_key, match_calls)

BEIJING = {"name": "get_weather", "args": {"city": "北京"}, "result": "北京：晴"}
SHANGHAI = {"name": "get_weather", "args": {"city": "上海"}, "result": "上海：小雨"}
TENCENT = {"name": "get_stock_price", "args": {"symbol": "腾讯"}, "result": "腾讯（0700.HK）当前股价：385.6 HKD"}
VALUE = {"name": "calculate", "args": {"expression": "385.6 * 100"}, "result": "38560.0"}


def same(a: dict, b: dict, mode: str = BY_VALUE) -> bool:
    return call_key({"name": "t", "args": a}, mode) == call_key({"name": "t", "args": b}, mode)


def test_exact_is_json_equality_as_in_agentevals():
    assert same({"a": 1, "b": "x"}, {"b": "x", "a": 1}, EXACT)            # 键的顺序不算
    assert same({"n": 1}, {"n": 1.0}, EXACT)                                # Python 的 1 == 1.0
    assert not same({"city": " 北京"}, {"city": "北京"}, EXACT)
    assert not same({"n": 1}, {"n": "1"}, EXACT)


def test_by_value_normalises_numbers_and_whitespace():
    assert same({"x": 385.6 * 100 / 100}, {"x": 385.6})                    # 只差二进制最后一位
    assert same({"city": "  北京\n", "unit": "c"}, {"unit": "c", "city": "北京"})
    assert same({"items": [{"n": 1, "s": " a"}]}, {"items": [{"s": "a", "n": 1.0}]})
    assert not same({"shares": 100}, {"shares": 300})
    assert not same({"shares": 1}, {"shares": "1"})
    assert not same({"items": [1, 2]}, {"items": [2, 1]})
    assert not same({"city": "北京", "unit": "c"}, {"city": "北京"})


def test_ignore_keeps_only_the_name():
    assert call_key(BEIJING, IGNORE) == call_key(SHANGHAI, IGNORE) != call_key(TENCENT, IGNORE)


def test_unknown_mode_is_an_error():
    with pytest.raises(ValueError, match="by_value"):
        call_key(BEIJING, "fuzzy")
    with pytest.raises(ValueError, match="superset"):
        match_calls([], [], mode="sorted")


@pytest.mark.parametrize("a, b", [
    ("385.6 * 100", "100 * 385.6"),                 # 交换律
    ("385.6*100", "385.6 * 100"),
    ("2 * (3 * 4)", "(4 * 2) * 3"),                 # 结合律
    ("100 * 385.6", "38560"),                       # 同一个数
    ("385.6 × 100", "100*385.6"),                   # 模型写的乘号：计算器认得
    ("1/0 + 2", "2 + 1/0"),                         # 算不出值：按语法树（+ 的操作数排序）
])
def test_calculate_expressions_by_value(a, b):
    assert expression_key(a) == expression_key(b)
    assert call_key({"name": "calculate", "args": {"expression": a}}) == \
        call_key({"name": "calculate", "args": {"expression": b}})


@pytest.mark.parametrize("a, b", [("385.6 * 100", "385.6 * 300"), ("5 - 3", "3 - 5"), ("8 / 2", "2 / 8"),
                                  ("1/0", "2/0")])
def test_calculate_expressions_that_differ(a, b):
    assert expression_key(a) != expression_key(b)


def test_the_expression_rule_is_only_for_calculate_by_value():
    assert not same({"expression": "1 + 2"}, {"expression": "2 + 1"})
    calc = lambda e: {"name": "calculate", "args": {"expression": e}}   # noqa: E731
    assert call_key(calc("1 + 2"), EXACT) != call_key(calc("2 + 1"), EXACT)


def test_strict_needs_the_same_rounds_but_not_the_order_inside_one():
    parallel, serial = [[BEIJING, SHANGHAI]], [[BEIJING], [SHANGHAI]]
    assert match_calls([[SHANGHAI, BEIJING]], parallel, mode=STRICT)
    assert not match_calls(serial, parallel, mode=STRICT)
    assert not match_calls([[BEIJING, SHANGHAI], [VALUE]], parallel, mode=STRICT)


def test_unordered_subset_superset_are_multiset_comparisons():
    reference = [[BEIJING, SHANGHAI]]
    assert match_calls([[SHANGHAI], [BEIJING]], reference, mode=UNORDERED)
    assert not match_calls([[BEIJING], [BEIJING]], reference, mode=UNORDERED)
    assert match_calls([[SHANGHAI]], reference, mode=SUBSET)
    assert not match_calls([[SHANGHAI]], reference, mode=SUPERSET)
    assert match_calls([[TENCENT], [SHANGHAI, BEIJING]], reference, mode=SUPERSET)
    assert not match_calls([[TENCENT], [SHANGHAI, BEIJING]], reference, mode=SUBSET)
    assert not match_calls([[BEIJING, BEIJING]], reference, mode=SUBSET)     # 重复的调用按次数算


def test_matching_uses_the_argument_mode():
    commuted = {"name": "calculate", "args": {"expression": "100*385.6"}}
    assert match_calls([[commuted]], [[VALUE]], arg_mode=BY_VALUE)
    assert not match_calls([[commuted]], [[VALUE]], arg_mode=EXACT)
    assert not match_calls([[TENCENT]], [[VALUE]], arg_mode=IGNORE)
