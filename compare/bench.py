"""基准：每一层的成本（默认），以及 compare 的并发 sweep 离理论最快还差多少（--harness）。

``python -m compare.bench [--quick | --repeat N] [--json] [--write FILE]`` and
``python -m compare.bench --harness [--quick] [--latency-ms MS] [--concurrency N] [--json] [--write FILE]``
(see the README, "成本").

Always the embedded offline model (``load_settings(env={}, dotenv=None)``, like
``compare.failure_modes``): a benchmark must not depend on, or spend money on, whatever
endpoint the reader configured, and the offline model answers in microseconds, so what is
measured is the agent code and its framework, not a remote GPU.

**The cost of each layer** (default; how each figure is measured: :mod:`compare.layers`).
Every implementation runs the suite prompts (``--quick``: the first 3) ``--repeat`` times
(3; ``--quick``: 1), one run after another, at temperature 0 with the clock fixed, after one
warm-up run, twice: on a model answering in-process and over HTTP against the offline model
in its own process. Then, in the same run, the floors (the bare ``openai`` SDK and raw HTTP
sending the same requests), the cold start of each implementation in a fresh ``python``
(the fastest of 3, one implementation after another; ``--quick``: 1, as many implementations at
once as there are cores, a smoke figure), the installed footprint of each tier next to the article's
"500 MB", the tokens per run of each protocol and the lines of each lesson file.

**The harness** (``--harness``). The offline model is slowed down: every response waits
``--latency-ms`` (200; without holding other requests back, like a real endpoint). A sweep
of every implementation × the suite prompts (``--quick``: the first 3), one run each, goes
through the sweep compare uses on every core (:mod:`compare.processes`) with
``--concurrency`` runs at once (4). Its wall time, from the first job handed out to the last
record written (forking and warm-up are outside it), is compared with two lower bounds:

- the *latency bound*: a job needs at least ``llm_calls × latency`` (its calls wait for each
  other), so C slots need at least ``max(longest job bound, sum of job bounds / C)``;
  ``ratio_to_bound`` is against it (1.0: free agent code and a perfect scheduler);
- the *schedule bound*: the same formula on the jobs' own measured ``seconds``, which no
  order of these jobs can beat (a lower bound on LPT's makespan); ``ratio_to_schedule``
  is the scheduling waste alone;
- the *CPU bound*: the CPU time the sweep's processes (this one, the workers, the offline
  model) used inside the window, divided by the cores: work the cores had to do, so no
  schedule on this machine ends sooner. ``binding`` says which of the latency and CPU
  bounds is the higher one: ``latency`` (the sweep waits for the model) or ``cpu`` (the
  agents' code fills the cores; only less code per model call, or more cores, helps).
  The CPU is also given per role (``workers_cpu_seconds``: the agents, their framework and
  SDK; ``model_cpu_seconds``: the offline model's process; ``parent_cpu_seconds``: handing
  out jobs and writing results), and ``ratio_floor_from_workers`` is the workers' CPU per
  core over the latency bound: a ``ratio_to_bound`` this sweep cannot beat even if the model
  (which a real endpoint runs elsewhere) and the parent cost nothing.

Beside them ``sequential_seconds`` (the sum of the jobs' own seconds) and ``speedup``.

Output: Markdown tables and a line saying the timings are this machine's; with ``--json``
exactly one JSON object on stdout; with ``--write FILE`` the tables also replace the block
between this mode's two markers in FILE (the README carries them). Exit status 0; 1 when
a run did not answer (its numbers would not mean what the table says) or a fresh process
failed; 2 for bad usage (one line); 130 when interrupted.

Left out: asserting any timing (tests check shapes and formulas, never speed), real
endpoints, temperatures above 0.
"""
from __future__ import annotations

import json
import platform
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path

import psutil

from compare import layers
from compare.failure_modes import MarkersMissing, replace_block
from compare.implementations import IMPLEMENTATIONS
from compare.layers import MeasureError
from compare.processes import ModelProcess, cores, expected_model_calls, on_cores
from compare.suite import SuitePrompt, load_suite
from compare.sweep import RESULTS_FILE, ResultsFile, plan_jobs
from shared.harness.arguments import OneLineParser, positive_int
from shared.harness.process import exit_status_of
from shared.harness.text import for_terminal
from shared.harness.config import REPRODUCIBLE_CLOCK, load_settings
from shared.harness.endpoint import endpoint_at
from shared.harness.run_record import RunRecord, Status
from shared.harness.runner import RunOptions

