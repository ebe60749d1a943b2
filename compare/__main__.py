"""``python -m compare``：同一批问题跑过每个实现，逐题给出判定，并写出报告。

The command line the README documents ("compare"), plus ``--max-steps``:

    python -m compare [--impl NAME ...] [--prompt TEXT ...] [--suite FILE] [--temperature T ...]
                      [--runs N] [--concurrency N] [--serial] [--approve all|none] [--faults LIST] [--max-steps N]
                      [--record FILE] [--replay FILE ...] [--out DIR] [--resume [--retry-errors]] [--json]
                      [--model human]

What it does, in order: read the settings once; fix the clock (``AGENT_CLOCK``, see
:data:`DEFAULT_CLOCK`) so ``get_current_time`` answers the same in every implementation;
open the model endpoint once (the embedded offline model, a real one, or a cassette being
replayed); run the sweep (:mod:`compare.sweep`; with ``--concurrency`` above 1 and no cassette,
on every core: :mod:`compare.processes`), appending every finished run to
``OUT/runs.jsonl``; judge every prompt and temperature (:mod:`compare.report`); print the
one line per prompt and temperature (or, with ``--json``, exactly one JSON object) and write
``report.json``, ``report.md`` and ``report.html`` (the full tables, the seed grid and the
sequence diagrams) under ``--out``. While it runs, stderr shows one progress bar per
implementation.

Exit status: 0 when every prompt at temperature 0 is ``equivalent``, 1 otherwise, 2 for
bad usage (one line on stderr, no traceback), 130 when interrupted by Ctrl-C (the finished
runs are kept, the ones in flight abandoned; ``--resume`` continues; a second Ctrl-C quits at
once, still saying how many runs were saved), 143 on SIGTERM, 141 when stdout is closed early
(``--json | head -c 100``).

Everything printed goes through :func:`shared.harness.text.for_terminal` (``--json`` stays valid
JSON: :func:`shared.harness.text.json_for_terminal`): a model's answer cannot clear the screen.

Left out: the comparison rules (``compare.matching`` / ``compare.verdicts``), the benchmark
(``compare.bench``).
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from compare.cassette import Cassette, CassetteError
from compare.processes import can_fork, expected_model_calls, on_cores
from compare.render_text import print_report, progress_bar
from compare.report import Report, build_report
from compare.report_files import write_reports
from compare.suite import DEFAULT_SUITE, SuiteError, SuitePrompt, ad_hoc, load_suite
from compare.sweep import RESULTS_FILE, Job, ResultsFile, ResumeError, plan_jobs, record_key, run_sweep
from shared import approval
from shared.harness.arguments import OneLineParser, is_temperature, positive_int
from shared.harness.config import REPRODUCIBLE_CLOCK, Settings, load_settings_or_exit, redact_url
from shared.harness import human
from shared.harness.endpoint import open_endpoint
from shared.harness.process import Terminated, exit_status_of
from shared.harness.text import for_terminal, json_for_terminal
from compare.implementations import IMPLEMENTATIONS, Implementation, UnknownImplementationError, get_implementation
from shared.harness.run_record import RunRecord, Status
from shared.harness.runner import RunOptions

# 不固定"现在"，几个实现在不同的秒里查时间，trace 必然"不同"——那是时钟的差异，不是机制的
# 差异。用户没设 AGENT_CLOCK 时，compare 用这个固定时刻（报告里会写明）。
DEFAULT_CLOCK = REPRODUCIBLE_CLOCK
DEFAULT_OUT = Path("reports")
INTERRUPTED_STATUS = 130

PROG = "python -m compare"
DESCRIPTION = "同一批问题跑过每个实现，逐轮对比 trace（见 README 的 compare 一节）"
ERR_USAGE = "{prog}: 错误: {message}"
ERR_TEMPERATURE = "--temperature 应是 0 到 2 之间的数，收到 {value!r}"
ERR_BOTH_SOURCES = "--prompt 与 --suite 只能二选一（--prompt 会取代题库）"
ERR_RECORD_REPLAY = "--record 与 --replay 只能二选一"
ERR_RETRY_WITHOUT_RESUME = "--retry-errors 只配 --resume 用（重跑上次以 error 结束的运行）"
ERR_EMPTY_PROMPT = "--prompt 不能是空字符串"
ERR_HUMAN_IMPLS = "--model human 只能配一个实现：用 --impl NAME 点名一个（你要亲自回答它的每个请求）"
ERR_HUMAN_REPLAY = "--model human 与 --replay 只能二选一（模型要么是你，要么是 cassette）"
ERR_REPLAY_RUNS = "--replay 给了 {n} 个 cassette（第 r 个回答第 r 次运行），--runs 应省略或等于 {n}"
ERR_WRITE = "无法写入 {path}: {reason}"
MSG_INTERRUPTED = ("中断：{path} 里保存了 {saved} 次运行；正在跑的被放弃、不记录。"
                   "同一命令加 --resume 即可接着跑（已保存的不重跑）。")
MSG_QUIT = "再次中断：立即退出。"
MSG_ALL_ERRORS = "注意：全部 {n} 次运行都以 error 结束（例如：{error}），判定只说明它们错得一样。"
MSG_WRITTEN = "报告: {files}"
MSG_CASSETTE = "cassette: {path}（{n} 条录制）"
CLOCK_NOTE = "AGENT_CLOCK={clock}（{source}）：get_current_time 在每个实现里返回同一时刻，trace 才可比"
CLOCK_DEFAULT = "用户未设置，compare 的默认值"
CLOCK_USER = "用户设置"
SEED_NOTE = "温度 > 0 时，第 r 次运行在每个实现里都用 seed=r：同一 r 的差异是机制，不同 r 的差异是采样"


class UsageError(ValueError):
    """A bad command line that argparse cannot see (numbers, names, combinations)."""


@dataclass(frozen=True)
class Plan:
    impls: list[Implementation]
    prompts: list[SuitePrompt]
    temperatures: list[float] | None       # None：用配置里的温度
    runs: int
    cassettes: list[Cassette]             # 几个 cassette：第 r 个回答第 r 次运行


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog=PROG, description=DESCRIPTION)
    parser.add_argument("--impl", nargs="+", action="extend", metavar="NAME",
                        help=f"只比较这些实现（默认全部: {', '.join(IMPLEMENTATIONS)}）")
    parser.add_argument("--prompt", action="append", metavar="TEXT", help="临时问题，可重复；取代题库")
    parser.add_argument("--suite", type=Path, metavar="FILE", help=f"题库文件（默认 {DEFAULT_SUITE.parent.name}/{DEFAULT_SUITE.name}）")
    parser.add_argument("--temperature", nargs="+", action="extend", metavar="T",
                        help="一个或多个温度（默认 LLM_TEMPERATURE，即 0）")
    parser.add_argument("--runs", type=positive_int, default=1, metavar="N", help="每个组合跑几次（默认 1）")
    parser.add_argument("--concurrency", type=positive_int, default=4, metavar="N", help="同时跑几个（默认 4）")
    parser.add_argument("--serial", action="store_true", help="每轮最多一个工具调用（parallel_tool_calls=False）")
    parser.add_argument("--approve", choices=("all", "none"), default="none",
                        help="危险工具（place_order）的审批：all 全部批准、none 全部拒绝（默认 none；"
                             "compare 并发运行，没有人在终端前回答）")
    parser.add_argument("--faults", metavar="LIST", help="离线模型注入的故障模式，逗号分隔")
    parser.add_argument("--max-steps", type=positive_int, default=10, metavar="N",
                        help="每次运行最多调用模型几次（默认 10）")
    parser.add_argument("--record", type=Path, metavar="FILE", help="把模型的每个回答录进 cassette")
    parser.add_argument("--replay", type=Path, nargs="+", metavar="FILE",
                        help="用 cassette 回放模型的回答；给几个文件，第 r 个回答第 r 次运行")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help="报告目录（默认 reports/）")
    parser.add_argument("--resume", action="store_true", help="接着上次中断的 sweep 跑，已完成的不重跑")
    parser.add_argument("--retry-errors", action="store_true", help="配合 --resume：以 error 结束的运行也重跑")
    parser.add_argument("--json", action="store_true", help="只在 stdout 输出一个 JSON 对象")
    parser.add_argument("--model", choices=[human.HUMAN], help="human：你来当模型（只能配一个 --impl）")
    return parser


def make_plan(args) -> Plan:
    """Everything the command line names, checked; raises a one-line error."""
    if args.prompt is not None and args.suite is not None:
        raise UsageError(ERR_BOTH_SOURCES)
    if args.record is not None and args.replay is not None:
        raise UsageError(ERR_RECORD_REPLAY)
    if args.retry_errors and not args.resume:
        raise UsageError(ERR_RETRY_WITHOUT_RESUME)
    if args.model == human.HUMAN and len(set(args.impl or IMPLEMENTATIONS)) != 1:
        raise UsageError(ERR_HUMAN_IMPLS)
    if args.model == human.HUMAN and args.replay is not None:
        raise UsageError(ERR_HUMAN_REPLAY)
    try:
        impls = [get_implementation(n) for n in dict.fromkeys(args.impl or IMPLEMENTATIONS)]
    except UnknownImplementationError as error:
        raise UsageError(f"--impl: {error}") from None
    cassettes = [Cassette.load(path) for path in args.replay or []]
    protocols = {p for c in cassettes for p in c.protocols}
    if protocols and not args.impl:
        # 回放时默认只跑录制时那种协议的实现（另一种协议的请求注定对不上）
        impls = [i for i in impls if i.protocol in protocols]
    runs = args.runs
    if len(cassettes) > 1:
        if runs not in (1, len(cassettes)):
            raise UsageError(ERR_REPLAY_RUNS.format(n=len(cassettes)))
        runs = len(cassettes)
    # cassette 可以写明它回答的问题和温度：回放时没点名，就用它们（而不是整个题库）
    recorded_prompts = list(dict.fromkeys(p for c in cassettes for p in c.prompts))
    if args.prompt is not None:
        if not all(p.strip() for p in args.prompt):
            raise UsageError(ERR_EMPTY_PROMPT)
        prompts = ad_hoc(list(dict.fromkeys(args.prompt)), _default_suite_or_nothing())
    elif args.suite is None and recorded_prompts:
        prompts = ad_hoc(recorded_prompts, _default_suite_or_nothing())
    else:
        prompts = load_suite(args.suite or DEFAULT_SUITE)
    temperatures = [_temperature(t) for t in args.temperature] if args.temperature else None
    if temperatures is None and any(c.temperatures for c in cassettes):
        temperatures = [float(t) for c in cassettes for t in c.temperatures]
    return Plan(impls, prompts, temperatures and list(dict.fromkeys(temperatures)), runs, cassettes)


def _default_suite_or_nothing() -> list[SuitePrompt]:
    # 临时题只是"借用"题库里的期望；题库坏了不该挡住 --prompt
    try:
        return load_suite(DEFAULT_SUITE)
    except SuiteError:
        return []


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(ERR_TEMPERATURE.format(value=text)) from None
    if not is_temperature(value):
        raise UsageError(ERR_TEMPERATURE.format(value=text))
    return value


def main(argv: list[str] | None = None) -> int:
    """``python -m compare``; returns the exit status (a closed stdout: 141, SIGTERM: 143)."""
    with second_interrupt_quits() as saved_line:
        return exit_status_of(lambda: _main(argv, saved_line))


def _main(argv: list[str] | None, saved_line: SavedLine) -> int:
    args = build_parser().parse_args(argv)
    try:
        plan = make_plan(args)
    except (UsageError, SuiteError, CassetteError) as error:
        say(ERR_USAGE.format(prog=PROG, message=error), file=sys.stderr)
        return 2
    settings = load_settings_or_exit(offline_faults=args.faults)
    if args.model == human.HUMAN:
        settings = human.play_settings(settings)
    temperatures = plan.temperatures or [float(settings.temperature)]
    clock = settings.clock or DEFAULT_CLOCK
    results = ResultsFile(args.out / RESULTS_FILE)
    saved_line.results = results
    jobs = plan_jobs(plan.impls, [p.prompt for p in plan.prompts], temperatures, plan.runs)
    header = _header(settings, args, clock)
    try:
        records = _sweep(jobs, results, header, settings, plan, args, clock)
        meta = {**header, "implementations": [i.name for i in plan.impls], "temperatures": temperatures,
                "runs": plan.runs, "seed": SEED_NOTE,
                "clock": CLOCK_NOTE.format(clock=clock, source=CLOCK_USER if settings.clock else CLOCK_DEFAULT)}
        protocols = {i.name: i.protocol for i in plan.impls}
        report = build_report(plan.prompts, temperatures, records, protocols=protocols, meta=meta)
        _finish(report, records, protocols, settings, args)
    except ResumeError as error:
        say(ERR_USAGE.format(prog=PROG, message=error), file=sys.stderr)
        return 2
    except BrokenPipeError:           # 读 stdout 的一方走了（| head）：不是 --out 的错，交给 exit_status_of
        raise
    except OSError as error:          # --out / --record 指向写不了的地方
        say(ERR_USAGE.format(prog=PROG, message=ERR_WRITE.format(
            path=error.filename or args.out, reason=error.strerror or error)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        say(saved_line.text(), file=sys.stderr)
        saved_line.said = True
        return INTERRUPTED_STATUS
    except Terminated:
        say(saved_line.text(), file=sys.stderr)
        saved_line.said = True
        raise
    return report.exit_code


def say(line: str, *, file=None) -> None:
    """Print one line of ours, which may quote a prompt or an answer: control characters made visible."""
    print(for_terminal(str(line)), file=file or sys.stdout)


@dataclass
class SavedLine:
    """The line an interrupted sweep ends with: how many runs the results file holds, and ``--resume``."""

    results: ResultsFile | None = None     # None: the sweep has not started
    said: bool = False

    def text(self) -> str:
        return MSG_INTERRUPTED.format(saved=self.results.saved, path=self.results.path)


@contextmanager
def second_interrupt_quits() -> Iterator[SavedLine]:
    """The first Ctrl-C stops the sweep (what finished is kept); a second one exits at once with 130.

    The second press must not wait for anything: the runs in flight are already abandoned
    and every line of the results file was written whole (a cut-off last line would be
    dropped by ``--resume``), so :func:`os._exit` loses nothing. When it comes before the
    first press's :class:`SavedLine` was printed (a quick double press), it prints it itself.
    """
    saved_line = SavedLine()
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield saved_line
        return
    pressed = threading.Event()

    def interrupt(signum, frame) -> None:
        if pressed.is_set():
            unsaid = [saved_line.text()] if saved_line.results is not None and not saved_line.said else []
            os.write(2, "".join(for_terminal(line) + "\n" for line in [*unsaid, MSG_QUIT]).encode())
            os._exit(INTERRUPTED_STATUS)
        pressed.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    try:
        yield saved_line
    finally:
        if not pressed.is_set():    # 按过一次就留着它：退出前再按一次，照样立即退出
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _header(settings: Settings, args, clock: str) -> dict:
    """The settings that shape a trace: a resumed sweep must have the same ones."""
    return {"endpoint": _where(settings), "model": settings.model, "faults": list(settings.offline_faults),
            "serial": args.serial, "approve": args.approve, "max_steps": args.max_steps, "clock": clock,
            "replay": ", ".join(map(str, args.replay)) if args.replay else None}


def _where(settings: Settings) -> str:
    # URL 里偶尔带着 user:password@，报告与结果文件里都不该出现
    if settings.model == human.HUMAN:
        return human.HUMAN
    return "offline" if settings.offline else redact_url(settings.base_url)


def _sweep(jobs: list[Job], results: ResultsFile, header: dict, settings: Settings, plan: Plan,
           args, clock: str) -> list[RunRecord]:
    previous = results.start(header, resume=args.resume, retry_errors=args.retry_errors)
    finished = {record_key(r) for r in previous}
    todo = [job for job in jobs if job.key not in finished]
    show_progress = not args.json and sys.stderr.isatty()
    concurrency = args.concurrency
    if len(plan.cassettes) > 1:             # 第 r 个 cassette 回答第 r 次运行：每个一台服务器
        groups = [(c.brain, [j for j in todo if j.run == r]) for r, c in enumerate(plan.cassettes)]
    else:
        groups = [(plan.cassettes[0].brain if plan.cassettes else None, todo)]
    if args.model == human.HUMAN:           # 你就是模型：一次只回答一个请求，进度条也别挡着
        groups = [(human.HumanBrain(stream="stderr" if args.json else "stdout"), todo)]
        show_progress, concurrency = False, 1
    base = RunOptions(serial=args.serial, max_steps=args.max_steps, clock=clock,
                      approve=approval.policy(args.approve), data_dir=settings.data_dir)
    totals = Counter(job.impl.name for job in todo)
    new: list[RunRecord] = []
    # 并发、模型是离线规则或真实端点（不是 cassette、不是人）时，用上每个核：见 compare/processes.py。
    # 进程在进度条之前 fork：进度条的刷新线程不该被复制进子进程
    cores = (on_cores(settings, concurrency, plan.impls) if concurrency > 1 and groups[0][0] is None and len(groups) == 1
             and can_fork() else nullcontext())
    with cores as sweep, progress_bar([i.name for i in plan.impls], totals, enabled=show_progress) as tick:
        for brain, group in groups:
            if sweep is not None:
                new += sweep.run(group, results=results, options=base, on_done=tick,
                                 expected=expected_model_calls(plan.prompts))
                continue
            with open_endpoint(settings, brain=brain) as endpoint:
                new += run_sweep(group, endpoint, results=results, concurrency=concurrency,
                                 options=base, on_done=tick)
    order = {job.key: i for i, job in enumerate(jobs)}
    # 续跑时文件里可能有这次没点名的运行（换了 --impl/--prompt）：报告只看这次的计划
    records = [r for r in [*previous, *new] if record_key(r) in order]
    return sorted(records, key=lambda r: order[record_key(r)])


def _finish(report: Report, records: list[RunRecord], protocols: dict[str, str], settings: Settings,
            args) -> None:
    paths = write_reports(report, args.out)
    lines = [MSG_WRITTEN.format(files=", ".join(str(p) for p in paths))]
    if args.record:
        cassette = Cassette(prompts=list(dict.fromkeys(r.prompt for r in records)),
                            temperatures=list(dict.fromkeys(r.temperature for r in records)))
        for record in records:
            if cassette.add_exchanges(record.exchanges):
                cassette.protocols.add(protocols[record.impl])
        cassette.save(args.record, secret=settings.api_key)
        lines.append(MSG_CASSETTE.format(path=args.record, n=len(cassette.interactions)))
    if records and all(r.status == Status.ERROR for r in records):
        lines.append(MSG_ALL_ERRORS.format(n=len(records), error=records[0].error))
    if args.json:
        print(json_for_terminal(report.to_json()))
        sys.stdout.flush()          # 读的一方先走了（| head）：在这里知道，而不是在解释器退出时
        for line in lines:
            say(line, file=sys.stderr)
        return
    print_report(report)
    for line in lines:
        say(line)


if __name__ == "__main__":
    status = main()
    if status == INTERRUPTED_STATUS:
        # 被中断：在途的运行已经放弃，不再等解释器收尾（那时再按 Ctrl-C 只会得到一个信号死亡）
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
