"""调用匹配：一次运行的规整 trace、参数怎么算"相等"、两条调用轨迹怎么算"匹配"。

What this module does:

- :func:`trace_of` turns a run record (a :class:`~shared.harness.run_record.RunRecord` or its
  ``to_dict()`` form) into a :class:`Trace`: its rounds (calls grouped per model turn,
  each a :class:`Call` with ``name``, ``args``, ``result``), answer and status.
- :func:`args_equal` compares two calls' arguments in one of these modes:

  ``exact``
      ``==`` after a JSON round-trip, as agentevals does (``json.loads`` then ``==``).
      Note: Python's ``==`` already ignores key order and says ``1 == 1.0`` and
      ``True == 1``; "exact" here means what it means in agentevals, nothing stricter.
  ``by_value``
      what a reader means by "the same arguments": key order does not matter, numbers
      compare by value (``1`` equals ``1.0``; floats within a relative 1e-9), strings
      compare stripped with inner whitespace runs collapsed, and ``calculate``'s
      ``expression`` values are equal when they are the same expression up to
      commutativity/associativity of ``+`` and ``*`` (the AST is flattened and its
      operands sorted) or when they evaluate to the same number with
      :func:`shared.calculator.evaluate`: ``"385.6 * 100"`` ≡ ``"100*385.6"``.
  ``ignore``
      arguments are not compared, only tool names.
  ``subset`` / ``superset``
      agentevals' two partial modes, compared by value: every key of the actual
      arguments is in the reference's (subset), or every key of the reference's is in the
      actual arguments (superset). Partial relations are not transitive: they are where a
      first-fit pairing fails, see below.

- :func:`match_calls` decides whether an actual call trajectory matches a reference one,
  in the four modes of ``agentevals.trajectory.match`` (``trajectory_match_mode``):

  ``strict``
      the same number of rounds; round by round the same number of calls, and those calls
      pair up one to one.
  ``unordered``
      the same multiset of calls; rounds and order ignored.
  ``subset``
      every actual call pairs with a distinct reference call (nothing extra was called).
  ``superset``
      every reference call pairs with a distinct actual call (nothing expected is missing).

  A trajectory is a list of rounds (``[[call, ...], ...]``), a flat list of calls
  (``[call, ...]``: each call its own round, i.e. the serial strategy, which only matters
  to ``strict``), a :class:`Trace`, or a run record.

Where this module differs from agentevals, on purpose (tests/test_agentevals_agreement.py
checks that the four modes agree with agentevals, argument modes ``exact`` and ``ignore``,
everywhere else):

1. Pairing. agentevals pairs calls first-fit: for each reference call, the first unused
   actual call that matches. That is only right when "matches" is an equivalence. With a
   partial argument mode, or ``by_value``'s float tolerance, one actual call can match two
   reference calls while another matches only one of them, and first-fit then reports a
   miss that is not there. Here the pairing is a maximum bipartite matching (augmenting
   paths, Kuhn's algorithm): :func:`pair_calls`.
2. Strict and the order within a round. Strict means "same rounds, same
   order"; agentevals' strict compares the message list turn by turn, but pairs the calls
   *inside one assistant message* in any order. We follow agentevals: ``strict`` ignores
   the order of the parallel calls in one round. The verdict
   (:mod:`compare.verdicts`) is stricter: ``equivalent`` also needs that order.
3. Messages other than tool calls. agentevals' strict also requires the same sequence of
   message roles, so a run without a final answer never strict-matches one with an answer.
   Here call matching looks at calls only; the run's status is the verdict's business.

Left out: agentevals' per-tool ``tool_args_match_overrides`` (the ``calculate`` rule of
``by_value`` is the one override this project needs), LLM-as-judge matching, I/O.
"""
from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shared.calculator import CalculationError, evaluate

# ---- 参数比较方式（tool_args_match_mode） ----
EXACT, BY_VALUE, IGNORE, ARGS_SUBSET, ARGS_SUPERSET = "exact", "by_value", "ignore", "subset", "superset"
ARG_MODES = (EXACT, BY_VALUE, IGNORE, ARGS_SUBSET, ARGS_SUPERSET)

