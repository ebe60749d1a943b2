"""终端视图：每道题一张 rich 表格（实现并排、逐轮对齐、不同处标红），和跑的时候的进度条。

The table is :func:`compare.report.table_rows` laid out with rich: one column per
implementation (or per distinct trace, with several runs), one row per round, then status,
answer, where a run stopped, errors, ``guessed_argument`` flags and cost. A cell that
differs from the first column is red and starts with ``≠``.

The progress bar goes to stderr and only when stderr is a terminal and ``--json`` is off,
so a pipe or ``--json`` output stays clean. Text from the model is printed with rich markup
switched off: a ``[bold]`` in an answer is text, not style.

Left out: files (``compare.report.write_reports``).
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from compare.report import PromptReport, Report, summary_lines
from shared.harness.run_record import RunRecord

VERDICT_STYLE = {"equivalent": "bold green", "strategy_differs": "bold yellow", "diverged": "bold red"}
PROGRESS_LABEL = "compare"
SUMMARY_TITLE = "总览"
CONCLUSION_LINE = {
    "equivalent": "温度 0 的每道题都 equivalent：机制等价。",
    "not_equivalent": "温度 0 有题目不是 equivalent（见上）：退出码 1。",
    "not_checked": "这次没有温度 0 的题目：机制等价没有被检验（加上 --temperature 0）。",
    "all_failed": "温度 0 的每次运行都以 error 结束：什么也没比较（检查 LLM_BASE_URL / LLM_API_KEY / LLM_MODEL）。退出码 1。",
}


def print_report(report: Report, file: TextIO | None = None) -> None:
    file = file or sys.stdout
    console = Console(file=file, highlight=False, soft_wrap=False)
    for section in report.prompts:
        console.print(section_table(section))
        for line in summary_lines(section):
            console.print(Text("  " + line), soft_wrap=True)
        console.print()
    console.print(overview_table(report))
    for key, value in report.meta.items():
        console.print(Text(f"{key}: {value}", style="dim"))
    console.print(Text(CONCLUSION_LINE[report.conclusion], style="bold"))


def section_table(section: PromptReport) -> Table:
    title = Text(f"{section.title}{section.prompt.prompt}  T={section.temperature:g}  ")
    title.append(section.verdict.verdict, style=VERDICT_STYLE[section.verdict.verdict])
    table = Table(title=title, show_lines=True, title_justify="left")
    table.add_column("")
    for column in section.columns:
        header = column.label if not section.several_runs else f"{column.label}\n{', '.join(column.members)}"
        table.add_column(Text(header), overflow="fold")
    for row in section.rows:
        cells = [Text(f"≠ {text}", style="red") if differs else
                 Text(text, style="yellow" if row.kind == "flag" else "dim" if row.kind == "info" else "")
                 for text, differs in zip(row.cells, row.differs)]
        table.add_row(Text(row.label, style="bold"), *cells)
    return table


def overview_table(report: Report) -> Table:
    table = Table(title=SUMMARY_TITLE, title_justify="left")
    for name in ("题目", "温度", "判定", "第一处不同"):
        table.add_column(name, overflow="fold")
    for section in report.prompts:
        first = section.verdict.details.get("first_difference")
        table.add_row(Text(section.title + section.prompt.prompt), f"{section.temperature:g}",
                      Text(section.verdict.verdict, style=VERDICT_STYLE[section.verdict.verdict]),
                      Text(first["message"] if first else ""))
    return table


@contextmanager
def progress_bar(total: int, *, enabled: bool) -> Iterator[Callable[[RunRecord], None]]:
    """A progress bar on stderr for ``total`` runs; yields the callback for each finished run."""
    if not enabled:
        yield lambda record: None
        return
    with Progress(TextColumn(PROGRESS_LABEL), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("", total=total)

        def advance(record: RunRecord) -> None:   # 在 worker 线程里调用；rich 的 Progress 是线程安全的
            bar.update(task, advance=1, description=f"{record.impl} · {record.status}")

        yield advance
