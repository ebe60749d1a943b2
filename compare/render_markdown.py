"""report.md：GitHub 能直接渲染的对比报告（表格、seed 网格、每种 trace 一张 Mermaid 时序图）。

Per prompt and temperature: the verdict of each protocol group, the trace table of
:func:`compare.sentences.trace_table` (cells that miss the expectation in bold with ✗), the
seed grid when there are several runs, the summary lines, and a Mermaid ``sequenceDiagram``
per distinct trace: user → agent → model, tool calls (a parallel round as a ``par`` block),
results, back to the user.

Text from the model or the tools is untrusted: in table cells ``|`` and line breaks are
escaped and ``<``/``>``/``&`` become entities; in Mermaid the characters that end a message
or open markup become Mermaid's ``#NN;`` entity codes; and the whole file passes through
:func:`shared.harness.text.for_terminal`, so no ESC, NUL or RLO reaches a reader's ``cat``
or editor (they show as ``\x1b``, ``\x00``, ``\u202e``).

Left out: the HTML report (:mod:`compare.render_html`), the terminal (:mod:`compare.render_text`).
"""
from __future__ import annotations

import html
import json
import re

from compare.report import DRIFT_LEGEND, PromptReport, Report
from compare.sentences import (BAD, FLAG, GOOD, drift_lines, expectation_line, first_difference_text,
                               flag_lines, grid_rows, group_lines, group_text, trace_table, wire_lines)
from compare.traces import Trace
from shared.harness.text import for_terminal, shorten

TITLE = "# compare：同一批问题，每个实现逐轮对比"
VERDICT_MARK = {"equivalent": "✅ equivalent", "strategy_differs": "🔀 strategy_differs", "diverged": "❌ diverged"}
CELL_MARK = {GOOD: "✓ ", BAD: "✗ ", FLAG: "⚠ ", "": ""}
MERMAID_TEXT_CHARS = 70
# 一次替换完（不能逐个 replace：先换 # 再换 ; 会把 "#35;" 又拆坏）
MERMAID_ENTITIES = {"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;", "%": "#37;"}


def render_markdown(report: Report) -> str:
    lines = [TITLE, "", *(f"- {key}: {cell(_plain(value))}" for key, value in report.meta.items()), "",
             f"> {cell(DRIFT_LEGEND)}", "", "| 题目 | 温度 | 判定 | 第一处不同 |", "|---|---|---|---|"]
    for s in report.prompts:
        lines.append(f"| {cell(s.title)} | {s.temperature:g} | {VERDICT_MARK[s.verdict]} {cell(group_text(s))} | "
                     f"{cell(first_difference_text(s) or '')} |")
    lines.append("")
    for section in report.prompts:
        lines += _section(section)
    return for_terminal("\n".join(lines) + "\n")


def _plain(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _section(section: PromptReport) -> list[str]:
    lines = [f"## {cell(section.title)} · T={section.temperature:g} · {VERDICT_MARK[section.verdict]}", "",
             f"> {cell(section.prompt)}" + (f"<br>{cell(section.note)}" if section.note else ""), ""]
    lines += [f"- {cell(line)}" for line in [*group_lines(section), *section.details.why]] + [""]
    headers, rows = trace_table(section)
    lines += ["| | " + " | ".join(CELL_MARK[h.mark] + cell(h.text) for h in headers) + " |",
              "|---|" + "---|" * len(headers)]
    for label, cells in rows:
        lines.append(f"| {cell(label)} | " + " | ".join(
            f"**{CELL_MARK[c.mark]}{cell(c.text)}**" if c.mark and c.text else cell(c.text) for c in cells) + " |")
    if section.several_runs:
        lines += ["", "seed 网格（行：第 r 次运行，即 seed=r；格子：trace 的字母）：", "",
                  "| seed | " + " | ".join(cell(i) for i in section.impls) + " |",
                  "|---|" + "---|" * len(section.impls)]
        lines += [f"| {run} | " + " | ".join(cells) + " |" for run, cells in grid_rows(section)]
        lines += ["", *(f"- {cell(t.title)}" for t in section.traces)]
    summary = [expectation_line(section), *drift_lines(section), *wire_lines(section), *flag_lines(section)]
    lines += ["", *(f"- {cell(line)}" for line in summary if line), ""]
    for trace in section.traces:
        lines += [f"**{cell(trace.title)}**（{cell(', '.join(trace.members))}）", "",
                  *sequence_diagram(trace, section.prompt), ""]
    return lines


def sequence_diagram(trace: Trace, prompt: str) -> list[str]:
    """A Mermaid sequenceDiagram of one trace: the ReAct loop round by round."""
    lines = ["```mermaid", "sequenceDiagram", "    participant U as 用户", "    participant A as Agent",
             "    participant M as 模型", "    participant T as 工具", f"    U->>A: {mermaid_text(prompt)}"]
    guessed = {(f["round"], f["tool"]) for f in trace.flags if f.get("kind") == "guessed_argument"}
    for index, round_ in enumerate(trace.rounds, 1):
        names = "、".join(call["name"] for call in round_)
        lines += ["    A->>M: messages", f"    M-->>A: 第 {index} 轮 tool_calls: {mermaid_text(names)}"]
        calls = []
        for call in round_:
            mark = "⚠ 猜参 " if (index, call["name"]) in guessed else ""
            text = f"{mark}{call['name']}({json.dumps(call.get('args', {}), ensure_ascii=False)})"
            calls.append(f"        A->>T: {mermaid_text(text)}")
        if len(round_) > 1:          # 同一轮的并行调用：画成 par 块
            lines += ["    par 并行调用", "\n    and\n".join(calls), "    end"]
        else:
            lines += [c[4:] for c in calls]
        lines += [f"    T-->>A: {mermaid_text(str(call.get('result')))}" for call in round_]
    if trace.status == "answered":
        lines += ["    A->>M: messages", f"    M-->>A: {mermaid_text(trace.answer or '')}",
                  f"    A-->>U: {mermaid_text(trace.answer or '')}"]
    else:
        lines.append(f"    Note over A: {mermaid_text(trace.status + ': ' + (trace.stopped_at or trace.error or ''))}")
    return lines + ["```"]


def mermaid_text(text: str) -> str:
    """A message text safe inside a Mermaid sequence diagram (one line, no markup)."""
    text = shorten(" ".join(text.split()), MERMAID_TEXT_CHARS)
    return re.sub("[#;<>%]", lambda m: MERMAID_ENTITIES[m.group()], text) or " "


def cell(text) -> str:
    """A Markdown table cell: HTML-escaped, pipes escaped, line breaks as <br>."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", "<br>")
