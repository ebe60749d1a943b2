"""compare 的报告：协议分组判定、以期望为基准、trace 短名与 seed 网格、猜参在每个视图里、
HTML 自包含且转义、Markdown 每种 trace 一张时序图、终端每题一行、视图不被模型反向导入。

Built from hand-made run records, so these tests need no model; the end-to-end runs are in
tests/test_compare_cli.py and tests/test_report_browser.py.
"""
from __future__ import annotations

import io
import json
import re

from compare.render_html import render_html
from compare.render_markdown import mermaid_text, render_markdown
from compare.render_text import print_report
from compare.report import build_report
from compare.report_files import write_reports
from compare.suite import SuitePrompt, parse_suite
from shared.harness.run_record import RunRecord, Status, guessed_argument_flags
from tests.support.agents import ARTICLE_QUESTION, ARTICLE_ROUNDS, ROOT

EVIL = "<script>alert('x')</script> | 行1\n行2 ; # %"
(TIME,), (PRICE,), (GOOD_CALC,) = ARTICLE_ROUNDS        # 文章串行链的三个调用
GUESS_CALC = {"name": "calculate", "args": {"expression": "300 * 100"}, "result": "30000"}
PROTOCOLS = {"prebuilt": "function_calling", "stategraph": "function_calling", "pure_loop": "function_calling",
             "json_loop": "json"}
FC = [name for name, protocol in PROTOCOLS.items() if protocol == "function_calling"]


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


def hot_records() -> list[RunRecord]:
    """Seed 0 went parallel with the guess in every function-calling implementation, seed 1 serial;
    the JSON loop is serial in both (it cannot make a parallel round)."""
    return [record(impl, PARALLEL if run == 0 and impl in FC else SERIAL, run=run, temperature=0.7)
            for run in range(2) for impl in PROTOCOLS]


def test_equivalent_runs_exit_0_and_the_expectation_is_checked_by_value():
    report = build_report(SUITE, [0.0], [record(impl, SERIAL) for impl in PROTOCOLS], protocols=PROTOCOLS, meta={})
    (section,) = report.prompts
    assert section.verdict == "equivalent" and report.exit_code == 0
    assert [g.protocol for g in section.details.groups] == ["function_calling", "json"]
    assert section.expectation.passed == 4                   # "385.6 * 100" ≡ "100 * 385.6"
    assert [t.title for t in section.traces] == ["A 串行链 3 轮"]


def test_the_baseline_is_the_run_that_meets_the_expectation_not_the_first():
    records = [record("prebuilt", PARALLEL), record("stategraph", SERIAL), record("pure_loop", SERIAL)]
    report = build_report(SUITE, [0.0], records, protocols=PROTOCOLS, meta={})
    (section,) = report.prompts
    assert section.verdict == "diverged" and report.exit_code == 1
    (group,) = section.details.groups
    assert group.baseline == ["stategraph#0"] and section.details.first_difference.impl == "prebuilt"
    assert [(t.letter, t.passes) for t in section.traces] == [("A", True), ("B", False)]
    assert section.traces[1].name == "一轮并行 3 个调用 · 猜参 300"


def test_protocols_are_judged_apart_and_seeds_fill_the_grid():
    report = build_report(SUITE, [0.7], hot_records(), protocols=PROTOCOLS, meta={})
    (section,) = report.prompts
    assert section.verdict == "equivalent" and section.details.why           # 每个 seed 内各实现一致
    assert section.grid == {0: {"prebuilt": "B", "stategraph": "B", "pure_loop": "B", "json_loop": "A"},
                            1: {"prebuilt": "A", "stategraph": "A", "pure_loop": "A", "json_loop": "A"}}
    stats = section.drift["*"]
    assert (stats.runs, stats.passes) == (8, 5) and stats.pass_hat_k[8] == 0.0
    assert stats.strategy_share == {"A 串行链 3 轮": 5 / 8, "B 一轮并行 3 个调用 · 猜参 300": 3 / 8}
    assert section.drift["function_calling"].guessed_per_run == 0.5


def test_a_guess_shows_in_every_view_and_the_json_is_asdict(tmp_path):
    report = build_report(SUITE, [0.7], hot_records(), protocols=PROTOCOLS, meta={})
    text = io.StringIO()
    print_report(report, file=text)
    paths = write_reports(report, tmp_path)
    views = [text.getvalue(), *(p.read_text(encoding="utf-8") for p in paths if p.suffix != ".json")]
    for view in views:
        assert "猜参 300" in view
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    (prompt,) = data["prompts"]
    assert {"prompt", "temperature", "verdict", "details"} <= set(prompt)
    assert prompt["drift"]["*"]["runs"] == 8 and len(data["results"]) == 8
    assert "pass^k" in text.getvalue()                                         # 统计量解释一次
    assert text.getvalue().count("\n") < 12                                    # 终端：每题一行 + 说明


def test_html_is_self_contained_and_escapes_everything_the_model_or_tools_wrote():
    evil_call = {"name": "get_weather", "args": {"city": EVIL}, "result": EVIL}
    records = [record("prebuilt", [[evil_call]], prompt=EVIL, answer=EVIL),
               record("pure_loop", [[evil_call]], prompt=EVIL, answer=EVIL + "!")]
    suite = [SuitePrompt(prompt=EVIL, id="evil", note=EVIL)]
    page = render_html(build_report(suite, [0.0], records, protocols=PROTOCOLS, meta={"model": EVIL}))
    assert "<script" not in page.lower() and "&lt;script&gt;" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)    # 没有外部脚本、字体、样式
    assert "<link" not in page and "@import" not in page
    assert page.count("<svg class=\"sequence\"") == 2                         # 两种 trace，两张时序图


def test_markdown_has_a_mermaid_diagram_per_distinct_trace_and_safe_cells():
    records = [record("prebuilt", SERIAL), record("stategraph", SERIAL), record("pure_loop", PARALLEL)]
    text = render_markdown(build_report(SUITE, [0.0], records, protocols=PROTOCOLS, meta={}))
    assert text.count("```mermaid\nsequenceDiagram") == 2
    assert "par 并行调用" in text and "⚠ 猜参 calculate" in text
    evil = render_markdown(build_report([SuitePrompt(prompt=EVIL)], [0.0],
                                        [record("prebuilt", [], prompt=EVIL, answer=EVIL)],
                                        protocols=PROTOCOLS, meta={}))
    assert "<script>" not in evil
    table_lines = [line for line in evil.splitlines() if line.startswith("| 回答")]
    assert table_lines and table_lines[0].count(" | ") == 1 and "\\|" in table_lines[0]   # | 不会切开表格
    assert mermaid_text("a;b#c<d>") == "a#59;b#35;c#lt;d#gt;"


def test_the_report_model_imports_no_view():
    source = (ROOT / "compare" / "report.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import) compare\.(render_|report_files|sentences)", source, flags=re.M)


def test_an_unanswered_run_is_named_and_marked():
    records = [record("prebuilt", SERIAL), record("pure_loop", SERIAL[:2], answer=None, status=Status.MAX_STEPS,
                                                  stopped_at="for step in range(max_steps) 循环结束")]
    (section,) = build_report(SUITE, [0.0], records, protocols=PROTOCOLS, meta={}).prompts
    assert section.traces[1].name == "串行链 2 轮 · max_steps"
    assert section.details.stopped_at[0]["impl"] == "pure_loop"
