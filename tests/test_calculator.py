"""The safe calculator: right answers, and a refusal (fast) for everything that is not arithmetic."""
import json
import subprocess
import sys

import pytest

from tests.support.agents import ROOT
from shared.calculator import CalculationError, evaluate, format_number

# 一个"算不完"的式子要在这个期限内被拒绝。这不是性能断言：检查在计算之前，拒绝只要微秒；
# 期限只是把"检查没了、真的去算 9**387420489"的挂死变成一个失败。
DEADLINE_SECONDS = 10
# 在子进程里求值：大整数的 ** 是一次 C 调用、全程持有 GIL，线程里的 join(timeout) 等不回来
EVALUATE_IN_A_CHILD = """
import json, sys
from shared.calculator import CalculationError, evaluate
try:
    print(json.dumps({"value": repr(evaluate(sys.argv[1]))}))
except CalculationError as error:
    print(json.dumps({"refused": str(error)}, ensure_ascii=False))
"""


@pytest.mark.parametrize("expression, expected", [
    ("385.6 * 100", "38560.0"),          # the articles' number
    ("100 * 385.6", "38560.0"),
    ("365 * 24", "8760"),
    ("2 ** 10", "1024"),
    ("-3 + +4", "1"),
    ("7 // 2", "3"),
    ("7 % 3", "1"),
    ("(1 + 2) * 3", "9"),
    ("10 / 4", "2.5"),
    ("385.6 × 100", "38560.0"),          # what models write
    ("1,000 * 2", "2000"),
])
def test_computes(expression, expected):
    assert format_number(evaluate(expression)) == expected


@pytest.mark.parametrize("expression, message", [
    ("__import__('os').system('id')", "不支持"),
    ("open('/etc/passwd')", "不支持"),
    ("a + 1", "名字 'a'"),
    ("(1).real", "Attribute"),
    ("[1, 2][0]", "不支持"),
    ("'a' * 3", "常量 'a'"),
    ("lambda: 1", "不支持"),
    ("[x for x in (1, 2)]", "不支持"),
    ("1 if 1 else 2", "不支持"),
    ("1 +", "语法错误"),
    ("1/0", "除数不能为零"),
    ("5 % 0", "除数不能为零"),
    ("0 ** -1", "除数不能为零"),
    ("1e308 * 10", "结果过大"),
    ("(-8) ** 0.5", "复数"),
    ("1" * 300, "过长"),
])
def test_refuses(expression, message):
    with pytest.raises(CalculationError, match=message):
        evaluate(expression)


@pytest.mark.parametrize("expression, message", [
    ("9**9**9", "指数过大"),              # 合法的算术，真算要几个小时
    ("10**10**10", "指数过大"),
    ("(10**100)**100", "结果过大"),
    ("999999**999", "结果过大"),
    ("2 ** 999", "结果过大"),
])
def test_refuses_huge_powers_before_computing_them(expression, message):
    try:
        done = subprocess.run([sys.executable, "-c", EVALUATE_IN_A_CHILD, expression], cwd=ROOT,
                              capture_output=True, text=True, timeout=DEADLINE_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"evaluate({expression!r}) was still running after {DEADLINE_SECONDS}s: "
                    "the power is computed instead of being refused first")
    assert done.returncode == 0, done.stderr
    assert message in json.loads(done.stdout).get("refused", ""), done.stdout
