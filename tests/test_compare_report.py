"""compare 的报告：表格标出不同、猜参在每个视图里、HTML 自包含且转义、Markdown 每种 trace 一张时序图。

Built from hand-made run records, so these tests need no model; the end-to-end runs are in
tests/test_compare_cli.py.
"""
from __future__ import annotations

import io
import json
import re

from compare.render_html import render_html
from compare.render_markdown import mermaid_text, render_markdown
from compare.render_text import print_report
from compare.report import build_report, write_reports
from compare.suite import SuitePrompt, parse_suite
from tests.support.agents import ARTICLE_QUESTION, ARTICLE_ROUNDS
from shared.harness.run_record import RunRecord, Status, guessed_argument_flags

EVIL = "<script>alert('x')</script> | 行1\n行2 ; # %"
(TIME,), (PRICE,), (GOOD_CALC,) = ARTICLE_ROUNDS        # 文章串行链的三个调用
GUESS_CALC = {"name": "calculate", "args": {"expression": "300 * 100"}, "result": "30000"}
PROTOCOLS = {"prebuilt": "function_calling", "stategraph": "function_calling", "pure_loop": "function_calling"}


def record(impl: str, rounds, *, run: int = 0, temperature: float = 0.0, prompt: str = ARTICLE_QUESTION,
           answer: str | None = "市值 38,560 港元", status: str = "answered", **extra) -> RunRecord:
    made = RunRecord(impl=impl, prompt=prompt, temperature=temperature, run=run, status=status,
                     rounds=rounds, answer=answer, **extra)
    made.flags = guessed_argument_flags(prompt, rounds)
    return made


SERIAL = [[TIME], [PRICE], [GOOD_CALC]]
PARALLEL = [[TIME, PRICE, GUESS_CALC]]
SUITE = parse_suite({"prompts": [{"id": "article", "prompt": ARTICLE_QUESTION, "expect": {"match": "strict", "rounds": [
    [{"name": "get_current_time"}], [{"name": "get_stock_price", "args": {"symbol": "腾讯"}}],
    [{"name": "calculate", "args": {"expression": "100 * 385.6"}}]]}, "answer_contains": ["38,560"]}]})


def test_equivalent_runs_exit_0_and_the_expectation_is_checked_by_value():
    records = [record(impl, SERIAL) for impl in PROTOCOLS]
    report = build_report(SUITE, [0.0], records, protocols=PROTOCOLS, meta={})
    (section,) = report.prompts
    assert section.verdict.verdict == "equivalent" and report.exit_code == 0
    assert section.expectation.passed == 3                   # "385.6 * 100" ≡ "100 * 385.6"
    assert [c.label for c in section.columns] == list(PROTOCOLS)
    assert not any(any(row.differs) for row in section.rows)


def test_a_difference_is_marked_in_the_table_and_exits_1():
    records = [record("prebuilt", SERIAL), record("stategraph", SERIAL),
               record("pure_loop", [[TIME], [PRICE]], answer=None, status=Status.MAX_STEPS,
                      stopped_at="for step in range(max_steps) 循环结束（max_steps=3）")]
    report = build_report(SUITE, [0.0], records, protocols=PROTOCOLS, meta={})
    (section,) = report.prompts
    assert section.verdict.verdict == "diverged" and report.exit_code == 1
    rows = {row.label: row for row in section.rows}
    assert rows["第 3 轮"].differs == [False, False, True]
    assert rows["状态"].cells == ["answered", "answered", "max_steps"]
    assert "range(max_steps)" in rows["停在"].cells[2]          # 每个实现停在哪里，写进报告
    assert section.expectation.failures[0]["impl"] == "pure_loop"


def test_a_guess_at_temperature_above_zero_shows_in_every_view(tmp_path):
    records = [record(impl, PARALLEL if run == 1 else SERIAL, run=run, temperature=0.7)
               for run in range(2) for impl in PROTOCOLS]
    report = build_report(SUITE, [0.7], records, protocols=PROTOCOLS, meta={})
    (section,) = report.prompts
    assert section.several_runs and len(section.columns) == 2              # 两种 trace
    assert section.columns[1].members == ["prebuilt#1", "stategraph#1", "pure_loop#1"]
    assert report.exit_code == 0                                           # 只有温度 0 决定退出码
    data = report.to_dict()
    assert any(f["kind"] == "guessed_argument" and f["tool"] == "calculate"
               for r in data["results"] for f in r["flags"])
    assert data["prompts"][0]["details"]["flags"]
    text = io.StringIO()
    print_report(report, file=text)
    write_reports(report, tmp_path)
    for view in (text.getvalue(), (tmp_path / "report.md").read_text(encoding="utf-8"),
                 (tmp_path / "report.html").read_text(encoding="utf-8")):
        assert "猜参" in view and "300 既不在问题里" in view
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["prompts"][0]["drift"]["*"]["runs"] == 6


def test_html_is_self_contained_and_escapes_everything_the_model_or_tools_wrote():
    evil_call = {"name": "get_weather", "args": {"city": EVIL}, "result": EVIL}
    records = [record("prebuilt", [[evil_call]], prompt=EVIL, answer=EVIL),
               record("pure_loop", [[evil_call]], prompt=EVIL, answer=EVIL + "!")]
    suite = [SuitePrompt(prompt=EVIL, id="evil", note=EVIL)]
    page = render_html(build_report(suite, [0.0], records, protocols=PROTOCOLS, meta={"model": EVIL}))
    assert "<script" not in page.lower()
    assert "&lt;script&gt;" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)    # 没有外部脚本、字体、样式
    assert "<link" not in page and "@import" not in page
    assert 'class="diff"' in page                                           # 不同的回答被高亮


def test_markdown_has_a_mermaid_diagram_per_distinct_trace_and_safe_cells():
    records = [record("prebuilt", SERIAL), record("stategraph", SERIAL), record("pure_loop", PARALLEL)]
    text = render_markdown(build_report(SUITE, [0.0], records, protocols=PROTOCOLS, meta={}))
    assert text.count("```mermaid\nsequenceDiagram") == 2
    assert "par 并行调用" in text
    evil = render_markdown(build_report([SuitePrompt(prompt=EVIL)], [0.0],
                                        [record("prebuilt", [], prompt=EVIL, answer=EVIL)],
                                        protocols=PROTOCOLS, meta={}))
    assert "<script>" not in evil
    table_lines = [line for line in evil.splitlines() if line.startswith("| 回答")]
    assert table_lines and table_lines[0].count(" | ") == 1 and "\\|" in table_lines[0]   # | 不会切开表格
    assert mermaid_text("a;b#c<d>") == "a#59;b#35;c#lt;d#gt;"
