"""报告：把一次 sweep 的运行记录整理成"每道题 × 每个温度"一节，供三种视图共用。

One model of the results, three views of it (terminal, Markdown, HTML) plus JSON. For each
prompt and temperature, a :class:`PromptReport` holds

- the verdict of :func:`compare.verdicts.verdict` over every implementation and run, with
  its first difference, the step-budget stops and the ``guessed_argument`` flags;
- the drift statistics of :func:`compare.verdicts.drift` (per implementation and overall);
- with several runs, the verdict among the implementations run by run (same seed, so what
  differs there is the mechanism, not the sampling): :func:`mechanism_verdicts`;
- the suite's expectation checked run by run (calls, and strings the answer must contain);
- the wire-level comparison of :mod:`compare.wire`;
- the table every view draws (:func:`table_rows`): columns are the implementations (one
  run each) or, with several runs, the distinct traces; rows are the rounds, the status,
  the answer, where a run stopped, errors and flags; a cell that differs from the first
  column is marked.

The views only lay these rows out; nothing here knows about rich, Markdown or HTML.

Left out: running anything, and the comparison rules themselves (``compare.matching``,
``compare.verdicts``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from compare.matching import match_calls, trace_of
from compare.suite import SuitePrompt
from compare.verdicts import EQUIVALENT, Drift, Verdict, compare_traces, drift_by_impl, verdict
from compare.wire import WireComparison, compare_requests
from shared.harness.text import shorten as cut
from shared.harness.run_record import GUESSED_ARGUMENT, RunRecord, Status

RESULT_CHARS = 60            # 表格里工具返回最多显示这么长（完整内容在 report.json）
ANSWER_CHARS = 160

ROW_ROUND = "第 {n} 轮"
ROW_STATUS = "状态"
ROW_ANSWER = "回答"
ROW_STOPPED = "停在"
ROW_ERROR = "错误"
ROW_FLAGS = "⚠ 猜参"
ROW_COST = "模型调用"
COST_TEXT = "{calls} 次 · {prompt}+{completion} tokens · {seconds:.2f}s"
NO_CALL = "—"
FLAG_TEXT = "第 {round} 轮 {tool}: {detail}"
FLAG_LINE = "⚠ 猜参 {impl}#{run} 第 {round} 轮 {tool}: {detail}"
TRACE_LABEL = "trace {n}"

FAIL_CALLS = "调用与期望不符（{match} / {args}）"
FAIL_STATUS = "没有给出回答（{status}）"
FAIL_ANSWER = "回答里没有 {text!r}"

# 温度 0 的题目一起说明了什么（render_text 把它写成最后一行）
NOT_EQUIVALENT, NOT_CHECKED, ALL_FAILED = "not_equivalent", "not_checked", "all_failed"


@dataclass
class Column:
    """One column of a prompt's table: an implementation's run, or a distinct trace."""
    label: str
    record: RunRecord               # 这一列展示的那次运行（distinct trace 的代表）
    members: list[str]              # 归入这一列的 "impl#run"


@dataclass
class Row:
    label: str
    cells: list[str]
    differs: list[bool]             # 与第一列不同
    kind: str = "trace"             # trace | info | flag


@dataclass
class ExpectationCheck:
    """The suite's expectation, checked on every run of one prompt and temperature."""
    expect: dict | None
    answer_contains: list[str]
    runs: int
    passed: int
    failures: list[dict] = field(default_factory=list)   # {"impl", "run", "reason"}

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class PromptReport:
    prompt: SuitePrompt
    temperature: float
    records: list[RunRecord]
    verdict: Verdict
    drift: dict[str, Drift]
    expectation: ExpectationCheck | None
    wire: list[WireComparison]
    columns: list[Column]
    rows: list[Row]
    # 多次运行时：每个 seed 内各实现之间的判定；"*" 是全部实现，另按协议分组（协议不止一种时）
    mechanism: dict[str, dict[int, Verdict]] = field(default_factory=dict)

    @property
    def several_runs(self) -> bool:
        """Columns are distinct traces (several runs) rather than implementations."""
        return len({r.run for r in self.records}) > 1

    @property
    def title(self) -> str:
        return f"{self.prompt.id} · " if self.prompt.id else ""

    def to_dict(self) -> dict:
        """The README's prompt object (prompt, temperature, verdict, details) plus extras."""
        return {**self.verdict.to_dict(), "id": self.prompt.id, "note": self.prompt.note,
                "drift": {impl: d.to_dict() for impl, d in self.drift.items()},
                "expectation": self.expectation.to_dict() if self.expectation else None,
                "wire": [w.to_dict() for w in self.wire],
                "mechanism": {group: {str(run): v.verdict for run, v in runs.items()}
                              for group, runs in self.mechanism.items()} or None}


