"""一次 sweep：题目 × 温度 × 第几次 × 实现，并发地跑完，每跑完一次就落盘一行。

What a sweep is: every combination of prompt, temperature, run index and implementation
is a :class:`Job`; each job is one :func:`shared.harness.runner.run_once` on the endpoint that the
whole sweep shares (opened once, by the caller).

Why the seed is the run index at temperature > 0: run ``r`` of every implementation then
asks the (offline) model for the same sampling decisions, so a difference between
implementations in the same run is the mechanism, and a difference between runs is the
sampling. At temperature 0 no seed is sent (nothing is sampled).

Concurrency: up to ``concurrency`` jobs at once, in daemon threads sharing the endpoint (its one
HTTP client, its reused chat models). ``python -m compare`` spreads a concurrent sweep over
worker processes instead (:mod:`compare.processes`), running each job with :func:`run_job` too.
A run that fails is a record with status ``error``; the other runs go on.

Nothing is lost, and nothing is counted twice:

- the results file is append-only: each finished run is one line, written and flushed at
  once by the worker that ran it. A kill at any moment leaves every earlier line whole
  (at worst the last line is cut off);
- ``--resume`` reads the file back and runs only the jobs that have no line yet, keyed by
  ``(impl, prompt, temperature, run)``, appending to the same file. When the file must
  change (a cut-off last line to drop, ``--retry-errors`` dropping the runs that ended in
  ``error``), a new file is written and renamed over the old one
  (:func:`compare.atomic_file.write_atomically`): never rewritten in place;
- on Ctrl-C (or SIGTERM) the jobs not started are dropped, and the runs in flight are
  abandoned, not waited for and not recorded: a run cut short has no outcome, and
  ``--resume`` runs it again. The file is closed first, so the count of saved runs
  (:attr:`ResultsFile.saved`) is exactly what the file holds.

The first line of the file is a header with the settings that shape a trace; resuming
under other settings is refused rather than mixed.

Left out: what the records mean (``compare.verdicts``), how they are shown (``compare.report``).
"""
from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from compare.atomic_file import write_atomically

from shared.harness.endpoint import Endpoint
from compare.implementations import Implementation
from shared.harness.run_record import RunRecord, Status
from shared.harness.runner import RunOptions, run_once

RESULTS_FILE = "runs.jsonl"
HEADER_KEY = "sweep"

ERR_RESUME_SETTINGS = ("--resume: {path} 里的结果是在另一套设置下跑的（{field}: 当时 {old!r}，现在 {new!r}）；"
                       "去掉 --resume 重新开始，或换一个 --out 目录")
ERR_RESUME_HEADER = "--resume: {path} 不是 compare 写的结果文件（第一行不是 sweep 头）"
ERR_RESUME_READ = "--resume: 读不了 {path}: {reason}"
ERR_BUG = "实现里的 bug（不是模型或端点的错）: {error}"

