"""report.md：GitHub 能直接渲染的对比报告（表格 + 每种 trace 一张 Mermaid 时序图）。

Per prompt and temperature: the verdict, the table of :func:`compare.report.table_rows`
(differing cells in bold with ≠), the summary lines, and a Mermaid ``sequenceDiagram`` for
each distinct trace: the agent loop drawn as the articles describe it, user → agent → model,
tool calls (a parallel round as a ``par`` block) and their results, back to the user.

Text from the model or the tools is untrusted: in table cells ``|`` and line breaks are
escaped and ``<``/``>``/``&`` become entities; in Mermaid the characters that end a message
or open markup become Mermaid's ``#NN;`` entity codes.

Left out: the HTML report (``compare.render_html``) and the terminal (``compare.render_text``).
"""
from __future__ import annotations

import html
import json
import re

from compare.report import PromptReport, Report, call_text, distinct_traces, shorten, summary_lines

TITLE = "# compare：同一批问题，每个实现逐轮对比"
VERDICT_MARK = {"equivalent": "✅ equivalent", "strategy_differs": "🔀 strategy_differs",
                "diverged": "❌ diverged"}
MERMAID_TEXT_CHARS = 70
# 一次替换完（不能逐个 replace：先换 # 再换 ; 会把 "#35;" 又拆坏）
MERMAID_ENTITIES = {"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;", "%": "#37;"}
DIAGRAM_TITLE = "**{label}**（{members}）"


def render_markdown(report: Report) -> str:
    lines = [TITLE, "", *_meta_lines(report.meta), "", *_overview(report), ""]
    for section in report.prompts:
        lines += _section(section)
    return "\n".join(lines) + "\n"


def _meta_lines(meta: dict) -> list[str]:
    return [f"- {key}: {cell(json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value)}"
            for key, value in meta.items()]


def _overview(report: Report) -> list[str]:
    lines = ["| 题目 | 温度 | 判定 | 第一处不同 |", "|---|---|---|---|"]
    for section in report.prompts:
        first = section.verdict.details.get("first_difference")
        lines.append(f"| {cell(section.title + section.prompt.prompt)} | {section.temperature:g} | "
                     f"{VERDICT_MARK[section.verdict.verdict]} | {cell(first['message'] if first else '')} |")
    return lines


def _section(section: PromptReport) -> list[str]:
    lines = [f"## {cell(section.title + section.prompt.prompt)} · T={section.temperature:g} · "
             f"{VERDICT_MARK[section.verdict.verdict]}", ""]
    if section.prompt.note:
        lines += [f"> {cell(section.prompt.note)}", ""]
    header = ["", *(cell(c.label) for c in section.columns)]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in section.rows:
        cells = [f"**≠ {cell(text)}**" if differs and text else cell(text)
                 for text, differs in zip(row.cells, row.differs)]
        lines.append(f"| {cell(row.label)} | " + " | ".join(cells) + " |")
    if section.several_runs:
        lines += ["", *(f"- {cell(c.label)}: {cell(', '.join(c.members))}" for c in section.columns)]
    lines += ["", *(f"- {cell(line)}" for line in summary_lines(section)), ""]
    for column in distinct_traces(section.records):
        lines += [DIAGRAM_TITLE.format(label=cell(column.label), members=cell(", ".join(column.members))), "",
                  *sequence_diagram(column.record), ""]
    return lines


def sequence_diagram(record) -> list[str]:
    """A Mermaid sequenceDiagram of one run: the ReAct loop round by round."""
    lines = ["```mermaid", "sequenceDiagram", "    participant U as 用户", "    participant A as Agent",
             "    participant M as 模型", "    participant T as 工具",
             f"    U->>A: {mermaid_text(record.prompt)}"]
    for index, round_ in enumerate(record.rounds, 1):
        names = "、".join(call["name"] for call in round_)
        lines += ["    A->>M: messages", f"    M-->>A: 第 {index} 轮 tool_calls: {mermaid_text(names)}"]
        calls = [f"        A->>T: {mermaid_text(call_text(call).split(' → ')[0])}" for call in round_]
        if len(round_) > 1:          # 同一轮的并行调用：画成 par 块
            lines.append("    par 并行调用")
            lines.append(("\n    and\n").join(calls))
            lines.append("    end")
        else:
            lines += [c[4:] for c in calls]
        lines += [f"    T-->>A: {mermaid_text(str(call.get('result')))}" for call in round_]
    if record.status == "answered":
        lines += ["    A->>M: messages", f"    M-->>A: {mermaid_text(record.answer or '')}",
                  f"    A-->>U: {mermaid_text(record.answer or '')}"]
    else:
        lines.append(f"    Note over A: {mermaid_text(record.status + ': ' + (record.stopped_at or record.error or ''))}")
    lines.append("```")
    return lines


def mermaid_text(text: str) -> str:
    """A message text safe inside a Mermaid sequence diagram (one line, no markup)."""
    text = shorten(text, MERMAID_TEXT_CHARS)
    return re.sub("[#;<>%]", lambda m: MERMAID_ENTITIES[m.group()], text) or " "


def cell(text: str) -> str:
    """A Markdown table cell: HTML-escaped, pipes escaped, line breaks as <br>."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", "<br>")
