"""终端视图：跑的时候每个实现一条进度条；跑完每道题 × 每个温度一行，外加一次性的说明。

The full tables, the seed grid and the sequence diagrams go to the report files
(``report.html``, ``report.md``); the terminal keeps to what fits one screen. The progress
bars go to stderr and only when stderr is a terminal and ``--json`` is off, so a pipe or
``--json`` output stays clean. Text from the model is printed with rich markup off (a
``[bold]`` in an answer is text, not style) and through
:func:`shared.harness.text.for_terminal` (an ESC in an answer is shown as ``\x1b``, it does
not clear the screen).

Left out: files (:mod:`compare.report_files`).
"""
from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from compare.report import DRIFT_LEGEND, WHY_GROUPS, WHY_SEEDS, Report
from compare.sentences import summary_line
from shared.harness.run_record import RunRecord
from shared.harness.text import for_terminal

VERDICT_STYLE = {"equivalent": "green", "strategy_differs": "yellow", "diverged": "bold red"}
CONCLUSION_LINE = {
    "equivalent": "温度 0 的每道题都 equivalent：机制等价。",
    "not_equivalent": "温度 0 有题目不是 equivalent（见上）：退出码 1。",
    "not_checked": "这次没有温度 0 的题目：机制等价没有被检验（加上 --temperature 0）。",
    "all_failed": "温度 0 的每次运行都以 error 结束：什么也没比较（检查 LLM_BASE_URL / LLM_API_KEY / LLM_MODEL）。退出码 1。",
}
TRACE_LEGEND = "trace 的字母与短名：同一题里每种不同的 trace 一个字母，符合期望的排在前面；完整表格、seed 网格与时序图见报告。"


def print_report(report: Report, file: TextIO | None = None) -> None:
    console = Console(file=file or sys.stdout, highlight=False, soft_wrap=True)

    def line(text: str, style: str) -> None:
        console.print(Text(for_terminal(text), style=style))

    for section in report.prompts:
        line(summary_line(section), VERDICT_STYLE[section.verdict])
    explained = {why for section in report.prompts for why in section.details.why}
    for why in (WHY_GROUPS, WHY_SEEDS):
        if why in explained:
            line(why, "dim")
    if any(section.several_runs for section in report.prompts):
        line(TRACE_LEGEND, "dim")
        line(DRIFT_LEGEND, "dim")
    if clock := report.meta.get("clock"):
        line(str(clock), "dim")
    line(CONCLUSION_LINE[report.conclusion], "bold")


@contextmanager
def progress_bar(impls: list[str], totals: Counter, *, enabled: bool) -> Iterator[Callable[[RunRecord], None]]:
    """One bar per implementation on stderr (runs done / to do); yields the callback for each finished run."""
    if not enabled:
        yield lambda record: None
        return
    with Progress(TextColumn("{task.description:<14}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        tasks = {impl: bar.add_task(impl, total=totals[impl]) for impl in impls if totals[impl]}

        def advance(record: RunRecord) -> None:   # 在 worker 线程里调用；rich 的 Progress 是线程安全的
            bar.update(tasks[record.impl], advance=1)

        yield advance
