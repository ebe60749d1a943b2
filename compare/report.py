"""报告的数据：一次 sweep 的运行记录整理成"每道题 × 每个温度"一节。三种视图只读它。

For each prompt and temperature a :class:`PromptReport` holds

- one verdict per protocol group (:func:`compare.verdicts.group_verdict`) and the overall
  verdict, the worst of them; ``details`` says why the groups are judged apart;
- the distinct traces (:mod:`compare.traces`), each with its letter, short name and whether
  it meets the suite's expectation;
- the seed grid: run (seed) × implementation -> trace letter;
- the suite's expectation checked run by run, and the drift statistics (per group and ``"*"``);
- the request-level comparison (:mod:`compare.wire`).

Everything is a dataclass, so the JSON (``--json``, ``report.json``) is
:func:`dataclasses.asdict`. The views (:mod:`compare.render_text`,
:mod:`compare.render_markdown`, :mod:`compare.render_html`) import this module; nothing
here imports a view.

Left out: running, the comparison rules (:mod:`compare.matching`, :mod:`compare.verdicts`),
writing files (:mod:`compare.report_files`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from compare.suite import SuitePrompt
from compare.traces import Trace, distinct_traces
from compare.verdicts import (EQUIVALENT, Difference, Drift, GroupVerdict, drift, failure, group_verdict,
                              member, worst)
from compare.wire import WireComparison, compare_requests
from shared.harness.run_record import GUESSED_ARGUMENT, RunRecord, Status

WHY_GROUPS = ("function calling 与 JSON 文本协议分组判定：JSON 协议的一次回复只能带一个调用，走不了并行的一轮，"
              "跨组比较量出的是协议的差异，不是机制的差异。")
WHY_SEEDS = "温度 > 0：每个 seed 内比较各实现（机制）；不同 seed 之间的漂移（采样）看 seed 网格和漂移统计。"
DRIFT_LEGEND = ("pass^k：从这些运行里任取 k 次、k 次全部通过的概率（通过 = 调用符合题库的期望，且回答正确）；"
                "策略占比：每种 trace 占运行次数的比例；猜参/次：平均每次运行有几个 guessed_argument 标记。")

# 温度 0 的题目一起说明了什么（视图把它写成最后一行）
NOT_EQUIVALENT, NOT_CHECKED, ALL_FAILED = "not_equivalent", "not_checked", "all_failed"


@dataclass
class Details:
    groups: list[GroupVerdict]
    first_difference: Difference | None
    why: list[str]
    flags: list[dict]                     # every guessed_argument flag, with its run
    stopped_at: list[dict]                # where each run that hit its step budget stopped


@dataclass
class ExpectationCheck:
    expect: dict | None
    answer_contains: list[str]
    runs: int
    passed: int
    failures: list[dict] = field(default_factory=list)     # {"impl", "run", "reason"}


@dataclass
class PromptReport:
    prompt: str
    temperature: float
    verdict: str                          # the worst group verdict
    details: Details
    id: str = ""
    note: str = ""
    impls: list[str] = field(default_factory=list)
    traces: list[Trace] = field(default_factory=list)
    grid: dict[int, dict[str, str]] = field(default_factory=dict)     # run -> impl -> trace letter
    expectation: ExpectationCheck | None = None
    drift: dict[str, Drift] = field(default_factory=dict)             # protocol (and "*") -> statistics
    wire: list[WireComparison] = field(default_factory=list)

    @property
    def several_runs(self) -> bool:
        return len(self.grid) > 1

    @property
    def title(self) -> str:
        return self.id or self.prompt

    def trace(self, letter: str) -> Trace:
        return next(t for t in self.traces if t.letter == letter)


@dataclass
class Report:
    prompts: list[PromptReport]
    results: list[RunRecord]
    meta: dict

    def to_json(self) -> dict:
        """The ``--json`` object: ``{"results": [run record, ...], "prompts": [...], "meta": {...}}``."""
        return {"results": [r.to_dict() for r in self.results],
                "prompts": [asdict(p) for p in self.prompts], "meta": self.meta}

    @property
    def conclusion(self) -> str:
        at_zero = [p for p in self.prompts if p.temperature == 0]
        if not at_zero:
            return NOT_CHECKED
        runs = [r for r in self.results if r.temperature == 0]
        if runs and all(r.status == Status.ERROR for r in runs):
            return ALL_FAILED
        return EQUIVALENT if all(p.verdict == EQUIVALENT for p in at_zero) else NOT_EQUIVALENT

    @property
    def exit_code(self) -> int:
        """0 when every prompt at temperature 0 is ``equivalent``; 1 otherwise, or when every
        temperature-0 run ended in ``error`` (failing alike proves nothing)."""
        return 0 if self.conclusion in (EQUIVALENT, NOT_CHECKED) else 1


def build_report(prompts: list[SuitePrompt], temperatures: list[float], records: list[RunRecord], *,
                 protocols: dict[str, str], meta: dict) -> Report:
    """Group the records by prompt and temperature (suite order) and judge each group."""
    sections = []
    for prompt in prompts:
        for temperature in temperatures:
            group = [r for r in records if r.prompt == prompt.prompt and float(r.temperature) == float(temperature)]
            if group:
                sections.append(prompt_report(prompt, float(temperature), group, protocols))
    return Report(prompts=sections, results=records, meta=meta)


def prompt_report(prompt: SuitePrompt, temperature: float, records: list[RunRecord],
                  protocols: dict[str, str]) -> PromptReport:
    reasons = {member(r): failure(r, prompt.expect, prompt.answer_contains) for r in records}
    checked = prompt.expect is not None or bool(prompt.answer_contains)
    passes = (lambda r: reasons[member(r)] is None) if checked else (lambda r: r.status == Status.ANSWERED)
    by_protocol: dict[str, list[RunRecord]] = {}
    for record in records:
        by_protocol.setdefault(protocols.get(record.impl, "?"), []).append(record)
    several_seeds = temperature > 0 and len({r.run for r in records}) > 1
    groups = [group_verdict(name, group, by_seed=temperature > 0, passes=passes)
              for name, group in by_protocol.items()]
    overall = worst([g.verdict for g in groups])
    why = ([WHY_GROUPS] if len(groups) > 1 else []) + ([WHY_SEEDS] if several_seeds else [])
    details = Details(
        groups=groups, why=why,
        first_difference=next((g.first_difference for g in groups if g.verdict == overall), None),
        flags=[{"impl": r.impl, "run": r.run, **f} for r in records for f in r.flags
               if f.get("kind") == GUESSED_ARGUMENT],
        stopped_at=[{"impl": r.impl, "run": r.run, "status": str(r.status), "stopped_at": r.stopped_at}
                    for r in records if r.stopped_at is not None or r.status == Status.MAX_STEPS])
    traces = distinct_traces(records, passes if checked else None)
    letter = {m: t.letter for t in traces for m in t.members}
    names = {m: t.title for t in traces for m in t.members}
    grid: dict[int, dict[str, str]] = {}
    for record in records:
        grid.setdefault(record.run, {})[record.impl] = letter[member(record)]
    expectation = None
    if checked:
        failures = [{"impl": r.impl, "run": r.run, "reason": reasons[member(r)]} for r in records
                    if reasons[member(r)] is not None]
        expectation = ExpectationCheck(prompt.expect.model_dump(exclude_none=True) if prompt.expect else None,
                                       list(prompt.answer_contains), len(records), len(records) - len(failures),
                                       failures)
    stats = {"*": drift(records, names, passes)}
    if len(by_protocol) > 1:
        stats |= {name: drift(group, names, passes) for name, group in by_protocol.items()}
    return PromptReport(prompt=prompt.prompt, temperature=temperature, verdict=overall, details=details,
                        id=prompt.id, note=prompt.note, impls=list(dict.fromkeys(r.impl for r in records)),
                        traces=traces, grid=grid, expectation=expectation, drift=stats,
                        wire=compare_requests(records, protocols))