@dataclass
class Report:
    prompts: list[PromptReport]
    results: list[RunRecord]
    meta: dict

    def to_dict(self) -> dict:
        return {"results": [r.to_dict() for r in self.results],
                "prompts": [p.to_dict() for p in self.prompts], "meta": self.meta}

    @property
    def conclusion(self) -> str:
        """What the temperature-0 prompts showed: one of the keys of :data:`CONCLUSIONS`."""
        at_zero = [p for p in self.prompts if p.temperature == 0]
        if not at_zero:
            return NOT_CHECKED
        runs = [r for r in self.results if r.temperature == 0]
        if runs and all(r.status == Status.ERROR for r in runs):
            return ALL_FAILED
        return EQUIVALENT if all(p.verdict.verdict == EQUIVALENT for p in at_zero) else NOT_EQUIVALENT

    @property
    def exit_code(self) -> int:
        """0 when every prompt at temperature 0 is ``equivalent`` (the README's exit status), else 1.

        One addition: when every temperature-0 run ended in ``error`` (a wrong URL or key),
        the runs are "equivalent" only in failing alike; that proves nothing, so exit 1.
        """
        return 0 if self.conclusion in (EQUIVALENT, NOT_CHECKED) else 1


# ---- 组装 ----

def build_report(prompts: list[SuitePrompt], temperatures: list[float], records: list[RunRecord], *,
                 protocols: dict[str, str], meta: dict) -> Report:
    """Group the records by prompt and temperature (suite order) and judge each group."""
    sections = []
    for prompt in prompts:
        for temperature in temperatures:
            group = [r for r in records if r.prompt == prompt.prompt and float(r.temperature) == float(temperature)]
            if group:
                sections.append(prompt_report(prompt, float(temperature), group, protocols=protocols))
    return Report(prompts=sections, results=records, meta=meta)


def prompt_report(prompt: SuitePrompt, temperature: float, records: list[RunRecord], *,
                  protocols: dict[str, str]) -> PromptReport:
    expect = prompt.expect
    options = {"expected": [list(r) for r in expect.rounds], "mode": expect.match,
               "arg_mode": expect.args} if expect else {}
    columns = table_columns(records)
    return PromptReport(
        prompt=prompt, temperature=temperature, records=records, verdict=verdict(records),
        drift=drift_by_impl(records, **options),
        expectation=check_expectation(prompt, records),
        wire=compare_requests(records, protocols), columns=columns, rows=table_rows(columns),
        mechanism=mechanism_verdicts(records, protocols))


def mechanism_verdicts(records: list[RunRecord], protocols: dict[str, str]) -> dict[str, dict[int, Verdict]]:
    """With several runs: the verdict among the implementations, run by run.

    Run ``r`` used seed ``r`` everywhere, so within a run the implementations saw the same
    sampling decisions: a difference there is the mechanism. Differences between runs are
    the sampling; the overall verdict and the drift statistics show those. Key ``"*"`` is
    every implementation; with several protocols each protocol group gets its own key too
    (a JSON-protocol reply holds one call by construction, so it cannot follow a parallel
    round: across protocols that is a difference of protocol, within one it is not).
    """
    if len({r.run for r in records}) < 2:
        return {}
    groups = {"*": records}
    if len({protocols.get(r.impl) for r in records}) > 1:
        for record in records:
            groups.setdefault(protocols.get(record.impl, "?"), []).append(record)
    return {name: _by_run(group) for name, group in groups.items() if len({r.impl for r in group}) > 1}


def _by_run(records: list[RunRecord]) -> dict[int, Verdict]:
    return {run: verdict([r for r in records if r.run == run]) for run in sorted({r.run for r in records})}


