"""调用匹配：每个工具调用化成一个可比较的"规范键"，轨迹匹配就是比较键的多重集。

A call's canonical key is ``(name, args)`` with the arguments frozen into a hashable value,
in one of three argument modes:

``exact``
    the arguments as JSON gives them back (``json.loads`` then ``==``, as agentevals does):
    key order does not matter and Python's ``1 == 1.0`` holds, nothing else is forgiven;
``by_value``
    what a reader means by "the same arguments": strings stripped with inner whitespace
    runs collapsed, numbers rounded to 12 significant digits (``385.6 * 100 / 100`` is
    ``385.6``), and ``calculate``'s ``expression`` by its value
    (:func:`shared.calculator.evaluate`: ``"385.6 * 100"`` ≡ ``"100*385.6"`` ≡ ``"38560"``)
    or, when it has none (``1/0``), by its syntax tree with ``+``/``*`` operands sorted;
``ignore``
    only the tool's name.

Because a key is a plain value, "the same call" is an equivalence, and the four trajectory
modes of agentevals (``trajectory_match_mode``) are multiset comparisons:

``strict``     the same number of rounds, each round the same multiset of calls;
``unordered``  the same multiset of calls, rounds ignored;
``subset``     no call that the reference does not have (counted with multiplicity);
``superset``   every reference call is there (counted with multiplicity).

tests/test_agentevals_agreement.py checks these against agentevals for ``exact`` and
``ignore``. Like agentevals' strict mode, the order of the parallel calls inside one round
does not matter here; the verdict (:mod:`compare.verdicts`) is stricter and notices it.

Left out: agentevals' partial argument modes (``subset``/``superset`` of argument keys, which
are not an equivalence and would need a best pairing), per-tool overrides other than
``calculate``, LLM-as-judge.
"""
from __future__ import annotations

import ast
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from shared.calculator import CalculationError, evaluate

EXACT, BY_VALUE, IGNORE = "exact", "by_value", "ignore"
ARG_MODES = (EXACT, BY_VALUE, IGNORE)
STRICT, UNORDERED, SUBSET, SUPERSET = "strict", "unordered", "subset", "superset"
MATCH_MODES = (STRICT, UNORDERED, SUBSET, SUPERSET)

SIGNIFICANT_DIGITS = 12      # 385.6 * 100 / 100 与 385.6 只差二进制的最后一位：读者眼里是同一个数

ERR_MODE = "未知的比对方式 {mode!r}；可用: {known}"

Rounds = list[list[dict]]
Key = tuple


def squash(text: str) -> str:
    """A text stripped and with inner whitespace runs collapsed: by-value string equality."""
    return " ".join(text.split())


def call_key(call: Mapping, arg_mode: str = BY_VALUE) -> Key:
    """The canonical key of one call ``{"name", "args"}``: equal keys mean the same call."""
    name, args = call["name"], call.get("args", {})
    if arg_mode == IGNORE:
        return (name,)
    if arg_mode == EXACT:
        return (name, _freeze(json.loads(json.dumps(args, ensure_ascii=False))))
    if arg_mode == BY_VALUE:
        if name == "calculate" and isinstance(args, Mapping) and isinstance(args.get("expression"), str):
            args = {**args, "expression": expression_key(args["expression"])}
        return (name, _freeze(args, by_value=True))
    raise ValueError(ERR_MODE.format(mode=arg_mode, known=", ".join(ARG_MODES)))


def round_keys(rounds: Rounds, arg_mode: str = BY_VALUE) -> list[list[Key]]:
    return [[call_key(call, arg_mode) for call in round_] for round_ in rounds]


def match_calls(actual: Rounds, reference: Rounds, *, mode: str = STRICT, arg_mode: str = BY_VALUE) -> bool:
    """Does ``actual`` match ``reference`` in ``mode`` (agentevals' trajectory modes)?"""
    act, ref = round_keys(actual, arg_mode), round_keys(reference, arg_mode)
    if mode == STRICT:
        return len(act) == len(ref) and all(Counter(a) == Counter(r) for a, r in zip(act, ref))
    have, want = Counter(k for r in act for k in r), Counter(k for r in ref for k in r)
    if mode == UNORDERED:
        return have == want
    if mode == SUBSET:
        return not have - want
    if mode == SUPERSET:
        return not want - have
    raise ValueError(ERR_MODE.format(mode=mode, known=", ".join(MATCH_MODES)))


def expression_key(expression: str) -> Any:
    """A ``calculate`` expression by value; by its commutative-normal syntax tree if it has none."""
    try:
        return ("value", _number(evaluate(expression)))
    except CalculationError:
        pass
    try:
        return ("shape", _shape(ast.parse(expression.strip(), mode="eval").body))
    except (SyntaxError, ValueError, RecursionError):
        return ("text", squash(expression))


def _freeze(value: Any, *, by_value: bool = False) -> Any:
    # dict/list 变成可哈希的 tuple；加上类型标签，{"a": 1} 与 [("a", 1)] 才不会相等
    if isinstance(value, Mapping):
        return ("dict", tuple(sorted((str(k), _freeze(v, by_value=by_value)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_freeze(v, by_value=by_value) for v in value))
    if by_value and isinstance(value, str):
        return squash(value)
    if by_value and isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(value)
    return value


def _number(value: float) -> float:
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")


def _shape(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return _number(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        # 交换律 + 结合律：a*(b*c)、(c*a)*b 拍平成同一组操作数，再排序
        return (type(node.op).__name__, tuple(sorted(map(repr, map(_shape, _chain(node, type(node.op)))))))
    if isinstance(node, ast.BinOp):
        return (type(node.op).__name__, _shape(node.left), _shape(node.right))
    if isinstance(node, ast.UnaryOp):
        return (type(node.op).__name__, _shape(node.operand))
    raise ValueError(type(node).__name__)


def _chain(node: ast.AST, op: type) -> list[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, op):
        return _chain(node.left, op) + _chain(node.right, op)
    return [node]