PROG = "python -m compare.bench"
ROOT = Path(__file__).resolve().parent.parent

DEFAULT_REPEAT = 3
QUICK_REPEAT = 1
COLD_SAMPLES = 3                   # 冷启动测几次取最快的（每次一个新进程）
QUICK_PROMPTS = 3
DEFAULT_LATENCY_MS = 200
DEFAULT_CONCURRENCY = 4
QUICK_HARNESS_PROMPTS = QUICK_PROMPTS
FLOOR_IMPL = "pure_loop"           # 地板重发的是它发出的请求（function calling，和 LangChain 几层逐字相同）
MAX_STEPS = 10
TEMPERATURE = 0.0
INTERRUPTED_STATUS = 130
BASE_OPTIONS = RunOptions(temperature=TEMPERATURE, max_steps=MAX_STEPS, clock=REPRODUCIBLE_CLOCK)

LAYERS_MARKERS = ("<!-- bench-layers:begin -->", "<!-- bench-layers:end -->")
README_CONCURRENCY = (16, 64)      # README 里放这两种并发的 --harness 结果，各在自己的标记之间


def harness_markers(concurrency: int) -> tuple[str, str]:
    return f"<!-- bench-harness-{concurrency}:begin -->", f"<!-- bench-harness-{concurrency}:end -->"


RAN_ON = "`{command}`，{day} 在这台机器上（{cores} 核，Python {python}）的原样输出；计时随机器和时刻变化，测试从不断言时间。"
CALLS_TITLE = ("每次模型调用的成本：{impls} 个实现 × {prompts} 道题 × {repeat} 轮，temperature 0，时钟固定；逐题轮流跑"
               "每个实现和每个地板（交错着跑，别人抢走 CPU 的那一秒大家一起慢），每轮算一个 µs/次、取最快的一轮"
               "（每个实现先热身一次，不计入）")
CALLS_HEADER = ("| 实现 | 进程内 µs/次 | HTTP µs/次 | HTTP ÷ SDK 直调 | 模型调用 | 答出 |\n"
                "|---|---|---|---|---|---|")
FLOOR_ROWS = ("openai SDK 直调（地板）", "原始 HTTP（http.client，地板）", "离线模型自己（解析 + 规则 + 编码，无 HTTP）")
CALLS_NOTE = ("进程内：模型在本进程里直接回答（一个 httpx transport 把请求交给离线模型的规则大脑，不经 socket），剩下的是"
              " agent 代码、框架、SDK 和计量；HTTP：离线模型在它自己的进程里，经 127.0.0.1。地板重发 {floor} 发出的同一批请求。")
COLD_TITLE = "冷启动：新的 python 进程，import 实现和它的客户端库，再到第一个回答（{samples} 个进程里最快的）"
COLD_AT_ONCE = "；{at_once} 个实现同时冷启动，互相争 CPU（--quick：只作冒烟，不作比较）"
COLD_HEADER = "| 实现 | import ms | 到第一个回答 ms | 合计 ms |\n|---|---|---|---|"
FOOTPRINT_TITLE = "安装体积：每一层连同全部依赖（importlib.metadata 的文件记录，依赖按 requires 闭包）"
FOOTPRINT_HEADER = "| 层 | 分发包 | 文件 | MB | 用到它的实现 |\n|---|---|---|---|---|"
FOOTPRINT_NOTE = "文章第二篇说框架是\u201c{claim} MB 的依赖树\u201d；这里量的是 site-packages 里实际装下的文件（不含 Python 本身）。"
TOKENS_TITLE = "每次运行的 tokens（离线模型按响应的 usage 计数）：function calling 对 JSON 协议"
TOKENS_HEADER = ("| 实现 | 协议 | prompt tokens/次 | completion tokens/次 | 合计 ÷ {floor} |\n"
                 "|---|---|---|---|---|")