# ---- 调用轨迹匹配方式（trajectory_match_mode） ----
STRICT, UNORDERED, SUBSET, SUPERSET = "strict", "unordered", "subset", "superset"
MATCH_MODES = (STRICT, UNORDERED, SUBSET, SUPERSET)

# calculate 的 expression 按"同一个算式"比较：这是 by_value 里唯一按工具区分的规则
CALCULATE, EXPRESSION = "calculate", "expression"

# 浮点容差：385.6 * 100 / 100 与 385.6 在二进制里差最后一位，读者眼里是同一个数
REL_TOL, ABS_TOL = 1e-9, 1e-12

ERR_ARG_MODE = "未知的参数比较方式 {mode!r}；可用: {known}"
ERR_MATCH_MODE = "未知的调用匹配方式 {mode!r}；可用: {known}"
ERR_TRAJECTORY = "认不出的调用轨迹：应是轮次列表 [[call, ...], ...] 或调用列表 [call, ...]，收到 {what}"
ERR_CALL = "认不出的工具调用：应有 name 和 args，收到 {what!r}"


@dataclass(frozen=True)
class Call:
    """One tool call of a trace: what the model asked for and what the tool returned."""
    name: str
    args: Any
    result: str | None = None       # None：没执行（步数先用完），或期望调用里不关心结果

    def to_dict(self) -> dict:
        return {"name": self.name, "args": self.args, "result": self.result}

    def label(self) -> str:
        """``name({...})`` as the articles' trace prints a call."""
        return f"{self.name}({json.dumps(self.args, ensure_ascii=False)})"


Round = tuple[Call, ...]


@dataclass(frozen=True)
class Trace:
    """A run reduced to what the comparison looks at (no usage, timing or exchanges)."""
    impl: str
    run: int
    rounds: tuple[Round, ...]
    status: str
    answer: str | None = None
    error: str | None = None
    stopped_at: str | None = None

    @property
    def calls(self) -> tuple[Call, ...]:
        return tuple(call for round_ in self.rounds for call in round_)

    @property
    def parallel(self) -> bool:
        """Did the model ever ask for two or more tools in one turn?"""
        return any(len(round_) >= 2 for round_ in self.rounds)

    def to_dict(self) -> dict:
        return {"impl": self.impl, "run": self.run, "status": self.status,
                "rounds": [[call.to_dict() for call in round_] for round_ in self.rounds],
                "answer": self.answer, "error": self.error, "stopped_at": self.stopped_at}


@dataclass(frozen=True)
class Pairing:
    """The best one-to-one pairing of actual calls with reference calls (by index)."""
    pairs: dict[int, int]                 # actual index -> reference index
    unpaired_actual: tuple[int, ...]
    unpaired_reference: tuple[int, ...]

    @property
    def complete(self) -> bool:
        return not self.unpaired_actual and not self.unpaired_reference


# ---------------------------------------------------------------- traces

def record_fields(record: Any) -> Mapping[str, Any]:
    """A run record's fields, whether it is a ``RunRecord`` or its ``to_dict()`` form.

    ``vars()`` rather than ``to_dict()``: ``asdict`` would deep-copy the run's exchanges
    (every request and response body) only to throw them away.
    """
    return record if isinstance(record, Mapping) else vars(record)


def trace_of(record: Any) -> Trace:
    """The normalised trace of a run record (a ``RunRecord`` or its ``to_dict()``)."""
    data = record_fields(record)
    return Trace(impl=data.get("impl", ""), run=int(data.get("run", 0)),
                 rounds=as_rounds(data.get("rounds") or []),
                 status=data.get("status", ""), answer=data.get("answer"),
                 error=data.get("error"), stopped_at=data.get("stopped_at"))


def as_rounds(trajectory: Any) -> tuple[Round, ...]:
    """Rounds of calls from a trace, a record, a list of rounds, or a flat list of calls."""
    if isinstance(trajectory, Trace):
        return trajectory.rounds
    if isinstance(trajectory, Mapping) and "rounds" in trajectory:
        return as_rounds(trajectory["rounds"])
    if hasattr(trajectory, "rounds"):                 # RunRecord 之类
        return as_rounds(trajectory.rounds)
    if not isinstance(trajectory, (list, tuple)):
        raise ValueError(ERR_TRAJECTORY.format(what=type(trajectory).__name__))
    if all(isinstance(item, (list, tuple)) for item in trajectory):
        return tuple(tuple(as_call(call) for call in round_) for round_ in trajectory)
    # 扁平列表：没说哪些调用在同一轮，就当每个调用独占一轮（串行策略）
    return tuple((as_call(call),) for call in trajectory)


