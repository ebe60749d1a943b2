"""一种 trace 的时序图，画成内联 SVG：用户、Agent、模型、每个工具各一条生命线。

Drawn in Python so ``report.html`` needs no script, no font and no network: the page shows
the same offline, in any browser, and runs nothing. A parallel round is a dashed box
labelled 「并行」; a call whose argument was guessed (a ``guessed_argument`` flag on that
round and tool) is red and says 「⚠ 猜参」. Every text goes through :func:`html.escape`;
long texts are cut, the full text is in the element's ``<title>`` (the browser's tooltip).

Left out: Mermaid (GitHub renders that from ``report.md``, :mod:`compare.render_markdown`).
"""
from __future__ import annotations

import html
import json

from compare.traces import Trace
from compare.verdicts import guessed_value
from shared.harness.run_record import GUESSED_ARGUMENT
from shared.harness.text import shorten

LANE, STEP, TOP, LABEL_CHARS = 190, 30, 46, 26
STYLE = {"call": "#1d4ed8", "reply": "#555", "guess": "#b91c1c", "answer": "#15803d"}


def sequence_svg(trace: Trace, prompt: str, uid: str) -> str:
    """The trace as an ``<svg>`` element; ``uid`` keeps its marker ids unique in the page."""
    tools = list(dict.fromkeys(call["name"] for round_ in trace.rounds for call in round_))
    lanes = ["用户", "Agent", "模型", *tools]
    x = {name: LANE // 2 + i * LANE for i, name in enumerate(lanes)}
    guessed = {(f["round"], f["tool"]): guessed_value(f) for f in trace.flags if f.get("kind") == GUESSED_ARGUMENT}
    parts: list[str] = []
    y = TOP + 20

    def arrow(a: str, b: str, text: str, kind: str = "call", dashed: bool = False) -> None:
        nonlocal y
        y += STEP
        x1, x2 = x[a], x[b]
        dash = ' stroke-dasharray="5,4"' if dashed else ""
        parts.append(f'<line x1="{x1}" y1="{y}" x2="{x2 + (-6 if x2 > x1 else 6)}" y2="{y}" stroke="{STYLE[kind]}"'
                     f'{dash} marker-end="url(#{uid}-{kind})"/>')
        parts.append(f'<text x="{(x1 + x2) // 2}" y="{y - 6}" fill="{STYLE[kind]}" text-anchor="middle">'
                     f'<title>{_e(text)}</title>{_e(shorten(" ".join(text.split()), LABEL_CHARS))}</text>')

    arrow("用户", "Agent", prompt)
    for number, round_ in enumerate(trace.rounds, 1):
        arrow("Agent", "模型", f"第 {number} 次请求")
        arrow("模型", "Agent", f"tool_calls × {len(round_)}", "reply", dashed=True)
        top = y + 8
        for call in round_:
            guess = guessed.get((number, call["name"]))
            text = f"{call['name']}({json.dumps(call.get('args', {}), ensure_ascii=False)})"
            arrow("Agent", call["name"], f"⚠ 猜参 {guess}: {text}" if guess else text, "guess" if guess else "call")
        for call in round_:
            arrow(call["name"], "Agent", str(call.get("result")), "reply", dashed=True)
        if len(round_) > 1:
            left, right = x["Agent"] - 60, max(x[c["name"]] for c in round_) + 60
            parts.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{y - top + 10}" fill="none" '
                         f'stroke="#999" stroke-dasharray="3,3"/><text x="{left + 4}" y="{top + 12}" '
                         f'fill="#777">并行</text>')
    if trace.status == "answered":
        arrow("Agent", "模型", f"第 {len(trace.rounds) + 1} 次请求")
        arrow("模型", "Agent", trace.answer or "", "reply", dashed=True)
        arrow("Agent", "用户", trace.answer or "", "answer")
    else:
        y += STEP
        note = f"{trace.status}: {trace.stopped_at or trace.error or ''}"
        parts.append(f'<text x="{x["Agent"]}" y="{y}" fill="{STYLE["guess"]}" text-anchor="middle">'
                     f'<title>{_e(note)}</title>{_e(shorten(note, LABEL_CHARS * 2))}</text>')
    width, height = LANE * len(lanes), y + 30
    heads = "".join(
        f'<rect x="{x[n] - 70}" y="8" width="140" height="28" rx="5" fill="#eef2ff" stroke="#6366f1"/>'
        f'<text x="{x[n]}" y="27" text-anchor="middle" font-weight="bold">{_e(n)}</text>'
        f'<line x1="{x[n]}" y1="36" x2="{x[n]}" y2="{height - 8}" stroke="#c7d2fe"/>' for n in lanes)
    markers = "".join(
        f'<marker id="{uid}-{kind}" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
        f'<path d="M0,0 L8,4 L0,8 z" fill="{color}"/></marker>' for kind, color in STYLE.items())
    return (f'<svg class="sequence" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(trace.title)}" font-size="12">'
            f'<defs>{markers}</defs>{heads}{"".join(parts)}</svg>')


def _e(text: str) -> str:
    return html.escape(text)
