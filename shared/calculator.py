"""安全计算器：只认数字和算术的 AST 求值器（第二篇文章"方向 2：引入工具执行沙箱"）。

The 50-line agent of the second article calls ``eval(expression)``: whatever the model
writes, Python runs. This evaluator parses the expression with :mod:`ast` and walks the
tree itself, accepting only what arithmetic needs:

- numbers (int, float), ``+ - * / // % **``, unary ``+``/``-``, parentheses;
- nothing else: no names, calls, attributes, subscripts, strings, comprehensions...

It also bounds the work an expression can ask for, because "only arithmetic" is not
"safe": ``9**9**9`` is pure arithmetic and would run for hours. Limits: input length,
exponent size, and the size of every intermediate result.

Left out on purpose: functions (sqrt, sin), variables, big-number mode, Decimal.
"""
from __future__ import annotations

import ast
import math
import operator

MAX_EXPRESSION_CHARS = 200
MAX_EXPONENT = 1000          # |b| in a ** b
MAX_RESULT_DIGITS = 100      # an int result may have at most this many digits
MAX_ABS_FLOAT = 1e100        # a float result must stay within ±this

# 错误文案集中在这里（module constants），工具层原样抛给模型。
ERR_TOO_LONG = f"表达式过长（最多 {MAX_EXPRESSION_CHARS} 个字符）"
ERR_SYNTAX = "表达式语法错误: {expression!r}"
ERR_NOT_ALLOWED = "不支持的表达式成分: {what}（只支持数字、+ - * / // % ** 和括号）"
ERR_DIV_ZERO = "除数不能为零"
ERR_EXPONENT = f"指数过大（|指数| 最多 {MAX_EXPONENT}）"
ERR_TOO_BIG = "结果过大，拒绝计算"


class CalculationError(ValueError):
    """The expression is not allowed, not valid, or asks for too much."""


_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def evaluate(expression: str) -> int | float:
    """Evaluate an arithmetic expression; raise :class:`CalculationError` otherwise."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculationError(ERR_TOO_LONG)
    # 模型常写 "385.6 × 100"、"1,000"：先把这些常见写法规整成 Python 语法
    text = expression.replace("×", "*").replace("÷", "/").replace("，", ",").strip()
    text = _strip_thousands_separators(text)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculationError(ERR_SYNTAX.format(expression=expression)) from None
    return _check_size(_eval(tree.body))


def format_number(value: int | float) -> str:
    """The calculator's output text: Python's own repr, e.g. ``38560.0`` as in the article."""
    return repr(value)


def _strip_thousands_separators(text: str) -> str:
    # "1,000" -> "1000"，但只在逗号两侧都是数字且逗号后恰好 3 位时
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if (ch == "," and 0 < i and text[i - 1].isdigit() and text[i + 1:i + 4].isdigit()
                and not text[i + 4:i + 5].isdigit()):
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _eval(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _check_size(_UNARY[type(node.op)](_eval(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        try:
            return _check_size(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise CalculationError(ERR_DIV_ZERO) from None
        except OverflowError:
            raise CalculationError(ERR_TOO_BIG) from None
    raise CalculationError(ERR_NOT_ALLOWED.format(what=_describe(node)))


def _check_power(base: int | float, exponent: int | float) -> None:
    # 先看指数，再估算结果位数：在真正算之前拒绝 10**10**10 这类"合法但算不完"的式子
    if abs(exponent) > MAX_EXPONENT:
        raise CalculationError(ERR_EXPONENT)
    if base == 0 and exponent < 0:
        raise CalculationError(ERR_DIV_ZERO)
    if abs(base) > 1 and exponent > 0:
        if exponent * math.log10(abs(base)) > MAX_RESULT_DIGITS:
            raise CalculationError(ERR_TOO_BIG)


def _check_size(value: int | float) -> int | float:
    if isinstance(value, complex):      # (-8) ** 0.5
        raise CalculationError(ERR_NOT_ALLOWED.format(what="复数结果"))
    if isinstance(value, int) and value.bit_length() > MAX_RESULT_DIGITS * 3.33 + 4:
        raise CalculationError(ERR_TOO_BIG)
    if isinstance(value, float) and (math.isnan(value) or abs(value) > MAX_ABS_FLOAT):
        raise CalculationError(ERR_TOO_BIG)
    return value


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        return f"常量 {node.value!r}"
    if isinstance(node, ast.Name):
        return f"名字 {node.id!r}"
    return type(node).__name__