def as_call(call: Any) -> Call:
    """A :class:`Call` from a call dict ``{"name", "args", "result"?}``."""
    if isinstance(call, Call):
        return call
    if not isinstance(call, Mapping) or "name" not in call:
        raise ValueError(ERR_CALL.format(what=call))
    return Call(name=call["name"], args=call.get("args", {}), result=call.get("result"))


def flat_calls(trajectory: Any) -> tuple[Call, ...]:
    return tuple(call for round_ in as_rounds(trajectory) for call in round_)


# ---------------------------------------------------------------- arguments

def args_equal(actual: Any, reference: Any, *, mode: str = BY_VALUE, tool: str = "") -> bool:
    """Are two calls' arguments equal in ``mode``? ``tool`` selects per-tool rules."""
    if mode == IGNORE:
        return True
    if mode == EXACT:
        return _json_round_trip(actual) == _json_round_trip(reference)
    if mode == BY_VALUE:
        return _values_equal(actual, reference, tool=tool)
    if mode in (ARGS_SUBSET, ARGS_SUPERSET):
        smaller, larger = (actual, reference) if mode == ARGS_SUBSET else (reference, actual)
        if not isinstance(smaller, Mapping) or not isinstance(larger, Mapping):
            return _values_equal(actual, reference, tool=tool)
        return all(key in larger and _value_equal_at(key, value, larger[key], tool)
                   for key, value in smaller.items())
    raise ValueError(ERR_ARG_MODE.format(mode=mode, known=", ".join(ARG_MODES)))


def calls_equal(actual: Call, reference: Call, *, arg_mode: str = BY_VALUE) -> bool:
    """Same tool, and arguments equal in ``arg_mode``. Results are not looked at."""
    return actual.name == reference.name and args_equal(
        actual.args, reference.args, mode=arg_mode, tool=actual.name)


def expressions_equal(a: str, b: str) -> bool:
    """Two ``calculate`` expressions: the same up to commutativity, or the same number."""
    if squash_whitespace(a) == squash_whitespace(b):
        return True
    shape_a, shape_b = _expression_shape(a), _expression_shape(b)
    if shape_a is not None and shape_a == shape_b:
        return True
    value_a, value_b = _expression_value(a), _expression_value(b)
    return value_a is not None and value_b is not None and _numbers_equal(value_a, value_b)


def _json_round_trip(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False))


def _values_equal(a: Any, b: Any, *, tool: str = "") -> bool:
    # by_value 的递归：dict 比键集合和每个值；list 按位置比；数比值；字符串去空白比
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_value_equal_at(k, a[k], b[k], tool) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_values_equal(x, y) for x, y in zip(a, b))
    if _is_number(a) and _is_number(b):
        return _numbers_equal(a, b)
    if isinstance(a, str) and isinstance(b, str):
        return squash_whitespace(a) == squash_whitespace(b)
    return a == b


def _value_equal_at(key: str, a: Any, b: Any, tool: str) -> bool:
    if tool == CALCULATE and key == EXPRESSION and isinstance(a, str) and isinstance(b, str):
        return expressions_equal(a, b)
    return _values_equal(a, b)


def _is_number(value: Any) -> bool:
    # bool 是 int 的子类，但 True 不是"数值 1"：交给 == 去比（与 exact 一致）
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers_equal(a: int | float, b: int | float) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def squash_whitespace(text: str) -> str:
    """Strip a text and collapse its inner runs of whitespace: by-value string equality."""
    return " ".join(text.split())


# ---------------------------------------------------------------- calculate expressions

