"""判定：同一个问题、同一个温度下，一组实现的 trace 是不是"同一个"；以及多次运行的漂移。

One run against a baseline run (:func:`compare_runs`):

``equivalent``
    the same calls (canonical keys, :mod:`compare.matching`, arguments by value) in the same
    rounds and order, the same tool results, the same status and, when both answered, the
    same answer up to whitespace;
``strategy_differs``
    everything the same except the grouping or order of the calls: serial against
    parallel, or another order inside a round;
``diverged``
    anything else: a call more or less, other arguments, a tool result, status or answer.

Tool results count exactly: a tool-error text worded differently is a mechanism difference.
Where a run stopped (``stopped_at``) and error texts do not count (each framework words them
its own way; the status is compared).

A group (:func:`group_verdict`) is the runs of one protocol: function calling and the JSON
text protocol are compared within their group only, because a JSON reply carries one call
by construction and can never follow a parallel round. The baseline is the run that meets
the suite's expectation (calls and answer), else the first run. At temperature 0 every run
of the group is compared with it; above 0 the runs are compared seed by seed (run ``r``
used seed ``r`` in every implementation, so a difference inside a seed is the mechanism,
and the drift between seeds is the sampling: :func:`drift`).

Left out: running, the request-level comparison (:mod:`compare.wire`), presentation.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from compare.matching import Key, call_key, match_calls, round_keys, squash
from shared.harness.run_record import GUESSED_ARGUMENT, RunRecord, Status
from shared.harness.text import shorten

EQUIVALENT, STRATEGY_DIFFERS, DIVERGED = "equivalent", "strategy_differs", "diverged"
VERDICTS = (EQUIVALENT, STRATEGY_DIFFERS, DIVERGED)        # 由轻到重

MSG_CALLS = "第 {round} 轮的调用不同：参考 {expected}，这次 {actual}"
MSG_NAME = "第 {round} 轮第 {call} 个调用的工具不同：参考 {expected}，这次 {actual}"
MSG_ARGS = "第 {round} 轮第 {call} 个调用 {tool} 的参数 {key} 不同：参考 {expected}，这次 {actual}"
MSG_MISSING = "参考第 {round} 轮的 {label} 这次没有调用"
MSG_EXTRA = "第 {round} 轮第 {call} 个调用 {label} 参考里没有"
MSG_RESULT = "第 {round} 轮第 {call} 个调用 {tool} 的返回不同：参考 {expected}，这次 {actual}"
MSG_STATUS = "运行状态不同：参考 {expected}，这次 {actual}"
MSG_ANSWER = "回答不同：参考 {expected}，这次 {actual}"
FAIL_CALLS = "调用与期望不符（{match} / {args}）"
FAIL_STATUS = "没有给出回答（{status}）"
FAIL_ANSWER = "回答里没有 {text!r}"
ERR_PASS_HAT_K = "pass^k 需要 0 < k <= n 且 0 <= c <= n，收到 n={n} c={c} k={k}"
SHORT = 80


@dataclass
class Difference:
    """The first difference of one run from the baseline, in words and in structure."""
    impl: str
    run: int
    field: str                   # calls | name | args.<key> | call | result | status | answer
    expected: Any
    actual: Any
    message: str
    round: int | None = None     # 1-based model turn
    call: int | None = None      # 1-based call within that turn
    kind: str = DIVERGED


@dataclass
class GroupVerdict:
    """The verdict of one protocol group of one prompt and temperature."""
    protocol: str
    impls: list[str]
    verdict: str
    baseline: list[str]                          # "impl#run" of each baseline (one per seed above 0)
    first_difference: Difference | None = None
    comparisons: dict[str, str] = field(default_factory=dict)    # "impl#run" -> its verdict, if not equivalent


@dataclass
class Drift:
    """How several runs wander; ``pass^k``: the chance that k runs drawn from them all pass."""
    runs: int
    passes: int
    pass_hat_k: dict[int, float]
    distinct_traces: int
    strategy_share: dict[str, float]             # trace short name -> share of runs
    guessed_per_run: float                       # guessed_argument flags / runs
    flagged_runs: int


def member(record: RunRecord) -> str:
    return f"{record.impl}#{record.run}"


def worst(verdicts: Sequence[str]) -> str:
    return max(verdicts, key=VERDICTS.index, default=EQUIVALENT)


# ---------------------------------------------------------------- one run against the baseline

def compare_runs(base: RunRecord, run: RunRecord) -> tuple[str, Difference | None]:
    """The verdict of ``run`` against ``base`` and the first difference that decides it."""
    base_keys, run_keys = round_keys(base.rounds), round_keys(run.rounds)
    made = partial(Difference, run.impl, run.run)     # made(field, expected, actual, message, round, call, kind)
    found = (_call_difference(base, run, made) or _result_difference(base, run, made)
             or _outcome_difference(base, run, made))
    if found:
        return DIVERGED, found
    if base_keys != run_keys:
        return STRATEGY_DIFFERS, _regrouping(base, run, base_keys, run_keys, made)
    return EQUIVALENT, None


def _positions(rounds) -> list[tuple[int, int, dict]]:
    return [(r, c, call) for r, round_ in enumerate(rounds, 1) for c, call in enumerate(round_, 1)]


def _call_difference(base, run, made) -> Difference | None:
    base_calls, run_calls = _positions(base.rounds), _positions(run.rounds)
    missing = Counter(call_key(c) for *_, c in base_calls) - Counter(call_key(c) for *_, c in run_calls)
    extra = Counter(call_key(c) for *_, c in run_calls) - Counter(call_key(c) for *_, c in base_calls)
    lost = next(((r, c, call) for r, c, call in base_calls if missing[call_key(call)]), None)
    new = next(((r, c, call) for r, c, call in run_calls if extra[call_key(call)]), None)
    if lost and new and lost[2]["name"] == new[2]["name"]:
        return _args_difference(lost[2], new, made)
    if new:
        return made("call", None, new[2], MSG_EXTRA.format(round=new[0], call=new[1], label=label(new[2])),
                    new[0], new[1])
    if lost:
        return made("call", lost[2], None, MSG_MISSING.format(round=lost[0], label=label(lost[2])), lost[0])
    return None


def _args_difference(expected: dict, at: tuple, made, kind: str = DIVERGED) -> Difference:
    r, c, actual = at
    if expected["name"] != actual["name"]:
        return made("name", expected["name"], actual["name"],
                    MSG_NAME.format(round=r, call=c, expected=label(expected), actual=label(actual)), r, c, kind)
    want, got = expected.get("args") or {}, actual.get("args") or {}
    key = next((k for k in [*want, *(k for k in got if k not in want)]
                if call_key({"name": actual["name"], "args": {k: want.get(k)}})
                != call_key({"name": actual["name"], "args": {k: got.get(k)}})), None)
    expected_value, actual_value = (want.get(key), got.get(key)) if key else (want, got)
    return made(f"args.{key}" if key else "args", expected_value, actual_value,
                MSG_ARGS.format(round=r, call=c, tool=actual["name"], key=key or "args",
                                expected=_short(expected_value), actual=_short(actual_value)), r, c, kind)


def _result_difference(base, run, made) -> Difference | None:
    # 同样的调用按出现顺序配对（同一个键的第 i 次对第 i 次），结果逐字比较
    seen: dict[Key, list[dict]] = {}
    for *_, call in _positions(base.rounds):
        seen.setdefault(call_key(call), []).append(call)
    for r, c, call in _positions(run.rounds):
        twins = seen.get(call_key(call))
        expected = twins.pop(0) if twins else None
        if expected is not None and expected.get("result") != call.get("result"):
            return made("result", expected.get("result"), call.get("result"), MSG_RESULT.format(
                round=r, call=c, tool=call["name"], expected=_short(expected.get("result")),
                actual=_short(call.get("result"))), r, c)
    return None


def _outcome_difference(base, run, made) -> Difference | None:
    if base.status != run.status:
        return made("status", str(base.status), str(run.status),
                    MSG_STATUS.format(expected=base.status, actual=run.status))
    if base.status == Status.ANSWERED and squash(base.answer or "") != squash(run.answer or ""):
        return made("answer", base.answer, run.answer,
                    MSG_ANSWER.format(expected=_short(base.answer), actual=_short(run.answer)))
    return None


def _regrouping(base, run, base_keys, run_keys, made) -> Difference:
    """The first place where the same calls stop lining up (another grouping or order)."""
    for r, (want, got) in enumerate(zip(base_keys, run_keys), 1):
        if len(want) != len(got):
            return made("calls", [label(c) for c in base.rounds[r - 1]], [label(c) for c in run.rounds[r - 1]],
                        MSG_CALLS.format(round=r, expected=_labels(base.rounds[r - 1]),
                                         actual=_labels(run.rounds[r - 1])), r, None, STRATEGY_DIFFERS)
        for c, (a, b) in enumerate(zip(want, got), 1):
            if a != b:
                return _args_difference(base.rounds[r - 1][c - 1], (r, c, run.rounds[r - 1][c - 1]), made,
                                        STRATEGY_DIFFERS)
    r = min(len(base_keys), len(run_keys)) + 1      # 只有记录里出现空的一轮才会走到这里
    return made("calls", len(base_keys), len(run_keys), MSG_CALLS.format(
        round=r, expected=len(base_keys), actual=len(run_keys)), r, None, STRATEGY_DIFFERS)


# ---------------------------------------------------------------- a protocol group

def group_verdict(protocol: str, records: list[RunRecord], *, by_seed: bool,
                  passes: Callable[[RunRecord], bool] = lambda r: False) -> GroupVerdict:
    """The worst verdict of the group's runs against the baseline (per seed when ``by_seed``)."""
    buckets: dict[int, list[RunRecord]] = {}
    for record in records:
        buckets.setdefault(record.run if by_seed else 0, []).append(record)
    result = GroupVerdict(protocol, list(dict.fromkeys(r.impl for r in records)), EQUIVALENT, [])
    for bucket in buckets.values():
        base = next((r for r in bucket if passes(r)), bucket[0])
        result.baseline.append(member(base))
        for record in bucket:
            if record is base:
                continue
            kind, difference = compare_runs(base, record)
            if kind == EQUIVALENT:
                continue
            result.comparisons[member(record)] = kind
            if VERDICTS.index(kind) > VERDICTS.index(result.verdict):
                result.verdict, result.first_difference = kind, difference
    return result