def check_expectation(prompt: SuitePrompt, records: list[RunRecord]) -> ExpectationCheck | None:
    """Which runs do what the suite says a correct run does."""
    if prompt.expect is None and not prompt.answer_contains:
        return None
    failures = []
    for record in records:
        reason = _expectation_failure(prompt, record)
        if reason:
            failures.append({"impl": record.impl, "run": record.run, "reason": reason})
    return ExpectationCheck(expect=prompt.expect.to_dict() if prompt.expect else None,
                            answer_contains=list(prompt.answer_contains), runs=len(records),
                            passed=len(records) - len(failures), failures=failures)


def _expectation_failure(prompt: SuitePrompt, record: RunRecord) -> str | None:
    expect = prompt.expect
    if expect and not match_calls(record.rounds, [list(r) for r in expect.rounds],
                                  mode=expect.match, arg_mode=expect.args):
        return FAIL_CALLS.format(match=expect.match, args=expect.args)
    if prompt.answer_contains and record.status != Status.ANSWERED:
        return FAIL_STATUS.format(status=record.status)
    for text in prompt.answer_contains:
        if text not in (record.answer or ""):
            return FAIL_ANSWER.format(text=text)
    return None


# ---- 表格：三种视图共用的行与列 ----

def table_columns(records: list[RunRecord]) -> list[Column]:
    """One column per implementation when each ran once; else one per distinct trace."""
    if len({r.run for r in records}) <= 1:
        return [Column(r.impl, r, [member(r)]) for r in records]
    return distinct_traces(records)


def distinct_traces(records: list[RunRecord]) -> list[Column]:
    """The runs grouped into distinct traces, each shown by its first run.

    "Distinct" is the verdict's own notion (two runs are one trace when they are
    ``equivalent``), so the number of groups is the drift's ``distinct_traces``.
    """
    columns: list[Column] = []
    for record in records:
        trace = trace_of(record)
        home = next((c for c in columns
                     if compare_traces(trace_of(c.record), trace).verdict == EQUIVALENT), None)
        if home is None:
            columns.append(Column(TRACE_LABEL.format(n=len(columns) + 1), record, [member(record)]))
        else:
            home.members.append(member(record))
    return columns


def member(record: RunRecord) -> str:
    return f"{record.impl}#{record.run}"


def table_rows(columns: list[Column]) -> list[Row]:
    records = [c.record for c in columns]
    rounds = max((len(r.rounds) for r in records), default=0)
    rows = [_row(ROW_ROUND.format(n=i + 1), [_round_text(r, i) for r in records]) for i in range(rounds)]
    rows.append(_row(ROW_STATUS, [r.status for r in records]))
    rows.append(_row(ROW_ANSWER, [shorten(r.answer or "", ANSWER_CHARS) or NO_CALL for r in records]))
    optional = (
        (ROW_STOPPED, [r.stopped_at or "" for r in records], "info"),
        (ROW_ERROR, [r.error or "" for r in records], "info"),
        (ROW_FLAGS, [flags_text(r) for r in records], "flag"),
    )
    rows += [_row(label, cells, kind) for label, cells, kind in optional if any(cells)]
    rows.append(_row(ROW_COST, [_cost(r) for r in records], "info", compare=False))
    return rows


def _row(label: str, cells: list[str], kind: str = "trace", *, compare: bool = True) -> Row:
    differs = [compare and cell != cells[0] for cell in cells]
    return Row(label, cells, differs, kind)


def _round_text(record: RunRecord, index: int) -> str:
    if index >= len(record.rounds):
        return NO_CALL
    return "\n".join(call_text(call) for call in record.rounds[index])


def call_text(call: dict, *, result_chars: int = RESULT_CHARS) -> str:
    """``name({args}) → result``, the articles' trace line for one call."""
    args = json.dumps(call.get("args", {}), ensure_ascii=False)
    result = call.get("result")
    shown = "（未执行）" if result is None else shorten(str(result), result_chars)
    return f"{call.get('name')}({args}) → {shown}"


def flags_text(record: RunRecord) -> str:
    return "\n".join(FLAG_TEXT.format(**flag) for flag in record.flags if flag.get("kind") == GUESSED_ARGUMENT)


def _cost(record: RunRecord) -> str:
    usage = record.usage or {}
    return COST_TEXT.format(calls=record.llm_calls, prompt=usage.get("prompt_tokens", 0),
                            completion=usage.get("completion_tokens", 0), seconds=record.seconds)