def _expression_shape(expression: str) -> tuple | None:
    """A canonical form of the expression's AST: ``+``/``*`` chains flattened and sorted.

    ``None`` when Python cannot parse it (e.g. ``385.6 × 100``: the value comparison of
    :func:`expressions_equal` still covers it, through the calculator's own rewriting).
    """
    try:
        return _shape(ast.parse(expression.strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _shape(node: ast.AST) -> tuple:
    if isinstance(node, ast.Constant) and _is_number(node.value):
        return ("number", float(node.value))          # 100 与 100.0 同形
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
        return _shape(node.operand)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _shape(node.operand)
        return ("number", -inner[1]) if inner[0] == "number" else ("neg", inner)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        # 交换律 + 结合律：a*(b*c)、(c*a)*b 拍平成同一组操作数，再排序
        operands = sorted((_shape(part) for part in _chain(node, type(node.op))), key=repr)
        return (type(node.op).__name__, tuple(operands))
    if isinstance(node, ast.BinOp):
        return (type(node.op).__name__, _shape(node.left), _shape(node.right))
    raise ValueError(type(node).__name__)


def _chain(node: ast.AST, op: type) -> Iterable[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, op):
        yield from _chain(node.left, op)
        yield from _chain(node.right, op)
    else:
        yield node


def _expression_value(expression: str) -> int | float | None:
    try:
        return evaluate(expression)
    except CalculationError:
        return None


# ---------------------------------------------------------------- pairing and matching

def max_pairing(n_actual: int, n_reference: int, fits: Callable[[int, int], bool]) -> dict[int, int]:
    """A maximum bipartite matching ``{actual: reference}`` (Kuhn's augmenting paths).

    First-fit is not enough: if actual call 0 fits references 0 and 1 and actual call 1
    fits only reference 0, first-fit gives reference 0 to call 0 and leaves call 1 alone;
    an augmenting path moves call 0 over to reference 1. Candidates are tried nearest
    position first, so when several pairings are best the one kept lines calls up in order.
    """
    candidates = [sorted((j for j in range(n_reference) if fits(i, j)), key=lambda j: (abs(j - i), j))
                  for i in range(n_actual)]
    owner: dict[int, int] = {}            # reference -> actual

    def augment(i: int, visited: set[int]) -> bool:
        for j in candidates[i]:
            if j in visited:
                continue
            visited.add(j)
            if j not in owner or augment(owner[j], visited):
                owner[j] = i
                return True
        return False

    for i in range(n_actual):
        augment(i, set())
    return {i: j for j, i in owner.items()}


def pair_calls(actual: Sequence[Call], reference: Sequence[Call], *,
               arg_mode: str = BY_VALUE) -> Pairing:
    """The best pairing of two call lists (same tool, arguments equal in ``arg_mode``)."""
    pairs = max_pairing(len(actual), len(reference),
                        lambda i, j: calls_equal(actual[i], reference[j], arg_mode=arg_mode))
    paired_reference = set(pairs.values())
    return Pairing(pairs=dict(sorted(pairs.items())),
                   unpaired_actual=tuple(i for i in range(len(actual)) if i not in pairs),
                   unpaired_reference=tuple(j for j in range(len(reference)) if j not in paired_reference))


def match_calls(actual: Any, reference: Any, *, mode: str = SUPERSET, arg_mode: str = BY_VALUE) -> bool:
    """Does the actual call trajectory match the reference in ``mode`` (agentevals' modes)?"""
    if arg_mode not in ARG_MODES:
        raise ValueError(ERR_ARG_MODE.format(mode=arg_mode, known=", ".join(ARG_MODES)))
    if mode == STRICT:
        actual_rounds, reference_rounds = as_rounds(actual), as_rounds(reference)
        # 一轮一轮地配：complete 已经蕴含两轮的调用数相同
        return len(actual_rounds) == len(reference_rounds) and all(
            pair_calls(a, r, arg_mode=arg_mode).complete for a, r in zip(actual_rounds, reference_rounds))
    if mode not in MATCH_MODES:
        raise ValueError(ERR_MATCH_MODE.format(mode=mode, known=", ".join(MATCH_MODES)))
    pairing = pair_calls(flat_calls(actual), flat_calls(reference), arg_mode=arg_mode)
    if mode == UNORDERED:
        return pairing.complete
    if mode == SUBSET:
        return not pairing.unpaired_actual
    return not pairing.unpaired_reference           # SUPERSET