LINES_TITLE = "每个 lesson 文件的行数（代码行：去掉空行、注释和 docstring）"
LINES_HEADER = "| 文件 | 行 | 代码行 |\n|---|---|---|"

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
    ("下界三：计时窗口里各进程用掉的 CPU / 核数", "{cpu_seconds:.2f} s / {cores} = {cpu_bound_seconds:.2f} s"),
    ("实测 / 下界三（ratio_to_cpu_bound）", "{ratio_to_cpu_bound:.2f}"),
    ("下界三拆开：worker（agent 代码、框架、SDK）/ 离线模型 / 本进程", "{workers_cpu_seconds:.2f} s / "
     "{model_cpu_seconds:.2f} s / {parent_cpu_seconds:.2f} s"),
    ("只算 worker 的 CPU / 核数，再除以下界一：离线模型和本进程不花 CPU，ratio_to_bound 也低不过它",
     "{ratio_floor_from_workers:.2f}"),
    ("卡住它的是", "{binding_text}"),
    ("加速比（顺序 / 实测）", "{speedup:.2f}×"),
)
HARNESS_NOTE = ("注：计时来自这台机器的这一次运行，不是保证。下界一只算模型延迟（每个 job 至少 模型调用数 × 延迟），"
                "高出它的是框架代码、HTTP 与调度争 CPU 的时间；下界二用每个 job 在这次 sweep 里实测的时长，"
                "是这些 job 无论怎么排都省不掉的，高出它的才是调度本身的浪费；下界三是这次 sweep 的 CPU 活"
                "（agent 代码、框架、SDK、离线模型）摊到每个核上的时间，下界三高过下界一时，"
                "卡住 sweep 的是 CPU，不是模型：只有每次模型调用少花 CPU，或者多几个核，才能更快。")
BINDING_TEXT = {"latency": "模型延迟（下界一 ≥ 下界三）", "cpu": "CPU（下界三 > 下界一）"}


ERR_FAILED = "{prog}: {message}"
ERR_HARNESS_ONLY = "{flag} 只对 --harness 有意义"
ERR_COST_ONLY = "--repeat 只对成本表有意义（--harness 的每个 job 只跑 1 次）"
ERR_NOT_ANSWERED = "注意：{bad} 次运行没有答出（第一个: {impl} / {prompt!r}: {status} {error}），上面的数字不代表正常运行"
ERR_WRITE = "{path}: {reason}"
MSG_INTERRUPTED = "中断：基准没有跑完，不输出结果。"
MSG_WRITTEN = "已写入 {path}"


@dataclass(frozen=True)
class CallRow:
    impl: str
    protocol: str
    runs: int
    answered: int
    llm_calls: int
    in_process_us: float
    http_us: float
    ratio_to_sdk: float
    prompt_tokens_per_run: float
    completion_tokens_per_run: float


@dataclass(frozen=True)
class ColdRow:
    impl: str
    import_ms: float
    first_answer_ms: float
    tier: str


@dataclass
class LayersResult:
    repeat: int
    prompts: int
    cold_samples: int
    cold_at_once: int                 # 几个实现的冷启动同时跑（1：一个接一个；--quick：核数）
    calls: list[CallRow]
    floors: dict[str, float]          # sdk_in_process_us, sdk_http_us, raw_http_us, model_alone_us
    cold_start: list[ColdRow]
    footprint: list[dict]
    lines: list[dict]


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
    cores: int                        # 这个进程能用的核
    cpu_seconds: float                # 计时窗口里 sweep 各进程（本进程、worker、离线模型）用掉的 CPU
    cpu_bound_seconds: float          # cpu_seconds / cores：这些 CPU 活在这么多核上至少要这么久
    ratio_to_cpu_bound: float
    binding: str                      # "latency" 或 "cpu"：下界一和下界三哪个高
    workers_cpu_seconds: float        # cpu_seconds 里 worker 进程的：agent 代码、框架、SDK、HTTP 客户端
    model_cpu_seconds: float          # 离线模型的进程：解析请求、规则大脑、HTTP 服务器
    parent_cpu_seconds: float         # 本进程：分发 job、收记录、写结果文件
    # (workers_cpu_seconds / cores) / bound_seconds：就算离线模型和本进程一点 CPU 不花，
    # 光 worker 里的活也要这么久，ratio_to_bound 低不过它
    ratio_floor_from_workers: float
    speedup: float
    runs: list[dict] = field(default_factory=list)     # 每个 job：impl、prompt、status、llm_calls、seconds、bound_seconds



# ---- 共同的部分 ----

def offline_settings(latency_ms: int = 0):
    # env={}、不读 .env：基准永远是离线模型，与读者配置的真实端点无关（也不花读者的钱）
    return load_settings(env={}, dotenv=None, offline_latency_ms=latency_ms)


def not_answered(records: list[RunRecord]) -> str | None:
    """One line about the runs that did not answer, or None when all did."""
    bad = [r for r in records if r.status != Status.ANSWERED]
    if not bad:
        return None
    first = bad[0]
    return ERR_NOT_ANSWERED.format(bad=len(bad), impl=first.impl, prompt=first.prompt,
                                   status=first.status, error=first.error or "")