# ---------------------------------------------------------------- right or wrong, and drift

def failure(record: RunRecord, expect=None, answer_contains: Sequence[str] = ()) -> str | None:
    """Why a run does not pass (its calls miss the expectation, or its answer is wrong); None: it passes."""
    if expect is not None and not match_calls(record.rounds, expect.expected_rounds,
                                              mode=expect.match, arg_mode=expect.args):
        return FAIL_CALLS.format(match=expect.match, args=expect.args)
    if record.status != Status.ANSWERED:
        return FAIL_STATUS.format(status=record.status)
    return next((FAIL_ANSWER.format(text=t) for t in answer_contains if t not in (record.answer or "")), None)


def drift(records: list[RunRecord], names: dict[str, str], passed: Callable[[RunRecord], bool]) -> Drift:
    """``names``: "impl#run" -> the short name of its trace (:mod:`compare.traces`)."""
    n = len(records)
    passes = sum(map(passed, records))
    guessed = [f for r in records for f in r.flags if f.get("kind") == GUESSED_ARGUMENT]
    shares = Counter(names[member(r)] for r in records)
    return Drift(runs=n, passes=passes, pass_hat_k={k: pass_hat_k(n, passes, k) for k in range(1, n + 1)},
                 distinct_traces=len(shares), strategy_share={k: shares[k] / n for k in sorted(shares)},
                 guessed_per_run=len(guessed) / n,
                 flagged_runs=sum(any(f.get("kind") == GUESSED_ARGUMENT for f in r.flags) for r in records))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k (tau-bench): the chance that k of n runs drawn without replacement all pass, c passed."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(ERR_PASS_HAT_K.format(n=n, c=c, k=k))
    return math.comb(c, k) / math.comb(n, k)


def guessed_value(flag: dict) -> str:
    """The number a guessed_argument flag is about ("300 既不在问题里…" -> "300")."""
    found = re.match(r"[\d.]+", flag.get("detail", ""))
    return found.group() if found else "?"


def label(call: dict) -> str:
    return f"{call['name']}({json.dumps(call.get('args', {}), ensure_ascii=False)})"


def _labels(round_: list[dict]) -> str:
    return "、".join(map(label, round_)) or "（无）"


def _short(value: Any) -> str:
    if value is None:
        return "（无）"
    return repr(shorten(value if isinstance(value, str) else repr(value), SHORT + 1))