def shorten(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters (white space folded)."""
    return cut(" ".join(text.split()), limit)


# ---- 文字摘要（三种视图共用） ----

def first_difference_text(section: PromptReport) -> str | None:
    first = section.verdict.details.get("first_difference")
    if not first:
        return None
    return f"{first['impl']}#{first['run']}: {first['message']}"


def wire_lines(section: PromptReport) -> list[str]:
    """One line per protocol group: identical requests, or the first differing field."""
    lines = []
    for group in section.wire:
        impls = ", ".join(group.impls)
        if len(group.impls) < 2:
            lines.append(f"请求层 [{group.protocol}] 只有 {impls}，无从比较")
        elif group.turns == 0 and group.identical:
            pass                       # 没有请求可比：notes 里会说明
        elif group.identical:
            lines.append(f"请求层 [{group.protocol}] {impls}：每次请求相同（工具调用 id 规整后，共 {group.turns} 次）")
        else:
            d = group.difference
            lines.append(f"请求层 [{group.protocol}] 第一个不同的字段 {d.path}（第 {d.run} 次运行）："
                         f"{d.left} {d.left_value} ≠ {d.right} {d.right_value}")
        lines += group.notes
    return list(dict.fromkeys(lines))        # 协议说明在每组都有，只说一次


def expectation_line(section: PromptReport) -> str | None:
    check = section.expectation
    if check is None:
        return None
    mark = "✓" if check.passed == check.runs else "✗"
    text = f"期望 {mark} {check.passed}/{check.runs} 次运行符合题库的期望"
    if check.failures:
        first = check.failures[0]
        text += f"；例如 {first['impl']}#{first['run']}: {first['reason']}"
    return text


def drift_line(section: PromptReport) -> str | None:
    overall = section.drift.get("*")
    if overall is None or not section.several_runs:
        return None
    parts = [f"{overall.runs} 次运行，{overall.distinct_traces} 种 trace",
             f"并行策略占 {overall.parallel_share:.0%}"]
    if overall.expected_share is not None:
        parts.append(f"符合期望调用 {overall.expected_share:.0%}")
    k = max(overall.pass_hat_k)
    parts.append(f"pass^{k} = {overall.pass_hat_k[k]:.2f}")
    parts.append(f"猜参 {overall.guessed_arguments} 处 / {overall.flagged_runs} 次运行")
    return "漂移：" + "，".join(parts)


def mechanism_lines(section: PromptReport) -> list[str]:
    lines = []
    for group, runs in section.mechanism.items():
        same = [run for run, v in runs.items() if v.verdict == EQUIVALENT]
        scope = "" if group == "*" else f"，只看 {group} 协议"
        text = f"机制（同一 seed 内各实现之间{scope}）：{len(same)}/{len(runs)} 次运行 equivalent"
        odd = next((v for v in runs.values() if v.verdict != EQUIVALENT), None)
        if odd is not None:
            first = odd.details.get("first_difference") or {}
            text += f"；{first.get('impl')}#{first.get('run')} {odd.verdict}: {first.get('message')}"
        lines.append(text)
    return lines


def flag_lines(section: PromptReport) -> list[str]:
    """Every ``guessed_argument`` flag with the run it came from (provenance, in every view)."""
    return [FLAG_LINE.format(**flag) for flag in section.verdict.details.get("flags", [])]


def summary_lines(section: PromptReport) -> list[str]:
    """The lines under a prompt's table, in every view."""
    lines = [first_difference_text(section) and f"第一处不同：{first_difference_text(section)}",
             expectation_line(section), drift_line(section)]
    return [line for line in lines if line] + mechanism_lines(section) + flag_lines(section) + wire_lines(section)


# ---- 写文件 ----

def write_reports(report: Report, out: Path) -> list[Path]:
    """``report.json``, ``report.md`` and ``report.html`` under ``out``; returns their paths."""
    from compare.render_html import render_html
    from compare.render_markdown import render_markdown

    out.mkdir(parents=True, exist_ok=True)
    files = {
        "report.json": json.dumps(report.to_dict(), ensure_ascii=False, indent=1) + "\n",
        "report.md": render_markdown(report),
        "report.html": render_html(report),
    }
    paths = []
    for name, text in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths
