"""报告里的句子与表格：判定、期望、漂移、请求层、猜参，三种视图共用同一份措辞。

Also the trace table the Markdown and HTML views draw (:func:`trace_table`): the
expectation, then each distinct trace, with the cells that miss the expectation marked.

Left out: layout (each view lays these out its own way), the data (:mod:`compare.report`).
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from compare.matching import call_key
from compare.report import PromptReport
from compare.verdicts import EQUIVALENT
from shared.harness.run_record import GUESSED_ARGUMENT
from shared.harness.text import shorten

MARK = {"equivalent": "✓", "strategy_differs": "≈", "diverged": "✗"}
ALL_ERRORS = "每次运行都以 error 结束：一样地失败，什么也没证明"
FLAG_LINE = "⚠ 猜参 第 {round} 轮 {tool}: {detail}（{runs}）"
BASELINE_PER_SEED = "每个 seed 内符合期望的那次运行（没有就取第一个实现）"


def group_text(section: PromptReport) -> str:
    """``function_calling equivalent · json equivalent``."""
    return " · ".join(f"{g.protocol} {g.verdict}" for g in section.details.groups)


def first_difference_text(section: PromptReport) -> str | None:
    first = section.details.first_difference
    return f"{first.impl}#{first.run}: {first.message}" if first else None


def group_lines(section: PromptReport) -> list[str]:
    """One line per protocol group: verdict, the implementations, the baseline, the first difference."""
    lines = []
    for group in section.details.groups:
        base = group.baseline[0] if len(group.baseline) == 1 else BASELINE_PER_SEED
        text = f"{group.protocol}（{', '.join(group.impls)}）：{group.verdict}，参考 {base}"
        first = group.first_difference
        if first:
            text += f"；{first.impl}#{first.run}: {first.message}"
        lines.append(text)
    return lines


def expectation_line(section: PromptReport) -> str | None:
    check = section.expectation
    if check is None:
        return None
    mark = "✓" if check.passed == check.runs else "✗"
    text = f"期望 {mark} {check.passed}/{check.runs} 次运行通过（调用符合题库的期望，且回答正确）"
    if check.failures:
        first = check.failures[0]
        text += f"；例如 {first['impl']}#{first['run']}: {first['reason']}"
    return text


def drift_lines(section: PromptReport) -> list[str]:
    """With several runs: pass^k, the share of each trace, guessed arguments per run (per group)."""
    if not section.several_runs:
        return []
    lines = []
    for scope, stats in section.drift.items():
        lines.append(f"漂移（{'全部实现' if scope == '*' else scope}）：{stats.runs} 次运行 {stats.passes} 次通过，"
                     f"{pass_text(section, stats)}；策略占比 {shares_text(stats)}；猜参/次 {stats.guessed_per_run:.2f}")
    return lines


def pass_text(section: PromptReport, stats) -> str:
    """pass^1 and pass^k for k = the number of seeds (as if each implementation ran that often)."""
    k = min(len(section.grid), stats.runs)
    return " ".join(f"pass^{n} = {stats.pass_hat_k[n]:.2f}" for n in dict.fromkeys((1, k)))


def shares_text(stats) -> str:
    return "、".join(f"{name} {share:.0%}" for name, share in stats.strategy_share.items())


def wire_lines(section: PromptReport) -> list[str]:
    """One line per protocol group: identical requests, or the first differing field."""
    lines = []
    for group in section.wire:
        impls = ", ".join(group.impls)
        if len(group.impls) < 2 or group.turns == 0:
            continue
        if group.identical:
            lines.append(f"请求层 [{group.protocol}] {impls}：identical（工具调用 id 规整后，共 {group.turns} 次请求）")
        else:
            d = group.difference
            lines.append(f"请求层 [{group.protocol}] 第一处不同的字段 {d.path}（第 {d.run} 次运行）："
                         f"{d.left} {d.left_value} ≠ {d.right} {d.right_value}")
    return lines


def flag_lines(section: PromptReport) -> list[str]:
    """Every guessed_argument flag once, with the runs that raised it."""
    runs: dict[tuple, list[str]] = {}
    for flag in section.details.flags:
        runs.setdefault((flag["round"], flag["tool"], flag["detail"]), []).append(f"{flag['impl']}#{flag['run']}")
    return [FLAG_LINE.format(round=r, tool=t, detail=d, runs=", ".join(who)) for (r, t, d), who in runs.items()]


def grid_rows(section: PromptReport) -> list[tuple[int, list[str]]]:
    """The seed grid: one row per run (seed), one letter per implementation ('' where it did not run)."""
    return [(run, [cells.get(impl, "") for impl in section.impls]) for run, cells in sorted(section.grid.items())]


def summary_line(section: PromptReport) -> str:
    """The terminal's one line for a prompt at a temperature."""
    # 行首的记号说"机制"（判定）；期望没达到、或每次运行都出错时，等价也只是"错得一样"，记号不能是 ✓
    met = section.expectation is None or section.expectation.passed == section.expectation.runs
    all_errors = bool(section.traces) and all(trace.status == "error" for trace in section.traces)
    mark = MARK[section.verdict] if met and not all_errors else "⚠"
    text = f"{mark} {section.title}  T={section.temperature:g}  {group_text(section)}"
    if section.expectation:
        expected = "✓" if met else "✗"
        text += f"  期望 {expected} {section.expectation.passed}/{section.expectation.runs}"
    if all_errors:
        text += f"  {ALL_ERRORS}"
    if section.several_runs:
        overall = section.drift["*"]
        text += f"  {shares_text(overall)}  {pass_text(section, overall)}"
    if section.verdict != EQUIVALENT and (first := first_difference_text(section)):
        text += f"  {first}"
    return text


# ---------------------------------------------------------------- the trace table (Markdown and HTML)

GOOD, BAD, FLAG = "good", "bad", "flag"
EXPECTED = "期望"
RESULT_CHARS, ANSWER_CHARS = 60, 160


@dataclass
class Cell:
    text: str
    mark: str = ""                 # good | bad | flag | ""


def trace_table(section: PromptReport) -> tuple[list[Cell], list[tuple[str, list[Cell]]]]:
    """Columns: the expectation (if the suite has one), then each distinct trace, coloured against it.

    Without an expectation the first trace is the reference. Returns the header cells and
    the rows ``(label, cells)``.
    """
    expect = section.expectation.expect if section.expectation else None
    expected_rounds = _expected_rounds(expect)
    arg_mode = expect["args"] if expect else "by_value"
    strict = expect is not None and expect["match"] == "strict"
    contains = section.expectation.answer_contains if section.expectation else []
    traces = section.traces
    headers = ([Cell(EXPECTED, GOOD)] if expect else []) + [
        Cell(f"{t.title}\n{len(t.members)} 次运行", "" if t.passes is None else GOOD if t.passes else BAD)
        for t in traces]
    reference = expected_rounds if expect else (traces[0].rounds if traces else [])
    rows = []
    for i in range(max([len(reference), *(len(t.rounds) for t in traces)], default=0)):
        want = reference[i] if i < len(reference) else []
        cells = [Cell(_calls_text(want, results=False) or "—")] if expect else []
        for t in traces:
            got = t.rounds[i] if i < len(t.rounds) else []
            differs = Counter(call_key(c, arg_mode) for c in got) != Counter(call_key(c, arg_mode) for c in want)
            bad = differs and (strict or not expect) and t.passes is not True
            cells.append(Cell(_calls_text(got) or "—", BAD if bad else ""))
        rows.append((f"第 {i + 1} 轮", cells))
    lead = [Cell("answered" + (f"，含 {'、'.join(contains)}" if contains else ""))] if expect else []
    rows.append(("状态", lead[:1] + [Cell(t.status, "" if t.status == "answered" else BAD) for t in traces]))
    rows.append(("回答", ([Cell("")] if expect else []) + [
        Cell(shorten(" ".join((t.answer or "—").split()), ANSWER_CHARS),
             BAD if any(text not in (t.answer or "") for text in contains) else "") for t in traces]))
    for label, values, mark in (("停在", [t.stopped_at or "" for t in traces], ""),
                                ("错误", [t.error or "" for t in traces], BAD),
                                ("⚠ 猜参", [_flags(t) for t in traces], FLAG)):
        if any(values):
            rows.append((label, ([Cell("")] if expect else []) + [Cell(v, mark if v else "") for v in values]))
    rows.append(("运行", ([Cell("")] if expect else []) + [Cell(", ".join(t.members)) for t in traces]))
    return headers, rows


def _expected_rounds(expect: dict | None) -> list[list[dict]]:
    if not expect:
        return []
    return expect["rounds"] if "rounds" in expect else [[c] for c in expect["calls"]]


def _calls_text(round_: list[dict], *, results: bool = True) -> str:
    lines = []
    for call in round_:
        text = f"{call['name']}({json.dumps(call.get('args', {}), ensure_ascii=False)})"
        if results:
            result = call.get("result")
            text += " → " + ("（未执行）" if result is None else shorten(" ".join(str(result).split()), RESULT_CHARS))
        lines.append(text)
    return "\n".join(lines)


def _flags(trace) -> str:
    return "\n".join(f"第 {f['round']} 轮 {f['tool']}: {f['detail']}" for f in trace.flags
                     if f.get("kind") == GUESSED_ARGUMENT)
