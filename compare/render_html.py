"""report.html：一个自包含的网页报告，离线打开、可以直接发给别人。

Self-contained on purpose: inline CSS and inline SVG only, no script, no external font,
style sheet or image, so the page shows the same on a machine with no network and runs
nothing.

Everything the model or a tool produced (prompts, arguments, results, answers, errors,
even implementation names) goes through :func:`html.escape` before it lands in the page:
a prompt such as ``<script>alert(1)</script>`` must show as text, never run. The one
function that builds markup from text is :func:`_text` (and :mod:`compare.sequence_svg`
for the diagrams); the rest only nests tags.

Per prompt and temperature: the verdict of each protocol group; the distinct traces as
columns next to the expectation, green when a trace meets it and red when not; a sequence
diagram of each distinct trace; the seed grid (run × implementation, each cell the trace's
letter and short name); the drift statistics; the request-level check ("identical" or the
first different field).

Left out: interactivity (that would need a script).
"""
from __future__ import annotations

import html
import json

from compare.report import DRIFT_LEGEND, WHY_GROUPS, PromptReport, Report
from compare.sentences import (BAD, FLAG, GOOD, drift_lines, expectation_line, first_difference_text,
                               flag_lines, grid_rows, group_lines, trace_table, wire_lines)
from compare.sequence_svg import sequence_svg

STYLE = """
body{font-family:-apple-system,"Segoe UI","PingFang SC","Microsoft YaHei",sans-serif;margin:2em;color:#222}
h1{font-size:1.5em} h2{font-size:1.15em;margin-top:2.2em;border-bottom:1px solid #ddd;padding-bottom:.3em}
h3{font-size:1em;margin:1.2em 0 .3em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.35em .6em;vertical-align:top;text-align:left;white-space:pre-wrap}
th{background:#f4f4f4} td.label{font-weight:bold;background:#fafafa;white-space:nowrap}
.good{background:#dcfce7} .bad{background:#ffe3e3} .flag{background:#fff4d6}
.verdict{display:inline-block;padding:.1em .5em;border-radius:.3em;font-weight:bold}
.equivalent{background:#d9f5dd;color:#14532d} .strategy_differs{background:#fff1c2;color:#713f12}
.diverged{background:#ffd6d6;color:#7f1d1d}
ul.summary{margin:.3em 0 0 1.2em;padding:0} .note{color:#555}
figure{margin:.8em 0;overflow-x:auto} figcaption{font-weight:bold;margin-bottom:.3em}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:.2em 1em;font-size:.9em}
dt{font-weight:bold}
"""
TITLE = "compare：同一批问题，每个实现逐轮对比"
LEGEND = "列：期望，然后每种不同的 trace（绿：符合期望；红：不符合，红格是不符合的地方；黄：猜参）。"
MARK_CLASS = {GOOD: "good", BAD: "bad", FLAG: "flag", "": ""}


def render_html(report: Report) -> str:
    body = [f"<h1>{_text(TITLE)}</h1>", _meta(report.meta),
            *(f"<p class=\"note\">{_text(line)}</p>" for line in (LEGEND, WHY_GROUPS, DRIFT_LEGEND)),
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
    return "<dl class=\"meta\">" + "".join(f"<dt>{_text(k)}</dt><dd>{_text(v)}</dd>" for k, v in meta.items()) + "</dl>"


def _overview(report: Report) -> str:
    rows = [f"<tr><td><a href=\"#p{i}\">{_text(s.title)}</a></td><td>{s.temperature:g}</td>"
            f"<td>{' '.join(_text(g.protocol) + ' ' + _verdict(g.verdict) for g in s.details.groups)}</td>"
            f"<td>{_text(first_difference_text(s) or '')}</td></tr>" for i, s in enumerate(report.prompts)]
    return "<table><tr><th>题目</th><th>温度</th><th>判定（每个协议组）</th><th>第一处不同</th></tr>" + "".join(rows) + "</table>"


def _section(index: int, section: PromptReport) -> str:
    head = (f"<h2 id=\"p{index}\">{_text(section.title)} · T={section.temperature:g} · "
            f"{_verdict(section.verdict)}</h2><p>{_text(section.prompt)}</p>")
    note = f"<p class=\"note\">{_text(section.note)}</p>" if section.note else ""
    groups = _list([*group_lines(section), *section.details.why])
    headers, rows = trace_table(section)
    table = ("<table class=\"traces\"><tr><th></th>"
             + "".join(f"<th{_class(h.mark)}>{_text(h.text)}</th>" for h in headers) + "</tr>"
             + "".join(f"<tr><td class=\"label\">{_text(label)}</td>"
                       + "".join(f"<td{_class(c.mark)}>{_text(c.text)}</td>" for c in cells) + "</tr>"
                       for label, cells in rows) + "</table>")
    figures = "".join(
        f"<figure class=\"trace\"><figcaption>{_text(t.title)}（{_text(', '.join(t.members))}）</figcaption>"
        f"{sequence_svg(t, section.prompt, f'p{index}-{t.letter}')}</figure>" for t in section.traces)
    summary = _list([line for line in (expectation_line(section), *drift_lines(section), *wire_lines(section),
                                       *flag_lines(section)) if line])
    return (f"<section>{head}{note}{groups}<h3>不同的 trace</h3>{table}{_grid(section)}{summary}"
            f"<h3>时序图</h3>{figures}</section>")


def _grid(section: PromptReport) -> str:
    if not section.several_runs:
        return ""
    classes = {t.letter: ("" if t.passes is None else GOOD if t.passes else BAD) for t in section.traces}
    names = {t.letter: t.title for t in section.traces}
    head = "".join(f"<th>{_text(impl)}</th>" for impl in section.impls)
    rows = "".join(f"<tr><td class=\"label\">seed {run}</td>"
                   + "".join(f"<td{_class(classes.get(c, ''))}>{_text(names.get(c, '—'))}</td>" for c in cells)
                   + "</tr>" for run, cells in grid_rows(section))
    return f"<h3>seed 网格（第 r 次运行在每个实现里都用 seed=r）</h3><table class=\"grid\"><tr><th></th>{head}</tr>{rows}</table>"


def _list(lines: list[str]) -> str:
    return "<ul class=\"summary\">" + "".join(f"<li>{_text(line)}</li>" for line in lines) + "</ul>"


def _class(mark: str) -> str:
    return f" class=\"{MARK_CLASS[mark]}\"" if mark else ""
