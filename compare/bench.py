"""基准：每个实现跑一次要花多少（成本表），以及 compare 的并发 sweep 离理论最快还差多少（--harness）。

``python -m compare.bench [--quick] [--harness] [--json]`` (see the README, "成本"), plus
``--repeat N`` (cost table), ``--latency-ms MS`` and ``--concurrency N`` (harness).

Always the embedded offline model (``load_settings(env={}, dotenv=None)``, like
``compare.failure_modes``): a benchmark must not depend on, or spend money on, whatever
endpoint the reader configured, and the offline model answers in microseconds, so what is
measured is the agent code and its framework, not a remote GPU.

**The cost table** (default). Every implementation runs every suite prompt, ``--repeat``
times (5; ``--quick``: 1), one run after another, at temperature 0 with the clock fixed
(:data:`shared.harness.config.REPRODUCIBLE_CLOCK`), in the order of :func:`compare.sweep.plan_jobs`
(implementations innermost, so a slow minute of the machine hits all of them alike). Per
implementation: runs, runs answered, median and p90 of ``record.seconds`` (the wall time of
one run), the mean model calls and the mean prompt / completion tokens (counted by the
offline model, from each response's ``usage``). Two costs are kept apart on purpose:

- *import time*: how long loading the framework takes, measured in a fresh ``python``
  subprocess (the median of up to 3): ``import <module>, <its client>`` where the client
  is ``langchain_openai`` for the function-calling tiers and ``openai`` for the JSON loops,
  because a run cannot start without it;
- *per-run time*: after one discarded warm-up run per implementation (it pays the lazy
  imports and first-use caches), so the table shows what every further run costs.

**The harness** (``--harness``). The offline model is slowed down: every response waits
``--latency-ms`` (200; without holding other requests back, like a real endpoint). A sweep
of every implementation × the suite prompts (``--quick``: the first 3 prompts), one run
each, goes through :func:`compare.sweep.run_sweep` with ``--concurrency`` workers (4),
its results written to a temporary directory. The sweep's wall time is compared with a
lower bound. The model's latency is the one cost nothing can remove, so a job needs at
least ``llm_calls × latency`` seconds (its calls depend on each other: each waits for the
answer before); with C workers the whole sweep needs at least

    bound = max(longest job bound, sum of job bounds / C)

and ``ratio_to_bound = measured / bound`` (1.0 would be a perfect scheduler with free
agent code; what is above it is the harness, the frameworks and the GIL). Beside it,
``sequential_seconds``: the sum of the jobs' own ``seconds``, what running them one by one
would take, and ``speedup = sequential / measured``. Both lean high when the agent code, not
the latency, dominates (a tiny ``--latency-ms``): a run timed among C others also waits for
the GIL, which the offline server in this same process shares too. The modules are imported before the clock starts:
the harness is measured, not the import.

Output: Markdown tables and a line saying the timings are this machine's; with ``--json``
exactly one JSON object on stdout. Exit status 0; 1 when a run did not answer (its numbers
would not mean what the table says); 2 for bad usage (one line); 130 when interrupted.

Left out: asserting any timing (tests check shapes and formulas, never speed), real
endpoints, temperatures above 0, writing the tables into the README.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from compare.processes import expected_model_calls, on_cores
from compare.suite import SuitePrompt, load_suite
from compare.sweep import RESULTS_FILE, ResultsFile, plan_jobs
from shared.harness.arguments import OneLineParser, positive_int
from shared.harness.config import REPRODUCIBLE_CLOCK, load_settings
from shared.harness.endpoint import open_endpoint
from compare.implementations import IMPLEMENTATIONS, Implementation, Sdk
from shared.harness.run_record import RunRecord, Status
from shared.harness.runner import RunOptions, run_once

PROG = "python -m compare.bench"
ROOT = Path(__file__).resolve().parent.parent

DEFAULT_REPEAT = 5
QUICK_REPEAT = 1
IMPORT_SAMPLES = 3                 # import 计时最多测几次取中位数（每次一个新进程，约 1 秒）
DEFAULT_LATENCY_MS = 200
DEFAULT_CONCURRENCY = 4
QUICK_HARNESS_PROMPTS = 3
MAX_STEPS = 10
PERCENTILE = 0.9
TEMPERATURE = 0.0
INTERRUPTED_STATUS = 130
BASE_OPTIONS = RunOptions(temperature=TEMPERATURE, max_steps=MAX_STEPS, clock=REPRODUCIBLE_CLOCK)

# 一次运行离不开的客户端库：LangChain 三层在第一次运行时才 import langchain_openai（shared.harness.endpoint 延迟导入），
# 零框架的循环只要 openai SDK。不把它算进 import 时间，"框架多贵"就少算了一大块
CLIENT_MODULE = {Sdk.LANGCHAIN: "langchain_openai", Sdk.OPENAI: "openai"}
IMPORT_SNIPPET = "import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"

COST_TITLE = ("成本表：{impls} 个实现 × {prompts} 道题 × {repeat} 次，内置离线模型，temperature 0，时钟固定，"
              "一次接一次地跑（每个实现先跑一次热身，不计入）")
COST_HEADER = ("| 实现 | 运行 | 答出 | 每次运行 中位数 ms | p90 ms | 模型调用/次 | prompt tokens/次 | "
               "completion tokens/次 | import ms |\n|---|---|---|---|---|---|---|---|---|")
COST_NOTE = ("注：计时来自这台机器的这一次运行，换机器、换时候都会变，不是保证；import 在新的 python 进程里单独测"
             "（含它需要的客户端库），不含在每次运行里；tokens 由离线模型计数。")
HARNESS_TITLE = ("并发 sweep：{jobs} 个 job（{impls} 个实现 × {prompts} 道题 × 1 次），离线模型每次响应延迟 "
                 "{latency} ms，{concurrency} 路并发（{workers} 个 worker 进程 × 每个最多 {threads} 个线程，"
                 "离线模型在自己的进程里；预计最长的 job 先跑；每个 worker 先把每个实现热身一次，不计时）")
HARNESS_HEADER = "| 量 | 值 |\n|---|---|"
HARNESS_ROWS = (
    ("答出的 job", "{answered} / {jobs}"),
    ("模型调用合计", "{llm_calls}"),
    ("顺序执行（各 job 自己的 seconds 之和）", "{sequential_seconds:.2f} s"),
    ("下界一：模型延迟的关键路径 max(最长 job, 合计 / 并发)", "{bound_seconds:.2f} s"),
    ("下界二：这些 job 实测时长的最好调度 max(最长, 合计 / 并发)", "{schedule_bound_seconds:.2f} s"),
    ("实测墙钟", "{measured_seconds:.2f} s"),
    ("实测 / 下界一（ratio_to_bound）", "{ratio_to_bound:.2f}"),
    ("实测 / 下界二（ratio_to_schedule）", "{ratio_to_schedule:.2f}"),
    ("加速比（顺序 / 实测）", "{speedup:.2f}×"),
)
HARNESS_NOTE = ("注：计时来自这台机器的这一次运行，不是保证。下界一只算模型延迟（每个 job 至少 模型调用数 × 延迟），"
                "高出它的是框架代码、HTTP 与调度争 CPU 的时间；下界二用每个 job 在这次 sweep 里实测的时长，"
                "是这些 job 无论怎么排都省不掉的，高出它的才是调度本身的浪费。")

ERR_FAILED = "{prog}: {message}"
ERR_HARNESS_ONLY = "{flag} 只对 --harness 有意义"
ERR_COST_ONLY = "--repeat 只对成本表有意义（--harness 的每个 job 只跑 1 次）"
ERR_IMPORT = "在新进程里 import {modules} 失败（退出码 {code}）：{reason}"
ERR_NOT_ANSWERED = "注意：{bad} 次运行没有答出（第一个: {impl} / {prompt!r}: {status} {error}），上面的数字不代表正常运行"
MSG_INTERRUPTED = "中断：基准没有跑完，不输出结果。"


class ImportMeasureError(RuntimeError):
    """The fresh interpreter could not import an implementation; one line."""


@dataclass(frozen=True)
class CostRow:
    impl: str
    runs: int
    answered: int
    median_seconds: float
    p90_seconds: float
    mean_llm_calls: float
    mean_prompt_tokens: float
    mean_completion_tokens: float
    import_seconds: float


@dataclass(frozen=True)
class HarnessResult:
    latency_ms: int
    concurrency: int
    workers: int                      # 几个 worker 进程
    threads: int                      # 每个进程最多几个运行同时在跑
    prompts: int
    jobs: int
    answered: int
    llm_calls: int
    measured_seconds: float
    sequential_seconds: float
    bound_seconds: float
    ratio_to_bound: float             # 对天真的下界：只算模型延迟的关键路径
    schedule_bound_seconds: float     # 对这些 job 实测的时长，任何调度都快不过它
    ratio_to_schedule: float
    speedup: float
    runs: list[dict] = field(default_factory=list)     # 每个 job：impl、prompt、status、llm_calls、seconds、bound_seconds


# ---- 共同的部分 ----

def offline_settings(latency_ms: int = 0):
    # env={}、不读 .env：基准永远是离线模型，与读者配置的真实端点无关（也不花读者的钱）
    return load_settings(env={}, dotenv=None, offline_latency_ms=latency_ms)


def needed_modules(impl: Implementation) -> tuple[str, ...]:
    """What a run of ``impl`` cannot start without: its module and its client library."""
    return (impl.module, CLIENT_MODULE[impl.sdk])


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile: a value that was really measured, defined for one sample too."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def not_answered(records: list[RunRecord]) -> str | None:
    """One line about the runs that did not answer, or None when all did."""
    bad = [r for r in records if r.status != Status.ANSWERED]
    if not bad:
        return None
    first = bad[0]
    return ERR_NOT_ANSWERED.format(bad=len(bad), impl=first.impl, prompt=first.prompt,
                                   status=first.status, error=first.error or "")


# ---- 成本表 ----

def measure_import(impl: Implementation, samples: int) -> float:
    """Median seconds a fresh interpreter takes to import what a run of ``impl`` needs."""
    modules = ", ".join(needed_modules(impl))
    command = [sys.executable, "-c", IMPORT_SNIPPET.format(modules=modules)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times = []
    for _ in range(samples):
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines()
            raise ImportMeasureError(ERR_IMPORT.format(modules=modules, code=done.returncode,
                                                       reason=lines[-1] if lines else ""))
        times.append(float(done.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def run_cost(prompts: list[str], repeat: int) -> tuple[list[CostRow], list[RunRecord]]:
    """Every implementation × every prompt × ``repeat``, one run at a time; one row each."""
    impls = list(IMPLEMENTATIONS.values())
    records: dict[str, list[RunRecord]] = {impl.name: [] for impl in impls}
    with open_endpoint(offline_settings()) as endpoint:
        for impl in impls:
            # 热身：第一次运行付的是延迟导入（langchain_openai）和各种首次使用的缓存，不是"每次运行"的成本
            run_once(impl, prompts[0], endpoint, BASE_OPTIONS)
        for job in plan_jobs(impls, prompts, [TEMPERATURE], repeat):
            records[job.impl.name].append(run_once(job.impl, job.prompt, endpoint, job.options(BASE_OPTIONS)))
    # import 计时放在所有运行之后、服务器关掉之后：子进程不和本进程的线程抢 CPU
    samples = min(repeat, IMPORT_SAMPLES)
    rows = [cost_row(impl.name, records[impl.name], measure_import(impl, samples)) for impl in impls]
    return rows, [r for impl in impls for r in records[impl.name]]


def cost_row(impl: str, records: list[RunRecord], import_seconds: float) -> CostRow:
    seconds = [r.seconds for r in records]
    return CostRow(
        impl=impl, runs=len(records), answered=sum(r.status == Status.ANSWERED for r in records),
        median_seconds=round(statistics.median(seconds), 4),
        p90_seconds=round(percentile(seconds, PERCENTILE), 4),
        mean_llm_calls=round(statistics.mean(r.llm_calls for r in records), 2),
        mean_prompt_tokens=round(statistics.mean(r.usage.get("prompt_tokens", 0) for r in records), 1),
        mean_completion_tokens=round(statistics.mean(r.usage.get("completion_tokens", 0) for r in records), 1),
        import_seconds=round(import_seconds, 4),
    )


def render_cost(rows: list[CostRow], prompts: int, repeat: int) -> str:
    lines = [COST_TITLE.format(impls=len(rows), prompts=prompts, repeat=repeat), "", COST_HEADER]
    for row in rows:
        cells = [row.impl, str(row.runs), str(row.answered), _ms(row.median_seconds), _ms(row.p90_seconds),
                 f"{row.mean_llm_calls:.2f}", f"{row.mean_prompt_tokens:.0f}",
                 f"{row.mean_completion_tokens:.0f}", _ms(row.import_seconds)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", COST_NOTE])


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


# ---- 并发 sweep 对下界 ----

def job_bound(record: RunRecord, latency_ms: int) -> float:
    """The least time one job can take: its model calls one after another, each ``latency``."""
    return record.llm_calls * latency_ms / 1000


def critical_path_bound(job_bounds: list[float], concurrency: int) -> float:
    """No sweep can end before its longest job, nor before C workers share out all the waiting."""
    return max(max(job_bounds, default=0.0), sum(job_bounds) / concurrency)


def schedule_bound(seconds: list[float], workers: int) -> float:
    """The best any schedule could do with these job durations on ``workers`` slots (LPT's lower bound)."""
    return max(max(seconds, default=0.0), sum(seconds) / workers)


def run_harness(prompts: list[SuitePrompt], latency_ms: int, concurrency: int) -> tuple[HarnessResult, list[RunRecord]]:
    """The sweep compare runs (:mod:`compare.processes`), timed from the first job handed out to the last record written."""
    impls = list(IMPLEMENTATIONS.values())
    jobs = plan_jobs(impls, [p.prompt for p in prompts], [TEMPERATURE], 1)
    # 每个 worker 先把每个实现跑一遍（不计时）：延迟导入、首次使用的缓存、编好的图都在计时之外
    warm_up = plan_jobs(impls, [prompts[0].prompt], [TEMPERATURE], 1)
    header = {"bench": "harness", "latency_ms": latency_ms, "concurrency": concurrency,
              "max_steps": MAX_STEPS, "clock": REPRODUCIBLE_CLOCK}
    with tempfile.TemporaryDirectory(prefix="compare-bench-") as out, \
            on_cores(offline_settings(latency_ms), concurrency, warm_up=warm_up,
                     warm_up_options=BASE_OPTIONS) as sweep:
        results = ResultsFile(Path(out) / RESULTS_FILE)
        results.start(header, resume=False)
        # 计时只包住 sweep.run：起进程、热身、临时目录都不算 sweep 的成本
        started = time.perf_counter()
        records = sweep.run(jobs, results=results, options=BASE_OPTIONS, expected=expected_model_calls(prompts))
        measured = time.perf_counter() - started
    return harness_result(records, prompts=len(prompts), latency_ms=latency_ms, concurrency=concurrency,
                          measured=measured, workers=sweep.shape.workers, threads=sweep.shape.threads), records


def harness_result(records: list[RunRecord], *, prompts: int, latency_ms: int, concurrency: int,
                   measured: float, workers: int, threads: int) -> HarnessResult:
    bounds = [job_bound(r, latency_ms) for r in records]
    bound = critical_path_bound(bounds, concurrency)
    sequential = sum(r.seconds for r in records)
    best = schedule_bound([r.seconds for r in records], concurrency)
    runs = [{"impl": r.impl, "prompt": r.prompt, "status": r.status, "llm_calls": r.llm_calls,
             "seconds": r.seconds, "bound_seconds": round(b, 4)} for r, b in zip(records, bounds)]
    return HarnessResult(
        latency_ms=latency_ms, concurrency=concurrency, workers=workers, threads=threads, prompts=prompts,
        jobs=len(records), answered=sum(r.status == Status.ANSWERED for r in records),
        llm_calls=sum(r.llm_calls for r in records),
        measured_seconds=round(measured, 4), sequential_seconds=round(sequential, 4),
        bound_seconds=round(bound, 4),
        # 下界为 0（没有一次模型调用）时比值没有意义：记成 0，让人一眼看出不对
        ratio_to_bound=_ratio(measured, bound),
        schedule_bound_seconds=round(best, 4), ratio_to_schedule=_ratio(measured, best),
        speedup=_ratio(sequential, measured),
        runs=runs,
    )


def _ratio(numerator: float, denominator: float) -> float:
    return round(numerator / denominator, 4) if denominator > 0 else 0.0


def render_harness(result: HarnessResult, impls: int) -> str:
    values = asdict(result)
    lines = [HARNESS_TITLE.format(jobs=result.jobs, impls=impls, prompts=result.prompts,
                                  latency=result.latency_ms, concurrency=result.concurrency,
                                  workers=result.workers, threads=result.threads),
             "", HARNESS_HEADER]
    lines += [f"| {name} | {value.format(**values)} |" for name, value in HARNESS_ROWS]
    return "\n".join([*lines, "", HARNESS_NOTE])


# ---- 命令行 ----

def build_parser() -> OneLineParser:
    parser = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--harness", action="store_true",
                        help="并发 sweep 对着变慢的离线模型：实测墙钟 / 关键路径下界")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help=f"冒烟用：成本表只跑 {QUICK_REPEAT} 次；--harness 只用前 {QUICK_HARNESS_PROMPTS} 道题")
    size.add_argument("--repeat", type=positive_int, metavar="N",
                      help=f"成本表每个实现 × 每道题跑几次（默认 {DEFAULT_REPEAT}）")
    parser.add_argument("--latency-ms", type=positive_int, metavar="MS",
                        help=f"--harness：离线模型每次响应的延迟（默认 {DEFAULT_LATENCY_MS}）")
    parser.add_argument("--concurrency", type=positive_int, metavar="N",
                        help=f"--harness：同时跑几个 job（默认 {DEFAULT_CONCURRENCY}）")
    parser.add_argument("--json", action="store_true", help="只输出一个 JSON 对象")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # 用错地方的参数直接报错，而不是悄悄忽略：以为调了延迟、其实没生效，最难发现
    if not args.harness:
        for flag, value in (("--latency-ms", args.latency_ms), ("--concurrency", args.concurrency)):
            if value is not None:
                parser.error(ERR_HARNESS_ONLY.format(flag=flag))
    elif args.repeat is not None:
        parser.error(ERR_COST_ONLY)
    suite = load_suite()
    prompts = [p.prompt for p in suite]
    try:
        if args.harness:
            records = _harness(args, suite)
        else:
            records = _cost(args, prompts)
    except ImportMeasureError as error:
        print(ERR_FAILED.format(prog=PROG, message=error), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(MSG_INTERRUPTED, file=sys.stderr)
        return INTERRUPTED_STATUS
    problem = not_answered(records)
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


def _cost(args, prompts: list[str]) -> list[RunRecord]:
    repeat = QUICK_REPEAT if args.quick else args.repeat or DEFAULT_REPEAT
    rows, records = run_cost(prompts, repeat)
    if args.json:
        print(json.dumps({"mode": "cost", "repeat": repeat, "prompts": len(prompts),
                          "temperature": TEMPERATURE, "clock": REPRODUCIBLE_CLOCK,
                          "implementations": [asdict(row) for row in rows]}, ensure_ascii=False))
    else:
        print(render_cost(rows, len(prompts), repeat))
    return records


def _harness(args, suite: list[SuitePrompt]) -> list[RunRecord]:
    chosen = suite[:QUICK_HARNESS_PROMPTS] if args.quick else suite
    result, records = run_harness(chosen, args.latency_ms or DEFAULT_LATENCY_MS,
                                  args.concurrency or DEFAULT_CONCURRENCY)
    if args.json:
        print(json.dumps({"mode": "harness", **asdict(result)}, ensure_ascii=False))
    else:
        print(render_harness(result, len(IMPLEMENTATIONS)))
    return records


if __name__ == "__main__":
    raise SystemExit(main())
