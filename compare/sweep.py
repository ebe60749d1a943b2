"""一次 sweep：题目 × 温度 × 第几次 × 实现，并发地跑完，每跑完一次就落盘一行。

What a sweep is: every combination of prompt, temperature, run index and implementation
is a :class:`Job`; each job is one :func:`shared.harness.runner.run_once` on the endpoint that the
whole sweep shares (opened once, by the caller).

Why the seed is the run index at temperature > 0: run ``r`` of every implementation then
asks the (offline) model for the same sampling decisions, so a difference between
implementations in the same run is the mechanism, and a difference between runs is the
sampling. At temperature 0 no seed is sent (nothing is sampled).

Concurrency: up to ``concurrency`` jobs at once, in threads sharing the endpoint (its one
HTTP client, its reused models and graphs). ``python -m compare`` spreads a concurrent sweep
over worker processes instead (:mod:`compare.processes`), running each job with
:func:`run_job` too. A run that fails is a record with status ``error``; the other runs go on.

Nothing is lost on an interruption: each finished run is appended to a JSONL file (one
record per line, flushed at once) from the worker that ran it. On Ctrl-C the jobs not yet
started are cancelled and the ones in flight still finish and get written; ``--resume``
reads the file back and runs only the jobs that have no line yet, keyed by
``(impl, prompt, temperature, run)``. The first line of the file is a header with the
settings that shape a trace; resuming under other settings is refused rather than mixed.

Left out: what the records mean (``compare.verdicts``), how they are shown (``compare.report``).
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path

from shared.harness.endpoint import Endpoint
from compare.implementations import Implementation
from shared.harness.run_record import RunRecord, Status
from shared.harness.runner import RunOptions, run_once

RESULTS_FILE = "runs.jsonl"
HEADER_KEY = "sweep"

ERR_RESUME_SETTINGS = ("--resume: {path} 里的结果是在另一套设置下跑的（{field}: 当时 {old!r}，现在 {new!r}）；"
                       "去掉 --resume 重新开始，或换一个 --out 目录")
ERR_RESUME_HEADER = "--resume: {path} 不是 compare 写的结果文件（第一行不是 sweep 头）"
ERR_BUG = "实现里的 bug（不是模型或端点的错）: {error}"

JobKey = tuple[str, str, float, int]
RunFunction = Callable[[Implementation, str, Endpoint, RunOptions], RunRecord]


class ResumeError(ValueError):
    """The results file cannot be resumed; one line."""


@dataclass(frozen=True)
class Job:
    impl: Implementation
    prompt: str
    temperature: float
    run: int

    @property
    def key(self) -> JobKey:
        return (self.impl.name, self.prompt, float(self.temperature), self.run)

    def options(self, base: RunOptions) -> RunOptions:
        """The sweep's shared options (serial, max_steps, clock) with this job's own."""
        return replace(base, temperature=self.temperature, seed=seed_for(self.temperature, self.run),
                       run=self.run)


def seed_for(temperature: float, run: int) -> int | None:
    """Run ``r`` at temperature > 0 samples with seed ``r`` in every implementation."""
    return run if temperature > 0 else None


def record_key(record: RunRecord) -> JobKey:
    return (record.impl, record.prompt, float(record.temperature), record.run)


def plan_jobs(impls: Iterable[Implementation], prompts: Iterable[str], temperatures: Iterable[float],
              runs: int) -> list[Job]:
    """Every job of the sweep, implementations innermost.

    That order puts the runs that are compared with each other (same prompt, temperature
    and run, every implementation) next to each other, so a sweep cut short still holds
    complete comparisons.
    """
    impls, temperatures = list(impls), [float(t) for t in temperatures]
    return [Job(impl, prompt, temperature, run)
            for prompt in prompts for temperature in temperatures
            for run in range(runs) for impl in impls]


class ResultsFile:
    """The append-only JSONL of one sweep: a header line, then one run record per line.

    A line holds the record's ``to_dict()`` plus its ``exchanges`` (request/response bodies,
    no headers), so a resumed sweep can still compare requests and record cassettes.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    def start(self, header: dict, *, resume: bool) -> list[RunRecord]:
        """Begin writing; with ``resume``, return the records already in the file.

        A fresh start truncates the file. A resume keeps every complete line, drops a last
        line cut off by the interruption, and refuses a file written under other settings.
        """
        previous: list[RunRecord] = []
        if resume and self.path.is_file():
            previous = self._read(header)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps({HEADER_KEY: header}, ensure_ascii=False)]
        lines += [_line(record) for record in previous]
        # 重写而不是追加：被打断时写了一半的最后一行，在这里被丢掉
        self.path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return previous

    def append(self, record: RunRecord) -> None:
        """Write one finished run and flush it (called from worker threads)."""
        line = _line(record) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line)
            out.flush()

    def _read(self, header: dict) -> list[RunRecord]:
        rows = []
        for text in self.path.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(text))
            except ValueError:
                continue              # 中断时写了一半的行
        if not rows or not isinstance(rows[0], dict) or HEADER_KEY not in rows[0]:
            raise ResumeError(ERR_RESUME_HEADER.format(path=self.path))
        old = rows[0][HEADER_KEY]
        for field, value in header.items():
            if old.get(field) != value:
                raise ResumeError(ERR_RESUME_SETTINGS.format(path=self.path, field=field,
                                                             old=old.get(field), new=value))
        records: dict[JobKey, RunRecord] = {}
        for row in rows[1:]:
            if isinstance(row, dict) and "impl" in row:
                record = RunRecord.from_dict(row)
                record.exchanges = row.get("exchanges") or []
                records.setdefault(record_key(record), record)    # 每个 job 只算一次
        return list(records.values())


