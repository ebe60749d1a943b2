"""report.html：一个自包含的网页报告，离线打开、可以直接发给别人。

Self-contained on purpose: inline CSS only, no script, no external font, style sheet or
image, so the file shows the same on a machine with no network and runs nothing.

Everything the model or a tool produced (prompts, arguments, results, answers, errors,
even implementation names) goes through :func:`html.escape` before it lands in the page:
a prompt such as ``<script>alert(1)</script>`` must show as text, never run. The one
function that builds markup from text is :func:`_text`; the rest only nests tags.

Layout: an overview table (prompt × temperature → verdict), then per prompt the table of
:func:`compare.report.table_rows` with the implementations (or distinct traces) in columns
and the cells that differ from the first column highlighted, then the summary lines.

Left out: charts, interactivity (that would need a script).
"""
from __future__ import annotations

import html
import json

from compare.report import PromptReport, Report, summary_lines

STYLE = """
body{font-family:-apple-system,"Segoe UI","PingFang SC","Microsoft YaHei",sans-serif;margin:2em;color:#222}
h1{font-size:1.5em} h2{font-size:1.15em;margin-top:2.2em;border-bottom:1px solid #ddd;padding-bottom:.3em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.35em .6em;vertical-align:top;text-align:left;white-space:pre-wrap}
th{background:#f4f4f4} td.label{font-weight:bold;background:#fafafa;white-space:nowrap}
td.diff{background:#ffe3e3} td.flag{background:#fff4d6}
.verdict{display:inline-block;padding:.1em .5em;border-radius:.3em;font-weight:bold}
.equivalent{background:#d9f5dd;color:#14532d} .strategy_differs{background:#fff1c2;color:#713f12}
.diverged{background:#ffd6d6;color:#7f1d1d}
ul.summary{margin:.3em 0 0 1.2em;padding:0} .note{color:#555}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:.2em 1em;font-size:.9em}
dt{font-weight:bold}
"""
TITLE = "compare：同一批问题，每个实现逐轮对比"
DIFF_LEGEND = "红底：与第一列不同；黄底：猜参标记（guessed_argument）。"


def render_html(report: Report) -> str:
    body = [f"<h1>{_text(TITLE)}</h1>", _meta(report.meta), f"<p class=\"note\">{_text(DIFF_LEGEND)}</p>",
            _overview(report), *(_section(i, s) for i, s in enumerate(report.prompts))]
    return ("<!DOCTYPE html>\n<html lang=\"zh\"><head><meta charset=\"utf-8\">"
            f"<title>{_text(TITLE)}</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _text(value) -> str:
    """Any value as escaped text: the only way text enters the page."""
    return html.escape(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _verdict(kind: str) -> str:
    return f"<span class=\"verdict {_text(kind)}\">{_text(kind)}</span>"


def _meta(meta: dict) -> str:
    items = "".join(f"<dt>{_text(k)}</dt><dd>{_text(v)}</dd>" for k, v in meta.items())
    return f"<dl class=\"meta\">{items}</dl>"


def _overview(report: Report) -> str:
    rows = []
    for i, section in enumerate(report.prompts):
        first = section.verdict.details.get("first_difference")
        rows.append(f"<tr><td><a href=\"#p{i}\">{_text(section.title + section.prompt.prompt)}</a></td>"
                    f"<td>{section.temperature:g}</td><td>{_verdict(section.verdict.verdict)}</td>"
                    f"<td>{_text(first['message'] if first else '')}</td></tr>")
    return ("<table><tr><th>题目</th><th>温度</th><th>判定</th><th>第一处不同</th></tr>"
            + "".join(rows) + "</table>")


def _section(index: int, section: PromptReport) -> str:
    head = (f"<h2 id=\"p{index}\">{_text(section.title + section.prompt.prompt)} · "
            f"T={section.temperature:g} · {_verdict(section.verdict.verdict)}</h2>")
    note = f"<p class=\"note\">{_text(section.prompt.note)}</p>" if section.prompt.note else ""
    columns = "".join(f"<th title=\"{_text(', '.join(c.members))}\">{_text(c.label)}</th>"
                      for c in section.columns)
    rows = [f"<tr><th></th>{columns}</tr>"]
    for row in section.rows:
        cells = "".join(f"<td{_cell_class(row.kind, differs, text)}>{_text(text)}</td>"
                        for text, differs in zip(row.cells, row.differs))
        rows.append(f"<tr><td class=\"label\">{_text(row.label)}</td>{cells}</tr>")
    members = ""
    if section.several_runs:
        members = "<ul class=\"summary\">" + "".join(
            f"<li>{_text(c.label)}: {_text(', '.join(c.members))}</li>" for c in section.columns) + "</ul>"
    summary = "<ul class=\"summary\">" + "".join(f"<li>{_text(line)}</li>" for line in summary_lines(section)) + "</ul>"
    return f"<section>{head}{note}<table>{''.join(rows)}</table>{members}{summary}</section>"


def _cell_class(kind: str, differs: bool, text: str) -> str:
    if differs:
        return " class=\"diff\""
    return " class=\"flag\"" if kind == "flag" and text else ""