def ran_on(command: str) -> str:
    return RAN_ON.format(command=command, day=date.today().isoformat(), cores=cores(),
                         python=platform.python_version())


# ---- 每一层的成本 ----

def run_layers(prompts: list[str], repeat: int, cold_samples: int, cold_at_once: int = 1) -> LayersResult:
    impls = list(IMPLEMENTATIONS.values())
    settings = offline_settings()
    with ModelProcess(settings) as base_url:
        measured = layers.per_call_costs(impls, prompts, layers.in_process_endpoint(settings),
                                         endpoint_at(base_url, settings), BASE_OPTIONS, repeat,
                                         IMPLEMENTATIONS[FLOOR_IMPL])
        # 冷启动放在最后：子进程不和本进程的计时抢 CPU；--quick 时几个实现同时冷启动（各占一核）
        with ThreadPoolExecutor(max_workers=cold_at_once) as pool:
            cold = list(pool.map(lambda impl: cold_row(impl, base_url, prompts[0], cold_samples), impls))
    floors = {f"{name}_us": round(cost.us_per_call, 1) for name, cost in measured.floors.items()}
    calls = [call_row(impl, measured.in_process[impl.name], measured.over_http[impl.name], floors["sdk_http_us"])
             for impl in impls]
    return LayersResult(
        repeat=repeat, prompts=len(prompts), cold_samples=cold_samples, cold_at_once=cold_at_once, calls=calls,
        floors=floors, cold_start=cold, footprint=[asdict(f) for f in layers.footprints()],
        lines=[asdict(layers.lines_of(path)) for path in lesson_files()])


def call_row(impl, in_process: layers.CallCost, over_http: layers.CallCost, sdk_us: float) -> CallRow:
    return CallRow(
        impl=impl.name, protocol=str(impl.protocol), runs=over_http.runs + in_process.runs,
        answered=over_http.answered + in_process.answered, llm_calls=over_http.llm_calls,
        in_process_us=round(in_process.us_per_call, 1), http_us=round(over_http.us_per_call, 1),
        ratio_to_sdk=round(over_http.us_per_call / sdk_us, 2) if sdk_us else 0.0,
        prompt_tokens_per_run=round(over_http.prompt_tokens / over_http.runs, 1),
        completion_tokens_per_run=round(over_http.completion_tokens / over_http.runs, 1))


def cold_row(impl, base_url: str, prompt: str, samples: int) -> ColdRow:
    imported, answered, loaded = layers.cold_start(impl, base_url, prompt, samples)
    return ColdRow(impl=impl.name, import_ms=round(imported * 1000, 1), first_answer_ms=round(answered * 1000, 1),
                   tier=layers.tier_of(loaded))


def lesson_files() -> list[Path]:
    """Every lesson file: the stages' modules (not their ``__init__`` / ``__main__``) and shared/'s top level."""
    files = [p for folder in sorted(ROOT.glob("stage*_*")) for p in sorted(folder.glob("*.py"))
             if p.name not in ("__init__.py", "__main__.py")]
    return files + [p for p in sorted((ROOT / "shared").glob("*.py")) if p.name != "__init__.py"]


def render_layers(result: LayersResult, command: str) -> str:
    floors = result.floors
    out = [ran_on(command), "",
           CALLS_TITLE.format(impls=len(result.calls), prompts=result.prompts, repeat=result.repeat), "",
           CALLS_HEADER]
    for row in result.calls:
        out.append(_row(row.impl, _us(row.in_process_us), _us(row.http_us), f"{row.ratio_to_sdk:.2f}×",
                        str(row.llm_calls), f"{row.answered}/{row.runs}"))
    sdk, raw = floors["sdk_http_us"], floors["raw_http_us"]
    out.append(_row(FLOOR_ROWS[0], _us(floors["sdk_in_process_us"]), _us(sdk), "1.00×", "", ""))
    out.append(_row(FLOOR_ROWS[1], "", _us(raw), f"{raw / sdk:.2f}×" if sdk else "", "", ""))
    out.append(_row(FLOOR_ROWS[2], _us(floors["model_alone_us"]), "", "", "", ""))
    out += ["", CALLS_NOTE.format(floor=FLOOR_IMPL), "",
            cold_title(result), "", COLD_HEADER]
    out += [_row(r.impl, f"{r.import_ms:.0f}", f"{r.first_answer_ms:.0f}", f"{r.import_ms + r.first_answer_ms:.0f}")
            for r in result.cold_start]
    users = {}
    for row in result.cold_start:
        users.setdefault(row.tier, []).append(row.impl)
    out += ["", FOOTPRINT_TITLE, "", FOOTPRINT_HEADER]
    out += [_row(f["tier"], str(f["distributions"]), str(f["files"]), f"{f['bytes'] / layers.MB:.1f}",
                 ", ".join(users.get(f["tier"], [])) or "—") for f in result.footprint]
    out += ["", FOOTPRINT_NOTE.format(claim=layers.ARTICLE_CLAIM_MB), "",
            TOKENS_TITLE, "", TOKENS_HEADER.format(floor=FLOOR_IMPL)]
    base = next(r for r in result.calls if r.impl == FLOOR_IMPL)
    base_total = base.prompt_tokens_per_run + base.completion_tokens_per_run
    for row in result.calls:
        total = row.prompt_tokens_per_run + row.completion_tokens_per_run
        out.append(_row(row.impl, row.protocol, f"{row.prompt_tokens_per_run:.0f}",
                        f"{row.completion_tokens_per_run:.0f}", f"{total / base_total:.2f}" if base_total else ""))
    out += ["", LINES_TITLE, "", LINES_HEADER]
    out += [_row(f"`{f['path']}`", str(f["total"]), str(f["code"])) for f in result.lines]
    return "\n".join(out)


def cold_title(result: LayersResult) -> str:
    title = COLD_TITLE.format(samples=result.cold_samples)
    if result.cold_at_once > 1:
        title = title[:-1] + COLD_AT_ONCE.format(at_once=result.cold_at_once) + title[-1]
    return title


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def _us(value: float) -> str:
    return f"{value:,.0f}"


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
            on_cores(offline_settings(latency_ms), concurrency, impls, warm_up=warm_up,
                     warm_up_options=BASE_OPTIONS) as sweep:
        results = ResultsFile(Path(out) / RESULTS_FILE)
        results.start(header, resume=False)
        # 计时只包住 sweep.run：起进程、热身、临时目录都不算 sweep 的成本
        roles = processes_by_role(sweep.worker_pids)
        cpu_before = {role: cpu_seconds_of(group) for role, group in roles.items()}
        started = time.perf_counter()
        records = sweep.run(jobs, results=results, options=BASE_OPTIONS, expected=expected_model_calls(prompts))
        measured = time.perf_counter() - started
        cpu = {role: cpu_seconds_of(group) - cpu_before[role] for role, group in roles.items()}
    return harness_result(records, prompts=len(prompts), latency_ms=latency_ms, concurrency=concurrency,
                          measured=measured, workers=sweep.shape.workers, threads=sweep.shape.threads,
                          cpu=cpu, core_count=cores()), records


def processes_by_role(worker_pids: list[int]) -> dict[str, list[psutil.Process]]:
    """The sweep's processes: this one (hands out jobs, writes results), the workers (the agents), and
    every other child (the offline model's process)."""
    me = psutil.Process()
    children = me.children(recursive=True)
    return {"parent": [me], "workers": [p for p in children if p.pid in worker_pids],
            "model": [p for p in children if p.pid not in worker_pids]}


def cpu_seconds_of(group: list[psutil.Process]) -> float:
    """User + system CPU time these processes have used so far (psutil: the same on Linux, macOS, Windows)."""
    return sum(sum(process.cpu_times()[:2]) for process in group)


def harness_result(records: list[RunRecord], *, prompts: int, latency_ms: int, concurrency: int,
                   measured: float, workers: int, threads: int, cpu: dict[str, float],
                   core_count: int) -> HarnessResult:
    """``cpu``: CPU seconds used in the timed window by role (``parent``, ``workers``, ``model``)."""
    bounds = [job_bound(r, latency_ms) for r in records]
    bound = critical_path_bound(bounds, concurrency)
    cpu_seconds = sum(cpu.values())
    cpu_bound = cpu_seconds / core_count
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
        cores=core_count, cpu_seconds=round(cpu_seconds, 4), cpu_bound_seconds=round(cpu_bound, 4),
        ratio_to_cpu_bound=_ratio(measured, cpu_bound), binding="cpu" if cpu_bound > bound else "latency",
        workers_cpu_seconds=round(cpu["workers"], 4), model_cpu_seconds=round(cpu["model"], 4),
        parent_cpu_seconds=round(cpu["parent"], 4),
        ratio_floor_from_workers=_ratio(cpu["workers"] / core_count, bound),
        speedup=_ratio(sequential, measured),
        runs=runs,
    )