def _line(record: RunRecord) -> str:
    return json.dumps({**record.to_dict(), "exchanges": record.exchanges}, ensure_ascii=False)


def run_sweep(jobs: list[Job], endpoint: Endpoint, *, results: ResultsFile, concurrency: int = 4,
              options: RunOptions = RunOptions(),
              on_done: Callable[[RunRecord], None] | None = None,
              run: RunFunction | None = None) -> list[RunRecord]:
    """Run the jobs, at most ``concurrency`` at a time; every finished run is appended at once.

    Returns the new records in job order. ``KeyboardInterrupt`` (Ctrl-C, or raised by a
    run) cancels the jobs not started, lets the running ones finish and be written, then
    propagates. ``run`` is :func:`shared.harness.runner.run_once` unless a test injects another.
    """
    def work(job: Job) -> RunRecord:
        record = run_job(job, endpoint, options, run)
        results.append(record)
        if on_done:
            on_done(record)
        return record

    executor = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="compare-run")
    futures: dict[Future, Job] = {}
    try:
        futures = {executor.submit(work, job): job for job in jobs}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                future.result()          # 把 worker 里的 KeyboardInterrupt 带到主线程
    except BaseException:
        # 没开始的取消；已经在跑的跑完并落盘（它们的 work() 自己写文件）
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
    order = {job.key: i for i, job in enumerate(jobs)}
    records = [f.result() for f in futures]
    return sorted(records, key=lambda r: order[record_key(r)])


def run_job(job: Job, endpoint: Endpoint, options: RunOptions, run: RunFunction | None = None) -> RunRecord:
    """One job's record; a bug in an implementation becomes an error record (with its file and line).

    The one place a job is run, in a sweep's thread or in a worker process (:mod:`compare.processes`).
    """
    run = run or run_once          # 调用时才取：测试可以替换模块里的 run_once
    try:
        return run(job.impl, job.prompt, endpoint, job.options(options))
    except Exception as bug:  # noqa: BLE001 — 一个实现里的 bug：记下它（含文件和行号），接着跑别的
        record = getattr(bug, "run_record", None) or RunRecord(
            impl=job.impl.name, prompt=job.prompt, temperature=job.temperature, run=job.run,
            status=Status.ERROR, answer=None, error=f"{type(bug).__name__}: {bug}")
        record.error = ERR_BUG.format(error=record.error)
        return record
