"""判定：同一个问题、同一个温度下，各实现、各次运行的 trace 是不是"同一个"。

What decides the verdict (the README's compare section), record by record against a
reference record (the first one, or one you choose):

``equivalent``
    the same rounds (the same calls, grouped into turns and ordered the same, arguments
    equal by value), the same status, the same tool results, and, when both answered,
    the same answer up to whitespace.
``strategy_differs``
    the same calls as a multiset (by value) and everything else the same, but grouped or
    ordered differently: serial against parallel, or another order inside a turn.
``diverged``
    anything else: a call more or less, other arguments, another status, a tool result
    that differs, another answer.

Why tool results count: a tool-error text that one implementation words differently is
exactly the kind of mechanism difference the comparison exists to catch. Results are
compared exactly, so a run that calls ``get_current_time`` must fix the clock
(``AGENT_CLOCK``); the harness does that for its runs.

What does not count, but is reported in ``details["notes"]``:
- ``stopped_at``: where a step budget or guard ended a run. The frameworks stop
  differently (prebuilt's "need more steps" guard, ``GraphRecursionError``, the loop's
  ``range``); the status ``max_steps`` is what is compared, the place is only shown;
- ``answer`` when a run did not answer (prebuilt's guard text is not a model answer);
- ``error`` texts (each framework words its exceptions its own way; the status counts).

The verdict of several records is the worst of their verdicts against the reference.
``details["first_difference"]`` is the first difference, in trace order, of the first
record whose own verdict is that worst one, and of the kind that decides it: for a
``diverged`` record that is the first diverging difference, not a mere regrouping before
it. Positions are 1-based like the ``round`` of a run record's flags: ``"round": 2,
"call": 1`` is the first call of the second model turn.

Also here, the drift statistics over several runs (:func:`drift`): share of distinct
traces, share of parallel strategies, share of runs whose calls match the suite's
expected calls, pass^k, and the ``guessed_argument`` flags.

Left out: running anything (the harness does), wire-level request comparison, rendering.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compare.matching import (BY_VALUE, SUPERSET, Call, Trace, args_equal, as_rounds, calls_equal,
                              match_calls, pair_calls, record_fields, squash_whitespace, trace_of)
from shared.harness.run_record import GUESSED_ARGUMENT, Status
from shared.harness.text import shorten

EQUIVALENT, STRATEGY_DIFFERS, DIVERGED = "equivalent", "strategy_differs", "diverged"
VERDICTS = (EQUIVALENT, STRATEGY_DIFFERS, DIVERGED)        # 由轻到重

# ---- 差异的字段名（Difference.field） ----
F_ROUNDS, F_CALLS, F_CALL, F_NAME, F_ARGS, F_RESULT = "rounds", "calls", "call", "name", "args", "result"
F_STATUS, F_ANSWER, F_STOPPED_AT, F_ERROR = "status", "answer", "stopped_at", "error"

# ---- 差异的文字（中文，与文章一致） ----
MSG_ROUNDS = "工具调用轮数不同：参考 {expected} 轮，这次 {actual} 轮"
MSG_CALLS = "第 {round} 轮的调用不同：参考 {expected}，这次 {actual}"
MSG_NAME = "第 {round} 轮第 {call} 个调用的工具不同：参考 {expected}，这次 {actual}"
MSG_ARGS = "第 {round} 轮第 {call} 个调用 {tool} 的参数 {key} 不同：参考 {expected}，这次 {actual}"
MSG_MISSING = "第 {round} 轮第 {call} 个调用 {label} 在这次运行里没有出现"
MSG_EXTRA = "第 {round} 轮第 {call} 个调用 {label} 参考里没有"
MSG_RESULT = "第 {round} 轮第 {call} 个调用 {tool} 的返回不同：参考 {expected}，这次 {actual}"
MSG_STATUS = "运行状态不同：参考 {expected}，这次 {actual}"
MSG_ANSWER = "回答不同：参考 {expected}，这次 {actual}"
MSG_STOPPED_AT = "停在不同的地方（不影响判定）：参考「{expected}」，这次「{actual}」"
MSG_UNANSWERED = "没有回答的运行，最后的文字不同（不影响判定）：参考 {expected}，这次 {actual}"
MSG_ERROR = "错误信息不同（不影响判定，比的是状态）：参考 {expected}，这次 {actual}"
MSG_ABSENT = "（无）"
ERR_NO_RECORDS = "没有运行记录可比较"
ERR_REFERENCE = "参考记录 {reference!r} 不在这批记录里"
ERR_MIXED = "一次判定只比较同一个问题、同一个温度的记录，收到: {keys}"
ERR_PASS_HAT_K = "pass^k 需要 0 < k <= n 且 0 <= c <= n，收到 n={n} c={c} k={k}"

SHORT_TEXT = 80              # 文字说明里引用的值最多这么长，完整值在 expected/actual 里
MAX_DIFFERENCES = 20         # 每条记录最多列这么多差异：错位之后的差异只是噪音


@dataclass
class Difference:
    """One difference between a record and the reference, in words and in structure."""
    field: str                   # rounds | calls | call | name | args.<key> | result | status | answer
    expected: Any                # the reference's value (None: absent)
    actual: Any                  # this record's value (None: absent)
    message: str
    round: int | None = None     # 1-based model turn
    call: int | None = None      # 1-based call within that turn
    kind: str = DIVERGED         # the verdict this difference leads to on its own
    impl: str = ""
    run: int = 0

    def to_dict(self) -> dict:
        return {"impl": self.impl, "run": self.run, "round": self.round, "call": self.call,
                "field": self.field, "expected": self.expected, "actual": self.actual,
                "kind": self.kind, "message": self.message}


@dataclass
class Comparison:
    """One record against the reference."""
    impl: str
    run: int
    verdict: str
    differences: list[Difference] = field(default_factory=list)
    notes: list[Difference] = field(default_factory=list)     # reported, not deciding

    @property
    def first_difference(self) -> Difference | None:
        return next((d for d in self.differences if d.kind == self.verdict), None)

    def to_dict(self) -> dict:
        first = self.first_difference
        return {"impl": self.impl, "run": self.run, "verdict": self.verdict,
                "first_difference": first.to_dict() if first else None,
                "differences": [d.to_dict() for d in self.differences],
                "notes": [n.to_dict() for n in self.notes]}


@dataclass
class Verdict:
    """The verdict of one prompt at one temperature; ``to_dict()`` is the object ``--json`` prints."""
    prompt: str
    temperature: float
    verdict: str
    details: dict

    def to_dict(self) -> dict:
        return {"prompt": self.prompt, "temperature": self.temperature,
                "verdict": self.verdict, "details": self.details}


@dataclass
class Drift:
    """How much several runs of the same prompt and temperature wander."""
    runs: int
    distinct_traces: int
    distinct_share: float             # distinct traces / runs
    parallel_share: float             # runs with a turn of >= 2 calls / runs
    expected_share: float | None      # runs whose calls match the expectation / runs (None: none given)
    passes: int                       # runs that answered and matched the expectation
    pass_hat_k: dict[int, float]      # k -> pass^k, for k = 1..runs
    guessed_arguments: int            # guessed_argument flags over all runs
    flagged_runs: int                 # runs with at least one such flag

    def to_dict(self) -> dict:
        return {"runs": self.runs, "distinct_traces": self.distinct_traces,
                "distinct_share": self.distinct_share, "parallel_share": self.parallel_share,
                "expected_share": self.expected_share, "passes": self.passes,
                "pass_hat_k": {str(k): v for k, v in self.pass_hat_k.items()},
                "guessed_arguments": self.guessed_arguments, "flagged_runs": self.flagged_runs}


# ---------------------------------------------------------------- one record against another

def compare_traces(reference: Trace, actual: Trace, *, arg_mode: str = BY_VALUE) -> Comparison:
    """Every difference of ``actual`` from ``reference``, and the verdict they lead to."""
    differences = _call_differences(reference, actual, arg_mode)
    differences += _outcome_differences(reference, actual)
    for difference in differences:
        difference.impl, difference.run = actual.impl, actual.run
    notes = _notes(reference, actual)
    kinds = {d.kind for d in differences}
    verdict = DIVERGED if DIVERGED in kinds else STRATEGY_DIFFERS if kinds else EQUIVALENT
    return Comparison(actual.impl, actual.run, verdict, differences[:MAX_DIFFERENCES], notes)


def _call_differences(reference: Trace, actual: Trace, arg_mode: str) -> list[Difference]:
    ref_calls, act_calls = _positioned(reference), _positioned(actual)
    pairing = pair_calls([c for _, _, c in act_calls], [c for _, _, c in ref_calls], arg_mode=arg_mode)
    pairs = [(ref_calls[j], act_calls[i]) for i, j in pairing.pairs.items()]
    differences = _result_differences(pairs)
    if _same_grouping(reference, actual, arg_mode):
        return differences
    if pairing.complete:
        # 同一组调用，换了分组或顺序：只报第一个错位处，之后的位置全是连带的
        return [_first_regrouping(reference, actual, arg_mode)] + differences
    differences += _unpaired_differences([ref_calls[j] for j in pairing.unpaired_reference],
                                         [act_calls[i] for i in pairing.unpaired_actual], arg_mode)
    if len(reference.rounds) != len(actual.rounds):
        shorter = min(len(reference.rounds), len(actual.rounds))
        differences.append(Difference(F_ROUNDS, len(reference.rounds), len(actual.rounds),
                                      MSG_ROUNDS.format(expected=len(reference.rounds), actual=len(actual.rounds)),
                                      round=shorter + 1))
    return sorted(differences, key=_position)


def _positioned(trace: Trace) -> list[tuple[int, int, Call]]:
    return [(r, c, call) for r, round_ in enumerate(trace.rounds, 1) for c, call in enumerate(round_, 1)]


def _same_grouping(reference: Trace, actual: Trace, arg_mode: str) -> bool:
    return len(reference.rounds) == len(actual.rounds) and all(
        len(r) == len(a) and all(calls_equal(x, y, arg_mode=arg_mode) for x, y in zip(a, r))
        for r, a in zip(reference.rounds, actual.rounds))


def _result_differences(pairs: list[tuple[tuple, tuple]]) -> list[Difference]:
    # 结果逐字比较：工具错误文案变了，就是机制变了
    return [Difference(F_RESULT, ref.result, act.result,
                       MSG_RESULT.format(round=r, call=c, tool=act.name,
                                         expected=_short(ref.result), actual=_short(act.result)),
                       round=r, call=c)
            for (_, _, ref), (r, c, act) in pairs if ref.result != act.result]


def _first_regrouping(reference: Trace, actual: Trace, arg_mode: str) -> Difference:
    """The first position where two traces of the same calls stop lining up."""
    for r, (ref_round, act_round) in enumerate(zip(reference.rounds, actual.rounds), 1):
        for c, (ref, act) in enumerate(zip(ref_round, act_round), 1):
            difference = _call_difference(ref, act, arg_mode, r, c)
            if difference is not None:
                difference.kind = STRATEGY_DIFFERS
                return difference
        if len(ref_round) != len(act_round):
            expected, actual_ = _labels(ref_round), _labels(act_round)
            return Difference(F_CALLS, [c.to_dict() for c in ref_round], [c.to_dict() for c in act_round],
                              MSG_CALLS.format(round=r, expected=expected, actual=actual_),
                              round=r, kind=STRATEGY_DIFFERS)
    # 共有的轮都对得上、只是轮数不同：只有记录里出现空的一轮才会走到这里
    return Difference(F_ROUNDS, len(reference.rounds), len(actual.rounds),
                      MSG_ROUNDS.format(expected=len(reference.rounds), actual=len(actual.rounds)),
                      round=min(len(reference.rounds), len(actual.rounds)) + 1, kind=STRATEGY_DIFFERS)


def _call_difference(ref: Call, act: Call, arg_mode: str, r: int, c: int) -> Difference | None:
    """Tool name, then the first differing argument, of two calls at the same position."""
    if ref.name != act.name:
        return Difference(F_NAME, ref.name, act.name,
                          MSG_NAME.format(round=r, call=c, expected=ref.label(), actual=act.label()),
                          round=r, call=c)
    if args_equal(act.args, ref.args, mode=arg_mode, tool=act.name):
        return None
    key, expected, actual = _first_differing_arg(ref, act, arg_mode)
    name = f"{F_ARGS}.{key}" if key is not None else F_ARGS
    return Difference(name, expected, actual,
                      MSG_ARGS.format(round=r, call=c, tool=act.name, key=key or F_ARGS,
                                      expected=_short(expected), actual=_short(actual)),
                      round=r, call=c)


def _first_differing_arg(ref: Call, act: Call, arg_mode: str) -> tuple[str | None, Any, Any]:
    if not isinstance(ref.args, Mapping) or not isinstance(act.args, Mapping):
        return None, ref.args, act.args
    for key in [*ref.args, *(k for k in act.args if k not in ref.args)]:
        if key not in ref.args or key not in act.args:
            return key, ref.args.get(key), act.args.get(key)
        if not args_equal({key: act.args[key]}, {key: ref.args[key]}, mode=arg_mode, tool=act.name):
            return key, ref.args[key], act.args[key]
    return None, ref.args, act.args


def _unpaired_differences(missing: list[tuple], extra: list[tuple], arg_mode: str) -> list[Difference]:
    """Calls of one side that pair with none of the other: side by side when at one position."""
    differences = []
    extra_at = {(r, c): call for r, c, call in extra}
    for r, c, ref in missing:
        act = extra_at.pop((r, c), None)
        difference = _call_difference(ref, act, arg_mode, r, c) if act is not None else None
        differences.append(difference or Difference(
            F_CALL, ref.to_dict(), None, MSG_MISSING.format(round=r, call=c, label=ref.label()),
            round=r, call=c))
    for (r, c), act in extra_at.items():
        differences.append(Difference(F_CALL, None, act.to_dict(),
                                      MSG_EXTRA.format(round=r, call=c, label=act.label()),
                                      round=r, call=c))
    return differences


def _outcome_differences(reference: Trace, actual: Trace) -> list[Difference]:
    differences = []
    if reference.status != actual.status:
        differences.append(Difference(F_STATUS, reference.status, actual.status,
                                      MSG_STATUS.format(expected=reference.status, actual=actual.status)))
    elif reference.status == Status.ANSWERED and _squash(reference.answer) != _squash(actual.answer):
        differences.append(Difference(F_ANSWER, reference.answer, actual.answer,
                                      MSG_ANSWER.format(expected=_short(reference.answer),
                                                        actual=_short(actual.answer))))
    return differences


def _notes(reference: Trace, actual: Trace) -> list[Difference]:
    """Differences that are shown but do not decide: stopping place, unanswered text, error text."""
    notes = []
    if reference.stopped_at != actual.stopped_at:
        notes.append(Difference(F_STOPPED_AT, reference.stopped_at, actual.stopped_at,
                                MSG_STOPPED_AT.format(expected=reference.stopped_at or MSG_ABSENT,
                                                      actual=actual.stopped_at or MSG_ABSENT)))
    if Status.ANSWERED not in (reference.status, actual.status) and _squash(reference.answer) != _squash(actual.answer):
        notes.append(Difference(F_ANSWER, reference.answer, actual.answer,
                                MSG_UNANSWERED.format(expected=_short(reference.answer),
                                                      actual=_short(actual.answer))))
    if reference.error != actual.error:
        notes.append(Difference(F_ERROR, reference.error, actual.error,
                                MSG_ERROR.format(expected=_short(reference.error), actual=_short(actual.error))))
    for note in notes:
        note.impl, note.run, note.kind = actual.impl, actual.run, EQUIVALENT
    return notes


def _position(difference: Difference) -> tuple[int, int]:
    # 轮数差异排在那一轮的调用差异之前；status/answer（没有 round）排最后
    return (difference.round or math.inf, difference.call or 0)


def _labels(round_: Sequence[Call]) -> str:
    return "、".join(call.label() for call in round_) or MSG_ABSENT


def _short(value: Any) -> str:
    if value is None:
        return MSG_ABSENT
    text = value if isinstance(value, str) else repr(value)
    return repr(shorten(text, SHORT_TEXT + 1))


def _squash(text: str | None) -> str | None:
    return None if text is None else squash_whitespace(text)


# ---------------------------------------------------------------- the verdict of a prompt

def verdict(records: Sequence[Any], *, reference: int | tuple[str, int] = 0,
            arg_mode: str = BY_VALUE) -> Verdict:
    """The verdict of one prompt at one temperature over all its records.

    ``records``: ``RunRecord`` objects or their ``to_dict()`` form, all of one prompt and
    temperature. ``reference``: the index of the reference record, or ``(impl, run)``.
    Agreement only: whether the runs are *right* (the suite's expected calls) and how
    they drift are :func:`match_calls` and :func:`drift_by_impl`, beside the verdict.
    """
    if not records:
        raise ValueError(ERR_NO_RECORDS)
    _check_one_prompt(records)
    traces = [trace_of(record) for record in records]
    base_index = _reference_index(traces, reference)
    base = traces[base_index]
    comparisons = [compare_traces(base, trace, arg_mode=arg_mode)
                   for index, trace in enumerate(traces) if index != base_index]
    overall = max((c.verdict for c in comparisons), key=VERDICTS.index, default=EQUIVALENT)
    first = next((c.first_difference for c in comparisons if c.verdict == overall), None)
    head = record_fields(records[0])
    details = {
        "reference": {"impl": base.impl, "run": base.run},
        "records": len(traces),
        "first_difference": first.to_dict() if first else None,
        "comparisons": [c.to_dict() for c in comparisons if c.verdict != EQUIVALENT or c.notes],
        "stopped_at": [{"impl": t.impl, "run": t.run, "status": t.status, "stopped_at": t.stopped_at}
                       for t in traces if t.stopped_at is not None or t.status == Status.MAX_STEPS],
        "flags": _guessed_arguments(records),
    }
    return Verdict(head.get("prompt", ""), head.get("temperature", 0.0), overall, details)


def _check_one_prompt(records: Sequence[Any]) -> None:
    keys = {(record_fields(r).get("prompt"), record_fields(r).get("temperature")) for r in records}
    if len(keys) > 1:
        raise ValueError(ERR_MIXED.format(keys=sorted(keys, key=repr)))


def _reference_index(traces: list[Trace], reference: int | tuple[str, int]) -> int:
    if isinstance(reference, int):
        if not -len(traces) <= reference < len(traces):
            raise ValueError(ERR_REFERENCE.format(reference=reference))
        return reference % len(traces)
    for index, trace in enumerate(traces):
        if (trace.impl, trace.run) == tuple(reference):
            return index
    raise ValueError(ERR_REFERENCE.format(reference=reference))


def _guessed_arguments(records: Iterable[Any]) -> list[dict]:
    """Every ``guessed_argument`` flag, with the run it belongs to (provenance for every view)."""
    flagged = []
    for record in records:
        data = record_fields(record)
        flagged += [{"impl": data.get("impl", ""), "run": data.get("run", 0), **flag}
                    for flag in data.get("flags") or [] if flag.get("kind") == GUESSED_ARGUMENT]
    return flagged


# ---------------------------------------------------------------- drift over several runs

def drift(records: Sequence[Any], *, expected: Any = None, mode: str = SUPERSET,
          arg_mode: str = BY_VALUE) -> Drift:
    """Drift statistics over several runs (of one implementation, or of all).

    ``expected``: the suite's expected calls (a list of rounds or a flat list), matched with
    ``mode``/``arg_mode``; a run *passes* when it answered and (if given) matched them.
    """
    if not records:
        raise ValueError(ERR_NO_RECORDS)
    traces = [trace_of(record) for record in records]
    n = len(traces)
    matches = None if expected is None else [
        match_calls(t, as_rounds(expected), mode=mode, arg_mode=arg_mode) for t in traces]
    passes = sum(t.status == Status.ANSWERED and (matches is None or matches[i]) for i, t in enumerate(traces))
    flags = _guessed_arguments(records)
    distinct = _distinct_count(traces, arg_mode)
    return Drift(runs=n, distinct_traces=distinct, distinct_share=distinct / n,
                 parallel_share=sum(t.parallel for t in traces) / n,
                 expected_share=None if matches is None else sum(matches) / n,
                 passes=passes, pass_hat_k={k: pass_hat_k(n, passes, k) for k in range(1, n + 1)},
                 guessed_arguments=len(flags),
                 flagged_runs=len({(f["impl"], f["run"]) for f in flags}))


def drift_by_impl(records: Sequence[Any], **options: Any) -> dict[str, Drift]:
    """:func:`drift` per implementation, plus ``"*"`` over all records."""
    groups: dict[str, list[Any]] = {}
    for record in records:
        groups.setdefault(record_fields(record).get("impl", ""), []).append(record)
    result = {impl: drift(group, **options) for impl, group in groups.items()}
    result["*"] = drift(records, **options)
    return result


def _distinct_count(traces: list[Trace], arg_mode: str) -> int:
    # "同一个 trace" 就用判定的标准：与某个代表 equivalent 即归入它那一类
    representatives: list[Trace] = []
    for trace in traces:
        if not any(compare_traces(r, trace, arg_mode=arg_mode).verdict == EQUIVALENT for r in representatives):
            representatives.append(trace)
    return len(representatives)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one prompt (tau-bench): the chance that k of its n runs, drawn without
    replacement, all pass, given c passed: C(c, k) / C(n, k)."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(ERR_PASS_HAT_K.format(n=n, c=c, k=k))
    return math.comb(c, k) / math.comb(n, k)


def mean_pass_hat_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """pass^k over prompts: the mean of :func:`pass_hat_k` over ``(n, c)`` per prompt."""
    values = [pass_hat_k(n, c, k) for n, c in counts]
    if not values:
        raise ValueError(ERR_NO_RECORDS)
    return sum(values) / len(values)