def _ratio(numerator: float, denominator: float) -> float:
    return round(numerator / denominator, 4) if denominator > 0 else 0.0


def render_harness(result: HarnessResult, impls: int) -> str:
    values = asdict(result) | {"binding_text": BINDING_TEXT[result.binding]}
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
                        help="并发 sweep 对着变慢的离线模型：实测墙钟 / 三个下界")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help=f"冒烟用：只用前 {QUICK_PROMPTS} 道题、跑 {QUICK_REPEAT} 次、冷启动测 1 次（几个实现同时测）")
    size.add_argument("--repeat", type=positive_int, metavar="N",
                      help=f"每一层的成本：每个实现 × 每道题跑几次（默认 {DEFAULT_REPEAT}）")
    parser.add_argument("--latency-ms", type=positive_int, metavar="MS",
                        help=f"--harness：离线模型每次响应的延迟（默认 {DEFAULT_LATENCY_MS}）")
    parser.add_argument("--concurrency", type=positive_int, metavar="N",
                        help=f"--harness：同时跑几个 job（默认 {DEFAULT_CONCURRENCY}）")
    parser.add_argument("--json", action="store_true", help="只输出一个 JSON 对象")
    parser.add_argument("--write", type=Path, metavar="FILE", help="把表格写进 FILE 里这种模式的两个标记之间")
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
    if args.write is not None and not args.write.is_file():
        parser.error(ERR_WRITE.format(path=args.write, reason="文件不存在"))
    suite = load_suite()
    given = list(argv if argv is not None else sys.argv[1:])
    if args.write is not None:            # 表格上写的是产生它的命令，不含 --write 本身
        at = given.index("--write") if "--write" in given else None
        given = given[:at] + given[at + 2:] if at is not None else [a for a in given if not a.startswith("--write=")]
    shown = " ".join(["python -m compare.bench", *given])
    try:
        if args.harness:
            records, text, markers = _harness(args, suite, shown)
        else:
            records, text, markers = _layers(args, suite, shown)
        if args.write is not None:
            page = args.write.read_text(encoding="utf-8")
            args.write.write_text(replace_block(page, text, path=str(args.write), markers=markers), encoding="utf-8")
            print(MSG_WRITTEN.format(path=args.write), file=sys.stderr)
    except (MeasureError, MarkersMissing) as error:
        print(ERR_FAILED.format(prog=PROG, message=error), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(MSG_INTERRUPTED, file=sys.stderr)
        return INTERRUPTED_STATUS
    problem = not_answered(records)
    if problem:
        print(for_terminal(problem), file=sys.stderr)
        return 1
    return 0


def _layers(args, suite: list[SuitePrompt], command: str):
    prompts = [p.prompt for p in (suite[:QUICK_PROMPTS] if args.quick else suite)]
    repeat = QUICK_REPEAT if args.quick else args.repeat or DEFAULT_REPEAT
    if args.quick:                        # 冒烟：每个冷启动测 1 次，几个实现同时测（每核一个）
        result = run_layers(prompts, repeat, 1, cold_at_once=min(cores(), len(IMPLEMENTATIONS)))
    else:
        result = run_layers(prompts, repeat, COLD_SAMPLES)
    text = render_layers(result, command)
    if args.json:
        print(json.dumps({"mode": "layers", **asdict(result)}, ensure_ascii=False))
    else:
        print(text)
    records = [RunRecord(impl=r.impl, prompt="", temperature=TEMPERATURE, run=0, status=Status.ERROR, answer=None,
                         error=f"{r.runs - r.answered} 次没有答出") for r in result.calls if r.answered < r.runs]
    return records, text, LAYERS_MARKERS


def _harness(args, suite: list[SuitePrompt], command: str):
    chosen = suite[:QUICK_HARNESS_PROMPTS] if args.quick else suite
    result, records = run_harness(chosen, args.latency_ms or DEFAULT_LATENCY_MS,
                                  args.concurrency or DEFAULT_CONCURRENCY)
    text = "\n".join([ran_on(command), "", render_harness(result, len(IMPLEMENTATIONS))])
    if args.json:
        print(json.dumps({"mode": "harness", **asdict(result)}, ensure_ascii=False))
    else:
        print(text)
    return records, text, harness_markers(result.concurrency)


if __name__ == "__main__":
    raise SystemExit(exit_status_of(main))