WAKE_SECONDS = 0.2

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
        self.saved = 0                 # 文件里现在有几条运行记录（中断时报告的就是它）
        self._closed = False
        self._lock = threading.Lock()

    def start(self, header: dict, *, resume: bool, retry_errors: bool = False) -> list[RunRecord]:
        """Begin writing; with ``resume``, return the records already in the file.

        A fresh start replaces the file with the header alone. A resume appends to the file
        as it is, unless it must change: a last line cut off by an interruption is dropped
        and, with ``retry_errors``, so are the runs that ended in ``error`` (they are run
        again). Then the kept lines go to a new file that replaces the old one at once. A
        file written under other settings is refused.
        """
        self._closed = False
        if not (resume and self.path.is_file()):
            write_atomically(self.path, _header_line(header))
            return []
        lines, whole = self._read_lines()
        kept = self._records(lines, header)
        if retry_errors:
            kept = [(record, line) for record, line in kept if record.status != Status.ERROR]
        if not whole or len(kept) != len(lines) - 1:
            # 不在原文件上改：先写新文件再整体替换，任何时刻被杀掉，文件都是完整的旧的或新的
            write_atomically(self.path, _header_line(header) + "".join(line + "\n" for _, line in kept))
        self.saved = len(kept)
        return [record for record, _ in kept]

    def append(self, record: RunRecord) -> bool:
        """Write one finished run and flush it (called from worker threads); ``False`` once closed."""
        line = _line(record) + "\n"
        with self._lock:
            if self._closed:
                return False
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line)
                out.flush()
            self.saved += 1
            return True

    def close(self) -> None:
        """No more lines: a run still finishing after an interruption is not written."""
        with self._lock:             # 等正在写的那一行写完
            self._closed = True

    def _read_lines(self) -> tuple[list[str], bool]:
        """The file's lines, and whether it is whole (every line ends with a newline)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ResumeError(ERR_RESUME_READ.format(path=self.path, reason=getattr(error, "strerror", None)
                                                     or error)) from None
        return text.splitlines(), text.endswith("\n") or not text

    def _records(self, lines: list[str], header: dict) -> list[tuple[RunRecord, str]]:
        """The run records of ``lines`` (each with its line), once each; checks the header."""
        rows = []
        for text in lines:
            try:
                rows.append((json.loads(text), text))
            except ValueError:
                rows.append((None, text))     # 中断时写了一半的行：丢掉
        first = rows[0][0] if rows else None
        if not isinstance(first, dict) or HEADER_KEY not in first:
            raise ResumeError(ERR_RESUME_HEADER.format(path=self.path))
        old = first[HEADER_KEY]
        for field, value in header.items():
            if old.get(field) != value:
                raise ResumeError(ERR_RESUME_SETTINGS.format(path=self.path, field=field,
                                                             old=old.get(field), new=value))
        records: dict[JobKey, tuple[RunRecord, str]] = {}
        for row, text in rows[1:]:
            if isinstance(row, dict) and "impl" in row:
                record = RunRecord.from_dict(row)
                record.exchanges = row.get("exchanges") or []
                records.setdefault(record_key(record), (record, text))    # 每个 job 只算一次
        return list(records.values())


def _header_line(header: dict) -> str:
    return json.dumps({HEADER_KEY: header}, ensure_ascii=False) + "\n"


def _line(record: RunRecord) -> str:
    return json.dumps({**record.to_dict(), "exchanges": record.exchanges}, ensure_ascii=False)


def run_sweep(jobs: list[Job], endpoint: Endpoint, *, results: ResultsFile, concurrency: int = 4,
              options: RunOptions = RunOptions(),
              on_done: Callable[[RunRecord], None] | None = None,
              run: RunFunction | None = None) -> list[RunRecord]:
    """Run the jobs, at most ``concurrency`` at a time; every finished run is appended at once.

    Returns the new records in job order. ``KeyboardInterrupt`` (Ctrl-C, or raised by a
    run), SIGTERM or any other exception in the waiting thread closes ``results``, drops
    the jobs not started and abandons the running ones (daemon threads: the process does
    not wait for them, and what they finish is not written), then propagates. ``run`` is
    :func:`shared.harness.runner.run_once` unless a test injects another.
    """
    run = run or run_once          # 调用时才取：测试可以替换模块里的 run_once
    waiting: queue.SimpleQueue[Job] = queue.SimpleQueue()
    finished: queue.SimpleQueue[RunRecord | BaseException] = queue.SimpleQueue()
    stop = threading.Event()
    for job in jobs:
        waiting.put(job)

    def work() -> None:
        while not stop.is_set():
            try:
                job = waiting.get_nowait()
            except queue.Empty:
                return
            try:
                record = run_job(job, endpoint, options, run)
            except BaseException as interrupt:    # noqa: BLE001 — 测试里的 run 可以抛 KeyboardInterrupt
                finished.put(interrupt)
                return
            if stop.is_set() or not results.append(record):
                return                      # 中断之后才跑完：放弃，不记录（--resume 会重跑它）
            if on_done:
                on_done(record)
            finished.put(record)

    workers = [threading.Thread(target=work, name=f"compare-run-{i}", daemon=True)
               for i in range(min(max(1, concurrency), len(jobs)))]
    new: list[RunRecord] = []
    try:
        for worker in workers:
            worker.start()
        while len(new) < len(jobs):
            try:
                item = finished.get(timeout=WAKE_SECONDS)     # 定期醒来：Ctrl-C 不必等一个运行结束
            except queue.Empty:
                if any(worker.is_alive() for worker in workers) or not finished.empty():
                    continue
                break                   # 结果文件已关闭，worker 都退出了：没有更多结果
            if isinstance(item, BaseException):
                raise item
            new.append(item)
    except BaseException:
        # 不等在途的运行：它们在守护线程里，进程退出时直接放弃
        stop.set()
        results.close()
        raise
    order = {job.key: i for i, job in enumerate(jobs)}
    return sorted(new, key=lambda r: order[record_key(r)])


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
